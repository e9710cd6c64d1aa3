"""The submission service end to end: scoring on submit, privacy, judge jobs, duplicates,
crash safety at every step, concurrency with a real worker process, moderation and the CLI."""

from __future__ import annotations

import csv
import io
import json
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from evaluator import scorer
from evaluator.cli.main import build_parser
from evaluator.cli.main import main as cli_main
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import ModelInfo
from evaluator.jobs import queue, worker
from evaluator.store import export, ingested, layout, runs
from evaluator.submissions import moderation, records, report
from evaluator.submissions import service as submit
from tests.support.submit import (
    REPO,
    TESTS,
    demo_copy,
    judge_handler,
    predictions_csv,
    scores_csv,
    start_worker,
    tree,
    wait_for,
    worker_env,
)

TOKEN = "maintainer-token-0123456789"


@pytest.fixture
def demo(tmp_data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_data_root, tmp_path_factory)


def meta(name: str = "My detector", **kw: object) -> submit.SubmissionMeta:
    return submit.SubmissionMeta(benchmark="demo", model_name=name, **kw)  # type: ignore[arg-type]


def runs_of(sid: str) -> list[runs.RunRecord]:
    listing = runs.list_runs(include_hidden=True, include_superseded=True)
    assert listing.problems == []
    return [r for r in listing.runs if (r.submission or {}).get("submission_id") == sid]


def staging_leftovers() -> list[str]:
    d = layout.staging_dir()
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


# --------------------------------------------------------------------------------------------
# scoring on submit


def test_a_valid_file_is_saved_scored_and_put_on_the_board(demo: Path) -> None:
    data = predictions_csv(1)
    res = submit.submit(data, "../../etc/passwd", meta(org="ACME Labs", params="110M"))
    assert res.ok and res.problems == [] and res.record is not None
    rec = res.record
    assert rec.origin == "submitted" and rec.model.name == "My detector"
    assert rec.model.org == "ACME Labs" and rec.model.params == "110M"
    assert rec.run_id == records.run_id_for(res.submission_id, "demo", "My detector")
    assert rec.threshold.policy == "labels" and rec.splits == ["test"]
    assert rec.counts.n == 210 and rec.counts.missing == 0
    bacc = rec.result("balanced_accuracy")
    assert bacc.n == 210 and bacc.ci_low is not None and bacc.ci_high is not None
    assert bacc.ci_low <= bacc.value <= bacc.ci_high  # type: ignore[operator]
    # on the board
    assert [r.run_id for r in runs.list_runs(benchmark="demo").runs if r.origin == "submitted"] == [
        rec.run_id
    ]
    # the upload is kept under its generated name; the user's file name never became a path
    saved = records.upload_path(res.submission_id)
    assert saved.read_bytes() == data
    assert saved.parent == layout.submissions_root() / "uploads"
    assert not (layout.submissions_root() / "etc").exists()
    record = records.read_submission(res.submission_id)
    assert record["status"] == "scored" and record["run_id"] == rec.run_id
    assert record["filename"] == "../../etc/passwd"  # kept as text only
    assert rec.submission is not None and rec.submission["file_sha256"] == record["sha256"]
    assert list((layout.submissions_root() / "inflight").iterdir()) == []
    assert staging_leftovers() == []


def test_scores_are_thresholded_on_dev_and_the_policy_is_reported(demo: Path) -> None:
    res = submit.submit(scores_csv(3), "s.csv", meta("Score model"))
    assert res.ok and res.record is not None
    t = res.record.threshold
    assert t.policy == "dev" and t.tuned_on == "dev" and t.threshold is not None
    text = report.threshold_text(res.record)
    assert text.startswith(
        f"a score of {t.threshold:.4g} or more counts as consistent, below as inconsistent; the "
        "cut-off that separates the two best on the dev rows of your file (BAcc 0."
    )
    assert text.endswith(" there), then applied to the rows scored")
    assert any(r.metric == "roc_auc" for r in res.record.results)
    table = report.results_frame(res.record)
    assert {"value", "ci_low", "ci_high", "n"} <= set(table.columns)
    assert (table["slice"] == "overall").all() and len(table) >= 4


