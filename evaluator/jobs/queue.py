"""A file-based job queue: submissions/queue/{pending,running,done,failed}/<job_id>.json.

A job is one JSON file that moves between the four state folders by `os.rename`, which is atomic
on one filesystem: two workers can never both claim a job (the second rename fails), and a reader
never sees a half-written job (every write goes to queue/tmp/ first and is renamed into place).
No lock is held by anyone, so the app (which enqueues) and any number of workers run side by side.

A running job carries a lease: the worker's host, pid and process start time, renewed by touching
the job file (its mtime is the heartbeat). A job whose worker died (SIGKILL, power loss) goes back
to pending when its lease expires, or at once when the worker was on this host and its process is
gone; `reap()` does that, and every worker calls it on start and between jobs. A job is therefore
run at least once, sometimes twice: handlers must be idempotent. `run_id_for_job` and
evaluator.runner.write_run_once make that easy for a handler that writes a run (the run id is a
function of the job id, and a run that already exists is not written again).

A corrupt job file (not JSON, wrong fields) never stops the queue: a pending or running one is
moved to failed/ under a `.corrupt` name with a note of what is wrong (`claim`, `reap`), one in
done/ or failed/ is left where it is and skipped by `list_jobs`; `corrupt_files()` lists them
all (for `python -m evaluator doctor` and the Queue page's problems panel). A maintainer can
`requeue` a failed job (fresh attempts) or `cancel` a pending or failed one.

Job record fields: id, kind, payload, status, attempts, max_attempts, progress (0..1 or null),
messages ([{at, text}], newest last), created_at, updated_at, not_before (epoch seconds; a retry
waits until then), lease, result (the handler's return value), error (why it failed).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import socket
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from evaluator.core import formatting as F
from evaluator.core.errors import FactBoardError
from evaluator.core.sanitize import dumps_strict
from evaluator.store import layout, runs

STATES: tuple[str, ...] = ("pending", "running", "done", "failed")
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_LEASE_SECONDS = 60.0
MAX_MESSAGES = 200
MAX_MESSAGE_CHARS = 2000
MAX_PAYLOAD_BYTES = 64 * 1024
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$")


class QueueError(FactBoardError):
    """A bad job id, kind or payload, or an unreadable job file."""


class TransientJobError(FactBoardError):
    """Raised by a job handler for a failure worth retrying (rate limit, timeout, network)."""


def env_seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment variable `name` (unset or empty:
    `default`); anything else is a QueueError naming the variable."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise QueueError(f"{name}={raw!r} is not a number of seconds") from None
    if not value > 0:
        raise QueueError(f"{name}={raw!r} must be positive")
    return value


def lease_seconds() -> float:
    """How long a running job's heartbeat may be silent before the job is given to another
    worker ($FACTBOARD_QUEUE_LEASE, default 60 s)."""
    return env_seconds("FACTBOARD_QUEUE_LEASE", DEFAULT_LEASE_SECONDS)


def _now_iso() -> str:
    # microseconds: jobs sort by creation (FIFO); two enqueues never share a timestamp
    return datetime.now(UTC).isoformat(timespec="microseconds")


class WorkerIdentity(TypedDict):
    """Who runs a job: host:pid, and the process's start time (a reused pid is another)."""

    worker: str
    host: str
    pid: int
    start: str | None


class Lease(TypedDict):
    """A running job's lease: its worker's identity and when it was claimed; a job on the Hub
    also carries the claim's token and when the lease was last renewed (evaluator/hub/queue.py).
    A job file's lease is read as it is: every key is looked up with .get()."""

    worker: NotRequired[str]
    host: NotRequired[str]
    pid: NotRequired[int]
    start: NotRequired[str | None]
    claimed_at: NotRequired[str]
    token: NotRequired[str]
    renewed: NotRequired[float]


