"""The reference detectors' CUDA paths on a GPU, every figure beside the CPU in the same run.

Run (on a machine with a CUDA GPU): python bench/bench_gpu.py [--pairs N] [--skip-parity]
[--skip-size] [--skip-ray]
(`--dry-run` runs the same steps with the CPU standing in for the GPU, to check the script.)

On tiny random-weight checkpoints built on the spot (the models of the tests, tests/support) and
on random-weight models of the real checkpoints' sizes (nothing is downloaded):

1. Parity: each detector scores the same demo pairs on the CPU (float32) and on the GPU in its
   authors' dtype (float16 for SummaC, bfloat16 for the decoder-based checkers, float32 for the
   others) and in float32: the dtype the run records, the largest score differences, no NaN.
2. float16 on the GPU (`--option precision=float16`) for the detectors that run float32 by
   default: the largest difference from their float32 scores on the GPU.
3. Batching on the GPU: batch size 1 against 32 on the same pairs: the largest difference
   (padding is masked, so float rounding only) and the speed ratio.
4. Speed at the real checkpoints' sizes (random weights, a small vocabulary: the cost is in the
   layers and the sequence length, not the vocabulary): SummaC-ZS with an ALBERT-xlarge-sized
   NLI model (float16, its authors' dtype, against float32) and FactCG with a DeBERTa-v3-large-
   sized classifier (float32, its authors', against float16), pairs per second with batches of
   32 and of 1.
5. Ray with a GPU: `python -m evaluator run --engine ray --workers 2 --gpus-per-worker 0.5
   --device cuda` (two detector actors share the GPU, each given it by Ray) against `--engine
   local --device cuda` on the same benchmark: identical predictions, and the device and dtype the
   run records.

The exit code is 1 if a check fails: a NaN; a float32 score on the GPU more than 1e-3 from the
CPU's (rounding only; the tiny models' large random weights amplify it to ~1e-4); batching
changing a float32 score by more than 1e-3; the Ray run differing from the local one. The authors'
lower precisions (float16, bfloat16) are figures, not checks: on the tiny random models they move
scores as much on the CPU as on the GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

FAILURES: list[str] = []


def _check(ok: bool, what: str) -> str:
    if not ok:
        FAILURES.append(what)
    return "ok" if ok else "FAILED"


def _pairs(root: Path, n: int) -> tuple[list[str], list[str]]:
    """n (document, summary) pairs of the demo benchmark, in sample order."""
    from evaluator.ingest.demo import build_demo
    from evaluator.store import ingested

    list(build_demo(root=root))
    s = ingested.load_samples("demo", root).sort_values("sample_id").head(n)
    return list(s["document"]), list(s["summary"])


def _configs(tiny: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each detector's tiny checkpoint and options (those of tests/detectors)."""
    return {
        "summac-zs": {"checkpoint": tiny["nli"]},
        "alignscore": {
            "checkpoint": tiny["align-ckpt"],
            "options": {"base_model": tiny["align-base"]},
        },
        "minicheck": {"checkpoint": tiny["minicheck-enc"]},
        "minicheck (flan-t5)": {"detector": "minicheck", "checkpoint": tiny["t5"]},
        "bartscore": {"checkpoint": tiny["bart"]},
        "longdocfactscore": {
            "checkpoint": tiny["bart"],
            "options": {"embedding_model": tiny["encoder"]},
        },
        "qags": {
            "checkpoint": tiny["t5"],
            "options": {
                "qa_model": tiny["qa"],
                "spacy_model": "none",
                "num_beams": 3,
                "questions_per_answer": 3,
                "n_questions": 4,
                "min_question_tokens": 1,
                "n_answers": 3,
                "max_question_tokens": 12,
            },
        },
        "hhem": {"checkpoint": tiny["hhem"]},
        "factcg": {"checkpoint": tiny["factcg"]},
        "bespoke-minicheck": {"checkpoint": tiny["qwen2-chat"]},
        "granite-guardian": {"checkpoint": tiny["granite"]},
    }


