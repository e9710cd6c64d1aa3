"""Pull, push and status between the local data root (immutable run folders) and the results repo
(the source of truth, made of tables: see evaluator/hub/layout.py and docs/ARCHITECTURE.md).

Nothing keeps a list of "things to push": `plan()` compares the local root with the repo's tables
each time, so what a crash left unpushed (a submission scored just before the Space died) is found
and pushed on the next start. Reading the repo costs one request when nothing changed: the head's
commit id; the tree listing and the tables are cached by commit and content id (in memory and
under <data root>/_hub/). The comparison, per kind:

- runs: a local run the runs table lacks is pushed; a live row the local root lacks is pulled: its
  run.json (from the row) and its per-sample rows (from the shard the row names) are written as a
  run folder through evaluator.store.runs.write_run, so they are checked as a local write is. A
  row or shard that fails a check is skipped and listed in the report, never the end of the pull.
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
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evaluator.core.errors import FactBoardError
from evaluator.hub import checks
from evaluator.hub import layout as H
from evaluator.hub import tables as T
from evaluator.hub.client import HubAuthError, HubClient, HubError, StaleHead, blob_oid
from evaluator.store import layout, runs

DEMO = "demo"
MAX_RACES = 20
COMPACT_AT = 64  # a push that leaves a benchmark more shards than this compacts the repo
WRITERS = 4  # threads writing pulled run folders
_TERMINAL_RECORDS = ("scored", "rejected", "abandoned", "deleted")
_LOCK = threading.RLock()  # one pull or push at a time per process


class LayoutError(HubError):
    """The results repo is in a layout this FactBoard does not read."""


# --------------------------------------------------------------------------------------------
# the repo side


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

    def layout(self) -> int:
        """1: one folder per run (before the tables); 2: tables; 0: an empty repo."""
        if H.MANIFEST in self.files:
            return H.LAYOUT_VERSION
        if any(p.split("/")[0] in (H.RUNS, H.MODERATION, H.SUBMISSIONS) for p in self.files):
            return 1
        return 0


class Blobs:
    """Repo files by blob oid (content-addressed, so never stale): in memory up to a budget, and
    on disk in a cache folder when one is given."""

    MEMORY = 256 * 2**20

    def __init__(self) -> None:
        self._cache: dict[str, bytes] = {}
        self._size = 0
        self._lock = threading.Lock()

    def _keep(self, oid: str, data: bytes) -> None:
        with self._lock:
            if oid in self._cache or len(data) > self.MEMORY // 4:
                return
            self._cache[oid] = data
            self._size += len(data)
            while self._size > self.MEMORY and self._cache:
                old = next(iter(self._cache))
                self._size -= len(self._cache.pop(old))

    def get(
        self, client: HubClient, remote: Remote, paths: list[str], disk: Path | None = None
    ) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        missing = []
        for p in paths:
            oid = remote.files[p]
            if not _OID.match(oid):
                disk = None  # an oid is used as a file name only when it looks like one
            with self._lock:
                hit = self._cache.get(oid)
            if hit is None and disk is not None:
                with contextlib.suppress(OSError):
                    hit = (disk / oid).read_bytes()
                    self._keep(oid, hit)
            if hit is None:
                missing.append(p)
            else:
                out[p] = hit
        if missing:
            with ThreadPoolExecutor(max_workers=min(8, len(missing))) as pool:
                got = list(pool.map(lambda p: client.fetch(p, remote.head), missing))
            for p, data in zip(missing, got, strict=True):
                out[p] = data
                oid = remote.files[p]
                self._keep(oid, data)
                if disk is not None and _OID.match(oid):
                    with contextlib.suppress(OSError):
                        disk.mkdir(parents=True, exist_ok=True)
                        _atomic(disk / oid, data)
        return out


BLOBS = Blobs()
_OID = re.compile(r"^[0-9a-f]{40,64}$")
_TREES: dict[tuple[str, str], dict[str, str]] = {}


def snapshot(client: HubClient, folder: str | None = None, cache: Path | None = None) -> Remote:
    """The repo's head and its files (or one folder's). The listing of a head is kept (in memory,
    and in `cache` when given), so a repo that has not moved costs one request."""
    head = client.head()
    files = _TREES.get((client.repo, head))
    if files is None and cache is not None:
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            kept = json.loads((cache / "tree.json").read_text(encoding="utf-8"))
            if kept.get("repo") == client.repo and kept.get("head") == head:
                files = {str(k): str(v) for k, v in kept["files"].items()}
    if files is None:
        files = client.tree(head)
        if cache is not None:
            with contextlib.suppress(OSError):
                cache.mkdir(parents=True, exist_ok=True)
                body = {"repo": client.repo, "head": head, "files": files}
                _atomic(cache / "tree.json", json.dumps(body).encode())
    if len(_TREES) > 16:
        _TREES.clear()
    _TREES[(client.repo, head)] = files
    if folder is not None:
        pre = folder.rstrip("/") + "/"
        return Remote(head, {p: o for p, o in files.items() if p.startswith(pre)})
    return Remote(head, dict(files))


@dataclass
class RemoteTables:
    """The repo's manifest, runs and submission records at one head, read defensively. `runs`
    holds every row with a plain run id, without its run.json (`run_json(rid)` reads that)."""

    manifest: T.Manifest
    runs: dict[str, dict[str, Any]]  # run_id -> row (no run_json; has_json instead)
    bad: dict[str, str]  # run_id -> why its row is not pulled
    records: dict[str, str]  # submission id -> record JSON
    problems: list[str]
    runs_readable: bool = True
    records_readable: bool = True
    runs_table: pa.Table | None = None
    pos: dict[str, int] = field(default_factory=dict)

    def run_json(self, run_id: str) -> str | None:
        if self.runs_table is None or run_id not in self.pos:
            return None
        value = self.runs_table["run_json"][self.pos[run_id]].as_py()
        return str(value) if value else None


def check_layout(client: HubClient, remote: Remote) -> None:
    found = remote.layout()
    if found == 1:
        raise LayoutError(
            f"the results repo {client.repo} is in the old folder layout (layout 1: one folder "
            f"per run); this FactBoard reads layout {H.LAYOUT_VERSION} (tables). Run `python -m "
            "evaluator hub migrate` once, with a write token, to convert it"
        )


_PARSED: dict[tuple[str, str], RemoteTables] = {}


def load_tables(client: HubClient, remote: Remote, cache: Path | None = None) -> RemoteTables:
    """The repo's tables at `remote.head`, parsed once per head and process (callers copy what
    they change)."""
    check_layout(client, remote)
    key = (client.repo, remote.head)
    if key not in _PARSED:
        if len(_PARSED) > 4:
            _PARSED.clear()
        _PARSED[key] = _load_tables(client, remote, cache)
    return _PARSED[key]


def _load_tables(client: HubClient, remote: Remote, cache: Path | None) -> RemoteTables:
    want = [p for p in (H.MANIFEST, H.RUNS_TABLE, H.SUBMISSIONS_TABLE) if p in remote.files]
    blobs = BLOBS.get(client, remote, want, cache / "blobs" if cache else None)
    problems: list[str] = []
    manifest = T.Manifest()
    rebuild = False
    if H.MANIFEST in blobs:
        try:
            manifest = T.Manifest.parse(blobs[H.MANIFEST])
        except T.TableError as e:  # the runs' own shards are read instead; a push rewrites it
            problems.append(f"{e}; the shards the runs table names are read instead")
            rebuild = True
        if manifest.version > H.LAYOUT_VERSION:
            raise LayoutError(
                f"the results repo {client.repo} is in layout {manifest.version}, newer than "
                f"this FactBoard reads ({H.LAYOUT_VERSION}): update FactBoard"
            )
        problems += manifest.problems
    out = RemoteTables(manifest, {}, {}, {}, problems)
    rows: list[dict[str, Any]] = []
    try:
        if H.RUNS_TABLE in blobs:
            table = T.read_table(blobs[H.RUNS_TABLE], T.RUNS_SCHEMA, H.RUNS_TABLE)
            out.runs_table = table
            rows = table.drop_columns(["run_json"]).to_pylist()
            for row, has in zip(rows, pc.is_valid(table["run_json"]).to_pylist(), strict=True):
                row["has_json"] = bool(has)
    except T.TableError as e:
        problems.append(str(e))
        out.runs_readable = False
        rows = []
    if rebuild:
        checks.manifest_from_rows(manifest, rows, remote)
    for i, row in enumerate(rows):
        rid = str(row.get("run_id") or "")
        if not H.safe(rid):
            problems.append(f"runs table: a row with run id {rid!r} skipped (not a plain name)")
            continue
        if rid in out.runs:
            problems.append(f"runs table: run {rid} listed twice; the first row is kept")
            continue
        out.runs[rid] = row
        out.pos[rid] = i
        if row.get("deleted"):
            continue
        why = _row_problem(row, manifest)
        if why:
            out.bad[rid] = why
            problems.append(f"run {rid} skipped: {why}")
    try:
        recs = T.read_rows(blobs.get(H.SUBMISSIONS_TABLE), T.SUBMISSIONS_SCHEMA, "submissions")
    except T.TableError as e:
        problems.append(str(e))
        out.records_readable = False
        recs = []
    for r in recs:
        sid, body = r.get("submission_id"), r.get("record")
        if not H.safe(sid or "") or not body:
            problems.append(f"submissions table: record {sid!r} skipped")
            continue
        why = checks.record_problem(str(sid), str(body))
        if why:
            problems.append(f"submissions table: record {sid} skipped ({why})")
            continue
        out.records[str(sid)] = str(body)
    return out


def _row_problem(row: dict[str, Any], manifest: T.Manifest) -> str | None:
    """Why a live row cannot be pulled, or None (its run.json is checked when it is written)."""
    bench = row.get("benchmark") or ""
    if not H.safe(bench):
        return f"benchmark {bench!r} is not a plain name"
    if not row.get("has_json"):
        return "no run.json in its row"
    shard = row.get("shard") or ""
    if shard not in manifest.shards.get(bench, {}):
        return f"its shard {shard!r} is not in the manifest"
    return None


# --------------------------------------------------------------------------------------------
# the local side


@dataclass
class Local:
    data_root: Path
    sub_root: Path

    @property
    def cache(self) -> Path:
        """What this replica keeps of the repo: the last tree listing and the tables."""
        return self.data_root / "_hub"

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
    # records whose published copy carries a later reproduction outcome than ours
    apply_verification: list[str] = field(default_factory=list)
    pull_jobs: list[str] = field(default_factory=list)
    push_jobs: list[str] = field(default_factory=list)
    withdraw: dict[str, str] = field(default_factory=dict)  # local duplicates -> why
    tables: RemoteTables | None = None
    problems: list[str] = field(default_factory=list)  # what the repo holds that was skipped

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
            + len(self.apply_verification)
            + len(self.pull_jobs)
            + len(self.withdraw)
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
            ("reproduction outcomes to take here", self.apply_verification),
            ("jobs to pull", self.pull_jobs),
            ("jobs to push", self.push_jobs),
            ("duplicates to withdraw here", sorted(self.withdraw)),
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
    tabs = p.tables = load_tables(client, remote, local.cache)
    p.problems = list(tabs.problems)
    l_runs = local.run_ids()

    # moderation: the runs table carries each run's latest action
    r_mod: dict[str, dict[str, str]] = {}
    for rid, row in tabs.runs.items():
        action, at = row.get("moderation"), row.get("moderated_at")
        if row.get("deleted"):
            action = "delete"
        if action in ("hide", "show", "delete"):
            r_mod[rid] = {"action": str(action), "at": str(at or "")}
    from evaluator.submissions import moderation

    p.push_moderation, p.apply_moderation = moderation.plan_sync(
        r_mod, local.sub_root, l_runs, lambda rid, a: _needs_apply(local, rid, a, rid in l_runs)
    )
    deleted = {rid for rid, e in r_mod.items() if e["action"] == "delete"}
    deleted |= {rid for rid, e in p.push_moderation.items() if e["action"] == "delete"}

    live = {rid for rid, row in tabs.runs.items() if not row.get("deleted")}
    p.pull_runs = sorted(live - set(tabs.bad) - l_runs - deleted)
    p.pull_runs = checks.drop_rejected(  # what failed a check is not downloaded again
        local.cache, "runs", p.pull_runs, lambda r: checks.run_key(tabs, remote, r), p.problems
    )
    p.push_runs = (
        sorted(
            r
            for r in l_runs - set(tabs.runs) - deleted
            if H.safe(r) and (demo or not _is_demo_run(local, r))
        )
        if tabs.runs_readable
        else []
    )
    p.withdraw = checks.duplicates(tabs, local.data_root, p.push_runs)
    p.push_runs = [r for r in p.push_runs if r not in p.withdraw]

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
    p.pull_benchmarks = checks.drop_rejected(
        local.cache,
        "benchmarks",
        p.pull_benchmarks,
        lambda n: checks.benchmark_key(remote, n),
        p.problems,
    )

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
    p.pull_reported = checks.drop_rejected(
        local.cache, "reported", p.pull_reported, lambda n: r_rep[n], p.problems
    )

    # submission records
    l_rec = local.records()
    rec_dir = local.sub_root / "records"
    if tabs.records_readable:
        from evaluator.submissions import verification

        for sid, data in l_rec.items():
            theirs = tabs.records.get(sid, "")
            if theirs.encode() == data or not H.safe(sid):
                continue
            if theirs and verification.newer(theirs, data):  # a later reproduction, published
                p.apply_verification.append(sid)
            else:
                p.push_records[sid] = data
        # a record new here may carry an outcome that its run, as first published, lacks
        p.apply_verification += [
            sid
            for sid, theirs in sorted(tabs.records.items())
            if sid not in l_rec and H.safe(sid) and verification.newer(theirs, "{}")
        ]
    p.apply_verification = checks.drop_rejected(
        local.cache,
        "verification",
        p.apply_verification,
        lambda sid: blob_oid(tabs.records[sid].encode()),
        p.problems,
    )
    for rid in p.withdraw:  # its record is published once it says why it was withdrawn
        with contextlib.suppress(FactBoardError, OSError):
            sub = runs.read_record(layout.run_dir(rid, local.data_root)).submission or {}
            p.push_records.pop(str(sub.get("submission_id")), None)
    p.pull_records = sorted(
        sid for sid in tabs.records if sid not in l_rec and not (rec_dir / f"{sid}.json").exists()
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
        from evaluator.hub import queue as hub_queue

        p.pull_jobs = checks.drop_rejected(
            local.cache, "jobs", p.pull_jobs, lambda j: r_jobs[j], p.problems
        )
        mirrors = {j: l_jobs[j] for j in p.pull_jobs if j in l_jobs}
        changed = hub_queue.maintainer_changes(local.sub_root, r_jobs, mirrors)
        p.push_jobs = sorted({*p.push_jobs, *changed})
        p.pull_jobs = [j for j in p.pull_jobs if j not in changed]
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
    skipped: list[str] = field(default_factory=list)  # what the repo holds that failed a check
    shards: dict[str, int] = field(default_factory=dict)  # benchmark -> shards after a push

    def summary(self) -> str:
        from evaluator.core.formatting import plural

        parts = []
        for key, n in {**self.pulled, **self.pushed}.items():
            if n:
                base, pushed = key.removesuffix(" pushed"), key.endswith(" pushed")
                one = base[:-1] if base.endswith("s") else base
                parts.append(plural(n, one, base) + (" pushed" if pushed else ""))
        if self.skipped:
            parts.append(f"{plural(len(self.skipped), 'entry', 'entries')} skipped")
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
        remote = snapshot(client, cache=local.cache)
        p = plan(client, remote, local, jobs=jobs)
        return _pull(client, remote, local, p)


def _pull(client: HubClient, remote: Remote, local: Local, p: Plan) -> Report:
    rep = Report(remote.head, skipped=list(p.problems))
    _clear_stale_staging(local)
    wanted: list[str] = []
    for name in p.pull_benchmarks:
        wanted += [f"{H.BENCHMARKS}/{name}/{f}" for f in remote.under(H.BENCHMARKS)[name]]
    wanted += [f"{H.REPORTED}/{n}.csv" for n in p.pull_reported]
    staging = layout.staging_dir(local.data_root) / f"hub-pull-{secrets.token_hex(4)}"
    try:
        if wanted:
            blobs = checks.fetch_each(client, remote.head, wanted, rep.skipped)
            for path, data in blobs.items():
                (staging / path).parent.mkdir(parents=True, exist_ok=True)
                (staging / path).write_bytes(data)
        bdir = layout.benchmarks_dir(local.data_root)
        bdir.mkdir(parents=True, exist_ok=True)
        n = 0
        failed: dict[str, tuple[str, str]] = {}
        bad_csv: dict[str, tuple[str, str]] = {}
        for name in p.pull_benchmarks:
            target = bdir / name
            why = checks.benchmark_problem(name, staging / H.BENCHMARKS / name)
            if why:  # never replaces the local copy; not downloaded again while the same
                failed[name] = (checks.benchmark_key(remote, name), f"benchmark {name}: {why}")
                rep.skipped.append(failed[name][1])
                continue
            # another process (the worker beside the app) may be swapping the same benchmark
            with contextlib.suppress(OSError):
                if target.exists():
                    os.rename(target, staging / f"old-{name}")
                os.rename(staging / H.BENCHMARKS / name, target)
                n += 1
        rep.pulled["benchmarks"] = n
        checks.remember(local.cache, "benchmarks", failed, set(remote.under(H.BENCHMARKS)))
        if p.pull_reported:
            into = layout.reported_dir(local.data_root)
            into.mkdir(parents=True, exist_ok=True)
            for n_ in p.pull_reported:
                why = checks.reported_problem(staging / H.REPORTED / f"{n_}.csv")
                if why:
                    oid = remote.files[f"{H.REPORTED}/{n_}.csv"]
                    bad_csv[n_] = (oid, f"reported table {n_} skipped: {why}")
                    rep.skipped.append(bad_csv[n_][1])
                    continue
                os.replace(staging / H.REPORTED / f"{n_}.csv", into / f"{n_}.csv")
            checks.remember(local.cache, "reported", bad_csv, set(remote.flat(H.REPORTED, ".csv")))
        rep.pulled["reported tables"] = len(p.pull_reported) - len(bad_csv)
    finally:
        shutil.rmtree(staging, ignore_errors=True)

    assert p.tables is not None
    checks.withdraw(local.data_root, local.sub_root, p.withdraw, rep.notes)
    rep.pulled["runs"] = _pull_runs(client, remote, local, p.tables, p.pull_runs, rep)
    if p.pull_runs:  # what failed is remembered by content, not downloaded again
        have = local.run_ids()
        checks.remember_runs(local.cache, p.tables, remote, p.pull_runs, have, rep.skipped)

    for rid, entry in p.apply_moderation.items():
        with contextlib.suppress(Exception):
            if entry["action"] == "delete":
                runs.delete_run(rid, local.data_root)
            else:
                runs.set_hidden(rid, entry["action"] == "hide", local.data_root)
    rep.pulled["moderation actions"] = len(p.apply_moderation)

    if p.pull_records:
        rec_dir = local.sub_root / "records"
        rec_dir.mkdir(parents=True, exist_ok=True)
        for sid in p.pull_records:
            _atomic(rec_dir / f"{sid}.json", p.tables.records[sid].encode())
    rep.pulled["submission records"] = len(p.pull_records)
    if p.apply_verification:
        from evaluator.submissions import verification

        failed_outcomes: dict[str, tuple[str, str]] = {}
        for sid in p.apply_verification:
            text = p.tables.records[sid]
            why = verification.adopt(text, local.data_root, local.sub_root)
            if why:
                line = f"reproduction outcome of submission {sid} not taken: {why}"
                rep.skipped.append(line)
                failed_outcomes[sid] = (blob_oid(text.encode()), line)
        checks.remember(local.cache, "verification", failed_outcomes, set(p.tables.records))
    rep.pulled["reproduction outcomes"] = len(p.apply_verification)

    bad: dict[str, tuple[str, str]] = {}
    if p.pull_jobs:
        blobs = BLOBS.get(client, remote, [H.job_file(j) for j in p.pull_jobs])
        for j in p.pull_jobs:
            why = checks.job_problem(j, blobs[H.job_file(j)])
            if why:
                bad[j] = (remote.files[H.job_file(j)], f"job {j} skipped: {why}")
                rep.skipped.append(bad[j][1])
                continue
            mirror_job(local.sub_root, j, blobs[H.job_file(j)])
        checks.remember(local.cache, "jobs", bad, set(remote.flat(H.QUEUE, ".json")))
    rep.pulled["jobs"] = len(p.pull_jobs) - len(bad)
    checks.save_last_pull(local.cache, remote.head, rep.skipped)
    _prune_cache(local, remote)
    return rep


def _fetch_all(client: HubClient, head: str, paths: Iterable[str]) -> dict[str, bytes]:
    items = list(paths)
    if not items:
        return {}
    with ThreadPoolExecutor(max_workers=min(8, len(items))) as pool:
        return dict(zip(items, pool.map(lambda p: client.fetch(p, head), items), strict=True))


def _pull_runs(
    client: HubClient,
    remote: Remote,
    local: Local,
    tabs: RemoteTables,
    run_ids: list[str],
    rep: Report,
) -> int:
    """Write the runs as local run folders from their rows and shards (one shard at a time: each
    file downloaded once, in one request). Returns how many were written."""
    groups: dict[tuple[str, str], list[str]] = {}
    for rid in run_ids:
        row = tabs.runs[rid]
        groups.setdefault((str(row["benchmark"]), str(row["shard"])), []).append(rid)
    n = 0
    for (bench, shard), rids in sorted(groups.items()):
        kinds = tabs.manifest.shards[bench][shard]
        paths = {k: H.shard_file(bench, k, shard) for k in kinds}
        try:
            blobs = checks.fetch_each(client, remote.head, paths.values(), rep.skipped)
        except HubError as e:  # the Hub could not serve it now: the other shards go on
            rep.skipped.append(f"shard {bench}/{shard}: {e}; its runs {checks.AGAIN}")
            continue
        if paths["predictions"] not in blobs:
            rep.skipped.append(f"shard {bench}/{shard} cannot be read; its runs skipped")
            continue
        parts: dict[str, dict[str, pa.Table]] = {}
        broken: str | None = None
        for kind, path in paths.items():
            if path not in blobs:
                continue  # too large: listed, and left out of its runs
            try:
                parts[kind] = T.read_shard(blobs[path], kind, set(rids), path)
            except T.TableError as e:
                if kind == "predictions":
                    broken = str(e)
                else:
                    rep.skipped.append(f"{e}; left out of its runs")
        if broken:
            rep.skipped.append(f"{broken}; its runs skipped: {len(rids)}")
            continue

        n += _write_group(local, tabs, rids, parts, rep)
    return n


def _write_group(
    local: Local,
    tabs: RemoteTables,
    rids: list[str],
    parts: dict[str, dict[str, pa.Table]],
    rep: Report,
) -> int:
    """The runs of one shard as run folders: each record checked as a local write is
    (`_pulled_record`), then written in one pass (evaluator.store.runs.write_runs: one flush to
    disk for all of them); a run with evidence goes through write_run, which checks evidence row
    by row. Returns how many were written."""
    bulk: list[tuple[Any, str | None, dict[str, pa.Table]]] = []
    one_by_one: list[tuple[Any, dict[str, pa.Table]]] = []
    for rid in rids:
        try:
            text = tabs.run_json(rid)
            rec, hidden_in_text = _pulled_record(tabs.runs[rid], text)
            preds = parts["predictions"].get(rid)
            if preds is None:
                raise FactBoardError("no predictions in its shard")
            # its numbers must follow from its predictions and this replica's benchmark
            grades = parts.get("grades", {}).get(rid)
            why = checks.run_problem(
                rec,
                preds.to_pandas(),
                None if grades is None else grades.to_pandas(),
                local.data_root,
            )
            if why:
                raise FactBoardError(why)
        except (ValueError, RecursionError, TypeError, FactBoardError, pa.ArrowException) as e:
            rep.skipped.append(f"run {rid} skipped ({H.RUNS_TABLE}:{rid}): {e}")
            continue
        files = {T.kind_file(k): p[rid] for k, p in parts.items() if rid in p}
        if T.kind_file("evidence") in files:
            one_by_one.append((rec, files))
        else:  # the text is written as is when the record is the one validated from it
            bulk.append((rec, text if rec.hidden == hidden_in_text else None, files))
    n = 0
    if bulk:
        try:
            done, failed = runs.write_runs(bulk, local.data_root, workers=WRITERS)
        except OSError as e:
            rep.skipped.append(f"{len(bulk)} runs of one shard not written: {e}")
        else:
            n += len(done)
            rep.skipped += [
                f"run {r} skipped ({H.RUNS_TABLE}:{r}): {why}" for r, why in failed.items()
            ]
    for rec, files in one_by_one:
        n += _write_pulled(local, rec, files, rep)
    return n


def _pulled_record(row: dict[str, Any], text: str | None) -> tuple[Any, bool]:
    """A pulled row's run.json as a RunRecord, checked as a local write is (validate_record)
    and against its row, with the row's moderation state; and `hidden` as run.json said it."""
    rid = str(row["run_id"])
    if not text:
        raise FactBoardError("no run.json in its row")
    rec = runs.validate_record(json.loads(text, parse_constant=_not_json), rid)
    if rec.benchmark != row.get("benchmark"):
        raise FactBoardError(f"run.json names benchmark {rec.benchmark!r}, its row another")
    hidden, said = bool(row.get("hidden")), bool(rec.hidden)
    return (rec if said == hidden else rec.model_copy(update={"hidden": hidden})), said


