"""Pull, push and status between the local data root (a cache) and the results repo (the source
of truth). See evaluator/hub/layout.py for the repo's layout and docs/ARCHITECTURE.md.

Nothing keeps a list of "things to push": `plan()` compares the local root with the repo's tree
each time, so what a crash left unpushed (a submission scored just before the Space died) is found
and pushed on the next start. The comparison, per kind:

- runs: a local run the repo lacks is pushed; a repo run the local root lacks is pulled (staged
  under _staging/, then renamed into runs/, as runs.write_run does). Runs are immutable, so a run
  present on both sides is only looked at again for moderation.
- moderation: the local log (<submissions>/moderation.jsonl) against `moderation/<run_id>.json`;
  the later action wins. A pushed hide/show also carries the rewritten run.json; a delete removes
  the run's folder from the repo and leaves the tombstone, so every replica deletes its copy on its
  next pull (a snapshot download would never delete it) and nobody pushes it back.
- benchmarks: by benchmark.json; when the two differ the later `ingested_at` wins.
- reported tables: pulled when missing or different; pushed by `hub push` only.
- submission records: terminal records, without the contact e-mail, pushed when the repo's copy
  differs and pulled when missing. Raw uploads never leave the machine.
- jobs: a local job the repo lacks is pushed (queued on this replica); jobs in the repo are
  mirrored into the local file queue so the Queue page shows their state. Job state in the repo
  changes only by conditional commits (evaluator/hub/queue.py).

All writes of one push go into as few commits as possible (the Hub limits commits per hour).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.core.errors import FactBoardError
from evaluator.hub import layout as H
from evaluator.hub.client import HubClient, blob_oid
from evaluator.store import layout, runs

MAX_FILES_PER_COMMIT = 400
DEMO = "demo"
_TERMINAL_RECORDS = ("scored", "rejected", "abandoned", "deleted")
_LOCK = threading.Lock()  # one pull or push at a time per process


# --------------------------------------------------------------------------------------------
# the two sides


@dataclass
class Remote:
    head: str
    files: dict[str, str]  # path -> blob oid

    def under(self, top: str) -> dict[str, dict[str, str]]:
        """top/<name>/<file> -> {name: {file: oid}}"""
        out: dict[str, dict[str, str]] = {}
        for p, oid in self.files.items():
            parts = p.split("/")
            if len(parts) == 3 and parts[0] == top:
                out.setdefault(parts[1], {})[parts[2]] = oid
        return out

    def flat(self, top: str, suffix: str) -> dict[str, str]:
        """top/<stem><suffix> -> {stem: oid}"""
        out = {}
        for p, oid in self.files.items():
            parts = p.split("/")
            if len(parts) == 2 and parts[0] == top and parts[1].endswith(suffix):
                out[parts[1][: -len(suffix)] if suffix else parts[1]] = oid
        return out


class Blobs:
    """Small repo files by blob oid, fetched once per process."""

    def __init__(self) -> None:
        self._cache: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def get(self, client: HubClient, remote: Remote, paths: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        missing = []
        with self._lock:
            for p in paths:
                oid = remote.files[p]
                if oid in self._cache:
                    out[p] = self._cache[oid]
                else:
                    missing.append(p)
        if missing:
            tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"factboard-hub-{secrets.token_hex(6)}"
            try:
                for p, f in zip(missing, client.download(missing, remote.head, tmp), strict=True):
                    out[p] = f.read_bytes()
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            with self._lock:
                for p in missing:
                    self._cache[remote.files[p]] = out[p]
        return out


BLOBS = Blobs()


def snapshot(client: HubClient, folder: str | None = None) -> Remote:
    """The repo's head and its files (or one folder's: a worker polling the queue lists only
    queue/, not every run)."""
    head = client.head()
    return Remote(head, client.tree(head, folder))


@dataclass
class Local:
    data_root: Path
    sub_root: Path

    @classmethod
    def of(cls, data_root: Path | None = None, sub_root: Path | None = None) -> Local:
        return cls(data_root or layout.data_root(), sub_root or layout.submissions_root())

    def run_ids(self) -> set[str]:
        d = layout.runs_dir(self.data_root)
        if not d.is_dir():
            return set()
        return {
            p.name
            for p in d.iterdir()
            if (p / runs.RUN_FILE).is_file() and (p / runs.PREDICTIONS_FILE).is_file()
        }

    def benchmarks(self) -> dict[str, Path]:
        d = layout.benchmarks_dir(self.data_root)
        if not d.is_dir():
            return {}
        return {
            p.name: p
            for p in d.iterdir()
            if (p / layout.META_FILE).is_file() and (p / layout.SAMPLES_FILE).is_file()
        }

    def moderation(self) -> dict[str, dict[str, str]]:
        """run id -> the latest local moderation action {"action", "at"}."""
        f = self.sub_root / "moderation.jsonl"
        out: dict[str, dict[str, str]] = {}
        if not f.is_file():
            return out
        for line in f.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                entry = json.loads(line)
                for rid in entry["runs"]:
                    prev = out.get(rid)
                    if prev is None or entry["at"] >= prev["at"]:
                        out[rid] = {"action": entry["action"], "at": entry["at"]}
        return out

    def records(self) -> dict[str, bytes]:
        """submission id -> the record as published (terminal records, no private fields)."""
        d = self.sub_root / "records"
        out: dict[str, bytes] = {}
        if not d.is_dir():
            return out
        for f in sorted(d.glob("*.json")):
            try:
                rec = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(rec, dict) or rec.get("status") not in _TERMINAL_RECORDS:
                continue
            out[f.stem] = public_record(rec)
        return out

    def jobs(self) -> dict[str, tuple[str, Path]]:
        """job id -> (state, file) in the local file queue."""
        from evaluator.jobs import queue

        out: dict[str, tuple[str, Path]] = {}
        q = queue.queue_dir(self.sub_root)
        for state in queue.STATES:
            d = q / state
            if d.is_dir():
                for f in d.glob("*.json"):
                    out[f.stem] = (state, f)
        return out


def public_record(rec: dict[str, Any]) -> bytes:
    """A submission record as it may be published: without the contact e-mail."""
    clean = {k: v for k, v in rec.items() if k not in H.PRIVATE_RECORD_FIELDS}
    meta = clean.get("meta")
    if isinstance(meta, dict):
        clean["meta"] = {k: v for k, v in meta.items() if k not in H.PRIVATE_RECORD_FIELDS}
    return (json.dumps(clean, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()


# --------------------------------------------------------------------------------------------
# the plan


@dataclass
class Plan:
    head: str
    pull_runs: list[str] = field(default_factory=list)
    push_runs: list[str] = field(default_factory=list)
    pull_benchmarks: list[str] = field(default_factory=list)
    push_benchmarks: list[str] = field(default_factory=list)
    pull_reported: list[str] = field(default_factory=list)
    push_reported: list[str] = field(default_factory=list)
    apply_moderation: dict[str, dict[str, str]] = field(default_factory=dict)
    push_moderation: dict[str, dict[str, str]] = field(default_factory=dict)
    pull_records: list[str] = field(default_factory=list)
    push_records: dict[str, bytes] = field(default_factory=dict)
    pull_jobs: list[str] = field(default_factory=list)
    push_jobs: list[str] = field(default_factory=list)

    def outbox(self) -> int:
        return (
            len(self.push_runs)
            + len(self.push_benchmarks)
            + len(self.push_reported)
            + len(self.push_moderation)
            + len(self.push_records)
            + len(self.push_jobs)
        )

    def inbox(self) -> int:
        return (
            len(self.pull_runs)
            + len(self.pull_benchmarks)
            + len(self.pull_reported)
            + len(self.apply_moderation)
            + len(self.pull_records)
            + len(self.pull_jobs)
        )

    def lines(self) -> list[str]:
        out = []
        for label, items in (
            ("runs to pull", self.pull_runs),
            ("runs to push", self.push_runs),
            ("benchmarks to pull", self.pull_benchmarks),
            ("benchmarks to push", self.push_benchmarks),
            ("reported tables to pull", self.pull_reported),
            ("reported tables to push", self.push_reported),
            ("moderation to apply here", sorted(self.apply_moderation)),
            ("moderation to push", sorted(self.push_moderation)),
            ("submission records to pull", self.pull_records),
            ("submission records to push", sorted(self.push_records)),
            ("jobs to pull", self.pull_jobs),
            ("jobs to push", self.push_jobs),
        ):
            if items:
                shown = ", ".join(list(items)[:8]) + (" ..." if len(items) > 8 else "")
                out.append(f"{label}: {len(items)} ({shown})")
        return out


def _local_oid(path: Path) -> str | None:
    try:
        return blob_oid(path.read_bytes())
    except OSError:
        return None


def _ingested_at(data: bytes) -> str:
    try:
        return str(json.loads(data).get("ingested_at") or "")
    except (ValueError, AttributeError):
        return ""


def plan(
    client: HubClient,
    remote: Remote,
    local: Local,
    reported: bool = False,
    jobs: bool = True,
    demo: bool = False,
) -> Plan:
    """What differs between the local root and the repo at `remote.head`."""
    p = Plan(remote.head)
    # names from the repo become local folder names: only plain ones are taken
    r_runs = {k: v for k, v in remote.under(H.RUNS).items() if runs.RUN_FILE in v and H.safe(k)}
    l_runs = local.run_ids()

    # moderation
    r_mod_oids = {k: v for k, v in remote.flat(H.MODERATION, ".json").items() if H.safe(k)}
    r_mod: dict[str, dict[str, str]] = {}
    blobs = BLOBS.get(client, remote, [H.moderation_file(rid) for rid in r_mod_oids])
    for path, data in blobs.items():
        with contextlib.suppress(ValueError, KeyError, TypeError):
            entry = json.loads(data)
            r_mod[path.split("/")[1][: -len(".json")]] = {
                "action": str(entry["action"]),
                "at": str(entry["at"]),
            }
    l_mod = local.moderation()
    for rid, entry in l_mod.items():
        theirs = r_mod.get(rid)
        if theirs is None or entry["at"] > theirs["at"]:
            if entry["action"] != "delete" and rid not in l_runs:
                continue  # shown/hidden, then deleted by someone else: nothing to say
            p.push_moderation[rid] = entry
    for rid, entry in r_mod.items():
        if rid in p.push_moderation:
            continue
        if _needs_apply(local, rid, entry["action"], rid in l_runs):
            p.apply_moderation[rid] = entry
    deleted = {rid for rid, e in r_mod.items() if e["action"] == "delete"} - set(p.push_moderation)
    deleted |= {rid for rid, e in p.push_moderation.items() if e["action"] == "delete"}

    p.pull_runs = sorted(set(r_runs) - l_runs - deleted)
    p.push_runs = sorted(
        r
        for r in l_runs - set(r_runs) - deleted
        if H.safe(r) and (demo or not _is_demo_run(local, r))
    )

    # benchmarks
    r_bench = {
        k: v
        for k, v in remote.under(H.BENCHMARKS).items()
        if layout.META_FILE in v and layout.SAMPLES_FILE in v and H.safe(k)
    }
    l_bench = local.benchmarks()
    differ = [
        n
        for n in sorted(set(r_bench) & set(l_bench))
        if _local_oid(l_bench[n] / layout.META_FILE) != r_bench[n][layout.META_FILE]
    ]
    metas = BLOBS.get(client, remote, [H.benchmark_file(n, layout.META_FILE) for n in differ])
    for n in differ:
        ours_at = _ingested_at((l_bench[n] / layout.META_FILE).read_bytes())
        theirs_at = _ingested_at(metas[H.benchmark_file(n, layout.META_FILE)])
        (p.push_benchmarks if ours_at > theirs_at else p.pull_benchmarks).append(n)
    p.pull_benchmarks += sorted(set(r_bench) - set(l_bench))
    p.push_benchmarks += sorted(n for n in set(l_bench) - set(r_bench) if H.safe(n))
    p.push_benchmarks = [n for n in p.push_benchmarks if demo or n != DEMO]

    # reported tables
    r_rep = {k: v for k, v in remote.flat(H.REPORTED, ".csv").items() if H.safe(k)}
    into = layout.reported_dir(local.data_root)
    for name, oid in sorted(r_rep.items()):
        if _local_oid(into / f"{name}.csv") != oid:
            p.pull_reported.append(name)
    if reported:
        src = layout.reported_dir()
        if src.is_dir():
            for f in sorted(src.glob("*.csv")):
                if r_rep.get(f.stem) != _local_oid(f) and H.safe(f.name):
                    p.push_reported.append(f.stem)
        p.pull_reported = [n for n in p.pull_reported if n not in p.push_reported]

    # submission records
    r_rec = {k: v for k, v in remote.flat(H.SUBMISSIONS, ".json").items() if H.safe(k)}
    l_rec = local.records()
    rec_dir = local.sub_root / "records"
    for sid, data in l_rec.items():
        if r_rec.get(sid) != blob_oid(data) and H.safe(sid):
            p.push_records[sid] = data
    p.pull_records = sorted(
        sid for sid in r_rec if sid not in l_rec and not (rec_dir / f"{sid}.json").exists()
    )

    # jobs
    if jobs:
        r_jobs = {k: v for k, v in remote.flat(H.QUEUE, ".json").items() if H.safe(k)}
        l_jobs = local.jobs()
        p.push_jobs = sorted(j for j in set(l_jobs) - set(r_jobs) if H.safe(j))
        # a local job file holds its state in its content, so equal oids mean equal states
        p.pull_jobs = sorted(
            j for j, oid in r_jobs.items() if j not in l_jobs or _local_oid(l_jobs[j][1]) != oid
        )
    return p


def _is_demo_run(local: Local, run_id: str) -> bool:
    """The built-in demo's baseline runs are made on every machine (`python -m evaluator demo`):
    they are not published (other runs on the demo benchmark are)."""
    from evaluator.ingest.demo import BASELINES

    try:
        data = json.loads((layout.run_dir(run_id, local.data_root) / runs.RUN_FILE).read_bytes())
    except (OSError, ValueError):
        return True
    if not isinstance(data, dict):
        return True
    name = (data.get("model") or {}).get("name")
    return data.get("benchmark") == DEMO and name in {m.name for m, _ in BASELINES}


def _needs_apply(local: Local, run_id: str, action: str, present: bool) -> bool:
    if action == "delete":
        return present
    if not present:
        return False
    try:
        rec = runs.read_record(layout.run_dir(run_id, local.data_root))
    except Exception:
        return False
    return rec.hidden != (action == "hide")


# --------------------------------------------------------------------------------------------
# pull


@dataclass
class Report:
    head: str
    pulled: dict[str, int] = field(default_factory=dict)
    pushed: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{n} {k}" for k, n in {**self.pulled, **self.pushed}.items() if n]
        return ", ".join(parts) if parts else "nothing to do"


def pull(
    client: HubClient,
    data_root: Path | None = None,
    sub_root: Path | None = None,
    jobs: bool = True,
) -> Report:
    """Bring the local root up to the repo's head (see the module doc); returns what changed."""
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client)
        p = plan(client, remote, local, jobs=jobs)
        return _pull(client, remote, local, p)


