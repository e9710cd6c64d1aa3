"""What a visitor of a freshly started Space waits for, as the board fills: the container's entry
point (scripts/space_entrypoint.sh) against a fake Hub on 127.0.0.1 holding a results repo of
200 and of 10,000 runs (bench_hub's synthetic generator), and the leaderboard in headless
Chromium (Debian's /usr/bin/chromium, Playwright).

Run: python bench/bench_space.py [--sizes 200,10000] [--after 45]

For each size, in this one run:

- the start-up: seconds from the entry script's start to the server's health answering (the
  pull into packs, the board's store read once, the pages' modules imported);
- the first page: seconds from a browser's request of /leaderboard to the page idle with its
  table drawn (the server's first script run: the first visitor of a fresh Space);
- a new visitor right after, and another --after seconds later (by then the app has written the
  packed runs as folders in the background, and its store has taken them);
- the growth of each from the smallest size to the largest.

No goal is checked (the board's own goals are bench_hub's and bench_app's, timed on the server);
the board's growth goal, 1.5x, is printed beside the growth for reading. Figures move with the
machine's load, printed at the end.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


def _visit(browser: Any, url: str) -> float:
    from playwright.sync_api import expect

    from tests.app.test_browser_app import settle, table

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        t = time.perf_counter()
        page.goto(f"{url}/leaderboard?benchmark=demo")
        expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible(timeout=180_000)
        settle(page)
        if not table(page):
            raise RuntimeError("the leaderboard drew no row")
        return time.perf_counter() - t
    finally:
        page.close()


def one_size(hub: Any, synth: Any, n: int, work: Path, after: float) -> dict[str, float]:
    import bench_hub as B
    from playwright.sync_api import sync_playwright

    from tests.app.test_browser_app import ARGS, CHROMIUM
    from tests.support.server import free_port, running_entrypoint

    hub.repos.clear()
    hub.create(B.REPO_ID)
    hub.put(B.REPO_ID, synth.repo_files(n))
    home = work / f"space-{n}"
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "FACTBOARD_ADDRESS": "127.0.0.1",
        "FACTBOARD_DATA": str(home / "data" / "leaderboard_data"),
        "FACTBOARD_SUBMISSIONS": str(home / "data" / "submissions"),
        "FACTBOARD_CACHE": str(home / "cache"),
        "HOME": str(home),
    }
    home.mkdir(parents=True)
    log = home / "entry.log"
    t = time.perf_counter()
    with running_entrypoint(env, log, start_timeout=600):
        out = {"start-up": time.perf_counter() - t}
        url = f"http://127.0.0.1:{port}"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                out["first page"] = _visit(browser, url)
                out["a new visitor"] = _visit(browser, url)
                time.sleep(after)
                out[f"a new visitor {after:g} s later"] = _visit(browser, url)
            finally:
                browser.close()
    if "entrypoint:" in log.read_text(errors="replace"):
        raise RuntimeError(log.read_text(errors="replace")[-3000:])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="200,10000")
    ap.add_argument("--after", type=float, default=45.0)
    args = ap.parse_args()
    import bench_hub as B

    from tests.support.fake_hub import FakeHub

    work = Path(tempfile.mkdtemp(prefix="factboard-bench-space-"))
    hub = FakeHub({B.TOKEN: "write"}).start()
    B.setup_env(hub, work)
    synth = B.Synth(work / "template")
    sizes = [int(s) for s in args.sizes.split(",")]
    got = {n: one_size(hub, synth, n, work, args.after) for n in sizes}
    hub.stop()
    lo, hi = min(sizes), max(sizes)
    for what in got[lo]:
        cells = "  ".join(f"{n:>6} runs {got[n][what]:7.2f} s" for n in sizes)
        ratio = got[hi][what] / got[lo][what]
        growth = f"growth {ratio:5.2f}x (the board's goal: 1.5x)" if hi != lo else ""
        print(f"{what:32} {cells}  {growth}")
    load = os.getloadavg()
    print(f"load average at the end of the run: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
