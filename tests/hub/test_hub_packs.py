"""Pulled runs kept in packs (evaluator/store/pulled.py) against what can happen around them: a
writer of the packed runs racing the board, moderation and deletes, runs stored without final
labels, a full disk, a read that fails once, a later pull's pack, secrets in the rows, and a
reproduction outcome in the boot pull."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.hub import sync
from evaluator.hub.client import HubClient
from evaluator.store import pulled, runs
from evaluator.submissions import verification
from tests.hub.test_hub_verification import _outcome, two  # noqa: F401
from tests.support.fake_hub import FakeHub
from tests.support.testdata import add_run, build_demo_root

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
SECRET = "zq9-very-secret-value-1234567890"


def live_ids(root: Path) -> set[str]:
    return {r.run_id for r in runs.list_runs(root, include_hidden=True).runs}


def _packed_replica(replica):
    a, b = replica("a"), replica("b")
    build_demo_root(a.data, reported=False)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    ids = live_ids(a.data)
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)
    assert pulled.packs(b.data)
    return a, b, ids


def test_runs_written_and_their_pack_removed_during_a_refresh_stay_on_the_board(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background writer lands between the store's look at the packs and its scan of the
    folders: every run is still seen, none dropped and loaded again."""
    import explorer.store as S

    _, b, ids = _packed_replica(replica)
    store = S.Store(b.data, snapshot=False)
    store.refresh()
    assert set(store._runs) == ids
    real = pulled.packed_runs

    def late(root=None):  # the background tick lands between the scan and this read
        runs.materialize(b.data)
        return real(root)

    monkeypatch.setattr(S.pulled, "packed_runs", late)
    store.refresh()
    assert set(store._runs) == ids, f"dropped: {sorted(ids - set(store._runs))}"


def test_a_run_deleted_after_it_was_written_on_demand_stays_deleted(
    fake_hub: FakeHub, replica
) -> None:
    """A run written on demand (a page's _unpack), then deleted: no pack shows it or writes it
    back."""
    from explorer.store import Store

    _, b, ids = _packed_replica(replica)
    one = sorted(ids)[0]
    runs.materialize(b.data, [one])  # what Store._unpack does for a page
    runs.delete_run(one, b.data)
    store = Store(b.data, snapshot=False)
    store.refresh()
    shown_after_delete = one in store._runs
    runs.materialize(b.data)  # the background tick
    assert (not shown_after_delete, (b.data / "runs" / one).exists()) == (True, False)


@pytest.mark.parametrize("defer", [False, True])
def test_runs_without_final_labels_pulled_either_way_stay_on_the_board(
    fake_hub: FakeHub, replica, defer: bool
) -> None:
    """A pulled run stored without final labels (older runs): packed or written, the store
    makes its labels as for a folder without them, and it stays on the board."""
    from explorer.store import Store

    a, b = replica("a"), replica("b")
    build_demo_root(a.data, reported=False)
    ids = live_ids(a.data)
    nolabel = sorted(ids)[0]
    (a.data / "runs" / nolabel / "labels.parquet").unlink()
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=defer)
    if defer:  # the pack says which runs have final labels
        assert not pulled.packed_runs(b.data)[nolabel].labels
    store = Store(b.data, snapshot=False)
    store.refresh()
    before = set(store._runs)
    bench = store._run_benchmark[nolabel]
    store.ensure_sample_stats(bench)
    assert set(store._runs) == before == ids, store.problems


