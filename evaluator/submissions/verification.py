"""A run's verification status: has FactBoard re-run what the numbers claim?

- reproducible: FactBoard made the run from a recipe it records (any run of `run`, a queued
  detector run, an LLM run, a judged run): `reproduce` re-runs it;
- self-reported: a submitted file without a recipe, a released or imported run, or a Python
  function given to `evaluate`: nothing to re-run;
- pending: a submission with a recipe, not re-run yet (a maintainer approves the reproduction on
  the Queue page; the worker runs it);
- reproduced: re-run from its recipe, every score and final label the same;
- differs: re-run, and it differs: the labels that differ, the largest score difference, the
  primary metric's difference with its paired 95% CI;
- failed: the reproduction could not run (the package is not installed, the checkpoint is gone):
  the reason is kept.

The outcome of a reproduction is written into the run's `submission.verification` (run.json
rewritten atomically, as moderation writes `hidden`; the runs that supersede it, e.g. its judged
copy, get it too) and into the submission record. Each outcome of a run counts one more than the
last (`seq`): replicas of a hosted board take an outcome published in the results repo when its
number is higher than their own (`adopt`), never by the clock a replica wrote. `status_of` is
pure: the CLI, the board and the exports read the status from a run's origin, config and
submission through it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluator.core import formatting as F
from evaluator.core import vocabulary as V
from evaluator.core.errors import FactBoardError
from evaluator.core.types import RunRecord
from evaluator.store import atomic, runs
from evaluator.submissions.records import (
    PRIVATE_FIELDS,
    Done,
    Figures,
    MetricFigures,
    Outcome,
    read_submission,
    record_path,
    root_dir,
    save_record,
)

STATUSES: dict[str, str] = {
    "reproduced": "re-run by FactBoard from its recipe: every score and label the same",
    "differs": "re-run by FactBoard from its recipe: the figures say how much it differs",
    "pending": "a recipe was given; FactBoard has not re-run it yet",
    "failed": "a recipe was given; re-running it failed (the reason is kept)",
    "reproducible": "made by FactBoard from a recorded recipe (python -m evaluator reproduce)",
    "self-reported": "no recipe: the predictions are as their maker gave them",
}
BADGES: dict[str, str] = {
    "reproduced": "✅ reproduced",
    "differs": "⚠️ differs",
    "pending": "⏳ pending",
    "failed": "❌ not reproduced",
    "reproducible": "🔁 reproducible",
    "self-reported": "📝 self-reported",
}
HELP = " · ".join(f"{BADGES[s]}: {STATUSES[s]}" for s in STATUSES)
MADE_HERE = ("evaluated", "reproduced")  # origins of runs FactBoard makes itself


def _as_dict(v: object) -> dict[str, object]:
    """A JSON object given as itself or as its text ({} for anything else): read with narrowing."""
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return {}
    return v if isinstance(v, dict) else {}


def _number(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def status_of(origin: str, config: object, submission: object) -> str:
    """The verification status of a run (STATUSES) from its origin, its config and its
    submission metadata (dicts, or their JSON text as the read side keeps them); "" for a
    published number."""
    if origin == "reported":
        return ""
    sub = _as_dict(submission)
    if origin == "submitted":
        done = _as_dict(sub.get("verification")).get("status")
        if isinstance(done, str) and done in STATUSES:
            return done
        return "pending" if sub.get("recipe") else "self-reported"
    if origin in MADE_HERE:
        cfg = _as_dict(config)
        detector = cfg.get("detector")
        if isinstance(detector, str) and detector and not detector.startswith("python:"):
            return "reproducible"
        if cfg.get("llm") and cfg.get("prompt_id"):
            return "reproducible"
    return "self-reported"


def details_of(submission: object) -> str:
    """The figures of a reproduction in words ("" when there are none): how many labels
    differ, the largest score difference, the metric's difference with its paired CI."""
    v = _as_dict(_as_dict(submission).get("verification"))
    status = v.get("status")
    if status == "failed":
        return str(v.get("reason") or "")
    if status == "reproduced":
        n = v.get("compared")
        return f"identical on {F.plural(int(n), 'sample')}" if isinstance(n, int) else ""
    if status != "differs":
        return ""
    parts = []
    compared = v.get("labels_compared") or v.get("compared")
    if isinstance(compared, int):
        differ = v.get("labels_differ")
        parts.append(
            f"{F.count(differ if isinstance(differ, int) else 0)} of "
            f"{F.plural(compared, 'label')} differ"
        )
    gap = _number(v.get("max_score_difference"))
    if gap is not None:
        parts.append(f"largest score difference {F.number(gap, 6)}")
    m = _as_dict(v.get("metric"))
    difference = _number(m.get("difference"))
    if difference is not None:
        name = V.metric_label(str(m.get("name") or ""))
        text = f"{name} {F.signed(difference)}"
        low, high = _number(m.get("ci_low")), _number(m.get("ci_high"))
        if low is not None and high is not None:
            text += f" (paired 95% CI {F.signed_ci(low, high)})"
        parts.append(text)
    return "; ".join(parts)


