"""What the board keeps between views (the runs' own columns, each run's final labels) and
that a kept board never hides a change: a new run is on the next board at once, a deleted or
hidden one is gone, and every board equals one built from nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.benchmarks import registry
from evaluator.core.vocabulary import kind_label
from evaluator.store import runs
from explorer import board_rows
from explorer import leaderboard as L
from explorer import queries as Q
from explorer import ranking as R
from explorer.store import Store
from tests.support import testdata

SPEC = registry.get("demo")


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = testdata.build_demo_root(tmp_path_factory.mktemp("cache") / "leaderboard_data")
    testdata.add_run(root, "demo", "Steady model", accuracy=0.85, seed=1)
    testdata.add_run(root, "demo", "Scored model", accuracy=0.8, seed=2, scores=True)
    return root


@pytest.fixture
def root(demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return testdata.own_copy(demo_root, tmp_path, monkeypatch)


class Calls:
    """Records the run ids a query function was asked for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str, arg: int) -> None:
        self.seen: list[list[str] | None] = []
        inner = getattr(Q, name)

        def spy(*a: object, **k: object) -> object:
            ids = a[arg]
            self.seen.append(None if ids is None else sorted(ids))  # type: ignore[call-overload]
            return inner(*a, **k)

        monkeypatch.setattr(Q, name, spy)

    def take(self) -> list[list[str] | None]:
        out, self.seen = self.seen, []
        return out


def _board(
    s: Store, memo: dict[object, object] | None, in_place: bool = True, **view: str
) -> L.Board:
    """The board as the pages build it (labels read in place), or with in_place=False from
    the labels table."""
    q = L.BoardQuery("demo", "summary", **view)
    return L.build_board(
        s.cursor(),
        q,
        SPEC,
        s.version("demo"),
        resamples=200,
        memo=memo,
        ensure=lambda ids: s.ensure_labels("demo", ids, predictions=False),
        labels=(lambda ids, frame, sc: s.label_vectors("demo", "summary", frame, ids, sc))
        if in_place
        else None,
    )


def _same_as_fresh(s: Store, board: L.Board, **view: str) -> None:
    """The board built with what the store kept equals one built with nothing kept."""
    fresh = _board(s, {}, **view)
    pd.testing.assert_frame_equal(board.rows, fresh.rows)
    assert (board.method, board.notes, board.paired_runs) == (
        fresh.method,
        fresh.notes,
        fresh.paired_runs,
    )
    pd.testing.assert_frame_equal(board.pairwise, fresh.pairwise)


def _ids(board: L.Board) -> set[str]:
    return set(board.rows["run_id"].dropna())


VIEWS = [{}, {"slice_kind": "domain", "slice_value": "news"}, {"slice_kind": "domain",
         "slice_value": "science"}]  # fmt: skip


