"""Submissions to a hosted board by pull request: the results repo's inbox.

An author with a Hugging Face token of their own (no write access to the results repo) opens a
pull request on the results repo that adds one entry, `inbox/<entry>/submission.json` (the
benchmark, the model card's fields, the recipe if any: never a token or a contact e-mail) and
`inbox/<entry>/predictions.<csv|tsv|jsonl>` (the prediction file): `open_submission`, which
`evaluator.evaluate(..., submit={..., "hub": REPO})` and `python -m evaluator submit FILE --hub
REPO` call.

A replica with the write token (the Space's background sync, `python -m evaluator hub sync`)
runs `process`: it lists the open pull requests (one request when there is none), claims each
new one, reads its entry at `refs/pr/<n>` with the caps every pulled file has
(evaluator/hub/checks.py) and hands the file to the submission service that a Submit-page upload
goes through (evaluator/submissions/service.py: validation, quotas keyed on the pull request's
author, scoring, recipe). It never merges a pull request (its content is untrusted): it comments
with the outcome (the run id and a link, or every problem, each naming the file) and closes it.
Its next push publishes the run. A pull request that adds nothing under inbox/ is not a
submission and is left alone; one that adds an entry and changes anything else is refused.

Claims: `inbox/claims.json` on main holds {pull request number: {by, at, state, outcome}}. A
replica claims a pull request by a commit made on the head it read (the Hub answers 412 when the
head moved, and the claim is computed again), so two replicas never both submit one; a restarted
Space, whose disk is gone, finds the claim and its outcome there. A claim whose replica died
before recording an outcome is taken over after $FACTBOARD_HUB_INBOX_LEASE seconds (600); an
outcome recorded but not commented within that time (its replica died) is commented and closed
by the next replica that looks, without submitting the entry again. Entries of pull
requests no longer open leave the file with the next claim. `FACTBOARD_HUB_INBOX=0` turns the
inbox off on a replica.

`read_status(n)` gives the author the outcome later: the latest outcome comment of someone other
than the pull request's author (the comment carries its outcome as JSON in an HTML comment).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, TypeVar

from evaluator.core.errors import FactBoardError
from evaluator.hub import layout as H
from evaluator.hub.client import HubAuthError, HubClient, HubError, StaleHead, require_config

if TYPE_CHECKING:
    from huggingface_hub import DiscussionWithDetails

    from evaluator.submissions.service import SubmissionMeta

T = TypeVar("T")

INBOX = "inbox"
CLAIMS = f"{INBOX}/claims.json"
ENTRY_FILE = "submission.json"
PREDICTION_FILES = ("predictions.csv", "predictions.tsv", "predictions.jsonl")
ENTRY_MAX_BYTES = 64 * 1024
FORMAT = 1
DEFAULT_LEASE = 600.0
MAX_RACES = 20
MARK = "<!-- factboard-inbox "
# the entry's fields: SubmissionMeta's, less the contact e-mail (a pull request is public)
TEXT_FIELDS = (
    "benchmark",
    "model_name",
    "kind",
    "org",
    "params",
    "url",
    "description",
    "split",
    "threshold_policy",
)
# a problem of the service that is about the entry's fields, not the prediction file
_META_WORDS = ("model name", "model kind", "organisation", "params", "url", "description")
_ME = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


# --------------------------------------------------------------------------------------------
# what is said on a pull request


class OutcomeJson(TypedDict):
    """An outcome as JSON: in a claim, and in the pull request's comment."""

    status: str
    run_id: str | None
    submission_id: str | None
    problems: list[str]
    link: str | None


class Claim(TypedDict, total=False):
    """One pull request's entry in inbox/claims.json."""

    by: str
    at: float
    state: str  # claimed | done
    outcome: OutcomeJson