@dataclass
class Job:
    id: str
    kind: str
    # a JSON object whose fields each kind defines and checks (its module's check_payload)
    payload: dict[str, object]
    status: str = "pending"
    attempts: int = 0
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    progress: float | None = None
    messages: list[dict[str, str]] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""
    not_before: float | None = None
    lease: Lease | None = None
    result: dict[str, object] | None = None  # the handler's JSON object
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object, where: str) -> Job:
        if not isinstance(data, dict):
            raise QueueError(f"job file {where}: not a JSON object")
        known = set(cls.__dataclass_fields__)
        missing = [k for k in ("id", "kind", "payload") if k not in data]
        if missing:
            raise QueueError(f"job file {where}: field {missing[0]!r} is missing")
        extra = sorted(set(data) - known)
        if extra:
            raise QueueError(f"job file {where}: unknown field {extra[0]!r}")
        if not isinstance(data["payload"], dict):
            raise QueueError(f"job file {where}: payload is not an object")
        for key, typ in _FIELD_TYPES.items():
            if key not in data:
                continue  # the default
            v = data[key]
            if v is None and key not in ("id", "kind", "attempts", "max_attempts", "messages"):
                continue
            if not isinstance(v, typ) or (isinstance(v, bool) and typ is not bool):
                raise QueueError(f"job file {where}: field {key!r} has a wrong type")
        if not all(
            isinstance(m, dict) and isinstance(m.get("at"), str) and isinstance(m.get("text"), str)
            for m in data.get("messages", [])
        ):
            raise QueueError(f"job file {where}: a message is not {{at, text}}")
        return cls(**data)

    def note(self, text: str) -> None:
        self.messages.append({"at": _now_iso(), "text": str(text)[:MAX_MESSAGE_CHARS]})
        del self.messages[:-MAX_MESSAGES]

    @property
    def last_message(self) -> str:
        return self.messages[-1]["text"] if self.messages else ""


# the type of each field in a job file (checked on reading: a wrong type is a corrupt file)
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "kind": str,
    "status": str,
    "attempts": int,
    "max_attempts": int,
    "progress": (int, float),
    "messages": list,
    "created_at": str,
    "updated_at": str,
    "not_before": (int, float),
    "lease": dict,
    "result": dict,
    "error": str,
}


# --------------------------------------------------------------------------------------------
# files


def queue_dir(root: Path | None = None) -> Path:
    """submissions/queue/ (root: the submissions root, default $FACTBOARD_SUBMISSIONS)."""
    return (root or layout.submissions_root()) / "queue"


def _ensure(root: Path | None) -> Path:
    q = queue_dir(root)
    for d in (*STATES, "tmp"):
        (q / d).mkdir(parents=True, exist_ok=True)
    return q


def _path(root: Path | None, state: str, job_id: str) -> Path:
    return queue_dir(root) / state / f"{job_id}.json"


def check_id(job_id: str, what: str = "job id") -> str:
    if not isinstance(job_id, str) or not _ID.match(job_id):
        raise QueueError(
            f"invalid {what} {job_id!r}: use 1-151 letters, digits, '.', '_' or '-', "
            "starting with a letter or a digit"
        )
    return job_id


def _tmp_write(root: Path | None, job: Job) -> Path:
    tmp = queue_dir(root) / "tmp" / f"{job.id}.{secrets.token_hex(4)}.json"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(dumps_strict(job.to_dict(), indent=1))
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


