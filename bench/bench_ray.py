"""The Ray engine on one machine, every figure beside the local engine measured in the same run.

Run: python bench/bench_ray.py [--pairs N] [--workers N] [--skip-cli] [--skip-whole]
1. Throughput: MiniCheck with a MiniLM-sized checker (the real all-MiniLM-L6-v2 encoder with a
   random 2-way head) over >= 2,000 distinct (document, summary) pairs built from the demo
   benchmark, scored by the run's own scoring step (evaluator.detectors.runner: blocks,
   checkpoints, the same detector code) with `--engine local` (torch with one thread per core)
   and `--engine ray --workers N` (one thread per actor), in this process, where torch is
   already imported (so each actor's imports count against Ray). Goal: ray/local >= 1.0x.
   Also printed once the scorers are up: pairs per second from the first scorer ready (its
   imports done and its model loaded, as each scorer notes) to the last block's end. Then
   scaling: the same pairs with 1 and with N workers.
2. Start overhead, in this process: starting Ray (as a run that starts its own does), then a
   pipeline over one small block (actors started, torch imported and the model loaded in each)
   minus the local engine on the same block with a fresh detector (torch already imported here,
   so this figure counts the actor's import against Ray); then the same again with Ray and Ray
   Data already running in the process (a second run). Goal: < 5 s.
3. Start overhead as a user pays it: `python -m evaluator run --detector minicheck ... --limit 4`
   (8 pairs) in a fresh process, `--engine ray --workers 1` (Ray started by the run) minus
   `--engine local`: both pay the interpreter, the imports, the model load and the run's writing.
   Then the same on a cluster kept running (`ray start --head` on this machine, the runs given
   its address), as a maintainer who fills the board runs one command after another: the first
   run on the cluster (which starts Ray Data's own actors) and a later one.
4. Whole runs as a user makes them: the same pairs ingested as a benchmark, and `python -m
   evaluator run` over all of them in a fresh process, local and `--engine ray --workers N` on
   the cluster kept running (in the order local, ray, ray, local), and once with no cluster
   running (Ray started by the run). Both engines pay the imports, the model load, the scoring,
   the metrics and the writing; the runs' predictions must be identical.
Scores of the two engines are compared too (they must be identical). The machine's load
average is printed beside the figures: on a shared machine they move with it.
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
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _minilm_checker(root: Path) -> str:
    """The real MiniLM encoder with a random 2-way head, saved locally (a MiniCheck checker)."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    from tests.support.detectors import embedding_model_path

    out = root / "minilm-checker"
    torch.manual_seed(0)
    m = BertForSequenceClassification.from_pretrained(embedding_model_path(), num_labels=2)
    m.save_pretrained(out)
    tok = AutoTokenizer.from_pretrained(embedding_model_path())
    tok.eos_token = "[SEP]"  # MiniCheck joins document and claim with the EOS token
    tok.save_pretrained(out)
    return str(out)


