"""A replica's copy of the repo's jobs: the pull mirrors each one into the local file queue
(evaluator/jobs/queue.py), in the state it names, so that the Queue page shows it.

A maintainer's cancel or requeue on a replica changes the local copy. It is published when the
repo still holds the copy it was made on (the push is a commit on the head it was computed
from, so a worker's claim in between wins: a running job cannot be cancelled); otherwise the
repo's copy is pulled over it. `hub-mirror.json` in the local queue folder records the blob id
of each job as last mirrored.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
from pathlib import Path

from evaluator.hub import layout as H
from evaluator.hub.client import blob_oid
from evaluator.jobs import queue
from evaluator.store import atomic

MIRROR_FILE = "hub-mirror.json"
MAINTAINER = "by a maintainer"  # the words the file queue's cancel and requeue leave
_MIRROR_LOCK = threading.Lock()


def _mirror_path(sub_root: Path) -> Path:
    return queue.queue_dir(sub_root) / MIRROR_FILE


def mirrored(sub_root: Path) -> dict[str, str]:
    """job id -> blob id of the repo's copy as last mirrored here."""
    try:
        data = json.loads(_mirror_path(sub_root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def remember_mirror(sub_root: Path, job_id: str, data: bytes) -> None:
    with _MIRROR_LOCK:
        seen = mirrored(sub_root)
        seen[job_id] = blob_oid(data)
        with contextlib.suppress(OSError):
            atomic.write_json(_mirror_path(sub_root), seen, fsync=False)


def maintainer_changes(
    sub_root: Path, repo_jobs: dict[str, str], local_jobs: dict[str, tuple[str, Path]]
) -> list[str]:
    """Jobs whose local copy a maintainer changed (cancelled, requeued) since it was mirrored,
    on a repo copy that has not changed since: to publish, not to pull over."""
    seen = mirrored(sub_root)
    out = []
    for j, (state, path) in sorted(local_jobs.items()):
        base = seen.get(j)
        if j not in repo_jobs or base is None or repo_jobs[j] != base:
            continue
        if state not in ("pending", "failed"):
            continue
        try:
            data = path.read_bytes()
            job = json.loads(data)
        except (OSError, ValueError):
            continue
        if blob_oid(data) == base or not isinstance(job, dict):
            continue
        last = (job.get("messages") or [{}])[-1]
        if isinstance(last, dict) and MAINTAINER in str(last.get("text", "")):
            out.append(j)
    return out


def mirror_job(sub_root: Path, job_id: str, data: bytes) -> None:
    """Put the repo's copy of a job into the local file queue, in the state it names."""
    try:
        state = str(json.loads(data).get("status") or "pending")
    except ValueError:
        return
    if state not in queue.STATES or not H.safe(job_id):
        return
    q = queue.queue_dir(sub_root)
    for d in (*queue.STATES, "tmp"):
        (q / d).mkdir(parents=True, exist_ok=True)
    tmp = q / "tmp" / f"{job_id}.{secrets.token_hex(4)}.json"
    tmp.write_bytes(data)
    os.replace(tmp, q / state / f"{job_id}.json")
    remember_mirror(sub_root, job_id, data)
    for other in queue.STATES:
        if other != state:
            (q / other / f"{job_id}.json").unlink(missing_ok=True)
