"""What a pull writes in bulk: the ledger of the run folders it wrote and checked, and the pulled
runs kept as tables until they are written as folders (packs).

The ledger (<data root>/_checked/): see CHECKED_DIR below.

Packs (<data root>/_pulled/<pack>/): a replica that starts on an empty disk (the Space's first
pull, evaluator/hub/background.py) checks every pulled run as every pull does (its record, and
its numbers scored again from its predictions), then keeps the checked runs of each shard as one
pack instead of a folder per run: `runs.parquet` in the ledger's columns (run_id, m_run =
PACKED_MTIME, m_files: which per-sample files the run has, run_json: the checked and redacted
run.json text) with the run each supersedes beside them, and one Parquet file per
kind of per-sample rows (predictions.parquet, labels.parquet, grades.parquet: a run folder's
columns after `run_id`, cast and redacted as a run folder's files are). A pack is written in
_staging/ and renamed into place, so it is never half there. It costs a few files per shard
instead of three per run, so a replica shows every number seconds after it starts, however
many runs the board holds. The runs become folders afterwards (evaluator.store.runs
.materialize: in the background on the Space, and before the engine lists or looks up runs,
so the engine only ever reads folders); the board's store reads a pack's
runs in place (their texts, as it reads the ledger) and has the runs whose per-sample rows a
page reads written first. A pack whose runs all have folders is removed. A run.json text this
process packed is not validated again when its run is written (`proven`).
"""

from __future__ import annotations

import bisect
import contextlib
import fcntl
import gc
import hashlib
import os
import secrets
import shutil
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evaluator.store import atomic, layout
from evaluator.store.layout import GRADES_FILE, LABELS_FILE, PREDICTIONS_FILE, RUN_FILE

# The runs write_runs wrote, as checked (<data root>/_checked/*.parquet, one file per batch,
# merged beyond CHECKED_KEEP files): run id, the modification times of its run.json and of its
# CHECKED_FILES (null where absent) as written, and the run.json text. A reader that finds a
# folder's files with these very times may take the record as checked and read its text from
# here (the board's store does, so that a replica's first page does not read and validate
# every pulled run.json again); any change to the folder (moderation rewrites run.json) makes
# it a folder like any other. A cache: deleting it costs only that.
CHECKED_DIR = "_checked"
CHECKED_FILES = (PREDICTIONS_FILE, LABELS_FILE, GRADES_FILE)
CHECKED_KEEP = 16
CHECKED_ROW_GROUP = 500
# How the ledger's and the packs' files are written: statistics for run_id alone (what a reader
# skips row groups by; those of every column cost a third of a pack's write), and the texts
# without a dictionary (every one differs: encoding them in one cost as much again)
BY_RUN_ID: dict[str, object] = {"compression": "zstd", "write_statistics": ["run_id"]}
TEXTS_BY_RUN_ID: dict[str, object] = {**BY_RUN_ID, "use_dictionary": ["run_id"]}
CHECKED_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("m_run", pa.int64()),
        ("m_files", pa.list_(pa.int64())),
        ("run_json", pa.string()),
    ]
)


def checked_dir(root: Path | None = None) -> Path:
    return layout.runs_dir(root).parent / CHECKED_DIR


def folder_times(run_dir: Path | str) -> tuple[int, list[int | None]] | None:
    """The modification times of a run folder's run.json and CHECKED_FILES (None where one is
    absent), as the ledger notes them; None without a run.json. Taken while the folder is
    still staged (a rename keeps them), so that a rewrite landing after the rename (a hide)
    never gets noted with the text from before it."""
    d = os.fspath(run_dir)
    m = layout.mtime_ns(os.path.join(d, RUN_FILE))
    return None if m is None else (m, [layout.mtime_ns(os.path.join(d, f)) for f in CHECKED_FILES])