def _pairs(root: Path, n: int) -> Any:
    """n distinct pairs: each demo document with summaries of the demo (its own first), grouped
    by document as a benchmark's samples are."""
    import pandas as pd

    from evaluator.ingest.demo import build_demo
    from evaluator.store import ingested

    data = root / "data"
    (data / "benchmarks").mkdir(parents=True)
    (data / "runs").mkdir()
    list(build_demo(root=data))
    s = ingested.load_samples("demo", data).sort_values("sample_id")
    docs = list(dict.fromkeys(s["document"]))
    sums = list(dict.fromkeys(s["summary"]))
    per_doc = -(-n // len(docs))
    rows = []
    for d_i, doc in enumerate(docs):
        for k in range(per_doc):
            rows.append((f"p{d_i:03d}-{k:04d}", doc, sums[(d_i * 7 + k) % len(sums)]))
    rows = rows[:n]
    return pd.DataFrame(rows, columns=["sample_id", "document", "summary"])


def _release_data(root: Path, rows: Any) -> Path:
    """A data root whose demo benchmark is the bench's pairs (a demo-format release written
    and ingested), so that a run made by the CLI scores exactly them: each pair keeps its
    document's domain and split, and is consistent where the summary is one of its document's
    own consistent summaries."""
    import json

    from evaluator.ingest import pipeline
    from evaluator.store import ingested

    demo = ingested.load_samples("demo", root / "data")
    first = demo.drop_duplicates("document").set_index("document")
    good = set(zip(demo["document"], demo["summary"].where(demo["label"] == 1), strict=True))
    release = root / "release"
    release.mkdir()
    records: dict[str, list[dict[str, Any]]] = {}
    for sid, doc, summary in rows[["sample_id", "document", "summary"]].itertuples(index=False):
        records.setdefault(str(first.loc[doc, "domain"]), []).append(
            {
                "id": sid,
                "doc": doc,
                "summary": summary,
                "label": int((doc, summary) in good),
                "original_summary": str(first.loc[doc, "seed_summary"]),
                "edit_types": [] if (doc, summary) in good else ["entity"],
                "split": "evaluation" if first.loc[doc, "split"] == "dev" else "test",
            }
        )
    for domain, recs in records.items():
        (release / f"demo_{domain}.json").write_text(json.dumps(recs), encoding="utf-8")
    data = root / "whole-data"
    (data / "benchmarks").mkdir(parents=True)
    (data / "runs").mkdir()
    pipeline.ingest("demo", release, root=data)
    return data


def _same_predictions(data: Path) -> bool:
    """Whether every run stored in `data` (both engines' whole runs) has the same
    predictions."""
    import pandas as pd

    from evaluator.store import layout

    frames = [
        pd.read_parquet(d / layout.PREDICTIONS_FILE).sort_values("sample_id", ignore_index=True)
        for d in sorted((data / "runs").iterdir())
        if (d / layout.PREDICTIONS_FILE).is_file()
    ]
    return len(frames) >= 2 and all(f.equals(frames[0]) for f in frames[1:])


def _cli_run(data: Path, ckpt: str, extra: list[str], limit: int | None) -> float:
    """Wall seconds of one `python -m evaluator run --detector minicheck` in a fresh process on
    the demo benchmark of `data` (the first `limit` samples, or all)."""
    import subprocess

    env = dict(os.environ, FACTBOARD_DATA=str(data), PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "evaluator", "run", "--detector", "minicheck"]
    cmd += ["--checkpoint", ckpt, "--device", "cpu", "--benchmark", "demo"]
    cmd += ["--limit", str(limit)] if limit else []
    t0 = time.perf_counter()
    r = subprocess.run(cmd + extra, env=env, cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"evaluator run {' '.join(extra)} failed:\n{r.stderr[-3000:]}")
    return elapsed


BLOCK_DONE: list[float] = []  # when each block reached its checkpoint, in the current phase


def _timed_checkpoints() -> None:
    """Note the time of every block checkpointed (both engines checkpoint each finished block
    in this process), for the throughput once the scorers are up."""
    from evaluator.detectors import blocks

    save = blocks.BlockStore.save

    def timed(self: Any, result: Any) -> None:
        save(self, result)
        BLOCK_DONE.append(time.time())

    blocks.BlockStore.save = timed  # type: ignore[method-assign]


def _stamped(spec: Any, folder: str) -> Any:
    """The detector as the engine builds it (in this process, or in each Ray actor), loaded,
    with the moment it was ready to score noted in a file of `folder` (one per scorer)."""
    det = spec.build()
    load = getattr(det, "ensure_loaded", None)
    if callable(load):
        load()
    stamp = Path(folder) / f"ready-{os.getpid()}-{time.time_ns()}"
    stamp.write_text(repr(time.time()), encoding="utf-8")
    return det


def _score(rows: Any, engine: Any, ckpt: str, root: Path) -> tuple[list[float], float, float]:
    """Scores, wall seconds of the whole scoring, and pairs per second once the scorers are up:
    from the first scorer ready (its imports done, the model loaded) to the last block's end
    (every scorer's start left out)."""
    import functools

    from evaluator.detectors.runner import _actor_spec, _score, build_detector

    BLOCK_DONE.clear()
    det = build_detector("minicheck", checkpoint=ckpt, device="cpu", batch_size=16)
    spec = _actor_spec("minicheck", det, ckpt, "cpu", 16, {})
    key = {"bench": time.time_ns(), "engine": engine.name}  # never resume between phases
    with tempfile.TemporaryDirectory() as stamps:
        t0 = time.perf_counter()
        scores, _, store, *_ = _score(
            det,
            rows,
            engine,
            spec=spec,
            key=key,
            root=root,
            progress=False,
            desc="bench",
            factory=functools.partial(_stamped, spec, stamps),
        )
        elapsed = time.perf_counter() - t0
        ready = min(float(f.read_text()) for f in Path(stamps).iterdir())
    store.clear()
    steady = len(rows) / (BLOCK_DONE[-1] - ready) if BLOCK_DONE else float("nan")
    return scores, elapsed, steady


def _cli_overhead(root: Path, ckpt: str) -> tuple[float, float]:
    """Wall seconds of one `evaluator run` of 8 pairs in a fresh process: (local, ray)."""
    local = _cli_run(root / "data", ckpt, ["--engine", "local"], 4)
    ray = _cli_run(root / "data", ckpt, ["--engine", "ray", "--workers", "1"], 4)
    return local, ray


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli_on_cluster(
    root: Path, ckpt: str, cpus: int, whole: Path | None, workers: int
) -> dict[str, Any]:
    """A cluster kept running (`ray start --head`, as a maintainer filling the board does) and
    runs pointed at it, each in a fresh process: 8 pairs with the local engine, the first run
    on the cluster (Ray Data's own actors start) and a later one; then, with `whole`, whole
    runs over the bench's pairs in the order local, ray, ray, local (the machine's drift
    falls on both engines alike)."""
    import signal
    import socket
    import subprocess

    port = _free_port()
    # the file where `ray start` records its cluster (ray.init without an address goes there):
    # put back as it was once this cluster is stopped, as `ray stop` would
    from ray._common.utils import get_ray_address_file

    record = Path(get_ray_address_file(None))
    before = record.read_text() if record.is_file() else None
    head = subprocess.Popen(
        ["ray", "start", "--head", "--block", f"--port={port}", f"--num-cpus={cpus}"]
        + ["--include-dashboard=false", "--disable-usage-stats"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or head.poll() is not None:
                    raise SystemExit("`ray start --head` did not come up") from None
                time.sleep(0.5)
        time.sleep(3)  # the head's raylet and agents finish starting
        # auto: the cluster `ray start` left on this machine (an explicit address would need
        # RAY_AUTH_MODE=token with Ray's token authentication)
        ray = ["--engine", "ray", "--ray-address", "auto"]
        local = ["--engine", "local"]
        out: dict[str, Any] = {
            "local": _cli_run(root / "data", ckpt, local, 4),
            "first": _cli_run(root / "data", ckpt, ray + ["--workers", "1"], 4),
            "later": _cli_run(root / "data", ckpt, ray + ["--workers", "1"], 4),
        }
        if whole is not None:
            wide = ray + ["--workers", str(workers)]
            out["whole_local"] = [_cli_run(whole, ckpt, local, None)]
            out["whole_ray"] = [_cli_run(whole, ckpt, wide, None) for _ in range(2)]
            out["whole_local"].append(_cli_run(whole, ckpt, local, None))
        return out
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # `ray start --block` stops what it started
        head.wait(timeout=60)
        if before is None:
            record.unlink(missing_ok=True)
        else:
            record.write_text(before)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=2048)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--block-size", type=int, default=256)
    ap.add_argument("--skip-cli", action="store_true", help="leave out phases 3 and 4")
    ap.add_argument("--skip-whole", action="store_true", help="leave out phase 4")
    args = ap.parse_args()
    import numpy as np
    import torch

    from evaluator.distributed.cluster import connect
    from evaluator.runner import Engine

    cores = os.cpu_count() or 1
    loads: dict[str, str] = {"start": _load()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ckpt = _minilm_checker(root)
        rows = _pairs(root, args.pairs)
        print(f"{len(rows)} pairs over {rows['document'].nunique()} documents; {cores} cores")
        cli: tuple[float, float] | None = None
        kept: dict[str, Any] | None = None
        whole: Path | None = None
        fresh_whole: float | None = None
        cli_same: bool | None = None
        if not args.skip_cli:
            cli = _cli_overhead(root, ckpt)  # before this process holds a Ray
            if not args.skip_whole:
                whole = _release_data(root, rows)
                wide = ["--engine", "ray", "--workers", str(args.workers)]
                fresh_whole = _cli_run(whole, ckpt, wide, None)  # Ray started by the run
            kept = _cli_on_cluster(root, ckpt, cores, whole, args.workers)
            if whole is not None:
                cli_same = _same_predictions(whole)
            loads["cli"] = _load()

        _timed_checkpoints()

        torch.set_num_threads(cores)
        local = Engine("local", block_size=args.block_size)
        small = rows.head(8)
        _, local_small, _ = _score(small, local, ckpt, root)  # a fresh detector: load included
        local_scores, local_s, local_steady = _score(rows, local, ckpt, root)
        loads["local"] = _load()

        import ray

        t0 = time.perf_counter()
        connect(None)  # a Ray on this machine, as a run without --ray-address starts one
        ray_start = time.perf_counter() - t0
        one = Engine("ray", workers=1, block_size=8)
        _, ray_small, _ = _score(small, one, ckpt, root)
        _, ray_small_again, _ = _score(small, one, ckpt, root)
        on_ray = Engine("ray", workers=args.workers, block_size=args.block_size)
        ray_scores, ray_s, ray_steady = _score(rows, on_ray, ckpt, root)
        scaling = {args.workers: ray_s}
        if args.workers != 1:
            _, scaling[1], _ = _score(
                rows, Engine("ray", workers=1, block_size=args.block_size), ckpt, root
            )
        loads["ray"] = _load()
        ray.shutdown()

    same = np.array_equal(np.asarray(local_scores), np.asarray(ray_scores))
    n = len(rows)
    print()
    print("machine: " + "; ".join(f"{k}: {v}" for k, v in loads.items()))
    print(f"{'phase':52} {'seconds':>8} {'pairs/s':>8}")
    print(f"{f'local engine ({cores} torch threads)':52} {local_s:8.2f} {n / local_s:8.1f}")
    for w in sorted(scaling):
        label = f"ray engine, {w} worker{'s' if w > 1 else ''} (1 thread each)"
        print(f"{label:52} {scaling[w]:8.2f} {n / scaling[w]:8.1f}")
    print(f"throughput ray/local: {local_s / ray_s:.2f}x (goal >= 1.0x); identical scores: {same}")
    print(
        f"once the scorers are up (the first one ready to the last block's end): ray "
        f"{ray_steady:.1f} vs local {local_steady:.1f} pairs/s = {ray_steady / local_steady:.2f}x"
    )
    if len(scaling) > 1:
        print(
            f"scaling on this machine's CPU: {args.workers} workers vs 1: "
            f"{scaling[1] / scaling[args.workers]:.2f}x"
        )
    print(f"starting Ray on this machine: {ray_start:.2f} s")
    goal = 5.0
    overhead = ray_small - local_small
    print(
        f"in-process pipeline start (8 pairs: ray {ray_small:.2f} s - local {local_small:.2f} s):"
        f" {overhead:.2f} s = {overhead / goal:.2f}x the 5 s goal; with Ray's start: "
        f"{overhead + ray_start:.2f} s"
    )
    again = ray_small_again - local_small
    print(
        f"a second run in this process (Ray and Ray Data up): {again:.2f} s = "
        f"{again / goal:.2f}x the goal"
    )
    if cli is not None:
        extra = cli[1] - cli[0]
        print(
            f"a run as the CLI makes it (8 pairs, fresh process, Ray started by the run): ray "
            f"{cli[1]:.2f} s - local {cli[0]:.2f} s = {extra:.2f} s = {extra / goal:.2f}x the goal"
        )
    if kept is not None:
        first, later = kept["first"] - kept["local"], kept["later"] - kept["local"]
        print(
            f"runs on a cluster kept running (`ray start --head`, 8 pairs, fresh process): local "
            f"{kept['local']:.2f} s; the first run on the cluster {kept['first']:.2f} s "
            f"(+{first:.2f} s, Ray Data's own actors started), a later run {kept['later']:.2f} s "
            f"(+{later:.2f} s = {later / goal:.2f}x the goal)"
        )
    if kept is not None and "whole_local" in kept:
        lw, rw = kept["whole_local"], kept["whole_ray"]
        mean_l, mean_r = sum(lw) / len(lw), sum(rw) / len(rw)
        print(
            f"whole runs as the CLI makes them ({n} pairs, fresh process: both engines import, "
            f"load the model, score and write the run), on the cluster kept running: local "
            f"{' / '.join(f'{v:.1f}' for v in lw)} s, ray --workers {args.workers} "
            f"{' / '.join(f'{v:.1f}' for v in rw)} s: ray/local {mean_l / mean_r:.2f}x "
            f"(goal >= 1.0x); identical predictions: {cli_same}"
        )
        if fresh_whole is not None:
            print(
                f"the same with no cluster running (Ray started by the run): {fresh_whole:.1f} s"
                f" = {mean_l / fresh_whole:.2f}x the local engine"
            )
    ok = same and cli_same is not False
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
