"""Submissions to a hosted board by pull request, through the fake Hub over HTTP: an author with
a read token opens a pull request that adds one inbox entry (from Python and from the command
line); the board's replica, holding the write token, submits it through the submission service,
comments with the outcome and closes the pull request, never merging it; claims kept in the
results repo stop two replicas (or a restarted one) from submitting one entry twice."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import evaluator
from evaluator.cli.main import main
from evaluator.core.errors import FactBoardError
from evaluator.hub import inbox, sync
from evaluator.hub.client import HubClient, HubConfig
from evaluator.store import runs
from evaluator.submissions import service
from tests.hub.conftest import REPO_ID, WRITE_TOKEN, Replica
from tests.support.fake_hub import FakeHub
from tests.support.testdata import build_demo_root

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")

AUTHOR_TOKEN = "hf_authortokenCCCCCCCCCCCCCCCC"


def overlap(documents: list[str], summaries: list[str]) -> list[float]:
    """A detector: the share of a summary's words that are in its document."""
    out = []
    for d, s in zip(documents, summaries, strict=True):
        words = s.lower().split()
        out.append(sum(w in d.lower() for w in words) / max(1, len(words)))
    return out


@pytest.fixture
def board(fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch):
    """The board's replica (in step with the results repo, its client holding the write token)
    and an author's machine (the demo benchmark, a read token of the author's own)."""
    fake_hub.tokens[AUTHOR_TOKEN] = "read"
    fake_hub.users.update({AUTHOR_TOKEN: "author", WRITE_TOKEN: "factboard-bot"})
    space, author = replica("space"), replica("author")
    build_demo_root(space.data)
    build_demo_root(author.data, reported=False)
    client = HubClient(HubConfig(REPO_ID, WRITE_TOKEN, fake_hub.url))
    sync.push(client, space.data, space.subs, reported=True, demo=True)
    monkeypatch.setenv("HF_TOKEN", AUTHOR_TOKEN)  # this process is the author's
    for k, v in author.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("FACTBOARD_CACHE", str(author.data.parent / "cache"))
    return client, space, author


def _pr(hub: FakeHub, num: int) -> Any:
    return hub.repo(REPO_ID).discussions[num]


def _comments(hub: FakeHub, num: int) -> list[str]:
    """The comments on a pull request by others than its author (the board's)."""
    pr = _pr(hub, num)
    return [
        e["data"]["latest"]["raw"]
        for e in pr.events
        if e["type"] == "comment" and e["author"]["name"] != pr.author
    ]


def _runs(r: Replica) -> dict[str, Any]:
    return {rec.run_id: rec for rec in runs.list_runs(r.data).runs}


def _process(client: HubClient, r: Replica, me: str = "replica-a") -> inbox.InboxReport:
    return inbox.process(client, r.data, r.subs, resamples=50, me=me)


