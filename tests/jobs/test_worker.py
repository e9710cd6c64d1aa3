"""The worker: handlers by kind, progress, retries with backoff, permanent failures, unknown
kinds, heartbeats, and a worker process killed with SIGKILL in the middle of a job."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaluator.core.errors import FactBoardError
from evaluator.jobs import queue, worker
from evaluator.store import layout, runs
from tests.support.submit import REPO, start_worker, wait_for, worker_env

Report = Callable[[str, float | None], None]


@pytest.fixture(autouse=True)
def clean_registry(tmp_data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "HANDLERS", worker.builtin_handlers())


def run_all(**kw: Any) -> int:
    return worker.run_worker(once=True, backoff_base=0.0, recover_grace=3600, **kw)


def test_a_job_runs_reports_progress_and_stores_its_result() -> None:
    seen: list[dict[str, Any]] = []

    def handle(payload: dict[str, Any], report: Report) -> dict[str, Any]:
        seen.append(payload)
        report("loading", 0.25)
        report("grading", 0.75)
        return {"graded": 3}

    worker.register_handler("test-ok", handle)
    job = queue.enqueue("test-ok", {"run_id": "r"})
    assert run_all() == 1
    assert seen == [{"run_id": "r", "job_id": job.id}]
    done = queue.get(job.id)
    assert done is not None and done.status == "done" and done.result == {"graded": 3}
    texts = [m["text"] for m in done.messages]
    assert texts[0] == "queued" and texts[-3:] == ["loading", "grading", "done"]
    assert texts[1].startswith("attempt 1 of 3 started by ")
    assert done.progress == 1.0


def test_transient_errors_are_retried_with_backoff() -> None:
    calls: list[int] = []

    def flaky(payload: dict[str, Any], report: Report) -> dict[str, Any]:
        calls.append(1)
        if len(calls) < 3:
            raise queue.TransientJobError(f"rate limited (call {len(calls)})")
        return {}

    worker.register_handler("test-flaky", flaky)
    job = queue.enqueue("test-flaky", {})
    claimed = queue.claim()
    assert claimed is not None
    before = time.time()
    worker.execute(claimed, backoff_base=5.0)
    waiting = queue.get(job.id)
    assert waiting is not None and waiting.status == "pending"
    assert waiting.not_before is not None and waiting.not_before >= before + 5.0
    assert (
        waiting.last_message == "attempt 1 of 3 failed (will retry in 5 s): rate limited (call 1)"
    )
    assert queue.claim() is None  # still backing off
    assert worker.backoff(1) == 5.0 and worker.backoff(2) == 10.0 and worker.backoff(3) == 20.0
    assert worker.backoff(20) == worker.BACKOFF_MAX
    again = queue.claim(now=time.time() + 6)
    assert again is not None
    worker.execute(again, backoff_base=0.0)
    assert run_all() == 1
    done = queue.get(job.id)
    assert done is not None and done.status == "done" and done.attempts == 3
    assert len(calls) == 3


def test_transient_errors_give_up_after_the_last_attempt() -> None:
    def always(payload: dict[str, Any], report: Report) -> dict[str, Any]:
        raise queue.TransientJobError("timeout")

    worker.register_handler("test-down", always)
    job = queue.enqueue("test-down", {}, max_attempts=2)
    assert run_all() == 2
    failed = queue.get(job.id)
    assert failed is not None and failed.status == "failed"
    assert failed.error == "gave up after 2 attempts: timeout"


def test_other_exceptions_fail_the_job_for_good_with_their_message() -> None:
    calls: list[int] = []

    def broken(payload: dict[str, Any], report: Report) -> dict[str, Any]:
        calls.append(1)
        raise ValueError(f"run {payload['run_id']!r} has no explanations")

    worker.register_handler("test-broken", broken)
    job = queue.enqueue("test-broken", {"run_id": "r9"})
    assert run_all() == 1
    failed = queue.get(job.id)
    assert failed is not None and failed.status == "failed" and failed.attempts == 1
    assert failed.error == "ValueError: run 'r9' has no explanations"
    assert len(calls) == 1


def test_a_handler_must_return_a_dict() -> None:
    worker.register_handler("test-list", lambda payload, report: [1, 2])  # type: ignore[arg-type,return-value]
    job = queue.enqueue("test-list", {})
    run_all()
    failed = queue.get(job.id)
    assert failed is not None and failed.error == "the handler returned list, not a dict"


def test_an_unknown_kind_fails_with_the_known_kinds() -> None:
    worker.register_handler("test-ok", lambda p, r: {})
    job = queue.enqueue("mystery", {})
    run_all()
    failed = queue.get(job.id)
    assert failed is not None and failed.status == "failed"
    assert (
        failed.error == "unknown job kind 'mystery'; known: detector-run, judge, reproduce, test-ok"
    )


def test_a_handler_module_that_cannot_be_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    worker.HANDLERS.add_lazy(
        "ghost", worker.handler_module("ghost", "evaluator.no_such_module_here")
    )
    job = queue.enqueue("ghost", {})
    run_all()
    failed = queue.get(job.id)
    assert failed is not None and failed.error == (
        "the handler module evaluator.no_such_module_here for job kind 'ghost' cannot be "
        "imported: No module named 'evaluator.no_such_module_here'"
    )


def test_handler_modules_are_imported_lazily() -> None:
    assert worker.KNOWN_HANDLERS == {
        "judge": "evaluator.jobs.judge",
        "detector-run": "evaluator.jobs.detector_run",
        "reproduce": "evaluator.jobs.reproduce_run",
    }
    heavy = ["torch", "transformers", "openai", "anthropic", *worker.KNOWN_HANDLERS.values()]
    code = (
        "import sys, evaluator.jobs.worker, evaluator.submissions.service, evaluator.jobs.queue\n"
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=worker_env(""),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_register_handler_checks_its_arguments() -> None:
    with pytest.raises(queue.QueueError, match="invalid job kind"):
        worker.register_handler("bad kind", lambda p, r: {})
    with pytest.raises(FactBoardError, match="is not callable"):
        worker.register_handler("k", "not a function")  # type: ignore[arg-type]


def test_heartbeats_keep_a_long_job_from_being_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOARD_QUEUE_LEASE", "2")
    release = threading.Event()
    started = threading.Event()

    def long(payload: dict[str, Any], report: Report) -> dict[str, Any]:
        started.set()
        release.wait(30)
        return {}

    worker.register_handler("test-long", long)
    job = queue.enqueue("test-long", {})
    claimed = queue.claim({"worker": "w:1", "host": "other-host", "pid": 1, "start": None})
    assert claimed is not None
    t = threading.Thread(target=worker.execute, args=(claimed,))
    t.start()
    started.wait(30)
    try:
        end = time.monotonic() + 4.5  # more than two lease periods
        while time.monotonic() < end:
            assert queue.reap(lease=2.0) == []
            time.sleep(0.2)
    finally:
        release.set()
        t.join()
    assert queue.get(job.id).status == "done"  # type: ignore[union-attr]


def test_the_worker_stops_when_asked() -> None:
    stop = threading.Event()
    t = threading.Thread(target=worker.run_worker, kwargs={"poll": 0.05, "stop": stop})
    t.start()
    worker.register_handler("test-ok", lambda p, r: {})
    job = queue.enqueue("test-ok", {})
    wait_for(lambda: queue.get(job.id).status == "done", 30, "the job")  # type: ignore[union-attr]
    stop.set()
    t.join(10)
    assert not t.is_alive()


# --------------------------------------------------------------------------------------------
# SIGKILL in the middle of a job


@pytest.mark.parametrize("write_first", [False, True], ids=["before-writing", "after-writing"])
def test_a_killed_worker_s_job_is_rerun_and_its_run_written_once(
    tmp_path: Path, write_first: bool
) -> None:
    d = tmp_path / "markers"
    d.mkdir()
    job = queue.enqueue("slow", {"dir": str(d), "model": "Slow model", "write_first": write_first})
    run_id = queue.run_id_for_job(job.id, "demo", "Slow model")
    proc = start_worker("tests.support.submit:register_slow")
    try:
        if write_first:
            wait_for(lambda: (d / "written").exists() or proc.poll() is not None, 120, "the run")
        else:
            wait_for(lambda: (d / "started").exists() or proc.poll() is not None, 120, "a start")
        assert proc.poll() is None
        running = queue.get(job.id)
        assert running is not None and running.status == "running"
        assert running.lease is not None and running.lease["pid"] == proc.pid
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    killed = queue.get(job.id)
    assert killed is not None and killed.status == "running"  # nobody finished it
    assert (layout.runs_dir() / run_id).exists() == write_first
    (d / "gate").touch()
    # restart: the job of the dead worker is put back and run again
    again = start_worker("tests.support.submit:register_slow", "--once")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    done = queue.get(job.id)
    assert done is not None and done.status == "done", err
    assert done.attempts == 2
    texts = [m["text"] for m in done.messages]
    assert any(t.endswith("is no longer running; requeued") for t in texts), texts
    assert (d / "started").read_text().count("\n") == 2  # it ran twice ...
    assert (d / "written").read_text().count("\n") == 1  # ... and wrote its run once
    mine = [
        r
        for r in runs.list_runs(include_hidden=True, include_superseded=True).runs
        if r.model.name == "Slow model"
    ]
    assert [r.run_id for r in mine] == [run_id]
    assert done.result == {"run_id": run_id}