@dataclass(frozen=True)
class Outcome:
    """What became of one pull request's entry: "scored" (its run is on the board),
    "rejected" (every problem, nothing stored) or "received" (saved; the worker finishes it)."""

    status: str
    run_id: str | None = None
    submission_id: str | None = None
    problems: tuple[str, ...] = ()
    link: str | None = None

    def to_json(self) -> OutcomeJson:
        return {
            "status": self.status,
            "run_id": self.run_id,
            "submission_id": self.submission_id,
            "problems": list(self.problems),
            "link": self.link,
        }

    @classmethod
    def from_json(cls, d: object) -> Outcome | None:
        if not isinstance(d, Mapping) or not isinstance(d.get("status"), str):
            return None
        probs = d.get("problems")

        def text(key: str) -> str | None:
            v = d.get(key)
            return v if isinstance(v, str) else None

        return cls(
            str(d["status"]),
            text("run_id"),
            text("submission_id"),
            tuple(str(p) for p in probs) if isinstance(probs, list) else (),
            text("link"),
        )

    def lines(self) -> list[str]:
        """The outcome in plain words, one line each."""
        if self.status == "scored":
            where = f" ({self.link})" if self.link else ""
            return [f"scored: run {self.run_id} is on the board{where}"]
        if self.status == "rejected":
            return ["rejected; nothing was stored:", *(f"  - {p}" for p in self.problems)]
        return [f"{self.status}: submission {self.submission_id} is saved and being processed"]

    def comment(self) -> str:
        """The pull request's comment: the outcome for a reader (data-derived text in code
        spans and blocks, never Markdown), then as JSON in an HTML comment."""
        if self.status == "scored":
            head = f"FactBoard scored this submission: run `{self.run_id}` is on the board."
            if self.link:
                head += f" See it: {self.link}"
            body = head
        elif self.status == "rejected":
            items = "\n".join(p.replace("```", "'''") for p in self.problems)
            body = (
                "FactBoard could not take this submission; nothing was stored. What is wrong:\n\n"
                f"```text\n{items}\n```\n\nFix it and open a new pull request."
            )
        else:
            body = (
                f"FactBoard saved this submission (`{self.submission_id}`); it is being "
                "processed and will reach the board with the next sync."
            )
        data = json.dumps(self.to_json(), ensure_ascii=True).replace(">", "\\u003e")
        return (
            f"{body}\n\nThis pull request is closed: entries are never merged.\n\n{MARK}{data} -->"
        )

    @classmethod
    def from_comment(cls, text: str) -> Outcome | None:
        at = text.rfind(MARK)
        if at < 0:
            return None
        raw = text[at + len(MARK) :].rsplit("-->", 1)[0]
        try:
            return cls.from_json(json.loads(raw))
        except ValueError:
            return None


@dataclass(frozen=True)
class Opened:
    """A submission opened as a pull request on the results repo."""

    repo: str
    num: int
    url: str
    entry: str

    @property
    def status(self) -> str:  # as a SubmitResult says it: the board has not scored it yet
        return "opened"

    def lines(self) -> list[str]:
        return [
            f"pull request #{self.num} opened on {self.repo}: {self.url}",
            "the board scores it on its next sync and comments there with the outcome; read it "
            f"with: python -m evaluator submit --status {self.num} --hub {self.repo}",
        ]


@dataclass(frozen=True)
class PullStatus:
    """Where a submission's pull request stands, as its comments say."""

    repo: str
    num: int
    state: str  # open | closed | merged | draft
    author: str
    outcome: Outcome | None

    def lines(self) -> list[str]:
        head = f"pull request #{self.num} on {self.repo} ({self.state}, by {self.author})"
        if self.outcome is not None:
            return [head, *self.outcome.lines()]
        if self.state in ("open", "draft"):
            return [head, "waiting for the board's next sync"]
        return [head, "closed without an outcome from the board"]


# --------------------------------------------------------------------------------------------
# the author's side


