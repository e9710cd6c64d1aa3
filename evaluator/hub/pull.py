"""The pull side of a plan: benchmarks, reported tables, runs, moderation, submission records,
reproduction outcomes and jobs from the results repo into the local roots. A pulled run is
checked as a local write is, and scored again from its predictions (evaluator/hub/checks.py),
before the runs of a shard are written in one pass (evaluator.store.runs.write_runs). What fails
a check is skipped, listed in the report and remembered by content (evaluator/hub/rejected.py).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from typing import TYPE_CHECKING

import pyarrow as pa

from evaluator.core.errors import FactBoardError
from evaluator.hub import checks, mirror, rejected
from evaluator.hub import layout as H
from evaluator.hub import remote as R
from evaluator.hub import tables as T
from evaluator.hub.client import HubClient, HubError, blob_oid
from evaluator.hub.local import Local
from evaluator.hub.plan import Plan, Report
from evaluator.hub.remote import Remote, RemoteTables
from evaluator.store import atomic, layout, pulled, runs

if TYPE_CHECKING:
    import pandas as pd

    from evaluator.core.types import RunRecord

WRITERS = 4  # threads writing pulled run folders
MANY_RUNS = 500  # from this many pulled runs, the cycle collector waits until they are written
# a shard's runs are checked and written this many at a time: their validated records are held
# for one chunk, not for the whole shard (about 54 MB per 1,000 runs against 540 MB per 10,000)
CHUNK = 1000


def pull_plan(
    client: HubClient, remote: Remote, local: Local, p: Plan, defer: bool = False
) -> Report:
    """Carry out the pull side of a plan made on `remote.head`; returns what changed. defer:
    the checked runs of each shard are kept as one pack (evaluator/store/pulled.py) instead of
    a folder each, to be written as folders later (evaluator.store.runs.materialize)."""
    rep = Report(remote.head, skipped=list(p.problems))
    _clear_stale_staging(local)
    _pull_files(client, remote, local, p, rep)

    assert p.tables is not None
    checks.withdraw(local.data_root, local.sub_root, p.withdraw, rep.notes)
    rep.pulled["runs"] = _pull_runs(client, remote, local, p.tables, p.pull_runs, rep, defer)
    if p.pull_runs:  # what failed is remembered by content, not downloaded again
        have = local.run_ids()
        rejected.remember_runs(local.cache, p.tables, remote, p.pull_runs, have, rep.skipped)

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
            atomic.write_bytes(rec_dir / f"{sid}.json", p.tables.records[sid].encode(), fsync=False)
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
        rejected.remember(local.cache, "verification", failed_outcomes, set(p.tables.records))
    rep.pulled["reproduction outcomes"] = len(p.apply_verification)

    bad: dict[str, tuple[str, str]] = {}
    if p.pull_jobs:
        blobs = R.BLOBS.get(client, remote, [H.job_file(j) for j in p.pull_jobs])
        for j in p.pull_jobs:
            why = checks.job_problem(j, blobs[H.job_file(j)])
            if why:
                bad[j] = (remote.files[H.job_file(j)], f"job {j} skipped: {why}")
                rep.skipped.append(bad[j][1])
                continue
            mirror.mirror_job(local.sub_root, j, blobs[H.job_file(j)])
        rejected.remember(local.cache, "jobs", bad, set(remote.flat(H.QUEUE, ".json")))
    rep.pulled["jobs"] = len(p.pull_jobs) - len(bad)
    rejected.save_last_pull(local.cache, remote.head, rep.skipped)
    _prune_cache(local, remote)
    return rep


def _pull_files(client: HubClient, remote: Remote, local: Local, p: Plan, rep: Report) -> None:
    """The benchmarks and reported tables of the plan, each checked in a staging folder before
    it replaces the local copy."""
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
                failed[name] = (rejected.benchmark_key(remote, name), f"benchmark {name}: {why}")
                rep.skipped.append(failed[name][1])
                continue
            # another process (the worker beside the app) may be swapping the same benchmark
            with contextlib.suppress(OSError):
                if target.exists():
                    os.rename(target, staging / f"old-{name}")
                os.rename(staging / H.BENCHMARKS / name, target)
                n += 1
        rep.pulled["benchmarks"] = n
        rejected.remember(local.cache, "benchmarks", failed, set(remote.under(H.BENCHMARKS)))
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
            live = set(remote.flat(H.REPORTED, ".csv"))
            rejected.remember(local.cache, "reported", bad_csv, live)
        rep.pulled["reported tables"] = len(p.pull_reported) - len(bad_csv)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _pull_runs(
    client: HubClient,
    remote: Remote,
    local: Local,
    tabs: RemoteTables,
    run_ids: list[str],
    rep: Report,
    defer: bool = False,
) -> int:
    """Write the runs as local run folders (or packs: defer) from their rows and shards (one
    shard at a time: each file downloaded once, in one request; its runs CHUNK at a time,
    so a shard's validated records are not all held at once). Returns how many were
    written. Thousands of records and tables at once: the cycle collector, which would rescan
    them all again and again, waits until they are written."""
    with pulled.collector_paused(len(run_ids) >= MANY_RUNS):
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
                rep.skipped.append(f"shard {bench}/{shard}: {e}; its runs {rejected.AGAIN}")
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

            for at in range(0, len(rids), CHUNK):
                n += _write_group(local, tabs, rids[at : at + CHUNK], parts, rep, defer)
        return n


def _write_group(
    local: Local,
    tabs: RemoteTables,
    rids: list[str],
    parts: dict[str, dict[str, pa.Table]],
    rep: Report,
    defer: bool = False,
) -> int:
    """The runs of one shard as run folders: each record checked as a local write is
    (`_pulled_record`), then written in one pass (evaluator.store.runs.write_runs: one flush to
    disk for all of them); a run with evidence goes through write_run, which checks evidence row
    by row. Returns how many were written."""
    checked: list[tuple[str, RunRecord, str | None, bool]] = []
    items: list[tuple[RunRecord, pa.Table, pa.Table | None]] = []
    for rid in rids:
        try:
            text = tabs.run_json(rid)
            rec, hidden_in_text = _pulled_record(tabs.runs[rid], text)
            preds = parts["predictions"].get(rid)
            if preds is None:
                raise FactBoardError("no predictions in its shard")
            item = (rec, preds, parts.get("grades", {}).get(rid))
        except (ValueError, RecursionError, TypeError, FactBoardError, pa.ArrowException) as e:
            rep.skipped.append(f"run {rid} skipped ({H.RUNS_TABLE}:{rid}): {e}")
            continue
        checked.append((rid, rec, text, hidden_in_text))
        items.append(item)
    # their numbers must follow from their predictions and this replica's benchmark
    bulk: list[runs.BulkRun] = []
    one_by_one: list[tuple[RunRecord, dict[str, pa.Table]]] = []
    for (rid, rec, text, hidden_in_text), why in zip(
        checked, checks.run_problems(items, local.data_root), strict=True
    ):
        if why:
            rep.skipped.append(f"run {rid} skipped ({H.RUNS_TABLE}:{rid}): {why}")
            continue
        files = {T.kind_file(k): p[rid] for k, p in parts.items() if rid in p}
        if T.kind_file("evidence") in files:
            one_by_one.append((rec, files))
        else:  # the text is written as is when the record is the one validated from it
            bulk.append(
                runs.BulkRun(rid, rec, text if rec.hidden == hidden_in_text else None, files)
            )
    n = 0
    if bulk:
        try:
            if defer:
                done, failed = runs.pack_runs(bulk, local.data_root)
            else:
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


def _pulled_record(row: T.RunRow, text: str | None) -> tuple[RunRecord, bool]:
    """A pulled row's run.json as a RunRecord, checked as a local write is (validate_record)
    and against its row, with the row's moderation state; and `hidden` as run.json said it."""
    rid = str(row["run_id"])
    if not text:
        raise FactBoardError("no run.json in its row")
    rec = runs.validate_record_text(text, rid)
    if rec.benchmark != row.get("benchmark"):
        raise FactBoardError(f"run.json names benchmark {rec.benchmark!r}, its row another")
    hidden, said = bool(row.get("hidden")), bool(rec.hidden)
    return (rec if said == hidden else rec.model_copy(update={"hidden": hidden})), said


def _write_pulled(local: Local, rec: RunRecord, files: dict[str, pa.Table], rep: Report) -> bool:
    """One pulled run, written through the store's own checks (write_run)."""
    rid = rec.run_id

    def frame(kind: str) -> pd.DataFrame | None:
        t = files.get(T.kind_file(kind))
        return None if t is None else t.to_pandas()

    try:
        preds = frame("predictions")
        if preds is None:
            raise FactBoardError("no predictions in its shard")
        runs.write_run(
            rec,
            preds,
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
    d = layout.staging_dir(local.data_root)
    if not d.is_dir():
        return
    for old in [*d.glob("hub-pull-*"), *d.glob("pack.*"), *d.glob("pack-done.*")]:
        with contextlib.suppress(OSError):
            if time.time() - old.stat().st_mtime > older_than:
                shutil.rmtree(old, ignore_errors=True)
