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
blocks of evaluator.detectors.blocks one after the other in this process, `ray` on Ray actors
(evaluator.distributed.detectors); the blocks, and so the scores, are the same, finished blocks
are checkpointed for both, and the run records the engine.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator import runner
from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import ModelInfo, RunConfig
from evaluator.detectors import blocks as B
from evaluator.detectors.base import Description, Detector, DetectorError
from evaluator.detectors.build import build_detector, library_versions
from evaluator.detectors.registry import detector_package, get_detector

_versions = library_versions  # the name older callers import
__all__ = [
    "DetectorPredictions",
    "DetectorRunSpec",
    "build_detector",
    "default_model_name",
    "predict",
    "predict_detector",
    "run",
    "run_detector",
    "select_samples",
]

# options the runner itself takes (the rest go to the detector)
RUNNER_OPTIONS = {
    "unit": "which unit to score (default: the benchmark's finest, e.g. TofuEval sentences)",
    "threshold": "a fixed threshold (threshold policy 'fixed') instead of tuning on dev",
}


def _split_options(
    options: Mapping[str, object] | None,
) -> tuple[dict[str, object], dict[str, object]]:
    opts = dict(options or {})
    mine = {k: opts.pop(k) for k in list(opts) if k in RUNNER_OPTIONS}
    return mine, opts


def default_model_name(det: Detector) -> str:
    """The board name: the detector's display name alone with its default checkpoint, else
    followed by the checkpoint (hub id, or folder name of a local path), e.g. SummaC-ZS (nli);
    a setup off the authors' is a `[variant: ...]` (Detector.board_name)."""
    return det.board_name()


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


@dataclass(frozen=True)
class DetectorRunSpec:
    """One detector run, as the CLI, a queued job, evaluate() and reproduce ask for it: the
    detector (a registry name) on a benchmark, how it is built (checkpoint, device, batch size,
    options: the runner's own, RUNNER_OPTIONS, and the detector's), what it scores (splits, the
    first `limit` samples of each), the board name, and where it scores (the engine)."""

    detector: str
    benchmark: str
    checkpoint: str | None = None
    device: str | None = None
    batch_size: int | None = None
    splits: tuple[str, ...] | None = None
    limit: int | None = None
    model_name: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    engine: runner.Engine = field(default_factory=runner.Engine)


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
    progress: bool = False,
    root: Path | None = None,
    run_id: str | None = None,
    factory: Callable[[], Any] | None = None,
    **spec: Any,
) -> Path:
    """Score `benchmark` with detector `name` and store the run; returns its folder. `spec`:
    the other fields of DetectorRunSpec (checkpoint, device, batch_size, splits, limit,
    model_name, options, engine); see `run`."""
    return run(
        _spec(name, benchmark, spec), progress=progress, root=root, run_id=run_id, factory=factory
    )


def predict_detector(
    name: str,
    benchmark: str,
    *,
    progress: bool = False,
    root: Path | None = None,
    factory: Callable[[], Any] | None = None,
    detector: Detector | None = None,
    **spec: Any,
) -> DetectorPredictions:
    """`predict` with the run's settings as keyword arguments (DetectorRunSpec's fields)."""
    return predict(
        _spec(name, benchmark, spec),
        progress=progress,
        root=root,
        factory=factory,
        detector=detector,
    )


def _spec(name: str, benchmark: str, fields: Mapping[str, Any]) -> DetectorRunSpec:
    f = dict(fields)
    if f.get("splits") is not None:
        f["splits"] = tuple(f["splits"])
    f["options"] = dict(f.get("options") or {})
    if f.get("engine") is None:
        f.pop("engine", None)
    return DetectorRunSpec(name, benchmark, **f)


