"""The job queue over the Hub: claims by conditional commits (412 on a stale head), leases,
a worker killed mid-job, and an app publishing while a remote worker does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from evaluator.hub import sync
from evaluator.hub.client import HubClient
from evaluator.hub.queue import HubQueue
from evaluator.jobs import queue
from evaluator.store import runs
from tests.hub.conftest import REPO_ID, Replica, hub_env, repo_run_records
from tests.support.fake_hub import FakeHub
from tests.support.submit import REPO, TESTS, wait_for
from tests.support.testdata import add_run, build_demo_root

# huggingface_hub's LFS upload passes raw bytes the way httpx now deprecates
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


def repo_jobs(hub: FakeHub) -> dict[str, dict[str, Any]]:
    files = hub.repo(REPO_ID).files() or {}
    return {
        p.split("/")[1][:-5]: json.loads(v)
        for p, v in files.items()
        if p.startswith("queue/") and p.endswith(".json")
    }


def repo_runs(hub: FakeHub) -> dict[str, dict[str, Any]]:
    return repo_run_records(hub)


def enqueue_and_push(app: Replica, n: int, tmp: Path, gate: bool = True) -> list[str]:
    """n "slow" jobs queued on the app replica and published; their gate is open unless not."""
    tmp.mkdir(parents=True, exist_ok=True)
    if gate:
        (tmp / "gate").touch()
    ids = []
    for i in range(n):
        job = queue.enqueue(
            "slow",
            {"dir": str(tmp), "model": f"Worker model {i}"},
            job_id=f"slow-{tmp.name}-{i}",
            root=app.subs,
        )
        ids.append(job.id)
    sync.push(HubClient.from_env(), app.data, app.subs)
    return ids


def worker_env(
    hub: FakeHub, w: Replica, plugin: str = "register_slow", lease: float = 30.0
) -> dict[str, str]:
    """A GPU box's worker: its own data and submissions roots, the test handlers loaded."""
    env = hub_env(hub)
    env.update(w.env())
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS), env.get("PYTHONPATH", "")])
    env["FACTBOARD_WORKER_PLUGINS"] = f"tests.support.submit:{plugin}"
    env["FACTBOARD_HUB_LEASE"] = str(lease)
    env["HF_HOME"] = str(w.data.parent / "hf_home")
    return env