def label_of(origin: str, config: object, submission: object) -> str:
    """The status as the board and `runs` show it: its badge, then its figures."""
    return label_and_status(origin, config, submission)[0]


def label_and_status(origin: str, config: object, submission: object) -> tuple[str, str]:
    """`label_of` and `status_of` together, the submission's JSON text read once (the board
    asks both of every run)."""
    sub = _as_dict(submission)
    status = status_of(origin, config, sub)
    if not status:
        return "", ""
    details = details_of(sub) if origin == "submitted" else ""
    return BADGES[status] + (f": {details}" if details else ""), status


def record_status(rec: RunRecord) -> str:
    return status_of(rec.origin, rec.config.model_dump(mode="json"), rec.submission)


def outcome_of(result: Any) -> Outcome:
    """The stored form of a reproduction (evaluator.reproduce.Reproduction)."""
    out: Outcome = {"status": "reproduced" if result.identical else "differs", "at": runs.now_iso()}
    out.update(figures_of(result))
    return out


def figures_of(result: Any) -> Figures:
    """How a reproduction compares with the stored run (evaluator.reproduce.Reproduction): what
    an outcome records and `reproduce --json` prints."""
    m = result.metric
    return {
        "compared": int(result.compared),
        "only_stored": int(result.only_stored),
        "only_reproduced": int(result.only_reproduced),
        "scores_differ": int(result.scores_differ),
        "max_score_difference": result.max_score_difference,
        "labels_compared": int(result.labels_compared),
        "labels_differ": int(result.labels_differ),
        "metric": None
        if m is None
        else {
            "name": m.metric,
            "stored": m.stored,
            "reproduced": m.reproduced,
            "difference": m.reproduced - m.stored,
            "ci_low": m.paired.ci_low if m.paired else None,
            "ci_high": m.paired.ci_high if m.paired else None,
            "p_value": m.paired.p_value if m.paired else None,
        },
        "notes": list(result.notes),
    }


def failure(reason: str) -> Outcome:
    return {"status": "failed", "at": runs.now_iso(), "reason": reason[:500]}


DONE: tuple[Done, ...] = ("reproduced", "differs", "failed")
MAX_OUTCOME_BYTES = 20_000  # a published outcome larger than this is not taken


def seq_of(outcome: object) -> int:
    """An outcome's sequence number (0: none): what orders a run's outcomes across replicas."""
    v = _as_dict(outcome).get("seq")
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def outcome_problem(outcome: object) -> str | None:
    """Why an outcome published by another replica cannot be taken (None: it can)."""
    d = _as_dict(outcome)
    if d.get("status") not in DONE:
        return f"its verification status {str(d.get('status'))[:40]!r} is not one of {DONE}"
    if not seq_of(d):
        return "its verification outcome has no sequence number"
    if len(json.dumps(d, default=str)) > MAX_OUTCOME_BYTES:
        return f"its verification outcome is over {MAX_OUTCOME_BYTES} bytes"
    return None


def newer(published: str | bytes, ours: str | bytes) -> bool:
    """Does a submission record published in the results repo carry a later reproduction
    outcome than our copy of it?"""
    theirs, mine = (
        v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in (published, ours)
    )
    return seq_of(_as_dict(theirs).get("verification")) > seq_of(_as_dict(mine).get("verification"))


def _write_into_runs(
    run_id: str, outcome: Mapping[str, object], data_root: Path | None
) -> list[str]:
    changed = []
    for rid in _chain(run_id, data_root):
        d = runs.find_run(rid, data_root)
        r = runs.read_record(d)
        sub = {**(r.submission or {}), "verification": dict(outcome)}
        new = r.model_copy(update={"submission": sub})
        runs.rewrite_record(d, new)
        changed.append(rid)
    return changed


