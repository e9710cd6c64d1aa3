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
from pathlib import Path

from evaluator.core.errors import FactBoardError
from evaluator.core.types import RunRecord
from evaluator.store import runs
from evaluator.submissions.records import read_submission, root_dir, save_record, upload_path

MIN_ADMIN_TOKEN_CHARS = 16


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
    listing = runs.list_runs(data_root, include_hidden=True, include_superseded=True).runs
    out = [run_id]
    changed = True
    while changed:
        changed = False
        for r in listing:
            if r.supersedes in out and r.run_id not in out:
                out.append(r.run_id)
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
    if action not in ("hide", "show", "delete"):
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
        fh.write(json.dumps({"at": runs.now_iso(), "action": action, "runs": changed}) + "\n")
    return changed


def submitted_runs(data_root: Path | None = None) -> list[RunRecord]:
    """Every submitted run, hidden ones included (for the maintainers)."""
    listing = runs.list_runs(data_root, include_hidden=True, include_superseded=True)
    return [r for r in listing.runs if r.origin == "submitted"]
