"""AppTest: the cross-benchmark page (one model across benchmarks, each cell with its source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.ingest import pipeline
from tests.support import testdata
from tests.support.apptest import open_app_page
from tests.support.llm_aggrefact_data import write_release

PAGE = "views/across.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("across")
    r = testdata.build_demo_root(tmp / "leaderboard_data")
    pipeline.ingest("llm_aggrefact", write_release(tmp / "release"), root=r)
    testdata.add_run(r, "llm_aggrefact", "Bespoke-MiniCheck-7B", unit="claim", seed=1)
    testdata.add_run(r, "demo", "Bespoke-Minicheck-7B", seed=2)
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


def table(at, i: int = 0):
    return at.dataframe[i].value


def test_default_view(data: Path) -> None:
    at = open_app_page(PAGE)
    t = table(at).set_index("Model")
    assert (t["Benchmarks"] >= 2).all()  # "on at least 2 benchmarks" by default
    assert at.selectbox(key="across.min").value == 2
    row = t.loc["Bespoke-MiniCheck-7B"]  # a run on each of two benchmarks, names folded
    assert row["LLM-AggreFact · source"] == "run" and row["Demo (synthetic) · source"] == "run"
    assert "Granite Guardian 3.3 8B" not in t.index  # on LLM-AggreFact only
    # the snapshot's Claude-3 Opus and SummExecEdit's claude3-opus: one model, two sources
    assert t.loc["Claude-3 Opus", "LLM-AggreFact · BAcc"] == pytest.approx(0.748)
    assert t.loc["Claude-3 Opus", "LLM-AggreFact · source"] == "snapshot"
    assert t.loc["Claude-3 Opus", "SummExecEdit · source"] == "paper"
    assert t.loc["GPT-3.5-Turbo", "SummEdits · source"] in ("paper", "snapshot")
    assert at.query_params["min"] == "2"


def test_state_from_the_url(data: Path) -> None:
    at = open_app_page(
        PAGE,
        {
            "benchmarks": ["llm_aggrefact", "demo"],
            "min": "2",
            "q": "bespoke",
            "model": "Bespoke-MiniCheck-7B",
        },
    )
    assert set(at.multiselect(key="across.benchmarks").value) == {"demo", "llm_aggrefact"}
    assert at.text_input(key="across.q").value == "bespoke"
    t = table(at)
    assert list(t["Model"]) == ["Bespoke-MiniCheck-7B"]
    assert [c for c in t.columns if c.endswith("source")] == [
        "Demo (synthetic) · source",
        "LLM-AggreFact · source",
    ]
    cells = table(at, 1)
    assert set(cells["From"]) == {"run"}
    la = cells[cells["Benchmark"] == "LLM-AggreFact"].iloc[0]
    assert la["Published"].startswith("0.774 (LLM-AggreFact leaderboard snapshot")
    assert la["Source"].startswith("FactBoard run ")
    assert la["95% CI"].startswith("[")


def test_widgets_write_the_url(data: Path) -> None:
    at = open_app_page(PAGE, {"min": "1", "q": "granite"})
    assert list(table(at)["Model"]) == ["Granite Guardian 3.3 8B"]
    at.text_input(key="across.q").set_value("").run()
    at.selectbox(key="across.min").set_value(3).run()
    assert at.query_params["min"] == "3"
    assert (table(at)["Benchmarks"] >= 3).all()
    at.text_input(key="across.q").set_value("nothing-like-this").run()
    assert not at.exception
    assert any("No model has a number" in i.value for i in at.info)
