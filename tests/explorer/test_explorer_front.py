"""The front page's shortcuts agree with the leaderboard: the view a card opens on, and a
published-only card's best row."""

from __future__ import annotations

import pytest

from evaluator.benchmarks import registry
from evaluator.core.errors import UnknownNameError
from explorer import front as F
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
        assert F.best_line(got, "x") == F.best_line(want, "x")
    assert checked >= 5