def _write(root: Path | None, state: str, job: Job) -> None:
    """Replace the job's file in `state` atomically."""
    tmp = _tmp_write(root, job)
    try:
        os.replace(tmp, _path(root, state, job.id))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read(path: Path) -> Job:
    """The job in a file; QueueError when the file is not a valid job (FileNotFoundError when it
    moved on)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise QueueError(f"job file {path} is not valid JSON ({e})") from None
    job = Job.from_dict(data, str(path))
    if job.id != path.stem:
        raise QueueError(f"job file {path}: its id {job.id!r} does not match the file name")
    return job


def _move(root: Path | None, job: Job, src: str, dst: str) -> bool:
    """Write the job's new content in `src`, then rename it to `dst`. False when the job is no
    longer in `src` (another process moved it first)."""
    path = _path(root, src, job.id)
    if not path.exists():
        return False
    job.status = dst
    job.updated_at = _now_iso()
    _write(root, src, job)
    try:
        os.rename(path, _path(root, dst, job.id))
    except FileNotFoundError:
        return False
    return True


# --------------------------------------------------------------------------------------------
# the API


def enqueue(
    kind: str,
    payload: Mapping[str, object],
    *,
    job_id: str | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    root: Path | None = None,
) -> Job:
    """Add a job to pending/ and return it.

    With an explicit job_id the call is idempotent: when a job with that id exists in any state,
    it is returned unchanged and nothing is added."""
    check_id(kind, "job kind")
    if not isinstance(payload, dict):
        raise QueueError(f"a job payload must be a JSON object, got {type(payload).__name__}")
    try:
        body = json.dumps(payload, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise QueueError(f"the payload of a {kind!r} job is not JSON: {e}") from None
    if len(body) > MAX_PAYLOAD_BYTES:
        raise QueueError(
            f"the payload of a {kind!r} job is {F.count(len(body))} bytes; the limit is 64 KB"
        )
    if max_attempts < 1:
        raise QueueError(f"max_attempts must be at least 1, got {max_attempts}")
    _ensure(root)
    if job_id is None:
        job_id = f"{kind}-{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{secrets.token_hex(3)}"
    check_id(job_id)
    existing = get(job_id, root)
    if existing is not None:
        return existing
    now = _now_iso()
    job = Job(
        id=job_id,
        kind=kind,
        payload=json.loads(body),
        max_attempts=max_attempts,
        created_at=now,
        updated_at=now,
    )
    job.note("queued")
    tmp = _tmp_write(root, job)
    target = _path(root, "pending", job_id)
    try:
        os.link(tmp, target)  # fails if the id was taken meanwhile: never overwrites a job
    except FileExistsError:
        found = get(job_id, root)
        if found is None:
            raise QueueError(f"job {job_id!r} appeared and vanished while enqueueing") from None
        return found
    finally:
        tmp.unlink(missing_ok=True)
    return job


def get(job_id: str, root: Path | None = None) -> Job | None:
    """The job with this id, in whatever state it is, or None."""
    check_id(job_id)
    for state in STATES:
        p = _path(root, state, job_id)
        try:
            return _read(p)
        except FileNotFoundError:
            continue
    return None


def list_jobs(status: str | None = None, root: Path | None = None) -> list[Job]:
    """Jobs in one state (or all), oldest first. Corrupt job files are skipped (see
    `corrupt_files`)."""
    if status is not None and status not in STATES:
        raise QueueError(f"unknown job status {status!r}; known: {', '.join(STATES)}")
    out: list[Job] = []
    for state in [status] if status else STATES:
        d = queue_dir(root) / state
        if not d.is_dir():
            continue
        for p in d.glob("*.json"):
            try:
                out.append(_read(p))
            except (FileNotFoundError, QueueError):  # moved on while we listed; corrupt
                continue
    out.sort(key=lambda j: (j.created_at, j.id))
    return out


def corrupt_files(root: Path | None = None) -> list[tuple[Path, str]]:
    """Every job file that is not a valid job, with what is wrong: unreadable files in any state,
    and the files quarantined under failed/*.corrupt (with the note written beside them)."""
    q = queue_dir(root)
    out: list[tuple[Path, str]] = []
    for state in STATES:
        d = q / state
        if not d.is_dir():
            continue
        for p in sorted(d.glob("*.json")):
            try:
                _read(p)
            except FileNotFoundError:
                continue
            except QueueError as e:
                out.append((p, str(e)))
    failed = q / "failed"
    if failed.is_dir():
        for p in sorted(failed.glob("*.corrupt")):
            note = p.with_name(p.name + ".txt")
            try:
                why = note.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                why = "unreadable job file"
            out.append((p, f"quarantined: {why[:MAX_MESSAGE_CHARS]}"))
    return out


def counts(root: Path | None = None) -> dict[str, int]:
    q = queue_dir(root)
    return {s: len(list((q / s).glob("*.json"))) if (q / s).is_dir() else 0 for s in STATES}


def worker_identity() -> WorkerIdentity:
    pid = os.getpid()
    return {
        "worker": f"{socket.gethostname()}:{pid}",
        "host": socket.gethostname(),
        "pid": pid,
        "start": _process_start(pid),
    }


def claim(
    identity: WorkerIdentity | None = None, root: Path | None = None, now: float | None = None
) -> Job | None:
    """Take the oldest ready pending job into running/ (with this worker's lease), or None."""
    q = _ensure(root)
    now = time.time() if now is None else now
    ready: list[Job] = []
    for p in (q / "pending").glob("*.json"):
        try:
            job = _read(p)
        except FileNotFoundError:
            continue
        except QueueError as e:
            _quarantine(root, p, str(e))
            continue
        if job.not_before is None or job.not_before <= now:
            ready.append(job)
    ready.sort(key=lambda j: (j.created_at, j.id))
    ident = identity or worker_identity()
    for job in ready:
        src = _path(root, "pending", job.id)
        try:
            os.utime(src)  # a fresh mtime travels with the rename: the lease starts now
            os.rename(src, _path(root, "running", job.id))
        except FileNotFoundError:
            continue  # another worker took it
        job = _read(_path(root, "running", job.id))
        job.status = "running"
        job.attempts += 1
        job.not_before = None
        job.lease = {**ident, "claimed_at": _now_iso()}
        job.updated_at = _now_iso()
        job.note(f"attempt {job.attempts} of {job.max_attempts} started by {ident['worker']}")
        _write(root, "running", job)
        return job
    return None


def _quarantine(root: Path | None, path: Path, problem: str) -> None:
    """An unreadable pending or running file goes to failed/ under a .corrupt name, so the queue
    moves on."""
    with contextlib.suppress(FileNotFoundError):
        os.rename(path, queue_dir(root) / "failed" / f"{path.stem}.corrupt")
        (queue_dir(root) / "failed" / f"{path.stem}.corrupt.txt").write_text(problem + "\n")


def heartbeat(job: Job, root: Path | None = None) -> bool:
    """Renew the lease of a running job; False when it is no longer in running/."""
    try:
        os.utime(_path(root, "running", job.id))
    except FileNotFoundError:
        return False
    return True


def report(
    job: Job, message: str | None = None, progress: float | None = None, root: Path | None = None
) -> bool:
    """Record a progress message and/or fraction (0..1) on a running job (renews its lease)."""
    if progress is not None:
        if not 0.0 <= progress <= 1.0:
            raise QueueError(f"progress must be between 0 and 1, got {progress!r}")
        job.progress = float(progress)
    if message:
        job.note(message)
    job.updated_at = _now_iso()
    if not _path(root, "running", job.id).exists():
        return False
    _write(root, "running", job)
    return True


def complete(job: Job, result: Mapping[str, object] | None, root: Path | None = None) -> bool:
    job.result = None if result is None else dict(result)
    job.progress = 1.0
    job.error = None
    job.lease = None
    job.note("done")
    return _move(root, job, "running", "done")


def fail(job: Job, error: str, root: Path | None = None) -> bool:
    """A permanent failure: the job goes to failed/ with its error message."""
    job.error = str(error)[:MAX_MESSAGE_CHARS]
    job.lease = None
    job.note(f"failed: {job.error}")
    return _move(root, job, "running", "failed")


def retry(job: Job, error: str, delay: float, root: Path | None = None) -> bool:
    """A transient failure: back to pending/, not to be claimed again before `delay` seconds."""
    job.error = str(error)[:MAX_MESSAGE_CHARS]
    job.lease = None
    job.not_before = time.time() + max(0.0, delay)
    job.note(
        f"attempt {job.attempts} of {job.max_attempts} failed (will retry in {delay:.0f} s): "
        f"{job.error}"
    )
    return _move(root, job, "running", "pending")


def requeue(job_id: str, root: Path | None = None) -> Job:
    """Put a failed job back in pending/ with a fresh set of attempts (a maintainer's action)."""
    p = _path(root, "failed", check_id(job_id))
    if not p.exists():
        raise QueueError(f"no failed job {job_id!r}")
    job = _read(p)
    job.attempts = 0
    job.not_before = None
    job.error = None
    job.note("requeued by a maintainer")
    if not _move(root, job, "failed", "pending"):
        raise QueueError(f"job {job_id!r} left failed/ while being requeued")
    return job


def cancel(job_id: str, root: Path | None = None) -> Job:
    """Stop a pending job, or close a failed one for good (a maintainer's action): the job ends
    in failed/ marked cancelled, with no attempts left, so nothing runs it again unless it is
    requeued. A running job cannot be cancelled (its worker holds it)."""
    check_id(job_id)
    with contextlib.suppress(FileNotFoundError):
        # take it out of pending/ first (atomic): a worker claiming it now finds nothing
        os.rename(_path(root, "pending", job_id), _path(root, "failed", job_id))
    try:
        job = _read(_path(root, "failed", job_id))
    except FileNotFoundError:
        job = None
    if job is not None:
        job.status = "failed"
        job.error = "cancelled by a maintainer"
        job.not_before = None
        job.lease = None
        job.attempts = max(job.attempts, job.max_attempts)
        job.note("cancelled by a maintainer")
        job.updated_at = _now_iso()
        _write(root, "failed", job)
        return job
    if _path(root, "running", job_id).exists():
        raise QueueError(f"job {job_id!r} is running: it cannot be cancelled now")
    raise QueueError(f"no pending or failed job {job_id!r}")


def reap(
    root: Path | None = None, now: float | None = None, lease: float | None = None
) -> list[Job]:
    """Running jobs whose worker is gone go back to pending (or to failed when their attempts are
    used up). A worker is gone when the lease expired (no heartbeat for `lease` seconds) or when
    it ran on this host and its process no longer exists."""
    q = queue_dir(root)
    if not (q / "running").is_dir():
        return []
    now = time.time() if now is None else now
    lease = lease_seconds() if lease is None else lease
    moved: list[Job] = []
    for p in (q / "running").glob("*.json"):
        try:
            age = now - p.stat().st_mtime
            job = _read(p)
        except FileNotFoundError:
            continue
        except QueueError as e:
            _quarantine(root, p, str(e))
            continue
        who = (job.lease or {}).get("worker", "an unknown worker")
        if age > lease:
            why = f"no heartbeat from {who} for {age:.0f} s"
        elif job.lease and not _lease_alive(job.lease):
            why = f"{who} is no longer running"
        else:
            continue
        job.lease = None
        if job.attempts >= job.max_attempts:
            job.error = f"the worker stopped during the last attempt ({why})"
            job.note(f"attempt {job.attempts} of {job.max_attempts} lost: {why}; giving up")
            dst = "failed"
        else:
            job.note(f"attempt {job.attempts} of {job.max_attempts} lost: {why}; requeued")
            dst = "pending"
        if _move(root, job, "running", dst):
            moved.append(job)
    return moved


# --------------------------------------------------------------------------------------------
# process liveness


def _process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux /proc), None if unknown/dead."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    if not fields or fields[0] in ("Z", "X"):  # a zombie has exited
        return None
    return fields[19] if len(fields) > 19 else None


def _lease_alive(lease: Lease) -> bool:
    if lease.get("host") != socket.gethostname():
        return True  # another machine: only the lease expiry can tell
    pid = lease.get("pid")
    if not isinstance(pid, int):
        return True
    if Path("/proc/self/stat").exists():
        start = _process_start(pid)
        return start is not None and (lease.get("start") in (None, start))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --------------------------------------------------------------------------------------------
# idempotent runs for handlers


def check_payload(
    kind: str,
    payload: Any,
    fields: dict[str, type],
    required: tuple[str, ...],
    error: type[FactBoardError] = FactBoardError,
) -> dict[str, object]:
    """A job payload's fields, type-checked against `fields`; every problem named."""
    if not isinstance(payload, dict):
        raise error(f"{kind} payload must be an object, got {type(payload).__name__}")
    unknown = sorted(set(payload) - set(fields))
    if unknown:
        raise error(
            f"{kind} payload: unknown field(s) {', '.join(unknown)}; known: {', '.join(fields)}"
        )
    for key in required:
        if not payload.get(key):
            raise error(f"{kind} payload: missing {key!r}")
    out: dict[str, object] = {}
    for key, typ in fields.items():
        v = payload.get(key)
        if v is None:
            continue
        if typ is int and (isinstance(v, bool) or not isinstance(v, int)):
            raise error(f"{kind} payload: {key}={v!r} is not an integer")
        if typ is not int and not isinstance(v, typ):
            raise error(f"{kind} payload: {key}={v!r} is not a {typ.__name__}")
        out[key] = v
    return out


def run_id_for_job(job_id: str, benchmark: str, model_name: str) -> str:
    """The id of the run a job writes: a function of the job id, so that a job run twice (its
    worker died after writing) finds its run instead of writing a second one."""
    check_id(job_id)
    tail = re.sub(r"[^A-Za-z0-9._-]", "-", job_id)
    if len(tail) > 48:
        tail = tail[:32] + "-" + hashlib.sha256(job_id.encode()).hexdigest()[:12]
    return f"{runs.slug(benchmark, 30)}-{runs.slug(model_name, 40)}-job-{tail}"