def _score(
    label: str,
    cfg: dict[str, Any],
    device: str,
    docs: list[str],
    sums: list[str],
    batch_size: int = 16,
    precision: str | None = None,
) -> tuple[list[float], float, str]:
    """Scores, seconds of scoring (the model already loaded, one warm-up pair first), dtype."""
    from evaluator.detectors.runner import build_detector

    options = dict(cfg.get("options") or {})
    if precision:
        options["precision"] = precision
    det = build_detector(
        cfg.get("detector", label),
        checkpoint=cfg["checkpoint"],
        device=device,
        batch_size=batch_size,
        options=options or None,
    )
    det.ensure_loaded()
    det.score(docs[:1], sums[:1])  # warm-up: kernels compiled, caches allocated
    t0 = time.perf_counter()
    scores = [float(v) for v in det.score(docs, sums)]
    seconds = time.perf_counter() - t0
    dtype = str(det.describe().get("dtype"))
    return scores, seconds, dtype


def _maxdiff(a: list[float], b: list[float]) -> float:
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)


def _nan(a: list[float]) -> bool:
    return any(not math.isfinite(v) for v in a)


def _half(
    label: str, cfg: dict[str, Any], gpu: str, docs: list[str], sums: list[str], g: list[float]
) -> str:
    """float16 scores' largest difference from float32 (bfloat16 where a detector refuses
    float16, as HHEM's T5 does: T5 overflows in float16)."""
    from evaluator.core.errors import DetectorError

    for precision, tag in (("float16", ""), ("bfloat16", " bf16")):
        try:
            half, _, _ = _score(label, cfg, gpu, docs, sums, batch_size=32, precision=precision)
        except DetectorError:
            continue
        return ("NaN" if _nan(half) else f"{_maxdiff(half, g):.2g}") + tag
    return "-"


def parity(
    tiny: dict[str, str], gpu: str, docs: list[str], sums: list[str], only: list[str]
) -> None:
    print(f"\n1-3. Parity, float16 and batching on {len(docs)} demo pairs (tiny random models)")
    print(
        f"   {'detector':<22}{'GPU dtype':<10}{'vs CPU':>9}{'fp32 vs CPU':>13}{'fp16 vs fp32':>14}"
        f"{'batch 1 vs 32':>15}{'speed 32/1':>12}  checks"
    )
    for label, cfg in _configs(tiny).items():
        if only and label not in only:
            continue
        try:
            cpu, _, _ = _score(label, cfg, "cpu", docs, sums)
            g, _, dtype = _score(label, cfg, gpu, docs, sums, batch_size=32)
            g32 = g
            if dtype != "float32":
                g32, _, _ = _score(label, cfg, gpu, docs, sums, batch_size=32, precision="float32")
            one, t1, _ = _score(label, cfg, gpu, docs, sums, batch_size=1)
            _, t32, _ = _score(label, cfg, gpu, docs, sums, batch_size=32)
            fp16 = _half(label, cfg, gpu, docs, sums, g) if dtype == "float32" else "(default)"
        except Exception as exc:  # a detector that cannot run here is a finding, not a crash
            print(f"   {label:<22}error: {type(exc).__name__}: {str(exc)[:160]}")
            FAILURES.append(f"{label}: {type(exc).__name__}")
            continue
        if dtype == "bfloat16":
            fp16 = "-"
        d_cpu, d32, d_batch = _maxdiff(g, cpu), _maxdiff(g32, cpu), _maxdiff(one, g)
        # float32 on the GPU must give the CPU's scores (rounding only: the tiny models' large
        # random weights amplify it to ~1e-4); the authors' lower precision and its batching are
        # figures, not checks (the same sizes of differences show on the CPU in that dtype)
        checks = [
            _check(not (_nan(g) or _nan(g32) or _nan(cpu)), f"{label}: NaN"),
            _check(d32 <= 1e-3, f"{label}: GPU float32 vs CPU {d32:.2g}"),
        ]
        if dtype == "float32":
            checks.append(_check(d_batch <= 1e-3, f"{label}: batch 1 vs 32 {d_batch:.2g}"))
        print(
            f"   {label:<22}{dtype:<10}{d_cpu:>9.2g}{d32:>13.2g}{fp16:>14}{d_batch:>15.2g}"
            f"{t1 / t32 if t32 else float('nan'):>11.1f}x  {' '.join(checks)}"
        )


