"""Every Eval Ever export: every file validates against the schemas (on the demo and on the
shared benchmarks), carries what the run knows, and comes back as the same numbers (round trip)."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pandas as pd
import pytest

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.cli.main import main
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import ModelInfo, RunConfig, RunRecord
from evaluator.core.vocabulary import ORIGIN_BADGES, ORIGINS
from evaluator.ingest import pipeline
from evaluator.interop import eee
from evaluator.interop.export import (
    eee_zip,
    export_runs,
    reported_files,
    run_files,
    run_ids,
    write_files,
)
from evaluator.interop.importer import import_eee
from evaluator.store import export as store_export
from evaluator.store import ingested, layout, runs
from tests.support.testdata import (
    add_run,
    build_demo_root,
    human_grades,
    judge_grades,
    without_runs,
)

SCHEMAS = Path(eee.__file__).resolve().parent / "schemas"
UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def _validator(name: str) -> jsonschema.Draft7Validator:
    schema = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


RECORD = _validator("eval.schema.json")
INSTANCE = _validator("instance_level_eval.schema.json")


def check_export(out: Path, records: list[Path]) -> list[tuple[dict[str, Any], list[dict]]]:
    """Every record and every line validates; the samples file is where the record says, with
    the checksum and row count it states. Returns (record, lines) per record."""
    assert records
    back = []
    for f in records:
        rel = f.relative_to(out).as_posix()
        assert rel.startswith("data/") and len(rel.split("/")) == 5, rel
        record = json.loads(f.read_text(encoding="utf-8"))
        RECORD.validate(record)
        pointer = record["detailed_evaluation_results"]
        samples = out / pointer["file_path"]
        assert samples.parent == f.parent and samples.name == f.stem + "_samples.jsonl"
        body = samples.read_bytes()
        assert hashlib.sha256(body).hexdigest() == pointer["checksum"]
        lines = [json.loads(x) for x in body.decode("utf-8").splitlines()]
        assert len(lines) == pointer["total_rows"] > 0
        for line in lines:
            INSTANCE.validate(line)
            assert line["evaluation_id"] == record["evaluation_id"]
            assert line["model_id"] == record["model_info"]["id"]
        back.append((record, lines))
    return back


def assert_same_numbers(a: RunRecord, b: RunRecord) -> None:
    """Per-slice numbers equal: value, CI, n, coverage, for every (slice, metric, grader)."""
    assert b.benchmark == a.benchmark and b.splits == a.splits
    assert b.threshold == a.threshold and b.counts == a.counts
    assert [r.model_dump() for r in b.results] == [r.model_dump() for r in a.results]
    assert len(a.results) > 0


# ------------------------------------------------------------------------------------------
# the demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_demo_root(tmp_path_factory.mktemp("demo") / "data", reported=False)
    add_run(root, "demo", "Scorer with explanations", scores=True, explanations=True, seed=3)
    return root


@pytest.fixture(scope="module")
def demo_export(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("eee")
    return out, export_runs(run_ids(root=demo), out, demo)


def test_every_demo_export_validates(demo: Path, demo_export: tuple[Path, list[Path]]) -> None:
    out, records = demo_export
    assert len(records) == len(runs.list_runs(demo).runs) == 5
    for record, lines in check_export(out, records):
        assert record["schema_version"] == "0.3.0"
        assert record["eval_library"]["name"] == "factboard"
        rid = record["source_metadata"]["additional_details"]["factboard_run_id"]
        rec = runs.read_record(runs.find_run(rid, demo))
        preds = runs.read_predictions(runs.find_run(rid, demo))
        # one line per stored prediction (the dev rows that tuned a threshold included)
        assert sorted(x["sample_id"] for x in lines) == sorted(preds["sample_id"])
        assert {x["metadata"]["split"] for x in lines} == {"dev", "test"}
        assert len(record["evaluation_results"]) == len(rec.results)
        assert record["model_info"]["name"] == rec.model.name
        assert record["source_metadata"]["additional_details"]["factboard_origin"] == rec.origin


def test_a_result_carries_its_ci_n_slice_and_threshold(
    demo: Path, demo_export: tuple[Path, list[Path]]
) -> None:
    out, records = demo_export
    record = next(
        json.loads(f.read_text())
        for f in records
        if json.loads(f.read_text())["model_info"]["name"] == "Scorer with explanations"
    )
    rid = record["source_metadata"]["additional_details"]["factboard_run_id"]
    rec = runs.read_record(runs.find_run(rid, demo))
    assert rec.threshold.policy == "dev" and rec.threshold.threshold is not None
    want = rec.result("balanced_accuracy", "domain", "news")
    got = next(
        r
        for r in record["evaluation_results"]
        if r["evaluation_result_id"] == "test/summary/domain=news/balanced_accuracy"
    )
    assert got["score_details"]["score"] == want.value
    unc = got["score_details"]["uncertainty"]
    assert unc["num_samples"] == want.n
    assert unc["confidence_interval"]["lower"] == want.ci_low
    assert unc["confidence_interval"]["upper"] == want.ci_high
    assert unc["confidence_interval"]["confidence_level"] == 0.95
    assert unc["num_bootstrap_samples"] == 200
    mc = got["metric_config"]
    assert mc["metric_id"] == "balanced_accuracy" and mc["lower_is_better"] is False
    assert mc["metric_parameters"]["threshold_policy"] == "dev"
    assert mc["metric_parameters"]["threshold"] == rec.threshold.threshold
    assert mc["additional_details"]["slice_kind"] == "domain"
    assert got["generation_config"]["additional_details"] == {"detector": "synthetic"}
    fpr = next(
        r
        for r in record["evaluation_results"]
        if r["metric_config"]["metric_id"] == "false_positive_rate"
    )
    assert fpr["metric_config"]["lower_is_better"] is True


def test_sample_lines_carry_prediction_final_label_and_explanation(
    demo: Path, demo_export: tuple[Path, list[Path]]
) -> None:
    out, records = demo_export
    for record, lines in check_export(out, records):
        if record["model_info"]["name"] != "Scorer with explanations":
            continue
        rid = record["source_metadata"]["additional_details"]["factboard_run_id"]
        d = runs.find_run(rid, demo)
        rec, preds = runs.read_record(d), runs.read_predictions(d).set_index("sample_id")
        samples = ingested.load_samples("demo", demo).set_index("sample_id")
        t = rec.threshold.threshold
        assert t is not None
        for line in lines:
            sid = line["sample_id"]
            score = float(preds.loc[sid, "score"])
            meta = line["metadata"]
            assert float(meta["fb_score"]) == score
            assert meta["fb_final_label"] == str(int(score >= t))
            assert meta["fb_explanation"] == preds.loc[sid, "explanation"]
            gold = int(samples.loc[sid, "label"])
            assert line["input"]["raw"] == samples.loc[sid, "summary"]
            assert line["input"]["reference"] == [["inconsistent", "consistent"][gold]]
            assert line["evaluation"]["is_correct"] == (int(score >= t) == gold)
            scored = samples.loc[sid, "split"] == "test"
            assert ("evaluation_result_id" in line) == scored
        return
    raise AssertionError("the run with explanations was not exported")


def test_demo_round_trip_into_a_fresh_root_gives_the_same_numbers(
    demo: Path, demo_export: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    out, _ = demo_export
    fresh = without_runs(build_demo_root(tmp_path / "fresh", reported=False))
    before = {r.run_id for r in runs.list_runs(fresh).runs}
    items = import_eee(out, root=fresh)
    assert len(items) == 5 and {i.kind for i in items} == {"run"}
    for item in items:
        assert item.path is not None
        new = runs.read_record(item.path)
        assert new.run_id not in before and new.origin == "imported"
        original_id = (new.submission or {})["original_run_id"]
        original = runs.read_record(runs.find_run(original_id, demo))
        assert_same_numbers(original, new)
        assert new.model == original.model and new.config == original.config
        assert new.submission is not None
        assert new.submission["source"] == "Every Eval Ever record"
        assert new.submission["evaluation_id"] == item.evaluation_id
        assert item.notes == [f"all {len(original.results)} numbers of the record reproduced"]
        # the predictions themselves came back (score floats bit for bit)
        a = runs.read_predictions(runs.find_run(original_id, demo))
        b = runs.read_predictions(item.path)
        pd.testing.assert_frame_equal(
            a.sort_values("sample_id").reset_index(drop=True),
            b.sort_values("sample_id").reset_index(drop=True),
        )


def test_an_imported_run_exports_again_with_its_source(
    demo: Path, demo_export: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    out, records = demo_export
    fresh = without_runs(build_demo_root(tmp_path / "fresh", reported=False))
    item = import_eee(records[0], root=fresh)[0]
    assert item.path is not None
    again = run_files(item.path.name, fresh)
    RECORD.validate(again.record)
    details = again.record["source_metadata"]["additional_details"]
    assert details["factboard_origin"] == "imported"
    assert details["imported_evaluation_id"] == item.evaluation_id
    assert "imported" in ORIGINS and ORIGIN_BADGES["imported"]


def test_the_zip_holds_the_same_files_as_the_folder(
    demo: Path, demo_export: tuple[Path, list[Path]]
) -> None:
    out, records = demo_export
    ids = run_ids("demo", demo)[:2]
    z = zipfile.ZipFile(io.BytesIO(eee_zip(ids, demo)))
    names = sorted(z.namelist())
    assert len(names) == 4 and all(n.startswith("data/demo/") for n in names)
    for n in names:
        assert (out / n).is_file()
        if n.endswith("_samples.jsonl"):  # the record differs only in retrieved_timestamp
            assert z.read(n) == (out / n).read_bytes()
        else:
            RECORD.validate(json.loads(z.read(n)))


def test_cli_export_eee(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("FACTBOARD_DATA", str(demo))
    rid = run_ids("demo", demo)[0]
    assert main(["export", "--format", "eee", "--run", rid, "-o", str(tmp_path / "o")]) == 0
    written = [Path(p) for p in capsys.readouterr().out.split()]
    assert len(written) == 1
    check_export(tmp_path / "o", written)
    assert main(["export", "--format", "eee", "--benchmark", "demo"]) == 1
    assert "give it with -o DIR" in capsys.readouterr().err
    assert (
        main(["export", "--format", "eee", "--benchmark", "demo", "-o", str(tmp_path / "b")]) == 0
    )
    assert len(list((tmp_path / "b").rglob("*.json"))) == 5


# ------------------------------------------------------------------------------------------
# the shared benchmarks (each ingests in a few seconds)


def _correlation_run(root: Path, benchmark: str) -> Path:
    spec = registry.get(benchmark)
    samples = ingested.load_samples(benchmark, root)
    s = samples[samples["unit"] == "summary"]
    rng = np.random.default_rng(0)
    preds = pd.DataFrame(
        {"sample_id": s["sample_id"], "score": s["human_score"] + rng.normal(0, 0.2, len(s))}
    )
    return scorer.score_to_run(
        spec,
        ingested.load_meta(benchmark, root)["version"],
        samples,
        preds,
        ModelInfo(name="Noisy oracle", kind="baseline", org="FactBoard tests"),
        "evaluated",
        RunConfig(detector="noisy-oracle", checkpoint="factboard/noisy-oracle"),
        ScoreOptions(resamples=100),
        None,
        root,
    )


def _judged_run(root: Path, benchmark: str) -> Path:
    human = human_grades(root, benchmark)
    grades = pd.concat([human, judge_grades(human)], ignore_index=True)
    grades.loc[grades.index[-1], "grade"] = np.nan  # an unparsable judge reply
    return add_run(root, benchmark, "Judged LLM", explanations=True, grades=grades)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["qags", "longsciverify", "summedits", "tofueval", "factcc_explanations"]
)
def test_exports_of_shared_benchmarks_validate_and_round_trip(
    name: str, shared_benchmarks: Path, tmp_path: Path
) -> None:
    root = tmp_path / "data"
    (root / "benchmarks").mkdir(parents=True)
    spec = registry.get(name)
    assert spec.release_folder
    pipeline.ingest(name, shared_benchmarks / spec.release_folder, root=root)
    if spec.task == "correlation":
        _correlation_run(root, name)
    elif spec.task == "detection":
        add_run(root, name, "Scores", scores=True, seed=1)
        add_run(root, name, "Labels", seed=2)
    # factcc_explanations: its released runs carry human grades of explanations
    ids = run_ids(name, root)
    assert ids
    out = tmp_path / "eee"
    records = export_runs(ids, out, root)
    exported = check_export(out, records)
    if name == "factcc_explanations":
        assert any(x["metadata"]["fb_line"] == "grade" for _, lines in exported for x in lines)
    other = tmp_path / "other"
    shutil.copytree(root, other)
    for item in import_eee(out, root=without_runs(other)):
        assert item.path is not None
        new = runs.read_record(item.path)
        original = runs.read_record(runs.find_run((new.submission or {})["original_run_id"], root))
        assert_same_numbers(original, new)
        if runs.read_grades(runs.find_run(original.run_id, root)) is not None:
            pd.testing.assert_frame_equal(
                runs.read_grades(runs.find_run(original.run_id, root)),
                runs.read_grades(item.path),
            )


def test_explanation_grades_round_trip_on_a_detection_and_explanation_run(
    demo: Path, tmp_path: Path
) -> None:
    root = build_demo_root(tmp_path / "d", reported=False)
    path = _judged_run(root, "demo")
    files = run_files(path.name, root)
    lines = [json.loads(x) for x in files.samples.decode().splitlines()]
    grade_lines = [x for x in lines if x["metadata"]["fb_line"] == "grade"]
    assert {x["metadata"]["fb_protocol"] for x in grade_lines} == {"human", "EvalV4"}
    assert sum("error" in x for x in grade_lines) == 1
    out = tmp_path / "eee"
    export_runs([path.name], out, root)
    other = tmp_path / "other"
    shutil.copytree(root, other)
    item = import_eee(out, root=without_runs(other))[0]
    assert item.path is not None
    assert_same_numbers(runs.read_record(path), runs.read_record(item.path))
    a, b = runs.read_grades(path), runs.read_grades(item.path)
    assert a is not None and b is not None
    pd.testing.assert_frame_equal(a, b)


# ------------------------------------------------------------------------------------------
# published numbers


def test_published_numbers_export_as_documentation_records_that_validate() -> None:
    repo_data = layout.REPO_ROOT / "leaderboard_data"
    files = reported_files(root=repo_data, retrieved="1732400000")
    rows = store_export.reported_rows(repo_data)
    rows = rows[pd.to_numeric(rows["value"], errors="coerce").notna()]
    results = 0
    for rel, body in files.items():
        assert rel.startswith("data/") and rel.endswith(".json") and len(rel.split("/")) == 5
        record = json.loads(body)
        RECORD.validate(record)
        assert record["source_metadata"]["source_type"] == "documentation"
        assert "detailed_evaluation_results" not in record
        results += len(record["evaluation_results"])
    assert results == len(rows) > 1000
    assert len(files) == len(rows.groupby(["benchmark", "model", "kind", "source", "note"]))


def test_published_numbers_round_trip(tmp_path: Path) -> None:
    root = build_demo_root(tmp_path / "a", reported=False)
    (root / "reported").mkdir()
    published = pd.DataFrame(
        {
            "model": ["GPT-4", "GPT-4", "SummaC"],
            "kind": ["proprietary-llm", "proprietary-llm", "non-llm"],
            "benchmark": "demo",
            "split": "test",
            "unit": "summary",
            "slice_kind": ["overall", "domain", "overall"],
            "slice_value": ["", "news", ""],
            "metric": ["balanced_accuracy", "balanced_accuracy", "fpr"],
            "value": [0.81, 0.775, 0.3],
            "n": [210, 70, None],
            "coverage": ["news;meeting;science", "", ""],
            "source": ["Demo paper, Table 1", "Demo paper, Table 1", "Demo paper, Table 2"],
            "note": ["prompt=ZS; zero-shot", "prompt=ZS; zero-shot", ""],
        }
    )
    published.to_csv(root / "reported" / "demo_paper.csv", index=False)
    out = tmp_path / "eee"
    records = write_files(reported_files("demo", root), out)
    assert len(records) == 2
    fresh = build_demo_root(tmp_path / "b", reported=False)
    items = import_eee(out, root=fresh)
    assert [i.kind for i in items] == ["reported", "reported"]
    back = store_export.reported_rows(fresh, "demo").sort_values(["model", "slice_value"])
    want = store_export.reported_rows(root, "demo").sort_values(["model", "slice_value"])
    same = ["model", "kind", "split", "unit", "slice_kind", "slice_value", "metric", "value", "n"]
    pd.testing.assert_frame_equal(
        back[same].reset_index(drop=True), want[same].reset_index(drop=True), check_dtype=False
    )
    assert back["coverage"].tolist() == want["coverage"].tolist()
    assert back["source"].tolist() == [
        "Demo paper, Table 1 (Every Eval Ever record)",
        "Demo paper, Table 1 (Every Eval Ever record)",
        "Demo paper, Table 2 (Every Eval Ever record)",
    ]
    assert all("prompt=ZS" in n for n in back["note"].iloc[:2])


def test_the_zip_can_carry_the_published_numbers_shown(demo: Path, tmp_path: Path) -> None:
    root = build_demo_root(tmp_path / "a", reported=False)
    (root / "reported").mkdir()
    pd.DataFrame(
        [["GPT-4", "proprietary-llm", "demo", "test", "summary", "overall", "", "accuracy", 0.8]],
        columns=["model", "kind", "benchmark", "split", "unit", "slice_kind", "slice_value"]
        + ["metric", "value"],
    ).to_csv(root / "reported" / "x.csv", index=False)
    z = zipfile.ZipFile(io.BytesIO(eee_zip(run_ids("demo", root)[:1], root, "demo")))
    assert len(z.namelist()) == 3
    assert sum("/unknown/GPT-4/" in n for n in z.namelist()) == 1
    assert eee_zip([], root, "demo")
    with pytest.raises(FactBoardError, match="nothing to export"):
        eee_zip([], root)


def test_cli_export_eee_with_published_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    root = build_demo_root(tmp_path / "a", reported=False)
    (root / "reported").mkdir()
    pd.DataFrame(
        [["GPT-4", "proprietary-llm", "demo", "test", "summary", "overall", "", "accuracy", 0.8]],
        columns=["model", "kind", "benchmark", "split", "unit", "slice_kind", "slice_value"]
        + ["metric", "value"],
    ).assign(source="Demo paper, Table 1", note="").to_csv(root / "reported" / "x.csv", index=False)
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    out = tmp_path / "o"
    assert (
        main(["export", "--format", "eee", "--benchmark", "demo", "--reported", "-o", str(out)])
        == 0
    )
    written = capsys.readouterr().out.split()
    assert len(written) == 5
    documentation = [
        json.loads(Path(p).read_text())
        for p in written
        if json.loads(Path(p).read_text())["source_metadata"]["source_type"] == "documentation"
    ]
    assert [d["source_metadata"]["source_name"] for d in documentation] == ["Demo paper, Table 1"]


def test_an_export_that_would_not_validate_is_an_error_not_a_file(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.interop import export as X

    real = X.sample_lines

    def broken(*args: Any) -> list[dict[str, Any]]:
        lines = real(*args)
        lines[7]["answer_attribution"][0]["turn_idx"] = -1
        return lines

    monkeypatch.setattr(X, "sample_lines", broken)
    with pytest.raises(
        eee.SchemaViolation,
        match=r"(?s)line 8 of the samples file .*turn_idx: -1 is less than the minimum of 0",
    ):
        export_runs(run_ids("demo", demo)[:1], tmp_path / "o", demo)
    assert not (tmp_path / "o").exists()
