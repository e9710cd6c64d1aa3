"""The results repo at scale: a replica booting from its tables, polls, a submission's publish
and a whole root's push, against a fake Hub on 127.0.0.1 that counts requests.

Run: python bench/bench_hub.py [--sizes 200,2000,10000] [--push-runs 1000] [--app] [--no-board]

All in this one run (a temporary folder; the real huggingface_hub client through HF_ENDPOINT):

- repos of 200, 2,000 and 10,000 runs on the demo benchmark, written straight into the fake Hub
  as tables and one shard per kind (what a compacted repo holds) by a synthetic generator: each
  run a copy of a demo baseline's run.json with its own id, name and numbers, and its own
  predictions and labels for the demo's samples;
- boot of an empty replica from each: the Space's start-up sync into an empty data root (every
  pulled run checked and kept in packs, evaluator/store/pulled.py: the board has every number),
  requests and seconds (goals: at most 50 requests and under 10 s at 10,000 runs; requests
  growing under 1.5x from 200 to 10,000, and seconds no faster than the runs: every pulled run
  is validated and scored again before it is shown, README "Running a public space safely", so
  a boot's seconds grow with its runs by design); the same boot in a process of its own, for
  its peak memory (goal: under 1 GB at 10,000 runs, as a push's); then the packed runs written
  as run folders, as the Space does next in the background (seconds, no goal);
- a pull with nothing new (goal: at most 5 requests);
- publishing one new submission from a booted replica of each size: requests, commits, seconds
  (goal: one commit, a few requests, seconds whatever the size);
- files in the repo and the largest folder (goal: under 1,000 entries at 10,000 runs);
- a push of a local root of --push-runs runs (written as run folders) into an empty repo, in a
  child process: seconds and peak memory (goals: under 60 s and 1 GB);
- the board on the booted replicas of the smallest and largest repos, in a child process each
  (bench_app's leaderboard measure, AppTest): the first render of a fresh replica (no store
  snapshot yet), the first render of a new session, slice changes and the process's peak
  memory (goals at 10,000 runs: under 1 s, 0.3 s and 1 GB, each growing under 1.5x from 200);
  the largest also as a Space's board reads it in its first minute, its runs still in packs
  (not yet written as folders in the background; a Space of 200 runs writes them at its
  start-up), held to the same goals at 10,000 runs, its growth from 200 printed without a
  goal (it lasts until the runs are written); measured once every size is booted,
  BOARD_ROUNDS times, the roots in turn, each figure the median of its rounds and each growth
  the median of the rounds' own ratios (a change in the machine's load falls on every root
  alike);
- a Space's start-up before it serves from an empty data root (scripts/space_prepare.sh, as the
  container runs it: the pull into packs, the board's store read once and its snapshot
  written), seconds, no goal;
- with --app: the first render of the leaderboard on a fresh replica of the 200-run repo (after
  the Space's start-up; the server's background sync's first pass included) beside the warm
  local root (goal: within 1.2x); the first render of a page that boots an empty disk itself
  (no start-up pull: the case where it failed), no goal; and a submission's time to a second
  replica running the app's background sync (goal: < 2 polls).

The exit code is 1 if a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

REPO_ID = "bench/results"
TOKEN = "hf_benchwritetokenAAAAAAAAAAAA"


# --------------------------------------------------------------------------------------------
# the synthetic generator


VARIANTS = 32  # distinct prediction sets, each scored once (see Synth)


class Synth:
    """Runs on the demo benchmark, made fast: a baseline's run.json with new ids and names, and
    one of VARIANTS random prediction sets with the numbers the scorer gives them, so that every
    run's numbers follow from its predictions (a replica scores each pulled run again and skips
    one whose numbers do not)."""

    def __init__(self, root: Path):
        from evaluator.benchmarks import registry
        from evaluator.core.scoring import score
        from evaluator.core.types import RunRecord
        from evaluator.ingest import demo
        from evaluator.store import ingested, runs
        from evaluator.verify import options_of

        for _ in demo.build_demo(root=root):
            pass
        self.root = root
        base = runs.list_runs(root, benchmark="demo").runs[0]
        self.template = base.model_dump(mode="json")
        d = root / "runs" / base.run_id
        self.preds = runs.read_predictions(d)
        self.labels = runs.read_labels(d)
        self.samples = ingested.load_samples("demo", root)
        spec, options = registry.get("demo"), options_of(base)
        self.variants: list[tuple[Any, Any, list[Any], Any]] = []
        for k in range(VARIANTS):
            p, lab = self._random_frames(k)
            scored = score(spec, self.samples, p, options, None)
            results = [r.model_dump(mode="json") for r in scored.results]
            self.variants.append((p, lab, results, scored.counts.model_dump(mode="json")))
        self.result_tables = [
            self._results_table(RunRecord.model_validate(self.record(k))) for k in range(VARIANTS)
        ]

    def _random_frames(self, k: int) -> tuple[Any, Any]:
        import numpy as np

        rng = np.random.default_rng(k)
        p = self.preds.copy()
        p["label"] = rng.integers(0, 2, len(p)).astype("int8")
        p["score"] = None
        lab = self.labels.copy()  # the run's final labels are its predicted labels
        final = dict(zip(p["sample_id"], p["label"], strict=True))
        lab["final_label"] = lab["sample_id"].map(final).astype("Int8")
        return p, lab

    @staticmethod
    def _results_table(rec: Any) -> Any:
        from evaluator.hub import tables as T

        return T.rows_table(T.result_rows(rec), T.RESULTS_SCHEMA)

    def record(self, i: int) -> dict[str, Any]:
        _, _, results, counts = self.variants[i % VARIANTS]
        rec = json.loads(json.dumps(self.template))
        rec["run_id"] = f"demo-synthetic-{i:05d}-20260101T000000-{i:06x}"
        rec["model"] = {"name": f"Synthetic model {i:05d}", "kind": "open-llm"}
        rec["origin"] = "submitted"
        rec["created_at"] = f"2026-01-01T00:00:00.{i:06d}+00:00"
        rec["results"], rec["counts"] = results, counts
        return rec

    def frames(self, i: int) -> tuple[Any, Any]:
        p, lab, _, _ = self.variants[i % VARIANTS]
        return p, lab

    def repo_files(self, n: int) -> dict[str, bytes]:
        """A compacted layout-2 repo of n runs: tables, one shard per kind, the benchmark."""
        import pyarrow as pa

        from evaluator.hub import layout as H
        from evaluator.hub import tables as T
        from evaluator.store import layout

        sid = "20260101T000000-bench000"
        rows, results = [], []
        preds, labels = [], []
        for i in range(n):
            rec = self.record(i)
            text = json.dumps(rec, indent=1)
            rows.append(
                {
                    "run_id": rec["run_id"],
                    "benchmark": "demo",
                    "benchmark_version": rec["benchmark_version"],
                    "model_name": rec["model"]["name"],
                    "model_kind": "open-llm",
                    "origin": "submitted",
                    "created_at": rec["created_at"],
                    "hidden": False,
                    "deleted": False,
                    "shard": sid,
                    "kinds": "predictions,labels",
                    "run_json": text,
                }
            )
            t = self.result_tables[i % VARIANTS]
            t = t.set_column(0, "run_id", pa.array([rec["run_id"]] * len(t)))
            t = t.set_column(2, "model_name", pa.array([rec["model"]["name"]] * len(t)))
            results.append(t)
            p, lab = self.frames(i)
            preds.append((rec["run_id"], pa.Table.from_pandas(p, preserve_index=False)))
            labels.append((rec["run_id"], pa.Table.from_pandas(lab, preserve_index=False)))
        manifest = T.Manifest(H.LAYOUT_VERSION, {"demo": {sid: ["predictions", "labels"]}})
        bdir = layout.benchmark_dir("demo", self.root)
        samples = (bdir / layout.SAMPLES_FILE).read_bytes()
        return {
            H.README: H.CARD.replace("{repo}", REPO_ID).encode(),
            H.MANIFEST: manifest.to_bytes(),
            H.RUNS_TABLE: T.parquet_bytes(T.rows_table(rows, T.RUNS_SCHEMA)),
            H.RESULTS_TABLE: T.parquet_bytes(pa.concat_tables(results)),
            H.SUBMISSIONS_TABLE: T.parquet_bytes(T.SUBMISSIONS_SCHEMA.empty_table()),
            H.shard_file("demo", "predictions", sid): T.parquet_bytes(
                T.shard_table("predictions", preds)
            ),
            H.shard_file("demo", "labels", sid): T.parquet_bytes(T.shard_table("labels", labels)),
            H.benchmark_file("demo", layout.SAMPLES_FILE): samples,
            H.benchmark_file("demo", layout.META_FILE): (bdir / layout.META_FILE).read_bytes(),
        }

    def write_root(self, root: Path, n: int) -> None:
        """A local data root of n run folders (written by the store, as runs are)."""
        from evaluator.core.types import RunRecord
        from evaluator.store import runs

        shutil.copytree(self.root / "benchmarks", root / "benchmarks", dirs_exist_ok=True)
        for i in range(n):
            rec = RunRecord.model_validate(self.record(i))
            p, lab = self.frames(i)
            runs.write_run(rec, p, root=root, labels=lab)


# --------------------------------------------------------------------------------------------
# measurements


def folders(files: dict[str, Any]) -> tuple[int, str]:
    """The largest folder's number of entries (files and sub-folders) and its name."""
    entries: Counter[str] = Counter()
    seen: set[str] = set()
    for p in files:
        parts = p.split("/")
        for i in range(len(parts)):
            parent, child = "/".join(parts[:i]), "/".join(parts[: i + 1])
            if child not in seen:
                seen.add(child)
                entries[parent or "."] += 1
    name, n = entries.most_common(1)[0]
    return n, name


