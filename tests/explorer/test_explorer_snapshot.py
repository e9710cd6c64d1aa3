"""The store's snapshot of the runs (a new process starts from one file, not every run.json)
and the pages' throttled refresh."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from evaluator.store import runs
from explorer import queries as Q
from explorer import store as S
from explorer.store import Store
from tests.support import testdata


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testdata.build_demo_root(tmp_path_factory.mktemp("demo") / "leaderboard_data")


@pytest.fixture
def root(demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return testdata.own_copy(demo_root, tmp_path, monkeypatch)


def _tables(s: Store) -> dict[str, pd.DataFrame]:
    con = s.cursor()
    return {
        t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").df().astype(str)
        for t in ("runs", "results")
    }


def _same(a: Store, b: Store) -> None:
    ta, tb = _tables(a), _tables(b)
    for t in ta:
        pd.testing.assert_frame_equal(ta[t], tb[t], obj=t)


def _from_snapshot(root: Path) -> Store:
    """A new store that read the snapshot and no run.json."""
    s = Store(root)
    calls: list[list[str]] = []
    load = s._load_runs
    s._load_runs = lambda rdir, folders, seen: (calls.append(folders), load(rdir, folders, seen))[1]  # type: ignore[method-assign]
    s.refresh()
    s.loaded_from_files = [f for c in calls for f in c]  # type: ignore[attr-defined]
    return s


def test_a_new_store_starts_from_the_snapshot_with_the_same_tables(root: Path) -> None:
    first = Store(root)
    first.refresh()
    assert S.snapshot_file(root).is_file()
    again = _from_snapshot(root)
    assert again.loaded_from_files == []  # type: ignore[attr-defined]
    _same(first, again)
    assert again._runs == first._runs
    assert again.benchmarks() == ["demo"]
    # and it ranks as the first one does
    again.ensure_labels("demo")
    first.ensure_labels("demo")
    assert Q.table_sizes(again.cursor()) == Q.table_sizes(first.cursor())


def test_runs_added_changed_and_deleted_since_the_snapshot_are_seen(root: Path) -> None:
    Store(root).refresh()  # writes the snapshot
    new = testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    ids = sorted(p.name for p in (root / "runs").iterdir() if p.name != new.name)
    runs.set_hidden(ids[0], True, root)
    runs.delete_run(ids[1], root)
    s = _from_snapshot(root)
    assert sorted(s.loaded_from_files) == sorted([new.name, ids[0]])  # type: ignore[attr-defined]
    fresh = Store(root, snapshot=False)
    fresh.refresh()
    _same(s, fresh)
    shown = set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    assert new.name in shown and ids[0] not in shown and ids[1] not in shown


def test_an_unreadable_snapshot_is_ignored(root: Path) -> None:
    Store(root).refresh()
    S.snapshot_file(root).write_bytes(b"PAR1 not a snapshot PAR1")
    s = Store(root)
    s.refresh()
    fresh = Store(root, snapshot=False)
    fresh.refresh()
    _same(s, fresh)
    assert s.problems == {}


def test_a_snapshot_of_another_root_or_layout_is_not_read(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(root, other)
    assert S.snapshot_file(other) != S.snapshot_file(root)
    assert Q.SNAPSHOT_LAYOUT in S.snapshot_file(root).name


def test_a_broken_run_is_not_in_the_snapshot(root: Path) -> None:
    good = next(p for p in (root / "runs").iterdir() if p.name.startswith("demo-always"))
    wrong = root / "runs" / "demo-renamed-folder-000000"
    shutil.copytree(good, wrong)
    Store(root).refresh()
    s = _from_snapshot(root)
    assert "does not match" in s.problems["demo-renamed-folder-000000"]
    assert s.loaded_from_files == ["demo-renamed-folder-000000"]  # type: ignore[attr-defined]


def test_the_pages_refresh_sees_the_engines_changes_at_once_and_hand_edits_within_max_age(
    root: Path,
) -> None:
    s = Store(root)
    s.refresh(max_age=3600)
    shown = list(Q.runs_frame(s.cursor(), "demo")["run_id"])
    rid, other = shown[0], shown[1]
    new = testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    s.refresh(max_age=3600)  # a new folder changes the runs folder: seen at once
    assert new.name in set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    rec = json.loads((root / "runs" / rid / "run.json").read_text(encoding="utf-8"))
    runs.set_hidden(rid, True, root)  # rewrites run.json inside its folder, through the engine
    assert json.loads((root / "runs" / rid / "run.json").read_text())["hidden"] != rec["hidden"]
    s.refresh(max_age=3600)
    assert rid not in set(Q.runs_frame(s.cursor(), "demo")["run_id"])  # seen at once
    # a run.json edited by hand moves only its own folder: seen at the next full scan
    path = root / "runs" / other / "run.json"
    edited = runs.read_record(path.parent).model_copy(update={"hidden": True})
    path.write_text(edited.model_dump_json(), encoding="utf-8")
    s.refresh(max_age=3600)
    assert other in set(Q.runs_frame(s.cursor(), "demo")["run_id"])  # not looked at yet
    s.refresh(max_age=0)
    assert other not in set(Q.runs_frame(s.cursor(), "demo")["run_id"])


def test_a_pages_first_refresh_looks_at_the_files_of_moved_run_folders_only(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process's first page takes each run whose folder has not moved since the snapshot
    as the snapshot has it (one look per folder, not one per file); what the engine changed
    since is seen at once, a run.json edited in place by hand at the next full scan."""
    Store(root).refresh()  # writes the snapshot, with each run folder's own mtime
    ids = sorted(p.name for p in (root / "runs").iterdir())
    hidden, gone, edited = ids[0], ids[1], ids[2]
    runs.set_hidden(hidden, True, root)  # the engine: run.json renamed into its folder
    runs.delete_run(gone, root)
    new = testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    path = root / "runs" / edited / "run.json"
    rec = runs.read_record(path.parent).model_copy(update={"hidden": True})
    before = path.parent.stat().st_mtime_ns
    with path.open("r+", encoding="utf-8") as fh:  # in place: its folder does not move
        fh.write(rec.model_dump_json())
        fh.truncate()
    assert path.parent.stat().st_mtime_ns == before
    looked: list[str] = []
    mtime_of = S.file_mtime
    monkeypatch.setattr(S, "file_mtime", lambda p: (looked.append(p), mtime_of(p))[1])
    s = _from_snapshot_page(root)
    assert sorted({Path(p).parent.name for p in looked}) == sorted([hidden, new.name])
    shown = set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    assert new.name in shown and hidden not in shown and gone not in shown
    assert edited in shown  # not looked at yet
    s.refresh(max_age=0)  # the next full scan (a page's, max_age later, or a forced one)
    assert edited not in set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    fresh = Store(root, snapshot=False)
    fresh.refresh()
    _same(s, fresh)