def _not_json(token: str) -> Any:
    raise ValueError(f"run.json holds {token}, which is not JSON")


def _write_pulled(local: Local, rec: Any, files: dict[str, pa.Table], rep: Report) -> bool:
    """One pulled run, written through the store's own checks (write_run)."""
    rid = rec.run_id

    def frame(kind: str) -> Any:
        t = files.get(T.kind_file(kind))
        return None if t is None else t.to_pandas()

    try:
        runs.write_run(
            rec,
            frame("predictions"),
            grades=frame("grades"),
            root=local.data_root,
            labels=frame("labels"),
            evidence=frame("evidence"),
        )
        return True
    except (ValueError, RecursionError, TypeError, FactBoardError, pa.ArrowException) as e:
        if layout.run_dir(rid, local.data_root).exists():
            return False  # another process wrote it meanwhile
        rep.skipped.append(f"run {rid} skipped ({H.RUNS_TABLE}:{rid}): {e}")
        return False


def _prune_cache(local: Local, remote: Remote) -> None:
    """Drop cached tables that the head no longer has."""
    d = local.cache / "blobs"
    if not d.is_dir():
        return
    keep = set(remote.files.values())
    for f in d.iterdir():
        if f.name not in keep:
            f.unlink(missing_ok=True)


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
    from evaluator.hub import queue as hub_queue

    hub_queue.remember_mirror(sub_root, job_id, data)
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
    """Publish what the local root has and the repo lacks, in one commit (the built-in demo
    benchmark and its runs only with demo=True)."""
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client, cache=local.cache)
        p = plan(client, remote, local, reported=reported, jobs=jobs, demo=demo)
        return _push(client, remote, local, p, message, reported=reported, jobs=jobs, demo=demo)