def _pull(client: HubClient, remote: Remote, local: Local, p: Plan) -> Report:
    rep = Report(remote.head)
    _clear_stale_staging(local)
    wanted: list[str] = []
    for rid in p.pull_runs:
        wanted += [f"{H.RUNS}/{rid}/{f}" for f in remote.under(H.RUNS)[rid]]
    for name in p.pull_benchmarks:
        wanted += [f"{H.BENCHMARKS}/{name}/{f}" for f in remote.under(H.BENCHMARKS)[name]]
    wanted += [f"{H.REPORTED}/{n}.csv" for n in p.pull_reported]
    staging = layout.staging_dir(local.data_root) / f"hub-pull-{secrets.token_hex(4)}"
    try:
        if wanted:
            client.download(wanted, remote.head, staging)
        n = 0
        runs_dir = layout.runs_dir(local.data_root)
        runs_dir.mkdir(parents=True, exist_ok=True)
        for rid in p.pull_runs:
            with contextlib.suppress(FileExistsError, OSError):
                if not (runs_dir / rid).exists():
                    os.rename(staging / H.RUNS / rid, runs_dir / rid)
                    n += 1
        rep.pulled["runs"] = n
        bdir = layout.benchmarks_dir(local.data_root)
        bdir.mkdir(parents=True, exist_ok=True)
        n = 0
        for name in p.pull_benchmarks:
            target = bdir / name
            # another process (the worker beside the app) may be swapping the same benchmark
            with contextlib.suppress(OSError):
                if target.exists():
                    os.rename(target, staging / f"old-{name}")
                os.rename(staging / H.BENCHMARKS / name, target)
                n += 1
        rep.pulled["benchmarks"] = n
        if p.pull_reported:
            into = layout.reported_dir(local.data_root)
            into.mkdir(parents=True, exist_ok=True)
            for n_ in p.pull_reported:
                os.replace(staging / H.REPORTED / f"{n_}.csv", into / f"{n_}.csv")
        rep.pulled["reported tables"] = len(p.pull_reported)
    finally:
        shutil.rmtree(staging, ignore_errors=True)

    for rid, entry in p.apply_moderation.items():
        with contextlib.suppress(Exception):
            if entry["action"] == "delete":
                runs.delete_run(rid, local.data_root)
            else:
                runs.set_hidden(rid, entry["action"] == "hide", local.data_root)
    rep.pulled["moderation actions"] = len(p.apply_moderation)

    if p.pull_records:
        blobs = BLOBS.get(client, remote, [H.record_file(s) for s in p.pull_records])
        rec_dir = local.sub_root / "records"
        rec_dir.mkdir(parents=True, exist_ok=True)
        for sid in p.pull_records:
            _atomic(rec_dir / f"{sid}.json", blobs[H.record_file(sid)])
    rep.pulled["submission records"] = len(p.pull_records)

    if p.pull_jobs:
        blobs = BLOBS.get(client, remote, [H.job_file(j) for j in p.pull_jobs])
        for j in p.pull_jobs:
            mirror_job(local.sub_root, j, blobs[H.job_file(j)])
    rep.pulled["jobs"] = len(p.pull_jobs)
    return rep