def test_jsonl_with_a_fixed_threshold(demo: Path) -> None:
    s = ingested.load_samples("demo")
    test = s[s["split"] == "test"]
    body = "".join(
        json.dumps({"sample_id": i, "score": float(lab) * 0.8 + 0.1}) + "\n"
        for i, lab in zip(test["sample_id"], test["label"], strict=True)
    )
    res = submit.submit(
        body.encode(), "p.jsonl", meta("Oracle", threshold_policy="fixed", threshold=0.5)
    )
    assert res.ok and res.record is not None
    assert res.record.threshold.policy == "fixed" and res.record.threshold.threshold == 0.5
    assert res.record.result("balanced_accuracy").value == 1.0


def test_a_scoring_error_is_a_clear_refusal(demo: Path) -> None:
    s = ingested.load_samples("demo")
    ids = sorted(s.loc[s["split"] == "test", "sample_id"])
    body = "sample_id,score\n" + "".join(f"{i},0.5\n" for i in ids)  # no dev rows to tune on
    before = tree(layout.data_root())
    res = submit.submit(body.encode(), "p.csv", meta("No dev"))
    assert res.status == "rejected"
    assert res.problems == [
        "threshold policy 'dev' tunes on the dev split, but no dev sample of demo has a score: "
        "include dev predictions or use a fixed threshold"
    ]
    assert tree(layout.data_root()) == before


def test_a_stream_is_accepted_like_bytes(demo: Path) -> None:
    res = submit.submit(io.BytesIO(predictions_csv(4)), "p.csv", meta("Streamed"))
    assert res.ok