def _push(
    client: HubClient,
    remote: Remote,
    local: Local,
    p: Plan,
    message: str,
    reported: bool = False,
    jobs: bool = True,
    demo: bool = False,
) -> Report:
    """Commit the plan's outbox on the head it was made from; when the head moved (412), plan
    again on the new head and retry."""
    for _ in range(MAX_RACES):
        rep = Report(remote.head)
        adds = _outbox_files(client, remote, local, p, rep)
        if adds:
            try:
                rep.head = client.commit(adds, message=message, parent=remote.head)
            except StaleHead:
                time.sleep(0.02 + secrets.randbelow(80) / 1000)
                remote = snapshot(client, cache=local.cache)
                p = plan(client, remote, local, reported=reported, jobs=jobs, demo=demo)
                continue
            _published(local, p)
            _compact_if_due(client, rep)
        rep.pushed = {
            "runs pushed": len(p.push_runs),
            "benchmarks pushed": len(p.push_benchmarks),
            "reported tables pushed": len(p.push_reported),
            "moderation actions pushed": len(p.push_moderation),
            "submission records pushed": len(p.push_records),
            "jobs pushed": len(p.push_jobs),
        }
        return rep
    raise HubError(f"could not publish: the results repo kept moving ({MAX_RACES} tries)")