def adopt(
    published: str, data_root: Path | None = None, submissions_root: Path | None = None
) -> str | None:
    """Take the reproduction outcome of a submission record published by another replica (its
    sequence number higher than ours): into our copy of the run and the runs that supersede it,
    and into our record, which then equals the published one but for the private fields.
    Returns why it cannot be taken (None: taken, or nothing newer to take)."""
    pub = _as_dict(published)
    outcome = pub.get("verification")
    why = outcome_problem(outcome)
    if why:
        return why
    run_id, sid = pub.get("run_id"), pub.get("id")
    if not isinstance(run_id, str) or not isinstance(sid, str):
        return "the record names no run"
    try:
        rec = runs.read_record(runs.find_run(run_id, data_root))
    except FactBoardError:
        return f"its run {run_id} is not on this replica"
    if rec.origin != "submitted" or (rec.submission or {}).get("submission_id") != sid:
        return f"run {run_id} is not the run of submission {sid}"
    if seq_of(outcome) <= seq_of((rec.submission or {}).get("verification")):
        return None
    _write_into_runs(run_id, _as_dict(outcome), data_root)
    path = record_path(root_dir(submissions_root), sid)
    ours = _as_dict(path.read_text(encoding="utf-8")) if path.is_file() else {}
    mine = _as_dict(ours.get("meta"))
    theirs = pub.get("meta")
    if isinstance(theirs, dict) and mine:  # the private fields stay as they were here
        pub["meta"] = {**theirs, **{k: mine[k] for k in PRIVATE_FIELDS if k in mine}}
    atomic.write_json(path, {**pub, **{k: ours[k] for k in PRIVATE_FIELDS if k in ours}})
    return None


def _chain(run_id: str, data_root: Path | None) -> list[str]:
    """The submitted run this run comes from (through `supersedes`), and every run that
    supersedes that one (moderation.chain: e.g. its judged copy)."""
    from evaluator.submissions.moderation import chain

    first, seen = run_id, {run_id}
    while True:
        rec = runs.read_record(runs.find_run(first, data_root))
        if not rec.supersedes or rec.supersedes in seen:
            break
        try:
            runs.find_run(rec.supersedes, data_root)
        except FactBoardError:
            break
        first = rec.supersedes
        seen.add(first)
    return chain(first, data_root)


def record_outcome(
    run_id: str,
    outcome: Outcome,
    data_root: Path | None = None,
    submissions_root: Path | None = None,
) -> list[str]:
    """Write a reproduction's outcome into the submitted run (and the runs that supersede it)
    and into its submission record; returns the run ids changed."""
    rec = runs.read_record(runs.find_run(run_id, data_root))
    if rec.origin != "submitted":
        raise FactBoardError(f"run {run_id} is not a submitted run: it has nothing to verify")
    seq = seq_of((rec.submission or {}).get("verification")) + 1
    outcome = {**outcome, "seq": seq}
    changed = _write_into_runs(run_id, outcome, data_root)
    sid = (rec.submission or {}).get("submission_id")
    if sid:
        root = root_dir(submissions_root)
        with contextlib.suppress(FactBoardError, ValueError, OSError):
            save_record(root, read_submission(sid, root), verification=outcome)
    return changed


def verify(
    run_id: str,
    data_root: Path | None = None,
    submissions_root: Path | None = None,
    *,
    device: str | None = None,
    engine: Any = None,
    resamples: int = 1000,
) -> Outcome:
    """Reproduce a submitted run from its recipe, record the outcome (reproduced, differs, or
    failed with the reason) and return it."""
    from evaluator.reproduce import NotReproducible, reproduce

    try:
        result = reproduce(run_id, data_root, device=device, engine=engine, resamples=resamples)
    except (NotReproducible, FactBoardError, ImportError, OSError) as e:
        outcome = failure(str(e))
    else:
        outcome = outcome_of(result)
    record_outcome(run_id, outcome, data_root, submissions_root)
    return outcome


def awaiting(data_root: Path | None = None) -> list[RunRecord]:
    """Submitted runs with a recipe that no reproduction has verified yet (newest first):
    what maintainers can approve on the Queue page."""
    listing = runs.list_runs(data_root, include_hidden=True, include_superseded=False)
    out = [
        r
        for r in listing.runs
        if r.origin == "submitted" and record_status(r) in ("pending", "failed")
    ]
    return sorted(out, key=lambda r: r.created_at, reverse=True)


__all__ = [
    "BADGES",
    "Figures",
    "MetricFigures",
    "Outcome",
    "HELP",
    "STATUSES",
    "adopt",
    "awaiting",
    "details_of",
    "figures_of",
    "label_of",
    "newer",
    "outcome_problem",
    "record_outcome",
    "seq_of",
    "status_of",
    "verify",
]
