"""The front page's shortcuts agree with the leaderboard: the view a card opens on, and a
published-only card's best row."""

from __future__ import annotations

import pandas as pd
import pytest

from evaluator.benchmarks import registry
from evaluator.core.errors import UnknownNameError
from explorer import home as F
from explorer import leaderboard as L
from explorer import queries as Q
from explorer.store import Store
from tests.support import testdata


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = testdata.build_demo_root(tmp_path_factory.mktemp("front") / "leaderboard_data")
    s = Store(root, snapshot=False)
    s.refresh()
    return s


def _primary(b: str) -> str | None:
    try:
        return registry.get(b).primary_metric
    except UnknownNameError:
        return None


def test_each_card_opens_on_the_leaderboards_default_view(store: Store) -> None:
    con = store.cursor()
    names = sorted(set(Q.reported_benchmarks(con)) | {"demo"})
    assert len(names) > 5
    for b in names:
        dims = Q.result_dimensions(con, b)
        for primary in (_primary(b), None, "recall"):
            opts = L.options(dims, None, None)
            opts = L.options(dims, opts.units[0], "overall", primary)
            keys = L.metric_keys(opts)
            want = (
                F.DefaultView(opts.units[0], keys[0])
                if keys and "overall" in opts.slice_kinds
                else None
            )
            assert F.default_view(dims, primary) == want, (b, primary)


def test_a_published_cards_rows_are_the_boards_published_rows(store: Store) -> None:
    con = store.cursor()
    checked = 0
    for b in Q.reported_benchmarks(con):
        view = F.default_view(Q.result_dimensions(con, b), _primary(b))
        if view is None:
            continue
        checked += 1
        metric, grader = L.parse_metric_key(view.metric_key)
        q = L.BoardQuery(b, view.unit, "overall", "", metric, grader)
        board = L.build_board(con, q, None, None).rows
        want = board[board["origin_code"] == "reported"].reset_index(drop=True)
        got = L.published_rows(con, q)
        cols = ["model", "value", "source", "config", "split"]
        assert got[cols].astype(str).equals(want[cols].astype(str)), b
        a, b = F.card(got, "x"), F.card(want, "x")
        assert a.lines == b.lines and a.table.equals(b.table), b
    assert checked >= 5


def rows(*specs: tuple[str, str, str, float, int | None]) -> pd.DataFrame:
    """Board rows, best first: (model, kind code, origin code, value, rank)."""
    out = pd.DataFrame(
        [
            {
                "model": m,
                "kind_code": k,
                "origin_code": o,
                "value": v,
                "ci_low": v - 0.01 if o != "reported" else float("nan"),
                "ci_high": v + 0.01 if o != "reported" else float("nan"),
                "rank": r,
                "source": "FactBoard run" if o != "reported" else "Paper, Table 9, https://x.org",
                "coverage": "",
            }
            for m, k, o, v, r in specs
        ]
    )
    out["rank"] = out["rank"].astype("Int64")
    return out


def test_leads_is_said_of_the_boards_top_and_runs_are_named_as_runs() -> None:
    board = rows(
        ("Human", "human", "reported", 0.91, None),
        ("Oracle", "baseline", "reported", 0.89, None),
        ("GPT-4", "proprietary-llm", "reported", 0.824, None),
        ("novel-entities", "non-llm", "evaluated", 0.6, 1),
        ("overlap", "non-llm", "evaluated", 0.55, 2),
    )
    c = F.card(board, "BAcc")
    assert c.lines[0] == "GPT-4 leads the board: BAcc 0.824 (published: Paper, Table 9)."
    assert c.lines[1] == (
        "Best FactBoard run: novel-entities, BAcc 0.600 [0.590, 0.610]. It is significantly "
        "ahead of every other FactBoard run (1 run, 95%)."
    )
    assert not any("novel-entities leads" in x for x in c.lines)
    assert list(c.table["Model"]) == ["GPT-4", "novel-entities", "overlap"]
    assert list(c.table[F.TIE_COLUMN]) == ["", "best run", "no"]
    assert c.reference == (
        "For reference, human performance: BAcc 0.910 (published: Paper, Table 9)."
    )
    # a run on top of the board leads it; ties among runs say they are about runs
    top = rows(
        ("A", "open-llm", "evaluated", 0.9, 1),
        ("B", "non-llm", "evaluated", 0.89, 1),
        ("GPT-4", "proprietary-llm", "reported", 0.824, None),
    )
    c = F.card(top, "BAcc")
    assert c.lines[0] == "A leads the board: BAcc 0.900 [0.890, 0.910] (FactBoard run)."
    assert c.lines[1].startswith("Among FactBoard runs, it is statistically tied with 1 other")
    # published numbers elsewhere (per subset) only: no run leads
    c = F.card(top.iloc[:2], "BAcc", published_elsewhere=True)
    assert not any("leads" in x for x in c.lines)
    assert c.lines[0].startswith("Best FactBoard run: A, BAcc 0.900")
    # one run, no run, no number
    assert "the only FactBoard run" in F.card(board.iloc[:4], "BAcc").lines[1]
    pub = F.card(board.iloc[:3], "BAcc")
    assert pub.lines[1].startswith("No FactBoard run yet")
    assert F.TIE_COLUMN not in pub.table.columns
    assert F.card(board.iloc[0:0], "BAcc").lines == ("No number yet.",)


def test_sources_lose_their_addresses() -> None:
    s = (
        "LLM-AggreFact leaderboard snapshot (2024-10-25), https://a.io via x; "
        "LLM-AggreFact leaderboard snapshot (2025-09-08), https://a.io via y"
    )
    assert F.short_source(s) == (
        "LLM-AggreFact leaderboard snapshot (2024-10-25); "
        "LLM-AggreFact leaderboard snapshot (2025-09-08)"
    )
    assert F.short_source(None) == "—"


def test_benchmarks_published_per_subset_get_a_subset_view(store: Store) -> None:
    """QAGS and LongSciVerify publish per subset only (their cards said "No number yet.")."""
    con = store.cursor()
    qags = F.subset_view(Q.result_dimensions(con, "qags"), "pearson")
    assert qags == F.SubsetView("summary", "dataset", "pearson", ("cnndm", "xsum"))
    lsv = F.subset_view(Q.result_dimensions(con, "longsciverify"), "kendall_tau")
    assert lsv is not None and lsv.values == ("arxiv", "pubmed")
    assert F.subset_view(Q.result_dimensions(con, "demo"), "balanced_accuracy") is None
    lines = F.subset_lines(Q.reported_results(con, "qags", "summary", "dataset"), qags, "Pearson r")
    assert lines[0].startswith("dataset: cnndm: best published BARTScore, Pearson r 0.660")
    assert lines[1].startswith("dataset: xsum: best published QAGS, Pearson r 0.175 (QAGS paper")


def test_a_grader_is_named_in_words() -> None:
    """The FactCC study's card said "ES (human/human)"."""
    from explorer.words import metric_words

    assert metric_words("explanation_score", "human/human") == "ES (graded by people)"
    assert metric_words("joint_score", "gpt-4o/EvalV4") == "JS (graded by gpt-4o with EvalV4)"
    assert metric_words("balanced_accuracy") == "BAcc"
