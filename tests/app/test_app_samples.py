"""AppTest: the samples explorer: filters, paging, a sample's detail and its permalink."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evaluator.ingest import pipeline
from evaluator.store import ingested
from tests.support import testdata
from tests.support.apptest import open_app_page

PAGE = "views/samples.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("ex") / "leaderboard_data")
    human = testdata.human_grades(r, "demo")
    testdata.add_run(
        r,
        "demo",
        "Explainer",
        explanations=True,
        accuracy=0.9,
        seed=2,
        grades=pd.concat([human, testdata.judge_grades(human)]),
    )
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


def open_page(params: dict[str, str | list[str]] | None = None) -> AppTest:
    return open_app_page(PAGE, params)


def results(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value


def count(at: AppTest) -> int:
    return int(at.markdown[0].value.split("**")[1].replace(",", ""))


def test_first_page_and_paging(data: Path) -> None:
    at = open_page()
    assert at.title[0].value == "🔎 Samples"
    # the list starts on the test split (the one runs predict), not dev samples first
    assert at.multiselect(key="ex.split").value == ["test"]
    assert count(at) == 210
    first = list(results(at)["sample"])
    assert len(first) == 20 and first == sorted(first)
    pag = at.get("pagination")[0]
    assert pag.num_pages == 11
    pag.set_value(2).run()
    assert at.query_params["page"] == "2"
    second = list(results(at)["sample"])
    assert len(second) == 20 and second[0] > first[-1] and not set(first) & set(second)
    # the page is in the link
    assert list(results(open_page({"page": "2"}))["sample"]) == second


def test_filters_from_widgets_and_url(data: Path) -> None:
    at = open_page()
    at.multiselect(key="ex.domain").set_value(["science"]).run()
    at.selectbox(key="ex.label").set_value("inconsistent").run()
    at.multiselect(key="ex.etype").set_value(["antonym_swap"]).run()
    df = ingested.load_samples("demo", data)
    want = df[
        (df["split"] == "test")
        & (df["domain"] == "science")
        & (df["label"] == 0)
        & df["error_types"].map(lambda t: "antonym_swap" in list(t))
    ]
    assert count(at) == len(want) == 10
    assert set(results(at)["sample"]) == set(want["sample_id"])
    assert at.query_params["domain"] == "science" and at.query_params["label"] == "inconsistent"
    again = open_page(dict(at.query_params))
    assert count(again) == 10
    at.text_input(key="ex.q").set_value("worsened").run()
    assert count(at) == 10 and at.query_params["q"] == "worsened"
    at.text_input(key="ex.q").set_value("no such words anywhere").run()
    assert count(at) == 0


def test_search_reaches_model_explanations(data: Path) -> None:
    at = open_page({"q": "something the document does not"})
    assert 0 < count(at) < 210


def test_wrong_filters(data: Path) -> None:
    rid = next(p.name for p in (data / "runs").iterdir() if "always-consistent" in p.name)
    at = open_page({"wrong": rid})
    df = ingested.load_samples("demo", data)
    assert count(at) == int(((df["split"] == "test") & (df["label"] == 0)).sum())
    assert set(results(at)["gold"]) == {"✗ inconsistent"}
    at = open_page()
    at.toggle(key="ex.hard").set_value(True).run()
    assert at.query_params["hard"] == "1"
    wrong = results(at)["wrong"].str.split("/", expand=True).astype(int)
    share = (wrong[0] / wrong[1]).to_numpy()
    assert len(share) > 0 and (share > 0.5).all()
    assert (share[:-1] >= share[1:]).all()  # hardest first


def picker(at: AppTest):  # type: ignore[no-untyped-def]
    return next(sb for sb in at.selectbox if sb.label.startswith("Open a sample"))


def test_opening_a_sample_shows_everything(data: Path) -> None:
    at = open_page({"sample": "demo-news-05_3"})
    assert not at.tabs  # list and detail side by side
    assert at.subheader[0].value == "Sample demo\\-news\\-05\\_3"
    facts = at.text[0].value
    assert "gold: ✗ inconsistent" in facts and "error types: antonym_swap" in facts
    html = "".join(h.proto.body for h in at.get("html"))
    assert "<del" in html and "<ins" in html  # the edit against the seed summary
    assert any(e.label.startswith("Document (") for e in at.expander)
    assert "demo-news-05_3" in at.code[0].value and "samples?benchmark=demo" in at.code[0].value
    preds = at.dataframe[-1].value
    assert len(preds) == 5 and {"prediction", "correct", "explanation", "grades"} <= set(
        preds.columns
    )
    explainer = preds[preds["model"] == "Explainer"].iloc[0]
    assert "**not bold**" in explainer["explanation"]  # shown as text, not rendered
    # a run with labels only shows "—" for its score, not "None"
    assert "None" not in preds["score"].astype(str).tolist() and "—" in preds["score"].tolist()
    assert "human:" in explainer["grades"] and "gpt-4o/EvalV4:" in explainer["grades"]


def test_selecting_from_the_page_updates_the_url(data: Path) -> None:
    at = open_page()
    assert not at.subheader  # no sample open yet
    target = results(at)["sample"].iloc[3]
    picker(at).set_value(target).run()
    assert at.query_params["sample"] == target
    assert at.subheader[0].value.replace("\\", "") == f"Sample {target}"
    # the list stays beside it, with full ids
    assert results(at)["sample"].iloc[3] == target
    assert at.query_params["sample"] == target


def test_next_and_previous_step_through_the_list_and_turn_pages(data: Path) -> None:
    at = open_page()
    ids = list(results(at)["sample"])
    nxt, prev = at.button(key="ex.next"), at.button(key="ex.prev")
    assert nxt.proto.shortcut == "j" and prev.proto.shortcut == "k"
    nxt.click().run()
    assert at.query_params["sample"] == ids[0]
    assert at.button(key="ex.prev").disabled  # nothing before the first sample of page 1
    at.button(key="ex.next").click().run()
    assert at.query_params["sample"] == ids[1]
    at.button(key="ex.prev").click().run()
    assert at.query_params["sample"] == ids[0]
    assert at.subheader[0].value.replace("\\", "") == f"Sample {ids[0]}"
    # past the last sample of the page: the next page, its first sample
    at = open_page({"sample": ids[-1]})
    at.button(key="ex.next").click().run()
    assert at.query_params["page"] == "2"
    second = list(results(at)["sample"])
    assert second[0] > ids[-1] and at.query_params["sample"] == second[0]
    at.button(key="ex.prev").click().run()
    assert at.query_params.get("page", "1") == "1" and at.query_params["sample"] == ids[-1]
    assert list(results(at)["sample"]) == ids


def test_the_order_says_hardest_first_when_it_is(data: Path) -> None:
    at = open_page()
    assert at.selectbox(key="ex.sort").value == "id"
    at.toggle(key="ex.hard").set_value(True).run()
    order = at.selectbox(key="ex.sort")
    assert order.value == "most_wrong" and order.options == ["hardest first", "domain"]


def test_an_unknown_sample_in_a_link(data: Path) -> None:
    at = open_page({"sample": "not-a-real-id"})
    assert any("not in this benchmark" in w.value for w in at.warning)
    assert "sample" not in at.query_params
    assert len(results(at)) == 20


def test_summary_without_seed_and_sentences(
    shared_benchmarks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real TofuEval: no document (not redistributed), sentences with labels and
    explanations, a sentence-level run rolled up to the summary."""
    root = tmp_path / "leaderboard_data"
    (root / "benchmarks").mkdir(parents=True)
    pipeline.ingest("tofueval", shared_benchmarks / "tofueval", root=root)
    testdata.add_run(root, "tofueval", "Sentence judge", accuracy=0.8)
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    df = ingested.load_samples("tofueval", root)
    summ = df[(df["unit"] == "summary") & (df["label"] == 0) & (df["split"] == "test")]
    sid = summ["sample_id"].iloc[0]
    at = open_page({"benchmark": "tofueval", "unit": "summary", "sample": sid})
    assert any("Document not redistributed" in i.value for i in at.info)
    assert list(results(at).columns)[-2:] == ["summary", "wrong"]
    sentences = at.dataframe[1].value  # the list, then the sample: sentences, predictions
    n_sent = int(((df["unit"] == "sentence") & (df["summary_id"] == sid)).sum())
    assert len(sentences) == n_sent and "✗ inconsistent" in set(sentences["gold"])
    preds = at.dataframe[-1].value
    assert preds["prediction"].iloc[0].endswith("(from its sentences)")
    # topic-type filter exists for TofuEval and is in the URL
    at = open_page({"benchmark": "tofueval", "unit": "sentence", "topic": "marginal"})
    assert at.multiselect(key="ex.topic").value == ["marginal"]
    assert set(results(at)["topic"]) == {"marginal"}
    # sentences are headed "sentence", and the level is named the same way everywhere
    assert "sentence" in results(at).columns and "summary" not in results(at).columns
    assert at.selectbox(key="ex.unit").value == "sentence"
    assert at.selectbox(key="ex.unit").options == ["sentence level", "summary level"]


def test_no_benchmark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOARD_DATA", str(tmp_path / "empty"))
    at = open_page()
    assert "No benchmark is ingested yet" in at.info[0].value