def _hwm_mb() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited from the
    parent a child was forked from)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def push_child(root: str, subs: str) -> int:
    """Run in a child process: push a root to the (empty) repo; print seconds."""
    from evaluator.hub import sync
    from evaluator.hub.client import HubClient

    client = HubClient.from_env()
    client.head()  # the imports and the connection, before the measure
    before = _hwm_mb()
    t = time.perf_counter()
    rep = sync.push(client, Path(root), Path(subs), demo=True)
    secs = time.perf_counter() - t
    peak = _hwm_mb()
    out = {"seconds": secs, "runs": rep.pushed["runs pushed"], "peak": peak, "before": before}
    print(json.dumps(out))
    return 0


def boot_child(data: str, subs: str) -> int:
    """Run in a child process: an empty replica's boot (the Space's start-up sync: pulled runs
    checked and kept in packs); print its seconds and this process's peak memory, before and
    after (the modules imported first, no request made before the measure)."""
    from evaluator.hub import sync
    from evaluator.hub.client import HubClient

    client = HubClient.from_env()
    before = _hwm_mb()
    t = time.perf_counter()
    rep, _ = sync.sync(client, Path(data), Path(subs), defer=True)
    out = {"seconds": time.perf_counter() - t, "peak": _hwm_mb(), "before": before}
    out["skipped"] = len(rep.skipped)
    print(json.dumps(out))
    return 0


