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
    assert t.loc["Claude-3 Opus", "LLM-AggreFact · BAcc"] == "0.748"
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


def test_a_missing_cell_is_a_dash_and_numbers_are_written_as_the_board_writes_them(
    data: Path,
) -> None:
    at = open_app_page(PAGE, {"min": "1"})
    t = table(at).set_index("Model")
    turbo = t.loc["GPT-4-Turbo"]
    assert turbo["AggreFact-SOTA · BAcc"] == "—" and turbo["DialSummEval · BAcc"] == "—"
    assert turbo["AggreFact-SOTA · source"] == "" and turbo["SummExecEdit · source"] == "paper"
    values = [c for c in t.columns if "·" in c and not c.endswith("source")]
    cells = t[values].to_numpy().ravel().tolist()
    assert all(isinstance(v, str) for v in cells)
    assert not [v for v in cells if v in ("None", "nan", "") or (v != "—" and len(v) < 5)]
    assert t.loc["Claude-3 Opus", "LLM-AggreFact · BAcc"] == "0.748"


def test_one_model_across_every_benchmark_on_one_page(data: Path) -> None:
    at = open_app_page(PAGE, {"q": "gpt-4-turbo", "min": "1"})
    assert list(table(at)["Model"]) == ["GPT-4-Turbo"]
    assert at.selectbox(key="across.model").value == "GPT-4-Turbo"
    cells = table(at, 1).set_index("Benchmark")
    # every benchmark of the table, those without a number for this model included
    assert set(cells.index) == {c.split(" · ")[0] for c in table(at).columns if "·" in c}
    assert cells.loc["SummExecEdit", "From"] == "paper"
    assert cells.loc["LLM-AggreFact", "Value"] == "0.762"
    assert all(v == "—" or len(v) == 5 for v in cells["Value"])
    caption = " ".join(c.value for c in at.caption)
    assert "(s)" not in caption and "1 model × " in caption
