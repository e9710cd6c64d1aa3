"""Pages as a visitor meets them: a real browser against a warm server on a board of 1,000 runs.

Run: python bench/bench_pages.py [--root DIR] [--runs 1000] [--repeats 3] [--json OUT]
     [--baseline REF]

Builds (or reuses) a data root with bench_app.build_root (the demo, SummEdits and TofuEval from
../shared/benchmarks, and synthetic runs scored by the engine), starts `streamlit run app.py`
on it, opens each page once to warm the server (that cold load is printed beside), then opens
each page `--repeats` times in a new browser tab and times navigation until the page is
complete: its title drawn, Streamlit's own run state on the app root 'notRunning' (the page
script has finished and every element it sent has arrived), no running indicator, no stale
element and no loading skeleton left, and all of it still so 300 ms later (a page between
two messages is not complete); the figure is when that state began, read in the page
(performance.now(), from the start of navigation). The figure per page is the median; the
goal is GOAL_S for every page, printed as a ratio (figure / goal, below 1.0 meets it). The
exit code is 1 if a page misses the goal.

--baseline REF: also serve the checkout's commit REF (a copy made with `git archive` in a
temporary folder) on the same data root, and time its pages in the same run, each load of
one beside the same load of the other (so the machine's load falls on both): each page's
figure is printed beside the baseline's, with their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

GOAL_S = 2.0
CHROMIUM = "/usr/bin/chromium"
HOLD_MS = 300  # the complete state must hold this long (then its start is the figure)
COMPLETE = f"""() => {{
    const app = document.querySelector('[data-testid=stApp]');
    const done = app !== null
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelector('h1') !== null
        && !document.querySelector('[data-testid=stStatusWidget]')
        && !document.querySelector('[data-testid=stSkeleton]')
        && !document.querySelector('[data-stale=true]');
    const now = performance.now();
    if (!done) {{ window.__benchDoneAt = null; return false; }}
    window.__benchDoneAt = window.__benchDoneAt || now;
    return now - window.__benchDoneAt >= {HOLD_MS} ? window.__benchDoneAt : false;
}}"""


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
        page.goto(url)
        try:
            done = page.wait_for_function(COMPLETE, timeout=120_000, polling=20)
        except Exception:
            shot = Path(tempfile.mkdtemp(prefix="bench-pages-shot-")) / "page.png"
            page.screenshot(path=str(shot), full_page=True)
            raise RuntimeError(f"{url} did not complete in 120 s; screenshot: {shot}") from None
        return float(done.json_value()) / 1000.0
    finally:
        ctx.close()


@contextmanager
def _checkout(ref: str) -> Iterator[Path]:
    """The repository's commit `ref` as files in a temporary folder (git archive)."""
    with tempfile.TemporaryDirectory(prefix="bench-pages-base-") as tmp:
        tar = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", ref],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=tar, check=True)
        yield Path(tmp)


@contextmanager
def _serve(repo: Path, env: dict[str, str], log: Path) -> Iterator[str]:
    """`streamlit run app.py` of the checkout at `repo` on a free port; yields its URL once
    it answers /_stcore/health."""
    from tests.support.server import free_port, stop

    port = free_port()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(repo / "app.py")]
            + ["--server.headless", "true", "--server.port", str(port)]
            + ["--browser.gatherUsageStats", "false"],
            cwd=repo,
            env={**os.environ, **env},
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"streamlit at {repo} did not start: {tail}") from None
                time.sleep(0.5)
        yield url
    finally:
        stop(proc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, help="data root to build (or reuse) the runs in")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--baseline", metavar="REF", help="also time this commit's pages, beside")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    from bench.bench_app import build_root

    root = args.root or Path(tempfile.mkdtemp(prefix="factboard-pages-")) / "leaderboard_data"
    root = root.resolve()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    t = time.perf_counter()
    made = build_root(root, args.runs)
    n_runs = sum(1 for p in (root / "runs").iterdir() if p.is_dir())
    print(f"data: {n_runs} runs ({made} new) in {root}, built in {time.perf_counter() - t:.0f} s")
    benches = [b for b in ("summedits", "tofueval", "demo") if (root / "benchmarks" / b).is_dir()]
    logs = Path(tempfile.mkdtemp(prefix="bench-pages-"))

    def env() -> dict[str, str]:  # each server its own cache folder
        cache = tempfile.mkdtemp(prefix="bench-pages-cache-")
        return {"FACTBOARD_DATA": str(root), "FACTBOARD_CACHE": cache}

    figures: dict[str, dict[str, float]] = {}
    with ExitStack() as stack:
        urls = {"this": stack.enter_context(_serve(REPO, env(), logs / "streamlit.log"))}
        if args.baseline:
            base = stack.enter_context(_checkout(args.baseline))
            urls["base"] = stack.enter_context(_serve(base, env(), logs / "baseline.log"))
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        for p in pages(benches):
            cold = {k: load_time(browser, f"{u}/{p}") for k, u in urls.items()}
            warm: dict[str, list[float]] = {k: [] for k in urls}
            for _ in range(args.repeats):
                for k, u in urls.items():  # one load of each, in turns
                    warm[k].append(load_time(browser, f"{u}/{p}"))
            f = {"cold_s": cold["this"], "warm_s": statistics.median(warm["this"])}
            if "base" in urls:
                f["baseline_cold_s"] = cold["base"]
                f["baseline_warm_s"] = statistics.median(warm["base"])
            figures[p or "front page"] = f
        browser.close()
    print(f"\npages in a real browser, warm server, {n_runs} runs (goal {GOAL_S:.1f} s each):")
    head = f"  {'page':<40} {'warm':>7} {'ratio':>6} {'cold':>7}"
    if args.baseline:
        head += f" {'baseline':>9} {'ratio':>6} {'this/base':>9}"
    print(head)
    missed = []
    for name, f in figures.items():
        ratio = f["warm_s"] / GOAL_S
        if ratio > 1.0:
            missed.append(name)
        line = f"  {name:<40} {f['warm_s']:>6.2f}s {ratio:>5.2f}x {f['cold_s']:>6.2f}s"
        if "baseline_warm_s" in f:
            b = f["baseline_warm_s"]
            line += f" {b:>8.2f}s {b / GOAL_S:>5.2f}x {f['warm_s'] / b:>8.2f}x"
        print(line)
    if args.baseline:
        print(f"  (baseline: {args.baseline}, served beside on the same data root)")
    load = os.getloadavg()
    print(f"  load average during the run: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if args.json:
        out = {"runs": n_runs, "goal_s": GOAL_S, "baseline": args.baseline, "pages": figures}
        args.json.write_text(json.dumps(out))
    if missed:
        print(f"missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
