"""The skeleton every model run shares (see docs/ARCHITECTURE.md, "Runs"): load the ingested
benchmark -> select the samples to run on -> produce predictions (what differs: a reference
detector in evaluator.detectors.runner, a prompted LLM in evaluator.llm.runner) -> score them
with the engine -> write an immutable run folder.

`write_run_once` writes a run unless one with its id exists: a queued job that is run twice (its
worker died after writing) finds its run instead of writing a second one.

`Engine` says where the predictions are made: `local` (this process) or `ray` (a Ray cluster,
evaluator.distributed; Ray is imported only when that engine runs). Both engines run the same
detector and LLM code on the same blocks of samples, so they give the same scores; the run
records which engine made it (`Engine.record`).
"""

from __future__ import annotations

import math
import platform
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import Scored, ScoreOptions, score
from evaluator.core.types import ModelInfo, RunConfig, RunRecord
from evaluator.store import ingested, layout, runs

ENGINES = ("local", "ray")
DEFAULT_BLOCK_SIZE = 256  # samples per block: the unit a worker scores and a checkpoint holds


class EngineRecord(TypedDict, total=False):
    """What a run stores about its engine (config.extra.engine); the Ray engine's address,
    workers and GPUs per worker only on the ray engine."""

    name: str
    block_size: int
    address: str | None
    workers: int
    gpus_per_worker: float
    versions: dict[str, str]  # python, and ray where it is loaded


@dataclass(frozen=True)
class Engine:
    """Where a run makes its predictions.

    name: "local" (this process) or "ray" (a Ray cluster).
    address: ray only: "auto" (the cluster this machine belongs to, as `ray start` left it, or
        $RAY_ADDRESS), "ray://host:port" (Ray Client) or "host:port" (a head's GCS); None starts
        a Ray on this machine for the run.
    workers: ray only: detector actors (each builds the detector once) or LLM tasks in flight.
    gpus_per_worker: ray only: GPUs each detector actor asks Ray for (fractions share a GPU).
    block_size: samples per block, for both engines: a detector scores one block per call
        (deduplication and length-sorted batching happen inside it) and a finished block is
        checkpointed, so an interrupted run resumes at the first unfinished block."""

    name: str = "local"
    address: str | None = None
    workers: int = 1
    gpus_per_worker: float = 0.0
    block_size: int = DEFAULT_BLOCK_SIZE

    def check(self, error: type[FactBoardError] = FactBoardError) -> Engine:
        """Self, every field checked; a bad value is an error naming it."""
        if self.name not in ENGINES:
            raise error(f"unknown engine {self.name!r}; engines: {', '.join(ENGINES)}")
        if self.workers < 1:
            raise error(f"workers must be at least 1, got {self.workers}")
        if not math.isfinite(self.gpus_per_worker) or self.gpus_per_worker < 0:
            raise error(f"gpus per worker must be a number >= 0, got {self.gpus_per_worker}")
        if self.block_size < 1:
            raise error(f"block size must be at least 1, got {self.block_size}")
        if self.name == "local":
            given = [
                f
                for f, v in (
                    ("--ray-address", self.address),
                    ("--workers", self.workers != 1),
                    ("--gpus-per-worker", self.gpus_per_worker),
                )
                if v
            ]
            if given:
                verb = "needs" if len(given) == 1 else "need"
                raise error(f"{', '.join(given)} {verb} --engine ray")
        return self

    @property
    def is_ray(self) -> bool:
        return self.name == "ray"

    def send_llm(self, client_spec: tuple[str, Mapping[str, str]], *args: Any, **kw: Any) -> None:
        """Send LLM requests from this engine's workers (the ray engine; evaluator.llm.execute
        calls it, so the LLM layer never imports the Ray layer)."""
        if not self.is_ray:
            raise FactBoardError("only the ray engine sends LLM requests from its workers")
        from evaluator.distributed.llm import send_on_ray

        send_on_ray(client_spec, *args, engine=self, **kw)

    def record(self) -> EngineRecord:
        """What a run stores about its engine: name, workers, block size and versions (the
        address only as host:port, never credentials in it)."""
        import sys

        versions = {"python": platform.python_version()}
        out: EngineRecord = {"name": self.name, "block_size": self.block_size}
        if self.is_ray:
            from evaluator.distributed.cluster import public_address

            ray = sys.modules.get("ray")
            if ray is not None:
                versions["ray"] = str(getattr(ray, "__version__", "?"))
            out.update(
                {
                    "address": public_address(self.address),
                    "workers": self.workers,
                    "gpus_per_worker": self.gpus_per_worker,
                }
            )
        out["versions"] = versions
        return out


def engine_from(fields: Mapping[str, Any], error: type[FactBoardError] = FactBoardError) -> Engine:
    """An Engine from the CLI's or a job payload's fields (engine, ray_address, workers,
    gpus_per_worker, block_size; absent ones take their defaults), checked."""

    def get(key: str, default: Any) -> Any:
        v = fields.get(key)
        return default if v is None else v

    return Engine(
        name=str(get("engine", "local")),
        address=fields.get("ray_address") or None,
        workers=int(get("workers", 1)),
        gpus_per_worker=float(get("gpus_per_worker", 0.0)),
        block_size=int(get("block_size", DEFAULT_BLOCK_SIZE)),
    ).check(error)


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
    evidence: pd.DataFrame | None = None,
) -> Path:
    """Score the predictions with the engine and store the run; returns its folder.

    adjust: changes the scored result before it is recorded, where the runner knows more than
    the predictions say (the LLM runner: how many replies were unparsable or failed).
    evidence: per pair, why a detector scored it so (sample_id, split, evidence; None where
    none), stored with the run as evidence.parquet when any pair has some."""
    has_evidence = evidence is not None and bool(evidence["evidence"].notna().any())
    if adjust is None and not has_evidence:
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
    if adjust is not None:
        adjust(scored)
    record = scorer.build_record(
        inputs.spec, inputs.version, scored, model, origin, config, run_id=run_id
    )
    return runs.write_run(
        record, predictions, None, root, scored.final_labels, evidence if has_evidence else None
    )


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
    if runs.existing_run(record.run_id, root) is not None:
        return final, False
    try:
        return runs.write_run(record, predictions, grades, root, labels), True
    except (FactBoardError, OSError):
        if (final / runs.RUN_FILE).is_file():
            return final, False
        raise


__all__: list[Any] = [
    "DEFAULT_BLOCK_SIZE",
    "ENGINES",
    "Engine",
    "Inputs",
    "check_limit",
    "engine_from",
    "load_inputs",
    "requested_splits",
    "score_and_write",
    "select_samples",
    "write_run_once",
]
