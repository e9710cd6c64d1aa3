"""AppTest: Compare on a correlation benchmark (real QAGS release, two synthetic metric runs):
where two metrics rank the summaries most differently and each against the human score; and a
change of benchmark while two runs are chosen clears the choice instead of calling it a stale
link."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaluator.ingest import pipeline
from evaluator.store import ingested
from explorer import compare as C
from explorer import queries as Q
from explorer.store import Store
from tests.support import testdata
from tests.support.apptest import open_app_page

PAGE = "views/compare.py"


@pytest.fixture(scope="module")
def root(shared_benchmarks: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("cmpcorr") / "leaderboard_data")
    pipeline.ingest("qags", shared_benchmarks / "qags", root=r)
    s = ingested.load_samples("qags", r)
    rng = np.random.default_rng(0)
    human = s["human_score"].to_numpy(float)
    a = human + rng.normal(0, 0.2, len(s))
    b = human + rng.normal(0, 0.2, len(s))
    a[0], b[0] = 5.0, -5.0  # the first sample: A ranks it top, B bottom
    testdata.add_metric_run(r, "qags", "Metric Alpha", a, s)
    testdata.add_metric_run(r, "qags", "Metric Beta", b, s)
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


def run_id(root: Path, part: str) -> str:
    return next(p.name for p in sorted((root / "runs").iterdir()) if part in p.name)


def test_changing_the_benchmark_clears_the_runs_without_a_stale_link_error(data: Path) -> None:
    """Two demo runs chosen, then the benchmark switched to QAGS by the widget: no link was
    followed, so no 'This link compares ...' error; the new benchmark opens on its own runs."""
    at = open_app_page(PAGE, {"benchmark": "demo"})
    demo_a = at.selectbox(key="cmp.a").value
    assert demo_a.startswith("demo-")
    at.selectbox(key="cmp.benchmark").set_value("qags").run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    a, b = at.selectbox(key="cmp.a").value, at.selectbox(key="cmp.b").value
    assert a != b and {a, b} <= {run_id(data, "metric-alpha"), run_id(data, "metric-beta")}
    assert at.query_params["a"] == a and at.query_params["benchmark"] == "qags"


def test_a_followed_link_with_stale_runs_still_says_so(data: Path) -> None:
    at = open_app_page(PAGE, {"benchmark": "qags", "a": run_id(data, "demo-random"), "b": "x"})
    err = " ".join(e.value for e in at.error).replace("\\", "")
    assert "no longer on QAGS" in err


def test_rank_disagreements_of_two_metrics(data: Path) -> None:
    s = Store(data)
    s.refresh()
    s.ensure_labels("qags")
    a, b = run_id(data, "metric-alpha"), run_id(data, "metric-beta")
    f = Q.pair_frame(s.cursor(), "qags", "summary", a, b)
    d = C.rank_disagreements(f)
    assert d["sample_id"].iloc[0] == ingested.load_samples("qags", data)["sample_id"].iloc[0]
    top = d.iloc[0]
    assert top["rank_a"] == pytest.approx(100.0) and top["rank_b"] == pytest.approx(0.0)
    assert top["gap"] == pytest.approx(100.0)
    assert (d["gap"].abs().diff().dropna() <= 1e-9).all()  # largest disagreement first
    assert {"human_rank", "score_a", "score_b", "human_score"} <= set(d.columns)


def test_correlation_compare_shows_where_metrics_rank_differently(data: Path) -> None:
    a, b = run_id(data, "metric-alpha"), run_id(data, "metric-beta")
    at = open_app_page(PAGE, {"benchmark": "qags", "a": a, "b": b})
    text = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "No sample where the two runs' labels differ" not in text
    heads = [h.value for h in at.subheader]
    assert any("rank" in h.lower() for h in heads), heads
    tables = [d.value for d in at.dataframe]
    ranked = next(t for t in tables if "A's rank" in t.columns)
    first = ingested.load_samples("qags", data)["sample_id"].iloc[0]
    assert ranked["sample"].iloc[0] == first
    assert {"human rank", "B's rank", "A − B"} <= set(ranked.columns)
    # p-values through the one formatter
    shown = {m.label: m.value for m in at.metric}
    p = shown["p-value (paired bootstrap)"]
    assert p == "< 0.001" or p[0].isdigit()
    assert "e-" not in p
