"""Run a reference detector on an ingested benchmark and store an ordinary run (the shared
skeleton is evaluator.runner; what is the detector's own is here).

`python -m evaluator run --detector NAME --benchmark B [--checkpoint ID|PATH] [--device cpu]`
and the worker's "detector-run" jobs both end here. The detector scores every split the run
needs (the dev split too when the threshold is tuned on it, and for SummaC-Conv's variant
conv_weights=dev, which trains its convolution on dev), the scores go through the engine like
any submitted file (dev-tuned threshold, AUROC, correlations), and the run records the detector,
checkpoint, device, options, fidelity, how many inputs were truncated, SummaC-Conv's weights and
each pair's evidence.

Where the scoring runs is the engine's choice (evaluator.runner.Engine): `local` scores the
blocks of evaluator.distributed.blocks one after the other in this process, `ray` on Ray actors
(evaluator.distributed.detectors); the blocks, and so the scores, are the same, finished blocks
are checkpointed for both, and the run records the engine.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator import runner
from evaluator.benchmarks import registry
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import ModelInfo, RunConfig
from evaluator.detectors.base import DetectorError
from evaluator.detectors.build import build_detector, library_versions
from evaluator.detectors.registry import detector_package, get_detector
from evaluator.distributed import blocks as B

_versions = library_versions  # the name older callers import
__all__ = [
    "DetectorPredictions",
    "build_detector",
    "default_model_name",
    "predict_detector",
    "run_detector",
    "select_samples",
]

# options the runner itself takes (the rest go to the detector)
RUNNER_OPTIONS = {
    "unit": "which unit to score (default: the benchmark's finest, e.g. TofuEval sentences)",
    "threshold": "a fixed threshold (threshold policy 'fixed') instead of tuning on dev",
}


def _split_options(options: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    opts = dict(options or {})
    mine = {k: opts.pop(k) for k in list(opts) if k in RUNNER_OPTIONS}
    return mine, opts


def default_model_name(det: Any) -> str:
    """The board name: the detector's display name alone with its default checkpoint, else
    followed by the checkpoint (hub id, or folder name of a local path), e.g. SummaC-ZS (nli)."""
    base = getattr(det, "display_name", "") or det.name
    ckpt = getattr(det, "checkpoint", None)
    default = getattr(det, "default_checkpoint", None)
    if ckpt and ckpt != default:
        p = Path(str(ckpt))
        short = p.name if p.exists() else str(ckpt)
        base = f"{base} ({short})"
    opts = getattr(det, "options", {}) or {}
    if getattr(det, "rouge_type", None) and opts.get("measure") != "precision":
        base = f"{base} {opts['measure']}"
    devs = det.deviations() if hasattr(det, "deviations") else []
    if devs:  # not the authors' setup: the board says so in the name
        base = f"{base} [variant: {', '.join(devs)}]"
    return base[:120]


def select_samples(
    spec: Any,
    samples: pd.DataFrame,
    unit: str,
    splits: list[str],
    limit: int | None,
) -> tuple[pd.DataFrame, int]:
    """The rows to score (unit, splits, first `limit` per split by sample_id) and how many of
    them were left out for having no document."""
    rows = runner.select_samples(samples, unit, splits, limit)
    no_doc = rows["document"].isna() | (rows["document"].astype(str).str.strip() == "")
    return rows[~no_doc], int(no_doc.sum())


@dataclass
class DetectorPredictions:
    """A detector's predictions on a benchmark, ready to score and store (`run_detector` stores
    them; evaluator.evaluate and reproduction score them without storing)."""

    inputs: runner.Inputs
    predictions: pd.DataFrame
    model: ModelInfo
    config: RunConfig
    options: ScoreOptions
    evidence: pd.DataFrame
    checkpoints: B.BlockStore


def run_detector(
    name: str,
    benchmark: str,
    *,
    checkpoint: str | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    splits: list[str] | None = None,
    limit: int | None = None,
    model_name: str | None = None,
    options: Mapping[str, Any] | None = None,
    progress: bool = False,
    root: Path | None = None,
    run_id: str | None = None,
    engine: runner.Engine | None = None,
    factory: Callable[[], Any] | None = None,
) -> Path:
    """Score `benchmark` with detector `name` and store the run; returns its folder.

    run_id: the id to store the run under (a queued job derives it from its job id).
    engine: where to score (default: local, blocks of runner.DEFAULT_BLOCK_SIZE).
    factory: builds the detector that scores, in this process or in each Ray actor, instead of
    the registry (a test wraps a detector); the run is still described by the registry's."""
    p = predict_detector(
        name,
        benchmark,
        checkpoint=checkpoint,
        device=device,
        batch_size=batch_size,
        splits=splits,
        limit=limit,
        model_name=model_name,
        options=options,
        progress=progress,
        root=root,
        engine=engine,
        factory=factory,
    )
    path = runner.score_and_write(
        p.inputs, p.predictions, p.model, p.config, p.options, root, run_id, evidence=p.evidence
    )
    p.checkpoints.clear()  # the run is written: its checkpoints have served
    return path


