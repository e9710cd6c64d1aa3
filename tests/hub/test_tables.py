"""The results repo as tables: one commit per push, compaction that loses no row wherever it is
stopped, migration from the folder layout, and a replica that knows which layout it reads."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from evaluator.cli.main import main
from evaluator.hub import sync
from evaluator.hub.client import HubClient
from evaluator.hub.compact import compact
from evaluator.hub.migrate import migrate
from evaluator.store import pulled, runs
from evaluator.submissions import moderation
from tests.hub.conftest import REPO_ID, Replica, hub_env, repo_records, repo_runs
from tests.support.fake_hub import FakeHub
from tests.support.testdata import add_run, build_demo_root

ADMIN = "a-maintainer-token-0123456789"

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


def files_of(hub: FakeHub) -> dict[str, bytes]:
    return dict(hub.repo(REPO_ID).files() or {})


def live_ids(root: Path) -> set[str]:
    return {r.run_id for r in runs.list_runs(root, include_hidden=True).runs}


def same_rows(a: Path, b: Path, rid: str) -> None:
    for read in (runs.read_predictions, runs.read_labels):
        pd.testing.assert_frame_equal(
            read(b / "runs" / rid), read(a / "runs" / rid), check_dtype=False
        )


def shards(hub: FakeHub) -> list[str]:
    return sorted(p for p in files_of(hub) if p.startswith("shards/"))


def test_a_push_of_many_runs_is_one_commit_with_one_shard_per_kind(
    fake_hub: FakeHub, replica
) -> None:
    a = replica("a")
    build_demo_root(a.data, reported=False)
    for i in range(5):
        add_run(a.data, "demo", f"Batch model {i}", seed=i)
    commits = len(fake_hub.repo(REPO_ID).commits)
    rep = sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    assert rep.pushed["runs pushed"] == 9
    assert len(fake_hub.repo(REPO_ID).commits) == commits + 1
    assert [p.split("/")[2].split("-")[0] for p in shards(fake_hub)] == ["labels", "predictions"]
    table = pq.read_table(io.BytesIO(files_of(fake_hub)[shards(fake_hub)[1]]))
    assert set(table["run_id"].to_pylist()) == live_ids(a.data)


def _three_pushes_and_a_delete(hub: FakeHub, a: Replica, monkeypatch: pytest.MonkeyPatch) -> str:
    client = HubClient.from_env()
    build_demo_root(a.data, reported=False)
    sync.push(client, a.data, a.subs, demo=True)
    for i in range(2):
        add_run(a.data, "demo", f"Second push {i}", seed=i)
    sync.push(client, a.data, a.subs)
    add_run(a.data, "demo", "Third push", seed=7)
    sync.push(client, a.data, a.subs)
    gone = sorted(live_ids(a.data))[0]
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", ADMIN)
    moderation.moderate("delete", gone, ADMIN, a.data, a.subs)
    sync.push(client, a.data, a.subs)
    assert len(shards(hub)) == 6  # three pushes: predictions and labels each
    return gone


@pytest.mark.parametrize("stop_at", [0, 1])
def test_compaction_stopped_at_any_commit_loses_no_row(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, stop_at: int
) -> None:
    a = replica("a")
    gone = _three_pushes_and_a_delete(fake_hub, a, monkeypatch)
    client = HubClient.from_env()
    real = client.commit
    calls = {"n": 0}

    def dies_at(*args: Any, **kw: Any) -> str:
        if calls["n"] == stop_at:
            raise KeyboardInterrupt("killed")
        calls["n"] += 1
        return real(*args, **kw)

    client.commit = dies_at  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        compact(client)
    # whatever was committed, a new replica gets every live run, row for row
    b = replica(f"b{stop_at}")
    rep = sync.pull(HubClient.from_env(), b.data, b.subs)
    assert not rep.skipped
    assert live_ids(b.data) == live_ids(a.data) and gone not in live_ids(b.data)
    for rid in live_ids(a.data):
        same_rows(a.data, b.data, rid)

    # a compaction that runs to the end leaves one shard per kind, without the deleted run
    done = compact(HubClient.from_env())
    assert len(shards(fake_hub)) == 2, shards(fake_hub)
    assert done.removed_files >= 4 - 2 * stop_at
    preds = pq.read_table(io.BytesIO(files_of(fake_hub)[shards(fake_hub)[1]]))
    assert set(preds["run_id"].to_pylist()) == live_ids(a.data)
    c = replica(f"c{stop_at}")
    sync.pull(HubClient.from_env(), c.data, c.subs)
    assert live_ids(c.data) == live_ids(a.data)
    for rid in live_ids(a.data):
        same_rows(a.data, c.data, rid)
    # replicas that had the runs see nothing new to fetch, nothing to push
    assert sync.status(HubClient.from_env(), b.data, b.subs).inbox() == 0
    mine = sync.status(HubClient.from_env(), a.data, a.subs)
    assert mine.push_runs == [] and mine.push_moderation == {} and mine.inbox() == 0
    assert compact(HubClient.from_env()).summary() == "nothing to compact"


def test_a_push_that_leaves_too_many_shards_compacts_them(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_HUB_COMPACT_AT", "2")
    a = replica("a")
    client = HubClient.from_env()
    build_demo_root(a.data, reported=False)
    sync.push(client, a.data, a.subs, demo=True)
    add_run(a.data, "demo", "Second push", seed=1)
    sync.push(client, a.data, a.subs)
    assert len(shards(fake_hub)) == 4  # two shards of each kind: at the limit, left as they are
    add_run(a.data, "demo", "Third push", seed=2)
    commits = len(fake_hub.repo(REPO_ID).commits)
    rep = sync.push(client, a.data, a.subs)
    # the push, then the compaction's two commits: merged shards, then the old ones removed
    assert rep.pushed["runs pushed"] == 1 and any("compacted" in n for n in rep.notes)
    assert len(fake_hub.repo(REPO_ID).commits) == commits + 3
    assert len(shards(fake_hub)) == 2
    manifest = json.loads(files_of(fake_hub)["manifest.json"])
    assert len(manifest["shards"]["demo"]) == 1
    b = replica("b")
    pulled = sync.pull(HubClient.from_env(), b.data, b.subs)
    assert not pulled.skipped and live_ids(b.data) == live_ids(a.data)
    for rid in live_ids(a.data):
        same_rows(a.data, b.data, rid)
    mine = sync.status(client, a.data, a.subs)
    assert mine.push_runs == [] and mine.inbox() == 0


# ------------------------------------------------------------------------------ migration


def put_folder_layout(hub: FakeHub, root: Path, subs: Path, deleted: str, hidden: str) -> None:
    """A repo as FactBoard wrote it before the tables: a folder per run, a file per moderation
    action, submission record and Every Eval Ever record."""
    files: dict[str, bytes] = {"README.md": b"# old\n"}
    for d in sorted((root / "runs").iterdir()):
        if d.name == deleted:
            continue
        for f in d.iterdir():
            files[f"runs/{d.name}/{f.name}"] = f.read_bytes()
        files[f"eee/data/demo/dev/model/{d.name}.json"] = b"{}"
    for b in (root / "benchmarks").iterdir():
        for f in b.iterdir():
            files[f"benchmarks/{b.name}/{f.name}"] = f.read_bytes()
    at = "2026-01-01T00:00:00+00:00"
    files[f"moderation/{deleted}.json"] = json.dumps(
        {"run_id": deleted, "action": "delete", "at": at}
    ).encode()
    files[f"moderation/{hidden}.json"] = json.dumps(
        {"run_id": hidden, "action": "hide", "at": at}
    ).encode()
    files["submissions/sub-1.json"] = json.dumps(
        {"id": "sub-1", "status": "scored", "email": "x@example.org"}
    ).encode()
    files["queue/job-1.json"] = json.dumps(
        {"id": "job-1", "kind": "noop", "payload": {}, "status": "done"}
    ).encode()
    hub.put(REPO_ID, files)


def test_a_repo_of_the_folder_layout_is_refused_then_migrated_in_one_commit(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = replica("a"), replica("b")
    build_demo_root(a.data, reported=False)
    add_run(a.data, "demo", "Old layout model", seed=2)
    ids = sorted(live_ids(a.data))
    deleted, hidden = ids[0], ids[1]
    runs.set_hidden(hidden, True, a.data)
    put_folder_layout(fake_hub, a.data, a.subs, deleted, hidden)

    # a replica says which layout it met and what to do
    client = HubClient.from_env()
    with pytest.raises(sync.LayoutError, match="old folder layout.*hub migrate"):
        sync.pull(client, b.data, b.subs)
    monkeypatch.setenv("FACTBOARD_DATA", str(b.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(b.subs))
    assert main(["hub", "status"]) == 1
    assert "hub migrate" in capsys.readouterr().err

    commits = len(fake_hub.repo(REPO_ID).commits)
    assert main(["hub", "migrate"]) == 0
    out = capsys.readouterr().out
    assert "4 runs and 1 submission record moved into tables, 1 deleted" in out
    assert len(fake_hub.repo(REPO_ID).commits) == commits + 1
    files = files_of(fake_hub)
    assert not [p for p in files if p.split("/")[0] in ("runs", "moderation", "submissions", "eee")]
    assert json.loads(files["manifest.json"])["layout_version"] == 2
    assert "queue/job-1.json" in files and "configs:" in files["README.md"].decode()
    rows = repo_runs(fake_hub, deleted=True)
    assert rows[deleted]["deleted"] and rows[hidden]["hidden"]
    assert "email" not in repo_records(fake_hub)["sub-1"]

    rep = sync.pull(client, b.data, b.subs)
    assert not rep.skipped
    assert live_ids(b.data) == set(ids) - {deleted}
    assert runs.read_record(b.data / "runs" / hidden).hidden
    for rid in live_ids(b.data):
        same_rows(a.data, b.data, rid)
        assert runs.read_record(b.data / "runs" / rid) == runs.read_record(a.data / "runs" / rid)
    assert migrate(client).already


def test_a_repo_of_a_newer_layout_is_refused(fake_hub: FakeHub, replica) -> None:
    b = replica("b")
    fake_hub.put(REPO_ID, {"manifest.json": b'{"layout_version": 3, "shards": {}}'})
    with pytest.raises(sync.LayoutError, match="layout 3.*update FactBoard"):
        sync.pull(HubClient.from_env(), b.data, b.subs)


def test_the_dataset_card_names_tables_that_pandas_and_duckdb_read(
    fake_hub: FakeHub, replica, tmp_path: Path
) -> None:
    import fnmatch

    import duckdb
    import yaml

    a = replica("a")
    build_demo_root(a.data, reported=False)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    files = files_of(fake_hub)
    card = files["README.md"].decode()
    front = yaml.safe_load(card.split("---")[1])
    configs = {c["config_name"]: c["data_files"] for c in front["configs"]}
    assert {"results", "runs", "predictions", "labels"} <= set(configs)
    for name, pattern in configs.items():
        matched = [p for p in files if fnmatch.fnmatch(p, pattern)]
        if name in ("results", "runs", "predictions", "labels"):
            assert matched, name
        for p in matched:  # each a table of its own
            (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / p).write_bytes(files[p])
    assert REPO_ID in card
    results = pd.read_parquet(tmp_path / "tables" / "results.parquet")
    assert set(results["run_id"]) == live_ids(a.data)
    top = duckdb.sql(
        f"select model_name, value from '{tmp_path}/tables/results.parquet' "
        "where metric = 'balanced_accuracy' and slice_kind = 'overall' and split = 'test' "
        "and unit = 'summary' "
        "and not hidden order by value desc"
    ).fetchall()
    assert len(top) == 4
    preds = duckdb.sql(
        f"select run_id, count(*) from '{tmp_path}/shards/*/predictions-*.parquet' group by all"
    ).fetchall()
    assert {r[0] for r in preds} == live_ids(a.data)


def test_datasets_loads_the_results_config_of_a_pushed_repo(
    fake_hub: FakeHub, replica, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    a = replica("a")
    build_demo_root(a.data, reported=False)
    add_run(a.data, "demo", "Hidden later", seed=3)
    client = HubClient.from_env()
    sync.push(client, a.data, a.subs, demo=True)
    hide = next(r.run_id for r in runs.list_runs(a.data).runs if r.model.name == "Hidden later")
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", ADMIN)
    moderation.moderate("hide", hide, ADMIN, a.data, a.subs)
    sync.push(client, a.data, a.subs)

    # a reader's own process (datasets and huggingface_hub read HF_ENDPOINT when imported)
    out = tmp_path / "read"
    code = (
        "import sys, datasets\n"
        f"results = datasets.load_dataset({REPO_ID!r}, 'results', split='train')\n"
        "results.to_parquet(sys.argv[1] + '-results.parquet')\n"
        f"runs = datasets.load_dataset({REPO_ID!r}, 'runs', split='train')\n"
        "runs.to_parquet(sys.argv[1] + '-runs.parquet')\n"
    )
    env = {**hub_env(fake_hub), "HF_HOME": str(tmp_path / "reader_home")}
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = pd.read_parquet(f"{out}-results.parquet")
    assert set(rows["run_id"]) == live_ids(a.data)
    assert set(rows.loc[rows["hidden"], "run_id"]) == {hide}
    overall = rows[
        (rows["metric"] == "balanced_accuracy")
        & (rows["slice_kind"] == "overall")
        & (rows["split"] == "test")
        & (rows["unit"] == "summary")
    ]
    for r in runs.list_runs(a.data, include_hidden=True).runs:
        mine = [
            x.value
            for x in r.results
            if (x.metric, x.slice_kind, x.split, x.unit)
            == ("balanced_accuracy", "overall", "test", "summary")
        ]
        assert overall.loc[overall["run_id"] == r.run_id, "value"].tolist() == mine
    assert set(pd.read_parquet(f"{out}-runs.parquet")["run_id"]) == live_ids(a.data)


def test_a_pulled_replica_s_board_starts_from_the_runs_the_pull_checked(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    from explorer import store as S
    from explorer.store import Store

    a, b = replica("a"), replica("b")
    build_demo_root(a.data, reported=False)
    for i in range(3):
        add_run(a.data, "demo", f"Pulled model {i}", seed=i)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    sync.pull(HubClient.from_env(), b.data, b.subs)
    ids = sorted(live_ids(b.data))
    assert set(pulled.checked_runs(b.data)) == set(ids)

    # one pulled run hidden here (run.json rewritten), one changed by hand into what the engine
    # refuses: both are folders like any other again, read and checked
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", ADMIN)
    moderation.moderate("hide", ids[0], ADMIN, b.data, b.subs)
    bad = b.data / "runs" / ids[1] / "run.json"
    body = json.loads(bad.read_text())
    body["model"]["name"] = "x" * 5000
    bad.write_text(json.dumps(body))

    monkeypatch.setattr(S, "CHECKED_MIN", 0)
    monkeypatch.setattr(S, "LOAD_CHUNK", 2)  # several batches, as at scale
    read = []
    real = runs.read_record

    def counted(d: Path) -> Any:
        read.append(d.name)
        return real(d)

    monkeypatch.setattr(runs, "read_record", counted)
    store = Store(b.data, snapshot=False)
    store.refresh()
    assert sorted(read) == sorted(ids[:2])  # the others were taken as the pull checked them
    assert set(store._runs) == set(ids) - {ids[1]} and ids[1] in store.problems
    shown = store.cursor().execute("SELECT run_id, hidden, model_name FROM runs").fetchall()
    assert {r[0]: r[1] for r in shown}[ids[0]] is True
    names = {r[0]: r[2] for r in shown}
    for r in runs.list_runs(b.data, include_hidden=True).runs:
        assert names[r.run_id] == r.model.name


def _demo_board(store: Any) -> Any:
    from evaluator.benchmarks import registry
    from explorer import leaderboard as L

    store.refresh()
    return L.build_board(
        store.cursor(),
        L.BoardQuery("demo", "summary", "overall", "", "balanced_accuracy"),
        registry.get("demo"),
        store.version("demo"),
        resamples=200,
        memo={},
        ensure=lambda ids: store.ensure_labels("demo", ids, predictions=False),
        labels=lambda ids, frame, sc: store.label_vectors("demo", "summary", frame, ids, sc),
    )


def test_a_deferred_pull_keeps_the_checked_runs_in_a_pack_until_they_are_written(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Space's start-up pull keeps each shard's checked runs as one pack: the board shows
    them at once, reading the pack in place, the paired tests' labels too (no folder written);
    a page that loads a run's files writes its folder first; then every run becomes a folder,
    the same folder a plain pull writes, and the pack goes. The engine never sees a pack:
    listing or looking up runs writes them first."""
    from explorer.store import Store

    a, b, c = replica("a"), replica("b"), replica("c")
    build_demo_root(a.data, reported=False)
    for i in range(3):
        add_run(a.data, "demo", f"Packed model {i}", seed=i)
    hidden = sorted(live_ids(a.data))[1]
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", ADMIN)
    moderation.moderate("hide", hidden, ADMIN, a.data, a.subs)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    ids = {r.run_id for r in runs.list_runs(a.data, include_hidden=True).runs}

    rep, _ = sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)
    assert rep.pulled["runs"] == len(ids) and not rep.skipped
    assert not (b.data / "runs").exists() or not any((b.data / "runs").iterdir())
    (pack,) = pulled.packs(b.data)
    assert set(pulled.packed_runs(b.data)) == ids
    assert sync.Local.of(b.data, b.subs).run_ids() == ids  # the next plan pulls none again

    store = Store(b.data, snapshot=False)
    board = _demo_board(store)
    assert set(board.rows["run_id"].dropna()) == ids - {hidden}
    assert board.paired_runs  # their labels were read in place, from the pack
    assert not (b.data / "runs").exists() or not any((b.data / "runs").iterdir())
    store.ensure_labels("demo", board.paired_runs)  # a page that loads these runs' files
    written = {p.name for p in (b.data / "runs").iterdir()}
    assert set(board.paired_runs) == written < ids

    token = store.token("demo")
    sync.pull(HubClient.from_env(), c.data, c.subs)  # a plain pull, for comparison
    monkeypatch.setattr(pulled, "MATERIALIZE_CHUNK", 2)  # a few runs at a time, as at scale
    assert runs.materialize(b.data) == len(ids - written)
    assert not pulled.packs(b.data) and not pack.exists()
    for rid in ids:
        same_rows(c.data, b.data, rid)
        assert runs.read_record(b.data / "runs" / rid) == runs.read_record(c.data / "runs" / rid)
    again = _demo_board(store)  # the store now reads the folders: the same board
    pd.testing.assert_frame_equal(again.rows, board.rows)
    assert store.token("demo") == token  # the same runs, not loaded again
    assert all(s.pack is None for s in store._runs.values())


