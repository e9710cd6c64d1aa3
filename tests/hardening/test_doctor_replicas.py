"""`python -m evaluator doctor` names what replicas sharing a results repo can leave in a store:
the same file submitted twice, a run folder left with only its run.json, and a moderation log
dated in the future."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaluator.cli.main import main as cli_main
from evaluator.store import doctor, layout
from evaluator.submissions import moderation, service
from tests.support.submit import predictions_csv


def _submitted(name: str, seed: int) -> str:
    res = service.submit(
        predictions_csv(seed),
        "preds.csv",
        service.SubmissionMeta(benchmark="demo", model_name=name),
        resamples=20,
    )
    assert res.ok and res.run_id, res.problems
    return res.run_id


def test_doctor_names_a_run_submitted_twice_from_two_replicas(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _submitted("Submitted once", 3)
    # the same file, accepted by another replica before either had seen the other's run
    second = layout.run_dir(first.replace("submitted-once", "submitted-twice"))
    shutil.copytree(layout.run_dir(first), second)
    body = json.loads((second / layout.RUN_FILE).read_text())
    body["run_id"] = second.name
    body["created_at"] = "2999-01-01T00:00:00+00:00"
    (second / layout.RUN_FILE).write_text(json.dumps(body))
    found = [p for p in doctor.find_problems() if "duplicate" in p.problem]
    assert [(Path(p.path).name, p.kind) for p in found] == [(second.name, "run")]
    assert first in found[0].problem
    assert cli_main(["doctor", "--quick"]) == 1
    assert second.name in capsys.readouterr().out


def test_doctor_names_a_half_run_and_a_moderation_dated_in_the_future(
    demo: Path, admin: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _submitted("Half written", 4)
    moderation.moderate("hide", rid, admin)
    (layout.run_dir(rid) / layout.PREDICTIONS_FILE).unlink()  # only run.json (and labels) left
    log = layout.submissions_root() / "moderation.jsonl"
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"at": "2099-01-01T00:00:00+00:00", "action": "hide", "runs": [rid]}))
        fh.write("\n{not json\n")
    found = {(p.kind, p.problem.split(" (")[0]) for p in doctor.find_problems()}
    assert ("run", "predictions.parquet is missing") in found
    assert ("moderation", "dated 2099-01-01T00:00:00+00:00, in the future") in found
    assert ("moderation", "unreadable entry") in found
    assert cli_main(["doctor", "--quick"]) == 1
    out = capsys.readouterr().out
    assert "moderation.jsonl:2" in out and "moderation.jsonl:3" in out
    assert json.loads((layout.run_dir(rid) / layout.RUN_FILE).read_text())["hidden"]
