"""The worker's "reproduce" job: a submitted run re-run from its recipe and compared with what
was submitted (evaluator.reproduce), its outcome recorded as the run's verification status
(evaluator.submissions.verification: reproduced, differs with the figures, or failed with the
reason). Maintainers approve it on the Queue page (`approve`) or with
`python -m evaluator reproduce RUN_ID --approve --token T`.

payload: {"run_id": RUN_ID, "device": ..., "resamples": N, "engine": "local"|"ray",
"ray_address": ..., "workers": N, "gpus_per_worker": G, "block_size": N} (the engine fields as
the detector-run job's: a worker on a Ray cluster's head re-runs a detector on the cluster).
Failures worth retrying (out of memory, a network error) raise TransientJobError; a recipe
that cannot run is an outcome ("failed"), not a job failure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Required, cast

from evaluator.core.errors import FactBoardError
from evaluator.jobs.detector_run import ENGINE_FIELDS, EnginePayload

KIND = "reproduce"
FIELDS = {
    "run_id": str,
    "device": str,
    "resamples": int,
    **ENGINE_FIELDS,
}
REQUIRED = ("run_id",)


class Payload(EnginePayload, total=False):
    """A reproduce job's payload, as check_payload returns it (the fields of FIELDS)."""

    run_id: Required[str]
    device: str
    resamples: int


def check_payload(payload: object) -> Payload:
    """The payload's fields, type-checked; every problem named."""
    from evaluator.jobs.detector_run import gpus_as_float
    from evaluator.jobs.queue import check_payload as check
    from evaluator.runner import engine_from

    out = cast(Payload, check(KIND, gpus_as_float(payload), FIELDS, REQUIRED, FactBoardError))
    # every field was checked against FIELDS
    if "resamples" in out and not 1 <= out["resamples"] <= 10_000:
        raise FactBoardError(f"{KIND} payload: resamples={out['resamples']} is not in 1..10000")
    engine_from(out, FactBoardError)
    return out


def handle(
    payload: dict[str, object], report: Callable[..., None] | None = None
) -> dict[str, object]:
    # the result is the outcome verification.verify records, with the run id
    """Run the job; returns the recorded outcome with the run id."""
    from evaluator.jobs.detector_run import _transient
    from evaluator.jobs.queue import TransientJobError
    from evaluator.runner import engine_from
    from evaluator.submissions import verification

    say = report or (lambda *_a: None)
    p = check_payload(payload)
    engine = engine_from(p, FactBoardError) if p.get("engine") else None
    say(f"reproducing run {p['run_id']}", None)
    try:
        outcome = verification.verify(
            p["run_id"],
            device=p.get("device"),
            engine=engine,
            resamples=int(p.get("resamples") or 1000),
        )
    except Exception as e:
        if _transient(e):
            raise TransientJobError(f"{type(e).__name__}: {e}") from e
        raise
    say(f"run {p['run_id']}: {outcome['status']}", 1.0)
    return {"run_id": p["run_id"], **outcome}


def job_id_for(run_id: str) -> str:
    """A new job id for a reproduction of `run_id` (one per approval)."""
    digest = hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:12]
    return f"reproduce-{digest}-{datetime.now(UTC):%Y%m%dT%H%M%S%f}"


def open_job(run_id: str, root: Path | None = None) -> Any:
    """The pending or running reproduction of `run_id`, if there is one."""
    from evaluator.jobs import queue

    for state in ("pending", "running"):
        for job in queue.list_jobs(state, root):
            if job.kind == KIND and job.payload.get("run_id") == run_id:
                return job
    return None


def approve(
    run_id: str,
    token: str | None,
    *,
    data_root: Path | None = None,
    submissions_root: Path | None = None,
    **options: Any,
) -> Any:
    """A maintainer's approval: queue the reproduction of a submitted run with a recipe (the
    job already queued or running for it, when there is one). options: payload fields."""
    from evaluator.jobs import queue
    from evaluator.reproduce import recipe_of
    from evaluator.store import runs
    from evaluator.submissions import moderation

    moderation.check_admin_token(token)
    rec = runs.read_record(runs.find_run(run_id, data_root))
    if rec.origin != "submitted" or not (rec.submission or {}).get("recipe"):
        raise FactBoardError(
            f"run {run_id} is not a submitted run with a recipe: there is nothing to reproduce "
            "(a run FactBoard made is checked with python -m evaluator reproduce)"
        )
    recipe_of(rec)  # a recipe reproduce cannot follow fails here, before a job is queued
    have = open_job(run_id, submissions_root)
    if have is not None:
        return have
    payload = check_payload({"run_id": run_id, **{k: v for k, v in options.items() if v}})
    return queue.enqueue(KIND, payload, job_id=job_id_for(run_id), root=submissions_root)