def _outbox_files(
    client: HubClient, remote: Remote, local: Local, p: Plan, rep: Report
) -> dict[str, bytes | Path]:
    """Every file the push writes: new shards, the changed tables and manifest, benchmarks,
    reported tables and jobs."""
    tabs = p.tables
    assert tabs is not None
    adds: dict[str, bytes | Path] = {}
    manifest = T.Manifest(H.LAYOUT_VERSION, {b: dict(s) for b, s in tabs.manifest.shards.items()})
    runs_changed = False
    new_rows: dict[str, dict[str, Any]] = {}  # runs the table lacks
    updates: dict[str, dict[str, Any]] = {}  # run id -> changed cells of its row
    new_results: list[dict[str, Any]] = []
    drop: set[str] = set()
    hidden: dict[str, bool] = {}

    if p.push_runs:
        if not tabs.runs_readable:
            raise HubError(f"{H.RUNS_TABLE} cannot be read: not overwriting it ({tabs.problems})")
        built = build_runs(local.data_root, p.push_runs, rep.notes)
        adds.update(built.files)
        for bench, sid_kinds in built.shards.items():
            manifest.shards.setdefault(bench, {}).update(sid_kinds)
        for row, rec in built.rows:
            new_rows[row["run_id"]] = row
            new_results += T.result_rows(rec)
        p.push_runs = [r for r in p.push_runs if r in new_rows]
        runs_changed = True

    for rid, entry in p.push_moderation.items():
        runs_changed = True
        if entry["action"] == "delete":
            drop.add(rid)
            if rid in tabs.runs:
                updates[rid] = T.tombstone({}, rid, entry["at"])
            else:
                new_rows[rid] = T.tombstone(new_rows.get(rid), rid, entry["at"])
                new_results = [r for r in new_results if r["run_id"] != rid]
            continue
        change: dict[str, Any] = {
            "moderation": entry["action"],
            "moderated_at": entry["at"],
            "hidden": entry["action"] == "hide",
        }
        with contextlib.suppress(OSError):
            run_json = layout.run_dir(rid, local.data_root) / runs.RUN_FILE
            change["run_json"] = run_json.read_text(encoding="utf-8")
        if rid in tabs.runs:
            updates[rid] = change
        elif rid in new_rows:
            new_rows[rid].update(change)
        else:
            continue  # not published yet: its run goes out hidden or shown as it is here
        hidden[rid] = change["hidden"]

    if runs_changed:
        table = T.update_runs(tabs.runs_table, updates, list(new_rows.values()))
        adds[H.RUNS_TABLE] = T.parquet_bytes(table)
        old = _old_results(client, remote, local, tabs)  # as the repo has it now
        adds[H.RESULTS_TABLE] = T.parquet_bytes(T.merge_results(old, drop, hidden, new_results))
    if runs_changed or H.MANIFEST not in remote.files:
        adds[H.MANIFEST] = manifest.to_bytes()
    rep.shards = {b: len(s) for b, s in manifest.shards.items()}

    if p.push_records:
        merged = dict(tabs.records)
        merged.update({k: v.decode() for k, v in p.push_records.items()})
        adds[H.SUBMISSIONS_TABLE] = T.parquet_bytes(
            T.rows_table(
                [
                    {"submission_id": k, "status": _status_of(v), "record": v}
                    for k, v in sorted(merged.items())
                ],
                T.SUBMISSIONS_SCHEMA,
            )
        )

    for name in p.push_benchmarks:
        d = layout.benchmark_dir(name, local.data_root)
        for f in (layout.SAMPLES_FILE, layout.META_FILE):
            adds[H.benchmark_file(name, f)] = d / f
    for name in p.push_reported:
        adds[f"{H.REPORTED}/{name}.csv"] = layout.reported_dir() / f"{name}.csv"
    l_jobs = local.jobs()
    for j in p.push_jobs:
        with contextlib.suppress(OSError):
            adds[H.job_file(j)] = l_jobs[j][1].read_bytes()

    card = H.CARD.replace("{repo}", client.repo).encode()
    if adds and remote.files.get(H.README) != blob_oid(card):
        adds[H.README] = card
    if list(adds) == [H.MANIFEST] and remote.layout() == 0 and not remote.files:
        return {}  # an empty repo and nothing to say
    return adds


