"""AppTest: benchmark cards and the explanations page (with and without graded runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.support import testdata
from tests.support.apptest import open_app_page


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testdata.build_demo_root(tmp_path_factory.mktemp("bm") / "leaderboard_data")


@pytest.fixture
def data(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(demo_root))
    return demo_root


def open_page(page: str, params: dict[str, str] | None = None) -> AppTest:
    return open_app_page(page, params)  # type: ignore[arg-type]


def test_benchmark_card_of_the_demo(data: Path) -> None:
    at = open_page("views/benchmarks.py")
    overview = at.dataframe[0].value
    assert "SummEdits" in set(overview["benchmark"])
    status = overview.set_index("benchmark")["status"]
    assert status["Demo (synthetic)"] == "synthetic demo" and status["SummEdits"] == "not ingested"
    assert at.selectbox(key="bm.benchmark").value == "demo"
    assert at.subheader[0].value == "Demo (synthetic)"
    balance = at.dataframe[1].value
    assert list(balance["domain"]) == ["meeting", "news", "science", "total"]
    assert balance.set_index("domain").loc["total", "total n"] == 294
    assert at.code[0].value.startswith("@misc{factboard-demo")
    assert any("Synthetic" in w.value for w in at.warning)


def test_not_ingested_card_from_the_url(data: Path) -> None:
    at = open_page("views/benchmarks.py", {"benchmark": "summedits"})
    assert at.subheader[0].value == "SummEdits"
    assert any("ingest summedits" in i.value for i in at.info)
    assert "laban" in at.code[0].value.lower()  # the citation is there before any ingest
    assert any(m.value.startswith("- ") for m in at.markdown)  # caveats listed
    at.selectbox(key="bm.benchmark").set_value("tofueval").run()
    assert at.query_params["benchmark"] == "tofueval"
    assert at.subheader[0].value == "TofuEval"


def test_explanations_page_without_graded_runs(data: Path) -> None:
    at = open_page("views/explanations.py")
    infos = " ".join(i.value for i in at.info)
    assert "No run has human-labelled explanations yet" in infos
    assert "No LLM judge has graded any explanation yet" in infos
    assert "python -m evaluator judge" in infos
    with_reported = [e for e in at.expander if "Published judge agreement" in e.label]
    assert with_reported  # the SummExecEdit Table 4 numbers, marked reported
    rep = at.dataframe[-1].value
    assert set(rep["benchmark"]) == {"summexecedit"} and {"EvalV1", "EvalV4"} <= {
        n.split(";")[0].split("=")[1] for n in rep["note"]
    }


def test_explanations_page_with_human_and_judge_grades(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "leaderboard_data"
    shutil.copytree(demo_root, root)
    human = testdata.human_grades(root, "demo")
    testdata.add_run(
        root,
        "demo",
        "Explainer A",
        explanations=True,
        seed=1,
        grades=pd.concat([human, testdata.judge_grades(human, agree=0.9)]),
    )
    testdata.add_run(
        root,
        "demo",
        "Explainer B",
        explanations=True,
        seed=2,
        grades=testdata.human_grades(root, "demo", seed=5),
    )
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    at = open_page("views/explanations.py")
    types = at.dataframe[0].value
    assert set(types["model"]) == {"Explainer A", "Explainer B"}
    row = types.set_index("model").loc["Explainer A"]
    assert row["explanations"] == len(human)
    assert row["correct"] == pytest.approx((human["rationale"] == "correct").mean())
    grades = at.dataframe[1].value
    assert set(grades["grader"]) == {"human", "gpt-4o / EvalV4"}
    agree = at.dataframe[2].value
    assert list(agree["judge"]) == ["gpt-4o"] and agree["n"].iloc[0] == len(human)
    assert 0.5 < agree["exact_agreement"].iloc[0] <= 1