def test_a_pages_first_refresh_looks_at_no_run_folder_when_neither_folder_moved(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every engine write moves the runs folder or the packs folder: when neither has moved
    since the snapshot's states were looked at, a new process's first page takes them as they
    are, and its next look, max_age later, is at every file (a hand edit in place included)."""
    Store(root).refresh()
    rid = sorted(p.name for p in (root / "runs").iterdir())[0]
    runs_mtime = (root / "runs").stat().st_mtime_ns
    path = root / "runs" / rid / "run.json"
    rec = runs.read_record(path.parent).model_copy(update={"hidden": True})
    with path.open("r+", encoding="utf-8") as fh:  # by hand, in place: no folder moves
        fh.write(rec.model_dump_json())
        fh.truncate()
    assert (root / "runs").stat().st_mtime_ns == runs_mtime
    looked: list[str] = []
    scans: list[bool] = []
    mtime_of = S.file_mtime
    monkeypatch.setattr(S, "file_mtime", lambda p: (looked.append(p), mtime_of(p))[1])
    refresh_runs = Store._refresh_runs
    monkeypatch.setattr(
        Store,
        "_refresh_runs",
        lambda self, quick=False: (scans.append(quick), refresh_runs(self, quick))[1],
    )
    s = _from_snapshot_page(root)
    assert scans == [] and looked == []
    assert rid in set(Q.runs_frame(s.cursor(), "demo")["run_id"])  # as the snapshot has it
    time.sleep(0.01)
    s.refresh(max_age=0.005)  # max_age later: every file
    assert scans == [False]
    assert rid not in set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    # and an engine write moves the runs folder: a new process looks again at once
    new = testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    s2 = _from_snapshot_page(root)
    assert scans == [False, True]
    assert new.name in set(Q.runs_frame(s2.cursor(), "demo")["run_id"])


def test_a_pages_first_refresh_lists_a_broken_run_folder_again(root: Path) -> None:
    """A snapshot taken while a run folder was left off does not let a new process's first
    page skip its look at the folders: the broken folder is listed again at once."""
    good = next(p for p in (root / "runs").iterdir() if p.name.startswith("demo-always"))
    shutil.copytree(good, root / "runs" / "demo-renamed-folder-000000")
    Store(root).refresh()
    s = _from_snapshot_page(root)
    assert "does not match" in s.problems["demo-renamed-folder-000000"]


def _from_snapshot_page(root: Path) -> Store:
    s = Store(root)
    s.refresh(max_age=3600)  # as the pages do
    return s


def test_a_pages_first_board_reads_the_states_of_the_runs_it_compares_only(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process's first board asks about a few runs (the paired tests' best): their
    states are read from the snapshot one by one, no object is made for every run, and they
    are the states made of every run later."""
    Store(root).refresh()
    made: list[int] = []
    make = Store._make_states
    monkeypatch.setattr(Store, "_make_states", lambda self: (made.append(1), make(self))[1])
    s = _from_snapshot_page(root)
    folders = sorted(p.name for p in (root / "runs").iterdir())[:3]
    s.ensure_labels("demo", [*folders, "not-a-run"], predictions=False)
    states = {f: s._state(f) for f in folders}
    assert made == [] and s._state("not-a-run") is None
    assert {b for b, _ in states.values()} == {"demo"}
    other = _from_snapshot_page(root)
    other.ensure_labels("demo", folders, predictions=False)
    assert other._runs  # every state made
    assert made == [1]
    assert states == {f: (other._run_benchmark[f], other._runs[f]) for f in folders}
    assert Q.table_sizes(s.cursor()) == Q.table_sizes(other.cursor())
    assert s._runs == other._runs and s._run_benchmark == other._run_benchmark


def test_the_memo_survives_a_new_run_and_forgets_on_a_deleted_one(root: Path) -> None:
    s = Store(root)
    s.refresh()
    s.memo["x"] = 1
    testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    s.refresh()
    assert s.memo.get("x") == 1
    runs.delete_run(Q.runs_frame(s.cursor(), "demo")["run_id"].iloc[0], root)
    s.refresh()
    assert "x" not in s.memo


def test_the_memo_is_bounded() -> None:
    m = S.Memo(size=3)
    for i in range(5):
        m[i] = i
    _ = m[2]
    m[5] = 5
    assert list(m) == [4, 2, 5]


def test_results_are_read_in_place_and_survive_a_newer_snapshot(root: Path) -> None:
    first = Store(root)
    first.refresh()
    con = first.cursor()
    assert con.execute("SELECT count(*) FROM results_new").fetchone() == (0,)  # all in the file
    reader = Store(root)
    reader.refresh()
    before = _tables(reader)["results"]
    testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    first.refresh()  # writes a newer snapshot and removes the older results file
    old = [p for p in S.snapshot_file(root).parent.glob("*.results.parquet")]
    assert len(old) == 1
    pd.testing.assert_frame_equal(_tables(reader)["results"], before)  # its own link
    reader.refresh()
    _same(reader, first)
    assert "Newcomer" in set(Q.runs_frame(reader.cursor(), "demo")["model_name"])


def test_a_query_begun_before_a_new_snapshot_still_finds_its_results_file(root: Path) -> None:
    """Another session's query may start on the results view just before the store switches it
    to a newer snapshot: the link it reads stays until the next switch, and the one before goes."""
    s = Store(root)
    s.refresh()
    first = s._results.path
    assert first is not None and first.exists()
    old = s.cursor()
    testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    s.refresh()  # a new snapshot: the view moves to a new link
    second = s._results.path
    assert second is not None and second != first
    assert first.exists()  # a query planned on the old view still reads it
    assert old.execute(f"select count(*) from read_parquet('{first}')").fetchone()[0] > 0
    testdata.add_run(root, "demo", "Newcomer two", accuracy=0.8)
    s.refresh()
    assert not first.exists() and second.exists()
    s._results.drop()
    assert not second.exists()


def _dims(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def _kept_dims_seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each Q.all_result_dimensions call took the kept dimensions."""
    seen: list[bool] = []
    inner = Q.all_result_dimensions

    def spy(con: Q.Con, kept: bool = False) -> pd.DataFrame:
        seen.append(kept)
        return inner(con, kept)

    monkeypatch.setattr(Q, "all_result_dimensions", spy)
    return seen


def test_the_pickers_dimensions_come_with_the_snapshot_and_follow_every_change(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new store takes the results' dimensions from the snapshot instead of a pass over
    every result; they are those of such a pass, before and after runs are added, hidden
    and deleted, and when the snapshot's file of them is gone."""
    Store(root).refresh()  # writes the snapshot
    seen = _kept_dims_seen(monkeypatch)
    s = _from_snapshot(root)
    got = s.result_dimensions()
    assert seen == [True]
    assert len(got) and set(got["source"]) == {"run", "reported"}
    pd.testing.assert_frame_equal(_dims(got), _dims(Q.all_result_dimensions(s.cursor())))
    new = testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    ids = sorted(p.name for p in (root / "runs").iterdir() if p.name != new.name)
    runs.set_hidden(ids[0], True, root)
    runs.delete_run(ids[1], root)
    s.refresh()
    fresh = Store(root, snapshot=False)
    fresh.refresh()
    pd.testing.assert_frame_equal(_dims(s.result_dimensions()), _dims(fresh.result_dimensions()))
    # the scan of a store without a snapshot, and of one whose dimensions file is gone
    snap = S.snapshot_file(root)
    for f in snap.parent.glob(f"{snap.stem}.*.dims.parquet"):
        f.unlink()
    again = _from_snapshot(root)
    seen.clear()
    pd.testing.assert_frame_equal(
        _dims(again.result_dimensions()), _dims(fresh.result_dimensions())
    )
    assert seen == [False, False]


def test_a_broken_run_dropped_later_leaves_the_dimensions(root: Path) -> None:
    """A run whose files fail once its rows are read leaves the board, and the kept
    dimensions no longer count it."""
    Store(root).refresh()
    s = _from_snapshot(root)
    folder = sorted(p.name for p in (root / "runs").iterdir())[0]
    before = s.result_dimensions()
    s._drop_broken_run(folder, "unreadable: test")
    after = s.result_dimensions()
    pd.testing.assert_frame_equal(_dims(after), _dims(Q.all_result_dimensions(s.cursor())))
    run_n = lambda d: int(d[d["source"] == "run"]["n"].sum())  # noqa: E731
    assert run_n(after) < run_n(before)


def test_the_runs_file_is_read_under_a_name_of_its_own(root: Path) -> None:
    """A newer snapshot renamed into place while the runs file is read does not change what
    is read; the process's own name is gone afterwards, and one left by a process that is
    gone is swept."""
    from explorer import snapshot

    Store(root).refresh()
    snap = S.snapshot_file(root)
    was = snap.read_bytes()
    with snapshot.private_copy(snap) as own:
        newer = snap.with_name("newer.parquet")
        newer.write_bytes(b"PAR1 a newer snapshot PAR1")
        newer.replace(snap)
        assert own.read_bytes() == was
    assert not own.exists()
    left = snap.with_name(f".{snap.name}.read.pid{2**30}-abcdef")
    left.write_bytes(b"")
    results = next(snap.parent.glob(f"{snap.stem}.*.results.parquet"))
    snapshot.sweep(snap, results)
    assert not left.exists() and results.exists()