def predict_detector(
    name: str,
    benchmark: str,
    *,
    checkpoint: str | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    splits: list[str] | None = None,
    limit: int | None = None,
    model_name: str | None = None,
    options: Mapping[str, Any] | None = None,
    progress: bool = False,
    root: Path | None = None,
    engine: runner.Engine | None = None,
    factory: Callable[[], Any] | None = None,
    detector: Any = None,
) -> DetectorPredictions:
    """What `run_detector` scores and stores: the detector's predictions with the run's model,
    config and scoring settings (arguments as `run_detector`'s).

    detector: a built detector (any object with `score(documents, summaries)`) to score with
    instead of building `name` from the registry (evaluator.evaluate); `name` then only names
    it, and no earlier run's checkpointed blocks are reused."""
    t0 = time.perf_counter()
    engine = (engine or runner.Engine()).check(DetectorError)
    spec = registry.get(benchmark)
    if detector is None:
        get_detector(name)  # unknown names fail before anything is read
    if spec.task == "explanation-grading":
        raise DetectorError(
            f"{benchmark} grades explanations; a detector has nothing to score there"
        )
    runner.check_limit(limit, DetectorError)
    mine, det_options = _split_options(options)
    unit = str(mine.get("unit") or spec.units[0])
    if unit not in spec.units:
        raise DetectorError(f"unit {unit!r} not in {benchmark}'s units {list(spec.units)}")
    threshold = None
    if mine.get("threshold") is not None:
        try:
            threshold = float(mine["threshold"])
        except ValueError:
            raise DetectorError(f"option threshold={mine['threshold']!r} is not a number") from None
        if not math.isfinite(threshold):
            raise DetectorError(f"option threshold={threshold!r} is not finite")
    requested = runner.requested_splits(spec, splits, DetectorError)
    detection = spec.task != "correlation"
    has_dev = "dev" in spec.splits
    if detection and threshold is None and not has_dev:
        raise DetectorError(
            f"{benchmark} has no dev split to tune a threshold on; give --option threshold=T"
        )
    det = detector
    if det is None:
        det = build_detector(
            name,
            checkpoint=checkpoint,
            device=device,
            batch_size=batch_size,
            options=det_options,
            progress=progress,
        )
    elif factory is None:
        factory = lambda: det  # noqa: E731 (the one detector, in each Ray actor too)
    needs_fit = bool(getattr(det, "needs_fit", False))
    if needs_fit and not has_dev:
        raise DetectorError(
            f"{name} trains on the dev split and {benchmark} has none; give "
            "--option conv_weights=FILE (weights from another run's run.json)"
        )
    scored_splits = requested or [
        s for s in spec.splits if s != "dev" or spec.fixed_threshold is None or needs_fit
    ]
    needed = list(scored_splits)
    tunes = detection and threshold is None and spec.fixed_threshold is None
    if has_dev and "dev" not in needed and (tunes or needs_fit):
        needed.append("dev")

    inputs = runner.load_inputs(benchmark, root)
    rows, no_document = select_samples(spec, inputs.samples, unit, needed, limit)
    if rows.empty:
        why = f" ({no_document} without a document)" if no_document else ""
        raise DetectorError(
            f"no {unit} of {benchmark} in split(s) {', '.join(needed)} can be scored{why}"
        )
    extra: dict[str, Any] = {}
    if needs_fit:
        dev = rows[(rows["split"] == "dev") & rows["label"].notna()]
        if dev.empty:
            raise DetectorError(f"{name} trains on labelled dev samples; {benchmark} has none")
        det.fit(
            dev["document"].tolist(),
            dev["summary"].tolist(),
            [int(v) for v in dev["label"]],
        )
        extra["summac_conv_trained_on"] = {
            "benchmark": benchmark,
            "benchmark_version": inputs.version,
            "split": "dev",
            "unit": unit,
            "n": int(len(dev)),
        }
    if hasattr(det, "progress"):
        det.progress = False  # the run's bar counts pairs across blocks (and engines)
    scores, metas, store, evidence = _score(
        det,
        rows,
        engine,
        spec=_actor_spec(name, det, checkpoint, device, batch_size, det_options),
        key={
            "detector": name,
            "checkpoint": checkpoint,
            "device": device,
            "batch_size": batch_size,
            "options": det_options,
            "benchmark": benchmark,
            "version": inputs.version,
            "unit": unit,
            "block_size": engine.block_size,
            "trained": getattr(det, "state", None) if needs_fit else None,
            **({"built_by_caller": uuid.uuid4().hex} if detector is not None else {}),
        },
        root=root,
        progress=progress,
        desc=f"{name} on {benchmark}",
        factory=factory,
    )
    clean = [None if (v is None or not math.isfinite(float(v))) else float(v) for v in scores]
    preds = pd.DataFrame({"sample_id": rows["sample_id"].astype(str).tolist(), "score": clean})
    preds["score"] = preds["score"].astype("float64")
    preds = preds[preds["score"].notna()].reset_index(drop=True)
    if preds.empty:
        raise DetectorError(f"detector {name} gave no defined score on {benchmark}")
    # why each pair scored so, where the detector said (stored as evidence.parquet)
    ev_frame = pd.DataFrame(
        {
            "sample_id": rows["sample_id"].astype(str).tolist(),
            "split": rows["split"].astype(str).tolist(),
            "evidence": evidence,
        }
    )

    scored_by: dict[str, Any] = next((m["describe"] for m in metas if m.get("describe")), {})
    ran = (scored_by.get("fidelity") or {}).get("splitter")
    if ran is not None and hasattr(det, "record_splitter"):
        det.record_splitter(ran)  # the splitter that ran where the pairs were scored
    info = det.describe() if hasattr(det, "describe") else {}
    for k in ("device", "dtype"):  # as the detector that scored resolved them
        if scored_by.get(k) is not None:
            info[k] = scored_by[k]
    versions = library_versions()
    for m in metas:
        for k, v in (m.get("versions") or {}).items():
            versions.setdefault(k, v)
    extra.update(
        {
            "device": info.get("device"),
            "dtype": info.get("dtype"),
            "batch_size": info.get("batch_size"),
            "options": info.get("options", {}),
            "unit": unit,
            "splits_run": sorted(set(rows["split"])),
            "limit": limit,
            "samples_without_document": no_document,
            "stats": B.merge_stats(m.get("stats") for m in metas),
            "elapsed_s": round(time.perf_counter() - t0, 2),
            "versions": versions,
            "engine": engine.record(),
        }
    )
    if info.get("fidelity") is not None:
        extra["fidelity"] = info["fidelity"]
    if info.get("summac_conv") is not None:
        extra["summac_conv"] = info["summac_conv"]
    package = detector_package(name) if detector is None else None
    if package is not None:  # a detector installed through an entry point: which release
        extra["package"] = package
    policy = "fixed" if threshold is not None else "auto"
    # a detector from outside FactBoard (evaluator.detectors.custom) may give labels: 1/True
    # consistent, 0/False not, in every block; they are scored as labels, not thresholded
    returns = [(m.get("describe") or {}).get("returns") for m in metas]
    if any(returns):
        extra["returns"] = "labels" if all(r == "labels" for r in returns) else "scores"
        if extra["returns"] == "labels":
            labels = preds["score"].round().astype("Int8")
            preds = pd.DataFrame({"sample_id": preds["sample_id"], "label": labels})
            policy, threshold = "labels", None
    config = RunConfig(detector=name, checkpoint=info.get("checkpoint"), extra=extra)
    cls = type(det)
    model = ModelInfo(
        name=model_name or default_model_name(det),
        kind=getattr(cls, "kind", "non-llm"),
        url=getattr(cls, "paper", None) or None,
        description=getattr(det, "description", None) or None,
    )
    opts = ScoreOptions(
        policy=policy,
        threshold=threshold,
        splits=tuple(requested) if requested else None,
    )
    return DetectorPredictions(inputs, preds, model, config, opts, ev_frame, store)


