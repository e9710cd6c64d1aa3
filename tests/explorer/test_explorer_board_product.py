"""The leaderboard as a reader meets it: a compact table with a drawn CI, a column picker,
published-only boards ranked by value, every row on the model × slice heatmap, AUROC ranked
by the paired test, one formatter and a plain definition for every metric."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.benchmarks import registry
from evaluator.core import metrics as M
from evaluator.core import vocabulary as V
from explorer import board_rows, charts
from explorer import leaderboard as L
from explorer import queries as Q
from explorer import ranking as R
from explorer.store import Store
from tests.support import testdata

SPEC = registry.get("demo")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("product") / "leaderboard_data")
    # two score runs close to each other: AUROC decides between them
    testdata.add_run(r, "demo", "Scorer A", accuracy=0.8, scores=True, seed=11)
    testdata.add_run(r, "demo", "Scorer B", accuracy=0.78, scores=True, seed=12)
    return r


@pytest.fixture(scope="module")
def store(root: Path) -> Store:
    s = Store(root)
    s.refresh()
    return s


def _board(store: Store, bench: str = "demo", unit: str = "summary", **kw: str) -> L.Board:
    spec = registry.get(bench)
    q = L.BoardQuery(bench, unit, **kw)
    return L.build_board(
        store.cursor(),
        q,
        spec,
        store.version(bench),
        memo={},
        ensure=lambda ids: store.ensure_labels(bench, ids, predictions=False),
    )


def test_the_default_table_is_compact_and_drops_empty_columns(store: Store) -> None:
    b = _board(store)
    t = L.display_table(b.rows, L.DEFAULT_COLUMNS, "BAcc", board=b)
    assert list(t.columns) == ["Rank", "Model", "Kind", "BAcc", "95% CI", "Δ to best run", "n"]
    assert len(t.columns) <= 8
    # every run is a FactBoard run: a Source column saying so on every row is left out, as is
    # a chosen column that is empty on every row
    t = L.display_table(b.rows, [*L.DEFAULT_COLUMNS, "note", "config"], "BAcc", board=b)
    assert "Note" not in t.columns and "Config" not in t.columns
    # a column the reader picks is added after the default ones
    t = L.display_table(b.rows, [*L.DEFAULT_COLUMNS, "threshold", "m:accuracy"], "BAcc", board=b)
    assert list(t.columns[-2:]) == ["Threshold", "Accuracy"]


def test_the_ci_is_drawn_and_the_download_keeps_the_numbers(store: Store) -> None:
    b = _board(store)
    rows = b.rows
    t = L.display_table(rows, L.DEFAULT_COLUMNS, "BAcc", board=b)
    bars = t["95% CI"].tolist()
    assert all(isinstance(x, str) and x.startswith("data:image/svg+xml") for x in bars)
    svg = urllib.parse.unquote(bars[0])
    assert "<svg" in svg and "<path" in svg and "<circle" in svg and "█" not in svg
    d = L.display_table(rows, L.DEFAULT_COLUMNS, "BAcc", board=b, download=True)
    assert "95% CI" not in d.columns
    assert d["BAcc"].dtype.kind == "f" and d["CI low"].dtype.kind == "f"
    assert d["CI high"].dtype.kind == "f"
    assert d["CI low"].tolist() == rows["ci_low"].tolist()
    assert d["CI high"].tolist() == rows["ci_high"].tolist()
    cols = list(d.columns)
    assert cols.index("CI low") == cols.index("BAcc") + 1


def test_published_only_boards_rank_by_value(store: Store) -> None:
    b = _board(store, "llm_aggrefact", "claim")
    rows = b.rows
    assert len(rows) > 10 and (rows["origin_code"] == "reported").all()
    assert b.rank_by == "value"
    # the significance rank stays empty (the front page reads it as "not ranked"); the place
    # by value is beside it, and the table shows it as a rank by value
    assert rows["rank"].isna().all()
    assert rows["value_rank"].notna().all() and rows["value_rank"].iloc[0] == 1
    assert rows["value_rank"].is_monotonic_increasing
    tied = rows[rows["value"] == rows["value"].iloc[1]]
    assert tied["value_rank"].nunique() == 1  # equal numbers share a place
    assert rows["delta"].iloc[0] == 0 and (rows["delta"] <= 0).all()
    assert "not significance" in b.method and "run(s)" not in b.method
    t = L.display_table(rows, L.DEFAULT_COLUMNS, "BAcc", board=b)
    assert t.columns[0] == "Rank (by value)" and "Δ to top" in t.columns
    assert t["Rank (by value)"].tolist() == rows["value_rank"].tolist()
    # no CI on any row: no CI column, and the chart is a plot of values
    assert "95% CI" not in t.columns
    ch = charts.forest(rows.assign(label=rows["label"]), "BAcc", x_domain=charts.ci_domain(rows))
    assert ch is not None
    spec = ch.to_dict(validate=False)
    layers = spec.get("layer", [spec])
    assert all(layer["mark"]["type"] != "rule" for layer in layers)
    x = layers[-1]["encoding"]["x"]
    assert "CI" not in x.get("title", "")
    lo, hi = x["scale"]["domain"]
    vmin, vmax = rows["value"].min(), rows["value"].max()
    # the axis starts where the data does (no round-off to a wider range)
    assert vmin - 0.05 * (vmax - vmin) <= lo <= vmin and x["scale"]["nice"] is False


def test_mixed_boards_say_that_published_order_is_not_significance(store: Store) -> None:
    b = _board(store, "summedits")
    assert b.rank_by == "value" or "not significance" in b.method


def test_the_heatmap_has_every_row_of_summedits_by_domain(store: Store) -> None:
    b = _board(store, "summedits", slice_kind="domain", slice_value="news")
    q = L.BoardQuery("summedits", "summary", "domain", "news")
    long = L.slice_long(store.cursor(), q, "domain", b.rows)
    have = set(long["label"])
    missing = [lab for lab in b.rows["label"] if lab not in have]
    # folded rows (a paper's number and its README's) keep their per-domain numbers
    assert missing == []
    gpt4 = b.rows[b.rows["model"] == "GPT-4"]["label"].iloc[0]
    per = long[long["label"] == gpt4].set_index("slice_value")["value"]
    assert per["news"] == pytest.approx(b.rows[b.rows["model"] == "GPT-4"]["value"].iloc[0])
    assert not long.duplicated(["label", "slice_value"]).any()


def test_auroc_is_ranked_by_the_paired_bootstrap(store: Store) -> None:
    b = _board(store, metric="roc_auc")
    rows = b.rows
    runs = rows[rows["origin_code"] != "reported"]
    scorers = runs[runs["model"].isin(["Scorer A", "Scorer B"])]
    assert len(scorers) == 2
    assert set(scorers["run_id"]) <= set(b.paired_runs)
    assert "paired bootstrap" in b.method
    # the p-value between the two is the engine's weighted AUROC on the board's resamples
    # (within domains, the Overall the mean of the domains' AUROC, as the scorer makes it)
    con = store.cursor()
    split = str(scorers["split"].iloc[0])
    frame = Q.scored_samples(con, "demo", "summary", split.split("+"))
    a_id, b_id = scorers["run_id"].tolist()
    store.ensure_labels("demo", [a_id, b_id])
    s = Q.score_matrix(con, [a_id, b_id], "summary", frame["ix"].to_numpy())
    y = frame["label"].to_numpy().astype(int)
    dom = frame["domain"].astype(str).to_numpy()
    W = R.frame_weights(len(frame), dom, 1000, 0)
    groups = [dom == d for d in np.unique(dom)]

    def auroc(x: np.ndarray) -> np.ndarray:
        return np.mean([M.roc_auc_w(W[:, g], y[g], x[g]) for g in groups], axis=0)

    d = auroc(s[0]) - auroc(s[1])
    p = min(1.0, 2 * min((d <= 0).mean(), (d >= 0).mean()))
    assert b.pairwise.loc[a_id, b_id] == pytest.approx(p, abs=1e-9)
    stored = scorers.set_index("run_id")["value"]
    assert np.mean([M.roc_auc_w(np.ones((1, g.sum())), y[g], s[0][g])[0] for g in groups]) == (
        pytest.approx(stored[a_id], abs=1e-9)
    )


def test_one_formatter_for_p_values_counts_and_notes(store: Store) -> None:
    b = _board(store)
    labels = dict(zip(b.rows["run_id"], b.rows["label"], strict=True))
    m = L.pairwise_table(b, labels, False)
    cells = [c for c in m.to_numpy().ravel() if c != "—"]
    assert cells and all(c[2:] == "< 0.001" or "e-" not in c for c in cells)
    assert not any(c.endswith(" 0") for c in cells)
    assert "run(s)" not in b.method
    one = b.rows.head(1)
    assert L.count_line(one, b.rows).startswith("**1** row shown")
    assert list(board_rows._run_notes(pd.Series([1, 2]), pd.Series([0, 1]))) == [
        "1 sample without a prediction",
        "2 samples without a prediction; 1 unusable prediction",
    ]
    t = L.display_table(b.rows, [*L.DEFAULT_COLUMNS, "delta_p", "delta_ci"], "BAcc", board=b)
    ps = [p for p in t["p vs best run"] if p]
    assert ps and all(p == "< 0.001" or p[0] in "0" for p in ps)
    assert all(c.startswith("[") and ", " in c for c in t["Δ 95% CI (paired)"] if c)


def test_screen_table_writes_missing_numbers_as_a_dash() -> None:
    t = pd.DataFrame(
        {"Rank": pd.array([1, None], dtype="Int64"), "v": [0.5, np.nan], "w": [0.25, 0.75]}
    )
    shown, text = L.screen_table(t)
    assert shown["Rank"].tolist() == ["1", "—"] and shown["v"].tolist() == ["0.500", "—"]
    assert shown["w"].tolist() == [0.25, 0.75] and text == ["Rank", "v"]


def test_charts_speak_plain_words() -> None:
    sl = pd.DataFrame(
        {
            "slice": ["news", "science"],
            "n": [10, 12],
            "difference": [0.1, -0.01],
            "ci_low": [0.05, -0.05],
            "ci_high": [0.15, 0.03],
            "p_value": [0.0, 0.4],
        }
    )
    spec = charts.differences(sl, "A − B").to_dict(validate=False)  # type: ignore[union-attr]
    color = spec["layer"][1]["encoding"]["color"]
    assert "CI excludes 0" not in str(spec)
    assert set(color["scale"]["domain"]) == {"difference significant (95%)", "not significant"}


def test_every_metric_and_slice_kind_has_a_plain_definition() -> None:
    for name in V.metric_names():
        d = V.metric(name).definition
        assert d and d.endswith(".") and name not in d, name
    for kind in V.SLICE_LABELS:
        assert V.slice_definition(kind).endswith("."), kind


def test_every_column_shown_has_a_hover_definition(store: Store) -> None:
    b = _board(store, slice_kind="domain", slice_value="news")
    cols = [*L.OPTIONAL_COLUMNS, *b.other_metrics]
    t = L.display_table(b.rows, cols, "BAcc", board=b)
    helps = L.column_help(t, "balanced_accuracy", None, "domain", "news", b.method)
    missing = [c for c in t.columns if c not in helps and c not in ("Model", "Run", "Created")]
    assert missing == [] or set(missing) <= {"Version", "Note", "Params", "Org", "Split"}
    assert helps["BAcc"].startswith(V.metric_definition("balanced_accuracy"))
    assert "By domain: news" in helps["BAcc"] and V.slice_definition("domain") in helps["BAcc"]
    for m in b.other_metrics:
        title = V.metric_label(m[2:])
        if title in t.columns:
            assert helps[title] == V.metric_definition(m[2:])
