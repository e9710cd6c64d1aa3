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


def test_warming_writes_packed_runs_as_folders_and_lists_broken_runs(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _published(replica)
    b = replica("b")
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)  # the app's pull: packs
    assert pulled.packs(b.data)
    s = warm.warm(b.data)
    assert not pulled.packs(b.data) and {p.name for p in (b.data / "runs").iterdir()} == ids
    assert snapshot_file(b.data).is_file() and not s.problems
    assert _first_page_reads_no_run(b.data, monkeypatch).benchmarks() == ["demo"]
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
