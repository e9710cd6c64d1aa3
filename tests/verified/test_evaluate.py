"""evaluator.evaluate: a detector given as a plain function (or an object with `score`) is
scored like FactBoard's own, and its numbers equal the engine's score of the same predictions."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

import evaluator
from evaluator import runner
from evaluator.benchmarks import registry
from evaluator.core.errors import DetectorError
from evaluator.core.scoring import ScoreOptions, score
from evaluator.store import runs
from evaluator.submissions.service import SubmissionMeta
from evaluator.submissions.validation import parse_predictions

WORD = re.compile(r"\w+")


def overlap(documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
    """Share of the summary's words found in the document."""
    out = []
    for d, s in zip(documents, summaries, strict=True):
        vocab = set(WORD.findall(d.lower()))
        words = WORD.findall(s.lower())
        out.append(sum(w in vocab for w in words) / len(words) if words else 1.0)
    return out


def _rows(benchmark: str, root: Path, splits: Sequence[str]) -> pd.DataFrame:
    inputs = runner.load_inputs(benchmark, root)
    rows = runner.select_samples(inputs.samples, inputs.spec.units[0], splits)
    return rows[rows["document"].notna()]


def _same(a: Sequence[object], b: Sequence[object]) -> None:
    assert [r.model_dump() for r in a] == [r.model_dump() for r in b]  # type: ignore[attr-defined]


def test_a_plain_function_scores_as_the_engine_scores_its_predictions(demo_root: Path) -> None:
    calls: list[int] = []

    def score_fn(documents: list[str], summaries: list[str]) -> list[float]:
        calls.append(len(documents))
        return overlap(documents, summaries)

    result = evaluator.evaluate(score_fn, "demo", root=demo_root, batch_size=16, progress=False)

    # the same predictions, made outside FactBoard, scored by the engine
    rows = _rows("demo", demo_root, ["dev", "test"])
    mine = pd.DataFrame(
        {
            "sample_id": rows["sample_id"].astype(str).tolist(),
            "score": overlap(rows["document"].tolist(), rows["summary"].tolist()),
        }
    )
    expected = score(
        registry.get("demo"),
        runner.load_inputs("demo", demo_root).samples,
        mine,
        ScoreOptions(splits=("test",)),
    )
    _same(result.results, expected.results)
    assert result.scored.threshold == expected.threshold
    assert result.scored.threshold.policy == "dev"  # tuned on dev, as the board's detectors
    assert result.scored.splits == ["test"]
    # batched like the board's detectors: blocks of batch_size pairs
    assert sum(calls) == len(rows) and max(calls) == 16
    table = result.table()
    overall = table[(table["slice_kind"] == "overall") & (table["metric"] == "balanced_accuracy")]
    (ba,) = overall["value"].tolist()
    assert ba == result.value("balanced_accuracy")
    assert (overall["ci_low"] <= ba).all() and (overall["ci_high"] >= ba).all()
    assert (
        result.config.detector == "python:tests.verified.test_evaluate.test_a_plain_function_"
        "scores_as_the_engine_scores_its_predictions.<locals>.score_fn"
    )
    assert result.config.extra["returns"] == "scores"
    assert result.model.name == "score_fn"
    assert not list((demo_root / "runs").glob("*python*"))  # nothing stored unless asked


def test_labels_are_scored_as_labels(demo_root: Path) -> None:
    class Checker:
        name = "digit-checker"

        def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[bool]:
            return [v >= 0.8 for v in overlap(documents, summaries)]

    result = evaluator.evaluate(Checker(), "demo", root=demo_root, progress=False)
    assert list(result.predictions.columns) == ["sample_id", "label"]
    assert result.scored.threshold.policy == "labels"
    rows = _rows("demo", demo_root, ["dev", "test"])
    labels = [int(v >= 0.8) for v in overlap(rows["document"].tolist(), rows["summary"].tolist())]
    mine = pd.DataFrame({"sample_id": rows["sample_id"].astype(str).tolist(), "label": labels})
    expected = score(
        registry.get("demo"),
        runner.load_inputs("demo", demo_root).samples,
        mine,
        ScoreOptions(policy="labels", splits=("test",)),
    )
    _same(result.results, expected.results)
    assert result.model.name == "digit-checker"
    assert "auroc" not in {r.metric for r in result.results}  # labels have no ranking


