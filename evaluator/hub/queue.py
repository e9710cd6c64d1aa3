"""The job queue over the Hub: `python -m evaluator worker --hub`.

Jobs are files in the results repo, `queue/<job_id>.json`, with the same fields as the local file
queue's jobs (evaluator/jobs/queue.py); the app queues them locally and its background push
publishes them (evaluator/hub/sync.py). Every change to a job's state in the repo is a commit made
with `parent_commit` set to the head the change was computed from: when the head moved in between
(another worker claimed, the app published), the Hub answers 412 and the change is recomputed on
the new head. So two workers never both claim one job.

A claim gives the job a lease: {worker, host, pid, token, claimed_at, renewed (epoch s)}. The
worker renews it every lease/3 seconds ($FACTBOARD_HUB_LEASE, default 600 s: renewals are
commits, and the Hub limits commits per hour). A running job whose lease was not renewed in time
is claimed again by the next worker that looks (attempts + 1), or failed once its attempts are
used up. A handler that writes a run derives the run id from the job id
(queue.run_id_for_job) and the worker pulls the repo's runs before running a job, so a job run
twice never makes two runs.

The worker runs each job with the ordinary machinery (evaluator.jobs.worker.execute) on a local
scratch copy of the job under <submissions root>/hub-worker/, then publishes the runs it wrote
and the job's final state (only while the lease is still its own).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.hub import layout as H
from evaluator.hub import mirror, sync
from evaluator.hub import remote as R
from evaluator.hub.client import HubClient, HubError, StaleHead
from evaluator.jobs import queue
from evaluator.store import layout

DEFAULT_LEASE = 600.0
MAX_RACES = 50


def lease_seconds() -> float:
    """A Hub job's lease ($FACTBOARD_HUB_LEASE, default 600 s; renewed every third of it)."""
    from evaluator.jobs.queue import env_seconds

    return env_seconds("FACTBOARD_HUB_LEASE", DEFAULT_LEASE)


def _iso() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="microseconds")


def _note(job: dict[str, Any], text: str) -> None:
    msgs = job.setdefault("messages", [])
    msgs.append({"at": _iso(), "text": text[: queue.MAX_MESSAGE_CHARS]})
    del msgs[: -queue.MAX_MESSAGES]


def _encode(job: dict[str, Any]) -> bytes:
    return (json.dumps(job, ensure_ascii=False, indent=1) + "\n").encode()


class HubQueue:
    def __init__(self, client: HubClient, lease: float | None = None):
        self.client = client
        self.lease = lease_seconds() if lease is None else lease

    def jobs(self, remote: R.Remote) -> dict[str, dict[str, Any]]:
        ids = remote.flat(H.QUEUE, ".json")
        blobs = R.BLOBS.get(self.client, remote, [H.job_file(j) for j in ids])
        out = {}
        for j in ids:
            with contextlib.suppress(ValueError):
                data = json.loads(blobs[H.job_file(j)])
                if isinstance(data, dict) and data.get("id") == j:
                    out[j] = data
        return out

    def _expired(self, job: dict[str, Any], now: float) -> bool:
        lease = job.get("lease") or {}
        renewed = lease.get("renewed")
        return not isinstance(renewed, int | float) or now - renewed > self.lease

    def claim(self, ident: queue.WorkerIdentity) -> tuple[queue.Job, str] | None:
        """Take the oldest ready job (pending, or running with an expired lease), or None."""
        token = secrets.token_hex(8)
        for _ in range(MAX_RACES):
            remote = R.snapshot(self.client, H.QUEUE)
            jobs = self.jobs(remote)
            mine = [j for j in jobs.values() if (j.get("lease") or {}).get("token") == token]
            if mine:  # an earlier try went through although its answer was lost
                return queue.Job.from_dict(mine[0], "the results repo"), token
            now = time.time()
            changes: dict[str, dict[str, Any]] = {}
            ready = []
            for j in jobs.values():
                status = j.get("status")
                if status == "running" and self._expired(j, now):
                    who = (j.get("lease") or {}).get("worker", "an unknown worker")
                    if int(j.get("attempts") or 0) >= int(j.get("max_attempts") or 1):
                        j.update(status="failed", lease=None, updated_at=_iso())
                        j["error"] = f"the worker stopped during the last attempt ({who})"
                        _note(
                            j,
                            f"attempt {j.get('attempts')} lost: lease of {who} expired; giving up",
                        )
                        changes[j["id"]] = j
                        continue
                    _note(j, f"attempt {j.get('attempts')} lost: lease of {who} expired")
                    ready.append(j)
                elif status == "pending" and (j.get("not_before") or 0) <= now:
                    ready.append(j)
            ready.sort(key=lambda j: (str(j.get("created_at", "")), j["id"]))
            got: dict[str, Any] | None = None
            if ready:
                got = ready[0]
                got["status"] = "running"
                got["attempts"] = int(got.get("attempts") or 0) + 1
                got["not_before"] = None
                got["lease"] = {**ident, "token": token, "claimed_at": _iso(), "renewed": now}
                got["updated_at"] = _iso()
                _note(
                    got,
                    f"attempt {got['attempts']} of {got.get('max_attempts')} started by "
                    f"{ident.get('worker')}",
                )
                changes[got["id"]] = got
            if not changes:
                return None
            what = f"claim {got['id']}" if got else "expire stale jobs"
            try:
                self.client.commit(
                    {H.job_file(k): _encode(v) for k, v in changes.items()},
                    message=f"FactBoard queue: {what}",
                    parent=remote.head,
                )
            except StaleHead:
                time.sleep(0.02 + secrets.randbelow(50) / 1000)
                continue
            if got is None:
                return None
            return queue.Job.from_dict(got, "the results repo"), token
        raise HubError(f"could not claim a job: the results repo kept moving ({MAX_RACES} tries)")

    def update(
        self,
        job_id: str,
        token: str,
        change: Callable[[dict[str, Any]], None],
        what: str = "update",
    ) -> bool:
        """Change a job this worker holds; False when the lease is no longer this worker's."""
        for _ in range(MAX_RACES):
            remote = R.snapshot(self.client, H.QUEUE)
            job = self.jobs(remote).get(job_id)
            if job is None or (job.get("lease") or {}).get("token") != token:
                return False
            change(job)
            try:
                self.client.commit(
                    {H.job_file(job_id): _encode(job)},
                    message=f"FactBoard queue: {what} {job_id}",
                    parent=remote.head,
                )
            except StaleHead:
                time.sleep(0.02 + secrets.randbelow(50) / 1000)
                continue
            return True
        raise HubError(f"could not update job {job_id}: the results repo kept moving")

    def renew(self, job_id: str, token: str) -> bool:
        def change(job: dict[str, Any]) -> None:
            job["lease"]["renewed"] = time.time()

        return self.update(job_id, token, change, what="renew the lease of")

    def finish(self, job_id: str, token: str, final: queue.Job) -> bool:
        def change(job: dict[str, Any]) -> None:
            keep = {k: job.get(k) for k in ("id", "kind", "payload", "created_at", "attempts")}
            job.clear()
            job.update(final.to_dict())
            job.update(keep)
            job["lease"] = None
            job["updated_at"] = _iso()

        return self.update(job_id, token, change, what=f"{final.status}:")


