"""Where submissions are kept (the submissions root, $FACTBOARD_SUBMISSIONS): ids, the record of
each submission (`records/<id>.json`, written atomically), the saved upload
(`uploads/<id>.upload`), the in-flight markers (`inflight/<id>`) and the lock that serialises
acceptance. evaluator.submissions.service and .moderation read and write through here.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NotRequired, Required, TypedDict, Unpack, get_args

from evaluator.core.errors import FactBoardError
from evaluator.jobs import queue
from evaluator.store import atomic, layout, runs

# fields of a record that never leave the machine that received it: the contact e-mail, and the
# quota key (a client's key is a digest of its address, which a public repo must not carry;
# quotas are therefore kept per replica). The results repo's copy leaves them out.
PRIVATE_FIELDS = ("email", "submitter")

Status = Literal[
    "receiving",  # the record is written, the bytes are not saved yet
    "received",  # the bytes are saved (uploads/<id>.upload)
    "accepted",  # valid and no duplicate: being scored
    "scored",  # its run is on the board
    "rejected",  # refused (the problems say why)
    "abandoned",  # the upload was interrupted
    "deleted",  # its run was deleted by a maintainer
]
STATUSES: tuple[Status, ...] = get_args(Status)
# the statuses a submission never leaves (the service does nothing more with it)
TERMINAL: tuple[Status, ...] = ("scored", "rejected", "abandoned", "deleted")


# the statuses a reproduction records (evaluator.submissions.verification)
Done = Literal["reproduced", "differs", "failed"]


class MetricFigures(TypedDict):
    """The primary metric of a reproduction against the stored run, with the paired CI."""

    name: str
    stored: float
    reproduced: float
    difference: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None


class Figures(TypedDict):
    """How a reproduction compares with the stored run (figures_of)."""

    compared: int
    only_stored: int
    only_reproduced: int
    scores_differ: int
    max_score_difference: float | None
    labels_compared: int
    labels_differ: int
    metric: MetricFigures | None
    notes: list[str]


class Outcome(TypedDict, total=False):
    """A reproduction's outcome as the run's `submission.verification` and the submission record
    keep it: reproduced or differs with the figures, or failed with the reason; `seq` counts the
    run's outcomes (record_outcome)."""

    status: Required[Done]
    at: str
    seq: int
    reason: str
    compared: int
    only_stored: int
    only_reproduced: int
    scores_differ: int
    max_score_difference: float | None
    labels_compared: int
    labels_differ: int
    metric: MetricFigures | None
    notes: list[str]


class MetaJSON(TypedDict, total=False):
    """What the form (or the CLI) said about a submission, as its record keeps it
    (evaluator.submissions.service.SubmissionMeta; `email` is private)."""

    benchmark: Required[str]
    model_name: Required[str]
    kind: str
    org: str | None
    params: str | None
    url: str | None
    description: str | None
    email: str | None
    split: str | None
    threshold_policy: str
    threshold: float | None
    recipe: dict[str, object] | None  # as given (evaluator.submissions.recipes checks it)


class RecordFields(TypedDict, total=False):
    """The fields of a record that a submission fills in as it goes along (finish's keywords)."""

    size: int | None  # bytes of the upload
    sha256: str | None  # of the upload's bytes
    problems: list[str]
    warnings: list[str]
    run_id: str | None
    job_id: str | None  # the judge job queued for its explanations
    quota_refused: bool  # refused by a quota (does not count towards the next check)
    predictions_sha: str  # evaluator.store.fingerprints.predictions_hash, once accepted
    # what it scored, once accepted: {"labels_sha", "scores_sha"} as
    # evaluator.store.fingerprints.scored_fingerprints gives them (the duplicate check
    # compares them)
    scored: dict[str, str]
    benchmark_version: str  # the version it was accepted against
    verification: Outcome  # a reproduction's outcome (evaluator.submissions.verification)


class RecordUpdate(RecordFields, total=False):
    """What save_record may change: the fields, and the status."""

    status: Status
    updated_at: str


class SubmissionRecord(RecordUpdate, total=False):
    """A submission's record, `records/<id>.json` (read back as written: older records may lack
    the later fields)."""

    id: Required[str]
    created_at: str
    meta: MetaJSON
    filename: str | None  # the user's file name, as text only
    submitter: NotRequired[str | None]  # the quota key (private)


def root_dir(submissions_root: Path | None = None) -> Path:
    """The submissions root ($FACTBOARD_SUBMISSIONS unless given)."""
    return submissions_root or layout.submissions_root()


def dirs(root: Path) -> dict[str, Path]:
    d = {k: root / k for k in ("uploads", "records", "inflight")}
    for p in d.values():
        p.mkdir(parents=True, exist_ok=True)
    return d


def new_submission_id() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(4)}"


def run_id_for(submission_id: str, benchmark: str, model_name: str) -> str:
    """The run id of a submission: a function of its id, so a retry never writes a second run."""
    return f"{runs.slug(benchmark, 30)}-{runs.slug(model_name)}-{submission_id}"


def check_sid(sid: str) -> str:
    return queue.check_id(sid, "submission id")


def record_path(root: Path, sid: str) -> Path:
    return root / "records" / f"{check_sid(sid)}.json"


def upload_path(sid: str, submissions_root: Path | None = None) -> Path:
    return root_dir(submissions_root) / "uploads" / f"{check_sid(sid)}.upload"


def write_json_atomic(path: Path, obj: object) -> None:
    atomic.write_json(path, obj)


def read_submission(sid: str, submissions_root: Path | None = None) -> SubmissionRecord:
    """The stored record of a submission (includes the contact email: never show it)."""
    p = record_path(root_dir(submissions_root), sid)
    try:
        data: object = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FactBoardError(f"no submission {sid!r}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise FactBoardError(f"submission record {p} is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise FactBoardError(f"submission record {p} is not a JSON object")
    if not isinstance(data.get("id"), str) or data.get("status") not in STATUSES:
        raise FactBoardError(f"submission record {p} has no id or no known status")
    rec: SubmissionRecord = data  # type: ignore[assignment]  # checked above; the rest as written
    return rec


def save_record(
    root: Path, rec: SubmissionRecord, **update: Unpack[RecordUpdate]
) -> SubmissionRecord:
    rec.update(update)
    rec["updated_at"] = runs.now_iso()
    write_json_atomic(record_path(root, rec["id"]), rec)
    return rec


def finish(
    root: Path, rec: SubmissionRecord, status: Status, **update: Unpack[RecordFields]
) -> SubmissionRecord:
    rec.update(update)
    rec = save_record(root, rec, status=status)
    (root / "inflight" / rec["id"]).unlink(missing_ok=True)
    return rec


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """An exclusive lock over the duplicate check and acceptance (flock: released by the OS even
    when the holder is killed). Only submissions take it; the worker and the app's readers
    never wait on it."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / ".submit.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if sys.platform == "win32":  # pragma: no cover - the CI runs on Linux
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def inflight_records(root: Path) -> Iterator[SubmissionRecord]:
    d = root / "inflight"
    if not d.is_dir():
        return
    for marker in d.iterdir():
        with contextlib.suppress(FactBoardError, OSError):
            yield read_submission(marker.name, root)