def entry_files(data: bytes, filename: str, meta: SubmissionMeta) -> tuple[str, dict[str, bytes]]:
    """The entry a pull request adds: (entry id, {path in the repo: bytes}). Refuses what must
    not go into a public pull request (a contact e-mail) and what the board would refuse
    unread (a file over the size limit, a recipe that is not valid)."""
    from evaluator.core import sanitize
    from evaluator.submissions import recipes
    from evaluator.submissions.validation import MAX_BYTES, MAX_MB

    if meta.email:
        raise FactBoardError(
            "a contact e-mail would be public in the pull request: leave it out (the "
            "maintainers see the pull request's author)"
        )
    if len(data) > MAX_BYTES:
        raise FactBoardError(f"the file is larger than the {MAX_MB} MB limit")
    recipe, problems = recipes.parse_recipe(meta.recipe)
    if problems:
        raise FactBoardError("the recipe is not valid:\n" + "\n".join(f"  - {p}" for p in problems))
    entry: dict[str, object] = {"format": FORMAT}
    for key in TEXT_FIELDS:
        value = getattr(meta, key)
        if value not in (None, ""):
            entry[key] = value
    if meta.threshold is not None:
        entry["threshold"] = meta.threshold
    if recipe is not None:
        entry["recipe"] = recipe.to_json()
    text = sanitize.redact(json.dumps(entry, ensure_ascii=False, indent=1, allow_nan=False))
    eid = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{secrets.token_hex(4)}"
    name = _prediction_name(filename, data)
    return eid, {
        f"{INBOX}/{eid}/{ENTRY_FILE}": (text + "\n").encode(),
        f"{INBOX}/{eid}/{name}": data,
    }


def _prediction_name(filename: str, data: bytes) -> str:
    suffix = Path(filename).suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "predictions.jsonl"
    if suffix == ".tsv":
        return "predictions.tsv"
    if suffix == ".csv":
        return "predictions.csv"
    return (
        "predictions.jsonl"
        if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"
        else ("predictions.csv")
    )


def open_submission(
    data: bytes, filename: str, meta: SubmissionMeta, repo: str | None = None
) -> Opened:
    """Open a pull request on the results repo ($FACTBOARD_HUB_REPO, or `repo`) that adds the
    entry, with the author's own token ($HF_TOKEN: read access is enough)."""
    from huggingface_hub import CommitOperationAdd

    cfg = require_config(repo)
    if not cfg.token:
        raise HubAuthError(
            "set HF_TOKEN to your own Hugging Face token (read access is enough): the "
            "submission is a pull request opened in your name"
        )
    eid, files = entry_files(data, filename, meta)
    client = HubClient(cfg)
    ops = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=b) for p, b in files.items()]
    # tried once: a retry after a lost answer would open a second pull request
    info = client.call(
        "open a pull request on the results repo",
        lambda: client.api.create_commit(
            cfg.repo,
            ops,
            commit_message=f"Submission: {meta.model_name} on {meta.benchmark}"[:200],
            commit_description=(
                "A FactBoard submission. The board's replica scores it, comments with the "
                "outcome and closes this pull request; it is never merged."
            ),
            repo_type="dataset",
            create_pr=True,
        ),
        retry=False,
    )
    if info.pr_num is None or info.pr_url is None:
        raise HubError(f"{cfg.repo}: the Hub opened no pull request")
    return Opened(cfg.repo, int(info.pr_num), str(info.pr_url), eid)


def pr_number(given: str | int) -> int:
    """A pull request's number from its number, `#n`, `refs/pr/n` or its URL."""
    m = re.search(r"(\d+)/*$", str(given).strip())
    if m is None or int(m.group(1)) <= 0:
        raise FactBoardError(f"{given!r} is not a pull request: give its number or its URL")
    return int(m.group(1))


