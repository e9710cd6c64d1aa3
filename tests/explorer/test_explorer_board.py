"""The leaderboard table, the comparison of two runs, and the explorer's tables."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.benchmarks import registry
from evaluator.core import metrics as M
from evaluator.store import export, runs
from explorer import benchmarks as cards
from explorer import charts, compare, explanations
from explorer import leaderboard as L
from explorer import queries as Q
from explorer import samples as X
from explorer.store import Store
from tests.support import testdata

SPEC = registry.get("demo")


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = testdata.build_demo_root(tmp_path_factory.mktemp("board") / "leaderboard_data")
    testdata.add_run(root, "demo", "Strong model 7B", accuracy=0.95, params="7B", seed=1)
    testdata.add_run(root, "demo", "Partial model", accuracy=0.9, seed=2, policy="labels")
    # published numbers for the demo, over all three domains, from an imaginary paper
    rows = [
        {
            "model": "Paper model 13B",
            "kind": "open-llm",
            "benchmark": "demo",
            "split": "all",
            "unit": "summary",
            "slice_kind": "overall",
            "slice_value": "",
            "metric": "balanced_accuracy",
            "value": 0.7,
            "n": 294,
            "coverage": "news;meeting;science",
            "source": "Imaginary paper, Table 1",
            "note": "prompt=ZS; suspect=yes; printed as is",
        },
        {
            "model": "Paper model 13B",
            "kind": "open-llm",
            "benchmark": "demo",
            "split": "all",
            "unit": "summary",
            "slice_kind": "overall",
            "slice_value": "",
            "metric": "accuracy",
            "value": 0.71,
            "n": 294,
            "coverage": "news;meeting;science",
            "source": "Imaginary paper, Table 1",
            "note": "prompt=ZS; suspect=yes; printed as is",
        },
        {
            "model": "Paper model 13B",
            "kind": "open-llm",
            "benchmark": "demo",
            "split": "all",
            "unit": "summary",
            "slice_kind": "domain",
            "slice_value": "news",
            "metric": "balanced_accuracy",
            "value": 0.65,
            "n": "",
            "coverage": "",
            "source": "Imaginary paper, Table 1",
            "note": "prompt=ZS; suspect=yes; printed as is",
        },
    ]
    pd.DataFrame(rows).to_csv(root / "reported" / "imaginary.csv", index=False)
    return root


@pytest.fixture(scope="module")
def store(demo_root: Path) -> Store:
    s = Store(demo_root)
    s.refresh()
    s.ensure_labels("demo")
    return s


def _board(store: Store, **kw: str) -> L.Board:
    q = L.BoardQuery("demo", "summary", **kw)
    return L.build_board(store.cursor(), q, SPEC, store.version("demo"), memo={})


def test_narrow_run_queries_agree_with_the_wide_one(store: Store) -> None:
    con = store.cursor()
    wide = Q.run_results(con, "demo", "summary", "domain", "news")
    assert len(wide) and wide["metric"].nunique() > 1
    one = Q.run_results(con, "demo", "summary", "domain", "news", "balanced_accuracy")
    expect = wide[wide["metric"] == "balanced_accuracy"].reset_index(drop=True)
    pd.testing.assert_frame_equal(one, expect)
    board = _board(store, slice_kind="domain", slice_value="news")
    runs_rows = board.rows[board.rows["origin_code"] != "reported"].set_index("run_id")
    for metric in ("accuracy", "roc_auc"):
        got = wide[wide["metric"] == metric].set_index("run_id")["value"]
        assert runs_rows.loc[got.index, f"m:{metric}"].tolist() == got.tolist()


@pytest.mark.parametrize(
    "view", [{}, {"slice_kind": "domain", "slice_value": "news"}], ids=["overall", "news"]
)
def test_a_board_with_its_other_metrics_unread_reads_them_to_the_same_rows(
    store: Store, view: dict[str, str]
) -> None:
    """The pages build a board with the runs' other metrics unread (named from the view's
    dimensions) and read them only when a column shows one: the same columns, the published
    rows' values at once, and with them read, the same rows as a board that read them."""
    full = _board(store, **view)
    q = L.BoardQuery("demo", "summary", **view)
    dims = Q.result_dimensions(store.cursor(), "demo")
    lazy = L.build_board(
        store.cursor(),
        q,
        SPEC,
        store.version("demo"),
        memo={},
        run_metrics=L.run_metrics(dims, q.unit, q.slice_kind, q.slice_value),
    )
    assert lazy.other_metrics == full.other_metrics and "m:accuracy" in full.other_metrics
    is_run = (lazy.rows["origin_code"] != "reported").to_numpy()
    assert lazy.rows.loc[is_run, full.other_metrics].isna().all().all()
    pd.testing.assert_frame_equal(
        lazy.rows.loc[~is_run, full.other_metrics], full.rows.loc[~is_run, full.other_metrics]
    )
    read = L.with_other_values(store.cursor(), q, lazy.rows)
    pd.testing.assert_frame_equal(read, full.rows)
    assert lazy.rows.loc[is_run, full.other_metrics].isna().all().all()  # left as it was


