"""A reproduction's outcome recorded on one replica reaches the others through the results repo
(the submission record carries it), ordered by its sequence number and never by a clock; an
outcome that fails a check is skipped, listed and not taken again; the submitter's private fields
stay where they were given."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.hub import sync
from evaluator.hub import tables as T
from evaluator.hub.client import HubClient
from evaluator.store import runs
from evaluator.submissions import service, verification
from tests.hub.conftest import REPO_ID, Replica, repo_records
from tests.support.fake_hub import FakeHub
from tests.support.submit import predictions_csv
from tests.support.testdata import build_demo_root


def _outcome(status: str, labels_differ: int = 0) -> dict[str, object]:
    return {
        "status": status,
        "at": "2026-11-28T07:00:00+00:00",
        "compared": 24,
        "only_stored": 0,
        "only_reproduced": 0,
        "scores_differ": labels_differ,
        "max_score_difference": 0.0,
        "labels_compared": 24,
        "labels_differ": labels_differ,
        "metric": None,
        "notes": [],
    }


def _status(r: Replica, run_id: str) -> str:
    return verification.record_status(runs.read_record(runs.find_run(run_id, r.data)))


def _record(r: Replica, sid: str) -> dict:
    return json.loads((r.subs / "records" / f"{sid}.json").read_text(encoding="utf-8"))


@pytest.fixture
def two(fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch):
    """Replicas a and b in step, with one submission made on a (with a contact e-mail)."""
    a, b = replica("a"), replica("b")
    build_demo_root(a.data)
    client = HubClient.from_env()
    sync.push(client, a.data, a.subs, reported=True, demo=True)
    sync.pull(client, b.data, b.subs)
    monkeypatch.setenv("FACTBOARD_DATA", str(a.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(a.subs))
    res = service.submit(
        predictions_csv(5),
        "preds.csv",
        service.SubmissionMeta(
            benchmark="demo", model_name="Checked model", email="me@example.org"
        ),
        data_root=a.data,
        submissions_root=a.subs,
        resamples=50,
    )
    assert res.ok, res.problems
    sync.sync(client, a.data, a.subs)
    sync.sync(client, b.data, b.subs)
    assert _status(b, res.run_id) == "self-reported"
    return client, a, b, res


def test_an_outcome_recorded_on_one_replica_reaches_the_other_and_a_later_one_wins(
    two, fake_hub: FakeHub
) -> None:
    client, a, b, res = two
    verification.record_outcome(res.run_id, _outcome("differs", 3), a.data, a.subs)
    sync.sync(client, a.data, a.subs)
    assert repo_records(fake_hub)[res.submission_id]["verification"]["seq"] == 1
    pulled, _ = sync.sync(client, b.data, b.subs)
    assert pulled.pulled["reproduction outcomes"] == 1
    got = runs.read_record(runs.find_run(res.run_id, b.data))
    assert verification.record_status(got) == "differs"
    assert got.submission["verification"]["labels_differ"] == 3
    # a later reproduction on b (seq 2) reaches a; a's older outcome does not come back
    verification.record_outcome(res.run_id, _outcome("reproduced"), b.data, b.subs)
    sync.sync(client, b.data, b.subs)
    sync.sync(client, a.data, a.subs)
    sync.sync(client, b.data, b.subs)
    for r in (a, b):
        assert _status(r, res.run_id) == "reproduced"
        assert _record(r, res.submission_id)["verification"]["seq"] == 2
        assert sync.status(client, r.data, r.subs).lines() == []
    assert repo_records(fake_hub)[res.submission_id]["verification"]["status"] == "reproduced"
    # the contact e-mail never left a, and a kept it when it took b's outcome
    assert "me@example.org" in json.dumps(_record(a, res.submission_id))
    assert "me@example.org" not in json.dumps(repo_records(fake_hub))


def test_a_forged_outcome_is_skipped_listed_and_not_taken_again(two, fake_hub: FakeHub) -> None:
    client, a, b, res = two
    rows = [
        {"submission_id": sid, "status": rec.get("status"), "record": json.dumps(rec)}
        for sid, rec in repo_records(fake_hub).items()
    ]
    for row in rows:
        if row["submission_id"] == res.submission_id:
            rec = json.loads(row["record"])
            rec["verification"] = {**_outcome("certified by me"), "seq": 99}
            row["record"] = json.dumps(rec)
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=T.SUBMISSIONS_SCHEMA), sink)
    fake_hub.put(REPO_ID, {"tables/submissions.parquet": sink.getvalue()})
    report = sync.pull(client, b.data, b.subs)
    assert any(res.submission_id in s and "certified by me" in s for s in report.skipped), (
        report.skipped
    )
    assert _status(b, res.run_id) == "self-reported"
    assert sync.status(client, b.data, b.subs).lines() == []  # not tried again


def test_an_outcome_names_its_run_and_that_run_must_be_the_submission_s(
    two, tmp_path: Path
) -> None:
    _, a, b, res = two
    rec = _record(a, res.submission_id)
    good = {**rec, "verification": {**_outcome("reproduced"), "seq": 1}}
    assert verification.adopt(json.dumps({**good, "run_id": "demo-no-such-run"}), b.data, b.subs)
    other = next(r.run_id for r in runs.list_runs(b.data).runs if r.run_id != res.run_id)
    assert "is not the run of submission" in (
        verification.adopt(json.dumps({**good, "run_id": other}), b.data, b.subs) or ""
    )
    no_seq = {**rec, "verification": _outcome("reproduced")}
    assert "no sequence number" in (verification.adopt(json.dumps(no_seq), b.data, b.subs) or "")
    assert verification.adopt(json.dumps(good), b.data, b.subs) is None
    assert _status(b, res.run_id) == "reproduced"
