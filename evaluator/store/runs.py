"""Run folders: leaderboard_data/runs/<run_id>/{run.json, predictions.parquet[, grades.parquet,
labels.parquet, evidence.parquet]}.

- run.json: the RunRecord (evaluator.core.types): model, threshold, counts, per-slice results.
- predictions.parquet: the predictions as given (PREDICTION_COLUMNS), one row per sample.
- grades.parquet: explanation grades (GRADE_COLUMNS), when the run has any.
- labels.parquet: the final labels the scorer scored with (LABEL_COLUMNS): one row per
  prediction in the scored splits, with `final_label` the threshold applied (or the label as
  given; null when the prediction has no usable label) and `score` the score it came from; and,
  for sentence predictions on a benchmark that also has summaries, one row per summary with at
  least one predicted sentence (`rolled` true: inconsistent if any sentence is, score = the
  lowest sentence score, null when a sentence has none). A separate file keeps
  predictions.parquet exactly what was submitted and gives rolled-up summaries, which have no
  prediction row, a place. Runs written before labels were stored have no labels.parquet:
  readers then make them with evaluator.core.scoring.final_labels (the same rule, from the
  predictions and the stored threshold).
- evidence.parquet: why a detector scored each pair as it did, written only when at least one
  pair has evidence (its schema, check and reader: evaluator.store.evidence_file). Runs stored
  before evidence was, and detectors that give none, have no such file.

A run is built in a staging folder outside the runs/ glob and renamed into place when complete, so
a reader never sees half a run and a crash leaves nothing on the board. Everything written goes
through the one redaction (evaluator.core.sanitize: no API key or token of the environment in
run.json or a Parquet text column) and run.json is strict JSON (no bare NaN or Infinity).

One validation for every way a run record enters the store or the board: `validate_record`
(the RunRecord model of evaluator.core.types, with its limits, and the folder name); `read_record`
(the CLI, the engine) and the read side both call it, so the app rejects exactly what the CLI
rejects. Runs are immutable; the
only later change is moderation (hidden), which rewrites run.json atomically. File names come
from evaluator.store.layout; docs/ARCHITECTURE.md describes the contract.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from evaluator.core.errors import CorruptRunError, FactBoardError
from evaluator.core.sanitize import dumps_strict, redact, redact_tree, secrets_in_env
from evaluator.core.types import (
    GRADE_COLUMNS,
    GRADE_SCHEMA,
    LABEL_COLUMNS,
    LABEL_SCHEMA,
    PREDICTION_COLUMNS,
    PREDICTION_SCHEMA,
    RunRecord,
)
from evaluator.store import atomic, layout, pulled
from evaluator.store.evidence_file import EVIDENCE_ROW_GROUP, evidence_table
from evaluator.store.layout import (
    EVIDENCE_FILE,
    GRADES_FILE,
    LABELS_FILE,
    PREDICTIONS_FILE,
    RUN_FILE,
)

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{2,150}$")


def slug(text: str, max_len: int = 40) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (s[:max_len].strip("-")) or "model"


def new_run_id(benchmark: str, model_name: str, when: datetime | None = None) -> str:
    """<benchmark>-<model slug>-<UTC time>-<random>: unique, sortable, safe as a folder name."""
    when = when or datetime.now(UTC)
    return f"{slug(benchmark, 30)}-{slug(model_name)}-{when:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# text columns a model or a submitter fills: redacted before they are written
_FREE_TEXT = ("explanation", "raw_output", "rationale")


def _hint(secrets: list[str]) -> str:
    """A pattern found in every text that redaction would change (and in some it would not):
    the quick search before the redaction proper."""
    hint = "|".join([re.escape(x) for x in secrets] + [r"sk-", r"hf_", r"(?i:bearer)", r"(?i:key)"])
    return hint + r"|(?i:authorization)"


def _redact_column(col: pd.Series, secrets: list[str]) -> pd.Series:
    """The column with every cell that holds a secret (or something shaped like a key)
    redacted; cells without one are left as they are (a quick search first)."""
    hint = _hint(secrets)
    text = col.where(col.map(lambda v: isinstance(v, str)))
    hit = text.str.contains(hint, regex=True, na=False)
    if not hit.any():
        return col
    out = col.copy()
    out[hit] = [redact(v, secrets) for v in col[hit]]
    return out


def _table(df: pd.DataFrame, schema: pa.Schema, columns: tuple[str, ...]) -> pa.Table:
    df = df.copy()
    for c in columns:
        if c not in df.columns:
            df[c] = None
    df = df[list(columns)]
    secrets = secrets_in_env()
    for c in _FREE_TEXT:
        if c in df.columns and len(df):
            df[c] = _redact_column(df[c], secrets)
    return pa.Table.from_pandas(df, schema=schema, preserve_index=False)


def write_run(
    record: RunRecord,
    predictions: pd.DataFrame,
    grades: pd.DataFrame | None = None,
    root: Path | None = None,
    labels: pd.DataFrame | None = None,
    evidence: pd.DataFrame | None = None,
) -> Path:
    """Write a complete run folder atomically; returns its final path.

    labels: the final labels the scorer made (evaluator.core.scoring.Scored.final_labels).
    evidence: sample_id, split and evidence (a dict or its JSON; None where a pair has none);
    evidence.parquet is written when at least one pair has evidence."""
    if not _RUN_ID.match(record.run_id):
        raise FactBoardError(f"invalid run id {record.run_id!r}")
    runs = layout.runs_dir(root)
    final = runs / record.run_id
    # the one record check, as a reader will apply it (a model_copy(update=...) is not validated)
    data = redact_tree(record.model_dump(mode="json"))
    validate_record(data, final)
    if final.exists():
        raise FactBoardError(f"run {record.run_id} already exists; runs are immutable")
    ev_table = evidence_table(evidence) if evidence is not None else None
    runs.mkdir(parents=True, exist_ok=True)
    tmp = staging_path(record.run_id, root)
    tmp.mkdir()
    try:
        pq.write_table(
            _table(predictions, PREDICTION_SCHEMA, PREDICTION_COLUMNS), tmp / PREDICTIONS_FILE
        )
        if grades is not None and not grades.empty:
            pq.write_table(_table(grades, GRADE_SCHEMA, GRADE_COLUMNS), tmp / GRADES_FILE)
        if labels is not None:
            pq.write_table(_table(labels, LABEL_SCHEMA, LABEL_COLUMNS), tmp / LABELS_FILE)
        if ev_table is not None:
            pq.write_table(
                ev_table,
                tmp / EVIDENCE_FILE,
                compression="zstd",
                row_group_size=EVIDENCE_ROW_GROUP,
            )
        _write_json(tmp / RUN_FILE, data)
        _fsync_dir(tmp)
        os.rename(tmp, final)
        _fsync_dir(runs)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _redact_arrow(col: pa.ChunkedArray | pa.Array, secrets: list[str]) -> pa.Array:
    """_redact_column for an Arrow text column."""
    import pyarrow.compute as pc

    hit = pc.match_substring_regex(col, _hint(secrets)).fill_null(False)
    if not pc.any(hit).as_py():
        return col
    flags = hit.to_pylist()
    return pa.array(
        [redact(v, secrets) if f else v for v, f in zip(col.to_pylist(), flags, strict=True)],
        col.type,
    )


_BULK_SCHEMAS = {
    PREDICTIONS_FILE: PREDICTION_SCHEMA,
    LABELS_FILE: LABEL_SCHEMA,
    GRADES_FILE: GRADE_SCHEMA,
}


class BulkRun(NamedTuple):
    """A run for write_runs or pack_runs (evaluator/store/pulled.py): its id, its record, the
    strict JSON text the record was validated from (written as is when redaction has nothing
    to change in it; None: made from the record) and its per-sample files as Arrow tables. The
    record may be None: the text is then validated as it is written, unless this process
    validated that very text itself (evaluator.store.pulled.proven: a packed run written as a
    folder)."""

    run_id: str
    record: RunRecord | None
    text: str | None
    files: dict[str, pa.Table]


def _run_text(run: BulkRun, secrets: list[str], clean: bool) -> str:
    """A run's run.json text as write_runs writes it: checked and redacted (`clean`: its text
    has nothing to redact, pulled.clean_texts). A text given without its record is validated here
    unless this process validated that very text already (pulled.proven)."""
    if not _RUN_ID.match(run.run_id) or PREDICTIONS_FILE not in run.files:
        raise FactBoardError("not a valid run id, or no predictions")
    rec = run.record
    if rec is None:
        if run.text is None:
            raise FactBoardError("neither a record nor a run.json text")
        if not pulled.proven(run.run_id, run.text):
            rec = validate_record_text(run.text, run.run_id)
    if run.text is not None and clean:
        return run.text
    data = json.loads(run.text or "") if rec is None else rec.model_dump(mode="json")
    data = redact_tree(data, secrets)
    validate_record(data, run.run_id)  # the one check, as write_run makes it
    return dumps_strict(data, indent=1)


def _file_rows(name: str, table: pa.Table, secrets: list[str]) -> pa.Table:
    """A per-sample file's rows as write_run writes them: cast to the file's schema, with their
    free text redacted."""
    schema = _BULK_SCHEMAS[name]
    t = table.select(schema.names)
    if t.schema != schema:
        t = t.cast(schema)
    for c in _FREE_TEXT:  # a column of nulls has nothing to redact
        if c in t.column_names and t[c].null_count < len(t):
            at = t.schema.get_field_index(c)
            t = t.set_column(at, c, _redact_arrow(t[c], secrets))
    return t


_BULK_ERRORS = (FactBoardError, ValueError, KeyError, pa.ArrowException)


def _bulk_tables(
    runs: list[BulkRun], secrets: list[str]
) -> tuple[dict[str, pa.Table], dict[str, str]]:
    """Each kind of file of these runs as _file_rows makes it, the rows of all the runs in one
    table (in the runs' order: a pull's runs are slices of one shard, and a pass per run cost
    more than its rows), and {run id: why} for the runs that cannot be written, whose rows are
    left out. A pass that fails is made again run by run, so that the error names the run."""
    failed: dict[str, str] = {}
    for run in runs:
        other = sorted(set(run.files) - set(_BULK_SCHEMAS))
        if other:
            failed[run.run_id] = f"{other[0]} is not a file a run is written with here"
    while True:  # again without the runs that failed (their rows are in the kinds before)
        out: dict[str, pa.Table] = {}
        again = False
        for name in _BULK_SCHEMAS:
            have = [r.files[name] for r in runs if name in r.files and r.run_id not in failed]
            if not have:
                continue
            try:
                out[name] = _file_rows(name, pa.concat_tables(have), secrets)
                continue
            except _BULK_ERRORS:  # which run: one by one
                pass
            parts = []
            for r in runs:
                if name in r.files and r.run_id not in failed:
                    try:
                        parts.append(_file_rows(name, r.files[name], secrets))
                    except _BULK_ERRORS as e:
                        failed[r.run_id], again = str(e), True
            if again:
                break
            out[name] = pa.concat_tables(parts)
        if not again:
            return out, failed


def _batch_texts(
    items: list[BulkRun], runs_dir: Path, secrets: list[str]
) -> tuple[dict[str, str], list[BulkRun], dict[str, str]]:
    """The run.json texts of a batch as write_runs and pack_runs write them (_run_text: each
    checked and redacted; whether a text needs redacting asked of all of them at once): returns
    {run id: text}, the runs kept, and {run id: why} for those that failed a check. The first
    of an id decides; a run whose folder exists already is left out (runs are immutable)."""
    failed: dict[str, str] = {}
    texts: dict[str, str] = {}
    keep: list[BulkRun] = []
    for run, clean in zip(items, pulled.clean_texts([r.text for r in items], secrets), strict=True):
        if run.run_id in texts or run.run_id in failed or os.path.exists(runs_dir / run.run_id):
            continue
        try:
            texts[run.run_id] = _run_text(run, secrets, clean)
        except _BULK_ERRORS as e:
            failed[run.run_id] = str(e)
            continue
        keep.append(run)
    return texts, keep, failed


def write_runs(
    items: list[BulkRun], root: Path | None = None, workers: int = 4
) -> tuple[list[str], dict[str, str]]:
    """Many complete run folders at once (a pull of the results repo, where runs arrive as
    tables; packed runs written as folders), each as write_run writes one: the record checked
    and redacted, the Parquet files cast to their schemas with their free text redacted,
    staged and renamed into runs/. What differs is the cost: no pandas, the files of all the
    runs cast and redacted together (_bulk_tables), the folders written by `workers` threads,
    and the data flushed to disk once for all of them (before any is renamed) instead of once
    per file. The predictions file is required; evidence.parquet is not written here
    (write_run checks evidence row by row). Returns the run ids written and {run id: why} for
    those that failed a check; a run whose folder exists already is left as it is (runs are
    immutable)."""
    from concurrent.futures import ThreadPoolExecutor

    runs_dir = layout.runs_dir(root)
    runs_dir.mkdir(parents=True, exist_ok=True)
    secrets = secrets_in_env()
    texts, todo, failed = _batch_texts(items, runs_dir, secrets)
    tables, bad = _bulk_tables(todo, secrets)
    failed.update(bad)
    prepared: list[tuple[str, dict[str, pa.Table]]] = []
    at = dict.fromkeys(tables, 0)
    for run in todo:
        if run.run_id not in bad:  # its rows: the next ones of each file it has
            n = {name: len(run.files[name]) for name in tables if name in run.files}
            prepared.append((run.run_id, {k: tables[k].slice(at[k], c) for k, c in n.items()}))
            for k, c in n.items():
                at[k] += c
    batch = staging_path("bulk", root)
    batch.mkdir()
    times: dict[str, tuple[int, list[int | None]]] = {}

    def stage(item: tuple[str, dict[str, pa.Table]]) -> str | None:
        rid, files = item
        d = os.path.join(batch, rid)
        os.mkdir(d)
        try:
            for name, t in files.items():
                sink = pa.BufferOutputStream()
                pq.write_table(t, sink)
                with open(os.path.join(d, name), "wb") as fh:
                    fh.write(sink.getvalue())
        except _BULK_ERRORS as e:
            failed[rid] = str(e)
            return None
        with open(os.path.join(d, RUN_FILE), "w", encoding="utf-8") as fh:
            fh.write(texts[rid])
        noted = pulled.folder_times(d)  # as staged: a rename keeps them
        if noted is not None:
            times[rid] = noted
        return rid

    try:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            staged = [r for r in pool.map(stage, prepared) if r]
        atomic.flush(batch)
        done = []
        for rid in staged:
            try:
                os.rename(os.path.join(batch, rid), os.path.join(runs_dir, rid))
                done.append(rid)
            except OSError:
                pass  # another process wrote it meanwhile
        _fsync_dir(runs_dir)
        pulled.note_checked(runs_dir, {r: texts[r] for r in done}, times)
        return done, failed
    finally:
        shutil.rmtree(batch, ignore_errors=True)


# pulled runs kept in packs (evaluator/store/pulled.py), and written as folders from them


def pack_runs(items: list[BulkRun], root: Path | None = None) -> tuple[list[str], dict[str, str]]:
    """write_runs' runs kept as one pack instead of a folder each: the same checks and
    redaction (_batch_texts, _bulk_tables), a few files for all of them;
    `materialize` writes them as folders later. Returns the run ids packed and {run id: why}
    for those that failed a check (a run that has a folder already is left out). The texts
    packed are noted as validated in this process (`proven`)."""
    runs_dir = layout.runs_dir(root)
    secrets = secrets_in_env()
    items = sorted(items, key=lambda r: r.run_id)  # stable: the first of an id is kept
    texts, keep, failed = _batch_texts(items, runs_dir, secrets)
    tables, bad = _bulk_tables(keep, secrets)
    for rid, why in bad.items():
        failed[rid] = why
        del texts[rid]
    keep = [r for r in keep if r.run_id not in bad]
    if texts:
        links = {r.run_id: _supersedes(r) for r in keep}
        files = {  # each kind's rows in run id order, as the runs are
            name: pulled.with_run_ids(
                whole, [(r.run_id, len(r.files[name])) for r in keep if name in r.files]
            )
            for name, whole in tables.items()
        }
        pulled.write_pack(root, texts, files, links)
        pulled.note_proven(texts)
    return list(texts), failed


def _supersedes(run: BulkRun) -> str | None:
    if run.record is not None:
        return run.record.supersedes
    body = json.loads(run.text or "{}")
    return str(body["supersedes"]) if isinstance(body, dict) and body.get("supersedes") else None


def materialize(root: Path | None = None, run_ids: Iterable[str] | None = None) -> int:
    """Write pulled runs kept in packs as run folders, through write_runs: those named (the
    board's store, before it reads their per-sample files; the engine's find_run), or all,
    after which a pack whose runs are all written (or refused by write_runs' checks) is
    removed. MATERIALIZE_CHUNK runs at a time (evaluator/store/pulled.py), each chunk and each
    removal under `pulled.locked`, so a writer of a few runs waits a chunk at most, and a run
    deleted once its pack is gone is never written back. The engine calls it before it lists
    runs, so it only ever reads folders. Returns how many folders it wrote."""
    found = pulled.packs(root)
    if not found:
        return 0
    wanted = None if run_ids is None else set(run_ids)
    runs_dir = layout.runs_dir(root)
    n = 0
    for pack in found:
        try:
            ids = pulled.pack_ids(pack)
        except (OSError, pa.ArrowException):
            if wanted is None and pack.exists():  # unreadable: its runs are pulled again
                with pulled.locked(root):
                    pulled.remove_pack(pack, root)
            continue
        todo = [r for r in ids if (wanted is None or r in wanted)]
        todo = [r for r in todo if not (runs_dir / r).exists()]
        refused: set[str] = set()
        for i in range(0, len(todo), pulled.MATERIALIZE_CHUNK):
            with pulled.locked(root):
                if not pack.exists():
                    break  # written and removed by another writer meanwhile
                done, no = _materialize_chunk(
                    root, pack, set(todo[i : i + pulled.MATERIALIZE_CHUNK])
                )
            n += done
            refused |= no
        if wanted is None:
            with pulled.locked(root):
                if all(r in refused or (runs_dir / r).exists() for r in ids):
                    pulled.remove_pack(pack, root)  # else kept: tried again next time
    return n


def _materialize_chunk(root: Path | None, pack: Path, run_ids: set[str]) -> tuple[int, set[str]]:
    """Write these packed runs; returns how many were written and those refused by a check
    (never to be written: their pack may go). A pack that cannot be read now (a file taken
    away, too many open files) refuses nothing: it is tried again. Each text is validated as
    it is written (write_runs), but for one this process packed itself (`proven`)."""
    try:
        got = pulled.pack_items(pack, run_ids)
    except (OSError, pa.ArrowException):
        return 0, set()
    refused = run_ids - {rid for rid, _, _ in got}  # not in the pack at all
    if not got:
        return 0, refused
    done, failed = write_runs([BulkRun(r, None, t, f) for r, t, f in got], root)
    pulled.forget_proven([*done, *failed], {rid: text for rid, text, _ in got})
    return len(done), refused | set(failed)


# What _staging/ may hold: a run, a benchmark or a pull being written, or a deleted run being
# removed. Each entry is named <what>.<pid>.<hex> by the process that made it, so that a sweep
# can tell the leftovers of a process that died (kill -9, a power cut) from work in progress.
STAGING_MAX_AGE_S = 24 * 3600.0  # an entry this old is a leftover whoever made it
_STAGED = re.compile(r"^(?P<what>.+)\.(?P<pid>\d{1,10})\.[0-9a-f]{6,}$")


def staging_path(what: str, root: Path | None = None) -> Path:
    """A new, unused path in the data root's _staging/ for `what` (a run id, "bench-<name>",
    "deleted-<run id>"), named after this process; the folder is created, the entry is not."""
    staging = layout.staging_dir(root)
    staging.mkdir(parents=True, exist_ok=True)
    return staging / f"{what}.{os.getpid()}.{secrets.token_hex(4)}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process, or not ours to ask: leave its work alone
    return True


def sweep_staging(root: Path | None = None, max_age: float = STAGING_MAX_AGE_S) -> list[str]:
    """Remove what dead writers left in _staging/ (readers never see it): entries whose process
    is gone, and anything older than `max_age` seconds. Returns the names removed."""
    import time

    d = layout.staging_dir(root)
    if not d.is_dir():
        return []
    removed = []
    now = time.time()
    for entry in sorted(d.iterdir()):
        m = _STAGED.match(entry.name)
        try:
            old = now - entry.lstat().st_mtime > max_age
        except OSError:
            continue
        if old or (m is not None and not _alive(int(m["pid"]))):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(entry.name)
    return removed


def _write_json(path: Path, obj: object) -> None:
    atomic.write_json(path, obj)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_record(run_dir: Path) -> RunRecord:
    """run.json of a run folder, validated; CorruptRunError names the folder and the problem."""
    f = run_dir / RUN_FILE
    if not f.is_file():
        raise CorruptRunError(str(run_dir), f"{RUN_FILE} is missing")
    if not (run_dir / PREDICTIONS_FILE).is_file():
        raise CorruptRunError(str(run_dir), f"{PREDICTIONS_FILE} is missing")
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise CorruptRunError(str(run_dir), f"{RUN_FILE} is not valid JSON ({e})") from None
    return validate_record(data, run_dir)


def validate_record(data: object, run_dir: Path | str) -> RunRecord:
    """The one check of a run record, whoever reads it (the CLI, the engine, the app's store):
    `data` (run.json parsed) must be a valid RunRecord (types, limits: a result value "abc" or
    a 5,000-character model name is refused) whose run_id is the folder's name. Raises
    CorruptRunError naming the folder, the field and the problem."""
    where = str(run_dir)
    try:
        rec = RunRecord.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise CorruptRunError(where, f"{RUN_FILE} field {loc!r}: {first['msg']}") from None
    except (TypeError, ValueError, RecursionError) as e:
        raise CorruptRunError(where, f"{RUN_FILE}: {e}") from None
    if rec.run_id != Path(where).name:
        raise CorruptRunError(where, f"run_id {rec.run_id!r} does not match the folder")
    if not _RUN_ID.match(rec.run_id):
        raise CorruptRunError(where, f"run_id {rec.run_id!r} is not a valid run id")
    return rec


def validate_record_text(text: str, run_dir: Path | str) -> RunRecord:
    """validate_record of a run.json's text, parsed strictly (NaN and Infinity are not JSON):
    the same check and the same errors, in one pass of pydantic's own parser when the text is
    a valid record (a third of the time of parsing, then validating); anything else takes
    validate_record's path, which names what is wrong."""
    if "NaN" not in text and "Infinity" not in text:  # pydantic's parser would take them
        try:
            rec = RunRecord.model_validate_json(text)
        except (ValidationError, ValueError, RecursionError):
            pass
        else:
            named = rec.run_id == run_dir or rec.run_id == Path(str(run_dir)).name
            if named and _RUN_ID.match(rec.run_id):
                return rec
    return validate_record(json.loads(text, parse_constant=_not_json), run_dir)


def _not_json(token: str) -> object:
    raise ValueError(f"{RUN_FILE} holds {token}, which is not JSON")


def read_predictions(run_dir: Path) -> pd.DataFrame:
    try:
        return pq.read_table(run_dir / PREDICTIONS_FILE).to_pandas()
    except (OSError, pa.ArrowException) as e:
        raise CorruptRunError(str(run_dir), f"{PREDICTIONS_FILE} unreadable ({e})") from None


def read_grades(run_dir: Path) -> pd.DataFrame | None:
    f = run_dir / GRADES_FILE
    if not f.exists():
        return None
    try:
        return pq.read_table(f).to_pandas()
    except (OSError, pa.ArrowException) as e:
        raise CorruptRunError(str(run_dir), f"{GRADES_FILE} unreadable ({e})") from None


def read_labels(run_dir: Path) -> pd.DataFrame | None:
    """The run's stored final labels (LABEL_COLUMNS); None for a run stored without them."""
    f = run_dir / LABELS_FILE
    if not f.exists():
        return None
    try:
        return pq.read_table(f).to_pandas()
    except (OSError, pa.ArrowException) as e:
        raise CorruptRunError(str(run_dir), f"{LABELS_FILE} unreadable ({e})") from None


@dataclass(frozen=True)
class RunListing:
    runs: list[RunRecord]
    problems: list[CorruptRunError]


def list_runs(
    root: Path | None = None,
    benchmark: str | None = None,
    include_hidden: bool = False,
    include_superseded: bool = False,
) -> RunListing:
    """Every readable run (sorted by creation), and the corrupt folders with their problem.

    Hidden runs (moderation) and runs superseded by another stored run are left out unless
    asked for."""
    materialize(root)
    recs: list[RunRecord] = []
    problems: list[CorruptRunError] = []
    for rec in _folder_records(root):
        if isinstance(rec, CorruptRunError):
            problems.append(rec)
        elif not benchmark or rec.benchmark == benchmark:
            recs.append(rec)
    replaced = superseded((r.run_id, r.supersedes, r.hidden) for r in recs)
    recs = [
        r
        for r in recs
        if (include_hidden or not r.hidden) and (include_superseded or r.run_id not in replaced)
    ]
    recs.sort(key=lambda r: (r.created_at, r.run_id))
    return RunListing(recs, problems)


def links(root: Path | None = None) -> dict[str, str | None]:
    """run id -> the run it supersedes (None), of every stored run, the readable folders and
    the runs still in packs (read from the pack, not written): what a chain of runs needs
    (moderation, a reproduction's outcome), without writing every packed run."""
    out = {rid: p.supersedes for rid, p in pulled.packed_runs(root).items()}
    out.update(
        (rec.run_id, rec.supersedes)
        for rec in _folder_records(root)
        if not isinstance(rec, CorruptRunError)
    )
    return out


def _folder_records(root: Path | None) -> Iterator[RunRecord | CorruptRunError]:
    """Each run folder's record, in folder order, or why it cannot be read."""
    d = layout.runs_dir(root)
    for run_dir in sorted(p for p in d.iterdir() if p.is_dir()) if d.is_dir() else []:
        try:
            yield read_record(run_dir)
        except CorruptRunError as e:
            yield e


def superseded(rows: Iterable[tuple[str, str | None, bool]]) -> set[str]:
    """The runs a visible run replaces: the one rule for what leaves the board by supersession.

    rows: (run_id, supersedes, hidden) of every stored run. A run that is not hidden replaces
    the run it names and, through it, the whole chain before it (C supersedes B supersedes A:
    only C is shown, even when moderation hid B). A hidden run replaces nothing, so hiding the
    newest run of a chain brings the one before back. Names of runs that are not stored are
    kept in the set (harmless: nothing has that id)."""
    parent: dict[str, str | None] = {}
    visible: list[str] = []
    for run_id, supersedes, hidden in rows:
        parent[run_id] = supersedes or None
        if not hidden:
            visible.append(run_id)
    out: set[str] = set()
    for run_id in visible:
        seen = {run_id}
        nxt = parent.get(run_id)
        while nxt and nxt not in seen:
            out.add(nxt)
            seen.add(nxt)
            nxt = parent.get(nxt)
    return out


def find_run(run_id: str, root: Path | None = None) -> Path:
    if not _RUN_ID.match(run_id):
        raise FactBoardError(f"invalid run id {run_id!r}")
    d = layout.runs_dir(root) / run_id
    if not d.is_dir():
        materialize(root, [run_id])  # a pulled run still in a pack becomes a folder first
    if not d.is_dir():
        raise FactBoardError(f"no run {run_id!r} in {layout.runs_dir(root)}")
    return d


def existing_run(run_id: str, root: Path | None = None) -> Path | None:
    """The folder of this run when the store holds it (a pulled run still in a pack is
    written first), else None: what a job asks before it writes a run of a known id."""
    d = layout.runs_dir(root) / run_id
    if not (d / RUN_FILE).is_file() and _RUN_ID.match(run_id):
        materialize(root, [run_id])
    return d if (d / RUN_FILE).is_file() else None


def rewrite_record(run_dir: Path, rec: RunRecord) -> None:
    """The one in-place change a run folder knows (moderation's hidden, a reproduction's
    outcome): run.json written atomically, then the runs folder's mtime moved, so a reader that
    watches only that folder (the board, between its full scans) sees the change at once."""
    _write_json(run_dir / RUN_FILE, rec.model_dump(mode="json"))
    with contextlib.suppress(OSError):
        os.utime(run_dir.parent)


def set_hidden(run_id: str, hidden: bool, root: Path | None = None) -> RunRecord:
    """Moderation: hide or show a run (its files stay on disk)."""
    d = find_run(run_id, root)
    rec = read_record(d).model_copy(update={"hidden": hidden})
    rewrite_record(d, rec)
    return rec


def delete_run(run_id: str, root: Path | None = None) -> None:
    """Moderation: remove a run from the board by moving it out of the runs/ glob, then delete.
    Every packed run is written first, so no pack holds it any more to write it back."""
    materialize(root)
    d = find_run(run_id, root)
    trash = staging_path(f"deleted-{run_id}", root)
    os.rename(d, trash)
    shutil.rmtree(trash, ignore_errors=True)