def _sized(root: Path) -> dict[str, str]:
    """Random-weight models of the real checkpoints' sizes, with the tests' small tokenizers."""
    import torch
    from transformers import (
        AlbertConfig,
        AlbertForSequenceClassification,
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
    )

    from tests.support.detectors import _train_wordpiece, _wordpiece

    trained = _train_wordpiece()
    out: dict[str, str] = {}
    torch.manual_seed(0)
    d = root / "albert-xlarge-nli"
    tok = _wordpiece(trained, d, 512)
    labels = {0: "SUPPORTS", 1: "REFUTES", 2: "NOT ENOUGH INFO"}
    AlbertForSequenceClassification(  # albert-xlarge: 2048 hidden, 24 layers, 16 heads
        AlbertConfig(
            vocab_size=len(tok),
            embedding_size=128,
            hidden_size=2048,
            num_hidden_layers=24,
            num_attention_heads=16,
            intermediate_size=8192,
            max_position_embeddings=512,
            num_labels=3,
            id2label=labels,
            label2id={v: k for k, v in labels.items()},
            pad_token_id=tok.pad_token_id,
        )
    ).save_pretrained(d)
    out["summac-zs"] = str(d)
    d = root / "deberta-v3-large"
    tok = _wordpiece(trained, d, 2048)
    DebertaV2ForSequenceClassification(  # deberta-v3-large: 1024 hidden, 24 layers, 16 heads
        DebertaV2Config(
            vocab_size=len(tok),
            hidden_size=1024,
            num_hidden_layers=24,
            num_attention_heads=16,
            intermediate_size=4096,
            max_position_embeddings=512,
            relative_attention=True,
            position_buckets=256,
            pos_att_type=["p2c", "c2p"],
            position_biased_input=False,
            norm_rel_ebd="layer_norm",
            pad_token_id=tok.pad_token_id,
            num_labels=2,
        )
    ).save_pretrained(d)
    out["factcg"] = str(d)
    return out


