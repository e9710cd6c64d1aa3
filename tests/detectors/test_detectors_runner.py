"""`run_detector` and the worker's detector-run job: a detector run on an ingested benchmark is an
ordinary, complete run that the board lists, with its threshold, AUROC and configuration."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evaluator.detectors.base import DetectorError
from evaluator.detectors.runner import run_detector
from evaluator.ingest import pipeline
from evaluator.ingest.demo import build_demo
from evaluator.store import evidence_file, ingested, runs
from tests.support.detectors import build_tiny_models, require_model_libraries

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_model_libraries()
    return build_tiny_models(tmp_path_factory.mktemp("tiny-runner"))


@pytest.fixture
def demo(tmp_data_root: Path) -> Path:
    list(build_demo(root=tmp_data_root))
    return tmp_data_root


def test_summac_zs_run_on_the_demo_is_on_the_board(demo: Path, tiny: dict[str, str]) -> None:
    from tests.support.tiny_summac import punkt_installed

    with punkt_installed(None):  # no punkt data: the authors' splitter cannot run, and it says so
        path = run_detector("summac-zs", "demo", checkpoint=tiny["nli"], device="cpu", batch_size=8)
    rec = runs.read_record(path)
    listed = {r.run_id: r for r in runs.list_runs(benchmark="demo").runs}
    assert rec.run_id in listed
    assert rec.origin == "evaluated"
    assert rec.model.name == "SummaC-ZS (nli) [variant: splitter=pysbd]"
    assert rec.config.extra["fidelity"]["splitter"] == "pysbd (punkt data not found)"
    assert rec.config.detector == "summac-zs"
    assert rec.config.checkpoint == tiny["nli"]
    extra = rec.config.extra
    assert extra["device"] == "cpu" and extra["dtype"] == "float32"
    assert extra["options"]["granularity"] == "sentence"
    assert extra["splits_run"] == ["dev", "test"]
    assert set(extra["stats"]) >= {"samples_truncated", "inputs_truncated", "max_input_tokens"}
    assert extra["stats"]["samples"] == len(ingested.load_samples("demo"))
    # dev-tuned threshold applied to test, AUROC alongside
    assert rec.threshold.policy == "dev" and rec.threshold.threshold is not None
    assert rec.splits == ["test"]
    auc = rec.result("roc_auc", split="test")
    assert 0.0 <= auc.value <= 1.0 and auc.n == rec.counts.n
    rec.result("balanced_accuracy", split="test")
    preds = runs.read_predictions(path)
    assert preds["score"].notna().all() and len(preds) == extra["stats"]["samples"]
    # the detector's own evidence is stored with the run: per summary sentence, its score and the
    # document sentence that supports it best; the mean of the sentences is the stored score
    samples = ingested.load_samples("demo").set_index("sample_id")
    first = sorted(preds["sample_id"])[:3]
    ev = evidence_file.read_evidence(path, first)
    assert ev is not None and sorted(ev["sample_id"]) == first
    by_id = preds.set_index("sample_id")["score"]
    for row in ev.to_dict("records"):
        e = row["evidence"]
        assert e["unit"] == "sentence" and e["items"]
        document = samples.loc[row["sample_id"], "document"]
        assert all(it["support"] in document for it in e["items"])
        assert all(it["text"] in samples.loc[row["sample_id"], "summary"] for it in e["items"])
        mean = sum(it["score"] for it in e["items"]) / len(e["items"])
        assert mean == pytest.approx(by_id[row["sample_id"]], abs=1e-6)


def test_summac_conv_trains_on_dev_and_stores_its_weights(demo: Path, tiny: dict[str, str]) -> None:
    path = run_detector(
        "summac-conv",
        "demo",
        checkpoint=tiny["nli"],
        device="cpu",
        options={"epochs": "50", "conv_weights": "dev"},
    )
    rec = runs.read_record(path)
    conv = rec.config.extra["summac_conv"]
    n_dev = int(((s := ingested.load_samples("demo"))["split"] == "dev").sum())
    assert conv["n_train"] == n_dev == rec.config.extra["summac_conv_trained_on"]["n"]
    assert len(conv["conv_weight"]) == 23 and len(conv["final_weight"]) == 2
    assert rec.threshold.policy == "dev"
    # the stored weights score the same without training again
    again = run_detector(
        "summac-conv",
        "demo",
        checkpoint=tiny["nli"],
        device="cpu",
        options={"conv_weights": str(path / "run.json")},
        model_name="SummaC-Conv reloaded",
    )
    a = runs.read_predictions(path).set_index("sample_id")["score"]
    b = runs.read_predictions(again).set_index("sample_id")["score"]
    assert len(a) == len(s)
    assert (a - b.reindex(a.index)).abs().max() < 1e-9
    assert "summac_conv_trained_on" not in runs.read_record(again).config.extra


def test_weight_free_baseline_run_and_limits(demo: Path) -> None:
    path = run_detector("rouge-2", "demo", limit=7, splits=["test"])
    rec = runs.read_record(path)
    assert rec.model.kind == "baseline" and rec.model.name == "ROUGE-2"
    assert rec.config.extra["limit"] == 7
    preds = runs.read_predictions(path)
    samples = ingested.load_samples("demo").set_index("sample_id")
    # the first 7 of each needed split: test for scoring, dev for the threshold
    assert samples.loc[preds["sample_id"], "split"].value_counts().to_dict() == {
        "test": 7,
        "dev": 7,
    }
    assert rec.splits == ["test"]
    with pytest.raises(DetectorError, match="takes no checkpoint"):
        run_detector("rouge-2", "demo", checkpoint="facebook/bart-large")
    with pytest.raises(DetectorError, match="unknown split 'validation'"):
        run_detector("rouge-2", "demo", splits=["validation"])
    with pytest.raises(DetectorError, match="unit 'sentence' not in demo"):
        run_detector("rouge-2", "demo", options={"unit": "sentence"})


def test_correlation_benchmark_has_no_threshold(
    tmp_data_root: Path, shared_benchmarks: Path, tiny: dict[str, str]
) -> None:
    pipeline.ingest("longsciverify", shared_benchmarks / "longsciverify")
    path = run_detector("rouge-2", "longsciverify", model_name="ROUGE-2 P")
    rec = runs.read_record(path)
    assert rec.threshold.policy == "none" and rec.threshold.threshold is None
    assert -1.0 <= rec.result("kendall_tau").value <= 1.0
    # a long article is cut at BART's 1024 tokens: recorded in the run, never silent
    bart = run_detector(
        "bartscore", "longsciverify", checkpoint=tiny["bart"], device="cpu", limit=2
    )
    stats = runs.read_record(bart).config.extra["stats"]
    assert stats["samples_truncated"] == 2 and stats["max_input_tokens"] == {"source": 1024}


def test_detection_benchmark_without_dev_needs_a_threshold(tmp_data_root: Path) -> None:
    from evaluator.benchmarks import registry

    assert "dev" not in registry.get("summexecedit").splits
    # refused before anything is read or scored
    with pytest.raises(DetectorError, match="no dev split to tune a threshold on"):
        run_detector("rouge-1", "summexecedit")


def test_worker_job(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluator.jobs import detector_run as jobs
    from evaluator.jobs.queue import TransientJobError

    said: list[str] = []
    out = jobs.handle(
        {
            "detector": "rouge-1",
            "benchmark": "demo",
            "limit": 5,
            "options": {"measure": "fmeasure"},
        },
        said.append,
    )
    assert out["run_id"] in {r.run_id for r in runs.list_runs(benchmark="demo").runs}
    assert out["model"] == "ROUGE-1 fmeasure"
    assert said[0] == "running rouge-1 on demo" and said[-1].startswith("run ")
    # a job rerun (its worker died after writing) finds its run instead of writing another
    job = {"detector": "rouge-1", "benchmark": "demo", "limit": 5, "job_id": "j-0001"}
    first = jobs.handle(dict(job))
    before = {r.run_id for r in runs.list_runs(benchmark="demo").runs}
    again = jobs.handle(dict(job))
    assert again["run_id"] == first["run_id"] and "j-0001" in first["run_id"]
    assert {r.run_id for r in runs.list_runs(benchmark="demo").runs} == before
    with pytest.raises(DetectorError, match="unknown field"):
        jobs.handle({"detector": "rouge-1", "benchmark": "demo", "gpu": 1})
    with pytest.raises(DetectorError, match="missing 'benchmark'"):
        jobs.handle({"detector": "rouge-1"})
    with pytest.raises(DetectorError, match="limit='5' is not an integer"):
        jobs.handle({"detector": "rouge-1", "benchmark": "demo", "limit": "5"})

    def oom(*a, **k):
        raise MemoryError("out of memory")

    monkeypatch.setattr("evaluator.detectors.runner.run_detector", oom)
    with pytest.raises(TransientJobError, match="MemoryError"):
        jobs.handle({"detector": "rouge-1", "benchmark": "demo"})


def test_run_json_is_plain_json(demo: Path) -> None:
    path = run_detector("lexical-overlap", "demo")
    data = json.loads((path / "run.json").read_text())
    assert data["config"]["detector"] == "lexical-overlap"
    assert data["model"]["name"] == "lexical-overlap"