def note_checked(
    runs_dir: Path, texts: dict[str, str], times: dict[str, tuple[int, list[int | None]]]
) -> None:
    """Add the runs write_runs wrote to the ledger: their texts and their files' times as
    staged (folder_times)."""
    rows: dict[str, list[object]] = {n: [] for n in CHECKED_SCHEMA.names}
    for rid, text in texts.items():
        if rid not in times:
            continue
        rows["run_id"].append(rid)
        rows["m_run"].append(times[rid][0])
        rows["m_files"].append(times[rid][1])
        rows["run_json"].append(text)
    if not rows["run_id"]:
        return
    d = checked_dir(runs_dir.parent)
    try:
        d.mkdir(exist_ok=True)
        name = f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{secrets.token_hex(3)}.parquet"
        with atomic.replacing(d / name) as tmp:  # by run id, in row groups a reader can skip
            t = pa.table(rows, schema=CHECKED_SCHEMA).sort_by("run_id")
            pq.write_table(t, tmp, row_group_size=CHECKED_ROW_GROUP, **TEXTS_BY_RUN_ID)
        files = sorted(d.glob("*.parquet"))
        if len(files) > CHECKED_KEEP:  # merged into one; a merge stopped midway loses nothing
            merged = pa.concat_tables([pq.read_table(f, schema=CHECKED_SCHEMA) for f in files])
            with atomic.replacing(d / f"{name[:-8]}-merged.parquet") as tmp:
                pq.write_table(
                    merged.sort_by("run_id"),
                    tmp,
                    row_group_size=CHECKED_ROW_GROUP,
                    **TEXTS_BY_RUN_ID,
                )
            for f in files:
                f.unlink(missing_ok=True)
    except (OSError, pa.ArrowException):
        pass  # a cache: the folders are the runs


def checked_runs(
    root: Path | None = None,
) -> dict[str, tuple[int, tuple[int | None, ...], str]]:
    """run id -> (run.json's modification time, CHECKED_FILES' times, the ledger file holding
    its text) of the runs write_runs wrote and checked (see CHECKED_DIR); the latest entry of
    a run wins. Unreadable ledger files are passed over."""
    out: dict[str, tuple[int, tuple[int | None, ...], str]] = {}
    d = checked_dir(root)
    if not d.is_dir():
        return out
    for f in sorted(d.glob("*.parquet")):
        try:
            t = pq.read_table(f, columns=["run_id", "m_run", "m_files"])
        except (OSError, pa.ArrowException):
            continue
        for rid, m, ms in zip(
            t["run_id"].to_pylist(), t["m_run"].to_pylist(), t["m_files"].to_pylist(), strict=True
        ):
            if rid and m is not None and ms is not None:
                out[rid] = (int(m), tuple(ms), str(f))
    return out


PACKS_DIR = "_pulled"
PACK_RUNS = "runs.parquet"  # the ledger's columns (CHECKED_SCHEMA)
PACKED_MTIME = 0  # a packed run's m_run: its rows are keyed "<run id>:0" as ledger rows are
PACK_FILES = CHECKED_FILES  # per-sample files a pack may hold, run_id first
# rows per row group of a pack's per-sample files: a reader of a few runs (the board's paired
# tests, reading their labels in place) decodes the row groups that hold them, a few dozen runs
# each (a demo run's 210 label rows: 39 runs; one run's labels read in 1.8 ms instead of 4 ms
# from row groups of 32,768 rows)
PACK_ROW_GROUP = 8_192


@contextlib.contextmanager
def collector_paused(many: bool = True) -> Iterator[None]:
    """Python's cycle collector off while thousands of objects are made at once (a pull's
    records and tables, a store's runs read from its snapshot): each burst of allocations
    would otherwise set off collections that scan every object of the process again and
    again (at 10,000 runs, 0.15 s of a board's first render; 16% of a boot)."""
    collect = many and gc.isenabled()
    if collect:
        gc.disable()
    try:
        yield
    finally:
        if collect:
            gc.enable()


def packs_dir(root: Path | None = None) -> Path:
    return layout.runs_dir(root).parent / PACKS_DIR