def start_hub_worker(
    hub: FakeHub, w: Replica, *args: str, lease: float = 30.0
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evaluator", "worker", "--hub", "--poll", "0.1", *args],
        cwd=REPO,
        env=worker_env(hub, w, lease=lease),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_two_workers_race_for_one_job_and_exactly_one_runs_it(
    fake_hub: FakeHub, replica, tmp_path: Path
) -> None:
    app = replica("app")
    (job_id,) = enqueue_and_push(app, 1, tmp_path / "marks")
    client = HubClient.from_env()
    hq_a, hq_b = HubQueue(client), HubQueue(client)

    # both read the same head before either commits: the second commit must get a 412
    barrier = threading.Barrier(2, timeout=20)
    real_commit = client.commit
    first: set[str] = set()

    def commit_after_both_read(*a: Any, **k: Any) -> str:
        name = threading.current_thread().name
        if name not in first:
            first.add(name)
            barrier.wait()
        return real_commit(*a, **k)

    client.commit = commit_after_both_read  # type: ignore[method-assign]
    results: dict[str, Any] = {}

    def go(name: str, hq: HubQueue) -> None:
        results[name] = hq.claim({"worker": name, "host": "test", "pid": 0})

    threads = [
        threading.Thread(target=go, args=(n, q), name=n) for n, q in (("A", hq_a), ("B", hq_b))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    claimed = [n for n, r in results.items() if r is not None]
    assert len(claimed) == 1, results
    assert fake_hub.count("POST", "/commit/", 412) >= 1
    job = repo_jobs(fake_hub)[job_id]
    assert job["status"] == "running" and job["attempts"] == 1
    assert job["lease"]["worker"] == claimed[0]


def test_a_hub_worker_runs_a_queued_job_and_the_app_sees_it(
    fake_hub: FakeHub, replica, tmp_path: Path
) -> None:
    app, w = replica("app"), replica("gpu")
    (job_id,) = enqueue_and_push(app, 1, tmp_path / "marks")
    assert repo_jobs(fake_hub)[job_id]["status"] == "pending"
    p = start_hub_worker(fake_hub, w, "--once")
    out, err = p.communicate(timeout=90)
    assert p.returncode == 0, err
    job = repo_jobs(fake_hub)[job_id]
    assert job["status"] == "done", err
    rid = job["result"]["run_id"]
    assert rid in repo_runs(fake_hub)
    assert "hf_" not in err  # no token in the worker's log
    # the app pulls: the run is on its board and the job shows as done on its Queue page
    sync.pull(HubClient.from_env(), app.data, app.subs)
    assert (app.data / "runs" / rid / "run.json").is_file()
    assert queue.get(job_id, app.subs).status == "done"


def test_a_worker_killed_mid_job_loses_its_lease_and_the_job_runs_once_more(
    fake_hub: FakeHub, replica, tmp_path: Path
) -> None:
    app, w1, w2 = replica("app"), replica("gpu1"), replica("gpu2")
    marks = tmp_path / "marks"
    (job_id,) = enqueue_and_push(app, 1, marks, gate=False)
    p1 = start_hub_worker(fake_hub, w1, lease=1.5)
    try:
        wait_for(lambda: (marks / "started").exists(), 60, "the first worker to start the job")
        assert repo_jobs(fake_hub)[job_id]["status"] == "running"
    finally:
        os.killpg(p1.pid, signal.SIGKILL)
        p1.communicate(timeout=30)
    (marks / "gate").touch()
    p2 = start_hub_worker(fake_hub, w2, lease=1.5)
    try:
        wait_for(lambda: repo_jobs(fake_hub)[job_id]["status"] == "done", 60, "the rerun")
    finally:
        p2.send_signal(signal.SIGTERM)
        _, err2 = p2.communicate(timeout=30)
    job = repo_jobs(fake_hub)[job_id]
    assert job["attempts"] == 2
    assert any("lease" in m["text"] and "expired" in m["text"] for m in job["messages"])
    assert len((marks / "started").read_text().split()) == 2
    assert len((marks / "written").read_text().split()) == 1
    made = [r for r, rec in repo_runs(fake_hub).items() if rec["model"]["name"] == "Worker model 0"]
    assert made == [job["result"]["run_id"]]


def test_the_app_and_a_remote_worker_publish_concurrently_without_losing_a_run(
    fake_hub: FakeHub, replica, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, w = replica("app"), replica("gpu")
    build_demo_root(app.data, reported=False)
    client = HubClient.from_env()
    sync.push(client, app.data, app.subs, demo=True)
    job_ids = enqueue_and_push(app, 4, tmp_path / "marks")
    worker = start_hub_worker(fake_hub, w)
    made = []
    try:
        for i in range(4):  # the app keeps publishing while the worker claims and publishes
            made.append(add_run(app.data, "demo", f"App model {i}", seed=i).name)
            sync.push(client, app.data, app.subs)
        wait_for(
            lambda: all(repo_jobs(fake_hub)[j]["status"] == "done" for j in job_ids),
            90,
            "the worker to finish every job",
        )
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.communicate(timeout=30)
    published = repo_runs(fake_hub)
    assert set(made) <= set(published)
    from_jobs = [r for r in published.values() if r["model"]["name"].startswith("Worker model")]
    assert sorted(r["model"]["name"] for r in from_jobs) == [f"Worker model {i}" for i in range(4)]
    assert all(repo_jobs(fake_hub)[j]["attempts"] == 1 for j in job_ids)
    # a replica that boots now has every run, once
    fresh = replica("fresh")
    sync.pull(client, fresh.data, fresh.subs)
    local = {r.run_id for r in runs.list_runs(fresh.data, include_superseded=True).runs}
    assert local == set(published)


def test_a_judge_job_queued_by_a_submission_on_the_space_is_graded_by_a_remote_worker(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.submissions import service
    from tests.support.submit import predictions_csv

    space, gpu = replica("space"), replica("gpu")
    build_demo_root(space.data, reported=False)
    client = HubClient.from_env()
    sync.push(client, space.data, space.subs, demo=True)
    monkeypatch.setenv("FACTBOARD_DATA", str(space.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(space.subs))
    monkeypatch.setenv("FACTBOARD_JUDGE", "openai:gpt-4o-mini")
    res = service.submit(
        predictions_csv(3, explanation="The summary adds a date."),
        "preds.csv",
        service.SubmissionMeta(benchmark="demo", model_name="Explained model"),
        data_root=space.data,
        submissions_root=space.subs,
        resamples=50,
    )
    assert res.ok and res.job_id == f"judge-{res.submission_id}"
    sync.push(client, space.data, space.subs)  # what the Space's background sync does

    p = subprocess.run(
        [sys.executable, "-m", "evaluator", "worker", "--hub", "--once"],
        cwd=REPO,
        env=worker_env(fake_hub, gpu, "register_judge"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    job = repo_jobs(fake_hub)[res.job_id]
    assert job["status"] == "done", p.stderr
    graded = job["result"]["run_id"]
    assert repo_runs(fake_hub)[graded]["supersedes"] == res.run_id

    sync.pull(client, space.data, space.subs)
    board = {r.run_id for r in runs.list_runs(space.data).runs}
    assert graded in board and res.run_id not in board  # the graded copy replaces it
    assert queue.get(res.job_id, space.subs).status == "done"