def speed(root: Path, gpu: str, docs: list[str], sums: list[str]) -> None:
    import torch

    print(f"\n4. Speed at the real checkpoints' sizes ({len(docs)} pairs, random weights)")
    sized = _sized(root / "sized")
    uniq = list(dict.fromkeys(docs))  # news-length documents: five demo documents joined
    docs = [" ".join(uniq[(i + k) % len(uniq)] for k in range(5)) for i in range(len(docs))]
    words = sum(len(d.split()) + len(s.split()) for d, s in zip(docs, sums, strict=True))
    print(f"   inputs: {words / len(docs):.0f} words per (document, summary) pair on average")
    for label, authors, other in (
        ("summac-zs", "float16", "float32"),
        ("factcg", "float32", "float16"),
    ):
        cfg = {"checkpoint": sized[label]}
        a, ta, _ = _score(label, cfg, gpu, docs, sums, batch_size=32, precision=authors)
        b, tb, _ = _score(label, cfg, gpu, docs, sums, batch_size=32, precision=other)
        one, t1, _ = _score(label, cfg, gpu, docs, sums, batch_size=1, precision=authors)
        n = len(docs)
        checks = _check(not _nan(a) and not _nan(b), f"{label} sized: NaN")
        print(
            f"   {label}: {authors} (authors') {n / ta:.1f} pairs/s, {other} {n / tb:.1f} "
            f"pairs/s ({ta / tb:.2f}x the authors' speed), largest difference "
            f"{_maxdiff(a, b):.2g}; batch 1 {n / t1:.1f} pairs/s (batches of 32: "
            f"{t1 / ta:.1f}x)  {checks}"
        )
        if gpu == "cuda":
            print(f"   peak GPU memory so far: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


def _find(meta: Any, key: str) -> Any:
    """The first value under `key` anywhere in a run.json."""
    if isinstance(meta, dict):
        if meta.get(key) is not None:
            return meta[key]
        meta = list(meta.values())
    if isinstance(meta, list):
        for v in meta:
            found = _find(v, key)
            if found is not None:
                return found
    return None


def ray_run(root: Path, tiny: dict[str, str], gpu: str, env: dict[str, str]) -> None:
    print("\n5. Ray with the GPU: two detector actors sharing it, against the local engine")
    try:
        import ray  # noqa: F401
    except ImportError:
        print("   ray is not installed: skipped")
        FAILURES.append("ray missing")
        return
    runs: dict[str, Path] = {}
    for engine, extra in (
        ("local", ["--engine", "local"]),
        ("ray", ["--engine", "ray", "--workers", "2", "--gpus-per-worker", "0.5"]),
    ):
        cmd = [sys.executable, "-m", "evaluator", "run", "--detector", "summac-zs"]
        cmd += ["--benchmark", "demo", "--checkpoint", tiny["nli"], "--device", gpu]
        cmd += ["--model-name", f"summac-{engine}", *extra]
        if engine == "ray" and gpu != "cuda":
            cmd = [c for c in cmd if c not in ("--gpus-per-worker", "0.5")]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
        secs = time.perf_counter() - t0
        if p.returncode != 0:
            print(f"   {engine}: exit {p.returncode}\n{(p.stdout + p.stderr)[-2000:]}")
            FAILURES.append(f"ray check: {engine} run failed")
            return
        made = sorted((root / "runs").glob("*"), key=lambda q: q.stat().st_mtime)[-1]
        runs[engine] = made
        meta = json.loads((made / "run.json").read_text())
        print(
            f"   {engine}: {secs:.1f} s (a fresh process: imports, model load, scoring, "
            f"writing); device {_find(meta, 'device')}, dtype {_find(meta, 'dtype')}"
        )
    import pandas as pd

    a = pd.read_parquet(runs["local"] / "predictions.parquet").sort_values("sample_id")
    b = pd.read_parquet(runs["ray"] / "predictions.parquet").sort_values("sample_id")
    same = list(a["sample_id"]) == list(b["sample_id"]) and _maxdiff(
        list(a["score"]), list(b["score"])
    ) <= (1e-3 if gpu == "cuda" else 0.0)
    print(
        f"   predictions: {len(a)} samples, largest difference "
        f"{_maxdiff(list(a['score']), list(b['score'])):.2g}  {_check(same, 'ray vs local')}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-size", action="store_true")
    ap.add_argument("--skip-parity", action="store_true")
    ap.add_argument("--only", default="", help="parity: these detectors (comma-separated)")
    ap.add_argument("--dry-run", action="store_true", help="the CPU stands in for the GPU")
    args = ap.parse_args()

    import torch

    if torch.cuda.is_available():
        gpu = "cuda"
        props = torch.cuda.get_device_properties(0)
        print(f"GPU: {props.name}, {props.total_memory / 2**30:.0f} GiB; torch {torch.__version__}")
    elif args.dry_run:
        gpu = "cpu"
        print("no GPU: a dry run, the CPU standing in for it")
    else:
        print("no CUDA GPU here (use --dry-run to check the script on the CPU)")
        return 2
    import transformers

    print(f"transformers {transformers.__version__}; {os.cpu_count()} CPU cores")

    from tests.support.detectors import build_tiny_models
    from tests.support.tiny_checkers import build_tiny_checkers
    from tests.support.tiny_decoders import build_tiny_decoders
    from tests.support.tiny_summac import write_punkt_tab

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        punkt = write_punkt_tab(root / "nltk_data")
        os.environ["NLTK_DATA"] = str(punkt)  # the Ray actors' nltk reads it too
        import nltk.data

        nltk.data.path.insert(0, str(punkt))
        data = root / "data"
        os.environ["FACTBOARD_DATA"] = str(data)
        docs, sums = _pairs(data, args.pairs)
        t0 = time.perf_counter()
        tiny = {
            **build_tiny_models(root / "tiny"),
            **build_tiny_checkers(root / "checkers"),
            **build_tiny_decoders(root / "decoders"),
        }
        print(f"tiny models built in {time.perf_counter() - t0:.0f} s")
        if not args.skip_parity:
            parity(tiny, gpu, docs, sums, [x for x in args.only.split(",") if x])
        if not args.skip_size:
            speed(root, gpu, docs[: max(32, args.pairs // 2)], sums[: max(32, args.pairs // 2)])
        if not args.skip_ray:
            ray_run(data, tiny, gpu, dict(os.environ))
    print(f"\n{len(FAILURES)} check(s) failed" + (f": {'; '.join(FAILURES)}" if FAILURES else ""))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