@contextlib.contextmanager
def locked(root: Path | None = None) -> Iterator[None]:
    """While packed runs are written as folders or a pack is removed: one writer at a time,
    across threads and processes (an flock on <data root>/_pulled/.lock), so a run deleted
    once its pack is gone is never written back by a writer that read it before."""
    d = packs_dir(root)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / ".lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def write_pack(
    root: Path | None,
    texts: dict[str, str],
    tables: dict[str, pa.Table],
    links: dict[str, str | None] | None = None,
) -> Path:
    """One pack of runs (see the module's doc): `texts` run id -> its run.json text, `tables`
    file name -> the rows of all these runs, `run_id` first, each run's rows together. Written
    in _staging/ and renamed into <data root>/_pulled/; returns its path. A run's m_files say
    which per-sample files it has (PACKED_MTIME where it has one, null where not); `links`, the
    run each supersedes, goes beside (supersession without reading every text)."""
    staging = layout.staging_dir(root)
    staging.mkdir(parents=True, exist_ok=True)
    tmp = staging / f"pack.{os.getpid()}.{secrets.token_hex(4)}"
    tmp.mkdir()
    try:
        ids = sorted(texts)
        has = {n: _ids_in(t) for n, t in tables.items()}
        rows = {
            "run_id": ids,
            "m_run": [PACKED_MTIME] * len(ids),
            "m_files": [
                [PACKED_MTIME if r in has.get(f, ()) else None for f in CHECKED_FILES] for r in ids
            ],
            "run_json": [texts[r] for r in ids],
        }
        table = pa.table(rows, schema=CHECKED_SCHEMA)
        sup = pa.array([(links or {}).get(r) for r in ids], pa.string())
        pq.write_table(  # in row groups by run id, as the ledger's: a reader skips the rest
            table.append_column("supersedes", sup),
            tmp / PACK_RUNS,
            row_group_size=CHECKED_ROW_GROUP,
            **TEXTS_BY_RUN_ID,
        )
        for name, table in tables.items():  # row groups a reader of a few runs can skip
            pq.write_table(table, tmp / name, row_group_size=PACK_ROW_GROUP, **BY_RUN_ID)
        atomic.flush(tmp)
        into = packs_dir(root)
        into.mkdir(parents=True, exist_ok=True)
        final = into / f"{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{secrets.token_hex(3)}"
        os.rename(tmp, final)
        return final
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def packs(root: Path | None = None) -> list[Path]:
    """The packs of this data root, oldest first."""
    d = packs_dir(root)
    try:
        return sorted(p for p in d.iterdir() if (p / PACK_RUNS).is_file())
    except OSError:
        return []


@dataclass(frozen=True)
class Packed:
    """Where a packed run is: its pack's runs file (a ledger file), whether it has final
    labels and grades, and the run it supersedes."""

    ledger: str
    labels: bool
    grades: bool
    supersedes: str | None = None


_PACKED: dict[str, tuple[int, dict[str, Packed]]] = {}  # pack -> (its mtime, its runs)
_LOCK = threading.Lock()


def packed_runs(root: Path | None = None) -> dict[str, Packed]:
    """run id -> Packed, of every pack of this root (read once per pack). A run may also have
    a folder already (written, the pack not yet removed): readers prefer the folder."""
    out: dict[str, Packed] = {}
    for pack in packs(root):
        key = str(pack)
        try:
            mtime = (pack / PACK_RUNS).stat().st_mtime_ns
            hit = _PACKED.get(key)
            if hit is None or hit[0] != mtime:
                t = pq.read_table(pack / PACK_RUNS, columns=["run_id", "m_files", "supersedes"])
                ledger = str(pack / PACK_RUNS)
                runs = {
                    r: Packed(ledger, _has(m, LABELS_FILE), _has(m, GRADES_FILE), sup)
                    for r, m, sup in zip(
                        t["run_id"].to_pylist(),
                        t["m_files"].to_pylist(),
                        t["supersedes"].to_pylist(),
                        strict=True,
                    )
                    if r
                }
                with _LOCK:
                    _PACKED[key] = hit = (mtime, runs)
        except (OSError, pa.ArrowException):
            continue  # removed meanwhile (its runs are folders now), or unreadable
        out.update(hit[1])
    return out


