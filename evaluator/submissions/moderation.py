"""Moderation of submitted runs: hide, show or delete a run and the runs that supersede it,
allowed only with the maintainer token ($FACTBOARD_ADMIN_TOKEN, at least MIN_ADMIN_TOKEN_CHARS
characters, compared in constant time). Deleting a run deletes its submission's raw upload too.
Every action is appended to
`<submissions root>/moderation.jsonl`.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypedDict

from evaluator.core.errors import FactBoardError
from evaluator.core.types import RunRecord
from evaluator.store import runs
from evaluator.submissions.records import read_submission, root_dir, save_record, upload_path

MIN_ADMIN_TOKEN_CHARS = 16
Action = Literal["hide", "show", "delete"]
ACTIONS: tuple[Action, ...] = ("hide", "show", "delete")


class ModerationError(FactBoardError):
    """Moderation refused: disabled, a wrong token, or an unknown action."""


def moderation_enabled() -> bool:
    return bool(os.environ.get("FACTBOARD_ADMIN_TOKEN"))


def check_admin_token(token: str | None) -> None:
    """Raise ModerationError unless `token` matches $FACTBOARD_ADMIN_TOKEN (constant time)."""
    expected = os.environ.get("FACTBOARD_ADMIN_TOKEN", "")
    if not expected:
        raise ModerationError("moderation is disabled: FACTBOARD_ADMIN_TOKEN is not set")
    if len(expected) < MIN_ADMIN_TOKEN_CHARS:
        raise ModerationError(
            f"moderation is disabled: FACTBOARD_ADMIN_TOKEN is shorter than "
            f"{MIN_ADMIN_TOKEN_CHARS} characters"
        )
    if not hmac.compare_digest((token or "").encode("utf-8"), expected.encode("utf-8")):
        raise ModerationError("wrong maintainer token")


def chain(run_id: str, data_root: Path | None) -> list[str]:
    """The run and every run that supersedes it, directly or through others (moderation and
    a reproduction's outcome apply to them all)."""
    links = runs.links(data_root)  # packed runs included, not written for this
    out = [run_id]
    changed = True
    while changed:
        changed = False
        for rid, supersedes in links.items():
            if supersedes in out and rid not in out:
                out.append(rid)
                changed = True
    return out


def moderate(
    action: str,
    run_id: str,
    token: str | None,
    data_root: Path | None = None,
    submissions_root: Path | None = None,
) -> list[str]:
    """hide | show | delete a run and the runs that supersede it (e.g. its judged copy).
    Returns the run ids changed; every action is appended to submissions/moderation.jsonl."""
    check_admin_token(token)
    if action not in ACTIONS:
        raise ModerationError(f"unknown moderation action {action!r}; known: delete, hide, show")
    runs.find_run(run_id, data_root)
    changed = chain(run_id, data_root)
    root = root_dir(submissions_root)
    for rid in changed:
        rec = runs.read_record(runs.find_run(rid, data_root))
        if action == "delete":
            runs.delete_run(rid, data_root)
            sid = (rec.submission or {}).get("submission_id")
            if sid:
                with contextlib.suppress(FactBoardError, ValueError):
                    sub = read_submission(sid, root)
                    save_record(root, sub, status="deleted")
                # the raw upload goes with the run (a deleted submission keeps no bytes)
                with contextlib.suppress(FactBoardError, OSError):
                    upload_path(sid, root).unlink(missing_ok=True)
        else:
            runs.set_hidden(rid, action == "hide", data_root)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "moderation.jsonl", "a", encoding="utf-8") as fh:
        entry = {"at": runs.now_iso(), "action": action, "runs": changed, "order": ORDER}
        fh.write(json.dumps(entry) + "\n")
    return changed


def submitted_runs(data_root: Path | None = None) -> list[RunRecord]:
    """Every submitted run, hidden ones included (for the maintainers)."""
    listing = runs.list_runs(data_root, include_hidden=True, include_superseded=True)
    return [r for r in listing.runs if r.origin == "submitted"]