def test_board_rows_values_and_paired_ranks(store: Store, demo_root: Path) -> None:
    b = _board(store)
    rows = b.rows
    runs_rows = rows[rows["origin_code"] != "reported"]
    assert len(runs_rows) == 6
    for r in runs_rows.itertuples():
        rec = runs.read_record(demo_root / "runs" / r.run_id)
        res = rec.result("balanced_accuracy")
        assert (r.value, r.ci_low, r.ci_high, r.n) == (res.value, res.ci_low, res.ci_high, res.n)
        assert r.coverage == "3/3 domains"
    # every run is complete on the same samples: all paired
    assert set(b.paired_runs) == set(runs_rows["run_id"])
    assert "paired bootstrap" in b.method
    top = runs_rows.iloc[0]
    assert top["model"] == "Strong model 7B" and top["rank"] == 1
    assert runs_rows[runs_rows["model"] == "Always consistent"]["rank"].iloc[0] > 1
    # ranks never improve going down a list sorted by value, beyond ties
    assert rows["value"].is_monotonic_decreasing
    # published rows: marked, not ranked, config split from the free text
    rep = rows[rows["origin_code"] == "reported"].iloc[0]
    assert rep["origin"] == "📄 reported" and pd.isna(rep["rank"])
    assert rep["config"] == "prompt=ZS; suspect=yes" and rep["note"] == "printed as is"
    assert rep["split"] == "all" and rep["m:accuracy"] == pytest.approx(0.71)
    assert any("different splits" in n for n in b.notes)
    assert any("⚠ suspect" in n for n in b.notes)


def test_ranks_agree_with_pairwise_engine_tests(store: Store) -> None:
    """A run gets rank 1 + the number of runs the paired bootstrap finds better."""
    b = _board(store)
    rows = b.rows[b.rows["paired"]].reset_index(drop=True)
    frame = Q.scored_samples(store.cursor(), "demo", "summary", ["test"])
    P = Q.label_matrix(store.cursor(), list(rows["run_id"]), "summary", frame["ix"])
    y = frame["label"].to_numpy().astype(np.int8)
    dom = frame["domain"].to_numpy()
    groups = [dom == d for d in np.unique(dom)]

    def stat(r: int):
        return M.mean_over_strata_w(lambda W, m: M.balanced_accuracy_w(W[:, m], y[m], P[r][m]), dom)

    better = np.zeros((len(rows), len(rows)), dtype=bool)
    for i in range(len(rows)):
        for j in range(len(rows)):
            if i != j:
                pc = M.paired_bootstrap(
                    stat(i), stat(j), len(y), resamples=1000, seed=0, strata=dom
                )
                better[i, j] = pc.difference > 0 and pc.p_value < 0.05
    expected = [1 + int(better[:, j].sum()) for j in range(len(rows))]
    assert list(rows["rank"]) == expected
    assert groups  # the stratified statistic had domains to average