def board_child(data: str, cache: str) -> int:
    """Run in a child process: the leaderboard of the demo benchmark on a pulled replica, as
    bench_app measures it (AppTest, server-side script time): the first render of a server
    that has never seen this root (no store snapshot: a fresh replica's first page), the first
    render of a new session (a new store, starting from the snapshot the first one left),
    slice changes; and this process's peak memory. Prints JSON."""
    os.environ.update(FACTBOARD_DATA=data, FACTBOARD_CACHE=cache, HF_HUB_OFFLINE="1")
    os.environ.pop("FACTBOARD_HUB_REPO", None)
    import bench_app

    lb = bench_app.bench_leaderboard("demo")
    out = {
        "fresh": lb["first_without_snapshot"],
        "first": lb["first"],
        "slice": lb["median_slice_change"],
        "rows": lb["rows"],
        "peak": _hwm_mb(),
    }
    print(json.dumps(out))
    return 0


BOARD_ROUNDS = 5  # each size's board measured this many times, the sizes in turn


Root = tuple[int, bool]  # a booted root's runs, and whether they are still in packs


def board_figures(roots: dict[Root, Path]) -> dict[Root, list[dict[str, float]]]:
    """The board's figures of each booted root (board_child, in a child process, with a cache
    folder of its own each time: no snapshot yet), BOARD_ROUNDS times, the roots in turn, so
    that a change in the machine's load falls on every root alike: each round's figures."""
    got: dict[Root, list[dict[str, float]]] = {k: [] for k in roots}
    for r in range(BOARD_ROUNDS):
        for k, data in sorted(roots.items()):
            out = subprocess.run(
                [sys.executable, __file__, "--board-child", str(data), str(data.parent / f"c{r}")],
                capture_output=True,
                text=True,
                env=os.environ.copy(),
            )
            if out.returncode:
                raise RuntimeError(f"the board's child failed: {out.stderr[-3000:]}")
            got[k].append(json.loads(out.stdout.strip().splitlines()[-1]))
    return got


