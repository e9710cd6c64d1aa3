"""The Ray engine on one machine, every figure beside the local engine measured in the same run.

Run: python bench/bench_ray.py [--pairs N] [--workers N] [--skip-cli]
1. Throughput: MiniCheck with a MiniLM-sized checker (the real all-MiniLM-L6-v2 encoder with a
   random 2-way head) over >= 2,000 distinct (document, summary) pairs built from the demo
   benchmark, scored by the run's own scoring step (evaluator.detectors.runner: blocks,
   checkpoints, the same detector code) with `--engine local` (torch with one thread per core)
   and `--engine ray --workers N` (one thread per actor). Goal: ray/local >= 1.0x. Then scaling:
   the same pairs with 1 and with N workers.
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
Throughput is also printed from the first block's end to the last's, i.e. once the scorers are
up (the actors' start, which phase 2 measures, left out).
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


BLOCK_DONE: list[float] = []  # when each block reached its checkpoint, in the current phase


def _timed_checkpoints() -> None:
    """Note the time of every block checkpointed (both engines checkpoint each finished block
    in this process), for the throughput once the scorers are up."""
    from evaluator.distributed import blocks

    save = blocks.BlockStore.save

    def timed(self: Any, result: Any) -> None:
        save(self, result)
        BLOCK_DONE.append(time.perf_counter())

    blocks.BlockStore.save = timed  # type: ignore[method-assign]


def _steady(n_pairs: int, n_blocks: int) -> float:
    """Pairs per second from the first block's end to the last's (the scorers loaded and
    warm): the pairs of every block but the first over that time."""
    if len(BLOCK_DONE) < 2:
        return float("nan")
    return n_pairs * (n_blocks - 1) / n_blocks / (BLOCK_DONE[-1] - BLOCK_DONE[0])


def _score(rows: Any, engine: Any, ckpt: str, root: Path) -> tuple[list[float], float]:
    from evaluator.detectors.runner import _actor_spec, _score, build_detector

    BLOCK_DONE.clear()

    det = build_detector("minicheck", checkpoint=ckpt, device="cpu", batch_size=16)
    spec = _actor_spec("minicheck", det, ckpt, "cpu", 16, {})
    key = {"bench": time.time_ns(), "engine": engine.name}  # never resume between phases
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
        factory=None,
    )
    elapsed = time.perf_counter() - t0
    store.clear()
    return scores, elapsed


def _cli_overhead(root: Path, ckpt: str) -> tuple[float, float]:
    """Wall seconds of one `evaluator run` of 8 pairs in a fresh process: (local, ray)."""
    import subprocess

    env = dict(os.environ, FACTBOARD_DATA=str(root / "data"), PYTHONPATH=str(REPO))
    base = [sys.executable, "-m", "evaluator", "run", "--detector", "minicheck"]
    base += ["--checkpoint", ckpt, "--device", "cpu", "--benchmark", "demo", "--limit", "4"]
    out = []
    for extra in (["--engine", "local"], ["--engine", "ray", "--workers", "1"]):
        t0 = time.perf_counter()
        r = subprocess.run(base + extra, env=env, cwd=REPO, capture_output=True, text=True)
        out.append(time.perf_counter() - t0)
        if r.returncode != 0:
            raise SystemExit(f"evaluator run {' '.join(extra)} failed:\n{r.stderr[-3000:]}")
    return out[0], out[1]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli_on_cluster(root: Path, ckpt: str, cpus: int) -> tuple[float, float, float]:
    """A cluster kept running (`ray start --head`, as a maintainer filling the board does) and
    runs pointed at it: wall seconds of (local, the first run on the cluster, a later run)."""
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
        env = dict(os.environ, FACTBOARD_DATA=str(root / "data"), PYTHONPATH=str(REPO))
        base = [sys.executable, "-m", "evaluator", "run", "--detector", "minicheck"]
        base += ["--checkpoint", ckpt, "--device", "cpu", "--benchmark", "demo", "--limit", "4"]
        out = []
        # auto: the cluster `ray start` left on this machine (an explicit address would need
        # RAY_AUTH_MODE=token with Ray's token authentication)
        ray = ["--engine", "ray", "--workers", "1", "--ray-address", "auto"]
        for extra in (["--engine", "local"], ray, ray):
            t0 = time.perf_counter()
            r = subprocess.run(base + extra, env=env, cwd=REPO, capture_output=True, text=True)
            out.append(time.perf_counter() - t0)
            if r.returncode != 0:
                raise SystemExit(f"evaluator run {' '.join(extra)} failed:\n{r.stderr[-3000:]}")
        return out[0], out[1], out[2]
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
    ap.add_argument("--skip-cli", action="store_true", help="leave out phase 3")
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
        kept: tuple[float, float, float] | None = None
        if not args.skip_cli:
            cli = _cli_overhead(root, ckpt)  # before this process holds a Ray
            kept = _cli_on_cluster(root, ckpt, cores)
            loads["cli"] = _load()

        _timed_checkpoints()
        n_blocks = -(-len(rows) // args.block_size)

        torch.set_num_threads(cores)
        local = Engine("local", block_size=args.block_size)
        small = rows.head(8)
        _, local_small = _score(small, local, ckpt, root)  # a fresh detector: load included
        local_scores, local_s = _score(rows, local, ckpt, root)
        local_steady = _steady(len(rows), n_blocks)
        loads["local"] = _load()

        import ray

        t0 = time.perf_counter()
        connect(None)  # a Ray on this machine, as a run without --ray-address starts one
        ray_start = time.perf_counter() - t0
        one = Engine("ray", workers=1, block_size=8)
        _, ray_small = _score(small, one, ckpt, root)
        _, ray_small_again = _score(small, one, ckpt, root)
        on_ray = Engine("ray", workers=args.workers, block_size=args.block_size)
        ray_scores, ray_s = _score(rows, on_ray, ckpt, root)
        ray_steady = _steady(len(rows), n_blocks)
        scaling = {args.workers: ray_s}
        if args.workers != 1:
            _, scaling[1] = _score(
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
        f"once the scorers are up (first block's end to the last's): ray {ray_steady:.1f} vs "
        f"local {local_steady:.1f} pairs/s = {ray_steady / local_steady:.2f}x"
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
        first, later = kept[1] - kept[0], kept[2] - kept[0]
        print(
            f"runs on a cluster kept running (`ray start --head`, 8 pairs, fresh process): local "
            f"{kept[0]:.2f} s; the first run on the cluster {kept[1]:.2f} s (+{first:.2f} s, "
            f"Ray Data's own actors started), a later run {kept[2]:.2f} s (+{later:.2f} s = "
            f"{later / goal:.2f}x the goal)"
        )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
