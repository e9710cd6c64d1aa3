"""AppTest: the leaderboard page, its widgets and its URL state."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evaluator.store import runs
from explorer import leaderboard as L
from tests.support import testdata
from tests.support.apptest import open_app_page

PAGE = "views/leaderboard.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("lb") / "leaderboard_data")
    testdata.add_run(
        r, "demo", testdata.XSS_NAME, accuracy=0.8, kind="proprietary-llm", params="70B", seed=4
    )
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


def open_page(params: dict[str, str | list[str]] | None = None) -> AppTest:
    return open_app_page(PAGE, params)


def table(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value


def open_filters(at: AppTest) -> None:
    """Unfold the row of filters (drawn only when open)."""
    at.session_state["lb.filters"] = True
    at.run()


def test_default_board_on_the_demo(data: Path) -> None:
    at = open_page()
    assert at.title[0].value == "🏆 Leaderboard"
    assert any("Synthetic demo data" in w.value for w in at.warning)
    t = table(at)
    assert len(t) == 5
    assert {
        "Always consistent",
        "Random guess (seed 0)",
        "Summary-token precision",
        "Novel numbers & names",
        testdata.XSS_NAME,
    } == set(t["Model"])
    # a handful of columns: every run here is a FactBoard run, so no Source column
    assert list(t.columns) == ["Rank", "Model", "Kind", "BAcc", "95% CI", "Δ to best run", "n"]
    assert t["BAcc"].is_monotonic_decreasing
    assert all(str(c).startswith("data:image/svg+xml") for c in t["95% CI"])
    assert t["Rank"].min() == 1
    # the filters are folded away and not drawn; the URL holds their defaults all the same
    assert not at.multiselect and not at.text_input
    # and so are the downloads, the run card and the choice of rows (runs, published, both)
    assert not at.download_button and not at.radio
    assert "lb.run" not in [w.key for w in at.selectbox]
    assert at.query_params["sort"] == "value" and at.query_params["cols"] == L.DEFAULT_COLUMNS
    # the coverage, on demand
    open_filters(at)
    at.multiselect(key="lb.cols").set_value([*L.DEFAULT_COLUMNS, "coverage"]).run()
    assert (table(at)["Coverage"] == "3/3 domains").all()
    at.multiselect(key="lb.cols").set_value(L.DEFAULT_COLUMNS).run()
    assert "paired bootstrap" in at.caption[2].value  # (after the notice and the header)
    at.session_state["lb.downloads"] = True
    at.run()
    assert [b.label for b in at.download_button] == [
        "⬇️ CSV",
        "⬇️ JSON",
        "⬇️ LaTeX",
        "⬇️ Every Eval Ever",
    ]
    # every widget that changes the view is in the URL, defaults included: a copied link
    # shows the same view in a browser with another session
    assert dict(at.query_params) == {
        "benchmark": "demo",
        "unit": "summary",
        "slice": "overall",
        "metric": "balanced_accuracy",
        "sort": "value",
        "rows": "all",
        "cols": L.DEFAULT_COLUMNS,
    }
    # the charts are folded away until opened: none of them is computed on the first load
    assert [e.label for e in at.expander if e.label.startswith("Charts")] == [
        "Charts: CI forest plot · Model × slice · Error types · Size vs score"
    ]
    assert not at.tabs
    # the citation is drawn when its expander is opened
    assert not at.code
    at.session_state["lb.cite"] = True
    at.run()
    code = [c.value for c in at.code]
    assert code and code[0].startswith("@misc{factboard-demo")
    # and so are the charts
    at.session_state["lb.charts"] = True
    at.run()
    assert [t.label for t in at.tabs][0] == "CI forest plot"
    assert at.query_params["chart"] == "CI forest plot"


def test_state_comes_from_the_url(data: Path) -> None:
    at = open_page(
        {
            "benchmark": "demo",
            "slice": "domain",
            "value": "news",
            "metric": "fpr",
            "q": "guess",
            "cols": ["n", "coverage"],
        }
    )
    assert at.selectbox(key="lb.slice").value == "domain"
    assert at.selectbox(key="lb.value").value == "news"
    assert at.selectbox(key="lb.metric").value == "fpr"
    assert at.text_input(key="lb.q").value == "guess"
    t = table(at)
    assert list(t["Model"]) == ["Random guess (seed 0)"]
    assert list(t.columns) == ["Rank", "Model", "FPR", "n", "Coverage"]
    assert t["Coverage"].iloc[0] == "news"
    assert "By domain: news" in at.markdown[0].value


def test_unknown_url_values_fall_back_to_defaults(data: Path) -> None:
    at = open_page({"benchmark": "no-such-benchmark", "slice": "bogus", "metric": "nope"})
    assert at.selectbox(key="lb.benchmark").value == "demo"
    assert at.selectbox(key="lb.slice").value == "overall"
    assert at.selectbox(key="lb.metric").value == "balanced_accuracy"
    assert at.query_params["slice"] == "overall"
    assert at.query_params["metric"] == "balanced_accuracy"
    assert any("no-such-benchmark" in w.value.replace("\\", "") for w in at.warning)


def test_changing_the_slice_updates_table_and_url(data: Path) -> None:
    at = open_page()
    at.selectbox(key="lb.slice").set_value("edit_type").run()
    assert at.query_params["slice"] == "edit_type"
    first = at.selectbox(key="lb.value").value
    assert first == "antonym_swap"
    at.selectbox(key="lb.value").set_value("negation_insertion_removal").run()
    assert at.query_params["value"] == "negation_insertion_removal"
    t = table(at)
    assert len(t) == 5 and t["BAcc"].notna().all()
    assert "By edit type: negation" in at.markdown[0].value.replace("\\_", "_")
    # a shared link reproduces the view
    shared = open_page(dict(at.query_params))
    pd.testing.assert_frame_equal(table(shared), t)


def test_filters_sort_and_columns(data: Path) -> None:
    at = open_page()
    open_filters(at)
    at.multiselect(key="lb.kind").set_value(["baseline"]).run()
    assert set(table(at)["Kind"]) == {"baseline"} and len(table(at)) == 2
    assert at.query_params["kind"] == "baseline"
    at.multiselect(key="lb.kind").set_value(["baseline", "non-llm"]).run()
    assert at.query_params["kind"] == ["baseline", "non-llm"] and len(table(at)) == 4
    at.multiselect(key="lb.kind").set_value([]).run()
    at.selectbox(key="lb.sort").set_value("model").run()
    models = list(table(at)["Model"])
    assert models == sorted(models, key=str.lower)
    at.multiselect(key="lb.cols").set_value(["run_id", "m:fpr"]).run()
    cols = list(table(at).columns)
    assert cols == ["Rank", "Model", "BAcc", "Run", "FPR"]
    # the runs' FPR, read when its column is shown: each run's own number
    for run_id, fpr in zip(table(at)["Run"], table(at)["FPR"], strict=True):
        if run_id:
            got = runs.read_record(data / "runs" / run_id).result("fpr")
            assert got is not None and float(fpr) == pytest.approx(got.value, abs=5e-4)
    assert at.query_params["cols"] == ["run_id", "m:fpr"]
    at.text_input(key="lb.q").set_value("TOKEN").run()
    assert list(table(at)["Model"]) == ["Summary-token precision"]
    # folded away again, the filters hold: the look is read from the URL they wrote
    params = dict(at.query_params)
    at.session_state["lb.filters"] = False
    at.run()
    assert not at.text_input
    assert list(table(at).columns) == ["Rank", "Model", "BAcc", "Run", "FPR"]
    assert list(table(at)["Model"]) == ["Summary-token precision"]
    assert dict(at.query_params) == params
    open_filters(at)  # and unfolded, the widgets take their values from it
    assert at.text_input(key="lb.q").value == "TOKEN"
    assert at.multiselect(key="lb.cols").value == ["run_id", "m:fpr"]
    assert at.query_params["q"] == "TOKEN"


def test_origin_filter(data: Path) -> None:
    at = open_page({"origin": "submitted", "cols": ["origin"]})
    assert list(table(at)["Model"]) == [testdata.XSS_NAME]
    assert set(table(at)["Origin"]) == {"📤 submitted"}


def test_drill_down_links_to_the_samples_it_gets_wrong(data: Path) -> None:
    at = open_page({"slice": "domain", "value": "science"})
    at.session_state["lb.runcard"] = True  # the run card, opened
    at.run()
    run_opts = at.selectbox(key="lb.run").options
    assert run_opts[0] == "choose a run…" and len(run_opts) == 6
    rid = next(p.name for p in (data / "runs").iterdir() if "random-guess" in p.name)
    at.selectbox(key="lb.run").set_value(rid).run()
    assert at.query_params["run"] == rid
    links = at.get("page_link")
    wrong = next(pl for pl in links if pl.proto.page == "samples")
    assert wrong.proto.label == "Samples this run gets wrong in science"
    qs = wrong.proto.query_string
    assert f"wrong={rid}" in qs and "domain=science" in qs and "benchmark=demo" in qs
    cmp = next(pl for pl in links if pl.proto.page == "compare")
    assert f"a={rid}" in cmp.proto.query_string
    assert any(t.value.startswith("Random guess (seed 0)") for t in at.text)
    # folded again, the card is not drawn and the link names no run
    at.session_state["lb.runcard"] = False
    at.run()
    assert "run" not in at.query_params and "lb.run" not in [w.key for w in at.selectbox]


def test_model_names_are_text_not_markup(data: Path) -> None:
    """A model called `<script>alert(1)</script>**bold** ...` is shown literally."""
    rid = next(p.name for p in (data / "runs").iterdir() if "script" in p.name)
    at = open_page({"run": rid})
    assert testdata.XSS_NAME in set(table(at)["Model"])
    assert any(t.value.startswith(testdata.XSS_NAME) for t in at.text)  # st.text: literal
    for m in at.markdown:
        assert "<script>" not in m.value and "**bold**" not in m.value
    assert any(o.startswith(testdata.XSS_NAME) for o in at.selectbox(key="lb.run").options)


def test_every_chart_tab_renders(data: Path) -> None:
    for chart in ("CI forest plot", "Model × slice", "Error types", "Size vs score"):
        at = open_page({"chart": chart})
        tabs = at.tabs
        assert [t.label for t in tabs] == [
            "CI forest plot",
            "Model × slice",
            "Error types",
            "Size vs score",
        ]
        active = next(t for t in tabs if t.label == chart)
        assert len(active.children) >= 1  # only the active tab is computed
        others = [t for t in tabs if t.label != chart]
        assert all(len(t.children) == 0 for t in others)
        if chart != "CI forest plot":
            assert at.query_params["chart"] == chart


def test_published_only_benchmark(data: Path) -> None:
    at = open_page(
        {"benchmark": "tofueval", "slice": "dataset+topic_type", "value": "mediasum+main"}
    )
    assert any("published numbers only" in i.value for i in at.info)
    t = table(at)
    assert len(t) > 5 and "95% CI" not in t.columns
    # published numbers only: ranked by value, and said so
    assert t.columns[0] == "Rank (by value)" and t["Rank (by value)"].iloc[0] == 1
    assert "Δ to top" in t.columns
    assert "not significance" in at.caption[2].value  # (after the notice and the header)
    assert any(e.label.startswith("Charts: Values plot") for e in at.expander)
    opened = open_page(
        {
            "benchmark": "tofueval",
            "slice": "dataset+topic_type",
            "value": "mediasum+main",
            "chart": "Values plot",
        }
    )
    assert [x.label for x in opened.tabs][0] == "Values plot"


def test_level_switch_on_published_tofueval(data: Path) -> None:
    at = open_page({"benchmark": "tofueval", "slice": "dataset+topic_type"})
    assert at.selectbox(key="lb.unit").options == ["summary level", "sentence level"]
    at.selectbox(key="lb.unit").set_value("sentence").run()
    assert at.query_params["unit"] == "sentence"
    assert len(table(at)) > 0


def test_a_view_without_the_metric_says_so(data: Path) -> None:
    at = open_page(
        {
            "benchmark": "tofueval",
            "unit": "sentence",
            "slice": "dataset+topic_type",
            "metric": "fpr",
        }
    )
    assert at.selectbox(key="lb.metric").value == "fpr"
    assert not any("not reported in the view" in w.value for w in at.warning)
    # sentence-level TofuEval per dataset has Cohen's kappa only: the page says it switched
    at.selectbox(key="lb.slice").set_value("dataset").run()
    assert at.selectbox(key="lb.metric").value == "cohen_kappa"
    assert any(
        "FPR is not reported in the view 'By dataset' (sentence level); showing Cohen κ"
        in w.value.replace("\\", "")  # markdown-escaped
        for w in at.warning
    )
    assert "Cohen κ" in table(at).columns
    # a link naming a metric the view lacks is answered the same way
    at = open_page({"benchmark": "demo", "metric": "cohen_kappa"})
    assert at.selectbox(key="lb.metric").value == "balanced_accuracy"
    assert any("Cohen κ is not reported" in w.value for w in at.warning)


def test_significance_columns_and_the_pairwise_matrix(data: Path) -> None:
    at = open_page()
    open_filters(at)
    at.multiselect(key="lb.cols").set_value([*L.DEFAULT_COLUMNS, "delta_ci", "delta_p"]).run()
    t = table(at)
    for col in ("95% CI", "Δ to best run", "Δ 95% CI (paired)", "p vs best run"):
        assert col in t.columns
    assert "Check" not in t.columns  # no flagged number here: no empty column
    assert t["Δ to best run"].iloc[0] == "0.000"
    assert all(d.startswith("−") for d in t["Δ to best run"].iloc[1:] if d != "0.000")
    assert t["Δ 95% CI (paired)"].iloc[0] == ""  # the leader itself
    assert t["Δ 95% CI (paired)"].iloc[1].startswith("[")
    assert t["p vs best run"].iloc[1] != ""
    assert all(p == "< 0.001" or p[0].isdigit() for p in t["p vs best run"].iloc[1:])
    assert all(str(bar).startswith("data:image/svg+xml") for bar in t["95% CI"])
    assert any("Pairwise significance" in e.label for e in at.expander)
    at.session_state["lb.pairs"] = True  # opened: the matrix is drawn
    at.run()
    exp = next(e for e in at.expander if "Pairwise significance" in e.label)
    m = exp.dataframe[0].value
    assert m.shape == (5, 5) and m.iloc[0, 0] == "—"
    assert all(c[0] in "▲▼≈—" for c in m.to_numpy().ravel())


def test_show_only_factboard_runs_or_published_rows(data: Path) -> None:
    at = open_page({"benchmark": "summedits"})
    assert at.query_params["rows"] == "all"
    assert len(table(at)) > 0
    open_filters(at)
    at.radio(key="lb.rows").set_value("published").run()
    assert at.query_params["rows"] == "published"
    # (no run on SummEdits here: its published numbers are ranked by value, and said so)
    assert table(at)["Rank (by value)"].iloc[0] == 1 and "95% CI" not in table(at).columns
    assert any("not significance" in c.value for c in at.caption)
    at = open_page({"benchmark": "demo", "rows": "runs"})
    assert len(table(at)) == 5 and table(at)["Rank"].notna().all()
    # a link that narrows the rows opens the filters, where the choice is shown
    assert at.radio(key="lb.rows").value == "runs"
    at = open_page({"benchmark": "demo", "rows": "nonsense"})
    assert at.query_params["rows"] == "all" and not at.radio


def test_published_duplicates_fold_and_suspect_rows_are_flagged(data: Path) -> None:
    at = open_page({"benchmark": "summedits", "slice": "domain", "value": "news", "q": "human"})
    assert "Source" in table(at).columns  # published rows name their source
    t = table(at)
    assert len(t) == 1  # paper and README: one row naming both sources
    assert "Table 9" in t["Source"].iloc[0] and "README" in t["Source"].iloc[0]
    at = open_page({"benchmark": "summedits", "q": "cohere"})
    t = table(at)
    flags = [f for f in t["Check"] if f]
    assert flags and all(f.startswith("⚠ suspect: ") and len(f) > 20 for f in flags)
    assert not any("README.md" in w.value for w in at.warning)


def test_the_readers_metric_comes_back_after_a_view_without_it(data: Path) -> None:
    """The metric is stable per benchmark: a view that lacks it shows another and says so;
    the next view that has it shows it again (and the URL follows)."""
    at = open_page(
        {
            "benchmark": "tofueval",
            "unit": "sentence",
            "slice": "dataset+topic_type",
            "metric": "fpr",
        }
    )
    at.selectbox(key="lb.slice").set_value("dataset").run()
    assert at.selectbox(key="lb.metric").value == "cohen_kappa"
    at.selectbox(key="lb.slice").set_value("dataset+topic_type").run()
    assert at.selectbox(key="lb.metric").value == "fpr"
    assert at.query_params["metric"] == "fpr"


def test_the_forest_plot_pages_through_every_row(data: Path) -> None:
    """77 published rows: 4 pages of at most 25, each page its URL; every row is reachable."""
    at = open_page({"benchmark": "factcc_synthetic", "chart": "Values plot"})
    n = len(table(at))
    assert n > 50
    pag = at.get("pagination")
    assert len(pag) == 1 and pag[0].num_pages == -(-n // 25)
    caption = " ".join(c.value for c in at.caption)
    assert f"Rows 1–25 of the {n} rows with a number" in caption
    pag[0].set_value(pag[0].num_pages).run()
    assert at.query_params["fpage"] == str(-(-n // 25))
    last = n - 25 * (-(-n // 25) - 1)
    assert f"Rows {n - last + 1}–{n} of the {n} rows" in " ".join(c.value for c in at.caption)
    again = open_page({"benchmark": "factcc_synthetic", "chart": "Values plot", "fpage": "2"})
    assert "Rows 26–50" in " ".join(c.value for c in again.caption)


def test_a_short_board_has_one_forest_page(data: Path) -> None:
    at = open_page({"chart": "CI forest plot"})
    assert at.tabs and at.query_params["chart"] == "CI forest plot"
    assert len(at.get("pagination")) == 0
    assert not any("Rows 1–" in c.value for c in at.caption)


def test_levels_read_as_levels(data: Path) -> None:
    at = open_page()
    assert at.selectbox(key="lb.unit").format_func("summary") == "summary level"


def test_a_new_or_deleted_run_shows_on_the_next_render(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board keeps the runs' columns and labels between views; a run added or deleted
    while a reader changes slices is on (or off) the very next board."""
    own = tmp_path / "leaderboard_data"
    shutil.copytree(root, own)
    monkeypatch.setenv("FACTBOARD_DATA", str(own))
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_path / "cache"))
    at = open_page({"slice": "domain", "value": "news"})
    assert len(table(at)) == 5
    new = testdata.add_run(own, "demo", "Late arrival", accuracy=0.99, seed=11)
    at.selectbox(key="lb.value").set_value("science").run()
    t = table(at)
    assert len(t) == 6 and t.iloc[0]["Model"] == "Late arrival" and t.iloc[0]["Rank"] == 1
    at.selectbox(key="lb.value").set_value("news").run()  # a view shown before the run came
    assert "Late arrival" in set(table(at)["Model"])
    runs.delete_run(new.name, own)
    at.selectbox(key="lb.value").set_value("science").run()
    assert "Late arrival" not in set(table(at)["Model"]) and len(table(at)) == 5


def test_a_long_board_draws_its_first_rows_until_asked_for_all(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A board of thousands of runs would send every row to the browser on every view: it
    draws the first FIRST_ROWS in the table's order, says so, and draws all of them when
    asked (a choice the link keeps)."""
    from explorer import board_table

    monkeypatch.setattr(board_table, "FIRST_ROWS", 20)
    every = table(open_page({"benchmark": "factcc_synthetic", "all": "1"}))
    assert len(every) > 40
    at = open_page({"benchmark": "factcc_synthetic"})
    first = table(at)
    assert list(first["Model"]) == list(every["Model"])[:20]
    line = " ".join(m.value for m in at.markdown)
    assert f"The first **20** of **{len(every)}** rows" in line
    toggle = at.toggle(key="lb.all")
    assert toggle.label == f"Show all {len(every)} rows" and not toggle.value
    toggle.set_value(True).run()
    assert len(table(at)) == len(every) and at.query_params["all"] == "1"
    assert f"**{len(every)}** rows shown" in " ".join(m.value for m in at.markdown)
    at.toggle(key="lb.all").set_value(False).run()
    assert len(table(at)) == 20 and at.query_params["all"] == "0"
