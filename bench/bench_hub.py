"""A Space booting from its results repo, and a submission reaching a second replica.

Run: python bench/bench_hub.py [--root DIR] [--runs 200] [--poll 2] [--few]

Builds a data root (a temporary folder unless --root is given): every benchmark release in
../shared/benchmarks (--few: SummEdits and TofuEval only), the demo, and 200 synthetic runs
(bench/bench_app.py's generator). Publishes it to a fake Hub on 127.0.0.1 (tests/support/
fake_hub.py, spoken to by the real huggingface_hub client), then, all in this one run:

- boot of an empty Space: `hub pull` of the whole repo into an empty data root (goal < 10 s);
- first render of the leaderboard on that fresh copy, with the results repo configured (the
  app's start-up sync included), beside the same first render from the warm local root with no
  repo configured (goal: within 1.2x). Renders are timed server side (the page script's run
  inside Streamlit's script runner), with fresh caches, after one render that is not counted
  (imports), interleaved, medians of 5;
- a submission's time to appear on a second replica, both replicas running the app's background
  sync with a poll interval of --poll seconds (goal: < 2 poll intervals), median of 3.

The exit code is 1 if a goal is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
SHARED = Path(os.environ.get("FACTBOARD_SHARED", REPO.parent / "shared")) / "benchmarks"

REPO_ID = "bench/results"
TOKEN = "hf_benchwritetokenAAAAAAAAAAAA"


def build(root: Path, n_runs: int, few: bool) -> None:
    import bench_app

    from evaluator.ingest.folder import ingest_all

    if not few and SHARED.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        for rep in ingest_all(SHARED, root=root):
            print(f"  ingested {rep.name}: {rep.n_samples} samples", file=sys.stderr)
    bench_app.build_root(root, n_runs)


def first_render(data: Path, subs: Path, hub: bool) -> float:
    import bench_app

    from evaluator.hub import background

    os.environ["FACTBOARD_DATA"] = str(data)
    os.environ["FACTBOARD_SUBMISSIONS"] = str(subs)
    if not hub:
        os.environ.pop("FACTBOARD_HUB_REPO", None)
    else:
        os.environ["FACTBOARD_HUB_REPO"] = REPO_ID
    background.stop_all()  # a new process: its sync starts with its first page
    bench_app._fresh_caches()
    at = bench_app._app("views/leaderboard.py", {})
    t = bench_app._timed_run(at)
    background.stop_all()
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", type=Path, help="data root to build or reuse")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--poll", type=float, default=2.0)
    ap.add_argument("--few", action="store_true", help="only SummEdits and TofuEval")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="factboard-bench-hub-"))
    src = args.root or work / "source" / "leaderboard_data"
    if not (src / "runs").is_dir() or len(list((src / "runs").iterdir())) < args.runs:
        print(f"building {src} ...", file=sys.stderr)
        build(src, args.runs, args.few)

    sys.path.insert(0, str(REPO))
    import huggingface_hub.constants as hc

    from tests.support.fake_hub import FakeHub

    hub = FakeHub({TOKEN: "write"}).start()
    hub.create(REPO_ID)
    os.environ.pop("HF_HUB_OFFLINE", None)
    hc.HF_HUB_OFFLINE = False
    hc.HF_HUB_DISABLE_XET = True  # the fake Hub stores Parquet files through LFS, not Xet
    os.environ.update(
        HF_ENDPOINT=hub.url,
        HF_TOKEN=TOKEN,
        FACTBOARD_HUB_REPO=REPO_ID,
        HF_HOME=str(work / "hf_home"),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_XET="1",
        FACTBOARD_HUB_POLL=str(args.poll),
        FACTBOARD_HUB_PUSH_EVERY=str(min(0.25, args.poll / 8)),
    )
    from evaluator.hub import background, sync
    from evaluator.hub.client import HubClient
    from evaluator.store import runs

    client = HubClient.from_env()
    t = time.perf_counter()
    sync.push(client, src, work / "source" / "submissions", reported=True, demo=True)
    n_files = len(hub.repo(REPO_ID).files() or {})
    print(f"published {n_files} files in {time.perf_counter() - t:.1f} s", file=sys.stderr)

    # 1. boot of an empty Space
    space = work / "space"
    t = time.perf_counter()
    rep = sync.pull(client, space / "leaderboard_data", space / "submissions")
    pull_s = time.perf_counter() - t
    n_runs = len(runs.list_runs(space / "leaderboard_data", include_hidden=True).runs)

    # 2. first render: fresh copy with the repo configured vs the warm local root
    first_render(src, work / "source" / "submissions", False)  # imports, not counted
    fresh, warm = [], []
    for _ in range(5):  # interleaved, so that neither side gets the quieter moments
        fresh.append(first_render(space / "leaderboard_data", space / "submissions", True))
        warm.append(first_render(src, work / "source" / "submissions", False))
    fresh_s, warm_s = statistics.median(fresh), statistics.median(warm)

    # 3. a submission's time to a second replica
    from evaluator.submissions import service
    from tests.support.submit import predictions_csv

    a, b = work / "replica-a", work / "replica-b"
    for r in (a, b):
        shutil.copytree(space, r)
    background.stop_all()
    os.environ["FACTBOARD_HUB_REPO"] = REPO_ID  # the warm render ran without it
    background.start(a / "leaderboard_data", a / "submissions")
    background.start(b / "leaderboard_data", b / "submissions")
    lags = []
    for i in range(3):
        os.environ["FACTBOARD_DATA"] = str(a / "leaderboard_data")
        res = service.submit(
            predictions_csv(100 + i),
            "preds.csv",
            service.SubmissionMeta(benchmark="demo", model_name=f"Bench submission {i}"),
            data_root=a / "leaderboard_data",
            submissions_root=a / "submissions",
            resamples=100,
        )
        assert res.ok and res.run_id, res.problems
        t = time.perf_counter()
        background.start(a / "leaderboard_data", a / "submissions")  # the page's rerun
        target = b / "leaderboard_data" / "runs" / res.run_id / "run.json"
        while not target.exists():
            if time.perf_counter() - t > 10 * args.poll:
                break
            time.sleep(0.01)
        lags.append(time.perf_counter() - t)
    background.stop_all()
    hub.stop()
    lag = statistics.median(lags)

    rows = [
        ("boot pull (s)", pull_s, 10.0, f"{n_runs} runs, {rep.summary()}"),
        ("first render, fresh Space (s)", fresh_s, None, f"runs: {fresh}"),
        ("first render, warm local root (s)", warm_s, None, f"runs: {warm}"),
        ("fresh / warm first render", fresh_s / warm_s, 1.2, ""),
        ("submission to 2nd replica (poll intervals)", lag / args.poll, 2.0, f"lags: {lags}"),
    ]
    ok = True
    for name, value, goal, note in rows:
        miss = goal is not None and value > goal
        ok &= not miss
        g = f"goal < {goal}" if goal is not None else ""
        print(f"{name:44} {value:8.3f}  {g:14} {'MISSED' if miss else ''} {note}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
