"""The store's look at the files (explorer/store.py): the state a run folder is noted in, a
Parquet file's quick check, what the engine rejects in a run folder, one run's final labels as
a vector, and the memo of derived arrays kept between boards (file times: the engine's
evaluator.store.layout.mtime_ns)."""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evaluator.core.errors import CorruptRunError
from evaluator.store import runs
from evaluator.store.layout import GRADES_FILE, LABELS_FILE, PREDICTIONS_FILE


# a state is never changed in place (a new one replaces it); not frozen: a frozen dataclass's
# construction costs twice as much, and a snapshot's read makes one per run (10,000 at once)
@dataclass(slots=True)
class RunFiles:
    mtime: int
    grades: bool
    labels: bool  # the scorer's final labels are stored (runs written before that have none)
    files: tuple[int | None, ...] = ()  # mtimes of predictions, labels and grades
    pack: str | None = None  # a pulled run kept in a pack (evaluator/store/pulled.py): its file
    # the run folder's own mtime, read before its files': every write the engine makes in a
    # run folder renames a file into it and so moves it. Not a part of the state compared: a
    # start-up scan takes a run whose folder has not moved as the snapshot has it (Store.refresh)
    folder: int | None = field(default=None, compare=False)


def db_number(v: object) -> float | None:
    """A DOUBLE read back through pandas: NULL comes back as NaN."""
    if v is None:
        return None
    f = float(v)  # type: ignore[arg-type]
    return f if math.isfinite(f) else None


MAGIC = b"PAR1"


def parquet_problem(path: Path) -> str | None:
    """Why a run's Parquet file cannot be read, from its first and last bytes alone (a
    truncated or non-Parquet file lacks the closing magic bytes); None when it looks whole.
    Cheap enough for every run at start-up; a file whole but with rows the explorer cannot
    read (a column of the wrong type) is found when its rows are loaded (Store._load_each)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            size = fh.seek(0, os.SEEK_END)
            if size < 12:
                return f"{path.name} is unreadable (truncated: {size} bytes)"
            fh.seek(-4, os.SEEK_END)
            tail = fh.read(4)
    except OSError as e:
        return f"{path.name} is unreadable ({e.strerror or e})"
    if head != MAGIC or tail != MAGIC:
        return f"{path.name} is unreadable (truncated or not a Parquet file)"
    return None


def engine_problem(run_dir: Path, state: RunFiles) -> str | None:
    """What the engine rejects in a run folder (None: nothing): run.json by its pydantic
    RunRecord (evaluator.store.runs.read_record), the Parquet files the state notes by their
    footers."""
    try:
        runs.read_record(run_dir)
    except CorruptRunError as e:
        return e.problem
    for name, present in (
        (PREDICTIONS_FILE, True),
        (LABELS_FILE, state.labels),
        (GRADES_FILE, state.grades),
    ):
        why = parquet_problem(run_dir / name) if present else None
        if why:
            return why
    return None


def vector_columns(scores: bool = False) -> list[str]:
    """What label_vector reads of a run's label rows: its final labels, or their scores."""
    return ["sample_id", "unit", "score" if scores else "final_label"]


def label_vector(path: Path, unit: str, sample_ids: pa.Array, scores: bool = False) -> np.ndarray:
    """One run's final labels at `unit` on `sample_ids` (int8, -1 where none), or with scores
    the scores they were made from (float, NaN where none), from its labels.parquet
    (evaluator.core.types.LABEL_SCHEMA), read by Parquet's file reader on this thread
    (pq.read_table's dataset machinery costs more than the read of a small file)."""
    with pq.ParquetFile(path) as f:
        t = f.read(columns=vector_columns(scores), use_threads=False)
    return labels_on(t, unit, sample_ids, scores)


def labels_on(t: pa.Table, unit: str, sample_ids: pa.Array, scores: bool = False) -> np.ndarray:
    """label_vector of a run's label rows already read (vector_columns: from its file, or from
    its pack's)."""
    column = vector_columns(scores)[-1]
    t = t.filter(pc.and_(pc.equal(t["unit"], unit), pc.is_valid(t[column])))
    at = pc.index_in(t["sample_id"], value_set=sample_ids).fill_null(-1).to_numpy()
    values = t[column].to_numpy()
    ok = at >= 0
    if scores:
        out = np.full(len(sample_ids), np.nan)
        out[at[ok]] = values[ok].astype(float)
        return out
    labels = np.full(len(sample_ids), -1, dtype=np.int8)
    labels[at[ok]] = values[ok].astype(np.int8)
    return labels


class Memo(OrderedDict[object, object]):
    """Derived arrays (label matrices, bootstrap weights, slice masks) keyed on what they are
    made of (benchmark version, run ids), so that a new run does not throw them away; the
    least recently used go first beyond `size` entries."""

    def __init__(self, size: int = 64) -> None:
        super().__init__()
        self.size = size

    def __getitem__(self, key: object) -> object:
        self.move_to_end(key)
        return super().__getitem__(key)

    def __setitem__(self, key: object, value: object) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)
