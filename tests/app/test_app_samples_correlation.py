"""AppTest: the samples explorer on a correlation benchmark (real QAGS release): where does a
metric's ranking of the summaries depart most from the human one; and explanations that a
spreadsheet would run are shown inert."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import ModelInfo, RunConfig
from evaluator.ingest import pipeline
from evaluator.store import ingested
from explorer import samples as X
from tests.support import testdata
from tests.support.apptest import open_app_page

PAGE = "views/samples.py"


@pytest.fixture(scope="module")
def qags_root(shared_benchmarks: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("qags") / "leaderboard_data"
    (root / "benchmarks").mkdir(parents=True)
    pipeline.ingest("qags", shared_benchmarks / "qags", root=root)
    s = ingested.load_samples("qags", root)
    rng = np.random.default_rng(0)
    score = s["human_score"].to_numpy(float) + rng.normal(0, 0.2, len(s))
    score[0] = -5.0  # the first sample: rated far worse than people rate it
    scorer.score_to_run(
        registry.get("qags"),
        ingested.load_meta("qags", root)["version"],
        s,
        pd.DataFrame({"sample_id": s["sample_id"], "score": score}),
        ModelInfo(name="Noisy metric", kind="non-llm"),
        "submitted",
        RunConfig(detector="synthetic"),
        ScoreOptions(policy="none", resamples=50),
        None,
        root,
    )
    return root


def test_disagreement_ranks_and_order() -> None:
    samples = pd.DataFrame(
        {"sample_id": ["a", "b", "c", "d", "e"], "human_score": [0.0, 0.25, 0.5, 1.0, None]}
    )
    preds = pd.DataFrame({"sample_id": ["a", "b", "c", "d", "e"], "score": [0.9, 0.2, 0.5, 0.8, 1]})
    d = X.disagreement(samples, preds)
    # ranks among the 4 samples with both scores: human a<b<c<d, metric b<c<d<a
    assert list(d["sample_id"]) == ["a", "b", "c", "d"]  # |gap| 100, 33.3, 33.3, 33.3
    by = d.set_index("sample_id")
    assert by.loc["a", "gap"] == pytest.approx(100.0)
    assert by.loc["b", "gap"] == pytest.approx(-100 / 3)
    assert by.loc["d", "human_rank"] == 100 and by.loc["b", "metric_rank"] == 0


def test_where_a_metric_disagrees_with_people(
    qags_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_DATA", str(qags_root))
    at = open_app_page(PAGE, {"benchmark": "qags"})
    assert not any(sb.key == "ex.label" for sb in at.selectbox)  # no gold label to filter by
    (rid,) = [p.name for p in (qags_root / "runs").iterdir()]
    assert at.selectbox(key="ex.run").options[1].startswith("Noisy metric")
    at.selectbox(key="ex.run").set_value(rid).run()
    assert at.query_params["run"] == rid
    table = at.dataframe[0].value
    assert {"human score", "metric score", "human rank", "metric rank", "gap"} <= set(table.columns)
    assert (table["gap"].abs().diff().dropna() <= 0).all()  # widest gap first
    s = ingested.load_samples("qags", qags_root)
    assert table["sample"].iloc[0] == s["sample_id"].iloc[0]  # the planted failure leads
    assert table["gap"].iloc[0] < -50
    # the link restores it
    again = open_app_page(PAGE, dict(at.query_params))
    assert list(again.dataframe[0].value["sample"]) == list(table["sample"])


def test_a_formula_in_an_explanation_is_shown_inert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = testdata.build_demo_root(tmp_path / "leaderboard_data")
    s = ingested.load_samples("demo", root)
    test = s[s["split"] == "test"]
    scorer.score_to_run(
        registry.get("demo"),
        ingested.load_meta("demo", root)["version"],
        s,
        pd.DataFrame(
            {
                "sample_id": test["sample_id"],
                "label": 1,
                "explanation": '=HYPERLINK("http://evil.example","click")',
            }
        ),
        ModelInfo(name="Formula", kind="open-llm"),
        "submitted",
        RunConfig(detector="synthetic"),
        ScoreOptions(resamples=50),
        None,
        root,
    )
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    at = open_app_page(PAGE, {"sample": test["sample_id"].iloc[0]})
    preds = at.dataframe[-1].value
    shown = preds.set_index("model").loc["Formula", "explanation"]
    assert shown == '\'=HYPERLINK("http://evil.example","click")'


def test_samples_a_correlation_run_gets_wrong_are_its_wide_rank_gaps(
    qags_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 'samples this run gets wrong' link (the leaderboard's) on QAGS, whose runs give scores:
    not all 474 samples unfiltered, but those it ranks far from people, with a word why."""
    monkeypatch.setenv("FACTBOARD_DATA", str(qags_root))
    (rid,) = [p.name for p in (qags_root / "runs").iterdir()]
    at = open_app_page(PAGE, {"benchmark": "qags", "unit": "summary", "wrong": rid})
    assert at.query_params["run"] == rid and "wrong" not in at.query_params
    table = at.dataframe[0].value
    n = int(at.markdown[0].value.split("**")[1].replace(",", ""))
    assert 0 < n < 474
    assert (table["gap"].abs() >= X.WIDE_GAP).all()
    assert any("not labels" in c.value for c in at.caption)
    at.toggle(key="ex.far").set_value(False).run()  # the whole list, widest gap first
    assert int(at.markdown[0].value.split("**")[1].replace(",", "")) > n
