"""The Across benchmarks page with 1,000 runs: it reads the runs' per-slice results (run.json,
already in the store), never their per-sample predictions.

Run: python bench/bench_across.py [--runs 1000]

Builds a temporary data root: the demo benchmark with its four baseline runs, each copied until
there are --runs run folders (run.json rewritten with a new id and a model name shared by four
runs), plus the repo's published numbers. Then, in this one run:

- the table alone: explorer.queries.overall_numbers + explorer.across.build on a loaded store
  (target < 300 ms, the leaderboard's slice-change target);
- the page's first render through AppTest on cold caches (a new store: every run.json read
  again, which every page pays), timed server side, against the demo leaderboard's first render
  on the same root (target: the ratio Across / leaderboard at most 1);
- that the first render loaded no per-sample prediction (the store's predictions table is empty).

Figures are medians of three, printed with their target and the ratio to it; exit code 1 if a
target is missed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import bench_app as B  # noqa: E402  (the app bench's AppTest timing helpers)


def build_root(root: Path, n_runs: int) -> None:
    from tests.support import testdata

    testdata.build_demo_root(root)
    base = sorted((root / "runs").iterdir())
    for i in range(n_runs - len(base)):
        src = base[i % len(base)]
        dst = root / "runs" / f"{src.name}-copy{i:04d}"
        shutil.copytree(src, dst)
        rec = json.loads((dst / "run.json").read_text(encoding="utf-8"))
        rec["run_id"] = dst.name
        rec["model"]["name"] = f"model-{i // 4:03d}"
        (dst / "run.json").write_text(json.dumps(rec), encoding="utf-8")


def bench_table() -> float:
    from evaluator.store import layout
    from explorer import across as A
    from explorer import queries as Q
    from explorer.store import Store

    s = Store(layout.data_root())
    t = time.perf_counter()
    s.refresh()
    print(
        f"a new store reading every run.json (shared by all pages): {time.perf_counter() - t:.2f} s"
    )
    times = []
    for _ in range(3):
        t = time.perf_counter()
        rows = Q.overall_numbers(s.cursor())
        A.build(rows, {"demo": "balanced_accuracy"}, {}, min_benchmarks=1)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def first_render(page: str, params: dict[str, str]) -> float:
    times = []
    for _ in range(3):
        B._fresh_caches()
        times.append(B._timed_run(B._app(page, params)))
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    import os

    tmp = Path(tempfile.mkdtemp(prefix="bench-across-"))
    root = tmp / "leaderboard_data"
    try:
        build_root(root, args.runs)
        os.environ["FACTBOARD_DATA"] = str(root)
        n = len(list((root / "runs").iterdir()))
        print(f"{n} runs in {root}")
        table = bench_table()
        B._app("views/across.py", {}).run()  # imports, outside the timings
        across = first_render("views/across.py", {"min": "1"})
        board = first_render("views/leaderboard.py", {"benchmark": "demo"})
        from evaluator.store import layout
        from explorer import ui

        B._fresh_caches()
        B._app("views/across.py", {"min": "1"}).run()
        app_store = ui._store(str(layout.data_root()))  # the store that page run filled
        loaded = app_store.con.execute("SELECT count(*) FROM predictions").fetchone()[0]
        n_results = app_store.con.execute("SELECT count(DISTINCT run_id) FROM runs").fetchone()[0]
        checks = [("table (query + build)", table, 0.3)]
        ok = True
        for name, value, target in checks:
            ratio = value / target
            ok &= ratio <= 1
            print(f"{name}: {value * 1000:.0f} ms (target {target * 1000:.0f} ms, {ratio:.2f}x)")
        print(
            f"first render, cold (a new store): Across {across * 1000:.0f} ms, the demo "
            f"leaderboard {board * 1000:.0f} ms on the same root: Across / leaderboard "
            f"{across / board:.2f}x (target <= 1)"
        )
        ok &= across <= board
        print(
            f"the page's store after a cold render: {n_results} runs, {loaded} per-sample "
            "predictions loaded"
        )
        ok &= loaded == 0
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