def _published(local: Local, p: Plan) -> None:
    """After a commit: what it published is in step here too (the moderation actions, in the
    local log's order; the jobs, as the repo's copies; the reported tables, as a pull would
    write them)."""
    from evaluator.submissions import moderation

    moderation.mark_published(local.sub_root, p.push_moderation)
    if p.push_jobs:
        from evaluator.hub import queue as hub_queue

        l_jobs = local.jobs()
        for j in p.push_jobs:
            with contextlib.suppress(OSError, KeyError):
                hub_queue.remember_mirror(local.sub_root, j, l_jobs[j][1].read_bytes())
    if p.push_reported:
        into = layout.reported_dir(local.data_root)
        into.mkdir(parents=True, exist_ok=True)
        for name in p.push_reported:
            with contextlib.suppress(OSError):
                _atomic(into / f"{name}.csv", (layout.reported_dir() / f"{name}.csv").read_bytes())


def compact_at() -> int:
    """$FACTBOARD_HUB_COMPACT_AT (default COMPACT_AT): the most shards a benchmark keeps before
    a push compacts the repo; 0 turns that off (`hub compact` by hand only)."""
    try:
        return max(0, int(os.environ.get("FACTBOARD_HUB_COMPACT_AT", COMPACT_AT)))
    except ValueError:
        return COMPACT_AT