def _has(m_files: list[int | None] | None, name: str) -> bool:
    at = CHECKED_FILES.index(name)
    return m_files is not None and len(m_files) > at and m_files[at] is not None


def _ids_in(table: pa.Table) -> set[str]:
    return set(pc.unique(table["run_id"]).to_pylist()) if len(table) else set()


def pack_ids(pack: Path) -> list[str]:
    """The run ids a pack holds, in its order (by run id)."""
    ids = pq.read_table(pack / PACK_RUNS, columns=["run_id"])["run_id"].to_pylist()
    return [str(r) for r in ids if r]


def pack_items(
    pack: Path, run_ids: set[str] | None = None
) -> list[tuple[str, str, dict[str, pa.Table]]]:
    """The runs of a pack (those in `run_ids`, or all) as (run id, run.json text, {file name:
    its rows, without run_id}). Raises OSError or ArrowException when the pack cannot be read."""
    t = _read_runs(pack / PACK_RUNS, run_ids, ["run_id", "run_json"])
    texts = dict(zip(t["run_id"].to_pylist(), t["run_json"].to_pylist(), strict=True))
    wanted = [r for r in texts if r and texts[r] and (run_ids is None or r in run_ids)]
    files: dict[str, dict[str, pa.Table]] = {}
    for name in PACK_FILES:
        if (pack / name).is_file() and wanted:
            files[name] = pack_rows(pack, name, wanted)
    return [(r, str(texts[r]), {n: f[r] for n, f in files.items() if r in f}) for r in wanted]


def pack_rows(
    pack: Path, name: str, run_ids: Iterable[str], columns: list[str] | None = None
) -> dict[str, pa.Table]:
    """These runs' rows of one of a pack's per-sample files (`name`, one of PACK_FILES; only
    `columns` when given), per run, without run_id: what a reader of a few runs takes in place
    of their folders (only the row groups that hold them are read). A run with no rows there
    is absent. Raises OSError or ArrowException when the file cannot be read (the pack removed
    meanwhile: its runs are folders now)."""
    wanted = set(run_ids)
    cols = None if columns is None else ["run_id", *columns]
    return _by_run(_read_runs(pack / name, wanted, cols), wanted)


def _read_runs(path: Path, run_ids: set[str] | None, columns: list[str] | None = None) -> pa.Table:
    """The rows of these runs (or all) of a pack file: only the row groups whose run id range
    holds one of them are read (a pack is in run id order), one at a time."""
    with pq.ParquetFile(path) as f:
        if run_ids is None:
            return _plain_ids(f.read(columns=columns))
        want = sorted(run_ids)
        parts = []
        for i in range(f.num_row_groups):
            st = f.metadata.row_group(i).column(0).statistics  # run_id, the first column
            if st is not None and st.has_min_max:
                at = bisect.bisect_left(want, st.min)
                if at == len(want) or want[at] > st.max:
                    continue
            t = _plain_ids(f.read_row_group(i, columns=columns))
            parts.append(t.filter(pc.is_in(t["run_id"], value_set=pa.array(want, pa.string()))))
        if not parts:
            empty = f.schema_arrow.empty_table()
            return _plain_ids(empty.select(columns or f.schema_arrow.names))
        return pa.concat_tables(parts)


def _plain_ids(t: pa.Table) -> pa.Table:
    """run_id as plain text (a pack writes it as a dictionary)."""
    at = t.schema.get_field_index("run_id")
    if at < 0 or not pa.types.is_dictionary(t.schema.field(at).type):
        return t
    return t.set_column(at, "run_id", t["run_id"].cast(pa.string()))


def _by_run(table: pa.Table, wanted: set[str]) -> dict[str, pa.Table]:
    """A pack file's rows per run (each run's rows lie together), run_id dropped."""
    n = len(table)
    if not n:
        return {}
    ids = table["run_id"]
    change = pc.not_equal(ids.slice(1), ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, change])
    ends = np.r_[starts[1:], n]
    names = ids.take(pa.array(starts)).to_pylist()
    rest = table.drop_columns(["run_id"])
    return {
        str(r): rest.slice(a, b - a)
        for r, a, b in zip(names, starts.tolist(), ends.tolist(), strict=True)
        if r in wanted
    }


