"""Pull, push and status against the fake Hub, through the real huggingface_hub client."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd
import pytest

from evaluator.cli.main import main
from evaluator.hub import background, sync
from evaluator.hub.client import HubAuthError, HubClient, HubUnavailable
from evaluator.store import ingested, runs
from evaluator.submissions import moderation, service
from tests.hub.conftest import (
    READ_TOKEN,
    REPO_ID,
    WRITE_TOKEN,
    Replica,
    repo_records,
    repo_runs,
    repo_table,
)
from tests.support.fake_hub import FakeHub
from tests.support.submit import predictions_csv
from tests.support.testdata import add_run, build_demo_root

ADMIN = "a-maintainer-token-0123456789"

# huggingface_hub's LFS upload passes raw bytes the way httpx now deprecates
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


def run_ids(root: Path, hidden: bool = True) -> set[str]:
    return {r.run_id for r in runs.list_runs(root, include_hidden=hidden).runs}


def seed(replica: Replica, extra: int = 2) -> HubClient:
    """The demo plus `extra` more runs, published to the fake repo."""
    build_demo_root(replica.data)
    for i in range(extra):
        add_run(replica.data, "demo", f"Extra model {i}", seed=i, origin="evaluated")
    client = HubClient.from_env()
    sync.push(client, replica.data, replica.subs, reported=True, demo=True)
    return client


def repo_files(hub: FakeHub) -> dict[str, bytes]:
    return dict(hub.repo(REPO_ID).files() or {})


def test_boot_with_an_empty_disk_pulls_every_run(fake_hub: FakeHub, replica) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=3)
    assert len(run_ids(a.data)) == 7
    files = repo_files(fake_hub)
    assert set(repo_runs(fake_hub)) == run_ids(a.data)
    assert "README.md" in files and "reported/qags_paper.csv" in files
    # tables and shards, not a folder per run: files grow with benchmarks, not runs
    assert not any(p.startswith("runs/") for p in files)
    shards = sorted(p for p in files if p.startswith("shards/"))
    assert [p.split("/")[2].split("-")[0] for p in shards] == ["labels", "predictions"]
    assert json.loads(files["manifest.json"])["layout_version"] == 2
    results = repo_table(fake_hub, "tables/results.parquet")
    assert {r["run_id"] for r in results} == run_ids(a.data)
    # the Parquet files went up as LFS objects, as on the Hub
    assert fake_hub.count("POST", "/info/lfs/objects/batch") >= 1
    assert len(fake_hub.lfs) == sum(1 for p in files if p.endswith(".parquet"))

    shutil.rmtree(b.data)  # nothing at all on disk
    before = len(fake_hub.requests)
    rep = sync.pull(client, b.data, b.subs)
    assert rep.pulled["runs"] == 7 and rep.pulled["benchmarks"] == 1 and not rep.skipped
    # head, tree, manifest, runs and submissions tables, the benchmark (2 files), 8 reported
    # tables and the two shards: whatever the number of runs
    assert len(fake_hub.requests) - before <= 20
    assert run_ids(b.data) == run_ids(a.data)
    assert ingested.names(b.data) == ["demo"]
    assert (b.data / "reported" / "qags_paper.csv").read_bytes() == files["reported/qags_paper.csv"]
    for rid in run_ids(a.data):
        da, db = a.data / "runs" / rid, b.data / "runs" / rid
        assert runs.read_record(db) == runs.read_record(da)
        for read in (runs.read_predictions, runs.read_labels):  # the same rows and values
            pd.testing.assert_frame_equal(read(db), read(da), check_dtype=False)
    assert not (b.data / "_staging").exists() or not any((b.data / "_staging").iterdir())

    # in step: a second pull downloads nothing (one request: the head), status says so
    gets, before = fake_hub.count("GET", "/resolve/"), len(fake_hub.requests)
    again = sync.pull(client, b.data, b.subs)
    assert again.summary() == "nothing to do"
    assert fake_hub.count("GET", "/resolve/") == gets
    assert len(fake_hub.requests) - before == 1
    plan = sync.status(client, b.data, b.subs)
    assert plan.inbox() == 0 and plan.outbox() == 0


def test_the_built_in_demo_is_not_published_unless_asked(fake_hub: FakeHub, replica) -> None:
    a = replica("a")
    build_demo_root(a.data, reported=False)
    client = HubClient.from_env()
    rep = sync.push(client, a.data, a.subs)
    assert rep.pushed["runs pushed"] == 0 and rep.pushed["benchmarks pushed"] == 0
    assert not any(p.startswith(("shards/", "benchmarks/")) for p in repo_files(fake_hub))
    assert repo_runs(fake_hub) == {}


def _submit(r: Replica, seed: int, monkeypatch: pytest.MonkeyPatch) -> service.SubmitResult:
    monkeypatch.setenv("FACTBOARD_DATA", str(r.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(r.subs))
    res = service.submit(
        predictions_csv(seed),
        "preds.csv",
        service.SubmissionMeta(
            benchmark="demo", model_name=f"Submitted {seed}", email="private@example.org"
        ),
        data_root=r.data,
        submissions_root=r.subs,
        resamples=50,
        submitter="client:0123456789abcdef01234567",
    )
    assert res.ok, res.problems
    return res


def test_a_submission_survives_a_restart_with_a_wiped_root(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = replica("a")
    seed(a, extra=0)
    monkeypatch.setenv("FACTBOARD_HUB_POLL", "0.2")
    monkeypatch.setenv("FACTBOARD_HUB_PUSH_EVERY", "0.05")
    try:
        assert background.start(a.data, a.subs) is None  # boots: pulls, nothing to push
        res = _submit(a, 1, monkeypatch)
        assert res.run_id
        background.start(a.data, a.subs)  # the page reruns after the submission: push soon
        # the run and then the scored record (a push may fall between the two writes)
        deadline = time.monotonic() + 20
        while res.run_id not in repo_runs(fake_hub) or res.submission_id not in repo_records(
            fake_hub
        ):
            assert time.monotonic() < deadline, "the submission was not pushed"
            time.sleep(0.05)
    finally:
        background.stop_all()

    # the Space restarts on a fresh disk
    shutil.rmtree(a.data.parent)
    try:
        assert background.start(a.data, a.subs) is None
    finally:
        background.stop_all()
    assert res.run_id in run_ids(a.data)
    rec = json.loads((a.subs / "records" / f"{res.submission_id}.json").read_text())
    assert rec["status"] == "scored" and rec["run_id"] == res.run_id

    # the e-mail and the raw upload never reached the repo
    files = repo_files(fake_hub)
    assert not any(b"private@example.org" in data for data in files.values())
    assert not any(b"0123456789abcdef01234567" in data for data in files.values())
    assert not any("upload" in p for p in files)
    assert repo_records(fake_hub)[res.submission_id]["status"] == "scored"
    # and the same file submitted again on the new disk is still a duplicate
    again = service.submit(
        predictions_csv(1),
        "preds.csv",
        service.SubmissionMeta(benchmark="demo", model_name="Another name"),
        data_root=a.data,
        submissions_root=a.subs,
        resamples=50,
    )
    assert again.status == "rejected" and "duplicate" in again.problems[0]


def test_the_app_boot_shows_packed_runs_then_writes_them_as_folders(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's start-up pull keeps the checked runs in packs: the first page's board has
    them all; a tick later they are run folders, and nothing is pushed back for them."""
    from evaluator.store import pulled
    from explorer.store import Store

    a, b = replica("a"), replica("b")
    seed(a)
    want = run_ids(a.data)
    commits = len(fake_hub.repo(REPO_ID).commits)
    monkeypatch.setenv("FACTBOARD_HUB_POLL", "60")
    monkeypatch.setenv("FACTBOARD_HUB_PUSH_EVERY", "0.05")
    monkeypatch.setattr(runs, "materialize", _slowed(runs.materialize))
    try:
        assert background.start(b.data, b.subs) is None  # the first sync is done
        store = Store(b.data, snapshot=False)
        store.refresh()
        assert set(store._runs) == want  # every run on the board, packed or written
        deadline = time.monotonic() + 20
        while pulled.packs(b.data):
            assert time.monotonic() < deadline, "the packed runs were not written"
            time.sleep(0.05)
    finally:
        background.stop_all()
    assert {p.name for p in (b.data / "runs").iterdir()} == want
    assert run_ids(b.data) == want
    assert len(fake_hub.repo(REPO_ID).commits) == commits  # nothing pushed back


