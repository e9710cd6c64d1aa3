"""`python -m evaluator hub migrate`: turn a results repo of layout 1 (one folder per run, a file
per moderation action, submission record and Every Eval Ever record) into layout 2 (tables and
shards, evaluator/hub/layout.py), in one commit.

Every old run folder is read as a local run folder is (evaluator.store.runs.read_record and the
Parquet schemas); one that fails is named and left out. A deleted run (moderation/<id>.json with
"delete") becomes a tombstone row. The commit adds the tables, shards and manifest and removes
runs/, moderation/, submissions/ and eee/, on the head that was read (another writer in between:
nothing is changed, run it again). Then the new layout is read back from the repo and checked
against the old one: the same live runs, each with the same run.json and the same per-sample
rows.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from evaluator.core.errors import FactBoardError
from evaluator.core.formatting import plural
from evaluator.hub import layout as H
from evaluator.hub import push as P
from evaluator.hub import remote as R
from evaluator.hub import tables as T
from evaluator.hub.client import HubClient, HubError, StaleHead
from evaluator.hub.local import public_record
from evaluator.store import layout, runs


@dataclass
class MigrateReport:
    runs: int = 0
    deleted: int = 0
    records: int = 0
    left_out: list[str] = field(default_factory=list)
    head: str = ""
    already: bool = False

    def summary(self) -> str:
        if self.already:
            return f"already in layout {H.LAYOUT_VERSION}: nothing to do"
        out = (
            f"{plural(self.runs, 'run')} and {plural(self.records, 'submission record')} moved "
            f"into tables, {self.deleted:,} deleted"
        )
        if self.left_out:
            out += f"; left out: {len(self.left_out):,}"
        return out


def migrate(client: HubClient, log: Callable[[str], None] | None = None) -> MigrateReport:
    say = log or (lambda m: None)
    rep = MigrateReport()
    remote = R.snapshot(client)
    if remote.layout() != 1:
        rep.already, rep.head = True, remote.head
        return rep
    with tempfile.TemporaryDirectory(prefix="factboard-migrate-") as tmp:
        root = Path(tmp) / "old"
        folders = remote.under(H.RUNS)
        rids = sorted(
            rid
            for rid, files in folders.items()
            if H.safe(rid) and layout.RUN_FILE in files and layout.PREDICTIONS_FILE in files
        )
        rep.left_out += [
            f"runs/{r}: not a plain name, or no run.json or predictions"
            for r in folders
            if r not in rids
        ]
        wanted = [
            H.run_file(rid, f)
            for rid in rids
            for f in folders[rid]
            if f in (layout.RUN_FILE, *(T.kind_file(k) for k in H.SHARD_KINDS))
        ]
        say(f"reading {plural(len(rids), 'run folder')} ({plural(len(wanted), 'file')})")
        if wanted:
            client.download(wanted, remote.head, root)
        mod = _moderation(client, remote)
        deleted = {rid for rid, e in mod.items() if e["action"] == "delete"}
        keep = [r for r in rids if r not in deleted]
        built = P.build_runs(root, keep, rep.left_out)
        rows: dict[str, T.RunRow] = {}
        results: list[T.ResultRow] = []
        for row, rec in built.rows:
            entry = mod.get(row["run_id"])
            if entry:
                row.update({"moderation": entry["action"], "moderated_at": entry["at"]})
            rows[row["run_id"]] = row
            results += T.result_rows(rec)
        for rid in sorted(deleted):
            rows[rid] = T.tombstone(None, rid, mod[rid]["at"])
        records = _records(client, remote, rep)
        manifest = T.Manifest(H.LAYOUT_VERSION, built.shards)
        adds: dict[str, bytes | Path] = dict(built.files)
        adds[H.RUNS_TABLE] = T.parquet_bytes(
            T.rows_table(sorted(rows.values(), key=lambda r: str(r["run_id"])), T.RUNS_SCHEMA)
        )
        adds[H.RESULTS_TABLE] = T.parquet_bytes(T.rows_table(results, T.RESULTS_SCHEMA))
        adds[H.SUBMISSIONS_TABLE] = T.parquet_bytes(
            T.rows_table(
                [
                    {"submission_id": k, "status": P.status_of(v), "record": v}
                    for k, v in sorted(records.items())
                ],
                T.SUBMISSIONS_SCHEMA,
            )
        )
        adds[H.MANIFEST] = manifest.to_bytes()
        adds[H.README] = H.CARD.replace("{repo}", client.repo).encode()
        gone = [d for d in (H.RUNS, H.MODERATION, H.SUBMISSIONS, H.EEE) if _has(remote, d)]
        try:
            rep.head = client.commit(
                adds,
                delete_folders=gone,
                message=f"FactBoard: migrate to layout {H.LAYOUT_VERSION} (tables)",
                parent=remote.head,
            )
        except StaleHead:
            raise HubError(
                "the results repo changed while it was being migrated; nothing was changed: "
                "run `hub migrate` again"
            ) from None
        rep.runs, rep.deleted, rep.records = len(built.rows), len(deleted), len(records)
        say(f"committed {rep.head[:10]}; checking the new layout against the old one")
        problems = verify(client, root, [row["run_id"] for row, _ in built.rows])
        if problems:
            raise HubError("the migrated repo differs from the old one: " + "; ".join(problems[:5]))
        shutil.rmtree(root, ignore_errors=True)
    return rep


def _has(remote: R.Remote, top: str) -> bool:
    return any(p.startswith(f"{top}/") for p in remote.files)


def _moderation(client: HubClient, remote: R.Remote) -> dict[str, dict[str, str]]:
    ids = {k: v for k, v in remote.flat(H.MODERATION, ".json").items() if H.safe(k)}
    blobs = R.fetch_all(client, remote.head, [H.moderation_file(r) for r in ids])
    out = {}
    for rid in ids:
        with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
            e = json.loads(blobs[H.moderation_file(rid)])
            if e["action"] in ("hide", "show", "delete"):
                out[rid] = {"action": str(e["action"]), "at": str(e["at"])}
    return out


def _records(client: HubClient, remote: R.Remote, rep: MigrateReport) -> dict[str, str]:
    ids = [k for k in remote.flat(H.SUBMISSIONS, ".json") if H.safe(k)]
    blobs = R.fetch_all(client, remote.head, [H.record_file(s) for s in ids])
    out = {}
    for sid in ids:
        try:
            rec = json.loads(blobs[H.record_file(sid)])
            if not isinstance(rec, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError) as e:
            rep.left_out.append(f"submissions/{sid}.json: {e}")
            continue
        out[sid] = public_record(rec).decode()
    return out


def verify(client: HubClient, old_root: Path, run_ids: list[str]) -> list[str]:
    """What differs between the old run folders and the repo's tables at its head."""
    remote = R.snapshot(client)
    tabs = R.load_tables(client, remote)
    problems = list(tabs.problems)
    live = {rid for rid, r in tabs.runs.items() if not r.get("deleted")}
    if live != set(run_ids):
        problems.append(f"runs differ: {sorted(live ^ set(run_ids))[:5]}")
    by_shard: dict[tuple[str, str], list[str]] = {}
    for rid in sorted(live & set(run_ids)):
        row = tabs.runs[rid]
        try:
            new = runs.validate_record(json.loads(tabs.run_json(rid) or "null"), rid)
            old = runs.read_record(layout.run_dir(rid, old_root))
        except (FactBoardError, ValueError, TypeError) as e:
            problems.append(f"run {rid}: {e}")
            continue
        if new != old:
            problems.append(f"run {rid}: run.json differs")
        by_shard.setdefault((str(row["benchmark"]), str(row["shard"])), []).append(rid)
    for (bench, sid), rids in by_shard.items():
        for kind in tabs.manifest.shards.get(bench, {}).get(sid, []):
            path = H.shard_file(bench, kind, sid)
            got = T.read_shard(client.fetch(path, remote.head), kind, set(rids), path)
            for rid in rids:
                f = layout.run_dir(rid, old_root) / T.kind_file(kind)
                want = pq.read_table(f).select(T.kind_schema(kind).names) if f.is_file() else None
                have = got.get(rid)
                if (want is None) != (have is None) or (
                    want is not None
                    and have is not None
                    and not have.equals(want.cast(T.kind_schema(kind)))
                ):
                    problems.append(f"run {rid}: {kind} rows differ")
    return problems
