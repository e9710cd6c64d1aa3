"""A replica's start-up before its server takes visitors (scripts/space_prepare.sh): the results
repo pulled, the board's store read once and its snapshot written (explorer/warm.py), so that
the server's first page reads the snapshot instead of every run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evaluator.hub import sync
from evaluator.hub.client import HubClient
from evaluator.store import pulled, runs
from evaluator.submissions import moderation
from explorer import warm
from explorer.snapshot import snapshot_file
from explorer.store import Store
from tests.hub.conftest import hub_env
from tests.support.fake_hub import FakeHub
from tests.support.testdata import build_demo_root

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_path / "cache"))


def _published(replica):  # type: ignore[no-untyped-def]
    a = replica("a")
    build_demo_root(a.data, reported=False)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    return {r.run_id for r in runs.list_runs(a.data).runs}


def _first_page_reads_no_run(root: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A new process's store, refreshed as a page refreshes it, failing if it reads a run."""

    def no_reading(*a: object, **k: object) -> None:
        raise AssertionError("the first page read run files")

    with monkeypatch.context() as m:
        m.setattr(Store, "_load_runs", no_reading)
        s = Store(root)
        s.refresh(30.0)
    return s


def test_the_start_up_pulls_the_repo_and_prepares_the_board_s_first_page(
    fake_hub: FakeHub, replica, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _published(replica)
    b = replica("b")
    env = {**hub_env(fake_hub), **b.env(), "FACTBOARD_CACHE": str(tmp_path / "cache")}
    out = subprocess.run(
        ["bash", "scripts/space_prepare.sh"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    assert "is ready" in out.stdout and "1 benchmarks" in out.stdout, out.stdout
    assert {r.run_id for r in runs.list_runs(b.data).runs} == ids
    assert snapshot_file(b.data).is_file()
    s = _first_page_reads_no_run(b.data, monkeypatch)
    assert s.benchmarks() == ["demo"] and not s.problems
    # without the snapshot the same page reads every run
    snapshot_file(b.data).unlink()
    with pytest.raises(AssertionError, match="read run files"):
        _first_page_reads_no_run(b.data, monkeypatch)


def test_a_packed_replica_s_first_page_reads_the_snapshot_before_and_after_the_folders(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Warming a replica whose many runs are still in packs notes them with their packs; once
    the app has written them as folders, a new process's first page still reads no run, and a
    run.json changed by hand since is read again and listed when broken. A few packed runs are
    written as folders by the warming itself."""
    ids = _published(replica)
    few = replica("few")
    sync.sync(HubClient.from_env(), few.data, few.subs, defer=True)
    assert warm.warm(few.data).benchmarks() == ["demo"]
    assert not pulled.packs(few.data) and {p.name for p in (few.data / "runs").iterdir()} == ids
    monkeypatch.setattr(pulled, "WRITE_AT_ONCE_BELOW", 2)  # 4 runs are many
    b = replica("b")
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)  # the app's pull: packs
    assert pulled.packs(b.data)
    s = warm.warm(b.data)
    assert pulled.packs(b.data) and snapshot_file(b.data).is_file() and not s.problems
    assert _first_page_reads_no_run(b.data, monkeypatch).benchmarks() == ["demo"]
    runs.materialize(b.data)  # the app's background writer
    assert not pulled.packs(b.data) and {p.name for p in (b.data / "runs").iterdir()} == ids
    after = _first_page_reads_no_run(b.data, monkeypatch)
    assert after.benchmarks() == ["demo"] and not after.problems
    broken = sorted(ids)[0]
    (b.data / "runs" / broken / "run.json").write_text("{not json")
    assert warm.main(["--data", str(b.data)]) == 0
    out = capsys.readouterr().out
    assert f"left off the board: run {broken}: run.json is not valid JSON" in out


def test_an_empty_data_root_gets_the_demo_before_its_store_is_prepared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "empty" / "leaderboard_data"
    assert warm.main(["--data", str(root), "--demo-when-empty"]) == 0
    out = capsys.readouterr().out
    assert "the built-in demo is built" in out and "1 benchmarks" in out
    assert len(runs.list_runs(root).runs) == 4
    assert _first_page_reads_no_run(root, monkeypatch).benchmarks() == ["demo"]
    assert not warm.demo_when_empty(root)  # something to show: left as it is


def test_a_sync_on_packed_runs_writes_as_folders_only_the_runs_it_reads(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replica that starts on packed runs: its next sync does not wait on writing them all as
    folders (the background writer does), except a run the repo has since hidden, whose state
    the sync reads and changes."""
    a = replica("a")
    build_demo_root(a.data, reported=False)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    b = replica("b")
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)
    ids = set(pulled.packed_runs(b.data))
    assert len(ids) == 4 and not any((b.data / "runs").iterdir())
    rep, _ = sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)  # nothing new
    assert rep.summary() == "nothing to do" and not any((b.data / "runs").iterdir())
    hidden = sorted(ids)[0]
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", "a-maintainer-token-0123456789")
    moderation.moderate("hide", hidden, "a-maintainer-token-0123456789", a.data, a.subs)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)
    assert [p.name for p in (b.data / "runs").iterdir()] == [hidden]
    assert runs.read_record(b.data / "runs" / hidden).hidden
    assert set(pulled.packed_runs(b.data)) == ids  # the pack: written as folders later
    assert {r.run_id for r in runs.list_runs(b.data).runs} == ids - {hidden}


def test_hub_pull_packed_keeps_the_runs_in_packs_the_board_reads(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaluator.cli.main import main

    ids = _published(replica)
    b = replica("b")
    for k, v in b.env().items():
        monkeypatch.setenv(k, v)
    assert main(["hub", "pull", "--packed"]) == 0
    assert "4 runs" in capsys.readouterr().out
    assert set(pulled.packed_runs(b.data)) == ids and not any((b.data / "runs").iterdir())
    s = Store(b.data)
    s.refresh()
    assert s.benchmarks() == ["demo"] and not s.problems
    assert {r.run_id for r in runs.list_runs(b.data).runs} == ids  # folders once listed
    assert not pulled.packs(b.data)


def test_the_app_writes_many_packed_runs_as_folders_in_a_child_process(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many packed runs are written by a child process (the server's pages keep its
    interpreter); what it writes is what materialize writes here."""
    from evaluator.hub import background

    ids = _published(replica)
    b = replica("b")
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)
    calls: list[list[str]] = []
    real = background.subprocess.run

    def spy(cmd, **kw):  # type: ignore[no-untyped-def]
        calls.append(list(cmd))
        return real(cmd, **kw)

    monkeypatch.setattr(background.subprocess, "run", spy)
    monkeypatch.setattr(pulled, "WRITE_AT_ONCE_BELOW", 2)
    syncer = background.Syncer(HubClient.from_env(), b.data, b.subs)
    syncer.once(force_pull=True)
    syncer.once()  # the next tick
    assert syncer.state.error is None
    assert [c[-3:] for c in calls] == [["evaluator.hub.background", "write-packed", str(b.data)]]
    assert not pulled.packs(b.data) and {p.name for p in (b.data / "runs").iterdir()} == ids
    assert {r.run_id for r in runs.list_runs(b.data).runs} == ids
    assert background._child(["nothing"]) == 2
    # a child that fails is said on the page, and its packs stay for the next tick
    sync.sync(HubClient.from_env(), (c := replica("c")).data, c.subs, defer=True)
    monkeypatch.setattr(background.sys, "executable", "/bin/false")
    syncer = background.Syncer(HubClient.from_env(), c.data, c.subs)
    syncer.once(force_pull=True)
    syncer.once()
    assert syncer.state.error == "the pulled runs could not be written here: exit code 1"
    assert set(pulled.packed_runs(c.data)) == ids


def test_the_background_sync_writes_packs_as_folders_only_after_its_first_pass(
    fake_hub: FakeHub, replica
) -> None:
    """The first page waits for the app's first sync: on a replica that starts on packs (the
    start-up's pull), that sync does not write them as folders first; the next tick does."""
    from evaluator.hub.background import Syncer

    _published(replica)
    b = replica("b")
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)  # a pull kept in packs
    syncer = Syncer(HubClient.from_env(), b.data, b.subs)
    syncer.once(force_pull=True)
    assert syncer.first.is_set() and pulled.packs(b.data)
    assert not any((b.data / "runs").iterdir())
    syncer.once()  # the next tick
    assert not pulled.packs(b.data)