def test_coverage_note_when_domains_differ(tmp_path: Path, demo_root: Path) -> None:
    root = tmp_path / "leaderboard_data"
    shutil.copytree(demo_root, root)
    csv = root / "reported" / "imaginary.csv"
    df = pd.read_csv(csv, keep_default_na=False)
    df.loc[0, "coverage"] = "news;meeting"  # a published Overall over two of the domains
    df.to_csv(csv, index=False)
    s = Store(root)
    s.refresh()
    s.ensure_labels("demo")
    b = L.build_board(s.cursor(), L.BoardQuery("demo", "summary"), SPEC, s.version("demo"))
    note = next(n for n in b.notes if "different domains" in n)
    assert "FactBoard runs cover 3 of 3 domains" in note
    assert "published numbers cover 2 of 3 domains (without science)" in note
    rep = b.rows[b.rows["origin_code"] == "reported"].iloc[0]
    assert rep["coverage"] == "2/3 domains (no science)"


def test_summedits_github_release_is_flagged_against_the_papers(
    shared_benchmarks: Path, tmp_path: Path
) -> None:
    """Real data: SummEdits from GitHub has 8 of its 10 domains; the paper's Overall has 10."""
    from evaluator.ingest import pipeline

    root = tmp_path / "leaderboard_data"
    (root / "benchmarks").mkdir(parents=True)
    shutil.copytree(
        Path(L.__file__).resolve().parents[1] / "leaderboard_data" / "reported", root / "reported"
    )
    pipeline.ingest("summedits", shared_benchmarks / "summedits", root=root)
    testdata.add_run(root, "summedits", "Some detector", accuracy=0.7)
    s = Store(root)
    s.refresh()
    s.ensure_labels("summedits")
    b = L.build_board(
        s.cursor(),
        L.BoardQuery("summedits", "summary"),
        registry.get("summedits"),
        s.version("summedits"),
    )
    run = b.rows[b.rows["origin_code"] != "reported"].iloc[0]
    assert run["coverage"] == "8/10 domains (no billsum, shakespeare)"
    # the paper's GPT4 and the README's fold into one row under the canonical name
    gpt4 = b.rows[(b.rows["model"] == "GPT-4") & (b.rows["origin_code"] == "reported")]
    assert len(gpt4) >= 1 and (gpt4["coverage"] == "10/10 domains").all()
    note = next(n for n in b.notes if "different domains" in n)
    assert "FactBoard runs cover 8 of 10 domains (without billsum, shakespeare)" in note
    assert "published numbers cover 10 of 10 domains" in note
    assert any("split 'all'" in n for n in b.notes)


def test_slice_view_and_lower_is_better(store: Store) -> None:
    b = _board(store, slice_kind="domain", slice_value="news", metric="fpr")
    rows = b.rows[b.rows["origin_code"] != "reported"]
    assert (rows["coverage"] == "news").all()
    assert rows["value"].is_monotonic_increasing  # lower FPR first
    best = rows.iloc[0]
    assert best["model"] in ("Always consistent", "Novel numbers & names") and best["rank"] == 1
    news = _board(store, slice_kind="domain", slice_value="news")
    rep = news.rows[news.rows["origin_code"] == "reported"]
    assert list(rep["value"]) == [0.65]


def test_display_table_and_exports_are_what_is_shown(store: Store) -> None:
    b = _board(store)
    shown = b.rows[b.rows["kind_code"] == "baseline"]
    cols = [*L.DEFAULT_COLUMNS, "delta_ci", "delta_p", "split", "m:accuracy"]
    screen = L.display_table(shown, cols, "BAcc", board=b)
    assert list(screen.columns) == [
        "Rank",
        "Model",
        "Kind",
        "BAcc",
        "95% CI",
        "Δ to best run",
        "Δ 95% CI (paired)",
        "p vs best run",
        "n",
        "Split",
        "Accuracy",
    ]
    # the files keep the numbers as numbers: the drawn CI becomes its bounds
    table = L.display_table(shown, cols, "BAcc", board=b, download=True)
    assert list(table.columns) == [
        "Rank",
        "Model",
        "Kind",
        "BAcc",
        "CI low",
        "CI high",
        "Δ to best run",
        "Δ CI low (paired)",
        "Δ CI high (paired)",
        "p vs best run",
        "n",
        "Split",
        "Accuracy",
    ]
    assert table["Δ to best run"].dtype.kind == "f" and table["p vs best run"].dtype.kind == "f"
    csv = pd.read_csv(io.StringIO(export.to_csv(table)))
    assert (
        list(csv["Model"]) == list(table["Model"]) == ["Random guess (seed 0)", "Always consistent"]
    )
    js = json.loads(export.to_json(table))
    assert [r["Model"] for r in js] == list(table["Model"])
    tex = export.to_latex(table)
    assert "Random guess (seed 0)" in tex and tex.count("\\\\\n") == len(table) + 1
    assert (
        L.file_stem("demo", "summary", "domain", "a/b c", "bacc")
        == "factboard-demo-summary-domain-a_b_c-bacc"
    )


