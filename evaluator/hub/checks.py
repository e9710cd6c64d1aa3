"""What a replica checks in what it reads from the results repo, and what it does with what fails.

The results repo is written by every replica with a write token (the Space, maintainers' machines,
remote workers), so a replica trusts nothing it reads there: a row, a shard, a benchmark or a job
could come from an older FactBoard, a bug, a clock that is wrong, or a token in the wrong hands.
Each is checked before it reaches the local data root; what fails is skipped, listed (the pull's
`skipped`, `hub status`, `python -m evaluator doctor`) and remembered by its content
(evaluator/hub/rejected.py), so it is not downloaded again until the repo changes it. Nothing
that fails a check stops the rest of the pull or the push that follows it.

- sizes: every download is capped (evaluator.hub.client.max_bytes; `$FACTBOARD_HUB_MAX_BYTES`
  for tables, shards and samples, smaller fixed caps for JSON and CSV files); the error names the
  file and the cap;
- names: every path segment is a plain name (evaluator.hub.layout.safe), checked where the rows
  and the manifest are read (evaluator.hub.remote), as are the submission records;
- runs: run.json through the store's record check, then `run_problems`: its numbers must follow
  from its predictions and the benchmark's samples (evaluator.verify; the runs of a shard
  together, against the benchmark prepared once), before anything is written;
- benchmarks: `benchmark_problem`: a registered name, a valid benchmark.json, samples with the
  sample schema whose content hash is the version claimed; a local benchmark is replaced only by
  one that passes;
- duplicates: `duplicates` finds a local submission that repeats a run the repo already has (the
  same file, the same scored predictions, or the same model name on the same benchmark version):
  the run already in the repo wins (commit order), the local one is withdrawn.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from evaluator.core.errors import FactBoardError
from evaluator.hub.client import HubClient, HubError, TooLarge
from evaluator.hub.rejected import AGAIN

if TYPE_CHECKING:
    from evaluator.core.types import RunRecord
    from evaluator.hub.remote import RemoteTables
    from evaluator.verify import Reference


def fetch_each(
    client: HubClient, head: str, paths: Iterable[str], skipped: list[str]
) -> dict[str, bytes]:
    """The files that can be read, each on its own: one that is too large or missing is left
    out and listed (`skipped`), and the others are still read."""
    items = list(paths)
    if not items:
        return {}

    def one(path: str) -> bytes | str:
        try:
            return client.fetch(path, head)
        except TooLarge as e:
            return str(e)
        except HubError as e:
            if "404" in str(e):
                return str(e)
            raise

    with ThreadPoolExecutor(max_workers=min(8, len(items))) as pool:
        got = list(pool.map(one, items))
    out = {}
    for path, data in zip(items, got, strict=True):
        if isinstance(data, bytes):
            out[path] = data
        else:
            skipped.append(f"{path} skipped: {data}")
    return out


# --------------------------------------------------------------------------------------------
# jobs and reported tables


def job_problem(job_id: str, data: bytes) -> str | None:
    """Why a job file of the repo is not mirrored here (None when it may be)."""
    from evaluator.jobs import queue

    try:
        job = queue.Job.from_dict(json.loads(data), f"queue/{job_id}.json")
    except (ValueError, RecursionError, TypeError, FactBoardError) as e:
        return str(e).splitlines()[0][:300] if str(e) else "not a job"
    if job.id != job_id:
        return "its id is not its file name"
    if job.status not in queue.STATES:
        return f"status {str(job.status)[:40]!r} is not a queue state"
    return None


def reported_problem(path: Path) -> str | None:
    """Why a pulled reported table is not written here (None when it may be): missing (too
    large), unreadable, without the required columns, or with values that are not numbers."""
    from evaluator.store.doctor import reported_problem as problem

    if not path.is_file():
        return "not downloaded"
    return problem(path)


# --------------------------------------------------------------------------------------------
# benchmarks


def benchmark_problem(name: str, folder: Path) -> str | None:
    """Why a pulled benchmark folder must not replace the local one (None when it may)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evaluator.benchmarks import registry
    from evaluator.core.types import SAMPLE_SCHEMA
    from evaluator.ingest.pipeline import version_of
    from evaluator.store import ingested, layout
    from evaluator.store.doctor import check_parquet

    if name not in set(registry.names()):
        return "not a registered benchmark name"
    meta_file = folder / layout.META_FILE
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{layout.META_FILE} is missing"
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        return f"{layout.META_FILE} is not valid JSON ({e})"
    why = ingested.meta_problem(meta)
    if why:
        return f"{layout.META_FILE}: {why}"
    if meta.get("name", name) != name:
        return f"{layout.META_FILE} names benchmark {str(meta.get('name'))[:60]!r}"
    why = check_parquet(folder / layout.SAMPLES_FILE, SAMPLE_SCHEMA)
    if why:
        return why
    try:
        table = pq.read_table(folder / layout.SAMPLES_FILE).select(SAMPLE_SCHEMA.names)
        got = version_of(table.cast(SAMPLE_SCHEMA))
    except (OSError, pa.ArrowException, KeyError, ValueError) as e:
        return f"{layout.SAMPLES_FILE} cannot be read as samples ({e})"
    if got != meta["version"]:
        return (
            f"{layout.SAMPLES_FILE} is not the version its {layout.META_FILE} claims "
            f"({meta['version']}; its content is {got})"
        )
    others = set(table["benchmark"].to_pylist()) - {name}
    if others:
        return f"{layout.SAMPLES_FILE} holds samples of {sorted(map(str, others))[:3]}"
    return None


