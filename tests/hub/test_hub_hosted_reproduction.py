"""The hosted reproduction path end to end, through the fake Hub over HTTP: a submission with a
recipe on a replica of the board, a maintainer's approval there, the job published to the
results repo's queue by the replica's sync, a remote `worker --hub --once` on another machine
that claims it, re-runs the recipe and publishes the outcome, and every replica (the one that
took the submission, and a fresh one) showing the run as reproduced."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from evaluator.cli.main import main
from evaluator.detectors.runner import predict_detector
from evaluator.hub import sync
from evaluator.hub.client import HubClient
from evaluator.jobs import queue
from evaluator.store import runs
from evaluator.submissions import service, verification
from tests.hub.conftest import REPO_ID, Replica, hub_env, repo_records
from tests.support.fake_hub import FakeHub
from tests.support.submit import REPO
from tests.support.testdata import build_demo_root

# huggingface_hub's LFS upload passes raw bytes the way httpx now deprecates
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

TOKEN = "maintainer-token-0123456789"


def _status(r: Replica, run_id: str) -> str:
    return verification.record_status(runs.read_record(runs.find_run(run_id, r.data)))


def _repo_job(hub: FakeHub, job_id: str) -> dict:
    data = (hub.repo(REPO_ID).files() or {}).get(f"queue/{job_id}.json")
    assert data is not None, f"queue/{job_id}.json is not in the results repo"
    return json.loads(data)


def test_a_submission_approved_on_a_replica_is_reproduced_by_a_remote_worker_and_shown_everywhere(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    space, gpu, fresh = replica("space"), replica("gpu"), replica("fresh")
    build_demo_root(space.data)
    client = HubClient.from_env()
    sync.push(client, space.data, space.subs, reported=True, demo=True)
    for k, v in space.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    monkeypatch.setenv("FACTBOARD_CACHE", str(space.data.parent / "cache"))

    # an author's predictions from a registered weight-free detector, submitted with its recipe
    p = predict_detector("lexical-overlap", "demo", root=space.data)
    p.checkpoints.clear()
    buf = io.StringIO()
    p.predictions[["sample_id", "score"]].to_csv(buf, index=False)
    res = service.submit(
        buf.getvalue().encode(),
        "preds.csv",
        service.SubmissionMeta(
            benchmark="demo", model_name="Overlap again", recipe={"detector": "lexical-overlap"}
        ),
        data_root=space.data,
        submissions_root=space.subs,
        resamples=100,
    )
    assert res.ok and res.run_id, res.problems
    run_id = res.run_id
    sync.sync(client, space.data, space.subs)  # the Space's background sync publishes it
    assert _status(space, run_id) == "pending"

    # a maintainer approves its reproduction on the Space; the next sync queues it on the Hub
    assert main(["reproduce", run_id, "--approve", "--token", TOKEN]) == 0
    [job] = queue.list_jobs("pending", space.subs)
    sync.sync(client, space.data, space.subs)
    assert _repo_job(fake_hub, job.id)["status"] == "pending"

    # a GPU box with its own (empty) roots takes it from the Hub, runs it and publishes
    env = hub_env(fake_hub)
    env.update(gpu.env())
    env["HF_HOME"] = str(gpu.data.parent / "hf_home")
    env["FACTBOARD_CACHE"] = str(gpu.data.parent / "cache")
    w = subprocess.run(
        [sys.executable, "-m", "evaluator", "worker", "--hub", "--once"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert w.returncode == 0, w.stderr
    done = _repo_job(fake_hub, job.id)
    assert done["status"] == "done", (done, w.stderr)
    assert done["result"]["status"] == "reproduced", done["result"]
    assert "hf_" not in w.stderr  # no token in the worker's log
    published = repo_records(fake_hub)[res.submission_id]["verification"]
    assert published["status"] == "reproduced" and published["seq"] == 1

    # the Space's next pull shows it reproduced, on its board and its Queue page
    sync.sync(client, space.data, space.subs)
    assert _status(space, run_id) == "reproduced"
    assert queue.get(job.id, space.subs).status == "done"  # type: ignore[union-attr]
    # and so does a replica that boots now
    sync.pull(client, fresh.data, fresh.subs)
    assert _status(fresh, run_id) == "reproduced"
    got = runs.read_record(runs.find_run(run_id, fresh.data))
    assert got.submission["verification"]["labels_differ"] == 0
    for r in (space, fresh):
        assert sync.status(client, r.data, r.subs).lines() == []