# --------------------------------------------------------------------------------------------
# moderation between replicas (evaluator/hub/sync.py)
#
# The results repo's runs table holds each run's latest action. Which action is the latest is the
# repo's commit order, never a date a replica wrote (a clock can be wrong, or set to 2099): a
# local action that this replica has not published yet is newer than anything the repo holds, and
# is published (a tombstone excepted: a delete is final); once published, or when the replica
# acts on a run the repo has since changed, the repo's state is the one to follow. The local log
# stays append-only; `moderation.synced.json` beside it records, per run, the last line of the
# log that has been published. (Entries written before this rule carry no "order": for them, what
# the repo holds with a later date is taken as published after them.)

LOG = "moderation.jsonl"
SYNCED = "moderation.synced.json"
ORDER = "commit"


class LogEntry(TypedDict):
    """A run's latest local action, from the log (a line of moderation.jsonl names the action,
    when, the runs it changed and, since the commit-order rule, "order")."""

    action: Action
    at: str
    line: int  # the line of the log it is on (0-based)
    ordered: bool  # written under the commit-order rule


def log_entries(submissions_root: Path) -> dict[str, LogEntry]:
    """run id -> its latest local action, in the log's order."""
    f = submissions_root / LOG
    out: dict[str, LogEntry] = {}
    if not f.is_file():
        return out
    for n, line in enumerate(f.read_text(encoding="utf-8").splitlines()):
        with contextlib.suppress(ValueError, KeyError, TypeError):
            entry = json.loads(line)
            action = next((a for a in ACTIONS if a == entry["action"]), None)
            if action is None:
                continue
            for rid in entry["runs"]:
                out[str(rid)] = {
                    "action": action,
                    "at": str(entry["at"]),
                    "line": n,
                    "ordered": entry.get("order") == ORDER,
                }
    return out


def _synced(submissions_root: Path) -> dict[str, int]:
    try:
        data = json.loads((submissions_root / SYNCED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): int(v) for k, v in data.items() if isinstance(v, int)}


def mark_published(submissions_root: Path, entries: Mapping[str, Mapping[str, object]]) -> None:
    """Record that these local actions (from `log_entries`) are in the repo now."""
    from evaluator.store import atomic

    if not entries:
        return
    synced = _synced(submissions_root)
    for rid, e in entries.items():
        line = e.get("line")
        if isinstance(line, int):
            synced[rid] = max(synced.get(rid, -1), line)
    submissions_root.mkdir(parents=True, exist_ok=True)
    atomic.write_json(submissions_root / SYNCED, synced)


def plan_sync(
    repo: dict[str, dict[str, str]],
    submissions_root: Path,
    local_runs: set[str],
    needs_apply: Callable[[str, str], bool],
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, str]]]:
    """(actions to publish, actions to apply here) from the repo's latest action per run
    (`repo`: run id -> {"action", "at"}) and the local log. The actions to publish are the
    log's entries (LogEntry) as plain dicts, the shape the hub's plan keeps."""
    mine = log_entries(submissions_root)
    synced = _synced(submissions_root)
    push: dict[str, dict[str, Any]] = {}
    for rid, entry in mine.items():
        theirs = repo.get(rid)
        if entry["line"] <= synced.get(rid, -1):
            continue  # published already: the repo's state is the later one
        if not entry["ordered"] and theirs is not None and entry["at"] <= theirs["at"]:
            continue  # an entry older than this rule, taken as published
        if theirs is not None and theirs["action"] == "delete":
            continue  # a tombstone is final
        if theirs is not None and (theirs["action"], theirs["at"]) == (
            entry["action"],
            entry["at"],
        ):
            continue  # in the repo already (its publication was not recorded)
        if entry["action"] != "delete" and rid not in local_runs:
            continue  # shown/hidden here, deleted by someone else: nothing to say
        push[rid] = dict(entry)
    apply = {
        rid: entry
        for rid, entry in repo.items()
        if rid not in push and needs_apply(rid, entry["action"])
    }
    return push, apply