# --------------------------------------------------------------------------------------------
# runs


_BENCH_CACHE: dict[tuple[str, str, int], Reference] = {}
_BENCH_LOCK = threading.Lock()


def _reference(name: str, root: Path) -> Reference:
    """A local benchmark prepared for checking runs against it, once per content (many pulled
    runs share one benchmark)."""
    from evaluator.store import layout
    from evaluator.verify import Reference

    meta_file = layout.benchmark_dir(name, root) / layout.META_FILE
    try:
        stamp = meta_file.stat().st_mtime_ns
    except OSError:
        stamp = -1
    key = (str(root), name, stamp)
    with _BENCH_LOCK:
        hit = _BENCH_CACHE.get(key)
        if hit is None:
            hit = Reference.load(name, root)
            if len(_BENCH_CACHE) > 8:
                _BENCH_CACHE.clear()
            _BENCH_CACHE[key] = hit
    return hit


def run_problems(
    items: list[tuple[RunRecord, pa.Table, pa.Table | None]], root: Path
) -> list[str | None]:
    """For each pulled run (its record, predictions and grades as read from their shards; the
    runs of one shard), why it must not be written (None when it may): its numbers do not
    follow from its predictions and this replica's copy of the benchmark, which is prepared
    once for all of them (evaluator.verify.verify_records). A run of another version of a
    benchmark this replica has cannot be checked here: it waits (not remembered as failed, so
    each pull tries it again) until that version is here, since naming a version nobody has
    must not skip the check. A run of a benchmark this replica does not have at all is let
    through (no page shows it until the benchmark arrives; the doctor checks it then)."""
    from evaluator.verify import verify_records

    out: list[str | None] = [None] * len(items)
    by_bench: dict[str, list[int]] = {}
    for i, (rec, _, _) in enumerate(items):
        by_bench.setdefault(rec.benchmark, []).append(i)
    for name, where in by_bench.items():
        try:
            reference = _reference(name, root)
        except FactBoardError:
            continue
        try:
            whys = [_why(f) for f in verify_records([items[i] for i in where], reference)]
        except (ValueError, RecursionError, TypeError, FactBoardError, pa.ArrowException):
            whys = [_one(items[i], reference) for i in where]  # which run: one by one
        for i, why in zip(where, whys, strict=True):
            out[i] = why
    return out


def _one(item: tuple[RunRecord, pa.Table, pa.Table | None], reference: Reference) -> str | None:
    """One run's check, its own error as the reason."""
    from evaluator.verify import verify_records

    try:
        return _why(verify_records([item], reference)[0])
    except (ValueError, RecursionError, TypeError, FactBoardError, pa.ArrowException) as e:
        return str(e)


def _why(found: list[str]) -> str | None:
    unchecked = [p for p in found if "cannot be checked" in p]
    if unchecked:
        return f"{unchecked[0]} ({AGAIN})"
    if not found:
        return None
    return "its numbers do not follow from its predictions: " + "; ".join(found)


# --------------------------------------------------------------------------------------------
# duplicates across replicas


_FINGERPRINTS = ("file_sha256", "predictions_sha", "labels_sha", "scores_sha")


