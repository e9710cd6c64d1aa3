"""Predictions -> a scored, stored run: the one path every run takes (a submission, `evaluator
score`, a detector or LLM run, a judged run, a release's own runs).

Scoring itself is pure (evaluator.core.scoring); writing is evaluator.store.runs. The run keeps the
final labels the scorer scored with (labels.parquet), so readers never re-derive them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.errors import ScoringError
from evaluator.core.scoring import Scored, ScoreOptions, score
from evaluator.core.types import ModelInfo, RunConfig, RunRecord
from evaluator.store import ingested, runs


def build_record(
    spec: BenchmarkSpec,
    version: str,
    scored: Scored,
    model: ModelInfo,
    origin: str,
    config: RunConfig | None = None,
    submission: Mapping[str, object] | None = None,
    run_id: str | None = None,
    supersedes: str | None = None,
) -> RunRecord:
    return RunRecord(
        run_id=run_id or runs.new_run_id(spec.name, model.name),
        benchmark=spec.name,
        benchmark_version=version,
        model=model,
        origin=origin,  # type: ignore[arg-type]
        config=config or RunConfig(),
        threshold=scored.threshold,
        splits=scored.splits,
        created_at=runs.now_iso(),
        counts=scored.counts,
        bootstrap=scored.bootstrap,
        results=scored.results,
        submission=submission,
        supersedes=supersedes,
    )


def score_to_run(
    spec: BenchmarkSpec,
    version: str,
    samples: pd.DataFrame,
    predictions: pd.DataFrame,
    model: ModelInfo,
    origin: str,
    config: RunConfig | None = None,
    options: ScoreOptions | None = None,
    grades: pd.DataFrame | None = None,
    root: Path | None = None,
    submission: Mapping[str, object] | None = None,
    run_id: str | None = None,
    supersedes: str | None = None,
) -> Path:
    """Score predictions and store them as a new immutable run; returns the run folder."""
    scored = score(spec, samples, predictions, options, grades)
    rec = build_record(spec, version, scored, model, origin, config, submission, run_id, supersedes)
    return runs.write_run(rec, predictions, grades, root, scored.final_labels)


def score_file_to_run(
    name: str,
    predictions: pd.DataFrame,
    model: ModelInfo,
    origin: str = "submitted",
    config: RunConfig | None = None,
    options: ScoreOptions | None = None,
    root: Path | None = None,
    submission: Mapping[str, object] | None = None,
) -> Path:
    """Score predictions against the ingested benchmark `name` (the CLI's and the page's path)."""
    spec = registry.get(name)
    meta = ingested.load_meta(name, root)
    samples = ingested.load_samples(name, root)
    if predictions.empty:
        raise ScoringError("the prediction file has no rows")
    return score_to_run(
        spec,
        meta["version"],
        samples,
        predictions,
        model,
        origin,
        config,
        options,
        None,
        root,
        submission,
    )
