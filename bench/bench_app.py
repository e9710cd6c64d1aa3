"""App speed and memory with 200 runs over the ingested benchmarks (issue 4 targets).

Run: python bench/bench_app.py [--root DIR] [--runs 200] [--no-server] [--json OUT]
     [--growth-root DIR --growth-runs 200 --growth-rounds 2] [--only leaderboard]

--only leaderboard: the leaderboard's figures alone (first render and slice changes, the
default table as a reader gets it), on a root that already holds --runs runs (built if not):
what a change of the board's table is compared by, run once on each checkout on one root.

--growth-root: also build (or reuse) a second data root with --growth-runs runs and measure the
board's figures on both roots in turns, in this run (so the machine's load falls on both), and
print each figure's growth from the small root to this one (the board must grow by less than
GROWTH_LIMIT from 200 to 2,000 runs).

Also the front page's first render (every benchmark's default board) with the same target.

Builds its own data root (a temporary folder unless --root is given): the demo, SummEdits and
TofuEval from ../shared/benchmarks when they are there, and 200 synthetic runs spread over them
(random predictions with accuracies between 50% and 85%, scored by the engine like any
submission: label runs and score runs with a dev-tuned threshold). Then, all in this one run:

- leaderboard first render (cold caches: a new store, nothing loaded but the store's snapshot
  of the runs, which a previous process left: see explorer.store; the first render with no
  snapshot, i.e. the first start of a server on this data, is printed beside) and slice
  changes, driven
  through AppTest and timed server side, i.e. the page script's run inside Streamlit's script
  runner (targets: < 1.5 s and < 300 ms); AppTest's wall time, which adds its own parsing of
  the page's messages, is printed beside;
- the explorer's page change on the largest benchmark (TofuEval, 6,723 samples; SummEdits has
  4,681 in the GitHub release), the same way and as the two SQL queries alone (< 300 ms);
- memory of a real `streamlit run` process after a browser opened every page (< 1 GB), read
  from /proc/<pid>/status (VmRSS and VmHWM); skipped with --no-server or without Playwright.

Figures are medians of repeated measurements, printed with their target and the ratio to it;
the exit code is 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
SHARED = Path(os.environ.get("FACTBOARD_SHARED", REPO.parent / "shared")) / "benchmarks"

TARGETS = {
    "front_first_render_s": 1.5,
    "leaderboard_first_render_s": 1.5,
    "leaderboard_slice_change_s": 0.3,
    "explorer_page_change_s": 0.3,
    "explorer_queries_s": 0.3,
    "server_rss_mb": 1024.0,
}
GROWTH_LIMIT = 1.5  # from 200 to 2,000 runs


# --------------------------------------------------------------------------------------------
# data


def build_root(root: Path, n_runs: int, seed: int = 0) -> dict[str, int]:
    """Demo + ingested benchmarks + n_runs synthetic runs. Returns runs per benchmark."""
    from evaluator import scorer
    from evaluator.benchmarks import registry
    from evaluator.core.scoring import ScoreOptions
    from evaluator.core.types import ModelInfo, RunConfig
    from evaluator.ingest import demo, pipeline
    from evaluator.store import ingested

    (root / "benchmarks").mkdir(parents=True, exist_ok=True)
    (root / "runs").mkdir(exist_ok=True)
    shutil.copytree(REPO / "leaderboard_data" / "reported", root / "reported", dirs_exist_ok=True)
    for _ in demo.build_demo(root=root):
        pass
    benches = ["demo"]
    for name in ("summedits", "tofueval"):
        if (SHARED / name).is_dir():
            pipeline.ingest(name, SHARED / name, root=root)
            benches.append(name)
        else:
            print(f"note: {SHARED / name} not found; {name} left out", file=sys.stderr)
    weights = {"demo": 1, "summedits": 6, "tofueval": 3}
    total_w = sum(weights[b] for b in benches)
    existing = len(list((root / "runs").iterdir()))
    todo = max(0, n_runs - existing)
    per = {b: todo * weights[b] // total_w for b in benches}
    per[benches[-1]] += todo - sum(per.values())
    rng = np.random.default_rng(seed)
    kinds = ["non-llm", "open-llm", "proprietary-llm", "baseline"]
    made = {b: 0 for b in benches}
    for b in benches:
        spec = registry.get(b)
        samples = ingested.load_samples(b, root)
        version = ingested.load_meta(b, root)["version"]
        unit = "sentence" if "sentence" in spec.units else "summary"
        s = samples[samples["unit"] == unit]
        gold = s["label"].to_numpy(dtype=float)
        for i in range(per[b]):
            acc = rng.uniform(0.5, 0.85)
            right = rng.random(len(s)) < acc
            pred = np.where(right, gold, 1 - gold).astype(int)
            if i % 3 == 0:  # a score run: threshold tuned on dev by the engine
                preds = pd.DataFrame(
                    {"sample_id": s["sample_id"], "score": pred + rng.normal(0, 0.4, len(s))}
                )
            else:
                preds = pd.DataFrame({"sample_id": s["sample_id"], "label": pred})
            size = rng.choice(["", "7B", "13B", "70B", "350M"])
            model = ModelInfo(
                name=f"Synthetic {b} model {i:03d}", kind=rng.choice(kinds), params=size or None
            )
            scorer.score_to_run(
                spec,
                version,
                samples,
                preds,
                model,
                "submitted",
                RunConfig(detector="synthetic"),
                ScoreOptions(resamples=200),
                None,
                root,
            )
            made[b] += 1
    return made


# --------------------------------------------------------------------------------------------
# AppTest timings


def _fresh_caches() -> None:
    import streamlit as st  # noqa: TID251 (the bench drives the app, like the tests)

    st.cache_data.clear()
    st.cache_resource.clear()
    # the dropped store collected now, as a new server process has none: a server collects
    # after each script run (runner.postScriptGC), so a store dropped here would live on
    # through the next run beside the new one (a page script's globals are a reference
    # cycle), in its time and in the process's peak memory
    gc.collect()


def _app(page: str, params: dict[str, str]):  # type: ignore[no-untyped-def]
    from streamlit.testing.v1 import AppTest  # noqa: TID251

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.switch_page(page)
    for k, v in params.items():
        at.query_params[k] = v
    return at


_SCRIPT_TIMES: list[float] = []
WALL_TIMES: list[float] = []


def _patch_script_timer() -> None:
    """Record how long each script run takes inside the script runner (server side), apart
    from AppTest's own work of turning the page's messages into an element tree."""
    from streamlit.runtime.scriptrunner import script_runner  # noqa: TID251

    inner = script_runner.exec_func_with_error_handling
    if getattr(inner, "_bench", False):
        return

    def timed(func, ctx):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return inner(func, ctx)
        finally:
            _SCRIPT_TIMES.append(time.perf_counter() - t)

    timed._bench = True  # type: ignore[attr-defined]
    script_runner.exec_func_with_error_handling = timed


def _timed_run(at) -> float:  # type: ignore[no-untyped-def]
    """Server-side time of one rerun (script runs it triggered); AppTest wall time kept too."""
    _patch_script_timer()
    _SCRIPT_TIMES.clear()
    t = time.perf_counter()
    at.run()
    WALL_TIMES.append(time.perf_counter() - t)
    if at.exception:
        raise RuntimeError(f"page raised: {at.exception[0].message}")
    return sum(_SCRIPT_TIMES)


def _view_options(bench: str) -> tuple[str, list[str], dict[str, list[str]]]:
    """(unit, slice kinds, values per kind) as the leaderboard offers them."""
    from evaluator.store import layout
    from explorer import leaderboard as L
    from explorer import queries as Q
    from explorer.store import Store

    s = Store(layout.data_root())
    s.refresh()
    opts = L.options(Q.result_dimensions(s.cursor(), bench), None, None)
    opts = L.options(Q.result_dimensions(s.cursor(), bench), opts.units[0], None)
    return opts.units[0], opts.slice_kinds, opts.slice_values


def bench_leaderboard(bench: str) -> dict[str, object]:
    """First render: a new session on a server whose Python modules are imported but whose
    caches are empty (a new store: every run.json and prediction file read again, every label
    and rank recomputed); the median of three. The process-wide import cost is measured apart
    (cold_process_first_render, in a fresh interpreter)."""
    import altair as alt
    import pandas as pd

    import explorer.charts
    import explorer.ui  # noqa: F401
    from evaluator.benchmarks import registry

    registry.names()  # imports every benchmark module, once per process
    alt.Chart(pd.DataFrame({"x": [1]})).mark_point().encode(x="x:Q").to_dict()  # loads schema

    unit, kinds, values = _view_options(bench)
    from evaluator.store import layout
    from explorer.store import snapshot_file

    snapshot_file(layout.data_root()).unlink(missing_ok=True)
    _fresh_caches()
    no_snapshot = _timed_run(_app("views/leaderboard.py", {"benchmark": bench}))
    firsts = []
    for _ in range(3):  # each time a new store: every file read again, nothing computed
        _fresh_caches()
        at = _app("views/leaderboard.py", {"benchmark": bench})
        firsts.append(_timed_run(at))
    first = statistics.median(firsts)
    first_wall = statistics.median(WALL_TIMES[-3:])
    times, views = [], []
    n_wall = len(WALL_TIMES)
    for kind in [k for k in kinds if k != "overall"][:3]:
        at.selectbox(key="lb.slice").set_value(kind)
        times.append(_timed_run(at))
        views.append(kind)
        for v in values[kind][1:4]:
            at.selectbox(key="lb.value").set_value(v)
            times.append(_timed_run(at))
    # back to a view already computed (cached)
    at.selectbox(key="lb.slice").set_value("overall")
    cached = _timed_run(at)
    rows = len(at.dataframe[0].value)
    slice_wall = statistics.median(WALL_TIMES[n_wall:-1])
    return {
        "first": first,
        "first_without_snapshot": no_snapshot,
        "firsts": firsts,
        "first_apptest_wall": first_wall,
        "slice_change_apptest_wall": slice_wall,
        "slice_changes": times,
        "median_slice_change": statistics.median(times),
        "cached_view": cached,
        "rows": rows,
        "views": views,
    }


def bench_front() -> dict[str, object]:
    """The front page's first render (cold caches, a new store: every benchmark's default
    board built) and a rerun (cached); the median of three first renders."""
    firsts = []
    for _ in range(3):
        _fresh_caches()
        at = _app("views/home.py", {})
        firsts.append(_timed_run(at))
    again = _timed_run(at)
    return {"first": statistics.median(firsts), "firsts": firsts, "cached": again}


def bench_explorer(bench: str, unit: str) -> dict[str, object]:
    from evaluator.store import layout
    from explorer import queries as Q
    from explorer.store import Store

    at = _app("views/samples.py", {"benchmark": bench, "unit": unit})
    _timed_run(at)
    pag = at.get("pagination")[0]
    n_pages = pag.num_pages
    times = []
    n_wall = len(WALL_TIMES)
    for p in [2, 3, n_pages, n_pages // 2, 5, 7, 11, 13, 17, 19]:
        at.get("pagination")[0].set_value(min(p, n_pages))
        times.append(_timed_run(at))
    page_wall = statistics.median(WALL_TIMES[n_wall:])
    # the two queries alone
    s = Store(layout.data_root())
    s.refresh()
    s.ensure_sample_stats(bench)
    con = s.cursor()
    q_times = []
    f = Q.SampleFilter(benchmark=bench, unit=unit, version=s.version(bench))
    total = Q.count_samples(con, f)
    for p in range(12):
        t = time.perf_counter()
        Q.count_samples(con, f)
        Q.samples_page(con, f, 20, (p * 37 % max(1, total // 20)) * 20)
        q_times.append(time.perf_counter() - t)
    hard = Q.SampleFilter(
        benchmark=bench,
        unit=unit,
        version=s.version(bench),
        most_wrong=0.5,
        sort="most_wrong",
        text="the",
    )
    h_times = []
    for p in range(6):
        t = time.perf_counter()
        Q.count_samples(con, hard)
        Q.samples_page(con, hard, 20, p * 20)
        h_times.append(time.perf_counter() - t)
    n_samples = int(
        con.execute("SELECT count(*) FROM samples WHERE benchmark = ?", [bench]).fetchone()[0]
    )
    return {
        "benchmark_samples": n_samples,
        "unit_samples": total,
        "pages": n_pages,
        "page_change_apptest_wall": page_wall,
        "page_changes": times,
        "median_page_change": statistics.median(times),
        "median_queries": statistics.median(q_times),
        "median_queries_hardest_filter": statistics.median(h_times),
    }


_COLD = """
import sys, time
t0 = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({app!r}, default_timeout=120)
at.query_params["benchmark"] = {bench!r}
t = time.perf_counter()
at.run()
print(time.perf_counter() - t, t - t0)
"""


def bench_cold_process(bench: str) -> tuple[float, float]:
    """(first render, streamlit import) in a fresh interpreter: every module imported on the
    way, as for the very first request a newly started server serves."""
    code = _COLD.format(app=str(REPO / "app.py"), bench=bench)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1])


# --------------------------------------------------------------------------------------------
# a real server's memory


def bench_server(root: Path, benches: list[str]) -> dict[str, object] | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    chromium = "/usr/bin/chromium"
    if not Path(chromium).exists():
        return None
    from tests.support.server import running_app

    log = Path(tempfile.mkdtemp(prefix="bench-app-")) / "streamlit.log"
    with running_app({"FACTBOARD_DATA": str(root)}, log) as app:
        urls = [""]  # the front page
        for b in benches:
            urls += [
                f"leaderboard?benchmark={b}",
                f"samples?benchmark={b}",
                f"compare?benchmark={b}",
            ]
        urls += ["benchmarks", "explanations"]
        loads = {}
        with sync_playwright() as pw:
            br = pw.chromium.launch(
                executable_path=chromium,
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                ],
            )
            page = br.new_page()
            for u in urls:
                t = time.perf_counter()
                page.goto(f"{app.url}/{u}")
                page.wait_for_selector("h1", timeout=120_000)
                page.wait_for_function(
                    "() => !document.querySelector('[data-testid=stStatusWidget]') && "
                    "!document.querySelector('[data-testid=stSkeleton]')",
                    timeout=120_000,
                )
                loads[u] = time.perf_counter() - t
            br.close()
        status = Path(f"/proc/{app.proc.pid}/status").read_text()
        mem = {
            line.split(":")[0]: int(line.split()[1]) / 1024
            for line in status.splitlines()
            if line.startswith(("VmRSS", "VmHWM"))
        }
        return {
            "rss_mb": mem.get("VmRSS"),
            "peak_rss_mb": mem.get("VmHWM"),
            "browser_page_loads_s": loads,
        }


# --------------------------------------------------------------------------------------------


def bench_growth(
    args: argparse.Namespace, root: Path, benches: list[str], figures: dict[str, float]
) -> dict[str, object]:
    """The board's figures on a smaller root and on `root`, measured in turns (medians over
    the rounds), and each one's growth; the server's memory on the smaller root too."""
    small = args.growth_root.resolve()
    build_root(small, args.growth_runs)
    n_small = len([p for p in (small / "runs").iterdir() if p.is_dir()])
    n_big = len([p for p in (root / "runs").iterdir() if p.is_dir()])
    keys = ["front_first_render_s", "leaderboard_first_render_s", "leaderboard_slice_change_s"]
    seen: dict[str, dict[str, list[float]]] = {"small": {}, "big": {}}
    for _ in range(args.growth_rounds):
        for name, r in (("small", small), ("big", root)):
            os.environ["FACTBOARD_DATA"] = str(r)
            f, lb = bench_front(), bench_leaderboard(benches[0])
            got = [f["first"], lb["first"], lb["median_slice_change"]]
            for k, v in zip(keys, got, strict=True):
                seen[name].setdefault(k, []).append(float(v))  # type: ignore[arg-type]
    os.environ["FACTBOARD_DATA"] = str(root)
    med = {n: {k: statistics.median(v) for k, v in d.items()} for n, d in seen.items()}
    if "server_rss_mb" in figures:
        server = bench_server(small, benches)
        if server and server.get("peak_rss_mb"):
            med["small"]["server_rss_mb"] = float(server["peak_rss_mb"])  # type: ignore[arg-type]
            med["big"]["server_rss_mb"] = figures["server_rss_mb"]
    growth = {k: med["big"][k] / med["small"][k] for k in med["small"] if med["small"][k] > 0}
    print(
        f"\ngrowth from {n_small} to {n_big} runs, measured in turns ({args.growth_rounds} "
        f"rounds; limit {GROWTH_LIMIT}x)"
    )
    for k, g in growth.items():
        miss = "" if g < GROWTH_LIMIT else "  MISSED"
        print(f"{k:32} {med['small'][k]:>10.3f} -> {med['big'][k]:>9.3f} {g:>6.2f}x{miss}")
    return {"runs": [n_small, n_big], "small": med["small"], "big": med["big"], "growth": growth}


def only_leaderboard(root: Path, args: argparse.Namespace) -> int:
    """The leaderboard's figures alone on the first ingested benchmark of `root` (built with
    --runs runs when it holds fewer)."""
    have = len([p for p in (root / "runs").iterdir() if p.is_dir()]) if root.is_dir() else 0
    if have < args.runs:
        build_root(root, args.runs)
    benches = [b for b in ("summedits", "tofueval", "demo") if (root / "benchmarks" / b).is_dir()]
    lb = bench_leaderboard(benches[0])
    figures = {
        "leaderboard_first_render_s": float(lb["first"]),  # type: ignore[arg-type]
        "leaderboard_slice_change_s": float(lb["median_slice_change"]),  # type: ignore[arg-type]
        "leaderboard_cached_view_s": float(lb["cached_view"]),  # type: ignore[arg-type]
    }
    print(f"leaderboard ({benches[0]}, {lb['rows']} rows, {have} runs) from {REPO}")
    for k, v in figures.items():
        print(f"{k:32} {v:>9.3f}s")
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "leaderboard": lb}, default=float))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, help="data root to build (or reuse) the runs in")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--no-server", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--growth-root", type=Path, help="a second, smaller data root (see above)")
    ap.add_argument("--growth-runs", type=int, default=200)
    ap.add_argument("--growth-rounds", type=int, default=2)
    ap.add_argument("--only", choices=["leaderboard"], help="measure this page alone")
    args = ap.parse_args()
    tmp = None
    root = args.root
    if root is None:
        tmp = tempfile.mkdtemp(prefix="factboard-bench-")
        root = Path(tmp) / "leaderboard_data"
    root = root.resolve()
    os.environ["FACTBOARD_DATA"] = str(root)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        if args.only == "leaderboard":
            return only_leaderboard(root, args)
        t = time.perf_counter()
        made = build_root(root, args.runs)
        n_runs = len([p for p in (root / "runs").iterdir() if p.is_dir()])
        print(
            f"data: {n_runs} runs ({made} new) in {root}, built in {time.perf_counter() - t:.0f} s"
        )
        benches = [
            b for b in ("summedits", "tofueval", "demo") if (root / "benchmarks" / b).is_dir()
        ]
        cold, st_import = bench_cold_process(benches[0])
        front = bench_front()
        lb = bench_leaderboard(benches[0])
        big = "tofueval" if "tofueval" in benches else benches[0]
        ex = bench_explorer(big, "sentence" if big == "tofueval" else "summary")
        server = None if args.no_server else bench_server(root, benches)
        figures = {
            "front_first_render_s": front["first"],
            "leaderboard_first_render_s": lb["first"],
            "leaderboard_slice_change_s": lb["median_slice_change"],
            "explorer_page_change_s": ex["median_page_change"],
            "explorer_queries_s": ex["median_queries"],
        }
        if server and server.get("peak_rss_mb"):
            figures["server_rss_mb"] = float(server["peak_rss_mb"])  # type: ignore[arg-type]
        print(
            f"\nleaderboard ({benches[0]}, {lb['rows']} rows): first render, then "
            f"{len(lb['slice_changes'])} slice changes over {lb['views']}; cached view "
            f"{lb['cached_view'] * 1000:.0f} ms"
        )
        print(
            f"  AppTest wall time (server side + AppTest's own parsing of the page): first "
            f"{lb['first_apptest_wall']:.2f} s, slice change "
            f"{lb['slice_change_apptest_wall'] * 1000:.0f} ms; explorer page change "
            f"{ex['page_change_apptest_wall'] * 1000:.0f} ms"
        )
        print(
            f"  first render without the store's snapshot (the first start of a server on this "
            f"data: every run.json read): {lb['first_without_snapshot']:.2f} s"
        )
        print(
            f"  in a fresh interpreter (imports of pandas, duckdb, scipy, altair... included, "
            f"once per server process): first render {cold:.2f} s (after {st_import:.2f} s to "
            "import streamlit)"
        )
        print(
            f"explorer ({big}: {ex['benchmark_samples']:,} samples, {ex['unit_samples']:,} at "
            f"this level, {ex['pages']} pages): {len(ex['page_changes'])} page changes; "
            f"hardest filter (text + most-wrong) queries "
            f"{ex['median_queries_hardest_filter'] * 1000:.0f} ms"
        )
        if server:
            print(
                "browser page loads (s): "
                + ", ".join(
                    f"{k or '/'} {v:.1f}" for k, v in server["browser_page_loads_s"].items()
                )
            )
        print(f"\n{'figure':32} {'measured':>10} {'target':>8} {'ratio':>6}")
        ok = True
        for k, v in figures.items():
            target = TARGETS[k]
            ratio = v / target
            ok &= ratio < 1
            unit = "MB" if k.endswith("_mb") else "s"
            print(
                f"{k:32} {v:>9.3f}{unit[0]} {target:>7g}{unit[0]} {ratio:>6.2f}"
                f"{'' if ratio < 1 else '  MISSED'}"
            )
        growth = None
        if args.growth_root:
            growth = bench_growth(args, root, benches, figures)
            ok &= all(g < GROWTH_LIMIT for g in growth["growth"].values())
        load = os.getloadavg()
        print(f"\nload average during the run: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "runs": n_runs,
                        "load": list(os.getloadavg()),
                        "figures": figures,
                        "front": front,
                        "leaderboard": lb,
                        "cold_process_first_render_s": cold,
                        "explorer": ex,
                        "server": server,
                        "growth": growth,
                    },
                    indent=1,
                    default=float,
                )
            )
        return 0 if ok else 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
