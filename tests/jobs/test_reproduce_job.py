"""The worker's "reproduce" job: its payload is checked field by field, the engine fields reach
the detector's re-run, and `reproduce RUN_ID --approve` queues it (maintainers only)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from evaluator.cli.main import main
from evaluator.core.errors import FactBoardError
from evaluator.detectors.runner import predict_detector
from evaluator.jobs import queue, reproduce_run, worker
from evaluator.store import runs
from evaluator.submissions import verification
from evaluator.submissions.service import SubmissionMeta, submit
from tests.support.testdata import build_demo_root

TOKEN = "maintainer-token-0123456789"


@pytest.fixture
def submitted(tmp_data_root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_data_root.parent / "cache"))
    shutil.rmtree(tmp_data_root)
    build_demo_root(tmp_data_root, reported=False)
    p = predict_detector("lexical-overlap", "demo", root=tmp_data_root)
    p.checkpoints.clear()
    buf = io.StringIO()
    p.predictions[["sample_id", "score"]].to_csv(buf, index=False)
    res = submit(
        buf.getvalue().encode(),
        "p.csv",
        SubmissionMeta(
            benchmark="demo", model_name="Queued", recipe={"detector": "lexical-overlap"}
        ),
        resamples=100,
    )
    assert res.ok and res.run_id, res.problems
    return res.run_id


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({}, "reproduce payload: missing 'run_id'"),
        ({"run_id": "r", "resamples": 0}, "resamples=0 is not in 1..10000"),
        ({"run_id": "r", "engine": "spark"}, "spark"),
        ({"run_id": "r", "surprise": 1}, "unknown field(s) surprise"),
    ],
)
def test_a_bad_payload_is_refused_naming_the_field(payload: dict, message: str) -> None:
    with pytest.raises(FactBoardError) as e:
        reproduce_run.check_payload(payload)
    assert message in str(e.value)


def test_the_command_approves_and_the_worker_reproduces_with_the_engine_given(
    submitted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["reproduce", submitted, "--approve", "--token", "wrong-token-0123456789"]) == 1
    assert "wrong maintainer token" in capsys.readouterr().err
    assert queue.list_jobs() == []
    assert main(["reproduce", submitted, "--approve", "--token", TOKEN]) == 0
    assert f"reproduction of run {submitted} queued: job reproduce-" in capsys.readouterr().out
    [job] = queue.list_jobs("pending")
    # the engine's fields, as a detector-run job's: a small block size changes nothing
    data = {**job.payload, "engine": "local", "block_size": 7}
    assert reproduce_run.check_payload(data)["block_size"] == 7
    out = reproduce_run.handle(data)
    assert out["status"] == "reproduced" and out["run_id"] == submitted
    assert worker.run_worker(once=True) == 1
    assert queue.get(job.id).status == "done"  # type: ignore[union-attr]
    rec = runs.read_record(runs.find_run(submitted))
    assert verification.record_status(rec) == "reproduced"