def _rows_containing(tabs: RemoteTables, needles: set[str]) -> set[str]:
    """Run ids whose run.json text contains one of `needles` (in Arrow: no text is parsed)."""
    import pyarrow.compute as pc

    from evaluator.store.pulled import re2_literal

    table = tabs.runs_table
    if table is None or not needles or not len(table):
        return set()
    # one pass over the texts for every needle (a search per needle read them all each time)
    pattern = "|".join(re2_literal(n) for n in sorted(needles))
    mask = pc.fill_null(pc.match_substring_regex(table["run_json"], pattern), False)
    ids = table["run_id"].filter(mask).to_pylist()
    return {str(i) for i in ids if i is not None}


def duplicates(tabs: RemoteTables, data_root: Path, push_runs: list[str]) -> dict[str, str]:
    """Local submitted runs about to be published that repeat a run the repo already has (the
    same file or predictions, the same scored labels or scores, or the same model name, on the
    same benchmark): run id -> why. The run already in the repo came first in commit order and
    stays; the local one is withdrawn."""
    from evaluator.core.vocabulary import model_key
    from evaluator.store import layout, runs

    mine: dict[str, RunRecord] = {}
    for rid in push_runs:
        with contextlib.suppress(FactBoardError, OSError):
            rec = runs.read_record(layout.run_dir(rid, data_root))
            if rec.origin == "submitted" and rec.submission:
                mine[rid] = rec
    if not mine:
        return {}
    benches = {r.benchmark for r in mine.values()}
    names = {model_key(r.model.name) for r in mine.values()}
    needles = {
        str(v)
        for r in mine.values()
        for k in _FINGERPRINTS
        if (v := (r.submission or {}).get(k)) and len(str(v)) >= 16
    }
    hits = _rows_containing(tabs, needles)  # only these run.json texts are parsed
    theirs: list[tuple[str, dict[str, Any]]] = []
    for rid, row in tabs.runs.items():
        if row.get("deleted") or row.get("benchmark") not in benches or rid in mine:
            continue
        if rid not in hits and model_key(str(row.get("model_name") or "")) not in names:
            continue
        with contextlib.suppress(ValueError, RecursionError, TypeError):
            body = json.loads(tabs.run_json(rid) or "null")
            if isinstance(body, dict):
                theirs.append((rid, body))
    out: dict[str, str] = {}
    for rid, rec in mine.items():
        sub = rec.submission or {}
        name = model_key(rec.model.name)
        for other, body in theirs:
            if body.get("benchmark") != rec.benchmark:
                continue
            if other == rec.supersedes or body.get("supersedes") == rid:
                continue  # a judged copy, not a second submission
            osub = body.get("submission") or {}
            same_version = body.get("benchmark_version") == rec.benchmark_version
            model = body.get("model") or {}
            why = None
            for k in ("file_sha256", "predictions_sha"):
                if sub.get(k) and osub.get(k) == sub.get(k):
                    why = "the same predictions"
            for k in ("labels_sha", "scores_sha"):
                if why is None and same_version and sub.get(k) and osub.get(k) == sub.get(k):
                    why = "the same scored predictions"
            if why is None and same_version and model_key(str(model.get("name", ""))) == name:
                why = f"the same model name ({rec.model.name!r})"
            if why:
                out[rid] = (
                    f"duplicate submission: run {rid} repeats run {other}, published from "
                    f"another replica first ({why} on {rec.benchmark})"
                )
                break
    return out


def withdraw(data_root: Path, sub_root: Path, found: dict[str, str], notes: list[str]) -> None:
    """Remove local duplicates (found by `duplicates`) before they are published: the run folder
    goes, its submission record is marked rejected with the reason, its raw upload is deleted."""
    from evaluator.store import layout, runs
    from evaluator.submissions.records import read_submission, save_record, upload_path

    for rid, why in found.items():
        sid = None
        with contextlib.suppress(FactBoardError, OSError):
            rec = runs.read_record(layout.run_dir(rid, data_root))
            sid = (rec.submission or {}).get("submission_id")
        with contextlib.suppress(FactBoardError, OSError):
            runs.delete_run(rid, data_root)
        if sid:
            with contextlib.suppress(FactBoardError, ValueError, OSError):
                sub = read_submission(sid, sub_root)
                save_record(sub_root, sub, status="rejected", run_id=None, problems=[why])
            with contextlib.suppress(FactBoardError, OSError):
                upload_path(sid, sub_root).unlink(missing_ok=True)
        notes.append(why)
