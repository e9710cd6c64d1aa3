"""Run folders (staged, immutable, validated on read), the demo, and the evaluator CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from sklearn import metrics as skm

from evaluator.cli.main import main
from evaluator.core.errors import CorruptRunError, FactBoardError
from evaluator.core.types import Counts, ModelInfo, RunRecord, ThresholdInfo
from evaluator.ingest import pipeline
from evaluator.ingest.demo import build_demo
from evaluator.store import ingested, runs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def demo_root(tmp_data_root: Path) -> Path:
    list(build_demo(root=tmp_data_root))
    return tmp_data_root


def _record(run_id: str = "toy-model-1") -> RunRecord:
    return RunRecord(
        run_id=run_id,
        benchmark="demo",
        benchmark_version="v",
        created_at="t",
        model=ModelInfo(name="m", kind="baseline"),
        origin="submitted",
        threshold=ThresholdInfo(policy="labels"),
        splits=["test"],
        counts=Counts(n=1, predicted=1, missing=0),
    )


def test_write_and_read_a_run(tmp_data_root: Path) -> None:
    preds = pd.DataFrame({"sample_id": ["a", "b"], "label": [1, 0], "score": [0.3, None]})
    path = runs.write_run(_record(), preds)
    assert path == tmp_data_root / "runs" / "toy-model-1"
    assert runs.read_record(path) == _record()
    back = runs.read_predictions(path)
    assert back["sample_id"].tolist() == ["a", "b"]
    assert back["label"].tolist() == [1, 0]
    assert not any((tmp_data_root / "_staging").iterdir())
    with pytest.raises(FactBoardError, match="already exists; runs are immutable"):
        runs.write_run(_record(), preds)


def test_a_crash_while_writing_leaves_no_run(
    tmp_data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*a: object, **k: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(runs, "_write_json", boom)
    with pytest.raises(OSError, match="disk full"):
        runs.write_run(_record(), pd.DataFrame({"sample_id": ["a"], "label": [1]}))
    assert list((tmp_data_root / "runs").iterdir()) == []
    assert list((tmp_data_root / "_staging").iterdir()) == []


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda d: (d / "run.json").write_text("{not json"), "run.json is not valid JSON"),
        (lambda d: (d / "run.json").unlink(), "run.json is missing"),
        (lambda d: (d / "predictions.parquet").unlink(), "predictions.parquet is missing"),
        (
            lambda d: (d / "run.json").write_text(json.dumps({"run_id": "x"})),
            "run.json field 'benchmark'",
        ),
    ],
)
def test_corrupt_runs_are_reported_not_listed(tmp_data_root: Path, damage, message) -> None:
    d = runs.write_run(_record(), pd.DataFrame({"sample_id": ["a"], "label": [1]}))
    runs.write_run(_record("toy-model-2"), pd.DataFrame({"sample_id": ["a"], "label": [1]}))
    damage(d)
    listing = runs.list_runs()
    assert [r.run_id for r in listing.runs] == ["toy-model-2"]
    assert len(listing.problems) == 1 and message in str(listing.problems[0])
    with pytest.raises(CorruptRunError, match=message):
        runs.read_record(d)


def test_hide_and_delete(tmp_data_root: Path) -> None:
    runs.write_run(_record(), pd.DataFrame({"sample_id": ["a"], "label": [1]}))
    runs.set_hidden("toy-model-1", True)
    assert runs.list_runs().runs == []
    assert [r.run_id for r in runs.list_runs(include_hidden=True).runs] == ["toy-model-1"]
    runs.delete_run("toy-model-1")
    assert runs.list_runs(include_hidden=True).runs == []
    with pytest.raises(FactBoardError, match="invalid run id"):
        runs.find_run("../etc")


def test_demo_builds_a_board(demo_root: Path) -> None:
    meta = ingested.load_meta("demo", demo_root)
    assert meta["synthetic"] is True and meta["stats"]["n_samples"] == 294
    listing = runs.list_runs(demo_root, benchmark="demo")
    assert {r.model.name for r in listing.runs} == {
        "Always consistent",
        "Random guess (seed 0)",
        "Summary-token precision",
        "Novel numbers & names",
    }
    for r in listing.runs:
        assert r.benchmark_version == meta["version"]
        assert r.result("balanced_accuracy").coverage == ["meeting", "news", "science"]
    always = next(r for r in listing.runs if r.model.name == "Always consistent")
    assert always.result("balanced_accuracy").value == 0.5
    # rebuilding is a no-op: same version, same runs
    again = list(build_demo(root=demo_root))
    assert all("present" in line for line in again[1:])
    assert len(runs.list_runs(demo_root).runs) == 4


def test_committed_demo_is_current() -> None:
    """The demo shipped in leaderboard_data/ is exactly what the generator makes."""
    from evaluator.ingest.demo import DEMO_SOURCE, release_records

    for domain, recs in release_records().items():
        assert json.loads((DEMO_SOURCE / f"demo_{domain}.json").read_text()) == recs
    shipped = ingested.load_meta("demo", REPO / "leaderboard_data")
    table = pipeline.samples_table(
        __import__("evaluator.benchmarks", fromlist=["get"]).get("demo"),
        pipeline.__dict__["registry"].get("demo").loader(DEMO_SOURCE).samples,
    )
    assert pipeline.version_of(table) == shipped["version"]
    shipped_runs = runs.list_runs(REPO / "leaderboard_data", benchmark="demo").runs
    assert len(shipped_runs) == 4
    assert all(r.benchmark_version == shipped["version"] for r in shipped_runs)


def test_reingest_unchanged_is_a_noop_and_changed_swaps(demo_root: Path) -> None:
    from evaluator.ingest.demo import DEMO_SOURCE

    before = (demo_root / "benchmarks" / "demo" / "samples.parquet").stat().st_mtime_ns
    rep = pipeline.ingest("demo", DEMO_SOURCE, root=demo_root)
    assert rep.changed is False
    assert (demo_root / "benchmarks" / "demo" / "samples.parquet").stat().st_mtime_ns == before


def test_cli_score_makes_a_run_matching_sklearn(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = ingested.load_samples("demo", demo_root)
    rng = np.random.default_rng(0)
    preds = pd.DataFrame(
        {
            "sample_id": samples["sample_id"],
            "label": np.where(
                rng.random(len(samples)) < 0.8, samples["label"], 1 - samples["label"]
            ),
        }
    )
    f = tmp_path / "preds.csv"
    preds.to_csv(f, index=False)
    args = [
        "score",
        str(f),
        "--benchmark",
        "demo",
        "--model-name",
        "My detector",
        "--resamples",
        "200",
        "--seed",
        "3",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "balanced_accuracy" in out
    rec = next(r for r in runs.list_runs(demo_root).runs if r.model.name == "My detector")
    test = samples[samples["split"] == "test"].merge(preds, on="sample_id")
    per = [
        skm.balanced_accuracy_score(g["label_x"], g["label_y"]) for _, g in test.groupby("domain")
    ]
    assert rec.result("balanced_accuracy").value == pytest.approx(np.mean(per))
    # scored by the CLI: "evaluated" unless told otherwise (only the submit path is "submitted")
    assert rec.origin == "evaluated" and rec.submission and "file_sha256" in rec.submission
    # same seed: same CIs
    assert main(args) == 0
    recs = [r for r in runs.list_runs(demo_root).runs if r.model.name == "My detector"]
    assert recs[0].results == recs[1].results and recs[0].run_id != recs[1].run_id
    stored = pq.read_table(demo_root / "runs" / rec.run_id / "predictions.parquet").to_pandas()
    assert len(stored) == len(preds)


def test_cli_errors_have_messages_and_exit_codes(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("sample_id,label\ndemo-news-00_og,maybe\nnope,1\n")
    before = sorted(p.name for p in (demo_root / "runs").iterdir())
    assert main(["score", str(bad), "--benchmark", "demo", "--model-name", "xy"]) == 1
    err = capsys.readouterr().err
    assert "line 2: label 'maybe'" in err and "'nope' (line 3)" in err
    assert main(["score", str(bad), "--benchmark", "nosuch", "--model-name", "xy"]) == 1
    assert "unknown benchmark 'nosuch'; known: " in capsys.readouterr().err
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    assert main(["score", str(empty), "--benchmark", "demo", "--model-name", "xy"]) == 1
    assert "the file is empty" in capsys.readouterr().err
    assert (
        main(["score", str(tmp_path / "absent.csv"), "--benchmark", "demo", "--model-name", "xy"])
        == 1
    )
    assert sorted(p.name for p in (demo_root / "runs").iterdir()) == before
    with pytest.raises(SystemExit) as e:
        main(["score"])
    assert e.value.code == 2


def test_cli_runs_and_export(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "--benchmark", "demo"]) == 0
    out = capsys.readouterr().out
    assert "Always consistent" in out and "balanced_accuracy=0.500" in out
    assert (
        main(["export", "--format", "csv", "--benchmark", "demo", "--metric", "balanced_accuracy"])
        == 0
    )
    csv_text = capsys.readouterr().out
    df = pd.read_csv(__import__("io").StringIO(csv_text))
    assert set(df["model"]) >= {"Always consistent"} and (df["metric"] == "balanced_accuracy").all()
    assert main(["export", "--format", "latex", "--benchmark", "demo"]) == 0
    tex = capsys.readouterr().out
    assert tex.startswith("\\begin{tabular}") and "Novel numbers \\& names" in tex
    assert (
        main(
            [
                "export",
                "--format",
                "json",
                "--benchmark",
                "summedits",
                "--metric",
                "balanced_accuracy",
            ]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert any(r["origin"] == "reported" and r["model"] in ("GPT-4", "GPT4") for r in rows)


def test_cli_as_a_subprocess(demo_root: Path) -> None:
    env = {**os.environ, "FACTBOARD_DATA": str(demo_root)}
    p = subprocess.run(
        [sys.executable, "-m", "evaluator", "benchmarks"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    assert "demo" in p.stdout and "ingested" in p.stdout
    p = subprocess.run(
        [sys.executable, "-m", "evaluator", "ingest", "nosuch", "--from", "x"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1 and "unknown benchmark 'nosuch'" in p.stderr


def test_export_neutralises_formula_cells() -> None:
    from evaluator.store.export import to_csv

    df = pd.DataFrame(
        {
            "model": ['=HYPERLINK("x")', "+1+cmd|' /C calc'!A0", "@cmd", "ok", "-2*A1"],
            "value": [0.1, -0.2, 0.3, 0.4, 0.5],
            "note": ["-0.5 (tuned on dev)", "+1", "-2", "-1e-3", "-3 (x=1)"],
        }
    )
    text = to_csv(df)
    assert "'=HYPERLINK" in text and "'+1+cmd" in text and "'@cmd" in text and "'-2*A1" in text
    assert ",-0.2" in text  # numbers stay numbers
    # text that is a signed number (with a plain note) is not a formula: left as it is
    for cell in ("-0.5 (tuned on dev)", "+1", "-2", "-1e-3"):
        assert f",{cell}\n" in text
    assert ",'-3 (x=1)" in text  # an operator inside the note: neutralised


def test_a_failed_reingest_leaves_the_previous_version_intact(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaluator.ingest.demo import DEMO_SOURCE

    bench = demo_root / "benchmarks" / "demo"
    before = {p.name: p.read_bytes() for p in bench.iterdir()}
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in DEMO_SOURCE.glob("demo_*.json"):
        (broken / f.name).write_bytes(f.read_bytes())
    recs = json.loads((broken / "demo_news.json").read_text())
    recs[3]["label"] = 2
    (broken / "demo_news.json").write_text(json.dumps(recs))
    assert main(["ingest", "demo", "--from", str(broken)]) == 1
    err = capsys.readouterr().err
    assert "demo_news.json" in err and "label" in err and "demo-news-00_2" in err
    truncated = broken / "demo_news.json"
    truncated.write_text(json.dumps(recs)[:500])
    assert main(["ingest", "demo", "--from", str(broken)]) == 1
    assert "demo_news.json" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in bench.iterdir()} == before
    assert not any((demo_root / "_staging").glob("bench-*"))


def test_a_crash_while_swapping_keeps_the_old_benchmark(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.ingest.demo import release_records

    bench = demo_root / "benchmarks" / "demo"
    before = (bench / "samples.parquet").read_bytes()
    src = demo_root.parent / "changed"
    src.mkdir()
    for domain, recs in release_records().items():
        recs[0]["summary"] = recs[0]["summary"] + " (changed)"
        (src / f"demo_{domain}.json").write_text(json.dumps(recs))
    real_rename = os.rename
    calls = {"n": 0}

    def flaky_rename(a: object, b: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the new folder's rename into place
            raise OSError("simulated crash")
        real_rename(a, b)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline.os, "rename", flaky_rename)
    with pytest.raises(OSError, match="simulated crash"):
        pipeline.ingest("demo", src, root=demo_root)
    monkeypatch.setattr(pipeline.os, "rename", real_rename)
    assert (bench / "samples.parquet").read_bytes() == before
    rep = pipeline.ingest("demo", src, root=demo_root)
    assert rep.changed and (bench / "samples.parquet").read_bytes() != before


def test_superseded_follows_chains_and_ignores_hidden_successors() -> None:
    assert runs.superseded([("a", None, False), ("b", "a", False), ("c", "b", False)]) == {
        "a",
        "b",
    }
    assert runs.superseded([("a", None, False), ("b", "a", False), ("c", "b", True)]) == {"a"}
    assert runs.superseded([("a", None, False), ("b", "a", True), ("c", "b", False)]) == {
        "a",
        "b",
    }
    assert runs.superseded([("a", None, False), ("b", "a", True)]) == set()
    # a cycle (hand-edited run.json files) ends the walk instead of looping
    assert runs.superseded([("a", "b", False), ("b", "a", False)]) == {"a", "b"}