def test_a_slice_change_reads_the_fields_of_new_runs_only(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = Store(root)
    s.refresh(max_age=3600)  # as the pages do
    fields = Calls(monkeypatch, "board_run_fields", 1)
    first = _board(s, s.memo)
    assert fields.take() == [None]  # the first board reads every run of the benchmark at once
    every = Q.board_run_fields(s.cursor(), None, "demo")
    assert set(every["run_id"]) >= _ids(first) and fields.take() == [None]
    for view in VIEWS[1:]:
        b = _board(s, s.memo, **view)
        assert fields.take() == []  # every run's own columns were kept
        _same_as_fresh(s, b, **view)
        fields.take()
    new = testdata.add_run(root, "demo", "Newcomer 13B", accuracy=0.97, params="13B", seed=7)
    s.refresh(max_age=3600)  # a new folder is seen at once
    b = _board(s, s.memo, slice_kind="domain", slice_value="news")
    assert fields.take() == [[new.name]]
    row = b.rows[b.rows["run_id"] == new.name].iloc[0]
    assert row["model"] == "Newcomer 13B" and row["params_value"] == 13e9
    assert row["kind"] == kind_label("open-llm") and row["rank"] == 1
    _same_as_fresh(s, b, slice_kind="domain", slice_value="news")


def test_the_runs_fields_come_in_the_order_asked_and_an_unknown_run_gets_none(
    root: Path,
) -> None:
    s = Store(root)
    s.refresh(max_age=3600)
    memo: dict[object, object] = {}
    every = Q.board_run_fields(s.cursor(), None, "demo")
    ids = list(every["run_id"])[::-1][:3]
    asked = [ids[1], ids[0], ids[1], ids[2]]
    got = board_rows.run_fields(s.cursor(), "demo", pd.Series(asked, dtype="str"), memo)
    names = every.set_index("run_id")["model_name"]
    assert got["model"].tolist() == [names[i] for i in asked]
    with_gone = board_rows.run_fields(s.cursor(), "demo", [ids[2], "no-such-run"], memo)
    assert with_gone["model"].iloc[0] == names[ids[2]] and pd.isna(with_gone["model"].iloc[1])
    assert len(with_gone) == 2


def test_deleted_hidden_and_rewritten_runs_leave_the_kept_board(root: Path) -> None:
    s = Store(root)
    s.refresh(max_age=3600)
    before = _board(s, s.memo)
    gone, hide, rename = sorted(r for r in _ids(before) if "steady" not in r.lower())[:3]
    runs.delete_run(gone, root)
    s.refresh(max_age=3600)
    b = _board(s, s.memo)
    assert gone not in _ids(b) and _ids(b) == _ids(before) - {gone}
    _same_as_fresh(s, b)
    runs.set_hidden(hide, True, root)  # a rewrite inside the run's folder
    s.refresh(max_age=0)
    b = _board(s, s.memo, slice_kind="domain", slice_value="news")
    assert hide not in _ids(b)
    _same_as_fresh(s, b, slice_kind="domain", slice_value="news")
    # a run.json rewritten with another model name: the next board has the new name
    path = root / "runs" / rename / "run.json"
    rec = runs.read_record(root / "runs" / rename)
    rec = rec.model_copy(update={"model": rec.model.model_copy(update={"name": "Renamed model"})})
    path.write_text(rec.model_dump_json(), encoding="utf-8")
    s.refresh(max_age=0)
    b = _board(s, s.memo)
    assert b.rows.loc[b.rows["run_id"] == rename, "model"].tolist() == ["Renamed model"]
    _same_as_fresh(s, b)


def test_each_runs_labels_are_read_once_for_the_paired_tests(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = Store(root)
    s.refresh(max_age=3600)
    read = Calls(monkeypatch, "label_matrix", 1)  # (the labels table: no run reads it here)
    in_place: list[list[str]] = []
    vectors = s.label_vectors

    def spy(
        b: str, u: str, frame: pd.DataFrame, ids: list[str], scores: bool = False
    ) -> dict[str, np.ndarray]:
        in_place.append(sorted(ids))
        return vectors(b, u, frame, ids, scores)

    monkeypatch.setattr(s, "label_vectors", spy)
    first = _board(s, s.memo)
    assert in_place == [sorted(first.paired_runs)] and read.take() == []
    in_place.clear()
    assert len(first.paired_runs) >= 2
    for view in VIEWS[1:]:
        b = _board(s, s.memo, **view)
        assert in_place == []  # the same best runs: nothing read again
        _same_as_fresh(s, b, **view)
        in_place.clear()
    new = testdata.add_run(root, "demo", "Newcomer", accuracy=0.97, seed=8)
    s.refresh(max_age=3600)
    b = _board(s, s.memo, slice_kind="domain", slice_value="science")
    assert new.name in b.paired_runs
    assert in_place == [[new.name]] and read.take() == []
    _same_as_fresh(s, b, slice_kind="domain", slice_value="science")


def test_narrow_board_queries_agree_with_the_wide_one(root: Path) -> None:
    s = Store(root)
    s.refresh()
    con = s.cursor()
    wide = Q.run_results(con, "demo", "summary", "domain", "news")
    assert wide["metric"].nunique() > 1
    bacc = wide[(wide["metric"] == "balanced_accuracy") & wide["grader"].isna()]
    view = Q.board_slice(con, "demo", "summary", "domain", "news", "balanced_accuracy", None)
    one, others = view.results, view.others
    cols = ["run_id", "split", "value", "ci_low", "ci_high", "n"]
    pd.testing.assert_frame_equal(one[cols], bacc[cols].reset_index(drop=True), check_dtype=False)
    assert [c.split("\x1f") if isinstance(c, str) else None for c in one["coverage"]] == [
        list(c) if pd.api.types.is_list_like(c) else None for c in bacc["coverage"]
    ]
    rest = wide[(wide["metric"] != "balanced_accuracy") & wide["grader"].isna()]
    got = sorted(zip(others.run_id.to_pylist(), others.metric.to_pylist(), strict=True))
    assert got == sorted(zip(rest["run_id"], rest["metric"], strict=True))
    fields = Q.board_run_fields(con, list(bacc["run_id"]))
    assert list(fields["run_id"]) == sorted(bacc["run_id"])
    names = wide.groupby("run_id")["model_name"].first()
    assert (fields.set_index("run_id")["model_name"] == names).all()


def test_ranks_without_the_pair_matrix_equal_the_matrix_ranks() -> None:
    rng = np.random.default_rng(3)
    for _ in range(400):
        n = int(rng.integers(1, 30))
        v = rng.uniform(0, 1, n)
        w = rng.uniform(0, 0.2, n)
        lo, hi = v - w, v + w * rng.uniform(0.2, 1.5, n)
        for a in (v, lo, hi):
            a[rng.random(n) < 0.1] = np.nan
        if rng.random() < 0.3:  # ties on rounded bounds
            v, lo, hi = np.round(v, 1), np.round(lo, 1), np.round(hi, 1)
        lower = bool(rng.random() < 0.5)
        paired = point = p = None
        if n >= 2 and rng.random() < 0.6:
            k = int(rng.integers(2, n + 1))
            paired = np.sort(rng.choice(n, k, replace=False))
            point = rng.uniform(0, 1, k)
            p = rng.uniform(0, 0.1, (k, k))
            p = (p + p.T) / 2
        sb = R.significance_matrix(v, lo, hi, lower, paired, point, p)
        got = R.rank_array(v, lo, hi, lower, paired, point, p).tolist()
        assert got == R.ranks(list(v), sb)


def test_labels_read_in_place_are_the_labels_table(root: Path) -> None:
    """Store.label_vectors (the runs' labels.parquet read in place) gives what the labels
    table gives, for runs stored with final labels and for one stored without them (its
    labels made by the engine), and the boards built either way are the same."""
    older = sorted(p for p in (root / "runs").iterdir() if p.is_dir())[0]
    (older / "labels.parquet").unlink()  # a run stored before final labels were kept
    s = Store(root)
    s.refresh()
    con = s.cursor()
    s.ensure_samples("demo")
    for split in (["test"], ["dev"], ["dev", "test"]):
        frame = Q.scored_samples(con, "demo", "summary", split)
        ids = sorted(Q.runs_frame(con, "demo")["run_id"])
        assert older.name in ids
        got = s.label_vectors("demo", "summary", frame, ids)
        got_scores = s.label_vectors("demo", "summary", frame, ids, scores=True)
        s.ensure_labels("demo", ids, predictions=False)
        table = Q.label_matrix(con, ids, "summary", frame["ix"].to_numpy())
        scores = Q.score_matrix(con, ids, "summary", frame["ix"].to_numpy())
        for i, r in enumerate(ids):
            np.testing.assert_array_equal(got[r], table[i], err_msg=r)
            np.testing.assert_array_equal(got_scores[r], scores[i], err_msg=r)
        # every run has labels on the test samples (the demo's runs predict those only), and
        # the runs that score have scores there
        assert (table >= 0).any(axis=1).all() == ("test" in split)
        assert np.isfinite(scores).any() == ("test" in split)
    for view in [*VIEWS, {"metric": "roc_auc"}]:
        a, b = _board(s, {}, **view), _board(s, {}, in_place=False, **view)
        pd.testing.assert_frame_equal(a.rows, b.rows)
        assert a.paired_runs == b.paired_runs and len(a.paired_runs) >= 2


def test_a_board_kept_for_every_session_is_not_changed_by_what_a_caller_does_to_it(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's board is kept as one object for every session (not a pickled copy per
    read): a caller that changes the board it got (a cell, a new column, its notes) leaves
    the next caller's board as it was built."""
    from explorer import ui

    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    s = ui.store()
    key = (str(s.root), s.token("demo"), "demo", "summary", "overall", "", "balanced_accuracy")
    first = ui.board(*key, None, 200)
    expected = first.rows.copy()
    first.rows.loc[0, "model"] = "changed"
    first.rows["extra"] = 1.0
    first.notes.append("a note of the caller's")
    first.paired_runs.clear()
    again = ui.board(*key, None, 200)
    assert again.rows is not first.rows
    pd.testing.assert_frame_equal(again.rows, expected)
    assert "a note of the caller's" not in again.notes and again.paired_runs
