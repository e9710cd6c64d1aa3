"""Pull, push and status between the local data root (immutable run folders) and the results repo
(the source of truth, made of tables: see evaluator/hub/layout.py and docs/ARCHITECTURE.md).

Nothing keeps a list of "things to push": `plan()` compares the local root with the repo's tables
each time, so what a crash left unpushed (a submission scored just before the Space died) is found
and pushed on the next start. Reading the repo costs one request when nothing changed: the head's
commit id; the tree listing and the tables are cached by commit and content id (in memory and
under <data root>/_hub/). The comparison, per kind:

- runs: a local run the runs table lacks is pushed; a live row the local root lacks is pulled: its
  run.json (from the row) and its per-sample rows (from the shard the row names) are checked as
  a local write is, scored again from its predictions, and written as a run folder
  (evaluator.store.runs.write_runs), or, in the app's pulls (defer), kept with the other runs of
  its shard in a pack that the board reads at once and that becomes folders right after
  (evaluator/store/pulled.py). A row or shard that fails a check is skipped and listed in
  the report, never the end of the pull.
- moderation: the local log (<submissions>/moderation.jsonl) against the runs table's
  `moderation`; the later action in the repo's commit order wins, never a date a replica wrote
  (evaluator.submissions.moderation.plan_sync). A delete leaves a tombstone row (no content), so
  every replica deletes its copy on its next pull and nobody pushes it back.
- benchmarks: by benchmark.json; when the two differ the later `ingested_at` wins, and a pulled
  one replaces the local copy only if it passes evaluator.hub.checks.benchmark_problem.
- what fails a check (evaluator/hub/checks.py) is skipped, listed and remembered by content in
  <data root>/_hub/rejected.json, so it is not downloaded again while the repo holds it.
- reported tables: pulled when missing or different; pushed by `hub push` only.
- submission records: terminal records, without the contact e-mail, in the submissions table.
- jobs: a local job the repo lacks is pushed (queued on this replica); jobs in the repo are
  mirrored into the local file queue so the Queue page shows their state. Job state in the repo
  changes only by conditional commits (evaluator/hub/queue.py).

A push is one commit made on the head it was computed from (`parent_commit`): when another
replica or a worker committed in between, the Hub answers 412 and the push is recomputed on the
new head. Its new runs go into one new shard per benchmark and kind.

The layers, each importing only those before it: evaluator/hub/client.py (requests, size caps),
remote.py (the head, its files and the tables as read), rejected.py (what failed, remembered),
checks.py (what is checked), local.py, mirror.py (jobs), plan.py (the comparison), pull.py and
push.py (carrying a plan out), and this module (one pull or push at a time per process), which
the CLI, the app, the worker over the Hub (queue.py) and compaction's callers use.
"""

from __future__ import annotations

import threading
from pathlib import Path

from evaluator.hub.client import HubAuthError, HubClient, HubError
from evaluator.hub.local import Local as Local
from evaluator.hub.local import public_record as public_record
from evaluator.hub.plan import Plan as Plan
from evaluator.hub.plan import Report as Report
from evaluator.hub.plan import plan as plan
from evaluator.hub.pull import pull_plan as _pull
from evaluator.hub.push import build_runs as build_runs
from evaluator.hub.push import compact_at as compact_at
from evaluator.hub.push import push_plan as _push
from evaluator.hub.remote import MAX_RACES as MAX_RACES
from evaluator.hub.remote import Blobs as Blobs
from evaluator.hub.remote import LayoutError as LayoutError
from evaluator.hub.remote import Remote as Remote
from evaluator.hub.remote import RemoteTables as RemoteTables
from evaluator.hub.remote import load_tables as load_tables
from evaluator.hub.remote import snapshot as snapshot

_LOCK = threading.RLock()  # one pull or push at a time per process


def pull(
    client: HubClient,
    data_root: Path | None = None,
    sub_root: Path | None = None,
    jobs: bool = True,
    defer: bool = False,
) -> Report:
    """Bring the local root up to the repo's head (see the module doc); returns what changed.
    defer: pulled runs are kept in packs (see `sync`)."""
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client, cache=local.cache)
        p = plan(client, remote, local, jobs=jobs)
        return _pull(client, remote, local, p, defer)


def push(
    client: HubClient,
    data_root: Path | None = None,
    sub_root: Path | None = None,
    reported: bool = False,
    jobs: bool = True,
    message: str = "FactBoard: publish",
    demo: bool = False,
) -> Report:
    """Publish what the local root has and the repo lacks, in one commit (the built-in demo
    benchmark and its runs only with demo=True)."""
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client, cache=local.cache)
        p = plan(client, remote, local, reported=reported, jobs=jobs, demo=demo)
        return _push(client, remote, local, p, message, reported=reported, jobs=jobs, demo=demo)


def status(client: HubClient, data_root: Path | None = None, sub_root: Path | None = None) -> Plan:
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client, cache=local.cache)
        return plan(client, remote, local, reported=True)


def sync(
    client: HubClient,
    data_root: Path | None = None,
    sub_root: Path | None = None,
    defer: bool = False,
) -> tuple[Report, Report | None]:
    """Pull, then push the outbox, from one snapshot of the repo (what the app does each poll).
    The outbox is computed before the pull, which never adds to it; a failed run or shard in
    the pull is skipped and listed, and the push goes on. defer: pulled runs are kept in
    packs, for the caller to write as folders (evaluator.store.runs.materialize) once the
    board has them (pull_plan)."""
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client, cache=local.cache)
        p = plan(client, remote, local)
        try:
            pulled = _pull(client, remote, local, p, defer)
        except HubError as e:  # what is local is published all the same
            if isinstance(e, HubAuthError):
                raise
            pulled = Report(remote.head, skipped=[*p.problems, f"the pull stopped: {e}"])
        pushed = _push(client, remote, local, p, "FactBoard: publish") if p.outbox() else None
        return pulled, pushed