def remove_pack(pack: Path, root: Path | None = None) -> None:
    """Take a pack away (its runs are folders now): renamed out of _pulled/ first, so a reader
    never sees it half removed."""
    staging = layout.staging_dir(root)
    staging.mkdir(parents=True, exist_ok=True)
    trash = staging / f"pack-done.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        os.rename(pack, trash)
    except OSError:
        return  # another process took it away first
    shutil.rmtree(trash, ignore_errors=True)
    with _LOCK:
        _PACKED.pop(str(pack), None)


# --------------------------------------------------------------------------------------------
# what packing pulled runs shares with the bulk writer (evaluator.store.runs.pack_runs)


def with_run_ids(table: pa.Table, counts: list[tuple[str, int]]) -> pa.Table:
    """`table` (runs' rows, each run's together) with run_id first: `counts` says whose rows
    they are, in order. run_id as a dictionary: no string per row."""
    ids = pa.array([r for r, _ in counts], pa.string())
    at = np.repeat(np.arange(len(counts), dtype=np.int32), [n for _, n in counts])
    return table.add_column(0, "run_id", pa.DictionaryArray.from_arrays(pa.array(at), ids))


def re2_literal(text: str) -> str:
    """`text` as an RE2 pattern (Arrow's regexes) that matches it literally: each character
    that is not a plain letter or digit by its code."""
    return "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in text)


CLEAN_CHUNK = 1000  # texts searched at a time (each chunk is copied into Arrow)


def clean_texts(texts: list[str | None], secrets: list[str]) -> list[bool]:
    """For each run.json text, whether redaction has nothing to change in it: none of `secrets`
    and none of the words a key is written with (sk-, hf_, bearer, key, authorization, in any
    case), every text searched in one pass (RE2, in C). RE2 folds case at least as widely as
    str.lower does (a Kelvin sign is a k), so no text is taken for clean that a search of its
    lowercase would not."""
    words = [re2_literal(x) for x in secrets] + ["(?i:sk-|hf_|bearer|key|authorization)"]
    out: list[bool] = []
    for i in range(0, len(texts), CLEAN_CHUNK):  # a copy of a chunk of texts at a time
        part = pa.array(texts[i : i + CLEAN_CHUNK], pa.string())
        out += [h is False for h in pc.match_substring_regex(part, "|".join(words)).to_pylist()]
    return out


# The run.json texts this process packed (run id, SHA-256 of the text): each was validated here
# (pack_runs packs only texts its caller validated a record from, or texts it made from a
# validated record), so a packed run whose text in its pack is still that very text is written
# as a folder without validating it again; any other text (a pack of another process, a file
# changed on disk) is validated as it is read. Forgotten once written; bounded.
_PROVEN: set[tuple[str, bytes]] = set()
PROVEN_KEEP = 200_000


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def note_proven(texts: dict[str, str]) -> None:
    with _LOCK:
        if len(_PROVEN) + len(texts) > PROVEN_KEEP:
            _PROVEN.clear()
        _PROVEN.update((rid, _digest(t)) for rid, t in texts.items())


def proven(run_id: str, text: str) -> bool:
    """Whether this process validated this very text as run `run_id`'s run.json (pack_runs)."""
    return (run_id, _digest(text)) in _PROVEN


def forget_proven(run_ids: Iterable[str], texts: dict[str, str]) -> None:
    with _LOCK:
        _PROVEN.difference_update((r, _digest(texts[r])) for r in run_ids if r in texts)


MATERIALIZE_CHUNK = 1000  # packed runs read and written at a time (bounds memory)
# Fewer packed runs than this are written as folders at once, where they are found (the Space's
# start-up, the app's sync thread: well under a second); more, by a child process of the app at
# a lower priority, in the background (evaluator/hub/background.py)
WRITE_AT_ONCE_BELOW = 500
