"""Pages as a visitor meets them: a real browser against a warm server on a board of 1,000 runs.

Run: python bench/bench_pages.py [--root DIR] [--runs 1000] [--repeats 3] [--json OUT]

Builds (or reuses) a data root with bench_app.build_root (the demo, SummEdits and TofuEval from
../shared/benchmarks, and synthetic runs scored by the engine), starts `streamlit run app.py`
on it, opens each page once to warm the server (that cold load is printed beside), then opens
each page `--repeats` times in a new browser tab and times navigation until the page is
complete: its title drawn, Streamlit's running indicator gone and no loading skeleton left. The
figure per page is the median; the goal is GOAL_S for every page, printed as a ratio (figure /
goal, below 1.0 meets it). The exit code is 1 if a page misses the goal.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

GOAL_S = 2.0
CHROMIUM = "/usr/bin/chromium"
COMPLETE = (
    "() => document.querySelector('h1') && "
    "!document.querySelector('[data-testid=stStatusWidget]') && "
    "!document.querySelector('[data-testid=stSkeleton]')"
)


def pages(benches: list[str]) -> list[str]:
    """The front page, then each benchmark's leaderboard (LLM-AggreFact: published only)."""
    return [
        "",
        *[f"leaderboard?benchmark={b}" for b in benches],
        "leaderboard?benchmark=llm_aggrefact",
    ]


def load_time(browser, url: str) -> float:  # type: ignore[no-untyped-def]
    """Seconds from navigation to a complete page, in a new tab (no state kept from before)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    page = ctx.new_page()
    try:
        t = time.perf_counter()
        page.goto(url)
        try:
            page.wait_for_function(COMPLETE, timeout=120_000, polling=50)
        except Exception:
            shot = Path(tempfile.mkdtemp(prefix="bench-pages-shot-")) / "page.png"
            page.screenshot(path=str(shot), full_page=True)
            raise RuntimeError(f"{url} did not complete in 120 s; screenshot: {shot}") from None
        return time.perf_counter() - t
    finally:
        ctx.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, help="data root to build (or reuse) the runs in")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    from bench.bench_app import build_root
    from tests.support.server import running_app

    root = args.root or Path(tempfile.mkdtemp(prefix="factboard-pages-")) / "leaderboard_data"
    root = root.resolve()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    t = time.perf_counter()
    made = build_root(root, args.runs)
    n_runs = sum(1 for p in (root / "runs").iterdir() if p.is_dir())
    print(f"data: {n_runs} runs ({made} new) in {root}, built in {time.perf_counter() - t:.0f} s")
    benches = [b for b in ("summedits", "tofueval", "demo") if (root / "benchmarks" / b).is_dir()]
    log = Path(tempfile.mkdtemp(prefix="bench-pages-")) / "streamlit.log"
    cache = Path(tempfile.mkdtemp(prefix="bench-pages-cache-"))
    env = {"FACTBOARD_DATA": str(root), "FACTBOARD_CACHE": str(cache)}
    figures: dict[str, dict[str, float]] = {}
    with running_app(env, log, start_timeout=120) as app, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        for p in pages(benches):
            cold = load_time(browser, f"{app.url}/{p}")
            warm = [load_time(browser, f"{app.url}/{p}") for _ in range(args.repeats)]
            figures[p or "front page"] = {"cold_s": cold, "warm_s": statistics.median(warm)}
        browser.close()
    print(f"\npages in a real browser, warm server, {n_runs} runs (goal {GOAL_S:.1f} s each):")
    print(f"  {'page':<40} {'warm':>7} {'ratio':>6} {'cold':>7}")
    missed = []
    for name, f in figures.items():
        ratio = f["warm_s"] / GOAL_S
        if ratio > 1.0:
            missed.append(name)
        print(f"  {name:<40} {f['warm_s']:>6.2f}s {ratio:>5.2f}x {f['cold_s']:>6.2f}s")
    load = os.getloadavg()
    print(f"  load average during the run: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if args.json:
        args.json.write_text(json.dumps({"runs": n_runs, "goal_s": GOAL_S, "pages": figures}))
    if missed:
        print(f"missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
