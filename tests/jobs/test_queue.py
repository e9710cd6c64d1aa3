"""The file queue: states moved by atomic renames, idempotent enqueue, leases, reaping, and the
idempotent-run helpers that handlers use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from evaluator import runner
from evaluator.jobs import queue
from evaluator.jobs.queue import QueueError
from evaluator.store import layout, runs
from tests.support.submit import REPO, toy_record, worker_env


@pytest.fixture
def qroot(tmp_data_root: Path) -> Path:
    return layout.submissions_root()


def files(state: str) -> list[str]:
    d = queue.queue_dir() / state
    return sorted(p.name for p in d.glob("*")) if d.is_dir() else []


def test_enqueue_claim_report_complete(qroot: Path) -> None:
    job = queue.enqueue("judge", {"run_id": "r1", "judge": "x:y", "protocol": "EvalV4"})
    assert job.status == "pending" and job.attempts == 0 and job.max_attempts == 3
    assert files("pending") == [f"{job.id}.json"]
    on_disk = json.loads((queue.queue_dir() / "pending" / f"{job.id}.json").read_text())
    assert on_disk["payload"] == {"run_id": "r1", "judge": "x:y", "protocol": "EvalV4"}
    assert on_disk["messages"][0]["text"] == "queued"
    claimed = queue.claim()
    assert claimed is not None and claimed.id == job.id
    assert claimed.status == "running" and claimed.attempts == 1
    assert claimed.lease is not None and claimed.lease["pid"] == os.getpid()
    assert files("pending") == [] and files("running") == [f"{job.id}.json"]
    assert queue.claim() is None
    assert queue.report(claimed, "halfway", 0.5)
    got = queue.get(job.id)
    assert got is not None and got.progress == 0.5 and got.last_message == "halfway"
    with pytest.raises(QueueError, match="progress must be between 0 and 1, got 1.5"):
        queue.report(claimed, None, 1.5)
    assert queue.complete(claimed, {"run_id": "r2"})
    done = queue.get(job.id)
    assert done is not None and done.status == "done" and done.result == {"run_id": "r2"}
    assert done.progress == 1.0 and done.lease is None
    assert [m["text"] for m in done.messages][-1] == "done"
    assert files("running") == [] and files("done") == [f"{job.id}.json"]
    assert files("tmp") == []
    assert queue.counts() == {"pending": 0, "running": 0, "done": 1, "failed": 0}


def test_enqueue_with_an_id_is_idempotent_in_every_state(qroot: Path) -> None:
    a = queue.enqueue("judge", {"n": 1}, job_id="judge-abc")
    b = queue.enqueue("judge", {"n": 2}, job_id="judge-abc")
    assert b.payload == {"n": 1} and files("pending") == ["judge-abc.json"]
    job = queue.claim()
    assert job is not None
    queue.complete(job, {})
    c = queue.enqueue("judge", {"n": 3}, job_id="judge-abc")
    assert c.status == "done" and files("pending") == []
    assert a.id == b.id == c.id


@pytest.mark.parametrize("bad", ["../evil", "", "a/b", ".hidden", "x" * 152, "sp ace"])
def test_job_ids_and_kinds_cannot_name_paths(qroot: Path, bad: str) -> None:
    with pytest.raises(QueueError) as e:
        queue.enqueue("judge", {}, job_id=bad)
    assert str(e.value) == (
        f"invalid job id {bad!r}: use 1-151 letters, digits, '.', '_' or '-', starting with a "
        "letter or a digit"
    )
    with pytest.raises(QueueError, match="invalid job kind"):
        queue.enqueue(bad, {})
    assert queue.counts()["pending"] == 0


@pytest.mark.parametrize(
    "payload,message",
    [
        ([1, 2], "a job payload must be a JSON object, got list"),
        (
            {"x": {1, 2}},
            "the payload of a 'judge' job is not JSON: Object of type set is not JSON serializable",
        ),
        (
            {"x": float("nan")},
            "the payload of a 'judge' job is not JSON: Out of range float values are not JSON "
            "compliant",
        ),
        ({"x": "y" * 70_000}, "the payload of a 'judge' job is 70,009 bytes; the limit is 64 KB"),
    ],
)
def test_bad_payloads(qroot: Path, payload: object, message: str) -> None:
    with pytest.raises(QueueError) as e:
        queue.enqueue("judge", payload)  # type: ignore[arg-type]
    assert str(e.value) == message


def test_claim_takes_the_oldest_ready_job(qroot: Path) -> None:
    first = queue.enqueue("k", {"i": 1})
    second = queue.enqueue("k", {"i": 2})
    j = queue.claim()
    assert j is not None and j.id == first.id
    queue.retry(j, "rate limited", delay=3600)
    waiting = queue.get(first.id)
    assert waiting is not None and waiting.status == "pending" and waiting.not_before is not None
    assert waiting.last_message == "attempt 1 of 3 failed (will retry in 3600 s): rate limited"
    j2 = queue.claim()
    assert j2 is not None and j2.id == second.id  # the first waits for its backoff
    assert queue.claim() is None
    j3 = queue.claim(now=time.time() + 3601)
    assert j3 is not None and j3.id == first.id and j3.attempts == 2


def test_threads_never_claim_the_same_job_twice(qroot: Path) -> None:
    ids = {queue.enqueue("k", {"i": i}).id for i in range(120)}
    claimed: list[str] = []
    lock = threading.Lock()

    def grab() -> None:
        while (job := queue.claim()) is not None:
            with lock:
                claimed.append(job.id)

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == sorted(ids)
    assert len(files("running")) == 120 and files("pending") == []


_CLAIMER = r"""
from evaluator.jobs import queue
out = []
while (job := queue.claim()) is not None:
    out.append(job.id)
