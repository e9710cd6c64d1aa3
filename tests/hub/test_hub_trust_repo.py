"""What a replica does with a results repo it cannot trust: every row, shard, benchmark and
moderation entry it reads is checked; what fails a check is skipped, listed and remembered (not
downloaded again), and never stops the push. Each test is an attack on the tables layout, through
the real huggingface_hub client against the fake Hub."""

from __future__ import annotations

import io
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.cli.main import main
from evaluator.hub import sync
from evaluator.hub import tables as T
from evaluator.hub.client import HubClient, HubError
from evaluator.store import runs
from evaluator.submissions import moderation, service
from tests.hub.conftest import REPO_ID, Replica, repo_records, repo_runs
from tests.support.fake_hub import FakeHub
from tests.support.submit import predictions_csv
from tests.support.testdata import add_run, build_demo_root

ADMIN = "a-maintainer-token-0123456789"

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


def run_ids(root: Path, hidden: bool = True) -> set[str]:
    return {r.run_id for r in runs.list_runs(root, include_hidden=hidden).runs}


def seed(replica: Replica, extra: int = 1) -> HubClient:
    build_demo_root(replica.data)
    for i in range(extra):
        add_run(replica.data, "demo", f"Extra model {i}", seed=i, origin="evaluated")
    client = HubClient.from_env()
    sync.push(client, replica.data, replica.subs, reported=True, demo=True)
    return client


def files(hub: FakeHub) -> dict[str, bytes]:
    return dict(hub.repo(REPO_ID).files() or {})


def put_runs(hub: FakeHub, rows: list[dict[str, Any]], extra: dict[str, bytes] | None = None):
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=T.RUNS_SCHEMA), sink)
    hub.put(REPO_ID, {"tables/runs.parquet": sink.getvalue(), **(extra or {})})


def forged(row: dict[str, Any], run_id: str, **change: Any) -> dict[str, Any]:
    """A copy of a runs table row under another run id (its run.json's id changed to match)."""
    body = json.loads(row["run_json"])
    body["run_id"] = run_id
    for k, v in change.items():
        body[k] = v
    return {**row, "run_id": run_id, "run_json": json.dumps(body)}