class _Renewer:
    def __init__(self, hq: HubQueue, job_id: str, token: str, log: Callable[[str], None]):
        self.hq, self.job_id, self.token, self.log = hq, job_id, token, log
        self.stop = threading.Event()
        self.lost = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"lease-{job_id}", daemon=True)

    def _run(self) -> None:
        every = max(0.05, self.hq.lease / 3)
        while not self.stop.wait(every):
            try:
                if not self.hq.renew(self.job_id, self.token):
                    self.lost.set()
                    self.log(f"job {self.job_id}: lease lost to another worker")
                    return
            except HubError as e:
                self.log(f"job {self.job_id}: lease not renewed ({e})")

    def __enter__(self) -> _Renewer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def run_hub_worker(
    client: HubClient | None = None,
    once: bool = False,
    poll: float = 2.0,
    stop: threading.Event | None = None,
    log: Callable[[str], None] | None = None,
    data_root: Path | None = None,
    sub_root: Path | None = None,
    backoff_base: float | None = None,
) -> int:
    """Claim and run jobs from the results repo until stopped (with once: until none is ready).
    Returns the number of jobs run."""
    from evaluator.jobs import worker

    client = client or HubClient.from_env()
    hq = HubQueue(client)
    stop = stop or threading.Event()
    say = log or (lambda m: None)
    data_root = data_root or layout.data_root()
    sub_root = sub_root or layout.submissions_root()
    scratch = sub_root / "hub-worker"
    ident = queue.worker_identity()
    say(
        f"worker {ident['worker']} takes jobs from {client.repo}; handlers: "
        f"{', '.join(worker.known_kinds())}"
    )
    n = 0
    last_recover = 0.0
    while not stop.is_set():
        if time.monotonic() - last_recover > worker.RECOVER_EVERY:
            # a worker beside the app (FACTBOARD_LOCAL_WORKER) also finishes the submissions a
            # crashed app process left in flight, as the file-queue worker does
            from evaluator.submissions import service

            last_recover = time.monotonic()
            for line in service.recover(data_root, sub_root):
                say(line)
        try:
            claimed = hq.claim(ident)
        except HubError as e:
            say(f"cannot read the queue: {e}")
            stop.wait(poll)
            continue
        if claimed is None:
            if once:
                break
            stop.wait(poll)
            continue
        job, token = claimed
        say(f"job {job.id} ({job.kind}) attempt {job.attempts} of {job.max_attempts}")
        try:
            sync.pull(client, data_root, sub_root, jobs=False)
        except HubError as e:
            say(f"job {job.id}: pull before running failed ({e}); running on the local copy")
        mirror.mirror_job(scratch, job.id, _encode(job.to_dict()))
        with _Renewer(hq, job.id, token, say) as renewer:
            base = worker.BACKOFF_BASE if backoff_base is None else backoff_base
            worker.execute(job, scratch, base)
        n += 1
        final = queue.get(job.id, scratch) or job
        try:
            sync.push(client, data_root, sub_root, jobs=False, message=f"FactBoard: {job.id}")
            kept = not renewer.lost.is_set() and hq.finish(job.id, token, final)
        except HubError as e:
            say(f"job {job.id}: could not publish ({e}); it will be run again")
            kept = False
        for state in queue.STATES:
            (queue.queue_dir(scratch) / state / f"{job.id}.json").unlink(missing_ok=True)
        say(
            f"job {job.id}: {final.status}"
            + (f" ({final.error})" if final.error else "")
            + ("" if kept else " (not recorded: the lease was lost)")
        )
    return n