def test_an_author_submits_from_python_and_the_board_scores_comments_and_closes(
    board, fake_hub: FakeHub, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, space, author = board
    monkeypatch.setenv("SPACE_HOST", "factboard-board.hf.space")  # the Space says its address
    before = set(_runs(space))
    result = evaluator.evaluate(
        overlap,
        "demo",
        split="test",
        root=author.data,
        progress=False,
        resamples=50,
        submit={"benchmark": "demo", "model_name": "Inbox overlap", "hub": REPO_ID},
    )
    opened = result.submission
    assert isinstance(opened, inbox.Opened) and opened.num == 1
    assert opened.url.endswith("/datasets/factboard/results/discussions/1")
    pr = _pr(fake_hub, 1)
    assert pr.is_pr and pr.author == "author" and pr.status == "open"
    assert set(pr.changed()) == {
        f"inbox/{opened.entry}/submission.json",
        f"inbox/{opened.entry}/predictions.csv",
    }
    entry = json.loads(pr.files()[f"inbox/{opened.entry}/submission.json"])
    assert entry == {"format": 1, "benchmark": "demo", "model_name": "Inbox overlap"} | {
        k: entry[k] for k in ("kind", "threshold_policy")
    }
    # the author's token is nowhere in the pull request
    shown = json.dumps([pr.title, pr.events]) + "".join(
        b.decode("utf-8", "replace") for b in pr.files().values()
    )
    assert AUTHOR_TOKEN not in shown and WRITE_TOKEN not in shown
    assert "inbox/claims.json" not in (fake_hub.repo(REPO_ID).files() or {})  # main untouched

    rep = _process(client, space)
    [(num, outcome)] = rep.handled
    assert num == 1 and outcome.status == "scored", outcome
    new = set(_runs(space)) - before
    assert new == {outcome.run_id}
    rec = _runs(space)[str(outcome.run_id)]
    assert rec.origin == "submitted" and rec.model.name == "Inbox overlap"
    # the pull request is closed (never merged) with a comment naming the run
    assert pr.status == "closed"
    [comment] = _comments(fake_hub, 1)
    assert str(outcome.run_id) in comment
    link = (
        "https://factboard-board.hf.space/leaderboard?benchmark=demo&slice=overall&q=Inbox+overlap"
    )
    assert outcome.link == link and link in comment
    assert f"inbox/{opened.entry}" not in json.dumps(list(fake_hub.repo(REPO_ID).files() or {}))
    # the quota counted the pull request's author
    [record] = [json.loads(p.read_text()) for p in (space.subs / "records").glob("*.json")]
    assert record["submitter"] == "hf:author"
    # the next push publishes the run; a second pass finds nothing to do
    sync.push(client, space.data, space.subs)
    assert outcome.run_id in {r["run_id"] for r in _repo_runs(fake_hub)}
    assert _process(client, space).handled == []
    # the author reads the outcome later
    status = inbox.read_status(1, REPO_ID)
    assert status.state == "closed" and status.outcome == outcome
    assert main(["submit", "--status", "1", "--hub", REPO_ID]) == 0
    assert f"run {outcome.run_id} is on the board" in capsys.readouterr().out


def _repo_runs(hub: FakeHub) -> list[dict[str, Any]]:
    from tests.hub.conftest import repo_table

    return repo_table(hub, "tables/runs.parquet")


def test_a_bad_file_from_the_command_line_gets_a_comment_naming_the_problem_and_no_run(
    board, fake_hub: FakeHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client, space, author = board
    s = pd_samples(author)
    rows = ["sample_id,label"] + [f"{sid},1" for sid in s]
    rows[2] = f"{s[1]},maybe"  # line 3 of the file
    f = tmp_path / "preds.csv"
    f.write_text("\n".join(rows) + "\n")
    before = set(_runs(space))
    code = main(
        ["submit", str(f), "--hub", REPO_ID, "--benchmark", "demo", "--model-name", "Broken"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "pull request #1 opened" in out and "--status 1" in out
    rep = _process(client, space)
    [(_, outcome)] = rep.handled
    assert outcome.status == "rejected" and outcome.run_id is None
    [problem] = outcome.problems
    assert "predictions.csv: line 3" in problem and "'maybe'" in problem
    assert set(_runs(space)) == before
    [comment] = _comments(fake_hub, 1)
    assert "nothing was stored" in comment and "predictions.csv: line 3" in comment
    assert _pr(fake_hub, 1).status == "closed"
    assert main(["submit", "--status", "1", "--hub", REPO_ID]) == 1
    assert "line 3" in capsys.readouterr().out


def pd_samples(r: Replica) -> list[str]:
    from evaluator.store import ingested

    s = ingested.load_samples("demo", r.data)
    return sorted(s.loc[s["split"] == "test", "sample_id"])


def _open_raw(hub: FakeHub, files: dict[str, bytes]) -> int:
    """A pull request made by hand with the author's token (what a hostile author can do)."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=hub.url, token=AUTHOR_TOKEN)
    info = api.create_commit(
        REPO_ID,
        [CommitOperationAdd(path_in_repo=p, path_or_fileobj=b) for p, b in files.items()],
        commit_message="by hand",
        repo_type="dataset",
        create_pr=True,
    )
    assert info.pr_num is not None
    return int(info.pr_num)


def _entry(author: Replica, name: str) -> dict[str, bytes]:
    """An entry whose labels follow from its model's name (two names, two files)."""
    import hashlib

    ids = pd_samples(author)
    bits = hashlib.sha256(name.encode()).digest()
    csv = "sample_id,label\n" + "".join(
        f"{sid},{bits[i % len(bits)] >> (i // len(bits)) % 8 & 1}\n" for i, sid in enumerate(ids)
    )
    meta = {"format": 1, "benchmark": "demo", "model_name": name}
    return {
        "inbox/e1/submission.json": json.dumps(meta).encode(),
        "inbox/e1/predictions.csv": csv.encode(),
    }


def test_a_path_outside_the_inbox_or_an_oversized_file_is_refused_unread(
    board, fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, space, author = board
    before = set(_runs(space))
    main_files = dict(fake_hub.repo(REPO_ID).files() or {})
    outside = _open_raw(fake_hub, {**_entry(author, "Sneaky"), "tables/runs.parquet": b"PAR1"})
    big = _open_raw(fake_hub, _entry(author, "Large"))
    other = _open_raw(fake_hub, {"README.md": b"---\nlicense: mit\n---\nA maintainer's edit\n"})
    from evaluator.submissions import validation

    monkeypatch.setattr(validation, "MAX_BYTES", 100)
    rep = _process(client, space)
    got = dict(rep.handled)
    assert got[outside].status == "rejected"
    assert "tables/runs.parquet: outside the inbox" in got[outside].problems[0]
    assert got[big].status == "rejected"
    assert "inbox/e1/predictions.csv" in got[big].problems[0]
    assert "over the" in got[big].problems[0] and "not read" in got[big].problems[0]
    assert fake_hub.count("GET", "predictions.csv") == 0  # neither file was downloaded
    assert set(_runs(space)) == before
    assert {_pr(fake_hub, n).status for n in (outside, big)} == {"closed"}
    # a pull request that adds nothing to the inbox is not a submission: left open, unanswered
    assert other not in got and _pr(fake_hub, other).status == "open"
    assert _comments(fake_hub, other) == []
    files = fake_hub.repo(REPO_ID).files() or {}
    assert files["tables/runs.parquet"] == main_files["tables/runs.parquet"]  # never merged


def test_two_replicas_racing_for_one_pull_request_submit_it_once(
    board, fake_hub: FakeHub, replica
) -> None:
    client, space, author = board
    other = replica("other")
    build_demo_root(other.data)
    num = _open_raw(fake_hub, _entry(author, "Raced"))
    clients = {n: HubClient(HubConfig(REPO_ID, WRITE_TOKEN, fake_hub.url)) for n in ("one", "two")}
    # both read the head before either commits its claim: the second commit gets a 412
    barrier = threading.Barrier(2, timeout=20)
    for c in clients.values():
        real = c.commit
        first: list[bool] = []

        def commit_after_both_read(*a: Any, _real: Any = real, _first: Any = first, **k: Any):
            if not _first:
                _first.append(True)
                barrier.wait()
            return _real(*a, **k)

        c.commit = commit_after_both_read  # type: ignore[method-assign]
    reports: dict[str, inbox.InboxReport] = {}
    roots = {"one": space, "two": other}

    def go(name: str) -> None:
        reports[name] = _process(clients[name], roots[name], me=name)

    threads = [threading.Thread(target=go, args=(n,)) for n in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    handled = {n: r.handled for n, r in reports.items() if r.handled}
    assert len(handled) == 1, reports
    assert fake_hub.count("POST", "/commit/", 412) >= 1
    made = [r for r in (space, other) if any(x.model.name == "Raced" for x in _runs(r).values())]
    assert len(made) == 1
    assert len(_comments(fake_hub, num)) == 1 and _pr(fake_hub, num).status == "closed"


def test_an_outcome_recorded_before_a_restart_is_answered_not_submitted_again(
    board, fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, space, author = board
    num = _open_raw(fake_hub, _entry(author, "Restarted"))
    # a replica claimed it, submitted it and recorded the outcome, then died before answering
    state, _ = inbox._claim(client, num, {num}, "old-life")
    assert state == "mine"
    done = inbox.Outcome("scored", "demo-restarted-run", "sub-1")
    inbox._record(client, num, done, "old-life")
    assert _pr(fake_hub, num).status == "open"
    fresh = replica("fresh")  # the restarted Space: an empty disk
    build_demo_root(fresh.data)
    # within the lease, the recording replica may still be answering: left to it
    assert _process(client, fresh, me="new-life").handled == []
    monkeypatch.setenv("FACTBOARD_HUB_INBOX_LEASE", "0.001")  # then it is not
    rep = _process(client, fresh, me="new-life")
    assert rep.handled == [(num, done)]
    assert not (fresh.subs / "records").exists()  # nothing submitted again
    [comment] = _comments(fake_hub, num)
    assert "demo-restarted-run" in comment and _pr(fake_hub, num).status == "closed"
    # a claim held by a live replica is left alone
    monkeypatch.delenv("FACTBOARD_HUB_INBOX_LEASE")
    again = _open_raw(fake_hub, _entry(author, "Held"))
    assert inbox._claim(client, again, {again}, "busy")[0] == "mine"
    assert _process(client, fresh, me="new-life").handled == []
    assert _pr(fake_hub, again).status == "open"


def test_an_entry_never_carries_a_contact_email_and_an_outcome_survives_its_comment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    meta = service.SubmissionMeta(benchmark="demo", model_name="X", email="me@example.org")
    with pytest.raises(FactBoardError, match="e-mail"):
        inbox.entry_files(b"sample_id,label\n", "p.csv", meta)
    # a secret of the environment pasted into a description is redacted from the entry
    monkeypatch.setenv("HF_TOKEN", AUTHOR_TOKEN)
    meta = service.SubmissionMeta(benchmark="demo", model_name="X", description=AUTHOR_TOKEN)
    _, files = inbox.entry_files(b"sample_id,label\n", "p.jsonl", meta)
    assert AUTHOR_TOKEN.encode() not in b"".join(files.values())
    assert sorted(p.rsplit("/", 1)[1] for p in files) == ["predictions.jsonl", "submission.json"]
    # problems that look like the end of an HTML comment do not cut the outcome short
    hostile = inbox.Outcome("rejected", problems=("a --> b", "```"))
    assert inbox.Outcome.from_comment(hostile.comment()) == hostile
    assert inbox.pr_number("https://huggingface.co/datasets/o/r/discussions/12") == 12
    assert inbox.pr_number("#3") == 3
    with pytest.raises(SystemExit) as stop:  # a file needs its benchmark and model name
        main(["submit", "preds.csv", "--hub", REPO_ID])
    assert stop.value.code == 2
    with pytest.raises(FactBoardError, match="give submit= too"):
        evaluator.evaluate(overlap, "demo", hub=REPO_ID)


def test_the_space_s_background_sync_and_hub_sync_take_the_inbox_and_publish_the_runs(
    board, fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaluator.hub.background import Syncer
    from tests.hub.conftest import repo_runs

    client, space, author = board
    first = _open_raw(fake_hub, _entry(author, "Through the Space"))
    syncer = Syncer(client, space.data, space.subs)
    syncer.once(force_pull=True)  # the poll: pull, then the inbox
    assert _pr(fake_hub, first).status == "closed" and syncer.state.inbox is None
    made = [r for r in _runs(space).values() if r.model.name == "Through the Space"]
    assert len(made) == 1
    syncer.once()  # the next tick: the local write is published
    assert made[0].run_id in repo_runs(fake_hub)

    second = _open_raw(fake_hub, _entry(author, "Through hub sync"))
    for k, v in space.env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("HF_TOKEN", WRITE_TOKEN)  # the maintainers' machine
    assert main(["hub", "sync"]) == 0
    out = capsys.readouterr().out
    assert f"inbox: pull request #{second}: scored: run " in out and "pushed to" in out
    names = {r["model"]["name"] for r in _repo_run_records(fake_hub).values()}
    assert {"Through the Space", "Through hub sync"} <= names


def _repo_run_records(hub: FakeHub) -> dict[str, Any]:
    from tests.hub.conftest import repo_run_records

    return repo_run_records(hub)