def board_rows(
    rounds: dict[Root, list[dict[str, float]]],
) -> list[tuple[str, float, float | None, str]]:
    """The board's figures per root (each the median of its rounds), against the goals at the
    largest size, and their growth from the smallest root: the median of the rounds' own
    ratios (a round measures the roots within a minute or two of each other, so a slow minute
    on this shared machine moves both sides of its ratio), each round's ratio noted. A root
    still packed is the largest size as a Space's board reads it in its first minute; its
    growth is from the smallest root as its Space serves it then (written as folders at its
    start-up), printed without a goal: it lasts until the runs are written as folders."""
    boards = {
        k: {m: statistics.median(b[m] for b in runs) for m in runs[0]} for k, runs in rounds.items()
    }
    rows: list[tuple[str, float, float | None, str]] = []
    plain = [k for k in boards if not k[1]]
    hi, lo = max(plain), min(plain)
    for (n, packed), b in sorted(boards.items()):
        top = n == hi[0]
        at = f"{n:>6} runs{', still packed' if packed else ''}"
        rows += [
            (f"{at}: board first render, fresh replica (s)", b["fresh"], None, ""),
            (f"{at}: board first render (s)", b["first"], 1.0 if top else None, ""),
            (f"{at}: board slice change (s)", b["slice"], 0.3 if top else None, ""),
            (
                f"{at}: board process peak (MB)",
                b["peak"],
                1024.0 if top else None,
                f"{b['rows']:.0f} rows on the board",
            ),
        ]
    for k in sorted(boards):
        if k == lo or (k != hi and not k[1]):
            continue
        for key, what in (
            ("fresh", "first render, fresh replica"),
            ("first", "first render"),
            ("slice", "slice change"),
            ("peak", "process peak"),
        ):
            # (a root still packed: the first minute of a Space, until the background writer
            # has written its runs as folders; its growth is printed, held to no goal)
            goal = None if key == "fresh" or k[1] else 1.5
            each = [a[key] / b[key] for a, b in zip(rounds[k], rounds[lo], strict=True)]
            note = "rounds: " + ", ".join(f"{x:.2f}" for x in each)
            size = f"{k[0]}{' packed' if k[1] else ''}"
            rows.append((f"board {what} {size} / {lo[0]}", statistics.median(each), goal, note))
    return rows


def setup_env(hub: Any, work: Path) -> None:
    import huggingface_hub.constants as hc

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
    )
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()


