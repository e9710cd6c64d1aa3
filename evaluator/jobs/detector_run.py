"""The worker's "detector-run" job: the same as `python -m evaluator run --detector ...`.

payload: {"detector": NAME, "benchmark": B, "checkpoint": ID|PATH|null, "device": ...,
"batch_size": N, "splits": [...], "limit": N, "model_name": ..., "options": {KEY: VALUE},
"engine": "local"|"ray", "ray_address": ..., "workers": N, "gpus_per_worker": G,
"block_size": N} (the engine fields as the CLI's --engine options; a worker on a cluster's head
runs its jobs on the cluster).
`report(message)` receives progress lines. Failures worth retrying (out of memory on the
accelerator or the host, a network error while fetching a checkpoint) raise
evaluator.jobs.queue.TransientJobError; bad payloads and every FactBoardError are permanent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Required, TypedDict, cast

from evaluator.detectors.base import DetectorError

KIND = "detector-run"
# the engine fields every job kind that runs models takes (evaluator.runner.Engine: a queued job
# can run on a Ray cluster), and the job's id, added by the worker (the run's id derives from it)
ENGINE_FIELDS: dict[str, type] = {
    "engine": str,
    "ray_address": str,
    "workers": int,
    "gpus_per_worker": float,
    "block_size": int,
    "job_id": str,
}
FIELDS: dict[str, type] = {
    "detector": str,
    "benchmark": str,
    "checkpoint": str,
    "device": str,
    "batch_size": int,
    "splits": list,
    "limit": int,
    "model_name": str,
    "options": dict,
    **ENGINE_FIELDS,
}
REQUIRED = ("detector", "benchmark")


class EnginePayload(TypedDict, total=False):
    """A payload's ENGINE_FIELDS."""

    engine: str
    ray_address: str
    workers: int
    gpus_per_worker: float
    block_size: int
    job_id: str


class Payload(EnginePayload, total=False):
    """A detector-run job's payload, as check_payload returns it (the fields of FIELDS)."""

    detector: Required[str]
    benchmark: Required[str]
    checkpoint: str
    device: str
    batch_size: int
    splits: list[str]
    limit: int
    model_name: str
    options: dict[str, object]  # the detector's own options, as the CLI's --option gives them


class Result(TypedDict):
    """What a detector-run job leaves as its result."""

    run_id: str
    run_path: str
    detector: str
    benchmark: str
    model: str
    n_scored: int
    samples_truncated: int | None
    threshold: float | None


def check_payload(payload: object) -> Payload:
    """The payload's fields, type-checked; every problem named."""
    from evaluator.jobs.queue import check_payload as check
    from evaluator.runner import engine_from

    out = check("detector-run", gpus_as_float(payload), FIELDS, REQUIRED, DetectorError)
    splits = out.get("splits") or []
    assert isinstance(splits, list)  # FIELDS says so
    for s in splits:
        if not isinstance(s, str):
            raise DetectorError(f"detector-run payload: split {s!r} is not a string")
    engine_from(out, DetectorError)
    return cast(Payload, out)  # every field was checked against FIELDS


def gpus_as_float(payload: object) -> object:
    """A whole number of GPUs (JSON 1) is a number of GPUs like 1.0."""
    if isinstance(payload, dict):
        g = payload.get("gpus_per_worker")
        if isinstance(g, int) and not isinstance(g, bool):
            return {**payload, "gpus_per_worker": float(g)}
    return payload


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError | ConnectionError | TimeoutError):
        return True
    try:
        import torch
    except ImportError:
        return False
    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", None)
    return oom is not None and isinstance(exc, oom)


def handle(payload: dict[str, object], report: Callable[[str], None] | None = None) -> Result:
    """Run the job; returns {"run_id", "run_path", "detector", "benchmark", ...}."""
    from evaluator.detectors.runner import run_detector
    from evaluator.jobs import queue
    from evaluator.jobs.queue import TransientJobError
    from evaluator.runner import engine_from
    from evaluator.store import runs

    say = report or (lambda _msg: None)
    p = check_payload(payload)
    run_id = None
    if p.get("job_id"):
        # a job rerun after its worker died finds the run it already wrote
        run_id = queue.run_id_for_job(
            p["job_id"], p["benchmark"], p.get("model_name") or p["detector"]
        )
        done = runs.existing_run(run_id)
        if done is not None:
            say(f"run {run_id} already written")
            return _summary(p, done)
    say(f"running {p['detector']} on {p['benchmark']}")
    try:
        path = run_detector(
            p["detector"],
            p["benchmark"],
            checkpoint=p.get("checkpoint"),
            device=p.get("device"),
            batch_size=p.get("batch_size"),
            splits=p.get("splits"),
            limit=p.get("limit"),
            model_name=p.get("model_name"),
            options=p.get("options"),
            progress=False,
            run_id=run_id,
            engine=engine_from(p, DetectorError),
        )
    except Exception as e:
        if _transient(e):
            raise TransientJobError(f"{type(e).__name__}: {e}") from e
        raise
    say(f"run {path.name} written")
    return _summary(p, path)


def _summary(p: Payload, path: Path) -> Result:
    from evaluator.store import runs

    rec = runs.read_record(path)
    stats = rec.config.extra.get("stats") or {}
    return {
        "run_id": rec.run_id,
        "run_path": str(path),
        "detector": p["detector"],
        "benchmark": p["benchmark"],
        "model": rec.model.name,
        "n_scored": rec.counts.predicted,
        "samples_truncated": stats.get("samples_truncated"),
        "threshold": rec.threshold.threshold,
    }