def run(
    spec: DetectorRunSpec,
    *,
    progress: bool = False,
    root: Path | None = None,
    run_id: str | None = None,
    factory: Callable[[], Any] | None = None,
) -> Path:
    """Score the run `spec` describes and store it; returns its folder.

    run_id: the id to store the run under (a queued job derives it from its job id).
    factory: builds the detector that scores, in this process or in each Ray actor, instead of
    the registry (a test wraps a detector); the run is still described by the registry's."""
    p = predict(spec, progress=progress, root=root, factory=factory)
    path = runner.score_and_write(
        p.inputs, p.predictions, p.model, p.config, p.options, root, run_id, evidence=p.evidence
    )
    p.checkpoints.clear()  # the run is written: its checkpoints have served
    return path


@dataclass(frozen=True)
class _Settings:
    """What the run's options and the benchmark decide before a detector is built."""

    spec: BenchmarkSpec
    unit: str
    threshold: float | None  # --option threshold (policy "fixed")
    requested: list[str] | None  # the splits asked for (none: the benchmark's own choice)
    detector_options: dict[str, object]

    @property
    def detection(self) -> bool:
        return self.spec.task != "correlation"

    @property
    def has_dev(self) -> bool:
        return "dev" in self.spec.splits


def _settings(run: DetectorRunSpec, check_name: bool) -> _Settings:
    spec = registry.get(run.benchmark)
    if check_name:
        get_detector(run.detector)  # unknown names fail before anything is read
    if spec.task == "explanation-grading":
        raise DetectorError(
            f"{run.benchmark} grades explanations; a detector has nothing to score there"
        )
    runner.check_limit(run.limit, DetectorError)
    mine, det_options = _split_options(run.options)
    unit = str(mine.get("unit") or spec.units[0])
    if unit not in spec.units:
        raise DetectorError(f"unit {unit!r} not in {run.benchmark}'s units {list(spec.units)}")
    threshold = None
    if (given := mine.get("threshold")) is not None:
        try:
            if not isinstance(given, (str, int, float)):
                raise ValueError(given)
            threshold = float(given)
        except ValueError:
            raise DetectorError(f"option threshold={given!r} is not a number") from None
        if not math.isfinite(threshold):
            raise DetectorError(f"option threshold={threshold!r} is not finite")
    splits = list(run.splits) if run.splits is not None else None
    requested = runner.requested_splits(spec, splits, DetectorError)
    s = _Settings(spec, unit, threshold, requested, det_options)
    if s.detection and threshold is None and not s.has_dev:
        raise DetectorError(
            f"{run.benchmark} has no dev split to tune a threshold on; give --option threshold=T"
        )
    return s


def _needed_splits(s: _Settings, needs_fit: bool) -> list[str]:
    """The splits the detector scores: those asked for (or the benchmark's), and dev where a
    threshold is tuned or the detector trains there."""
    spec = s.spec
    scored = s.requested or [
        x for x in spec.splits if x != "dev" or spec.fixed_threshold is None or needs_fit
    ]
    needed = list(scored)
    tunes = s.detection and s.threshold is None and spec.fixed_threshold is None
    if s.has_dev and "dev" not in needed and (tunes or needs_fit):
        needed.append("dev")
    return needed


def _fit(
    det: Detector, rows: pd.DataFrame, run: DetectorRunSpec, version: str, unit: str
) -> dict[str, object]:
    """Train a detector that learns on the dev split; what it was trained on, for the run."""
    dev = rows[(rows["split"] == "dev") & rows["label"].notna()]
    if dev.empty:
        raise DetectorError(
            f"{run.detector} trains on labelled dev samples; {run.benchmark} has none"
        )
    det.fit(dev["document"].tolist(), dev["summary"].tolist(), [int(v) for v in dev["label"]])
    return {
        det.TRAINED_ON: {
            "benchmark": run.benchmark,
            "benchmark_version": version,
            "split": "dev",
            "unit": unit,
            "n": int(len(dev)),
        }
    }


