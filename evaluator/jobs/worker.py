"""The worker: `python -m evaluator worker [--once] [--poll SECONDS] [--hub]`.

It takes jobs from the file queue (evaluator.jobs.queue), or with --hub from the results repo on
the Hub (evaluator/hub/queue.py), one at a time and runs the handler
registered for the job's kind. A handler is `handle(payload, report) -> dict`: `report(message,
progress)` records a progress message and a fraction in 0..1 (or None) on the job; the dict it
returns is stored as the job's result. The worker adds the job's id to the payload it passes (key
"job_id"), so a handler that writes a run can derive the run id from it (queue.run_id_for_job) and
stay idempotent when a job is run twice.

Handlers are entries of the HANDLERS registry (evaluator.core.registry); the built-in ones live in
modules imported only when a job of their kind arrives (KNOWN_HANDLERS), so the worker starts
without torch or an LLM SDK. Tests and deployments add kinds with
`register_handler(kind, fn)`, or with plugins named in $FACTBOARD_WORKER_PLUGINS
("package.module:function,..."; each function is called once at start and registers handlers).

Failures: a handler raising queue.TransientJobError is retried with exponential backoff up to the
job's max_attempts; any other exception fails the job for good, with its message. A job of an
unknown kind fails at once, naming the known kinds. While a handler runs, a heartbeat thread
renews the job's lease; a worker killed mid-job leaves a running job that the next worker (or
this one restarted) puts back in pending (queue.reap). The worker also finishes submissions that
a crashed app process had saved but not scored (submit.recover).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

from evaluator.core.errors import FactBoardError
from evaluator.core.registry import Registry
from evaluator.jobs import queue

Report = Callable[[str, float | None], None]
Handler = Callable[[dict[str, object], Report], Mapping[str, object] | None]

# the built-in job kinds and the modules whose handle(payload, report) runs them
KNOWN_HANDLERS: dict[str, str] = {
    "judge": "evaluator.jobs.judge",
    "detector-run": "evaluator.jobs.detector_run",
    "reproduce": "evaluator.jobs.reproduce_run",
}
BACKOFF_BASE = 5.0  # seconds; attempt n waits BACKOFF_BASE * 2**(n-1), at most BACKOFF_MAX
BACKOFF_MAX = 600.0
RECOVER_EVERY = 30.0  # seconds between scans for submissions a crashed app left unfinished


def handler_module(kind: str, module_name: str) -> Callable[[], Handler]:
    """A loader of `module_name`.handle, imported when the first job of `kind` runs."""

    def load() -> Handler:
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise FactBoardError(
                f"the handler module {module_name} for job kind {kind!r} cannot be imported: {e}"
            ) from None
        fn = getattr(module, "handle", None)
        if not callable(fn):
            raise FactBoardError(f"{module_name} has no handle(payload, report) function")
        return fn  # type: ignore[no-any-return]

    return load


def builtin_handlers() -> Registry[Handler]:
    """A registry holding only the built-in kinds (KNOWN_HANDLERS), each imported on first use."""
    reg: Registry[Handler] = Registry("job kind")
    for kind, module_name in KNOWN_HANDLERS.items():
        reg.add_lazy(kind, handler_module(kind, module_name))
    return reg


HANDLERS: Registry[Handler] = builtin_handlers()


def register_handler(kind: str, fn: Handler) -> None:
    """Run jobs of `kind` with `fn` (replaces the handler registered for that kind)."""
    queue.check_id(kind, "job kind")
    if not callable(fn):
        raise FactBoardError(f"the handler for job kind {kind!r} is not callable: {fn!r}")
    HANDLERS.add(kind, fn, replace=True)


def known_kinds() -> list[str]:
    return HANDLERS.names()


def resolve_handler(kind: str) -> Handler:
    """The handler for a job kind; UnknownNameError lists the known kinds."""
    return HANDLERS.get(kind)


def load_plugins(spec: str | None = None) -> list[str]:
    """Import "module:function" entries (comma-separated; default $FACTBOARD_WORKER_PLUGINS) and
    call each function; returns what was loaded."""
    spec = os.environ.get("FACTBOARD_WORKER_PLUGINS", "") if spec is None else spec
    loaded = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        module_name, sep, func = entry.partition(":")
        if not sep or not module_name or not func:
            raise FactBoardError(f"worker plugin {entry!r} is not of the form module:function")
        try:
            fn = getattr(importlib.import_module(module_name), func)
        except (ImportError, AttributeError) as e:
            raise FactBoardError(f"worker plugin {entry!r} cannot be loaded: {e}") from None
        fn()
        loaded.append(entry)
    return loaded


def backoff(attempt: int, base: float = BACKOFF_BASE) -> float:
    return float(min(BACKOFF_MAX, base * 2 ** max(0, attempt - 1)))


class _Heartbeat:
    """Renews a running job's lease from a background thread while its handler runs."""

    def __init__(self, job: queue.Job, root: Path | None, every: float):
        self.job, self.root, self.every = job, root, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{job.id}", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            with contextlib.suppress(OSError):
                queue.heartbeat(self.job, self.root)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def execute(
    job: queue.Job, root: Path | None = None, backoff_base: float = BACKOFF_BASE
) -> queue.Job:
    """Run one claimed job to its next state (done, failed, or pending for a retry)."""
    lock = threading.Lock()

    def report(message: str, progress: float | None = None) -> None:
        with lock:
            queue.report(job, message, progress, root)

    try:
        handler = resolve_handler(job.kind)
    except FactBoardError as e:
        queue.fail(job, str(e), root)
        return job
    every = max(0.05, min(10.0, queue.lease_seconds() / 4))
    try:
        with _Heartbeat(job, root, every):
            result = handler({**job.payload, "job_id": job.id}, report)
    except queue.TransientJobError as e:
        with lock:
            if job.attempts < job.max_attempts:
                queue.retry(job, str(e), backoff(job.attempts, backoff_base), root)
            else:
                queue.fail(job, f"gave up after {job.attempts} attempts: {e}", root)
        return job
    except Exception as e:  # a handler's bug or bad input: permanent, with its message
        tb = traceback.format_exception_only(type(e), e)[-1].strip()
        with lock:
            queue.fail(job, tb, root)
        return job
    if result is not None and not isinstance(result, dict):
        with lock:
            queue.fail(job, f"the handler returned {type(result).__name__}, not a dict", root)
        return job
    with lock:
        queue.complete(job, result or {}, root)
    return job