def test_options_and_labels(store: Store) -> None:
    dims = Q.result_dimensions(store.cursor(), "demo")
    o = L.options(dims, None, None, "balanced_accuracy")
    assert o.units == ["summary"] and o.slice_kinds[0] == "overall"
    assert {"domain", "edit_type", "n_edit_types"} <= set(o.slice_kinds)
    o = L.options(dims, "summary", "domain", "balanced_accuracy")
    assert o.slice_values["domain"] == ["meeting", "news", "science"]
    assert o.metrics[0] == ("balanced_accuracy", None)
    assert L.params_to_float("7B") == (7e9, "stated")
    assert L.params_to_float(None, "Llama2-13b-chat") == (13e9, "from name")
    assert L.params_to_float(None, "GPT4") == (None, "")
    assert L.coverage_text(["a", "b"], ["a", "b", "c"], "overall", "") == "2/3 domains (no c)"
    rows = pd.DataFrame(
        {
            "model": ["m", "m", "m"],
            "origin_code": ["evaluated"] * 3,
            "config": ["", "", ""],
            "run_id": ["r-aaaaaa", "r-bbbbbb", "r-bbbbbb"],
            "source": ["x"] * 3,
        }
    )
    labels = L.row_labels(rows)
    assert len(set(labels)) == 3


def test_chart_data_and_charts(store: Store) -> None:
    b = _board(store)
    long = L.slice_long(store.cursor(), L.BoardQuery("demo", "summary"), "domain", b.rows)
    assert set(long["slice_value"]) == {"news", "meeting", "science"}
    assert (long[long["origin"] == "reported"]["value"] == 0.65).all()
    assert len(long[long["origin"] != "reported"]) == 6 * 3
    for ch in (
        charts.heatmap(long, "BAcc", "domain", b.rows["label"].tolist()),
        charts.forest(b.rows, "BAcc"),
        charts.size_vs_score(b.rows, "BAcc"),
    ):
        assert ch is not None and ch.to_dict()["$schema"].startswith("https://vega")
    size = b.rows[b.rows["params_value"].notna()]
    assert set(size["model"]) == {"Strong model 7B", "Paper model 13B"}


# --------------------------------------------------------------------------------------------
# compare


def test_compare_matches_the_engine(store: Store) -> None:
    ids = Q.runs_frame(store.cursor(), "demo").set_index("model_name")["run_id"]
    a, b = ids["Strong model 7B"], ids["Random guess (seed 0)"]
    c = compare.compare_runs(
        store.cursor(),
        SPEC,
        "summary",
        a,
        b,
        "balanced_accuracy",
        resamples=2000,
        slice_resamples=300,
    )
    f = Q.pair_frame(store.cursor(), "demo", "summary", a, b)
    y, pa, pb = (f[k].to_numpy().astype(np.int8) for k in ("label", "pred_a", "pred_b"))
    dom = f["domain"].to_numpy()
    sa = M.mean_over_strata_w(lambda W, m: M.balanced_accuracy_w(W[:, m], y[m], pa[m]), dom)
    sb = M.mean_over_strata_w(lambda W, m: M.balanced_accuracy_w(W[:, m], y[m], pb[m]), dom)
    ref = M.paired_bootstrap(sa, sb, len(y), resamples=2000, seed=0, strata=dom)
    assert c.n == len(y) == 210
    assert c.diff is not None
    assert c.diff.difference == pytest.approx(ref.difference, abs=1e-12)
    assert c.value_a - c.value_b == pytest.approx(ref.difference, abs=1e-12)
    # compressed resampling (exact in distribution, not draw for draw): CI and p agree closely
    assert c.diff.ci_low == pytest.approx(ref.ci_low, abs=0.03)
    assert c.diff.ci_high == pytest.approx(ref.ci_high, abs=0.03)
    assert c.mcnemar == M.mcnemar_exact(pa == y, pb == y)
    assert len(c.disagreements) == int((pa != pb).sum())
    assert set(c.disagreements["right"]) <= {"A", "B"}
    right_a = c.disagreements[c.disagreements["right"] == "A"]
    assert (right_a["pred_a"] == right_a["label"]).all()
    news = c.slices[(c.slices["slice_kind"] == "domain") & (c.slices["slice_value"] == "news")]
    m = dom == "news"
    assert news["value_a"].iloc[0] == pytest.approx(M.balanced_accuracy(y[m], pa[m]))
    assert set(c.slices["slice_kind"]) == {"domain", "edit_type", "n_edit_types"}