def _slowed(materialize: Callable[..., int]) -> Callable[..., int]:
    """materialize, a little late: the first page's look finds the packs still there."""

    def slow(root: Path | None = None, run_ids: Iterable[str] | None = None) -> int:
        if run_ids is None:
            time.sleep(0.3)
        return materialize(root, run_ids)

    return slow


def test_unpushed_items_left_by_a_crash_are_found_on_the_next_start(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = replica("a")
    client = seed(a, extra=0)
    res = _submit(a, 2, monkeypatch)  # written locally; the process "dies" before any push
    plan = sync.status(client, a.data, a.subs)
    assert plan.push_runs == [res.run_id] and list(plan.push_records) == [res.submission_id]
    rep = sync.push(client, a.data, a.subs)
    assert rep.pushed["runs pushed"] == 1 and rep.pushed["submission records pushed"] == 1
    assert sync.status(client, a.data, a.subs).outbox() == 0


def test_hide_and_delete_propagate_to_a_second_replica(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=2)
    sync.pull(client, b.data, b.subs)
    ids = sorted(run_ids(a.data))
    hide, delete = ids[0], ids[1]
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", ADMIN)
    moderation.moderate("hide", hide, ADMIN, a.data, a.subs)
    moderation.moderate("delete", delete, ADMIN, a.data, a.subs)
    rep = sync.push(client, a.data, a.subs)
    assert rep.pushed["moderation actions pushed"] == 2
    rows = repo_runs(fake_hub, deleted=True)
    assert rows[delete]["deleted"] and rows[delete]["run_json"] is None
    assert delete not in {r["run_id"] for r in repo_table(fake_hub, "tables/results.parquet")}
    assert rows[hide]["hidden"] and json.loads(rows[hide]["run_json"])["hidden"] is True
    assert {
        r["hidden"] for r in repo_table(fake_hub, "tables/results.parquet") if r["run_id"] == hide
    } == {True}

    sync.pull(client, b.data, b.subs)
    assert delete not in run_ids(b.data)
    assert runs.read_record(b.data / "runs" / hide).hidden
    assert run_ids(b.data, hidden=False) == run_ids(a.data, hidden=False)
    # b has nothing to push back: the deleted run stays deleted
    assert sync.status(client, b.data, b.subs).outbox() == 0
    sync.push(client, b.data, b.subs)
    assert delete not in repo_runs(fake_hub)

    # a later "show" on b wins over the earlier "hide" from a
    time.sleep(1.1)  # moderation times have one-second resolution
    moderation.moderate("show", hide, ADMIN, b.data, b.subs)
    sync.push(client, b.data, b.subs)
    sync.pull(client, a.data, a.subs)
    assert not runs.read_record(a.data / "runs" / hide).hidden


def test_every_eval_ever_records_are_exported_on_demand_not_stored_per_run(
    fake_hub: FakeHub,
    replica,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evaluator.interop import eee

    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    assert not any(p.startswith("eee/") for p in repo_files(fake_hub))
    # a replica that pulled the repo exports valid records for every run
    sync.pull(client, b.data, b.subs)
    out = tmp_path / "eee"
    monkeypatch.setenv("FACTBOARD_DATA", str(b.data))
    rc = main(["export", "--format", "eee", "-o", str(out)])
    capsys.readouterr()
    assert rc == 0
    records = [json.loads(f.read_text()) for f in out.rglob("*.json")]
    assert len(records) == len(run_ids(b.data, hidden=False))
    assert all(eee.problems(eee.record_validator(), r) == [] for r in records)


def test_503s_are_retried_with_backoff(fake_hub: FakeHub, replica) -> None:
    a = replica("a")
    client = seed(a, extra=0)
    fake_hub.fail_next(2, 503, "/revision/")
    fake_hub.fail_next(1, 503, "/resolve/")
    fake_hub.fail_next(1, 503, "/commit/")
    add_run(a.data, "demo", "After the outage", origin="submitted")
    rep = sync.push(client, a.data, a.subs)
    assert rep.pushed["runs pushed"] == 1
    assert fake_hub.count("GET", "/revision/", 503) == 2
    assert fake_hub.count("POST", "/commit/", 503) == 1
    b = replica("b")
    sync.pull(client, b.data, b.subs)
    assert run_ids(b.data) == run_ids(a.data)


def test_a_hub_that_stays_down_is_a_clear_error(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOARD_HUB_RETRIES", "3")
    fake_hub.fail_next(100, 503, "/revision/")
    with pytest.raises(HubUnavailable, match="503"):
        HubClient.from_env().head()
    assert fake_hub.count("GET", "/revision/", 503) == 3


@pytest.mark.parametrize(
    ("token", "words"),
    [("hf_wrongtokenCCCCCCCCCCCCCC", "401"), (READ_TOKEN, "cannot write")],
)
def test_wrong_or_read_only_tokens_are_clear_errors_never_printed(
    fake_hub: FakeHub,
    replica,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    token: str,
    words: str,
) -> None:
    a = replica("a")
    seed(a, extra=1)
    monkeypatch.setenv("FACTBOARD_DATA", str(a.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(a.subs))
    add_run(a.data, "demo", "Unpublished", origin="submitted")
    monkeypatch.setenv("HF_TOKEN", token)
    with pytest.raises(HubAuthError, match=words):
        sync.push(HubClient.from_env(), a.data, a.subs)
    refused = sum(1 for r in fake_hub.requests if r[2] in (401, 403))
    capsys.readouterr()
    assert main(["hub", "push"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "HF_TOKEN" in err and "Traceback" not in err
    assert token not in err and WRITE_TOKEN not in err
    # a 401/403 is not retried: one refusal for creating the repo (exist_ok), one for the write
    assert sum(1 for r in fake_hub.requests if r[2] in (401, 403)) - refused <= 2


def test_cli_pull_push_status(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = replica("a"), replica("b")
    seed(a, extra=1)
    monkeypatch.setenv("FACTBOARD_DATA", str(b.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(b.subs))
    assert main(["hub", "status"]) == 0
    out = capsys.readouterr().out
    assert "differs" in out and "runs to pull: 5" in out
    assert main(["hub", "pull"]) == 0
    assert "5 runs" in capsys.readouterr().out
    add_run(b.data, "demo", "From replica b", origin="submitted")
    assert main(["hub", "push"]) == 0
    assert "1 run pushed" in capsys.readouterr().out
    assert main(["hub", "status"]) == 0
    assert "in step" in capsys.readouterr().out
    assert WRITE_TOKEN not in json.dumps([p for p in repo_files(fake_hub)])


def test_rows_and_names_from_the_repo_that_fail_a_check_are_skipped_and_listed(
    fake_hub: FakeHub, replica
) -> None:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from evaluator.hub import tables as T

    a, b = replica("a"), replica("b")
    client = seed(a, extra=0)
    rows = list(repo_runs(fake_hub).values())
    good = rows[0]
    bad = [
        {**good, "run_id": ".sneaky"},
        {**good, "run_id": "../evil"},
        {**good, "run_id": "demo-wrong-folder-name", "shard": good["shard"]},  # run_json's id
        {**good, "run_id": "demo-no-shard-0000", "shard": "missing"},
        {**good, "run_id": "demo-not-json-0000", "run_json": "{not json"},
    ]
    table = pa.Table.from_pylist(rows + bad, schema=T.RUNS_SCHEMA)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    fake_hub.put(
        REPO_ID,
        {
            "tables/runs.parquet": sink.getvalue(),
            "queue/.job.json": b"{}",
            "benchmarks/.b/benchmark.json": b"{}",
            "benchmarks/.b/samples.parquet": b"x",
        },
    )
    rep = sync.pull(client, b.data, b.subs)
    assert run_ids(b.data) == run_ids(a.data)
    assert not any(p.name.startswith(".") for p in (b.data / "runs").iterdir())
    assert not (b.data / "benchmarks" / ".b").exists()
    said = "\n".join(rep.skipped)
    for rid in (".sneaky", "../evil", "demo-wrong-folder-name", "demo-no-shard", "demo-not-json"):
        assert rid in said, said
    # the pull went on: b publishes its own run after the bad rows
    add_run(b.data, "demo", "Published after bad rows", origin="submitted")
    pulled, pushed = sync.sync(client, b.data, b.subs)
    assert pushed is not None and pushed.pushed["runs pushed"] == 1


def test_the_token_never_reaches_the_disk_or_the_repo(
    fake_hub: FakeHub, replica, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    _submit(a, 7, monkeypatch)
    sync.push(client, a.data, a.subs)
    sync.pull(client, b.data, b.subs)
    assert fake_hub.auth_headers  # it was sent, as a header
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert WRITE_TOKEN.encode() not in f.read_bytes(), f
    assert not any(WRITE_TOKEN.encode() in v for v in repo_files(fake_hub).values())
    assert WRITE_TOKEN not in repr(client.config)


def test_a_re_ingested_benchmark_travels_and_the_newer_one_wins(fake_hub: FakeHub, replica) -> None:
    a, b = replica("a"), replica("b")
    client = seed(a, extra=0)
    sync.pull(client, b.data, b.subs)
    meta_file = a.data / "benchmarks" / "demo" / "benchmark.json"
    meta = json.loads(meta_file.read_text())
    meta["ingested_at"] = "2999-01-01T00:00:00+00:00"
    meta_file.write_text(json.dumps(meta))
    # b's copy is older: b would pull it, never push it
    plan_b = sync.status(client, b.data, b.subs)
    assert plan_b.push_benchmarks == []
    rep = sync.push(client, a.data, a.subs, demo=True)  # (the demo is published only so)
    assert rep.pushed["benchmarks pushed"] == 1
    assert sync.status(client, b.data, b.subs).pull_benchmarks == ["demo"]
    sync.pull(client, b.data, b.subs)
    assert (
        b.data / "benchmarks" / "demo" / "benchmark.json"
    ).read_bytes() == meta_file.read_bytes()
    assert ingested.names(b.data) == ["demo"]
    assert sync.status(client, b.data, b.subs).inbox() == 0


def test_a_refused_push_backs_off_and_goes_through_once_the_token_is_fixed(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = replica("a")
    seed(a, extra=0)
    made = add_run(a.data, "demo", "Kept until the token is fixed", origin="submitted").name
    monkeypatch.setenv("HF_TOKEN", READ_TOKEN)
    monkeypatch.setenv("FACTBOARD_HUB_POLL", "30")
    monkeypatch.setenv("FACTBOARD_HUB_PUSH_EVERY", "0.02")
    try:
        note = background.start(a.data, a.subs)
        assert note and "refused this Space's token" in note and READ_TOKEN not in note
        time.sleep(1.5)
        # not one try per tick (75 ticks): 1 s, then 2 s between tries
        assert 1 <= fake_hub.count("POST", f"/api/datasets/{REPO_ID}/", 403) <= 2
        fake_hub.tokens[READ_TOKEN] = "write"  # the maintainer fixes the token's rights
        deadline = time.monotonic() + 10
        while made not in repo_runs(fake_hub):
            assert time.monotonic() < deadline, "never published after the fix"
            time.sleep(0.05)
        # the notice goes once the sync that published has finished (just after its commit)
        while background.start(a.data, a.subs) is not None:
            assert time.monotonic() < deadline, "the notice stayed after the fix"
            time.sleep(0.05)
    finally:
        background.stop_all()


def test_a_missing_repo_or_file_says_which(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.hub.client import HubError

    client = HubClient.from_env()
    with pytest.raises(HubError, match="not in factboard/results"):
        client.read("tables/nope.parquet", client.head())
    monkeypatch.setenv("FACTBOARD_HUB_REPO", "factboard/no-such-repo")
    with pytest.raises(HubError, match="is FACTBOARD_HUB_REPO right"):
        HubClient.from_env().head()
    monkeypatch.setenv("FACTBOARD_HUB_REPO", "not-a-repo-id")
    with pytest.raises(HubError, match="owner/name"):
        HubClient.from_env()


def test_a_secret_in_the_repo_is_redacted_on_the_replica_that_pulls_it(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    a, b = replica("a"), replica("b")
    client = seed(a, extra=1)
    secret = "this-replicas-own-secret-0123456789"
    files = repo_files(fake_hub)
    # the repo's rows carry b's secret (pasted by someone): in a run.json and in explanations
    table = pq.read_table(io.BytesIO(files["tables/runs.parquet"]))
    texts = table["run_json"].to_pylist()
    body = json.loads(texts[0])
    body["model"]["description"] = f"trained with {secret}"
    texts[0] = json.dumps(body)
    table = table.set_column(
        table.schema.get_field_index("run_json"), "run_json", pa.array(texts, pa.string())
    )
    shard = next(p for p in files if p.startswith("shards/demo/predictions-"))
    preds = pq.read_table(io.BytesIO(files[shard]))
    preds = preds.set_column(
        preds.schema.get_field_index("explanation"),
        "explanation",
        pa.array([f"as {secret} says"] * len(preds), pa.string()),
    )

    def parquet(t: pa.Table) -> bytes:
        sink = io.BytesIO()
        pq.write_table(t, sink)
        return sink.getvalue()

    fake_hub.put(REPO_ID, {"tables/runs.parquet": parquet(table), shard: parquet(preds)})
    monkeypatch.setenv("FACTBOARD_JUDGE_API_KEY", secret)
    rep = sync.pull(client, b.data, b.subs)
    assert not rep.skipped and run_ids(b.data) == run_ids(a.data)
    for f in b.data.rglob("*"):
        if f.is_file() and "_hub" not in f.parts:  # _hub: the repo's own bytes, kept as a cache
            assert secret.encode() not in f.read_bytes(), f
    got = runs.read_predictions(b.data / "runs" / table["run_id"][0].as_py())
    assert got["explanation"].str.contains("[redacted]", regex=False).all()