def read_status(pr: str | int, repo: str | None = None) -> PullStatus:
    """What the board said on the pull request (its latest outcome comment by someone other
    than the author), and whether it is open."""
    num = pr_number(pr)
    client = HubClient(require_config(repo))
    d = _details(client, num)
    outcome = None
    for e in d.events:
        content = getattr(e, "content", None)
        if e.type == "comment" and isinstance(content, str) and e.author != d.author:
            outcome = Outcome.from_comment(content) or outcome
    return PullStatus(client.repo, num, d.status, d.author, outcome)


# --------------------------------------------------------------------------------------------
# the replica's side


@dataclass
class InboxReport:
    handled: list[tuple[int, Outcome]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        for n, o in self.handled:
            first, *rest = o.lines()
            out += [f"pull request #{n}: {first}", *rest]
        return out + [f"skipped: {s}" for s in self.skipped]


def enabled() -> bool:
    return os.environ.get("FACTBOARD_HUB_INBOX", "1").strip() not in ("0", "false", "no")


def lease() -> float:
    from evaluator.jobs.queue import env_seconds

    return env_seconds("FACTBOARD_HUB_INBOX_LEASE", DEFAULT_LEASE)


def open_pull_requests(client: HubClient) -> list[int]:
    """The numbers of the results repo's open pull requests (one request per 50)."""
    return client.call(
        "list the results repo's pull requests",
        lambda: sorted(
            d.num
            for d in client.api.get_repo_discussions(
                client.repo,
                repo_type="dataset",
                discussion_type="pull_request",
                discussion_status="open",
            )
        ),
    )


def process(
    client: HubClient,
    data_root: Path | None = None,
    sub_root: Path | None = None,
    *,
    resamples: int = 1000,
    me: str = _ME,
) -> InboxReport:
    """Submit the entry of each open pull request nobody has claimed, comment with the outcome
    and close it (see the module doc). me: this replica's name in a claim (one per process)."""
    rep = InboxReport()
    if not enabled():
        return rep
    live = open_pull_requests(client)
    for num in live:
        if (client.repo, num) in _NOT_OURS:
            continue
        try:
            d = _details(client, num)
            changed = _changed(d.diff or "")
            if changed and not any(p.startswith(f"{INBOX}/") for p in changed):
                _NOT_OURS.add((client.repo, num))  # not a submission: left to the maintainers
                continue
            state, outcome = _claim(client, num, set(live), me)
        except HubAuthError as e:
            rep.skipped.append(f"the inbox needs a token that can write to {client.repo}: {e}")
            return rep
        except HubError as e:
            rep.skipped.append(f"pull request #{num}: {e}")
            continue
        if state == "taken":
            continue
        try:
            if state == "mine":
                outcome = _take(client, d, changed, data_root, sub_root, resamples)
                _record(client, num, outcome, me)
            assert outcome is not None
            _answer(client, d, outcome)
            rep.handled.append((num, outcome))
        except FactBoardError as e:  # the claim lapses, and the entry is read again then
            rep.skipped.append(f"pull request #{num}: {e}")
    return rep


# pull requests that add nothing to the inbox (a maintainer's own change), per repo and number:
# not read again by this process
_NOT_OURS: set[tuple[str, int]] = set()


def _details(client: HubClient, num: int) -> DiscussionWithDetails:
    return client.call(
        f"read pull request #{num}",
        lambda: client.api.get_discussion_details(client.repo, num, repo_type="dataset"),
    )


def _read_claims(client: HubClient, head: str) -> dict[str, Claim]:
    try:
        data = json.loads(client.fetch(CLAIMS, head))
    except HubError as e:
        if "404" in str(e):
            return {}
        raise
    except ValueError:
        return {}  # a corrupt file is written afresh by the next claim
    claims = data.get("claims") if isinstance(data, dict) else None
    out: dict[str, Claim] = {}
    for k, v in (claims if isinstance(claims, dict) else {}).items():
        if not str(k).isdigit() or not isinstance(v, dict):
            continue
        c: Claim = {"by": str(v.get("by", "")), "state": str(v.get("state", ""))}
        at = v.get("at")
        c["at"] = float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0
        outcome = Outcome.from_json(v.get("outcome"))
        if outcome is not None:
            c["outcome"] = outcome.to_json()
        out[str(k)] = c
    return out


def _change_claims(
    client: HubClient, num: int, change: Callable[[dict[str, Claim]], bool]
) -> Claim | None:
    """Apply `change` to the claims on the head it was read from, by a commit on that head
    (computed again when the head moved); returns the pull request's claim as it stands."""
    for _ in range(MAX_RACES):
        head = client.head()
        claims = _read_claims(client, head)
        if not change(claims):
            return claims.get(str(num))
        body = json.dumps({"claims": claims}, indent=1, sort_keys=True) + "\n"
        try:
            client.commit({CLAIMS: body.encode()}, message=f"FactBoard: inbox #{num}", parent=head)
            return claims.get(str(num))
        except StaleHead:
            continue
    raise HubError(f"pull request #{num}: the results repo kept moving while it was claimed")


def _claim(
    client: HubClient, num: int, live: set[int], me: str = _ME
) -> tuple[str, Outcome | None]:
    """("mine", None): claimed here; ("done", outcome): submitted before, to be answered;
    ("taken", None): another replica holds a live claim."""
    now = time.time()
    span = lease()

    def change(claims: dict[str, Claim]) -> bool:
        c = claims.get(str(num))
        if c is not None and c.get("state") == "done":
            return False
        if c is not None and c.get("by") != me and now - c.get("at", 0.0) < span:
            return False
        for k in [k for k in claims if int(k) not in live]:  # closed since: forgotten
            del claims[k]
        claims[str(num)] = {"by": me, "at": now, "state": "claimed"}
        return True

    c: Claim = _change_claims(client, num, change) or {}
    if c.get("state") == "done":
        if c.get("by") != me and now - c.get("at", 0.0) < span:
            return "taken", None  # its replica is answering it now
        return "done", Outcome.from_json(c.get("outcome"))
    return ("mine", None) if c.get("by") == me else ("taken", None)


def _record(client: HubClient, num: int, outcome: Outcome, me: str = _ME) -> None:
    def change(claims: dict[str, Claim]) -> bool:
        claims[str(num)] = {
            "by": me,
            "at": time.time(),
            "state": "done",
            "outcome": outcome.to_json(),
        }
        return True

    _change_claims(client, num, change)


def _answer(client: HubClient, d: DiscussionWithDetails, outcome: Outcome) -> None:
    """Comment with the outcome (unless a comment of ours says it already) and close."""
    num = d.num
    said = any(
        e.type == "comment"
        and e.author != d.author
        and Outcome.from_comment(str(getattr(e, "content", ""))) == outcome
        for e in d.events
    )
    if not said:
        client.call(
            f"comment on pull request #{num}",
            lambda: client.api.comment_discussion(
                client.repo, num, outcome.comment(), repo_type="dataset"
            ),
            retry=False,
        )
    if d.status in ("open", "draft"):
        client.call(
            f"close pull request #{num}",
            lambda: client.api.change_discussion_status(
                client.repo, num, "closed", repo_type="dataset"
            ),
        )


def _take(
    client: HubClient,
    d: DiscussionWithDetails,
    changed: list[str],
    data_root: Path | None,
    sub_root: Path | None,
    resamples: int,
) -> Outcome:
    """Read the pull request's entry, check it, and hand it to the submission service."""
    from evaluator.submissions import quotas, service

    rev = f"refs/pr/{d.num}"
    if not changed:  # no diff to read: the entries its ref holds under inbox/
        changed = [p for p in _sizes(client, rev, INBOX) if p.count("/") == 2]
    entry, problems = _entry_paths(changed)
    if entry is None:
        return Outcome("rejected", problems=tuple(problems))
    sizes = _sizes(client, rev, f"{INBOX}/{entry}")
    meta_path, pred_path = _pick(entry, sizes, problems)
    if problems or meta_path is None or pred_path is None:
        return Outcome("rejected", problems=tuple(problems))
    got: dict[str, bytes] = {}
    for path in (meta_path, pred_path):
        try:
            got[path] = client.fetch(path, rev)
        except HubError as e:
            if "404" not in str(e) and "larger than" not in str(e):
                raise
            return Outcome("rejected", problems=(f"{path}: {e}",))
    meta, problems = _meta(got[meta_path], meta_path)
    if meta is None:
        return Outcome("rejected", problems=tuple(problems))
    res = service.submit(
        got[pred_path],
        pred_path.rsplit("/", 1)[1],
        meta,
        data_root=data_root,
        submissions_root=sub_root,
        resamples=resamples,
        submitter=quotas.submitter_key(d.author),
    )
    if res.status == "rejected":
        where = [f"{meta_path if _about_meta(p) else pred_path}: {p}" for p in res.problems]
        return Outcome("rejected", submission_id=res.submission_id, problems=tuple(where))
    link = board_link(meta.benchmark, meta.model_name) if res.ok else None
    return Outcome(res.status, res.run_id, res.submission_id, link=link)


def _changed(diff: str) -> list[str]:
    """The paths a pull request's diff changes (its `diff --git a/P b/P` headers)."""
    out = []
    for line in diff.splitlines():
        if line.startswith("diff --git a/"):
            a, sep, b = line[len("diff --git a/") :].partition(" b/")
            out.append(b if sep else a)
    return sorted(set(out))


def _entry_paths(changed: list[str]) -> tuple[str | None, list[str]]:
    """The one entry folder the pull request adds, or the problems with what it changes."""
    problems = []
    if not changed:
        problems.append("the pull request changes no file")
    outside = [p for p in changed if not (p.startswith(f"{INBOX}/") and p.count("/") == 2)]
    if outside:
        shown = ", ".join(outside[:10]) + (" ..." if len(outside) > 10 else "")
        problems.append(
            f"{shown}: outside the inbox; a submission adds inbox/<entry>/{ENTRY_FILE} and "
            f"inbox/<entry>/predictions.csv (or .tsv, .jsonl), nothing else"
        )
    entries = sorted({p.split("/")[1] for p in changed if p not in outside})
    if len(entries) > 1:
        problems.append(f"the pull request adds {len(entries)} entries ({', '.join(entries)}); one")
    bad = [e for e in entries if not H.safe(e)]
    if bad:
        problems.append(f"inbox/{bad[0]!r}: not a usable entry name")
    if problems or not entries:
        return None, problems
    return entries[0], []


def _sizes(client: HubClient, rev: str, folder: str) -> dict[str, int]:
    """path -> size of the files under `folder` at `rev`."""

    def listing() -> dict[str, int]:
        return {
            item.path: int(getattr(item, "size", 0) or 0)
            for item in client.api.list_repo_tree(
                client.repo, folder, recursive=True, repo_type="dataset", revision=rev
            )
            if hasattr(item, "size") and getattr(item, "blob_id", None) is not None
        }

    return client.call(f"list {folder}", listing)


def _pick(entry: str, sizes: dict[str, int], problems: list[str]) -> tuple[str | None, str | None]:
    """The entry's submission.json and prediction file, each within its size limit."""
    from evaluator.core.formatting import count
    from evaluator.submissions.validation import MAX_BYTES, MAX_MB

    base = f"{INBOX}/{entry}/"
    names = {p[len(base) :]: n for p, n in sizes.items() if p.startswith(base)}
    extra = sorted(n for n in names if n != ENTRY_FILE and n not in PREDICTION_FILES)
    if extra:
        problems.append(f"{base}{extra[0]}: not a file an entry holds ({ENTRY_FILE}, predictions)")
    preds = [n for n in PREDICTION_FILES if n in names]
    if ENTRY_FILE not in names:
        problems.append(f"{base}{ENTRY_FILE}: missing (the benchmark and the model's name)")
    elif names[ENTRY_FILE] > ENTRY_MAX_BYTES:
        problems.append(
            f"{base}{ENTRY_FILE}: {count(names[ENTRY_FILE])} bytes, over the "
            f"{count(ENTRY_MAX_BYTES)} an entry's description may have; not read"
        )
    if len(preds) != 1:
        problems.append(
            f"{base}: one prediction file (predictions.csv, .tsv or .jsonl), not {len(preds)}"
        )
    elif names[preds[0]] > MAX_BYTES:
        problems.append(
            f"{base}{preds[0]}: {count(names[preds[0]])} bytes, over the {MAX_MB} MB limit of a "
            "prediction file; not read"
        )
    return (
        f"{base}{ENTRY_FILE}" if ENTRY_FILE in names else None,
        f"{base}{preds[0]}" if len(preds) == 1 else None,
    )


def _meta(data: bytes, path: str) -> tuple[SubmissionMeta | None, list[str]]:
    """The entry's submission.json as a SubmissionMeta, or every problem with it."""
    from evaluator.submissions.service import SubmissionMeta

    def constant(token: str) -> object:
        raise ValueError(f"{token} is not a JSON number")

    try:
        d = json.loads(data.decode("utf-8-sig"), parse_constant=constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        return None, [f"{path}: not valid JSON ({str(e)[:200]})"]
    if not isinstance(d, dict):
        return None, [f"{path}: not a JSON object"]
    problems = []
    known = {"format", "recipe", "threshold", *TEXT_FIELDS}
    if "email" in d:
        problems.append(f"{path}: email: a contact e-mail does not belong in a public pull request")
    unknown = sorted(str(k) for k in d if k not in known and k != "email")
    if unknown:
        problems.append(f"{path}: unknown field(s) {', '.join(unknown)[:200]}")
    if d.get("format", FORMAT) != FORMAT:
        problems.append(f"{path}: format {d.get('format')!r}; this board reads format {FORMAT}")
    fields: dict[str, str] = {}
    for key in TEXT_FIELDS:
        v = d.get(key)
        if v is not None and not isinstance(v, str):
            problems.append(f"{path}: {key}: must be text")
        elif v is not None:
            fields[key] = v
    for key in ("benchmark", "model_name"):
        if not fields.get(key):
            problems.append(f"{path}: {key}: required")
    t = d.get("threshold")
    if t is not None and (isinstance(t, bool) or not isinstance(t, int | float)):
        problems.append(f"{path}: threshold: must be a number")
    recipe = d.get("recipe")
    if recipe is not None and not isinstance(recipe, dict):
        problems.append(f"{path}: recipe: must be a JSON object")
    if problems:
        return None, problems
    meta = SubmissionMeta(
        benchmark=fields["benchmark"],
        model_name=fields["model_name"],
        kind=fields.get("kind", "non-llm"),
        org=fields.get("org"),
        params=fields.get("params"),
        url=fields.get("url"),
        description=fields.get("description"),
        split=fields.get("split"),
        threshold_policy=fields.get("threshold_policy", "auto"),
        threshold=float(t) if t is not None else None,
        recipe=recipe,
    )
    return meta, []


def _about_meta(problem: str) -> bool:
    low = problem.lower()
    return low.startswith(_META_WORDS) or low.startswith("recipe")


def board_link(benchmark: str, model_name: str) -> str | None:
    """The board's row of a run, where the board's address is known ($FACTBOARD_PUBLIC_URL,
    or the Space's own $SPACE_HOST)."""
    from urllib.parse import urlencode

    base = os.environ.get("FACTBOARD_PUBLIC_URL", "").strip().rstrip("/")
    host = os.environ.get("SPACE_HOST", "").strip()
    if not base and host:
        base = f"https://{host}"
    if not base:
        return None
    query = urlencode({"benchmark": benchmark, "slice": "overall", "q": model_name})
    return f"{base}/leaderboard?{query}"