def cli(args: list[str], r: Replica, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.setenv("FACTBOARD_DATA", str(r.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(r.subs))
    capsys.readouterr()
    rc = main(args)
    got = capsys.readouterr()
    return rc, got.out + got.err


# 1. paths and ids that are not plain names; a failed pull does not stop the push


def test_odd_paths_and_ids_are_skipped_and_a_failed_pull_still_pushes(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    rows = list(repo_runs(fake_hub).values())
    good = rows[0]
    manifest = json.loads(files(fake_hub)["manifest.json"])
    manifest["shards"]["demo"][".."] = ["predictions"]
    manifest["shards"]["demo"]["../../etc"] = ["predictions"]
    manifest["shards"]["/abs"] = {"x": ["predictions"]}
    bad = [
        forged(good, "evilrun/.."),
        forged(good, "/etc/passwd"),
        forged(good, "two\nlines"),
        {**forged(good, "demo-up-0000"), "shard": "../../etc"},
        {**forged(good, "demo-dotdot-0000"), "shard": ".."},
        {**forged(good, "demo-bench-0000"), "benchmark": "../demo"},
    ]
    put_runs(
        fake_hub,
        rows + bad,
        {
            "manifest.json": json.dumps(manifest).encode(),
            "runs/evilrun/..": b"{}",
            "runs/evilrun/run.json": b"{}",
        },
    )
    # a second shard the Hub cannot serve (every try fails)
    behind = add_run(a.data, "demo", "Behind a broken shard", origin="submitted").name
    sync.push(client, a.data, a.subs)
    newest = f"shards/demo/predictions-{repo_runs(fake_hub)[behind]['shard']}.parquet"
    fake_hub.fail_next(10_000, 503, newest)

    shutil.copytree(a.data / "benchmarks" / "demo", b.data / "benchmarks" / "demo")
    mine = add_run(b.data, "demo", "Written on b", origin="submitted").name
    pulled, pushed = sync.sync(client, b.data, b.subs)
    said = "\n".join(pulled.skipped)
    for rid in ("evilrun/..", "/etc/passwd", "two\\nlines", "demo-up-0000", "demo-dotdot"):
        assert rid in said, said
    assert "demo-bench-0000" in said and repo_runs(fake_hub)[behind]["shard"] in said
    assert pushed is not None and pushed.pushed["runs pushed"] == 1
    assert mine in repo_runs(fake_hub)
    assert run_ids(b.data) == {r["run_id"] for r in rows} | {mine}, pulled.skipped
    assert not (b.data / "etc").exists() and not (b.data.parent / "etc").exists()
    assert sorted(p.name for p in (b.data / "runs").iterdir() if p.name.startswith(".")) == []


def test_an_unreadable_manifest_does_not_stop_the_pull_or_the_push(
    fake_hub: FakeHub, replica
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    fake_hub.put(REPO_ID, {"manifest.json": b"{not json"})
    shutil.copytree(a.data / "benchmarks" / "demo", b.data / "benchmarks" / "demo")
    mine = add_run(b.data, "demo", "Written on b", origin="submitted").name
    pulled, pushed = sync.sync(client, b.data, b.subs)
    assert run_ids(b.data) == run_ids(a.data) | {mine}
    assert any("manifest.json is not JSON" in s for s in pulled.skipped), pulled.skipped
    assert pushed is not None and mine in repo_runs(fake_hub)
    # the push wrote a manifest again: a third replica reads it as usual
    assert json.loads(files(fake_hub)["manifest.json"])["layout_version"] == 2
    c = replica("c")
    assert sync.pull(client, c.data, c.subs).skipped == []
    assert run_ids(c.data) == run_ids(b.data)


# 3. files outside the layout, and a row that fails: neither downloaded again; status in step


def test_a_row_that_fails_is_not_downloaded_again_and_status_reaches_in_step(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    rows = list(repo_runs(fake_hub).values())
    ghost = forged(rows[0], "demo-ghost-0000")  # its shard has no rows of it
    junk = {f"runs/evilrun/f{i:04d}.txt": b"x" for i in range(1500)}
    put_runs(fake_hub, [*rows, ghost], junk)

    rep = sync.pull(client, b.data, b.subs)
    assert any("demo-ghost-0000" in s for s in rep.skipped), rep.skipped
    assert run_ids(b.data) == {r["run_id"] for r in rows}
    gets, before = fake_hub.count("GET", "/resolve/"), len(fake_hub.requests)
    again = sync.pull(client, b.data, b.subs)
    assert fake_hub.count("GET", "/resolve/") == gets  # nothing downloaded again
    assert len(fake_hub.requests) - before == 1  # the head
    assert again.pulled.get("runs", 0) == 0
    assert any("demo-ghost-0000" in s for s in again.skipped)
    rc, out = cli(["hub", "status"], b, monkeypatch, capsys)
    assert rc == 0 and "in step" in out and "demo-ghost-0000" in out, out


# 4. a size cap on every download, named in the error


def test_every_download_has_a_size_cap_named_in_the_error(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    manifest = json.loads(files(fake_hub)["manifest.json"])
    (sid,) = manifest["shards"]["demo"]
    manifest["shards"]["demo"][sid].append("evidence")
    big = os.urandom(300_000)
    fake_hub.put(
        REPO_ID,
        {
            "manifest.json": json.dumps(manifest).encode(),
            f"shards/demo/evidence-{sid}.parquet": big,
        },
    )
    monkeypatch.setenv("FACTBOARD_HUB_MAX_BYTES", "200000")
    with pytest.raises(HubError, match=r"evidence-.*larger than.*200,000 bytes"):
        client.fetch(f"shards/demo/evidence-{sid}.parquet", client.head())
    with pytest.raises(HubError, match=r"evidence-.*larger than.*200,000 bytes"):
        client.download([f"shards/demo/evidence-{sid}.parquet"], client.head(), b.data / "dl")
    with pytest.raises(HubError, match="not a path inside the repo"):
        client.download(["../outside.json"], client.head(), b.data / "dl")
    rep = sync.pull(client, b.data, b.subs)
    # the runs come without the evidence that is too large; the error says which file and cap
    assert run_ids(b.data) == run_ids(a.data)
    said = "\n".join(rep.skipped)
    assert f"evidence-{sid}.parquet" in said and "200,000 bytes" in said, said
    # a table over the cap: the pull stops with its name and the cap
    monkeypatch.setenv("FACTBOARD_HUB_MAX_BYTES", "1000")
    from evaluator.hub import remote

    monkeypatch.setattr(remote, "BLOBS", remote.Blobs())  # a new process: nothing read yet
    monkeypatch.setattr(remote, "_PARSED", {})
    monkeypatch.setattr(remote, "_TREES", {})
    c = replica("c")
    with pytest.raises(HubError, match=r"tables/runs\.parquet.*larger than.*1,000 bytes"):
        sync.pull(HubClient.from_env(), c.data, c.subs)


# 5. a pulled benchmark never replaces a valid local one with a broken one


def test_a_newer_benchmark_with_another_schema_does_not_replace_the_local_one(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=0)
    sync.pull(client, b.data, b.subs)
    local = b.data / "benchmarks" / "demo"
    before = {f.name: f.read_bytes() for f in local.iterdir()}
    meta = json.loads(before["benchmark.json"])
    meta["ingested_at"] = "2999-01-01T00:00:00+00:00"
    sink = io.BytesIO()
    pq.write_table(pa.table({"foo": [1, 2, 3]}), sink)
    fake_hub.put(
        REPO_ID,
        {
            "benchmarks/demo/benchmark.json": json.dumps(meta).encode(),
            "benchmarks/demo/samples.parquet": sink.getvalue(),
            # a registered benchmark's samples with the right schema but not the version claimed
            "benchmarks/summedits/benchmark.json": json.dumps(
                {**meta, "name": "summedits", "version": "0123456789abcdef"}
            ).encode(),
            "benchmarks/summedits/samples.parquet": before["samples.parquet"],
            "benchmarks/no-such-benchmark/benchmark.json": before["benchmark.json"],
            "benchmarks/no-such-benchmark/samples.parquet": before["samples.parquet"],
        },
    )
    rep = sync.pull(client, b.data, b.subs)
    assert {f.name: f.read_bytes() for f in local.iterdir()} == before
    assert not (b.data / "benchmarks" / "summedits").exists()
    assert not (b.data / "benchmarks" / "no-such-benchmark").exists()
    said = "\n".join(rep.skipped)
    assert "benchmark demo" in said and "samples.parquet" in said, said
    assert "benchmark summedits" in said and "version" in said, said
    assert "no-such-benchmark" in said
    gets = fake_hub.count("GET", "/resolve/")
    sync.pull(client, b.data, b.subs)
    assert fake_hub.count("GET", "/resolve/") == gets
    rc, out = cli(["hub", "status"], b, monkeypatch, capsys)
    assert "in step" in out, out
    # b never pushes its own copy over the repo's either (the repo's ingested_at is later)
    assert sync.status(client, b.data, b.subs).push_benchmarks == []


# 7. hide on one replica, delete on another: the delete wins, no half run


@pytest.mark.parametrize("hide_first", [True, False])
def test_a_delete_wins_over_a_hide_from_another_replica(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, hide_first: bool
) -> None:
    a, b, c = replica("a"), replica("b"), replica("c")
    client = seed(a, extra=1)
    sync.pull(client, b.data, b.subs)
    x = sorted(run_ids(a.data))[0]
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", ADMIN)
    if hide_first:
        moderation.moderate("hide", x, ADMIN, a.data, a.subs)
        time.sleep(1.1)
        moderation.moderate("delete", x, ADMIN, b.data, b.subs)
    else:
        moderation.moderate("delete", x, ADMIN, b.data, b.subs)
        time.sleep(1.1)
        moderation.moderate("hide", x, ADMIN, a.data, a.subs)
    # both computed on the same head; b commits first, a's commit meets a moved head
    remote = sync.snapshot(client)
    plan_a = sync.plan(client, remote, sync.Local.of(a.data, a.subs))
    assert x in plan_a.push_moderation
    sync.push(client, b.data, b.subs)
    sync._push(client, remote, sync.Local.of(a.data, a.subs), plan_a, "publish")
    sync.sync(client, a.data, a.subs)
    row = repo_runs(fake_hub, deleted=True)[x]
    assert row["deleted"] and row["run_json"] is None and row["kinds"] == ""
    assert x not in run_ids(a.data) and x not in run_ids(b.data)
    rep = sync.pull(client, c.data, c.subs)
    assert x not in run_ids(c.data) and not (c.data / "runs" / x).exists()
    assert rep.skipped == []
    for r in (a, b, c):
        assert sync.status(client, r.data, r.subs).lines() == []


# 8. moderation follows the repo's commit order, not a date a replica wrote


def test_a_moderation_dated_2099_does_not_pin_a_run(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    sync.pull(client, b.data, b.subs)
    x = sorted(run_ids(a.data))[0]
    runs.set_hidden(x, True, a.data)
    a.subs.mkdir(parents=True, exist_ok=True)
    with open(a.subs / "moderation.jsonl", "a", encoding="utf-8") as fh:
        entry = {"at": "2099-01-01T00:00:00+00:00", "action": "hide", "runs": [x]}
        fh.write(json.dumps(entry) + "\n")
    sync.push(client, a.data, a.subs)
    sync.pull(client, b.data, b.subs)
    assert runs.read_record(b.data / "runs" / x).hidden

    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", ADMIN)
    rc, out = cli(["moderate", "show", x, "--token", ADMIN], b, monkeypatch, capsys)
    assert rc == 0, out
    rc, out = cli(["hub", "push"], b, monkeypatch, capsys)
    assert "1 moderation action pushed" in out, out
    assert repo_runs(fake_hub)[x]["hidden"] is False
    sync.pull(client, b.data, b.subs)
    assert not runs.read_record(b.data / "runs" / x).hidden
    sync.sync(client, a.data, a.subs)  # the replica that wrote 2099 follows the later commit
    assert not runs.read_record(a.data / "runs" / x).hidden
    assert repo_runs(fake_hub)[x]["hidden"] is False
    for r in (a, b):
        assert sync.status(client, r.data, r.subs).lines() == []


# 9. the same file submitted on two replicas is one run after sync


def _submit(r: Replica, name: str, seed: int, monkeypatch) -> service.SubmitResult:
    monkeypatch.setenv("FACTBOARD_DATA", str(r.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(r.subs))
    res = service.submit(
        predictions_csv(seed),
        "preds.csv",
        service.SubmissionMeta(benchmark="demo", model_name=name),
        data_root=r.data,
        submissions_root=r.subs,
        resamples=50,
    )
    assert res.ok, res.problems
    return res


def test_the_same_file_submitted_on_two_replicas_is_one_run_after_sync(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=0)
    sync.pull(client, b.data, b.subs)
    ra = _submit(a, "Twice submitted", 11, monkeypatch)
    rb = _submit(b, "Twice submitted", 11, monkeypatch)
    assert ra.run_id != rb.run_id
    sync.sync(client, a.data, a.subs)
    pulled, _ = sync.sync(client, b.data, b.subs)
    sync.sync(client, b.data, b.subs)  # b publishes the record that says why
    sync.sync(client, a.data, a.subs)
    named = [r for r in repo_runs(fake_hub).values() if r["model_name"] == "Twice submitted"]
    assert [r["run_id"] for r in named] == [ra.run_id]
    for r in (a, b):
        listing = runs.list_runs(r.data, include_hidden=True).runs
        assert [x.run_id for x in listing if x.model.name == "Twice submitted"] == [ra.run_id]
    assert any("duplicate" in s and rb.run_id in s for s in pulled.notes), pulled.notes
    rec = json.loads((b.subs / "records" / f"{rb.submission_id}.json").read_text())
    assert rec["status"] == "rejected" and "duplicate" in json.dumps(rec)
    assert repo_records(fake_hub)[rb.submission_id]["status"] == "rejected"
    for r in (a, b):
        assert sync.status(client, r.data, r.subs).lines() == []


# 11. status right after push --reported


def test_status_right_after_push_reported_is_in_step(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    a = replica("a")
    build_demo_root(a.data, reported=False)
    rc, out = cli(["hub", "push", "--reported"], a, monkeypatch, capsys)
    assert rc == 0 and "reported tables pushed" in out, out
    rc, out = cli(["hub", "status"], a, monkeypatch, capsys)
    assert rc == 0 and "in step" in out and "reported tables to pull" not in out, out


# verify on pull: a run's numbers must follow from its predictions


def test_a_run_whose_numbers_do_not_follow_from_its_predictions_is_not_pulled(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    rows = list(repo_runs(fake_hub).values())
    target = next(r for r in rows if json.loads(r["run_json"])["model"]["name"] == "Extra model 0")
    body = json.loads(target["run_json"])
    for res in body["results"]:
        if res["metric"] == "balanced_accuracy":
            res.update(value=0.99, ci_low=0.98, ci_high=0.995)
    lie = {**target, "run_json": json.dumps(body)}
    put_runs(fake_hub, [lie if r is target else r for r in rows] + [forged(target, "../evil")])

    rep = sync.pull(client, b.data, b.subs)
    assert target["run_id"] not in run_ids(b.data)
    assert run_ids(b.data) == {r["run_id"] for r in rows} - {target["run_id"]}
    said = "\n".join(rep.skipped)
    assert target["run_id"] in said and "differ from what its predictions score" in said, said
    gets = fake_hub.count("GET", "/resolve/")
    sync.pull(client, b.data, b.subs)
    assert fake_hub.count("GET", "/resolve/") == gets
    # doctor names what the last pull skipped
    rc, out = cli(["doctor", "--quick"], b, monkeypatch, capsys)
    assert rc == 1 and target["run_id"] in out and "results repo" in out, out
    assert "'../evil'" in out, out


@pytest.mark.parametrize("defer", [False, True])
def test_a_shards_runs_are_checked_a_chunk_at_a_time_and_a_lie_in_a_later_chunk_is_named(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, defer: bool
) -> None:
    """A shard's runs are validated and written CHUNK at a time (so its records are not all
    held at once): every chunk lands, and a run whose numbers lie, in the last chunk, is
    skipped and named as it is when the shard is one chunk."""
    from evaluator.hub import pull
    from evaluator.store import pulled

    monkeypatch.setattr(pull, "CHUNK", 2)
    a, b = replica("a"), replica("b")
    client = seed(a, extra=3)
    rows = sorted(repo_runs(fake_hub).values(), key=lambda r: r["run_id"])
    assert len(rows) > 4  # more than two chunks
    target = rows[-1]
    body = json.loads(target["run_json"])
    for res in body["results"]:
        res.update(value=0.99, ci_low=0.98, ci_high=0.995)
    put_runs(fake_hub, [*rows[:-1], {**target, "run_json": json.dumps(body)}])

    rep = sync.pull(client, b.data, b.subs, defer=defer)
    if defer:  # one pack per chunk
        assert len(pulled.packs(b.data)) == -(-(len(rows) - 1) // 2), pulled.packs(b.data)
    assert run_ids(b.data) == {r["run_id"] for r in rows[:-1]}
    said = "\n".join(rep.skipped)
    assert f"run {target['run_id']} skipped" in said, said


def test_a_run_claiming_a_benchmark_version_this_replica_lacks_is_held_back(
    fake_hub: FakeHub, replica
) -> None:
    """Naming a version the replica does not have must not skip the check: such a run waits,
    listed, until that version of the benchmark is here (and is tried again on each pull)."""
    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    rows = list(repo_runs(fake_hub).values())
    target = next(r for r in rows if json.loads(r["run_json"])["model"]["name"] == "Extra model 0")
    body = json.loads(target["run_json"])
    body["benchmark_version"] = "9.9-unseen"
    for res in body["results"]:
        if res["metric"] == "balanced_accuracy":
            res.update(value=0.99, ci_low=0.98, ci_high=0.995)
    lie = {**target, "run_json": json.dumps(body), "benchmark_version": "9.9-unseen"}
    put_runs(fake_hub, [lie if r is target else r for r in rows])

    rep = sync.pull(client, b.data, b.subs)
    assert target["run_id"] not in run_ids(b.data)
    said = "\n".join(rep.skipped)
    assert target["run_id"] in said and "9.9-unseen" in said, said
    again = sync.pull(client, b.data, b.subs)  # not remembered as failed: tried again
    assert any(target["run_id"] in s for s in again.skipped), again.skipped


# records, jobs and reported tables: checked as the local queue, records and CSVs are


def test_records_and_jobs_that_fail_a_check_are_skipped_and_listed(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=0)
    good = {"id": "20260101T000000-0000aaaa", "status": "scored", "meta": {"benchmark": "demo"}}
    recs = [
        {
            "submission_id": good["id"],
            "status": "scored",
            "record": sync.public_record(good).decode(),
        },
        {
            "submission_id": "20260101T000000-0000bbbb",
            "status": "scored",
            "record": json.dumps({**good, "id": "20260101T000000-0000cccc"}),
        },
        {
            "submission_id": "20260101T000000-0000dddd",
            "status": "accepted",
            "record": json.dumps({**good, "id": "20260101T000000-0000dddd", "status": "x"}),
        },
    ]
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(recs, schema=T.SUBMISSIONS_SCHEMA), sink)
    job = {"id": "job-ok", "kind": "noop", "payload": {}, "status": "pending"}
    fake_hub.put(
        REPO_ID,
        {
            "tables/submissions.parquet": sink.getvalue(),
            "queue/job-ok.json": json.dumps(job).encode(),
            "queue/job-renamed.json": json.dumps(job).encode(),
            "queue/job-odd.json": json.dumps({**job, "id": "job-odd", "lease": 5}).encode(),
            "reported/broken.csv": b"model,value\nM,high\n",
        },
    )
    rep = sync.pull(client, b.data, b.subs)
    assert sorted(p.stem for p in (b.subs / "records").glob("*.json")) == [good["id"]]
    jobs = sorted(p.name for p in (b.subs / "queue").rglob("*.json") if p.parent.name != "queue")
    assert jobs == ["job-ok.json"]
    said = "\n".join(rep.skipped)
    for what in ("0000bbbb", "0000dddd", "job job-renamed", "job job-odd", "table broken"):
        assert what in said, said
    assert not (b.data / "reported" / "broken.csv").exists()
    gets = fake_hub.count("GET", "/resolve/")
    sync.pull(client, b.data, b.subs)
    assert fake_hub.count("GET", "/resolve/") == gets  # none of them is downloaded again
    rc, out = cli(["hub", "status"], b, monkeypatch, capsys)
    assert "in step" in out and "job-renamed" in out, out