def predict(
    run: DetectorRunSpec,
    *,
    progress: bool = False,
    root: Path | None = None,
    factory: Callable[[], Any] | None = None,
    detector: Detector | None = None,
) -> DetectorPredictions:
    """What `run` scores and stores: the detector's predictions with the run's model, config
    and scoring settings.

    detector: a built detector (evaluator.detectors.custom.CallableDetector wraps any object
    with `score(documents, summaries)`) to score with instead of building `run.detector` from
    the registry (evaluator.evaluate); the name then only names it, and no earlier run's
    checkpointed blocks are reused."""
    t0 = time.perf_counter()
    engine = run.engine.check(DetectorError)
    s = _settings(run, check_name=detector is None)
    det = detector
    if det is None:
        det = build_detector(
            run.detector,
            checkpoint=run.checkpoint,
            device=run.device,
            batch_size=run.batch_size,
            options=s.detector_options,
            progress=progress,
        )
    elif factory is None:
        built = det
        factory = lambda: built  # noqa: E731 (the one detector, in each Ray actor too)
    needs_fit = det.needs_fit
    if needs_fit and not s.has_dev:
        raise DetectorError(
            f"{run.detector} trains on the dev split and {run.benchmark} has none; give "
            "--option conv_weights=FILE (weights from another run's run.json)"
        )
    needed = _needed_splits(s, needs_fit)
    inputs = runner.load_inputs(run.benchmark, root)
    rows, no_document = select_samples(s.spec, inputs.samples, s.unit, needed, run.limit)
    if rows.empty:
        why = f" ({no_document} without a document)" if no_document else ""
        raise DetectorError(
            f"no {s.unit} of {run.benchmark} in split(s) {', '.join(needed)} can be scored{why}"
        )
    extra: dict[str, object] = _fit(det, rows, run, inputs.version, s.unit) if needs_fit else {}
    det.quiet()  # the run's bar counts pairs across blocks (and engines)
    scores, metas, store, evidence = _score(
        det,
        rows,
        engine,
        spec=_actor_spec(run, det, s.detector_options),
        key=_checkpoint_key(run, s, engine, inputs.version, det, needs_fit, detector is not None),
        root=root,
        progress=progress,
        desc=f"{run.detector} on {run.benchmark}",
        factory=factory,
    )
    preds, ev_frame = _frames(rows, scores, evidence)
    if preds.empty:
        raise DetectorError(f"detector {run.detector} gave no defined score on {run.benchmark}")
    info, recorded = _record(det, metas)
    extra.update(
        {
            "device": info.get("device"),
            "dtype": info.get("dtype"),
            "batch_size": info.get("batch_size"),
            "options": info.get("options", {}),
            "unit": s.unit,
            "splits_run": sorted(set(rows["split"])),
            "limit": run.limit,
            "samples_without_document": no_document,
            "stats": B.merge_stats(m.get("stats") for m in metas),
            "elapsed_s": round(time.perf_counter() - t0, 2),
            "versions": _versions_of(metas),
            "engine": engine.record(),
        }
    )
    extra.update(recorded)
    package = detector_package(run.detector) if detector is None else None
    if package is not None:  # a detector installed through an entry point: which release
        extra["package"] = package
    preds, policy, threshold = _labels_or_scores(preds, metas, extra, s.threshold)
    config = RunConfig(detector=run.detector, checkpoint=info.get("checkpoint"), extra=extra)
    kind, url, description = det.model_card()
    model = ModelInfo(
        name=run.model_name or default_model_name(det),
        kind=kind,  # type: ignore[arg-type]
        url=url,
        description=description,
    )
    opts = ScoreOptions(
        policy=policy,
        threshold=threshold,
        splits=tuple(s.requested) if s.requested else None,
    )
    return DetectorPredictions(inputs, preds, model, config, opts, ev_frame, store)


def _checkpoint_key(
    run: DetectorRunSpec,
    s: _Settings,
    engine: runner.Engine,
    version: str,
    det: Detector,
    needs_fit: bool,
    caller_built: bool,
) -> dict[str, object]:
    """What makes an earlier, interrupted run's checkpointed blocks this run's: the same
    detector, build, options, benchmark version, unit, block size and trained weights (a
    caller's own detector object never matches another)."""
    return {
        "detector": run.detector,
        "checkpoint": run.checkpoint,
        "device": run.device,
        "batch_size": run.batch_size,
        "options": s.detector_options,
        "benchmark": run.benchmark,
        "version": version,
        "unit": s.unit,
        "block_size": engine.block_size,
        "trained": det.trained_state() if needs_fit else None,
        **({"built_by_caller": uuid.uuid4().hex} if caller_built else {}),
    }


