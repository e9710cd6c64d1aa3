"""What a run record may hold, checked on every read and every write (one check: the RunRecord
model behind evaluator.store.runs.validate_record): each number within its metric's domain,
names as one line of visible text. A record that breaks a rule is refused by a write, listed
and left off the board by a read, and named by the doctor."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evaluator.benchmarks import registry
from evaluator.core.types import ModelInfo, SliceResult
from evaluator.core.vocabulary import metric_domain
from evaluator.store import doctor, runs
from explorer import leaderboard as L
from explorer.store import Store
from tests.support import testdata

HOSTILE = "demo-hostile-copy-000000"


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testdata.build_demo_root(tmp_path_factory.mktemp("demo") / "leaderboard_data")


@pytest.fixture
def root(demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return testdata.own_copy(demo_root, tmp_path, monkeypatch)


def _result(**kw: Any) -> dict[str, Any]:
    base = {
        "split": "test",
        "unit": "summary",
        "slice_kind": "overall",
        "slice_value": "",
        "metric": "balanced_accuracy",
        "value": 0.6,
        "ci_low": 0.55,
        "ci_high": 0.65,
        "n": 100,
    }
    return {**base, **kw}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"ci_low": -1e308, "ci_high": 1e308}, "outside the metric's range [0, 1]"),
        ({"value": 1e300}, "value 1e+300 of balanced_accuracy"),
        ({"value": -5.0, "ci_low": None, "ci_high": None}, "outside the metric's range"),
        ({"metric": "pearson", "value": 1.5}, "range [-1, 1]"),
        ({"metric": "made_up", "value": 1e12}, "range [-1e+09, 1e+09]"),
        ({"ci_low": 0.7, "ci_high": 0.5}, "low bound 0.7 above its high bound 0.5"),
        ({"n": -7}, "negative"),
    ],
)
def test_a_number_outside_its_metric_s_domain_is_refused(change: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=says.replace("[", r"\[").replace("+", r"\+")):
        SliceResult(**_result(**change))


@pytest.mark.parametrize("field", ["value", "ci_low", "ci_high"])
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_number_in_run_json_text_is_refused(field: str, literal: str) -> None:
    """JSON text may spell NaN and the infinities (Python writes them): refused where parsed."""
    text = json.dumps(_result()).replace(f'"{field}": {_result()[field]}', f'"{field}": {literal}')
    assert literal in text
    with pytest.raises(ValidationError, match=f"{field}\n  Input should be a finite number"):
        SliceResult.model_validate_json(text)


def test_domains_follow_the_vocabulary() -> None:
    assert metric_domain("balanced_accuracy") == (0.0, 1.0)
    assert metric_domain("roc_auc") == (0.0, 1.0)
    assert metric_domain("kendall_tau") == (-1.0, 1.0)
    assert metric_domain("cohen_kappa") == (-1.0, 1.0)
    assert metric_domain("runtime_seconds")[0] == 0.0
    SliceResult(**_result(metric="pearson", value=1.0 + 1e-12, ci_low=0.9, ci_high=1.0))


@pytest.mark.parametrize(
    "name",
    [
        "GPT\u202e4-evil",  # right-to-left override
        "GPT\u200b-4",  # zero-width space
        "\x1b[31mGPT-4\x07",  # terminal colour and bell
        "GPT-4\nInjected line",
        "GPT-4\u2028x",  # line separator
    ],
)
def test_names_carry_no_control_or_invisible_character(name: str) -> None:
    with pytest.raises(ValidationError, match="control or invisible character"):
        ModelInfo(name=name, kind="open-llm")
    with pytest.raises(ValidationError, match="model org"):
        ModelInfo(name="fine", kind="open-llm", org=name)
    ok = ModelInfo(name="Модель-7B (ünïcode)", kind="open-llm", description="two\nlines\tok")
    assert ok.description == "two\nlines\tok"


def _hostile_copy(root: Path, results: list[dict[str, Any]]) -> Path:
    src = next(p for p in sorted((root / "runs").iterdir()) if p.name.startswith("demo"))
    dst = root / "runs" / HOSTILE
    shutil.copytree(src, dst)
    rec = json.loads((dst / "run.json").read_text(encoding="utf-8"))
    rec["run_id"] = HOSTILE
    rec["results"] = results
    (dst / "run.json").write_text(json.dumps(rec), encoding="utf-8")
    return dst


def test_a_stored_ci_of_1e308_is_left_off_the_board_and_named_by_the_doctor(root: Path) -> None:
    """A run.json with CIs of +-1e308 (finite) raised MemoryError on its benchmark's board on
    every replica: the CI bar's range overflowed. Now the read refuses it like a write would."""
    d = _hostile_copy(root, [_result(ci_low=-1e308, ci_high=1e308)])
    with pytest.raises(Exception, match="outside the metric's range"):
        runs.validate_record(json.loads((d / "run.json").read_text()), d)
    s = Store(root)
    s.refresh()
    assert "outside the metric's range" in s.problems[HOSTILE]
    s.ensure_labels("demo")
    board = L.build_board(
        s.cursor(), L.BoardQuery("demo", "summary"), registry.get("demo"), s.version("demo"), 200
    )
    assert HOSTILE not in set(board.rows["run_id"].dropna())
    assert len(L.ci_images(board.rows)) == len(board.rows)
    found = [p for p in doctor.run_problems(root) if HOSTILE in p.path]
    assert found and "outside the metric's range" in found[0].problem