print("\n".join(out))
"""


def test_processes_never_claim_the_same_job_twice(qroot: Path) -> None:
    ids = {queue.enqueue("k", {"i": i}).id for i in range(200)}
    env = worker_env("")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CLAIMER],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    claimed: list[str] = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        claimed += [x for x in out.split("\n") if x]
    assert sorted(claimed) == sorted(ids)


def test_fail_and_requeue(qroot: Path) -> None:
    job = queue.enqueue("k", {})
    j = queue.claim()
    assert j is not None
    assert queue.fail(j, "ValueError: bad payload")
    failed = queue.get(job.id)
    assert failed is not None and failed.status == "failed"
    assert failed.error == "ValueError: bad payload"
    assert failed.last_message == "failed: ValueError: bad payload"
    again = queue.requeue(job.id)
    assert again.status == "pending" and again.attempts == 0 and again.error is None
    with pytest.raises(QueueError, match="no failed job"):
        queue.requeue(job.id)


def test_list_jobs_by_status(qroot: Path) -> None:
    a = queue.enqueue("k", {"i": 1})
    queue.enqueue("k", {"i": 2})
    j = queue.claim()
    assert j is not None and j.id == a.id
    assert [x.status for x in queue.list_jobs()] == ["running", "pending"]
    assert [x.id for x in queue.list_jobs("running")] == [a.id]
    with pytest.raises(QueueError, match="unknown job status 'lost'; known: pending, running"):
        queue.list_jobs("lost")


def test_messages_are_capped(qroot: Path) -> None:
    queue.enqueue("k", {})
    j = queue.claim()
    assert j is not None
    for i in range(250):
        j.note(f"m{i}" + "x" * 3000)
    assert len(j.messages) == queue.MAX_MESSAGES
    assert j.messages[-1]["text"].startswith("m249") and len(j.messages[-1]["text"]) == 2000


# --------------------------------------------------------------------------------------------
# leases


def test_a_job_whose_heartbeat_stopped_goes_back_to_pending(qroot: Path) -> None:
    job = queue.enqueue("k", {})
    ident = {"worker": "elsewhere:1", "host": "another-host", "pid": 1, "start": "1"}
    j = queue.claim(ident)
    assert j is not None
    assert queue.reap(lease=60) == []  # fresh, on another host: nothing to say
    old = time.time() - 120
    os.utime(queue.queue_dir() / "running" / f"{job.id}.json", (old, old))
    [moved] = queue.reap(lease=60)
    assert moved.id == job.id and moved.status == "pending"
    assert moved.last_message.startswith("attempt 1 of 3 lost: no heartbeat from elsewhere:1 for")
    assert moved.last_message.endswith("s; requeued")
    assert files("pending") == [f"{job.id}.json"] and files("running") == []


def test_a_job_of_a_dead_local_worker_is_requeued_at_once(qroot: Path) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(gone.stdout)
    job = queue.enqueue("k", {})
    ident = {**queue.worker_identity(), "pid": pid, "worker": f"here:{pid}"}
    assert queue.claim(ident) is not None
    [moved] = queue.reap(lease=3600)
    assert moved.last_message == f"attempt 1 of 3 lost: here:{pid} is no longer running; requeued"
    # a live worker's job stays where it is
    j = queue.claim()
    assert j is not None and j.id == job.id and j.attempts == 2
    assert queue.reap(lease=3600) == []


def test_a_reused_pid_does_not_keep_a_dead_lease_alive(qroot: Path) -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to tell a process's start time")
    queue.enqueue("k", {})
    ident = {**queue.worker_identity(), "start": "1"}  # our pid, but another process start
    assert queue.claim(ident) is not None
    assert len(queue.reap(lease=3600)) == 1


def test_the_last_attempt_lost_fails_the_job(qroot: Path) -> None:
    job = queue.enqueue("k", {}, max_attempts=1)
    assert queue.claim({"worker": "w:1", "host": "h", "pid": 1, "start": None}) is not None
    old = time.time() - 500
    os.utime(queue.queue_dir() / "running" / f"{job.id}.json", (old, old))
    [moved] = queue.reap(lease=60)
    assert moved.status == "failed"
    assert moved.error is not None and moved.error.startswith(
        "the worker stopped during the last attempt (no heartbeat from w:1 for"
    )


def test_a_corrupt_pending_file_is_set_aside(qroot: Path) -> None:
    queue.enqueue("k", {"i": 1})
    (queue.queue_dir() / "pending" / "broken.json").write_text("{not json")
    j = queue.claim()
    assert j is not None and j.payload == {"i": 1}
    assert "broken.corrupt" in files("failed")
    assert (queue.queue_dir() / "failed" / "broken.corrupt.txt").read_text().startswith("job file ")


def test_lease_seconds_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOARD_QUEUE_LEASE", "2.5")
    assert queue.lease_seconds() == 2.5
    monkeypatch.setenv("FACTBOARD_QUEUE_LEASE", "soon")
    with pytest.raises(QueueError, match="FACTBOARD_QUEUE_LEASE='soon' is not a number"):
        queue.lease_seconds()
    monkeypatch.setenv("FACTBOARD_QUEUE_LEASE", "0")
    with pytest.raises(QueueError, match="must be positive"):
        queue.lease_seconds()


# --------------------------------------------------------------------------------------------
# idempotent runs


def test_run_id_for_job_is_stable_and_a_valid_run_id() -> None:
    a = queue.run_id_for_job("judge-20261122T010203-abcd", "summexecedit", "GPT-4o (zero-shot)")
    assert a == queue.run_id_for_job(
        "judge-20261122T010203-abcd", "summexecedit", "GPT-4o (zero-shot)"
    )
    assert a == "summexecedit-gpt-4o-zero-shot-job-judge-20261122T010203-abcd"
    long = queue.run_id_for_job("j" * 150, "demo", "m")
    assert len(long) < 120 and long != queue.run_id_for_job("j" * 149 + "k", "demo", "m")
    # the ids pass the run-id rule
    assert runs._RUN_ID.match(long) and runs._RUN_ID.match(a)


def test_write_run_once_writes_once_even_under_a_race(tmp_data_root: Path) -> None:
    preds = pd.DataFrame({"sample_id": ["a"], "label": [1]})
    rec = toy_record("demo-m-job-x", "m")
    results: list[bool] = []
    barrier = threading.Barrier(6)

    def go() -> None:
        barrier.wait()
        results.append(runner.write_run_once(rec, preds)[1])

    threads = [threading.Thread(target=go) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 5 + [True]
    assert [p.name for p in layout.runs_dir().iterdir()] == ["demo-m-job-x"]
    assert runner.write_run_once(rec, preds) == (layout.runs_dir() / "demo-m-job-x", False)
    leftovers = list(layout.staging_dir().iterdir()) if layout.staging_dir().exists() else []
    assert leftovers == []


def test_jobs_keep_their_creation_order_across_kinds(tmp_data_root: Path) -> None:
    """Quick successive enqueues of different kinds are listed and claimed first-in first-out
    (ids start with the kind, so a coarse timestamp would sort them by kind instead)."""
    made = [queue.enqueue(kind, {"n": i}) for i, kind in enumerate(["judge", "detector-run"] * 15)]
    assert [j.id for j in queue.list_jobs("pending")] == [j.id for j in made]
    claimed = [queue.claim() for _ in range(4)]
    assert [j.id for j in claimed if j] == [j.id for j in made[:4]]


def test_cancel_a_pending_job_and_refuse_a_running_one(qroot: Path) -> None:
    waiting = queue.enqueue("noop", {"n": 1}, root=qroot)
    busy = queue.enqueue("noop", {"n": 2}, root=qroot)
    cancelled = queue.cancel(waiting.id, root=qroot)
    assert cancelled.status == "failed" and cancelled.error == "cancelled by a maintainer"
    assert cancelled.messages[-1]["text"] == "cancelled by a maintainer"
    claimed = queue.claim(root=qroot)
    assert claimed is not None and claimed.id == busy.id  # the cancelled job is not run
    with pytest.raises(QueueError, match="is running: it cannot be cancelled now"):
        queue.cancel(busy.id, root=qroot)
    # a cancelled job can still be requeued by a maintainer
    assert queue.requeue(waiting.id, root=qroot).status == "pending"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("{", "is not valid JSON"),
        ('{"id": "x", "kind": "k", "payload": {}, "attempts": "1"}', "'attempts' has a wrong type"),
        ('{"id": "x", "kind": "k", "payload": {}, "messages": [1]}', "a message is not {at, text}"),
        ('{"id": "other", "kind": "k", "payload": {}}', "does not match the file name"),
        (b"\xff\xfe{", "is not valid JSON"),
    ],
)
def test_corrupt_job_files_are_listed_never_raised(
    qroot: Path, body: str | bytes, why: str
) -> None:
    queue.enqueue("noop", {}, job_id="fine", root=qroot)
    f = queue.queue_dir(qroot) / "done" / "x.json"
    f.write_bytes(body if isinstance(body, bytes) else body.encode())
    assert [j.id for j in queue.list_jobs(root=qroot)] == ["fine"]
    [(path, problem)] = queue.corrupt_files(qroot)
    assert path == f and why in problem


def test_a_stored_job_file_reads_and_writes_back_unchanged(qroot: Path) -> None:
    # a job file as the queue writes it (and as a Hub worker's lease leaves it, with its token
    # and renewal time): read and written again, it is the same bytes
    stored = {
        "id": "judge-1",
        "kind": "judge",
        "payload": {"run_id": "r1", "judge": "openai:gpt-4o", "options": {"k": 1}},
        "status": "running",
        "attempts": 1,
        "max_attempts": 3,
        "progress": 0.5,
        "messages": [{"at": "2026-01-01T00:00:00.000000+00:00", "text": "queued"}],
        "created_at": "2026-01-01T00:00:00.000000+00:00",
        "updated_at": "2026-01-01T00:00:01.000000+00:00",
        "not_before": None,
        "lease": {
            "worker": "h:1",
            "host": "h",
            "pid": 1,
            "start": "99",
            "claimed_at": "2026-01-01T00:00:00.500000+00:00",
            "token": "abc",
            "renewed": 1767225600.5,
        },
        "result": {"run_id": "r2", "graded": 3, "supersedes": None},
        "error": None,
    }
    queue._ensure(None)
    path = queue.queue_dir() / "running" / "judge-1.json"
    body = json.dumps(stored, indent=1)
    path.write_text(body, encoding="utf-8")
    job = queue.get("judge-1")
    assert job is not None and job.to_dict() == stored
    assert list(job.to_dict()) == list(stored)
    queue._write(None, "running", job)
    assert path.read_text(encoding="utf-8") == body