def test_a_full_disk_while_a_page_writes_packed_runs_does_not_raise_out_of_the_store(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from explorer.store import Store

    _, b, ids = _packed_replica(replica)
    store = Store(b.data, snapshot=False)
    store.refresh()
    one = sorted(ids)[0]

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(runs, "write_runs", full)
    store.ensure_labels(store._run_benchmark[one], [one])  # a page's read: should not raise


def test_a_hide_landing_while_a_packed_run_is_written_is_seen_by_the_board(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ledger notes a written folder's times as staged: a hide landing just after the
    rename is a change the board reads, not the text from before it."""
    from explorer.store import Store

    _, b, ids = _packed_replica(replica)
    store = Store(b.data, snapshot=False)
    store.refresh()
    x = sorted(ids)[0]
    bench = store._run_benchmark[x]
    assert x in store._visible(bench)
    real = runs._fsync_dir
    done = []

    def hide_then_fsync(path):
        if not done:
            done.append(1)
            runs.set_hidden(x, True, b.data)  # moderation from another thread / process
        return real(path)

    monkeypatch.setattr(runs, "_fsync_dir", hide_then_fsync)
    runs.materialize(b.data, [x])  # a page's _unpack
    monkeypatch.setattr(runs, "_fsync_dir", real)
    assert runs.read_record(b.data / "runs" / x).hidden
    store.refresh()
    assert x not in store._visible(bench), "hidden run still shown"


def test_a_delete_racing_a_page_that_writes_the_run_is_never_undone(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A maintainer deletes run X (writing every packed run, removing the pack) while a page is
    writing X from its pack: the two take turns, and X stays deleted."""
    from evaluator.submissions import moderation

    _, b, ids = _packed_replica(replica)
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", "a-maintainer-token-0123456789")
    x = sorted(ids)[0]
    real = pulled.pack_items
    maintainer: list[threading.Thread] = []

    def read_then_delete(pack: Path, run_ids: set[str] | None = None) -> Any:
        got = real(pack, run_ids)
        if run_ids == {x} and not maintainer:  # the page has read X: the delete comes now
            t = threading.Thread(
                target=moderation.moderate,
                args=("delete", x, "a-maintainer-token-0123456789", b.data, b.subs),
            )
            maintainer.append(t)
            t.start()
            time.sleep(0.3)  # the delete is under way before the page writes X
        return got

    monkeypatch.setattr(pulled, "pack_items", read_then_delete)
    runs.materialize(b.data, [x])  # the page's _unpack
    maintainer[0].join(30)
    assert not maintainer[0].is_alive() and not pulled.packs(b.data)
    assert not (b.data / "runs" / x).exists(), "deleted run written back"
    assert live_ids(b.data) == ids - {x}


def test_a_pack_that_fails_to_read_once_is_kept_and_written_next_time(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    _, b, ids = _packed_replica(replica)
    real = pulled.pack_items
    calls = []

    def flaky(pack, run_ids=None):
        if not calls:
            calls.append(1)
            raise OSError(errno.EMFILE, "Too many open files")
        return real(pack, run_ids)

    monkeypatch.setattr(pulled, "pack_items", flaky)
    runs.materialize(b.data)
    have = sync.Local.of(b.data, b.subs).run_ids()
    assert have == ids, f"lost until the next poll re-downloads them: {sorted(ids - have)}"


def test_a_later_pulls_pack_reaches_a_page_at_once(fake_hub: FakeHub, replica) -> None:
    from explorer.store import Store

    a, b, ids = _packed_replica(replica)
    runs.materialize(b.data)
    store = Store(b.data, snapshot=False)
    store.refresh(30.0)
    add_run(a.data, "demo", "Later model", seed=7)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)
    assert pulled.packs(b.data)
    store.refresh(30.0)  # a page within REFRESH_EVERY_S
    assert len(store._runs) == len(ids) + 1


def test_a_boot_pull_with_a_published_reproduction_outcome_keeps_its_packs(
    two: Any,  # noqa: F811
    replica: Any,
) -> None:
    client, a, b, res = two
    verification.record_outcome(res.run_id, _outcome("differs", 3), a.data, a.subs)
    sync.sync(client, a.data, a.subs)
    c = replica("c")
    rep, _ = sync.sync(client, c.data, c.subs, defer=True)  # the Space's boot pull
    assert rep.pulled["runs"] > 1
    assert pulled.packs(c.data), (
        f"no pack left: the boot sync wrote all {rep.pulled['runs']} pulled runs as folders "
        f"(reproduction outcomes taken: {rep.pulled['reproduction outcomes']})"
    )


def test_a_pack_is_redacted_as_run_folders_are(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, c = replica("a"), replica("b"), replica("c")
    build_demo_root(a.data, reported=False)
    d = add_run(a.data, "demo", "Explained model", explanations=True)
    t = pq.read_table(d / "predictions.parquet")
    ex = [f"see sk-abcdefghijklmnopqrstuvwx1234 and {SECRET}"] * len(t)
    t = t.set_column(t.schema.get_field_index("explanation"), "explanation", pa.array(ex))
    pq.write_table(t, d / "predictions.parquet")
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    monkeypatch.setenv("MY_API_TOKEN", SECRET)
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)
    sync.sync(HubClient.from_env(), c.data, c.subs)
    (pack,) = pulled.packs(b.data)
    pex = pq.read_table(pack / "predictions.parquet").to_pandas()
    pex = pex[pex.run_id == d.name]["explanation"].tolist()
    cex = pq.read_table(c.data / "runs" / d.name / "predictions.parquet")["explanation"].to_pylist()
    assert pex == cex and SECRET not in pex[0] and "sk-abc" not in pex[0], (pex[0], cex[0])
    runs.materialize(b.data)
    got = pq.read_table(b.data / "runs" / d.name / "predictions.parquet")
    assert got["explanation"].to_pylist() == cex
    text = (b.data / "runs" / d.name / "run.json").read_text()
    assert text == (c.data / "runs" / d.name / "run.json").read_text()


def test_the_engine_writes_packed_runs_before_it_lists_or_finds_them(
    fake_hub: FakeHub, replica
) -> None:
    _, b, ids = _packed_replica(replica)
    one = sorted(ids)[0]
    assert runs.find_run(one, b.data).is_dir()  # looked up: that run written
    assert {p.name for p in (b.data / "runs").iterdir()} == {one} and pulled.packs(b.data)
    assert live_ids(b.data) == ids  # listed: every packed run written, the pack gone
    assert not pulled.packs(b.data)


def test_runs_written_and_their_pack_removed_while_the_store_reads_them_stay_on_the_board(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background writer turns the pack into folders and removes it between the store's
    scan and its read of the pack: the store reads those runs from their new folders, in the
    same refresh (a first page is not left empty), and keeps them as they are."""
    import explorer.store as S

    _, b, ids = _packed_replica(replica)
    real = S.Q.stage_checked_runs

    def late(*a: Any, **k: Any) -> Any:
        runs.materialize(b.data)  # the tick lands here
        return real(*a, **k)

    store = S.Store(b.data, snapshot=False)
    with monkeypatch.context() as m:
        m.setattr(S.Q, "stage_checked_runs", late)
        store.refresh()
    assert not pulled.packs(b.data)
    assert set(store._runs) == ids and not store.problems
    token = store.token("demo")
    store.refresh()
    assert set(store._runs) == ids and store.token("demo") == token


def _vectors(data: Path, ids: list[str], **store: Any) -> dict[str, Any]:
    """Store.label_vectors of these runs on the demo's test samples (and their scores), and
    the store."""
    from explorer import queries as Q
    from explorer.store import Store

    s = Store(data, snapshot=False, **store)
    s.refresh()
    s.ensure_samples("demo")
    frame = Q.scored_samples(s.cursor(), "demo", "summary", ["test"])
    got = s.label_vectors("demo", "summary", frame, ids)
    scores = s.label_vectors("demo", "summary", frame, ids, scores=True)
    return {"store": s, "frame": frame, "got": got, "scores": scores}


def test_a_board_reads_packed_runs_labels_in_place_without_writing_their_folders(
    fake_hub: FakeHub, replica
) -> None:
    """The paired test's labels of runs still in a pack (a replica that has just booted) are
    read from the pack, as their folders give them, and no folder is written for them: the
    runs folder does not move, so the store has no run to look at again."""
    import numpy as np

    a, b, ids = _packed_replica(replica)
    want = _vectors(a.data, sorted(ids))
    before = sorted(p.name for p in (b.data / "runs").iterdir())
    moved = (b.data / "runs").stat().st_mtime_ns
    got = _vectors(b.data, sorted(ids))
    assert set(got["got"]) == set(got["scores"]) == ids
    for r in sorted(ids):
        np.testing.assert_array_equal(got["got"][r], want["got"][r], err_msg=r)
        np.testing.assert_array_equal(got["scores"][r], want["scores"][r], err_msg=r)
        assert (got["got"][r] >= 0).any(), r  # every demo run labels the test samples
    assert any(np.isfinite(v).any() for v in got["scores"].values())  # and some score them
    assert sorted(p.name for p in (b.data / "runs").iterdir()) == before
    assert (b.data / "runs").stat().st_mtime_ns == moved and pulled.packs(b.data)


def test_packed_runs_written_while_a_board_reads_their_labels_are_read_from_their_folders(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background writer lands between the store's look at a run and its read of the
    run's pack (the pack removed, the runs folders now), or before it (a store whose states
    still name the packs): the labels are the folders' either way."""
    import numpy as np

    a, b, ids = _packed_replica(replica)
    want = _vectors(a.data, sorted(ids))["got"]
    real = pulled.pack_rows
    calls: list[str] = []

    def late(pack: Path, *args: Any, **kw: Any) -> Any:
        if ticking:  # the tick's own reads of the pack
            return real(pack, *args, **kw)
        calls.append(pack.name)
        if len(calls) == 1:
            ticking.append(True)
            runs.materialize(b.data)  # the tick: every run written, the packs removed
            ticking.clear()
        return real(pack, *args, **kw)

    ticking: list[bool] = []

    monkeypatch.setattr(pulled, "pack_rows", late)
    raced = _vectors(b.data, sorted(ids))
    assert calls and not pulled.packs(b.data)
    got = raced["store"].label_vectors("demo", "summary", raced["frame"], sorted(ids))
    for r in sorted(ids):
        np.testing.assert_array_equal(raced["got"][r], want[r], err_msg=r)
        np.testing.assert_array_equal(got[r], want[r], err_msg=r)
    assert len(calls) == 1  # the second read took the folders