def run_worker(
    once: bool = False,
    poll: float = 2.0,
    root: Path | None = None,
    data_root: Path | None = None,
    stop: threading.Event | None = None,
    backoff_base: float = BACKOFF_BASE,
    log: Callable[[str], None] | None = None,
    recover_grace: float | None = None,
) -> int:
    """Take and run jobs until stopped (or, with once, until no job is ready). Returns the
    number of jobs run. Between jobs it puts back the jobs of dead workers (queue.reap) and
    finishes submissions left in flight for more than `recover_grace` seconds."""
    from evaluator.submissions import service as submit

    queue.lease_seconds()  # a bad FACTBOARD_QUEUE_LEASE stops the worker before it takes a job
    stop = stop or threading.Event()
    say = log or (lambda m: None)
    ident = queue.worker_identity()
    say(f"worker {ident['worker']} started; handlers: {', '.join(known_kinds())}")
    n = 0
    last_recover = 0.0
    while not stop.is_set():
        for j in queue.reap(root):
            say(f"job {j.id}: {j.last_message}")
        if time.monotonic() - last_recover > RECOVER_EVERY:
            last_recover = time.monotonic()
            grace = submit.RECOVER_GRACE_SECONDS if recover_grace is None else recover_grace
            for line in submit.recover(data_root, root, grace):
                say(line)
        job = queue.claim(ident, root)
        if job is None:
            if once:
                break
            stop.wait(poll)
            continue
        say(f"job {job.id} ({job.kind}) attempt {job.attempts} of {job.max_attempts}")
        execute(job, root, backoff_base)
        n += 1
        say(f"job {job.id}: {job.status}" + (f" ({job.error})" if job.error else ""))
    return n
