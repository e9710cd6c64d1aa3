"""AppTest: benchmark cards and the explanations page (with and without graded runs)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evaluator.core import formatting as F
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
    assert balance.set_index("domain").loc["total", "total"] == 294
    assert list(balance.columns[:3]) == ["domain", "dev", "test"]
    assert at.code[0].value.startswith("@misc{factboard-demo")
    assert any("Synthetic" in w.value for w in at.warning)


def test_not_ingested_card_from_the_url(data: Path) -> None:
    at = open_page("views/benchmarks.py", {"benchmark": "summedits"})
    assert at.subheader[0].value == "SummEdits"
    # visitors get plain words; the command is folded away for maintainers
    assert any("does not hold this benchmark's data yet" in i.value for i in at.info)
    assert not any("python -m" in i.value or "ingest" in i.value for i in at.info)
    maint = next(e for e in at.expander if e.label.startswith("For maintainers"))
    assert maint.code[0].value == "python -m evaluator ingest summedits --from PATH"
    citation = next(c.value for c in at.code if c.language == "bibtex")
    assert "laban" in citation.lower()  # the citation is there before any ingest
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
    # EvalV1-V4 defined on the page, in words
    defs = at.dataframe[0].value
    assert list(defs["protocol"]) == ["EvalV1", "EvalV2", "EvalV3", "EvalV4"]
    assert "reference explanation" in defs.set_index("protocol").loc["EvalV4"].iloc[0]
    assert any("entirely correct (1)" in m.value for m in at.markdown)
    # the published Table 4 as judge x protocol grids, one per metric, with the board's labels
    assert any("Published judge agreement" in m.value for m in at.markdown)
    corr, bacc = at.dataframe[1].value, at.dataframe[2].value
    expected = ["judge", "EvalV1", "EvalV2", "EvalV3", "EvalV4"]
    assert list(corr.columns) == expected and list(bacc.columns) == expected
    assert set(corr["judge"]) == {"claude3-haiku", "claude3-opus", "gpt3.5-turbo", "gpt4o"}
    assert corr.set_index("judge").loc["gpt4o", "EvalV4"] == pytest.approx(0.833)
    assert bacc.set_index("judge").loc["claude3-haiku", "EvalV1"] == pytest.approx(0.385)
    labels = [m.value for m in at.markdown]
    assert "*Correlation* with human grades" in labels and "*BAcc* with human grades" in labels
    # no repository path on screen
    for kind in ("markdown", "caption", "info"):
        assert not any("docs/" in e.value or ".md" in e.value for e in at.get(kind))


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
    assert row["correct"] == F.percent((human["rationale"] == "correct").mean())
    grades = at.dataframe[1].value
    assert set(grades["grader"]) == {"human", "gpt-4o / EvalV4"}
    agree = at.dataframe[3].value  # after the protocols' definitions
    assert list(agree["judge"]) == ["gpt-4o"] and agree["n"].iloc[0] == len(human)
    assert 0.5 < agree["Exact agreement"].iloc[0] <= 1
    assert {"Pearson r", "Cohen κ", "BAcc"} <= set(agree.columns)
    assert not {"pearson", "cohen_kappa", "balanced_accuracy"} & set(agree.columns)


def test_benchmarks_page_speaks_plain_words(data: Path) -> None:
    at = open_page("views/benchmarks.py", {"benchmark": "frank"})
    overview = at.dataframe[0].value.set_index("benchmark")
    # a metric in plain words, defined on hover; never "Partial r" or partial_pearson
    assert overview.loc["FRANK", "main metric"] == (
        "Partial Pearson correlation (system partialled out)"
    )
    tags = next(c for c in at.caption if c.value.startswith("Task:"))
    assert tags.value.startswith("Task: correlation with human scores")
    assert "system alone explains is taken out" in tags.proto.help
    assert overview.loc["TofuEval", "levels"] == "sentence level, summary level"
    assert overview.loc["FRANK", "task"] == "correlation with human scores"
    assert (overview["samples"] == "—").sum() == len(overview) - 1  # never "None"
    assert overview.loc["Demo (synthetic)", "samples"] == "294"
    shown = [e.value for kind in ("info", "markdown", "caption") for e in at.get(kind)]
    assert not any("../shared" in v or "SOURCE.md" in v or "README.md" in v for v in shown)
    assert not any("python -m" in v or "--from" in v for v in shown)
    for v in shown:  # no internal id as a label, no "1 rows" or "run(s)"
        assert "(s)" not in v and not re.search(r"\b1 [a-z]+s\b", v), v


def test_the_error_type_chart_axis() -> None:
    import pandas as pd

    from explorer import charts

    # close values: the axis starts below the smallest, not at 0, and the title says so
    assert charts.value_domain(pd.Series([0.61, 0.64, 0.66]))[0] == pytest.approx(0.6)
    # values near 0 (or below): from 0
    assert charts.value_domain(pd.Series([0.05, 0.6]))[0] == 0
    assert charts.value_domain(pd.Series([-0.1, 0.3]))[0] == -0.1
    long = pd.DataFrame(
        {
            "label": ["A", "B", "A", "B"],
            "slice_value": ["hallucinated_fact_insertion", "hallucinated_fact_insertion"] * 2,
            "value": [0.61, 0.64, 0.62, 0.66],
        }
    )
    spec = charts.grouped_bars(long, "BAcc", "edit type", ["A", "B"]).to_dict()
    x = spec["encoding"]["x"]
    assert x["title"] == "BAcc (axis not from 0)" and x["scale"]["zero"] is False
    assert spec["encoding"]["y"]["axis"]["labelLimit"] == 0  # labels never cut


def test_a_published_only_leaderboard_tells_visitors_in_words(data: Path) -> None:
    """The banner said "Ingest it with `python -m evaluator ingest summedits --from PATH`" to
    every visitor; the command is now folded away for maintainers."""
    at = open_page("views/leaderboard.py", {"benchmark": "summedits"})
    banner = next(i.value for i in at.info if "transcribed from papers" in i.value)
    assert "python -m" not in banner and "--from" not in banner
    assert "does not hold this benchmark's data yet" in banner
    maint = next(e for e in at.expander if e.label.startswith("For maintainers"))
    # the command is drawn when the expander is opened (a code block costs the browser a
    # syntax highlighter)
    assert not maint.code
    at.session_state["lb.ingest"] = True
    at.run()
    maint = next(e for e in at.expander if e.label.startswith("For maintainers"))
    assert maint.code[0].value == "python -m evaluator ingest summedits --from PATH"


def test_a_balance_table_of_two_levels_names_them_in_words() -> None:
    from explorer import benchmarks as cards

    by = [
        {"unit": u, "domain": "news", "split": "test", "n": n, "consistent": n - 1}
        | {"inconsistent": 1, "with_document": 0}
        for u, n in (("sentence", 5), ("summary", 2))
    ]
    bal = cards.balance_table({"stats": {"by": by}})
    assert list(bal.columns[:3]) == ["level", "domain", "test"]
    assert list(bal["level"]) == ["sentence level", "summary level"]
