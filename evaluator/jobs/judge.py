"""The worker's "judge" job: the same as `python -m evaluator judge --run RUN ...`.

payload: {"run_id": RUN, "judge": "PROVIDER:MODEL", "protocol": "EvalV4" (default),
"concurrency": N, "limit": N, "options": {KEY: VALUE}, "engine": "local"|"ray", "ray_address":
..., "workers": N, "gpus_per_worker": G, "block_size": N}; the worker adds "job_id". With the ray
engine the grade requests go out from Ray tasks, `concurrency` at once for the whole cluster.

The new run's id is derived from the job id (queue.run_id_for_job), so a job run twice finds the
run it wrote instead of writing a second one. Grade requests that fail for good (after the
retries of evaluator.llm.execute) make the job raise queue.TransientJobError: the worker retries
it later with backoff, and only the failed requests are sent again (the rest are cached). Bad
payloads, unknown runs, missing inputs and refused keys are permanent failures.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Required, TypedDict, cast

from evaluator.core.choices import DEFAULT_JUDGE_PROTOCOL
from evaluator.core.errors import FactBoardError
from evaluator.jobs.detector_run import ENGINE_FIELDS, EnginePayload

KIND = "judge"
FIELDS: dict[str, type] = {
    "run_id": str,
    "judge": str,
    "protocol": str,
    "concurrency": int,
    "limit": int,
    "options": dict,
    **ENGINE_FIELDS,
}
REQUIRED = ("run_id", "judge")


class Payload(EnginePayload, total=False):
    """A judge job's payload, as check_payload returns it (the fields of FIELDS)."""

    run_id: Required[str]
    judge: Required[str]
    protocol: str
    concurrency: int
    limit: int
    options: dict[str, str | int | float]


class Result(TypedDict):
    """What a judge job leaves as its result: the new run and what its judge entry counts."""

    run_id: str
    supersedes: str | None
    judge: str
    protocol: str
    graded: int | None
    unparsable: int | None
    no_explanation: int | None


def _count(v: object) -> int | None:
    return v if isinstance(v, int) else None


def check_payload(payload: object) -> Payload:
    from evaluator.jobs.detector_run import gpus_as_float
    from evaluator.jobs.queue import check_payload as check
    from evaluator.runner import engine_from

    out = check("judge", gpus_as_float(payload), FIELDS, REQUIRED)
    options = out.get("options") or {}
    assert isinstance(options, dict)  # FIELDS says so
    for k, v in options.items():
        if not isinstance(k, str) or not isinstance(v, str | int | float):
            raise FactBoardError(f"judge payload: option {k!r}={v!r} is not KEY: text or number")
    engine_from(out)
    return cast(Payload, out)  # every field was checked against FIELDS


def handle(payload: dict[str, object], report: Callable[[str, float | None], None]) -> Result:
    from evaluator.jobs import queue
    from evaluator.llm.execute import Tally
    from evaluator.llm.judges import JudgeIncomplete, judge_run
    from evaluator.runner import engine_from
    from evaluator.store import runs

    p = check_payload(payload)
    rec = runs.read_record(runs.find_run(p["run_id"]))
    new_id = None
    if p.get("job_id"):
        new_id = queue.run_id_for_job(p["job_id"], rec.benchmark, rec.model.name)
    protocol = p.get("protocol", DEFAULT_JUDGE_PROTOCOL)
    last = {"t": 0.0, "frac": -1.0}

    def on_progress(t: Tally) -> None:
        frac = t.done / t.total if t.total else 1.0
        now = time.monotonic()
        if frac >= 1.0 or frac - last["frac"] >= 0.05 or now - last["t"] >= 10:
            last.update(t=now, frac=frac)
            report(f"{protocol} by {p['judge']}: {t.done}/{t.total} graded; {t.postfix()}", frac)

    report(f"grading run {p['run_id']} with {p['judge']} ({protocol})", 0.0)
    try:
        path = judge_run(
            p["run_id"],
            p["judge"],
            protocol,
            concurrency=p.get("concurrency", 8),
            options={k: str(v) for k, v in p.get("options", {}).items()},
            limit=p.get("limit"),
            new_run_id=new_id,
            fail_on_failed=True,
            on_progress=on_progress,
            engine=engine_from(p),
        )
    except JudgeIncomplete as e:
        raise queue.TransientJobError(str(e)) from None
    new = runs.read_record(path)
    # the run's judge entry for this judge and protocol (evaluator.llm.records.JudgeEntry)
    entry: Mapping[str, object] = next(
        (
            j
            for j in reversed(new.config.extra.get("judges", []))
            if j.get("judge") == p["judge"] and j.get("protocol") == protocol
        ),
        {},
    )
    report(f"wrote run {new.run_id} (supersedes {p['run_id']})", 1.0)
    return {
        "run_id": new.run_id,
        "supersedes": new.supersedes,
        "judge": p["judge"],
        "protocol": protocol,
        "graded": _count(entry.get("graded")),
        "unparsable": _count(entry.get("unparsable")),
        "no_explanation": _count(entry.get("no_explanation")),
    }