def test_the_staging_sweep_removes_dead_writers_leftovers_only(tmp_path: Path) -> None:
    """_staging/ entries are named after the process writing them: a dead process's entry
    goes at once, a live one's stays until it is a day old, an unnamed one when it is old."""
    import os
    import subprocess
    import sys
    import time

    root = tmp_path / "data"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(dead.stdout)
    staging = runs.staging_path("run-a", root).parent
    (staging / f"run-dead.{dead_pid}.abcdef12").mkdir()
    mine = runs.staging_path("run-mine", root)
    mine.mkdir()
    (staging / "hub-pull-1234abcd").mkdir()  # no writer named: kept while recent
    old = staging / "bench-x-old"
    old.mkdir()
    week = time.time() - 7 * 24 * 3600
    os.utime(old, (week, week))
    removed = runs.sweep_staging(root)
    assert sorted(removed) == ["bench-x-old", f"run-dead.{dead_pid}.abcdef12"]
    assert sorted(p.name for p in staging.iterdir()) == sorted([mine.name, "hub-pull-1234abcd"])


def test_bootstrap_and_submission_blocks_read_and_write_back_as_stored(root: Path) -> None:
    """run.json's bootstrap settings and submission block are typed records, and a stored run
    reads and writes back with the same keys in the same order, keys the records do not name
    (an import's source metadata, a later version's setting) included."""
    from evaluator.core.types import RunRecord

    rid = runs.list_runs(root, benchmark="demo").runs[0].run_id
    stored = json.loads((runs.find_run(rid, root) / "run.json").read_text(encoding="utf-8"))
    stored["bootstrap"]["added_later"] = [1, 2]
    imported = {
        "source": "Every Eval Ever record",
        "evaluation_id": "demo/model/run",
        "source_name": None,
        "source_type": "documentation",
        "record_sha256": "ab" * 32,
    }
    submitted = {
        "submission_id": "s-1",
        "file_sha256": "ab" * 32,
        "predictions_sha": None,
        "labels_sha": "cd" * 12,
        "format": "csv",
        "rows": 4,
        "submitted_at": "2026-11-28T09:00:00+00:00",
        "recipe": {"detector": "lexical-overlap"},
        "verification": {"status": "reproduced", "seq": 2},
    }
    for submission in (imported, submitted):
        stored["submission"] = submission
        out = RunRecord.model_validate(stored).model_dump(mode="json")
        for block in ("bootstrap", "submission"):
            assert out[block] == stored[block]
            assert list(out[block]) == list(stored[block])
    with pytest.raises(ValidationError, match="submission.rows"):
        RunRecord.model_validate({**stored, "submission": {"rows": "many"}})
