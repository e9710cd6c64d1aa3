"""The Ray engine on one machine, every figure beside the local engine measured in the same run.

Run: python bench/bench_ray.py [--pairs N] [--workers N]
1. Throughput: MiniCheck with a MiniLM-sized checker (the real all-MiniLM-L6-v2 encoder with a
   random 2-way head) over >= 2,000 distinct (document, summary) pairs built from the demo
   benchmark, scored by the run's own scoring step (evaluator.detectors.runner: blocks,
   checkpoints, the same detector code) with `--engine local` (torch with one thread per core)
   and `--engine ray --workers N` (one thread per actor). Goal: ray/local >= 1.0x.
2. Start overhead: starting Ray on this machine, and a pipeline over one small block (actors
   started, the detector built and loaded in each) minus the local engine on the same block
   with a fresh detector. Goal: < 5 s.
Scores of the two engines are compared too (they must be identical).
"""

from __future__ import annotations

import argparse
import logging
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


def _score(rows: Any, engine: Any, ckpt: str, root: Path) -> tuple[list[float], float]:
    from evaluator.detectors.runner import _actor_spec, _score, build_detector

    det = build_detector("minicheck", checkpoint=ckpt, device="cpu", batch_size=16)
    spec = _actor_spec("minicheck", det, ckpt, "cpu", 16, {})
    key = {"bench": time.time_ns(), "engine": engine.name}  # never resume between phases
    t0 = time.perf_counter()
    scores, _, store, _ = _score(
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=2048)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--block-size", type=int, default=256)
    args = ap.parse_args()
    import numpy as np
    import torch

    from evaluator.runner import Engine

    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ckpt = _minilm_checker(root)
        rows = _pairs(root, args.pairs)
        print(f"{len(rows)} pairs over {rows['document'].nunique()} documents; {cores} cores")

        torch.set_num_threads(cores)
        local = Engine("local", block_size=args.block_size)
        small = rows.head(8)
        _, local_small = _score(small, local, ckpt, root)  # a fresh detector: load included
        local_scores, local_s = _score(rows, local, ckpt, root)

        import ray

        t0 = time.perf_counter()
        ray.init(
            num_cpus=cores,
            include_dashboard=False,
            logging_level=logging.WARNING,
            log_to_driver=False,
        )
        ray_start = time.perf_counter() - t0
        on_ray = Engine("ray", workers=args.workers, block_size=args.block_size)
        _, ray_small = _score(small, Engine("ray", workers=1, block_size=8), ckpt, root)
        ray_scores, ray_s = _score(rows, on_ray, ckpt, root)
        ray.shutdown()

    same = np.array_equal(np.asarray(local_scores), np.asarray(ray_scores))
    n = len(rows)
    print()
    print(f"{'phase':52} {'seconds':>8} {'pairs/s':>8}")
    print(f"{f'local engine ({cores} torch threads)':52} {local_s:8.2f} {n / local_s:8.1f}")
    label = f"ray engine, {args.workers} workers (1 thread each)"
    print(f"{label:52} {ray_s:8.2f} {n / ray_s:8.1f}")
    print(f"throughput ray/local: {local_s / ray_s:.2f}x (goal >= 1.0x); identical scores: {same}")
    print(f"starting Ray on this machine: {ray_start:.2f} s")
    overhead = ray_small - local_small
    print(
        f"pipeline start overhead (8 pairs: ray {ray_small:.2f} s - local {local_small:.2f} s): "
        f"{overhead:.2f} s (goal < 5 s); with Ray's start: {overhead + ray_start:.2f} s"
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