def test_compare_score_metric_needs_scores(store: Store) -> None:
    ids = Q.runs_frame(store.cursor(), "demo").set_index("model_name")["run_id"]
    c = compare.compare_runs(
        store.cursor(),
        SPEC,
        "summary",
        ids["Summary-token precision"],
        ids["Always consistent"],
        "roc_auc",
    )
    assert c.diff is None and any("has no scores" in n for n in c.notes)
    c = compare.compare_runs(
        store.cursor(),
        SPEC,
        "summary",
        ids["Summary-token precision"],
        ids["Novel numbers & names"],
        "roc_auc",
        resamples=300,
    )
    assert c.diff is not None and c.mcnemar is None and c.disagreements.empty


# --------------------------------------------------------------------------------------------
# explorer tables, cards, explanations


def test_explorer_tables(store: Store) -> None:
    con = store.cursor()
    page = Q.samples_page(
        con,
        Q.SampleFilter("demo", "summary", version=store.version("demo"), splits=("test",)),
        20,
        0,
    )
    t = X.page_table(page)
    assert list(t.columns) == [
        "sample",
        "sample id",
        "split",
        "domain",
        "gold",
        "error types",
        "summary",
        "wrong",
    ]
    assert set(t["gold"]) <= {"✓ consistent", "✗ inconsistent"}
    assert all("/" in w for w in t["wrong"])
    preds = Q.predictions_for_sample(con, "demo", "demo-news-05_3")
    pt = X.predictions_table(preds, Q.grades_for_sample(con, "demo", "demo-news-05_3"))
    assert len(pt) == 6 and set(pt["correct"]) <= {"✓", "✗ wrong"}
    assert "explanation" not in pt.columns  # no run explains itself here
    assert X.num_pages(41) == 3 and X.num_pages(0) == 1
    assert X.label_text(np.nan) == "—" and X.label_text(1) == "✓ consistent"


def test_cards(store: Store) -> None:
    meta = store.meta["demo"]
    bal = cards.balance_table(meta)
    assert list(bal["domain"]) == ["meeting", "news", "science", "total"]
    total = bal[bal["domain"] == "total"].iloc[0]
    assert total["total"] == 294 and total["dev"] + total["test"] == 294
    assert total["% consistent"] == pytest.approx(100 * 126 / 294, abs=0.05)
    et = cards.error_type_counts(meta)
    assert set(et["name"]) == {k.replace("_", " ") for k in meta["stats"]["error_types"]}
    ov = cards.overview(list(registry.specs()), store.meta)
    assert ov.set_index("name").loc["demo", "status"] == "synthetic demo"
    assert ov.set_index("name").loc["summedits", "status"] == "not ingested"


