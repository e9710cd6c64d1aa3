"""explorer.compare against the numbers the scorer stored: the same metrics from the vocabulary,
FRANK's partial correlations included."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.core import vocabulary as V
from evaluator.core.types import ModelInfo, Sample
from evaluator.ingest import pipeline
from evaluator.store import layout, runs
from explorer import compare as C
from explorer.store import Store


def _write_frank_like(root: Path, n: int = 300) -> pd.DataFrame:
    """Summaries in FRANK's canonical form (two datasets, five systems, human scores), stored
    as an ingested benchmark (FRANK's own ingest rebuilds documents for over a minute)."""
    spec = registry.get("frank")
    rng = np.random.default_rng(5)
    samples = [
        Sample(
            benchmark="frank",
            sample_id=f"f{i:04d}",
            split="dev" if i % 4 == 0 else "test",
            unit="summary",
            summary=f"summary {i}",
            domain=str(rng.choice(["cnndm", "xsum"])),
            doc_id=f"d{i // 5}",
            human_score=float(rng.random()),
            error_types=("RelE",) if i % 3 == 0 else (),
            attributes={"system": f"s{i % 5}"},
        )
        for i in range(n)
    ]
    table = pipeline.samples_table(spec, samples)
    d = layout.benchmark_dir("frank", root)
    d.mkdir(parents=True)
    pq.write_table(table, d / layout.SAMPLES_FILE)
    meta = {**spec.card(), "version": pipeline.version_of(table)}
    (d / layout.META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    return table.to_pandas()


def test_compare_offers_the_vocabulary_metrics_of_the_benchmark() -> None:
    frank = registry.get("frank")
    assert {"partial_pearson", "partial_spearman"} <= set(C.comparable_metrics(frank))
    assert "partial_pearson" not in C.comparable_metrics(registry.get("qags"))
    for task in ("detection", "detection+explanation", "correlation"):
        got = C.comparable_metrics(task)
        assert got and set(got) <= set(V.metric_names(task))
    assert "roc_auc" in C.comparable_metrics("detection")


def test_partial_correlations_in_compare_match_the_board(tmp_path: Path) -> None:
    root = tmp_path / "leaderboard_data"
    samples = _write_frank_like(root)
    spec = registry.get("frank")
    version = json.loads((layout.benchmark_dir("frank", root) / layout.META_FILE).read_text())[
        "version"
    ]
    rng = np.random.default_rng(1)
    made = []
    for name, noise in (("Close", 0.2), ("Loose", 1.0)):
        preds = pd.DataFrame(
            {
                "sample_id": samples["sample_id"],
                "score": samples["human_score"] + rng.normal(0, noise, len(samples)),
            }
        )
        model = ModelInfo(name=name, kind="non-llm")
        made.append(
            scorer.score_to_run(spec, version, samples, preds, model, "evaluated", root=root)
        )
    a, b = (runs.read_record(p) for p in made)
    s = Store(root)
    s.refresh()
    s.ensure_labels("frank")
    for metric in ("partial_pearson", "partial_spearman", "pearson"):
        res = C.compare_runs(s.cursor(), spec, "summary", a.run_id, b.run_id, metric, 200, 50)
        assert res.diff is not None, res.notes
        assert res.value_a == pytest.approx(a.result(metric).value, abs=1e-12)
        assert res.value_b == pytest.approx(b.result(metric).value, abs=1e-12)
        assert res.diff.difference == pytest.approx(res.value_a - res.value_b, abs=1e-12)
        # per dataset too, where the scorer reports them
        for dataset in ("cnndm", "xsum"):
            row = res.slices[
                (res.slices["slice_kind"] == "dataset") & (res.slices["slice_value"] == dataset)
            ].iloc[0]
            stored = a.result(metric, "dataset", dataset).value
            assert row["value_a"] == pytest.approx(stored, abs=1e-12)


def test_the_per_slice_chart_legend_is_in_words() -> None:
    """The legend says whether each slice's CI excludes 0, not 'true' / 'false'."""
    import pandas as pd

    from explorer import compare_view as CV

    sl = CV.slice_table(
        pd.DataFrame(
            {
                "slice_kind": ["domain", "domain"],
                "slice_value": ["news", "sales"],
                "n": [10, 12],
                "value_a": [0.7, 0.6],
                "value_b": [0.6, 0.6],
                "difference": [0.1, 0.0],
                "ci_low": [0.02, -0.1],
                "ci_high": [0.2, 0.1],
                "p_value": [0.0, 0.9],
            }
        )
    )
    assert list(sl["p"]) == ["< 0.001", "0.90"]
    assert list(sl["95% CI"]) == ["[+0.020, +0.200]", "[−0.100, +0.100]"]
    spec = CV.difference_chart(sl, "A − B").to_dict()
    legend = next(
        layer["encoding"]["color"]
        for layer in spec["layer"]
        if "color" in layer.get("encoding", {})
    )
    assert legend["scale"]["domain"] == ["CI excludes 0", "CI contains 0"]