def _compact_if_due(client: HubClient, rep: Report) -> None:
    """After a push: when a benchmark has more shards than compact_at(), compact (what `hub
    compact` does, kill-safe: the merged shards and the manifest in one commit, then the old
    shards removed), so no shard folder grows without end. A compaction that fails is put off
    to a later push; the push itself has gone through."""
    limit = compact_at()
    over = sorted(b for b, n in rep.shards.items() if limit and n > limit)
    if not over:
        return
    from evaluator.hub import compact

    try:
        done = compact.compact(client, min_shards=limit + 1)
    except (HubError, T.TableError) as e:
        rep.notes.append(f"compaction of {', '.join(over)} put off: {e}")
        return
    if done.head:
        rep.head = done.head
    rep.notes.append(f"compacted: {done.summary()}")


def _status_of(record: str) -> str | None:
    with contextlib.suppress(ValueError, AttributeError):
        return str(json.loads(record).get("status"))
    return None


def _old_results(
    client: HubClient, remote: Remote, local: Local, tabs: RemoteTables
) -> pa.Table | None:
    """The repo's results table; when it is missing or unreadable, rebuilt from the runs rows."""
    if H.RESULTS_TABLE in remote.files:
        data = BLOBS.get(client, remote, [H.RESULTS_TABLE], local.cache / "blobs")[H.RESULTS_TABLE]
        try:
            return T.read_table(data, T.RESULTS_SCHEMA, H.RESULTS_TABLE)
        except T.TableError:
            pass
    return results_from_rows(tabs)


