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
from typing import Any

from evaluator.core.errors import FactBoardError
from evaluator.jobs import queue
from evaluator.store import atomic, layout, runs

# fields of a record that never leave the machine that received it: the contact e-mail, and the
# quota key (a client's key is a digest of its address, which a public repo must not carry;
# quotas are therefore kept per replica). The results repo's copy leaves them out.
PRIVATE_FIELDS = ("email", "submitter")


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


def read_submission(sid: str, submissions_root: Path | None = None) -> dict[str, Any]:
    """The stored record of a submission (includes the contact email: never show it)."""
    p = record_path(root_dir(submissions_root), sid)
    try:
        data: dict[str, Any] = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FactBoardError(f"no submission {sid!r}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise FactBoardError(f"submission record {p} is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise FactBoardError(f"submission record {p} is not a JSON object")
    return data


def save_record(root: Path, rec: dict[str, Any], **update: Any) -> dict[str, Any]:
    rec.update(update)
    rec["updated_at"] = runs.now_iso()
    write_json_atomic(record_path(root, rec["id"]), rec)
    return rec


def finish(root: Path, rec: dict[str, Any], status: str, **update: Any) -> dict[str, Any]:
    rec = save_record(root, rec, status=status, **update)
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


def inflight_records(root: Path) -> Iterator[dict[str, Any]]:
    d = root / "inflight"
    if not d.is_dir():
        return
    for marker in d.iterdir():
        with contextlib.suppress(FactBoardError, OSError):
            yield read_submission(marker.name, root)