def _clear_stale_staging(local: Local, older_than: float = 3600.0) -> None:
    """Remove what a pull killed midway left in _staging/ (never seen by readers)."""
    import time

    d = layout.staging_dir(local.data_root)
    if not d.is_dir():
        return
    for old in d.glob("hub-pull-*"):
        with contextlib.suppress(OSError):
            if time.time() - old.stat().st_mtime > older_than:
                shutil.rmtree(old, ignore_errors=True)


def _atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(3)}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def mirror_job(sub_root: Path, job_id: str, data: bytes) -> None:
    """Put the repo's copy of a job into the local file queue, in the state it names."""
    from evaluator.jobs import queue

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
    for other in queue.STATES:
        if other != state:
            (q / other / f"{job_id}.json").unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------
# push


def push(
    client: HubClient,
    data_root: Path | None = None,
    sub_root: Path | None = None,
    reported: bool = False,
    jobs: bool = True,
    message: str = "FactBoard: publish",
    demo: bool = False,
) -> Report:
    """Publish what the local root has and the repo lacks, in as few commits as possible (the
    built-in demo benchmark and its runs only with demo=True)."""
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client)
        p = plan(client, remote, local, reported=reported, jobs=jobs, demo=demo)
        return _push(client, remote, local, p, message)


def _push(client: HubClient, remote: Remote, local: Local, p: Plan, message: str) -> Report:
    rep = Report(remote.head)
    adds: dict[str, bytes | Path] = {}
    folders: list[str] = []
    deletes: list[str] = []
    if H.README not in remote.files:
        adds[H.README] = H.CARD.replace("{repo}", client.repo).encode()
    for rid in p.push_runs:
        d = layout.run_dir(rid, local.data_root)
        for f in (
            runs.RUN_FILE,
            runs.PREDICTIONS_FILE,
            runs.GRADES_FILE,
            layout.LABELS_FILE,
            layout.EVIDENCE_FILE,
        ):
            if (d / f).is_file():
                adds[H.run_file(rid, f)] = (d / f).read_bytes()
        adds.update(_eee_files(rid, local, rep))
    for name in p.push_benchmarks:
        d = layout.benchmark_dir(name, local.data_root)
        for f in (layout.SAMPLES_FILE, layout.META_FILE):
            adds[H.benchmark_file(name, f)] = d / f
    for name in p.push_reported:
        adds[f"{H.REPORTED}/{name}.csv"] = layout.reported_dir() / f"{name}.csv"
    for rid, entry in p.push_moderation.items():
        body = {"run_id": rid, **entry}
        adds[H.moderation_file(rid)] = (json.dumps(body, sort_keys=True) + "\n").encode()
        if entry["action"] == "delete":
            if any(path.startswith(f"{H.RUNS}/{rid}/") for path in remote.files):
                folders.append(f"{H.RUNS}/{rid}")
            deletes += H.eee_files_of(rid, remote.files)
        else:
            run_json = layout.run_dir(rid, local.data_root) / runs.RUN_FILE
            if run_json.is_file():
                adds[H.run_file(rid, runs.RUN_FILE)] = run_json.read_bytes()
    for sid, data in p.push_records.items():
        adds[H.record_file(sid)] = data
    l_jobs = local.jobs()
    for j in p.push_jobs:
        with contextlib.suppress(OSError):
            adds[H.job_file(j)] = l_jobs[j][1].read_bytes()
    if list(adds) == [H.README] and not folders and not deletes and remote.files:
        adds = {}
    if adds or folders or deletes:
        items = sorted(adds.items())
        for i in range(0, max(1, len(items)), MAX_FILES_PER_COMMIT):
            chunk = dict(items[i : i + MAX_FILES_PER_COMMIT])
            rep.head = client.commit(
                chunk,
                deletes=deletes if i == 0 else (),
                delete_folders=folders if i == 0 else (),
                message=message,
            )
    rep.pushed = {
        "runs pushed": len(p.push_runs),
        "benchmarks pushed": len(p.push_benchmarks),
        "reported tables pushed": len(p.push_reported),
        "moderation actions pushed": len(p.push_moderation),
        "submission records pushed": len(p.push_records),
        "jobs pushed": len(p.push_jobs),
    }
    return rep


