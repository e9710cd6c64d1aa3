"""The skeleton every model run shares (see docs/ARCHITECTURE.md, "Runs"): load the ingested
benchmark -> select the samples to run on -> produce predictions (what differs: a reference
detector in evaluator.detectors.runner, a prompted LLM in evaluator.llm.runner) -> score them
with the engine -> write an immutable run folder.

`write_run_once` writes a run unless one with its id exists: a queued job that is run twice (its
worker died after writing) finds its run instead of writing a second one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import Scored, ScoreOptions, score
from evaluator.core.types import ModelInfo, RunConfig, RunRecord
from evaluator.store import ingested, layout, runs


@dataclass
class Inputs:
    """An ingested benchmark, ready to run on: its spec, version and samples."""

    spec: BenchmarkSpec
    version: str
    samples: pd.DataFrame


def load_inputs(benchmark: str, root: Path | None = None) -> Inputs:
    """The benchmark's spec and ingested samples (not ingested: the error says so)."""
    spec = registry.get(benchmark)
    meta = ingested.load_meta(benchmark, root)
    return Inputs(spec, str(meta["version"]), ingested.load_samples(benchmark, root))


def check_limit(limit: int | None, error: type[FactBoardError] = FactBoardError) -> None:
    if limit is not None and limit < 1:
        raise error(f"limit must be at least 1, got {limit}")


def requested_splits(
    spec: BenchmarkSpec, splits: Sequence[str] | None, error: type[FactBoardError] = FactBoardError
) -> list[str] | None:
    """The splits asked for, without repeats, each one checked (None when none is asked for:
    each runner has its default)."""
    if not splits:
        return None
    out = list(dict.fromkeys(splits))
    for s in out:
        if s not in spec.splits:
            raise error(f"unknown split {s!r} for {spec.name}; known: {', '.join(spec.splits)}")
    return out


def select_samples(
    samples: pd.DataFrame, unit: str, splits: Sequence[str], limit: int | None = None
) -> pd.DataFrame:
    """The samples of `unit` in `splits`, by sample_id; with `limit`, the first `limit` of each
    split (a smoke run keeps every split it needs, e.g. dev for the threshold)."""
    rows = samples[(samples["unit"] == unit) & samples["split"].isin(list(splits))]
    rows = rows.sort_values("sample_id", kind="stable")
    if limit is not None:
        rows = rows.groupby("split", sort=False, group_keys=False).head(limit)
    return rows


def score_and_write(
    inputs: Inputs,
    predictions: pd.DataFrame,
    model: ModelInfo,
    config: RunConfig,
    options: ScoreOptions,
    root: Path | None = None,
    run_id: str | None = None,
    origin: str = "evaluated",
    adjust: Callable[[Scored], None] | None = None,
) -> Path:
    """Score the predictions with the engine and store the run; returns its folder.

    adjust: changes the scored result before it is recorded, where the runner knows more than
    the predictions say (the LLM runner: how many replies were unparsable or failed)."""
    if adjust is None:
        return scorer.score_to_run(
            inputs.spec,
            inputs.version,
            inputs.samples,
            predictions,
            model,
            origin,
            config,
            options,
            None,
            root,
            run_id=run_id,
        )
    scored = score(inputs.spec, inputs.samples, predictions, options)
    adjust(scored)
    record = scorer.build_record(
        inputs.spec, inputs.version, scored, model, origin, config, run_id=run_id
    )
    return runs.write_run(record, predictions, None, root, scored.final_labels)


def write_run_once(
    record: RunRecord,
    predictions: pd.DataFrame,
    grades: pd.DataFrame | None = None,
    root: Path | None = None,
    labels: pd.DataFrame | None = None,
) -> tuple[Path, bool]:
    """Write the run unless a run with its id exists; (path, written). Safe under races: the
    staged folder is renamed into place, and a rename onto an existing run fails. labels: the
    scorer's final labels (Scored.final_labels), stored with the run."""
    final = layout.runs_dir(root) / record.run_id
    if (final / runs.RUN_FILE).is_file():
        return final, False
    try:
        return runs.write_run(record, predictions, grades, root, labels), True
    except (FactBoardError, OSError):
        if (final / runs.RUN_FILE).is_file():
            return final, False
        raise


__all__: list[Any] = [
    "Inputs",
    "check_limit",
    "load_inputs",
    "requested_splits",
    "score_and_write",
    "select_samples",
    "write_run_once",
]
