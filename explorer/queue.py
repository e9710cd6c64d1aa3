"""The queue page's tables: one row per job, one job's messages (newest first), the
maintainers' problems panel (one row per corrupt file of the store) and the submitted runs
whose recipe awaits a reproduction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from evaluator.core.types import RunRecord
from evaluator.jobs.queue import Job
from evaluator.store.doctor import StoreProblem
from evaluator.submissions import verification


class JobRow(TypedDict):
    """One job as the Queue page's table shows it."""

    job: str
    kind: str
    status: str
    attempts: str  # "1/3"
    progress: float | None  # 0 to 1, None when the job says nothing
    message: str
    created: str
    updated: str


def job_rows(jobs: Sequence[Job]) -> list[JobRow]:
    """One row per job; a failed job shows its error as its message."""
    return [
        {
            "job": j.id,
            "kind": j.kind,
            "status": j.status,
            "attempts": f"{j.attempts}/{j.max_attempts}",
            "progress": j.progress,
            "message": j.error if j.status == "failed" and j.error else j.last_message,
            "created": j.created_at,
            "updated": j.updated_at,
        }
        for j in jobs
    ]


def message_rows(job: Job) -> list[dict[str, str]]:
    """The job's messages, newest first."""
    return [{"at": m["at"], "message": m["text"]} for m in reversed(job.messages)]


# the job states a maintainer can act on: requeue (failed) or cancel (pending, failed)
ACTIONABLE = ("pending", "failed")


def problem_rows(problems: Sequence[StoreProblem]) -> list[dict[str, str]]:
    """The problems panel: one row per corrupt file, what kind of file and what is wrong."""
    return [{"kind": p.kind, "file": p.path, "problem": p.problem} for p in problems]


def reproduction_rows(records: Sequence[RunRecord]) -> list[dict[str, str]]:
    """One row per submitted run awaiting a reproduction: what the recipe says to run, and the
    status (pending, or the reason the last try failed)."""
    from evaluator.reproduce import NotReproducible, recipe_of

    out = []
    for r in records:
        try:
            recipe = recipe_of(r).describe()
        except NotReproducible as e:
            recipe = str(e)
        out.append(
            {
                "run": r.run_id,
                "benchmark": r.benchmark,
                "model": r.model.name,
                "recipe": recipe,
                "status": verification.label_of(r.origin, {}, r.submission),
                "submitted": r.created_at[:19],
            }
        )
    return out
