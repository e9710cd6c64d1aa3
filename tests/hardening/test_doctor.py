"""`python -m evaluator doctor` and the Queue page's maintainer panel: every corrupt file the
store can meet is listed with what is wrong, and none takes a page down."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.cli.main import main as cli_main
from evaluator.jobs import queue
from evaluator.store import doctor, layout, runs
from tests.support.apptest import REPO
from tests.support.submit import tree

QUEUE_PAGE = str(REPO / "views" / "queue.py")


def _break_the_store(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One corrupt file of each kind the store can meet."""
    a, b, c = sorted(p for p in layout.runs_dir().iterdir() if p.is_dir())[:3]
    # a truncated predictions.parquet; `score` written as strings; a result value "abc"
    f = a / layout.PREDICTIONS_FILE
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    preds = runs.read_predictions(b)
    preds["score"] = preds["score"].astype(str)
    pq.write_table(pa.Table.from_pandas(preds, preserve_index=False), b / layout.PREDICTIONS_FILE)
    (c / layout.RUN_FILE).write_text(
        (c / layout.RUN_FILE).read_text().replace('"value": ', '"value": "abc", "x": ', 1)
    )
    # a benchmark folder that is not a benchmark
    (layout.benchmarks_dir() / "nosuch").mkdir()
    # a job file in done/, a submission record, a reported CSV, an LLM cache entry
    queue.enqueue("noop", {})
    (queue.queue_dir() / "done" / "bad.json").write_text("[1, 2")
    rec_dir = Path(tmp_path / "submissions" / "records")
    rec_dir.mkdir(parents=True, exist_ok=True)
    (rec_dir / "20260101T000000-00000000.json").write_text('{"id": "other"}')
    reported = tmp_path / "reported"
    reported.mkdir()
    (reported / "paper.csv").write_text(
        "model,kind,benchmark,split,unit,slice_kind,slice_value,metric,value\n"
        "M,non-llm,demo,test,summary,overall,,balanced_accuracy,high\n"
    )
    monkeypatch.setenv("FACTBOARD_REPORTED", str(reported))
    monkeypatch.delenv("FACTBOARD_LLM_CACHE", raising=False)
    entry = data / ".cache" / "llm" / "ab" / ("ab" * 32 + ".json")
    entry.parent.mkdir(parents=True)
    entry.write_text("{")


def test_doctor_lists_every_corrupt_file_and_changes_nothing(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FACTBOARD_REPORTED", str(REPO / "leaderboard_data" / "reported"))
    assert doctor.find_problems() == []  # the demo store and the published numbers are sound
    assert cli_main(["doctor"]) == 0
    capsys.readouterr()
    _break_the_store(demo, tmp_path, monkeypatch)
    before = tree(tmp_path)
    found = doctor.find_problems()
    assert tree(tmp_path) == before  # doctor only reads
    kinds = [p.kind for p in found]
    assert kinds == ["run", "run", "run", "benchmark", "job", "submission", "reported", "llm-cache"]
    text = [p.problem for p in found]
    assert any("predictions.parquet is unreadable" in t for t in text)
    assert any("column 'score' is large_string, expected double" in t for t in text)
    assert any("run.json field 'results.0.value'" in t for t in text)
    assert "not a registered benchmark name" in text
    assert any("bad.json is not valid JSON" in t for t in text)
    assert "its id does not match the file name" in text
    assert any("not numbers, e.g. 'high' on line 2" in t for t in text)
    assert found[-1].path.endswith(".json") and found[-1].problem.startswith("not valid JSON")
    assert cli_main(["doctor"]) == 1
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == len(found) and "8 problem(s) found" in err


def test_the_queue_page_survives_corrupt_files_and_maintainers_act_on_jobs(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.apptest import open_app_page

    token = "maintainer-token-0123456789"
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", token)
    _break_the_store(demo, tmp_path, monkeypatch)
    (queue.queue_dir() / "running" / "cut.json").write_text('{"id": "cut"')
    queue.enqueue("noop", {"x": 1})
    job = queue.claim()  # the oldest: the job _break_the_store queued
    assert job is not None
    queue.fail(job, "ValueError: broken")
    at = open_app_page("views/queue.py")  # no traceback from the corrupt job files
    assert "Maintainer token" in [t.label for t in at.text_input]
    assert not any(b.key == "queue.requeue" for b in at.button)  # not without the token
    at.text_input(key="queue.admin_token").set_value(token)
    at = at.run()
    assert not at.exception
    panel = pd.DataFrame(at.dataframe[0].value)
    assert {"run", "benchmark", "job", "submission", "reported", "llm-cache"} <= set(panel["kind"])
    assert any("cut.json" in f for f in panel["file"])
    at.radio(key="queue.status").set_value("failed")
    at = at.run()
    at.button(key="queue.requeue").click()
    at = at.run()
    assert not at.exception
    assert at.success[-1].value.replace("\\", "") == f"requeue: {job.id} is pending"
    again = queue.get(job.id)
    assert again is not None and again.status == "pending" and again.attempts == 0
