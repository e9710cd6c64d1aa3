"""Hosted jobs: a maintainer's cancel on a replica is published, not undone by the next sync, and a
Hub worker does not run the cancelled job; a cancel that meets a claim loses to it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.hub import sync
from evaluator.hub.client import HubClient
from evaluator.hub.queue import HubQueue, run_hub_worker
from evaluator.jobs import queue
from tests.hub.conftest import REPO_ID
from tests.support.fake_hub import FakeHub
from tests.support.testdata import build_demo_root

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


def repo_job(hub: FakeHub, job_id: str) -> dict[str, Any]:
    return json.loads((hub.repo(REPO_ID).files() or {})[f"queue/{job_id}.json"])


def queued(hub: FakeHub, app, tmp: Path, name: str) -> tuple[HubClient, str]:
    """A job queued on the app replica, published, and mirrored back as the repo has it."""
    build_demo_root(app.data, reported=False)
    job = queue.enqueue("slow", {"dir": str(tmp), "model": name}, job_id=name, root=app.subs)
    client = HubClient.from_env()
    sync.push(client, app.data, app.subs)
    sync.pull(client, app.data, app.subs)  # the app mirrors the repo's copy
    assert repo_job(hub, job.id)["status"] == "pending"
    return client, job.id


def test_a_maintainers_cancel_is_published_and_no_worker_runs_the_job(
    fake_hub: FakeHub, replica, tmp_path: Path
) -> None:
    app, gpu = replica("app"), replica("gpu")
    client, jid = queued(fake_hub, app, tmp_path, "cancel-me")
    queue.cancel(jid, app.subs)
    sync.sync(client, app.data, app.subs)
    assert repo_job(fake_hub, jid)["status"] == "failed"
    assert "cancelled by a maintainer" in repo_job(fake_hub, jid)["error"]
    sync.sync(client, app.data, app.subs)  # the next sync does not undo it
    local = queue.get(jid, app.subs)
    assert local is not None and local.status == "failed"
    ran = run_hub_worker(client, once=True, data_root=gpu.data, sub_root=gpu.subs)
    assert ran == 0
    assert repo_job(fake_hub, jid)["status"] == "failed"
    plan = sync.status(client, app.data, app.subs)
    assert plan.pull_jobs == [] and plan.push_jobs == []


def test_a_cancel_that_meets_a_workers_claim_loses_to_it(
    fake_hub: FakeHub, replica, tmp_path: Path
) -> None:
    app = replica("app")
    client, jid = queued(fake_hub, app, tmp_path, "claimed-first")
    got = HubQueue(client).claim(queue.worker_identity())
    assert got is not None and got[0].id == jid
    queue.cancel(jid, app.subs)  # the app's copy still says pending
    sync.sync(client, app.data, app.subs)
    assert repo_job(fake_hub, jid)["status"] == "running"
    local = queue.get(jid, app.subs)
    assert local is not None and local.status == "running"