def test_the_contact_email_is_kept_private(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOARD_JUDGE", "openai:gpt-4o-mini")
    email = "secret.author@example.org"
    res = submit.submit(predictions_csv(5, "a reason"), "p.csv", meta("Private", email=email))
    assert res.ok and res.job_id is not None
    assert records.read_submission(res.submission_id)["meta"]["email"] == email
    for f in layout.data_root().rglob("*"):
        if f.is_file():
            assert email.encode() not in f.read_bytes(), f
    for fmt in ("csv", "json", "latex"):
        assert email not in export.export_results(fmt, slice_kind="all")
    for f in queue.queue_dir().rglob("*.json"):
        assert email not in f.read_text()
    assert email not in json.dumps(res.record.model_dump(mode="json"))  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------
# judge jobs


def test_explanations_queue_a_judge_job_when_a_judge_is_configured(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_JUDGE", "openai:gpt-4o-mini")
    res = submit.submit(predictions_csv(6, "the number is wrong"), "p.csv", meta("Explainer"))
    assert res.ok and res.job_id == f"judge-{res.submission_id}"
    job = queue.get(res.job_id)
    assert job is not None and job.status == "pending" and job.kind == "judge"
    assert job.payload == {
        "run_id": res.run_id,
        "judge": "openai:gpt-4o-mini",
        "protocol": "EvalV4",
    }
    assert res.warnings == [
        f"explanations queued for grading by openai:gpt-4o-mini (EvalV4): job {res.job_id}"
    ]
    monkeypatch.setenv("FACTBOARD_JUDGE_PROTOCOL", "EvalV2")
    res2 = submit.submit(predictions_csv(7, "why"), "p.csv", meta("Explainer two"))
    assert queue.get(res2.job_id).payload["protocol"] == "EvalV2"  # type: ignore[arg-type,union-attr]


def test_no_judge_job_without_explanations_or_without_a_judge(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_JUDGE", "openai:gpt-4o-mini")
    res = submit.submit(predictions_csv(8), "p.csv", meta("Labels only"))
    assert res.ok and res.job_id is None and res.warnings == []
    monkeypatch.delenv("FACTBOARD_JUDGE")
    res = submit.submit(predictions_csv(9, "because"), "p.csv", meta("No judge"))
    assert res.ok and res.job_id is None
    assert res.warnings == [
        "explanations stored; no judge is configured, so they are not graded yet"
    ]
    monkeypatch.setenv("FACTBOARD_JUDGE", "openai:gpt-4o-mini")
    monkeypatch.setenv("FACTBOARD_JUDGE_PROTOCOL", "EvalV9")
    res = submit.submit(predictions_csv(10, "because"), "p.csv", meta("Bad protocol"))
    assert res.ok and res.job_id is None
    assert res.warnings == [
        "explanations stored but not graded: FACTBOARD_JUDGE_PROTOCOL='EvalV9' is not one of "
        "EvalV1, EvalV2, EvalV3, EvalV4"
    ]
    monkeypatch.setenv("FACTBOARD_JUDGE", "no-colon")
    with pytest.raises(FactBoardError, match="FACTBOARD_JUDGE='no-colon' is not of the form"):
        submit.judge_config()
    assert queue.counts() == {"pending": 0, "running": 0, "done": 0, "failed": 0}


# --------------------------------------------------------------------------------------------
# duplicates


def test_duplicate_submissions_are_refused_with_a_clear_message(demo: Path) -> None:
    data = predictions_csv(11)
    first = submit.submit(data, "p.csv", meta("Original"))
    assert first.ok
    created = first.record.created_at[:10]  # type: ignore[union-attr]
    same_file = (
        "duplicate submission: the same predictions were already submitted as run "
        f"{first.run_id} ('Original', {created})"
    )
    before = tree(layout.data_root())
    # the very same bytes
    assert submit.submit(data, "again.csv", meta("Renamed")).problems == [same_file]
    # the same predictions, reformatted as JSON Lines: a different file hash, same content
    df = pd.read_csv(io.BytesIO(data), dtype={"sample_id": str})
    jsonl = "".join(json.dumps(r) + "\n" for r in df.to_dict("records")).encode()
    assert submit.submit(jsonl, "again.jsonl", meta("Renamed")).problems == [same_file]
    # the same model name (case and spacing do not make a new name)
    same_name = (
        "duplicate submission: a model named 'ORIGINAL' already has a run on demo (same "
        f"benchmark version): run {first.run_id}; choose another name, or ask a maintainer to "
        "remove the earlier run"
    )
    assert submit.submit(predictions_csv(12), "p.csv", meta("ORIGINAL")).problems == [same_name]
    both = submit.submit(data, "p.csv", meta("ORIGINAL")).problems
    assert both == [same_file, same_name]
    # FactBoard's own runs hold their names too
    res = submit.submit(predictions_csv(13), "p.csv", meta("Always consistent"))
    assert res.problems[0].startswith(
        "duplicate submission: a model named 'Always consistent' already has a run on demo"
    )
    assert tree(layout.data_root()) == before


def test_a_hidden_run_still_holds_its_name_and_a_deleted_one_frees_it(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    first = submit.submit(predictions_csv(14), "p.csv", meta("Name holder"))
    moderation.moderate("hide", first.run_id, TOKEN)  # type: ignore[arg-type]
    assert not submit.submit(predictions_csv(15), "p.csv", meta("Name holder")).ok
    moderation.moderate("delete", first.run_id, TOKEN)  # type: ignore[arg-type]
    assert submit.submit(predictions_csv(15), "p.csv", meta("Name holder")).ok


# --------------------------------------------------------------------------------------------
# crash safety


class Crash(BaseException):
    """A process dying at this point (not an Exception: nothing catches it)."""


def _crash(*a: object, **k: object) -> None:
    raise Crash("power cut")


def _crash_on_call(n: int, real):  # type: ignore[no-untyped-def]
    calls = {"n": 0}

    def f(*a, **k):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == n:
            raise Crash("power cut")
        return real(*a, **k)

    return f


def _crash_when(real, **match):  # type: ignore[no-untyped-def]
    def f(root, rec, *a, **k):  # type: ignore[no-untyped-def]
        status = k.get("status", a[0] if a else None)
        if all(k.get(key, status if key == "status" else None) == v for key, v in match.items()):
            raise Crash("power cut")
        return real(root, rec, *a, **k)

    return f


STEPS = {
    "validating": lambda mp: mp.setattr(submit.submissions, "validate_predictions", _crash),
    "scoring": lambda mp: mp.setattr(submit, "score", _crash),
    "checking duplicates under the lock": lambda mp: mp.setattr(
        submit, "_duplicates", _crash_on_call(2, submit._duplicates)
    ),
    "marking it accepted": lambda mp: mp.setattr(
        submit, "save_record", _crash_when(records.save_record, status="accepted")
    ),
    "writing the run in staging": lambda mp: mp.setattr(runs, "_write_json", _crash),
    "right after the run is renamed into place": lambda mp: mp.setattr(
        runs, "_fsync_dir", lambda p: _crash() if p == layout.runs_dir() else None
    ),
    "queueing the judge job": lambda mp: mp.setattr(queue, "enqueue", _crash),
    "marking it scored": lambda mp: mp.setattr(
        submit, "finish", _crash_when(records.finish, status="scored")
    ),
}


@pytest.mark.parametrize("step", list(STEPS))
def test_a_crash_at_any_step_loses_nothing_and_leaves_no_partial_run(
    demo: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    monkeypatch.setenv("FACTBOARD_JUDGE", "openai:gpt-4o-mini")
    data = predictions_csv(20, "an explanation")
    with monkeypatch.context() as mp:
        STEPS[step](mp)
        with pytest.raises(Crash):
            submit.submit(data, "p.csv", meta("Crash test"))
    sid = next((layout.submissions_root() / "inflight").iterdir()).name
    # saved before any processing, under its generated name
    assert records.upload_path(sid).read_bytes() == data
    assert records.read_submission(sid)["status"] in ("received", "accepted")
    # no partial run: every run folder is complete, nothing is left in staging
    found = runs_of(sid)
    assert len(found) <= 1
    assert staging_leftovers() == []
    # the worker's recovery finishes it, once
    lines = submit.recover(grace=0)
    assert len(lines) == 1 and lines[0].startswith(f"submission {sid}: scored (run ")
    found = runs_of(sid)
    assert [r.run_id for r in found] == [records.run_id_for(sid, "demo", "Crash test")]
    record = records.read_submission(sid)
    assert record["status"] == "scored" and record["run_id"] == found[0].run_id
    job = queue.get(f"judge-{sid}")
    assert job is not None and job.payload["run_id"] == found[0].run_id
    assert queue.counts()["pending"] == 1
    # and running recovery again changes nothing
    snapshot = tree(layout.data_root()), tree(queue.queue_dir())
    assert submit.recover(grace=0) == []
    assert (tree(layout.data_root()), tree(queue.queue_dir())) == snapshot


def test_a_crash_while_receiving(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the bytes never reached their final name: the submission is abandoned (never accepted)
    with monkeypatch.context() as mp:
        mp.setattr(submit.os, "rename", _crash)
        with pytest.raises(Crash):
            submit.submit(predictions_csv(21), "p.csv", meta("Half upload"))
    # the bytes were saved but the record not updated: it is picked up and scored
    with monkeypatch.context() as mp:
        mp.setattr(submit.hashlib, "sha256", _crash)
        with pytest.raises(Crash):
            submit.submit(predictions_csv(22), "p.csv", meta("Full upload"))
    lines = submit.recover(grace=0)
    assert sorted(ln.split(": ", 1)[1][:18] for ln in lines) == [
        "scored (run demo-f",
        "upload interrupted",
    ]
    statuses = sorted(
        json.loads(p.read_text())["status"]
        for p in (layout.submissions_root() / "records").glob("*.json")
    )
    assert statuses == ["abandoned", "scored"]
    assert list((layout.submissions_root() / "uploads").glob(".*.part")) == []


def test_recovery_waits_for_the_grace_period(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as mp:
        mp.setattr(submit, "score", _crash)
        with pytest.raises(Crash):
            submit.submit(predictions_csv(23), "p.csv", meta("Recent"))
    sid = next((layout.submissions_root() / "inflight").iterdir()).name
    assert submit.recover(grace=3600) == []  # it may still be in the hands of its process
    assert runs_of(sid) == []
    assert submit.recover(grace=0) == [f"submission {sid}: scored (run {runs_of(sid)[0].run_id})"]


def test_an_unexpected_error_keeps_the_submission_for_the_worker(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as mp:
        mp.setattr(submit, "score", lambda *a, **k: 1 / 0)
        res = submit.submit(predictions_csv(24), "p.csv", meta("Unlucky"))
    assert res.status == "received" and not res.ok
    assert res.warnings == [
        f"the file is saved as submission {res.submission_id}, but processing it stopped on an "
        "unexpected error (ZeroDivisionError: division by zero); the worker will finish it"
    ]
    lines: list[str] = []
    worker.run_worker(once=True, log=lines.append)  # too recent: maybe still in progress
    assert records.read_submission(res.submission_id)["status"] == "received"
    worker.run_worker(once=True, log=lines.append, recover_grace=0)
    assert records.read_submission(res.submission_id)["status"] == "scored"
    assert any(ln.startswith(f"submission {res.submission_id}: scored (run ") for ln in lines)
    assert len(runs_of(res.submission_id)) == 1


_KILL_SCRIPT = r"""
import sys, time
from pathlib import Path
from evaluator import runner
from evaluator.submissions import service as submit

marker, data_file, where = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
if where == "while-the-run-is-written":
    from evaluator.store import runs
    real_json = runs._write_json
    def slow_json(*a, **k):
        marker.write_text("writing")
        time.sleep(300)
        return real_json(*a, **k)
    runs._write_json = slow_json
elif where == "after-run-written":
    real = runner.write_run_once
    def patched(*a, **k):
        out = real(*a, **k)
        marker.write_text("written")
        time.sleep(300)
        return out
    runner.write_run_once = patched
else:  # inside the submissions lock
    real_dup = submit._duplicates
    calls = []
    def patched_dup(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            marker.write_text("locked")
            time.sleep(300)
        return real_dup(*a, **k)
    submit._duplicates = patched_dup
submit.submit(data_file.read_bytes(), "p.csv", submit.SubmissionMeta("demo", "Killed " + where))
"""


@pytest.mark.parametrize(
    "where", ["while-the-run-is-written", "after-run-written", "holding-the-lock"]
)
def test_a_process_killed_mid_submission(demo: Path, tmp_path: Path, where: str) -> None:
    data_file = tmp_path / "p.csv"
    data_file.write_bytes(predictions_csv(30))
    marker = tmp_path / "marker"
    env = worker_env("")
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT, str(marker), str(data_file), where],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: marker.exists() or proc.poll() is not None, 120, "the marker")
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    sid = next((layout.submissions_root() / "inflight").iterdir()).name
    assert records.upload_path(sid).read_bytes() == data_file.read_bytes()
    # the lock died with its holder: another submission goes through at once
    other = submit.submit(predictions_csv(31), "p.csv", meta("Next in line"))
    assert other.ok
    submit.recover(grace=0)
    found = runs_of(sid)
    assert len(found) == 1 and found[0].model.name == f"Killed {where}"
    assert records.read_submission(sid)["status"] == "scored"
    assert staging_leftovers() == []


# --------------------------------------------------------------------------------------------
# the app and the worker at the same time


def test_fifty_uploads_while_a_worker_runs(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOARD_JUDGE", "test:stand-in-judge")
    proc = start_worker("tests.support.submit:register_judge")
    items: list[tuple[str, bytes, str]] = []
    for i in range(40):
        expl = f"explanation {i}" if i % 2 == 0 else None
        items.append((f"Model {i:02d}", predictions_csv(100 + i, expl), "p.csv"))
    for i in range(5):  # the same file again under another name: one of each pair is refused
        items.append((f"Copy {i}", items[i][1], "copy.csv"))
    bad = ["bad_labels.csv", "empty.csv", "archive.zip", "latin1.csv", "unknown_ids.csv"]
    for name in bad:
        data = (TESTS / "submissions" / "bad_files" / name).read_bytes()
        items.append((f"Bad {name}", data, name))
    errors: list[BaseException] = []

    def one(item: tuple[str, bytes, str]) -> submit.SubmitResult:
        try:
            return submit.submit(item[1], item[2], meta(item[0]))
        except BaseException as e:
            errors.append(e)
            raise

    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(one, items))
        assert errors == []
        assert proc.poll() is None  # the worker is alive and well
        wait_for(
            lambda: queue.counts()["pending"] + queue.counts()["running"] == 0,
            180,
            "the worker to drain the queue",
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "lock" not in err.lower()

    scored = [r for r in results if r.ok]
    refused = [r for r in results if r.status == "rejected"]
    assert len(scored) + len(refused) == 50
    assert len(scored) == 40 and len(refused) == 10
    for i in range(5):  # each pair: exactly one accepted, the other named the first
        pair = [results[i], results[40 + i]]
        assert sorted(r.status for r in pair) == ["rejected", "scored"]
        winner = next(r for r in pair if r.ok)
        loser = next(r for r in pair if not r.ok)
        assert loser.problems[0].startswith(
            f"duplicate submission: the same predictions were already submitted as run "
            f"{winner.run_id}"
        )
    for r in results[45:]:
        assert r.status == "rejected" and r.problems
    # every accepted one is on the board (possibly as the judged run that supersedes it)
    board = runs.list_runs(benchmark="demo")
    assert board.problems == []
    by_sid: dict[str, list[str]] = {}
    for rec in board.runs:
        sid = (rec.submission or {}).get("submission_id")
        if sid:
            by_sid.setdefault(sid, []).append(rec.run_id)
    assert sorted(by_sid) == sorted(r.submission_id for r in scored)
    assert all(len(v) == 1 for v in by_sid.values())  # no run twice
    jobs = queue.list_jobs("done")
    assert sorted(j.id for j in jobs) == sorted(r.job_id for r in scored if r.job_id)
    assert len(jobs) == 20 and queue.counts()["failed"] == 0
    for r in scored:
        shown = by_sid[r.submission_id][0]
        if r.job_id:
            assert shown == queue.run_id_for_job(r.job_id, "demo", r.record.model.name)  # type: ignore[union-attr]
        else:
            assert shown == r.run_id


# --------------------------------------------------------------------------------------------
# moderation


def test_moderation_needs_the_maintainer_token(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = submit.submit(predictions_csv(40), "p.csv", meta("Moderated"))
    rid = res.run_id
    assert rid is not None
    monkeypatch.delenv("FACTBOARD_ADMIN_TOKEN", raising=False)
    with pytest.raises(moderation.ModerationError) as e:
        moderation.moderate("hide", rid, TOKEN)
    assert str(e.value) == "moderation is disabled: FACTBOARD_ADMIN_TOKEN is not set"
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", "short")
    with pytest.raises(moderation.ModerationError, match="shorter than 16 characters"):
        moderation.moderate("hide", rid, "short")
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    for wrong in (None, "", TOKEN[:-1], TOKEN + "x", TOKEN.upper()):
        with pytest.raises(moderation.ModerationError) as e:
            moderation.moderate("hide", rid, wrong)
        assert str(e.value) == "wrong maintainer token"
    with pytest.raises(moderation.ModerationError, match="unknown moderation action 'purge'"):
        moderation.moderate("purge", rid, TOKEN)
    assert not runs.read_record(runs.find_run(rid)).hidden


def test_hide_show_and_delete_act_on_the_run_and_its_judged_copy(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    monkeypatch.setenv("FACTBOARD_JUDGE", "test:stand-in-judge")
    monkeypatch.setattr(worker, "HANDLERS", worker.builtin_handlers())
    worker.register_handler("judge", judge_handler)
    res = submit.submit(predictions_csv(41, "why"), "p.csv", meta("Spammy"))
    assert worker.run_worker(once=True) == 1
    judged = queue.run_id_for_job(res.job_id, "demo", "Spammy")  # type: ignore[arg-type]
    visible = lambda: {r.run_id for r in runs.list_runs().runs}  # noqa: E731
    assert judged in visible() and res.run_id not in visible()  # superseded
    assert moderation.moderate("hide", res.run_id, TOKEN) == [res.run_id, judged]  # type: ignore[arg-type]
    assert judged not in visible() and res.run_id not in visible()
    assert {r.run_id for r in moderation.submitted_runs()} >= {res.run_id, judged}  # still on disk
    assert moderation.moderate("show", res.run_id, TOKEN) == [res.run_id, judged]  # type: ignore[arg-type]
    assert judged in visible()
    assert moderation.moderate("delete", res.run_id, TOKEN) == [res.run_id, judged]  # type: ignore[arg-type]
    assert not (layout.runs_dir() / judged).exists()
    assert not (layout.runs_dir() / res.run_id).exists()  # type: ignore[operator]
    assert records.read_submission(res.submission_id)["status"] == "deleted"
    log = (layout.submissions_root() / "moderation.jsonl").read_text().splitlines()
    assert [json.loads(x)["action"] for x in log] == ["hide", "show", "delete"]
    with pytest.raises(FactBoardError, match="no run"):
        moderation.moderate("hide", res.run_id, TOKEN)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# exports never carry a live formula


def test_exported_csv_neutralises_formula_cells(demo: Path) -> None:
    """Independent of the name rules: runs stored with hostile names (as a released run or an
    older version could carry) are exported with their cells neutralised."""
    spec = submit.registry.get("demo")
    version = ingested.load_meta("demo")["version"]
    samples = ingested.load_samples("demo")
    preds = samples[["sample_id"]].assign(label=1)
    hostile = ['=HYPERLINK("http://evil.example","x")', "+SUM(A1:A9)", "-2+3", "@cmd|' /C calc'!A0"]
    for name in hostile:
        model = ModelInfo(name=name, kind="non-llm", org="=org")
        scorer.score_to_run(
            spec, version, samples, preds, model, "submitted", None, ScoreOptions(resamples=10)
        )
    text = export.to_csv(export.run_rows(benchmark="demo"))
    rows = list(csv.DictReader(io.StringIO(text)))
    models = {r["model"] for r in rows}
    for name in hostile:
        assert "'" + name in models and name not in models
    for r in rows:
        for v in r.values():
            assert not v.startswith(("=", "+", "-", "@")), v


# --------------------------------------------------------------------------------------------
# CLI


def test_cli_submit_queue_and_moderate(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "preds.csv"
    f.write_bytes(predictions_csv(50, "why"))
    monkeypatch.setenv("FACTBOARD_JUDGE", "openai:gpt-4o-mini")
    argv = [
        "submit",
        str(f),
        "--benchmark",
        "demo",
        "--model-name",
        "CLI model",
        "--email",
        "cli@example.org",
        "--org",
        "Lab",
        "--params",
        "7B",
    ]
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    run_id = out.split("run ", 1)[1].split(" ", 1)[0]
    sid = records.read_submission(run_id.split("cli-model-", 1)[1])["id"]
    assert out.splitlines()[0] == f"submission {sid}: run {run_id} is on the board"
    assert "threshold: labels as given (no threshold)" in out
    assert "balanced_accuracy" in out and "judge job queued: judge-" in out
    assert cli_main(argv) == 1
    err = capsys.readouterr().err
    assert "rejected: 2 problems" in err and "duplicate submission" in err
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"sample_id,label\n")
    assert cli_main(["submit", str(bad), "--benchmark", "demo", "--model-name", "Other"]) == 1
    assert "  - the file has a header but no prediction rows" in capsys.readouterr().err
    assert cli_main(["queue"]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("pending  judge-") and " judge " in listing and "queued" in listing
    assert cli_main(["queue", "--status", "done"]) == 0
    assert capsys.readouterr().err == "no jobs\n"
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    assert cli_main(["moderate", "hide", run_id, "--token", "nope"]) == 1
    assert capsys.readouterr().err == "error: wrong maintainer token\n"
    assert cli_main(["moderate", "hide", run_id, "--token", TOKEN]) == 0
    assert capsys.readouterr().out == f"{run_id}: hidden\n"
    assert runs.read_record(runs.find_run(run_id)).hidden


def test_the_commands_are_registered_with_the_evaluator_cli(demo: Path) -> None:
    from evaluator.cli import submissions as cli_submissions

    p = build_parser()
    for argv in (
        ["queue", "--status", "failed"],
        ["worker", "--once"],
        ["moderate", "show", "some-run", "--token", "t"],
        ["submit", "f.csv", "--benchmark", "demo", "--model-name", "m"],
    ):
        args = p.parse_args(argv)
        assert args.command == argv[0]
        assert args.run is getattr(cli_submissions, f"cmd_{argv[0]}")
    queue_args = p.parse_args(["queue"])
    assert queue_args.run(queue_args) == 0


def test_cli_worker_runs_as_a_process(demo: Path) -> None:
    queue.enqueue("nope", {"x": 1})
    out = subprocess.run(
        [sys.executable, "-m", "evaluator", "worker", "--once"],
        cwd=REPO,
        env=worker_env(""),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "worker: 1 job run" in out.stderr
    [job] = queue.list_jobs("failed")
    assert job.error == "unknown job kind 'nope'; known: detector-run, judge, reproduce"


def test_cli_submit_missing_file(tmp_data_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli_main(["submit", "/nonexistent/x.csv", "--benchmark", "demo", "--model-name", "m"]) == 1
    )
    assert capsys.readouterr().err == "error: no such file: /nonexistent/x.csv\n"


def test_the_template_lists_the_ids_to_predict_and_round_trips(demo: Path) -> None:
    text = submit.template_csv("demo")
    lines = text.splitlines()
    assert lines[0] == "sample_id,split,label,score,explanation"
    # dev ids first (a scores-only file's threshold), then the 210 test ids
    assert len(lines) == 1 + 84 + 210 and lines[85] == "demo-meeting-04_0,test,,,"
    assert len(submit.template_csv("demo", "dev").splitlines()) == 85
    filled = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    filled["label"] = "consistent"
    res = submit.submit(filled.to_csv(index=False).encode(), "t.csv", meta("From template"))
    assert res.ok and res.record is not None and res.record.counts.missing == 0
    with pytest.raises(FactBoardError, match="benchmark 'frank' is not ingested"):
        submit.template_csv("frank")


@pytest.mark.parametrize("fails", ["the record", "the upload"])
def test_a_full_disk_while_receiving_is_a_clear_error_and_keeps_nothing(
    demo: Path, monkeypatch: pytest.MonkeyPatch, fails: str
) -> None:
    """ENOSPC before the record or the upload was saved: submit() raised a raw OSError that the
    page did not handle. Now it is a StorageError that says so, and nothing of it stays (no
    record, no marker, no partial upload, no quota counted)."""
    import errno
    import os as _os

    from evaluator.submissions import records as rec_mod

    def full(*a: object, **k: object) -> None:
        raise OSError(errno.ENOSPC, _os.strerror(errno.ENOSPC))

    root = layout.submissions_root()
    with monkeypatch.context() as m:
        if fails == "the record":
            m.setattr(rec_mod, "write_json_atomic", full)
        else:
            m.setattr(_os, "fsync", full)
        with pytest.raises(submit.StorageError, match="the disk is full") as e:
            submit.submit(predictions_csv(2), "p.csv", meta("Disk full"))
    assert "nothing was stored" in str(e.value)
    left = [p for sub in ("records", "inflight", "uploads") for p in (root / sub).glob("*")]
    left += list((root / "uploads").glob(".*"))
    assert left == []
    assert submit.submit(predictions_csv(2), "p.csv", meta(f"Disk fine {fails}")).ok