def space_start(replica: Path) -> float:
    """A Space's start-up before its server takes visitors, as the container runs it
    (scripts/space_prepare.sh into an empty data root: the pull, the board's store prepared);
    returns its seconds."""
    env = {
        **os.environ,
        "FACTBOARD_DATA": str(replica / "leaderboard_data"),
        "FACTBOARD_SUBMISSIONS": str(replica / "submissions"),
    }
    t = time.perf_counter()
    out = subprocess.run(
        ["bash", str(REPO / "scripts" / "space_prepare.sh")],
        capture_output=True,
        text=True,
        env=env,
    )
    took = time.perf_counter() - t
    if out.returncode or "entrypoint:" in out.stderr or "is ready" not in out.stdout:
        raise RuntimeError(f"the start-up failed: {out.stdout[-2000:]} {out.stderr[-3000:]}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="200,2000,10000")
    ap.add_argument("--push-runs", type=int, default=1000)
    ap.add_argument("--app", action="store_true", help="also first render and submission lag")
    ap.add_argument("--poll", type=float, default=2.0)
    ap.add_argument("--no-board", action="store_true", help="skip the board's figures")
    ap.add_argument("--push-child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--boot-child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--board-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.push_child:
        return push_child(*args.push_child)
    if args.boot_child:
        return boot_child(*args.boot_child)
    if args.board_child:
        return board_child(*args.board_child)

    from tests.support.fake_hub import FakeHub

    work = Path(tempfile.mkdtemp(prefix="factboard-bench-hub-"))
    hub = FakeHub({TOKEN: "write"}).start()
    setup_env(hub, work)
    from evaluator.hub import remote as R
    from evaluator.hub import sync
    from evaluator.hub.client import HubClient
    from evaluator.store import runs
    from evaluator.store.pulled import WRITE_AT_ONCE_BELOW

    synth = Synth(work / "template")
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: list[tuple[str, float, float | None, str]] = []
    boot: dict[int, tuple[int, float]] = {}
    board_roots: dict[tuple[int, bool], Path] = {}  # (runs, still packed) -> a booted root
    for n in sizes:
        repo_id = REPO_ID
        hub.repos.clear()
        hub.create(repo_id)
        t = time.perf_counter()
        hub.put(repo_id, synth.repo_files(n))
        made_s = time.perf_counter() - t
        files = hub.repo(repo_id).files() or {}
        size_mb = sum(len(v) for v in files.values()) / 2**20
        biggest, where = folders(files)
        client = HubClient.from_env()
        replica = work / f"replica-{n}"
        data, subs = replica / "leaderboard_data", replica / "submissions"
        R._TREES.clear()  # a new process: nothing read yet
        R._PARSED.clear()
        R.BLOBS = R.Blobs()
        before = len(hub.requests)
        t = time.perf_counter()
        # the Space's start-up sync: the pulled runs checked and kept in packs, the board's
        # numbers all there; the folders are written next, in the background (materialize)
        rep, _ = sync.sync(client, data, subs, defer=True)
        boot_s = time.perf_counter() - t
        boot_req = len(hub.requests) - before
        if not args.no_board and n == max(sizes) and n >= WRITE_AT_ONCE_BELOW:
            # the root as a Space's board reads it in its first minute: its runs still in
            # packs (a start-up writes fewer runs than this as folders at once, more in the
            # background), copied before they are written (hard links: only read, or renamed)
            board_roots[(n, True)] = work / f"board-{n}-packed" / "leaderboard_data"
            shutil.copytree(data, board_roots[(n, True)], copy_function=os.link)
        t = time.perf_counter()
        runs.materialize(data)
        folders_s = time.perf_counter() - t
        got = len(runs.list_runs(data, include_hidden=True).runs)
        assert got == n and not rep.skipped, (got, rep.skipped[:3])
        boot[n] = (boot_req, boot_s)
        start_s = space_start(work / f"space-{n}")
        # the boot again in a process of its own, for its peak memory
        other = work / f"boot-{n}"
        mem = subprocess.run(
            [sys.executable, __file__, "--boot-child", str(other / "data"), str(other / "subs")],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
            check=True,
        )
        boot_mem = json.loads(mem.stdout.strip().splitlines()[-1])
        assert not boot_mem["skipped"], boot_mem
        shutil.rmtree(other, ignore_errors=True)
        before = len(hub.requests)
        again = sync.pull(client, data, subs)
        idle_req = len(hub.requests) - before
        assert again.summary() == "nothing to do", again.summary()
        if not args.no_board and n in (min(sizes), max(sizes)):
            # the booted root as it is now (hard links: the board only reads it), for the
            # board's figures once every size is done (board_figures)
            board_roots[(n, False)] = work / f"board-{n}" / "leaderboard_data"
            shutil.copytree(data, board_roots[(n, False)], copy_function=os.link)

        # one new submission, published from this replica
        from evaluator.submissions import service
        from tests.support.submit import predictions_csv

        os.environ["FACTBOARD_DATA"] = str(data)
        os.environ["FACTBOARD_SUBMISSIONS"] = str(subs)
        res = service.submit(
            predictions_csv(10_000 + n),
            "preds.csv",
            service.SubmissionMeta(benchmark="demo", model_name=f"Bench submission {n}"),
            data_root=data,
            submissions_root=subs,
            resamples=100,
        )
        assert res.ok, res.problems
        commits = len(hub.repo(repo_id).commits)
        before = len(hub.requests)
        t = time.perf_counter()
        pushed = sync.push(client, data, subs)
        pub_s = time.perf_counter() - t
        pub_req = len(hub.requests) - before
        pub_commits = len(hub.repo(repo_id).commits) - commits
        assert pushed.pushed["runs pushed"] == 1
        rows += [
            (
                f"{n:>6} runs: repo files / largest folder",
                len(files),
                None,
                f"{biggest} entries in {where}; {size_mb:.1f} MB; generated in {made_s:.1f} s",
            ),
            (f"{n:>6} runs: boot, requests", boot_req, 50, ""),
            (
                f"{n:>6} runs: boot, seconds",
                boot_s,
                10.0 if n >= 10_000 else None,
                f"{n / boot_s:.0f} runs/s checked and kept in packs",
            ),
            (
                f"{n:>6} runs: boot in a process of its own, peak MB",
                boot_mem["peak"],
                1024.0 if n >= 10_000 else None,
                f"{boot_mem['before']:.0f} MB before; {boot_mem['seconds']:.1f} s",
            ),
            (
                f"{n:>6} runs: then written as folders, in the background (s)",
                folders_s,
                None,
                f"{n / folders_s:.0f} runs/s",
            ),
            (
                f"{n:>6} runs: a Space's start-up before serving (s)",
                start_s,
                None,
                "scripts/space_prepare.sh: pulled into packs, the board's store prepared",
            ),
            (f"{n:>6} runs: pull with nothing new, requests", idle_req, 5, ""),
            (
                f"{n:>6} runs: publish one submission, requests",
                pub_req,
                12,
                "head, results table, preupload, LFS batch and uploads, commit",
            ),
            (f"{n:>6} runs: publish one submission, commits", pub_commits, 1, ""),
            (f"{n:>6} runs: publish one submission, seconds", pub_s, 5.0, ""),
        ]
        shutil.rmtree(replica, ignore_errors=True)
    lo, hi = min(sizes), max(sizes)
    if lo != hi:
        rows.append((f"boot requests {hi} / {lo}", boot[hi][0] / boot[lo][0], 1.5, ""))
        grow = hi / lo
        rows.append(
            (
                f"boot seconds {hi} / {lo}",
                boot[hi][1] / boot[lo][1],
                None,
                f"runs grow {grow:.0f}x; every run is checked, so this grows with them",
            )
        )
        per_run = (boot[hi][1] / hi) / (boot[lo][1] / lo)
        rows.append((f"boot seconds per run {hi} / {lo}", per_run, 1.0, "no faster than the runs"))

    if board_roots:
        rows += board_rows(board_figures(board_roots))

    # a whole root of --push-runs runs into an empty repo, in a child process
    if args.push_runs:
        root = work / "push-root" / "leaderboard_data"
        t = time.perf_counter()
        synth.write_root(root, args.push_runs)
        write_s = time.perf_counter() - t
        hub.repos.clear()
        hub.create(REPO_ID)
        out = subprocess.run(
            [sys.executable, __file__, "--push-child", str(root), str(root.parent / "subs")],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
            check=True,
        )
        got = json.loads(out.stdout.strip().splitlines()[-1])
        rows += [
            (
                f"push of a root of {args.push_runs} runs, seconds",
                got["seconds"],
                60.0,
                f"{got['runs']} runs pushed; the root took {write_s:.1f} s to write",
            ),
            (
                f"push of a root of {args.push_runs} runs, peak MB",
                got["peak"],
                1024.0,
                f"the pushing process's peak resident memory ({got['before']:.0f} MB before)",
            ),
        ]
        shutil.rmtree(root.parent, ignore_errors=True)

    if args.app:
        rows += app_rows(hub, synth, work, args.poll)
    hub.stop()

    ok = True
    for name, value, goal, note in rows:
        miss = goal is not None and value > goal
        ok &= not miss
        g = f"goal <= {goal:g}" if goal is not None else ""
        v = f"{value:10.0f}" if float(value).is_integer() else f"{value:10.3f}"
        print(f"{name:52} {v}  {g:16} {'MISSED' if miss else '':6} {note}")
    load = os.getloadavg()
    print(f"load average at the end of the run: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


def app_rows(hub: Any, synth: Synth, work: Path, poll: float) -> list[Any]:
    """First render on a fresh replica vs the warm root; a submission's lag to a 2nd replica."""
    import bench_app

    from evaluator.hub import background, sync
    from evaluator.hub import remote as R
    from evaluator.hub.client import HubClient
    from evaluator.submissions import service
    from tests.support.submit import predictions_csv

    hub.repos.clear()
    hub.create(REPO_ID)
    hub.put(REPO_ID, synth.repo_files(200))
    os.environ.update(FACTBOARD_HUB_POLL=str(poll), FACTBOARD_HUB_PUSH_EVERY=str(poll / 8))
    warm = work / "warm"
    sync.pull(HubClient.from_env(), warm / "leaderboard_data", warm / "submissions")

    def render(data: Path, subs: Path, with_hub: bool) -> float:
        os.environ["FACTBOARD_DATA"] = str(data)
        os.environ["FACTBOARD_SUBMISSIONS"] = str(subs)
        if with_hub:
            os.environ["FACTBOARD_HUB_REPO"] = REPO_ID
        else:
            os.environ.pop("FACTBOARD_HUB_REPO", None)
        background.stop_all()
        bench_app._fresh_caches()
        t = bench_app._timed_run(bench_app._app("views/leaderboard.py", {}))
        background.stop_all()
        return t

    render(warm / "leaderboard_data", warm / "submissions", False)  # imports, not counted
    space_start(work / "fresh-x")  # and the background sync's imports
    render(work / "fresh-x" / "leaderboard_data", work / "fresh-x" / "submissions", True)
    fresh_t, warm_t, empty_t, start_t = [], [], [], []
    for i in range(5):
        # a fresh replica as a Space starts one: the container's start-up, then its server's
        # first page (its background sync's first pass included)
        f = work / f"fresh-{i}"
        start_t.append(space_start(f))
        R._TREES.clear()
        fresh_t.append(render(f / "leaderboard_data", f / "submissions", True))
        warm_t.append(render(warm / "leaderboard_data", warm / "submissions", False))
        # an empty disk whose first page boots it itself (the start-up's pull failed)
        e = work / f"empty-{i}"
        R._TREES.clear()
        empty_t.append(render(e / "leaderboard_data", e / "submissions", True))
    fresh_s, warm_s = statistics.median(fresh_t), statistics.median(warm_t)

    a, b = work / "replica-a", work / "replica-b"
    for r in (a, b):
        shutil.copytree(warm, r)
    os.environ["FACTBOARD_HUB_REPO"] = REPO_ID
    background.start(a / "leaderboard_data", a / "submissions")
    background.start(b / "leaderboard_data", b / "submissions")
    lags = []
    for i in range(3):
        os.environ["FACTBOARD_DATA"] = str(a / "leaderboard_data")
        res = service.submit(
            predictions_csv(100 + i),
            "preds.csv",
            service.SubmissionMeta(benchmark="demo", model_name=f"Lag submission {i}"),
            data_root=a / "leaderboard_data",
            submissions_root=a / "submissions",
            resamples=100,
        )
        assert res.ok and res.run_id, res.problems
        t = time.perf_counter()
        background.start(a / "leaderboard_data", a / "submissions")  # the page's rerun
        target = b / "leaderboard_data" / "runs" / res.run_id / "run.json"
        while not target.exists() and time.perf_counter() - t < 10 * poll:
            time.sleep(0.01)
        lags.append(time.perf_counter() - t)
    background.stop_all()
    return [
        ("a Space's start-up, 200 runs (s)", statistics.median(start_t), None, f"{start_t}"),
        ("first render, fresh replica of 200 runs (s)", fresh_s, None, f"{fresh_t}"),
        ("first render, warm local root (s)", warm_s, None, f"{warm_t}"),
        ("fresh / warm first render", fresh_s / warm_s, 1.2, "after the Space's start-up"),
        (
            "first page booting an empty disk / warm",
            statistics.median(empty_t) / warm_s,
            None,
            f"the page's own boot included (no start-up pull): {empty_t}",
        ),
        (
            "submission to 2nd replica (poll intervals)",
            statistics.median(lags) / poll,
            2.0,
            f"lags {lags}",
        ),
    ]


if __name__ == "__main__":
    sys.exit(main())
