"""A run's numbers must follow from its predictions and the benchmark's samples: a run written
elsewhere (pulled, copied in, imported) that claims what its predictions do not give is named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evaluator.cli.main import main
from evaluator.store import doctor, runs
from evaluator.verify import verify_run
from tests.support import testdata


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("demo") / "leaderboard_data")
    testdata.add_run(r, "demo", "Scored honestly", accuracy=0.7, seed=4, scores=True)
    return r


@pytest.fixture
def root(demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return testdata.own_copy(demo_root, tmp_path, monkeypatch)


def _edit(run_dir: Path, fn: Any) -> None:
    rec = json.loads((run_dir / "run.json").read_text())
    fn(rec)
    (run_dir / "run.json").write_text(json.dumps(rec))


def test_every_stored_run_follows_from_its_predictions(root: Path) -> None:
    for r in runs.list_runs(root).runs:
        d = runs.find_run(r.run_id, root)
        assert verify_run(d, root) == [], r.run_id
        assert verify_run(d, root, full=True) == [], r.run_id
    assert doctor.verify_problems(root) == []


def test_a_run_claiming_numbers_its_predictions_do_not_give_is_named(root: Path) -> None:
    d = runs.find_run(runs.list_runs(root).runs[0].run_id, root)

    def inflate(rec: dict[str, Any]) -> None:
        for r in rec["results"]:
            if r["metric"] == "balanced_accuracy":
                r.update(value=0.99, ci_low=0.98, ci_high=0.995)

    _edit(d, inflate)
    [problem] = verify_run(d, root)
    assert "differ from what its predictions score" in problem and "recorded 0.99" in problem
    assert [p.path for p in doctor.verify_problems(root)] == [str(d)]


def test_a_run_carrying_another_benchmark_s_predictions_is_named(
    root: Path, shared_benchmarks: Path
) -> None:
    """A run whose predictions belong to another benchmark, claiming 0.99 [0.98, 0.995], led
    the front page "significantly ahead of every other run"; doctor reported 0 problems."""
    from evaluator.ingest import pipeline

    pipeline.ingest("summedits", shared_benchmarks / "summedits", root=root)
    theirs = testdata.add_run(root, "summedits", "Other benchmark", accuracy=0.6, seed=1)
    d = runs.find_run(runs.list_runs(root, benchmark="demo").runs[0].run_id, root)
    shutil.copy(theirs / "predictions.parquet", d / "predictions.parquet")
    found = verify_run(d, root)
    assert found and "do not score on demo" in found[0]
    assert any(p.path == str(d) for p in doctor.find_problems(root, verify=True))


def test_cli_doctor_verifies_unless_quick(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(root.parent / "submissions"))
    assert main(["doctor"]) == 0
    d = runs.find_run(runs.list_runs(root).runs[0].run_id, root)
    _edit(d, lambda rec: rec["results"][0].update(value=rec["results"][0]["value"] / 2))
    assert main(["doctor", "--quick"]) == 0
    capsys.readouterr()
    assert main(["doctor"]) == 1
    assert "differ from what its predictions score" in capsys.readouterr().out