def test_a_pack_taken_away_or_broken_loses_no_run(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pack written as folders between the store's look at it and its read: the store goes
    on, and has those runs from their folders at its next look. An unreadable pack is
    dropped, and the next pull fetches its runs again."""
    from explorer.store import Store

    a, b = replica("a"), replica("b")
    build_demo_root(a.data, reported=False)
    sync.push(HubClient.from_env(), a.data, a.subs, demo=True)
    ids = live_ids(a.data)
    sync.sync(HubClient.from_env(), b.data, b.subs, defer=True)
    listed = pulled.packed_runs(b.data)
    (pack,) = pulled.packs(b.data)
    aside = pack.rename(pack.parent.parent / "aside")
    store = Store(b.data, snapshot=False)
    with monkeypatch.context() as m:
        m.setattr(pulled, "packed_runs", lambda root=None: listed)  # seen before
        store.refresh()  # the pack is gone when its runs are read: they wait
    assert not store._runs and not store.problems
    aside.rename(pack)
    runs.materialize(b.data)
    store.refresh()
    assert set(store._runs) == ids and not store.problems

    c = replica("c")
    sync.sync(HubClient.from_env(), c.data, c.subs, defer=True)
    (pack,) = pulled.packs(c.data)
    (pack / "runs.parquet").write_bytes(b"PAR1 not a table PAR1")
    assert sync.Local.of(c.data, c.subs).run_ids() == set()  # not counted as held
    assert runs.materialize(c.data) == 0 and not pulled.packs(c.data)
    rep = sync.pull(HubClient.from_env(), c.data, c.subs)
    assert rep.pulled["runs"] == len(ids) and live_ids(c.data) == ids