def _actor_spec(
    name: str,
    det: Any,
    checkpoint: str | None,
    device: str | None,
    batch_size: int | None,
    options: Mapping[str, Any],
) -> Any:
    """How a Ray actor builds the same detector. SummaC-Conv's weights (trained here, or read
    here from --option conv_weights) travel with it as the text of that file, for nodes that do
    not share this machine's disk."""
    from evaluator.distributed.detectors import DetectorSpec

    files: dict[str, str] = {}
    state = getattr(det, "state", None)
    if state is not None and "conv_weights" in getattr(det, "OPTIONS", {}):
        files["conv_weights"] = json.dumps(state)
    return DetectorSpec(name, checkpoint, device, batch_size, dict(options), files)


def _score(
    det: Any,
    rows: pd.DataFrame,
    engine: runner.Engine,
    *,
    spec: Any,
    key: Mapping[str, Any],
    root: Path | None,
    progress: bool,
    desc: str,
    factory: Callable[[], Any] | None,
) -> tuple[list[float], list[dict[str, Any]], B.BlockStore, list[str | None]]:
    """Scores in row order, the scored blocks' metadata, the run's checkpoint store, and each
    pair's evidence in row order (JSON text, None where the detector gave none). Blocks
    checkpointed by an earlier, interrupted run of the same key are not scored again."""
    ids = rows["sample_id"].astype(str).tolist()
    planned = B.plan(ids, rows["document"].tolist(), rows["summary"].tolist(), engine.block_size)
    store = B.BlockStore(B.checkpoint_root(root) / B.run_key(key, ids))
    results: dict[int, B.BlockResult] = {}
    for b, g in B.by_block(planned):
        r = store.load(b, g["sample_id"].tolist())
        if r is not None:
            results[b] = r
    todo = planned[~planned["block"].isin(list(results))]
    bar = B.PairProgress(len(planned), len(planned) - len(todo), desc, progress)

    def finished(r: B.BlockResult) -> None:
        store.save(r)
        results[r.block] = r
        bar.update(len(r.sample_ids))

    try:
        if engine.is_ray:
            from evaluator.distributed.detectors import score_on_ray

            score_on_ray(
                todo,
                spec,
                address=engine.address,
                workers=engine.workers,
                gpus_per_worker=engine.gpus_per_worker,
                on_block=finished,
                factory=factory,
            )
        else:
            scorer = factory() if factory is not None else det
            for b, g in B.by_block(todo):
                finished(B.score_block(scorer, b, g))
    finally:
        bar.close()
    by_id: dict[str, float] = {}
    ev_by_id: dict[str, str | None] = {}
    for r in results.values():
        by_id.update(zip(r.sample_ids, r.scores, strict=True))
        ev_by_id.update(zip(r.sample_ids, r.evidence, strict=True))
    if len(by_id) != len(ids):
        raise DetectorError(f"{len(by_id)} scores for {len(ids)} pairs")
    metas = [results[b].meta for b in sorted(results)]
    return [by_id[i] for i in ids], metas, store, [ev_by_id[i] for i in ids]
