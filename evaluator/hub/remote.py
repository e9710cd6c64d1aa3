"""The results repo as it is read: the head and its file listing (`snapshot`), repo files by
content id (`Blobs`, in memory and under <data root>/_hub/blobs), and the manifest, runs and
submissions tables parsed defensively (`load_tables`): a row whose names are not plain, whose
shard the manifest lacks, or a submission record that is not one a replica publishes, is set
aside with why, never the end of a read. The lowest layer of the Hub code above the client: it
imports nothing of the plan, the pull, the push or the checks of content.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc

from evaluator.hub import layout as H
from evaluator.hub import tables as T
from evaluator.hub.client import HubClient, HubError
from evaluator.store import atomic
from evaluator.submissions.records import TERMINAL

MAX_RACES = 20  # tries of a commit whose head moved (412) before giving up


class LayoutError(HubError):
    """The results repo is in a layout this FactBoard does not read."""


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
                        atomic.write_bytes(disk / oid, data, fsync=False)
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
                atomic.write_bytes(cache / "tree.json", json.dumps(body).encode(), fsync=False)
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
    runs: dict[str, T.RunRow]  # run_id -> row (no run_json; has_json instead)
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
    rows: list[T.RunRow] = []
    try:
        if H.RUNS_TABLE in blobs:
            table = T.read_table(blobs[H.RUNS_TABLE], T.RUNS_SCHEMA, H.RUNS_TABLE)
            out.runs_table = table
            rows = cast(list[T.RunRow], table.drop_columns(["run_json"]).to_pylist())
            for row, has in zip(rows, pc.is_valid(table["run_json"]).to_pylist(), strict=True):
                row["has_json"] = bool(has)
    except T.TableError as e:
        problems.append(str(e))
        out.runs_readable = False
        rows = []
    if rebuild:
        manifest_from_rows(manifest, rows, remote)
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
        if not H.safe(str(sid or "")) or not body:
            problems.append(f"submissions table: record {sid!r} skipped")
            continue
        why = record_problem(str(sid), str(body))
        if why:
            problems.append(f"submissions table: record {sid} skipped ({why})")
            continue
        out.records[str(sid)] = str(body)
    return out


def _row_problem(row: T.RunRow, manifest: T.Manifest) -> str | None:
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


def manifest_from_rows(manifest: T.Manifest, rows: list[T.RunRow], remote: Remote) -> None:
    """Fill an empty manifest (one that could not be read) with the shards the runs table's rows
    name and the repo has: what a pull needs; a push then writes it again."""
    for row in rows:
        bench, shard = str(row.get("benchmark") or ""), str(row.get("shard") or "")
        if not (H.safe(bench) and H.safe(shard)):
            continue
        kinds = [k for k in H.SHARD_KINDS if H.shard_file(bench, k, shard) in remote.files]
        if "predictions" in kinds:
            manifest.shards.setdefault(bench, {})[shard] = kinds


def record_problem(sid: str, body: str) -> str | None:
    """Why a submission record of the repo is not pulled (None when it may be)."""
    try:
        rec = json.loads(body)
    except (ValueError, RecursionError):
        return "not JSON"
    if not isinstance(rec, dict):
        return "not a JSON object"
    if rec.get("id") != sid:
        return "its id is not its row's"
    if rec.get("status") not in TERMINAL:  # only finished records are published
        return f"status {str(rec.get('status'))[:40]!r} is not one a published record has"
    if not isinstance(rec.get("meta", {}), dict):
        return "its metadata is not an object"
    return None


def fetch_all(client: HubClient, head: str, paths: Iterable[str]) -> dict[str, bytes]:
    items = list(paths)
    if not items:
        return {}
    with ThreadPoolExecutor(max_workers=min(8, len(items))) as pool:
        return dict(zip(items, pool.map(lambda p: client.fetch(p, head), items), strict=True))
