"""The push side of a plan: what the local root has and the repo lacks, in one commit made on the
head the plan was computed from (412: computed again on the new head). New runs go into one new
shard per benchmark and kind (`build_runs`); the runs and results tables and the manifest are
rewritten with them; a push that leaves a benchmark more than `compact_at()` shards compacts the
repo (evaluator/hub/compact.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.core.errors import FactBoardError
from evaluator.core.types import RunRecord
from evaluator.hub import layout as H
from evaluator.hub import mirror
from evaluator.hub import remote as R
from evaluator.hub import tables as T
from evaluator.hub.client import HubClient, HubError, StaleHead, blob_oid
from evaluator.hub.local import Local
from evaluator.hub.plan import Plan, Report, plan
from evaluator.hub.remote import MAX_RACES, Remote, RemoteTables
from evaluator.store import atomic, evidence_file, layout, runs

COMPACT_AT = 64  # a push that leaves a benchmark more shards than this compacts the repo


def push_plan(
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
                remote = R.snapshot(client, cache=local.cache)
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
    new_rows: dict[str, T.RunRow] = {}  # runs the table lacks
    updates: dict[str, T.RunRow] = {}  # run id -> changed cells of its row
    new_results: list[T.ResultRow] = []
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
        change: T.RunRow = {
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
        hidden[rid] = entry["action"] == "hide"

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
                    {"submission_id": k, "status": status_of(v), "record": v}
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
        l_jobs = local.jobs()
        for j in p.push_jobs:
            with contextlib.suppress(OSError, KeyError):
                mirror.remember_mirror(local.sub_root, j, l_jobs[j][1].read_bytes())
    if p.push_reported:
        into = layout.reported_dir(local.data_root)
        into.mkdir(parents=True, exist_ok=True)
        for name in p.push_reported:
            with contextlib.suppress(OSError):
                data = (layout.reported_dir() / f"{name}.csv").read_bytes()
                atomic.write_bytes(into / f"{name}.csv", data, fsync=False)


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


def status_of(record: str) -> str | None:
    with contextlib.suppress(ValueError, AttributeError):
        return str(json.loads(record).get("status"))
    return None


def _old_results(
    client: HubClient, remote: Remote, local: Local, tabs: RemoteTables
) -> pa.Table | None:
    """The repo's results table; when it is missing or unreadable, rebuilt from the runs rows."""
    if H.RESULTS_TABLE in remote.files:
        got = R.BLOBS.get(client, remote, [H.RESULTS_TABLE], local.cache / "blobs")
        data = got[H.RESULTS_TABLE]
        try:
            return T.read_table(data, T.RESULTS_SCHEMA, H.RESULTS_TABLE)
        except T.TableError:
            pass
    return results_from_rows(tabs)


def results_from_rows(tabs: RemoteTables) -> pa.Table:
    """The results table rebuilt from the runs table's run.json texts."""
    out: list[T.ResultRow] = []
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
    rows: list[tuple[T.RunRow, RunRecord]]  # (runs table row, its record)
    files: dict[str, bytes | Path]  # new shard files
    shards: dict[str, dict[str, list[str]]]  # benchmark -> {shard id: kinds}


def build_runs(data_root: Path, run_ids: Iterable[str], notes: list[str]) -> Built:
    """The rows and new shards (one per benchmark and kind) of local run folders. A folder that
    does not read back as a valid run is left out, and said so."""
    by_bench: dict[str, list[tuple[str, RunRecord, str, dict[str, pa.Table]]]] = {}
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
            size = evidence_file.EVIDENCE_ROW_GROUP if kind == "evidence" else None
            out.files[H.shard_file(bench, kind, sid)] = T.parquet_bytes(table, size)
            kinds_here.append(kind)
        out.shards[bench] = {sid: kinds_here}
        for _rid, rec, text, files in items:
            row = T.run_row(rec, text, sid, [k for k in H.SHARD_KINDS if k in files])
            out.rows.append((row, rec))
    return out