def test_the_prediction_file_a_stored_run_and_an_eee_record(
    demo_root: Path, tmp_path: Path
) -> None:
    result = evaluator.evaluate(
        overlap,
        "demo",
        root=demo_root,
        name="Overlap",
        predictions_file=tmp_path / "out" / "predictions.csv",
        store=True,
        eee_dir=tmp_path / "eee",
        progress=False,
    )
    # the prediction file is the submission format and scores to the same numbers
    parsed = parse_predictions((tmp_path / "out" / "predictions.csv").read_bytes(), "p.csv")
    again = score(
        registry.get("demo"),
        runner.load_inputs("demo", demo_root).samples,
        parsed,
        ScoreOptions(),
    )
    _same(result.results, again.results)
    # the stored run: origin evaluated, the same numbers, the detector recorded
    assert result.run_path is not None and result.run_id is not None
    rec = runs.read_record(result.run_path)
    assert rec.origin == "evaluated" and rec.model.name == "Overlap"
    _same(rec.results, result.results)
    assert rec.config.detector == "python:tests.verified.test_evaluate.overlap"
    # an Every Eval Ever record of that run
    records = [p for p in result.eee_files if not p.name.endswith(".jsonl")]
    assert records
    body = json.loads(records[0].read_text())
    assert body["evaluation_id"].endswith(result.run_id)


def test_a_submission_through_the_service(demo_root: Path, tmp_path: Path) -> None:
    meta = SubmissionMeta(benchmark="demo", model_name="Overlap submitted", org="Lab")
    result = evaluator.evaluate(
        overlap,
        "demo",
        root=demo_root,
        submit=meta,
        submissions_root=tmp_path / "submissions",
        progress=False,
    )
    sub = result.submission
    assert sub is not None and sub.ok, sub.problems if sub else None
    rec = runs.read_record(runs.find_run(str(sub.run_id), demo_root))
    assert rec.origin == "submitted" and rec.model.name == "Overlap submitted"
    _same(rec.results, result.results)


def test_a_detector_that_answers_badly_is_refused(demo_root: Path) -> None:
    with pytest.raises(DetectorError, match="returned 1 values"):
        evaluator.evaluate(lambda d, s: [0.5], "demo", root=demo_root, progress=False)
    with pytest.raises(DetectorError, match="not a number"):
        evaluator.evaluate(lambda d, s: ["high"] * len(d), "demo", root=demo_root, progress=False)
    with pytest.raises(DetectorError, match="is not a detector"):
        evaluator.evaluate(42, "demo", root=demo_root, progress=False)


@pytest.mark.slow
def test_summedits_plain_function_equals_the_engine(
    shared_benchmarks: Path, tmp_data_root: Path
) -> None:
    from evaluator.ingest import pipeline

    pipeline.ingest("summedits", shared_benchmarks / "summedits", root=tmp_data_root)
    result = evaluator.evaluate(
        overlap, "summedits", root=tmp_data_root, resamples=200, progress=False
    )
    rows = _rows("summedits", tmp_data_root, ["dev", "test"])
    mine = pd.DataFrame(
        {
            "sample_id": rows["sample_id"].astype(str).tolist(),
            "score": overlap(rows["document"].tolist(), rows["summary"].tolist()),
        }
    )
    expected = score(
        registry.get("summedits"),
        runner.load_inputs("summedits", tmp_data_root).samples,
        mine,
        ScoreOptions(splits=("test",), resamples=200),
    )
    _same(result.results, expected.results)
    assert result.scored.counts.predicted == expected.counts.predicted > 1000