def test_explanations_distribution_and_judges(tmp_path: Path, demo_root: Path) -> None:
    root = tmp_path / "leaderboard_data"
    shutil.copytree(demo_root, root)
    s = Store(root)
    s.refresh()
    s.ensure_all_grades()
    assert explanations.type_distribution(s.cursor()).empty
    assert explanations.judge_agreement(s.cursor()).empty
    human = testdata.human_grades(root, "demo")
    judge = testdata.judge_grades(human, agree=0.8)
    testdata.add_run(
        root,
        "demo",
        "Explainer",
        explanations=True,
        grades=pd.concat([human, judge], ignore_index=True),
    )
    s.refresh()
    s.ensure_all_grades()
    dist = explanations.type_distribution(s.cursor())
    assert dist.groupby("run_id")["share"].sum().iloc[0] == pytest.approx(1.0)
    assert (
        dict(zip(dist["explanation_type"], dist["n"], strict=True))
        == human["rationale"].value_counts().to_dict()
    )
    tbl = explanations.type_table(dist)
    assert list(tbl.columns[:4]) == ["model", "run_id", "explanations", "correct"]
    agree = explanations.judge_agreement(s.cursor()).iloc[0]
    assert (agree["judge"], agree["protocol"], agree["n"]) == ("gpt-4o", "EvalV4", len(human))
    j, h = judge["grade"].to_numpy(), human["grade"].to_numpy()
    assert agree["pearson"] == pytest.approx(M.pearson(j, h))
    assert agree["cohen_kappa"] == pytest.approx(M.cohen_kappa(list(j), list(h)))
    assert agree["exact_agreement"] == pytest.approx((j == h).mean())


def test_tofueval_overall_carries_the_papers_table_3(store: Store) -> None:
    """The paper gives no TofuEval Overall: the Overall view shows its Table 3 (BAcc per
    dataset × topic type) instead of hiding it."""
    q = L.BoardQuery("tofueval", "summary", "overall", "", "balanced_accuracy")
    t = L.published_table(store.cursor(), q)
    assert {"mediasum × main", "mediasum × marginal", "meetingbank × main"} <= set(t.columns)
    assert len(t) >= 10 and all("Table" in s for s in t["Source"])
    assert t["mediasum × main"].between(0, 1).all()
    # a view with a published Overall, or a slice view, has no such table
    assert L.published_table(store.cursor(), L.BoardQuery("summedits", "summary")).empty
    assert L.published_table(
        store.cursor(), L.BoardQuery("tofueval", "summary", "dataset", "mediasum")
    ).empty


def test_the_board_downloads_what_it_shows_as_every_eval_ever_records(
    store: Store, demo_root: Path
) -> None:
    import io
    import json
    import zipfile

    from evaluator.interop import eee

    rows = _board(store).rows
    shown = rows[rows["origin_code"] != "reported"].head(2)
    build = L.eee_download(shown, demo_root, "demo")
    assert build is not None
    with zipfile.ZipFile(io.BytesIO(build())) as z:
        names = z.namelist()
        records = [json.loads(z.read(n)) for n in names if n.endswith(".json")]
    # one record (+ its samples file) per run shown, plus the benchmark's published numbers
    assert sum(n.endswith("_samples.jsonl") for n in names) == 2
    assert len(records) >= 3 and all(n.startswith("data/demo/") for n in names)
    for rec in records:
        assert eee.problems(eee.record_validator(), rec) == []
    assert L.eee_download(shown.iloc[0:0], demo_root, None) is None


def test_a_published_number_without_a_split_is_shown_and_named_in_the_notes(
    tmp_path: Path, demo_root: Path
) -> None:
    """A published table's row with an empty split cell (a hand-made CSV) reads as a number
    on no named split: the board shows it and its notes say so, instead of failing."""
    root = tmp_path / "leaderboard_data"
    shutil.copytree(demo_root, root)
    csv = root / "reported" / "imaginary.csv"
    df = pd.read_csv(csv, keep_default_na=False)
    df.loc[0, "split"] = ""
    df.to_csv(csv, index=False)
    s = Store(root)
    s.refresh()
    s.ensure_labels("demo")
    b = L.build_board(s.cursor(), L.BoardQuery("demo", "summary"), SPEC, s.version("demo"))
    assert "Paper model 13B" in set(b.rows["model"])
    note = next(n for n in b.notes if "split" in n)
    assert "published numbers on no named split" in note