def _frames(
    rows: pd.DataFrame, scores: list[float], evidence: list[str | None]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The predictions (pairs with a defined score) and each pair's evidence, where the
    detector said why (stored as evidence.parquet)."""
    clean = [None if (v is None or not math.isfinite(float(v))) else float(v) for v in scores]
    preds = pd.DataFrame({"sample_id": rows["sample_id"].astype(str).tolist(), "score": clean})
    preds["score"] = preds["score"].astype("float64")
    preds = preds[preds["score"].notna()].reset_index(drop=True)
    ev_frame = pd.DataFrame(
        {
            "sample_id": rows["sample_id"].astype(str).tolist(),
            "split": rows["split"].astype(str).tolist(),
            "evidence": evidence,
        }
    )
    return preds, ev_frame


def _record(det: Detector, metas: list[B.BlockMeta]) -> tuple[Description, dict[str, object]]:
    """What the run records of the detector: its describe() with device and dtype as the
    detector that scored resolved them, and the entries of it the detector names (RECORDED)
    that it gave."""
    scored_by = next((m["describe"] for m in metas if m.get("describe")), Description())
    fidelity = scored_by.get("fidelity")
    ran = fidelity.get("splitter") if fidelity else None
    if ran is not None:
        det.record_splitter(ran)  # the splitter that ran where the pairs were scored
    info = det.describe()
    # device and dtype as the detector that scored resolved them
    if (device := scored_by.get("device")) is not None:
        info["device"] = device
    if (dtype := scored_by.get("dtype")) is not None:
        info["dtype"] = dtype
    entries: Mapping[str, object] = info
    return info, {k: v for k in det.RECORDED if (v := entries.get(k)) is not None}


def _versions_of(metas: list[B.BlockMeta]) -> dict[str, str]:
    versions = library_versions()
    for m in metas:
        for k, v in (m.get("versions") or {}).items():
            versions.setdefault(k, v)
    return versions


def _labels_or_scores(
    preds: pd.DataFrame,
    metas: list[B.BlockMeta],
    extra: dict[str, object],
    threshold: float | None,
) -> tuple[pd.DataFrame, str, float | None]:
    """A detector from outside FactBoard (evaluator.detectors.custom) may give labels: 1/True
    consistent, 0/False not, in every block; they are scored as labels, not thresholded."""
    policy = "fixed" if threshold is not None else "auto"
    returns = [d.get("returns") if (d := m.get("describe")) else None for m in metas]
    if any(returns):
        extra["returns"] = "labels" if all(r == "labels" for r in returns) else "scores"
        if extra["returns"] == "labels":
            labels = preds["score"].round().astype("Int8")
            preds = pd.DataFrame({"sample_id": preds["sample_id"], "label": labels})
            policy, threshold = "labels", None
    return preds, policy, threshold


def _actor_spec(run: DetectorRunSpec, det: Detector, options: Mapping[str, object]) -> Any:
    """How a Ray actor builds the same detector, with the files the detector read here
    (SummaC-Conv's weights) as text, for nodes that do not share this machine's disk."""
    from evaluator.distributed.detectors import DetectorSpec

    return DetectorSpec(
        run.detector, run.checkpoint, run.device, run.batch_size, dict(options), det.actor_files()
    )


def _score(
    det: Any,
    rows: pd.DataFrame,
    engine: runner.Engine,
    *,
    spec: Any,
    key: Mapping[str, object],
    root: Path | None,
    progress: bool,
    desc: str,
    factory: Callable[[], Any] | None,
) -> tuple[list[float], list[B.BlockMeta], B.BlockStore, list[str | None]]:
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
    bar = B.pair_progress(len(planned), len(planned) - len(todo), desc, progress)

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