def results_from_rows(tabs: RemoteTables) -> pa.Table:
    """The results table rebuilt from the runs table's run.json texts."""
    out: list[dict[str, Any]] = []
    for rid, row in tabs.runs.items():
        text = tabs.run_json(rid)
        if row.get("deleted") or not text:
            continue
        with contextlib.suppress(ValueError, RecursionError, FactBoardError):
            rec = runs.validate_record(json.loads(text), rid)
            out += T.result_rows(rec.model_copy(update={"hidden": bool(row.get("hidden"))}))
    return T.rows_table(out, T.RESULTS_SCHEMA)


@dataclass
class Built:
    rows: list[tuple[dict[str, Any], Any]]  # (runs table row, RunRecord)
    files: dict[str, bytes | Path]  # new shard files
    shards: dict[str, dict[str, list[str]]]  # benchmark -> {shard id: kinds}


def build_runs(data_root: Path, run_ids: Iterable[str], notes: list[str]) -> Built:
    """The rows and new shards (one per benchmark and kind) of local run folders. A folder that
    does not read back as a valid run is left out, and said so."""
    by_bench: dict[str, list[tuple[str, Any, str, dict[str, pa.Table]]]] = {}
    for rid in run_ids:
        d = layout.run_dir(rid, data_root)
        try:
            rec = runs.read_record(d)
            text = (d / runs.RUN_FILE).read_text(encoding="utf-8")
            files: dict[str, pa.Table] = {}
            for kind in H.SHARD_KINDS:
                f = d / T.kind_file(kind)
                if f.is_file():
                    files[kind] = pq.read_table(f)
        except (FactBoardError, OSError, pa.ArrowException) as e:
            notes.append(f"run {rid} not published: {e}")
            continue
        by_bench.setdefault(rec.benchmark, []).append((rid, rec, text, files))
    out = Built([], {}, {})
    for bench, items in sorted(by_bench.items()):
        sid = T.new_shard_id()
        kinds_here: list[str] = []
        for kind in H.SHARD_KINDS:
            parts = [(rid, files[kind]) for rid, _, _, files in items if kind in files]
            if not parts:
                continue
            try:
                table = T.shard_table(kind, parts)
            except (pa.ArrowException, KeyError) as e:
                raise HubError(f"cannot build the {kind} shard of {bench}: {e}") from None
            size = runs.EVIDENCE_ROW_GROUP if kind == "evidence" else None
            out.files[H.shard_file(bench, kind, sid)] = T.parquet_bytes(table, size)
            kinds_here.append(kind)
        out.shards[bench] = {sid: kinds_here}
        for _rid, rec, text, files in items:
            row = T.run_row(rec, text, sid, [k for k in H.SHARD_KINDS if k in files])
            out.rows.append((row, rec))
    return out


def status(client: HubClient, data_root: Path | None = None, sub_root: Path | None = None) -> Plan:
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client, cache=local.cache)
        return plan(client, remote, local, reported=True)


def sync(
    client: HubClient, data_root: Path | None = None, sub_root: Path | None = None
) -> tuple[Report, Report | None]:
    """Pull, then push the outbox, from one snapshot of the repo (what the app does each poll).
    The outbox is computed before the pull, which never adds to it; a failed run or shard in
    the pull is skipped and listed, and the push goes on."""
    with _LOCK:
        local = Local.of(data_root, sub_root)
        remote = snapshot(client, cache=local.cache)
        p = plan(client, remote, local)
        try:
            pulled = _pull(client, remote, local, p)
        except HubError as e:  # what is local is published all the same
            if isinstance(e, HubAuthError):
                raise
            pulled = Report(remote.head, skipped=[*p.problems, f"the pull stopped: {e}"])
        pushed = _push(client, remote, local, p, "FactBoard: publish") if p.outbox() else None
        return pulled, pushed