def _eee_files(run_id: str, local: Local, rep: Report) -> dict[str, bytes | Path]:
    """The run's Every Eval Ever record and samples file, under eee/ in the datastore layout, so
    the community datastore can take them as they are. A run whose record cannot be built here
    (its benchmark is not ingested on this replica) is published without one, and said so."""
    from evaluator.interop.export import run_files

    try:
        files = run_files(run_id, local.data_root).files()
    except FactBoardError as e:
        rep.notes.append(f"run {run_id}: no Every Eval Ever record ({e})")
        return {}
    return {H.eee_file(path): body for path, body in files.items()}


def status(client: HubClient, data_root: Path | None = None, sub_root: Path | None = None) -> Plan:
    local = Local.of(data_root, sub_root)
    remote = snapshot(client)
    return plan(client, remote, local, reported=True)


def sync(
    client: HubClient, data_root: Path | None = None, sub_root: Path | None = None
) -> tuple[Report, Report | None]:
    """Pull, then push the outbox, from one snapshot of the repo (what the app does each poll).
    The outbox is computed before the pull, which never adds to it."""
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client)
        p = plan(client, remote, local)
        pulled = _pull(client, remote, local, p)
        pushed = _push(client, remote, local, p, "FactBoard: publish") if p.outbox() else None
        return pulled, pushed
