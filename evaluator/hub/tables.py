"""The results repo's tables (evaluator/hub/layout.py): building them from run folders and reading
them back, each row checked as a local write would check it.

- runs: one row per run (RUNS_SCHEMA). `run_json` is the run's run.json as published; `hidden`,
  `moderation` and `moderated_at` its moderation state; `deleted` a tombstone (run_json null),
  kept so that no replica publishes the run again; `shard` the shard id holding its per-sample
  rows and `kinds` which kinds of rows it has.
- results: one row per published number (RESULTS_SCHEMA), derived from run.json's results.
- submissions: one row per submission record (its JSON without private fields).
- shards: a run folder's Parquet files of many runs, with a `run_id` column first.

Reading is defensive: a row that fails a check is skipped and named in a problem list, never an
exception that stops a pull.
"""

from __future__ import annotations

import io
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypedDict

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evaluator.core.errors import FactBoardError
from evaluator.core.types import GRADE_SCHEMA, LABEL_SCHEMA, PREDICTION_SCHEMA, RunRecord
from evaluator.hub import layout as H
from evaluator.store import layout

RUNS_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("benchmark", pa.string()),
        ("benchmark_version", pa.string()),
        ("model_name", pa.string()),
        ("model_kind", pa.string()),
        ("origin", pa.string()),
        ("created_at", pa.string()),
        ("supersedes", pa.string()),
        ("hidden", pa.bool_()),
        ("deleted", pa.bool_()),
        ("moderation", pa.string()),
        ("moderated_at", pa.string()),
        ("shard", pa.string()),
        ("kinds", pa.string()),
        ("run_json", pa.string()),
    ]
)

RESULTS_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("benchmark", pa.string()),
        ("model_name", pa.string()),
        ("model_kind", pa.string()),
        ("origin", pa.string()),
        ("hidden", pa.bool_()),
        ("split", pa.string()),
        ("unit", pa.string()),
        ("slice_kind", pa.string()),
        ("slice_value", pa.string()),
        ("metric", pa.string()),
        ("value", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("n", pa.int64()),
        ("grader", pa.string()),
    ]
)


class RunRow(TypedDict, total=False):
    """A row of the runs table (RUNS_SCHEMA), or some of its cells (an update); as read, a row
    says whether it holds a run.json (`has_json`) instead of holding it."""

    run_id: str
    benchmark: str
    benchmark_version: str
    model_name: str
    model_kind: str
    origin: str
    created_at: str
    supersedes: str | None
    hidden: bool
    deleted: bool
    moderation: str | None
    moderated_at: str | None
    shard: str | None
    kinds: str
    run_json: str | None
    has_json: bool


class ResultRow(TypedDict):
    """A row of the results table (RESULTS_SCHEMA)."""

    run_id: str
    benchmark: str
    model_name: str
    model_kind: str
    origin: str
    hidden: bool
    split: str
    unit: str
    slice_kind: str
    slice_value: str
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    grader: str | None


SUBMISSIONS_SCHEMA = pa.schema(
    [("submission_id", pa.string()), ("status", pa.string()), ("record", pa.string())]
)


def _evidence_schema() -> pa.Schema:
    from evaluator.store.evidence_file import EVIDENCE_SCHEMA

    return EVIDENCE_SCHEMA


def kind_schema(kind: str) -> pa.Schema:
    """A run folder file's schema, by shard kind."""
    return {
        "predictions": PREDICTION_SCHEMA,
        "labels": LABEL_SCHEMA,
        "grades": GRADE_SCHEMA,
    }.get(kind) or _evidence_schema()


def kind_file(kind: str) -> str:
    return {
        "predictions": layout.PREDICTIONS_FILE,
        "labels": layout.LABELS_FILE,
        "grades": layout.GRADES_FILE,
        "evidence": layout.EVIDENCE_FILE,
    }[kind]


def shard_schema(kind: str) -> pa.Schema:
    return pa.schema([("run_id", pa.string()), *kind_schema(kind)])


def new_shard_id() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(4)}"


# --------------------------------------------------------------------------------------------
# writing


def parquet_bytes(table: pa.Table, row_group_size: int | None = None) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", row_group_size=row_group_size)
    return sink.getvalue()


def rows_table(rows: Sequence[Mapping[str, object]], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist([{k: r.get(k) for k in schema.names} for r in rows], schema=schema)


def run_row(rec: RunRecord, run_json: str, shard: str | None, kinds: Iterable[str]) -> RunRow:
    return {
        "run_id": rec.run_id,
        "benchmark": rec.benchmark,
        "benchmark_version": rec.benchmark_version,
        "model_name": rec.model.name,
        "model_kind": str(rec.model.kind),
        "origin": str(rec.origin),
        "created_at": rec.created_at,
        "supersedes": rec.supersedes,
        "hidden": bool(rec.hidden),
        "deleted": False,
        "moderation": None,
        "moderated_at": None,
        "shard": shard,
        "kinds": ",".join(kinds),
        "run_json": run_json,
    }


def tombstone(row: RunRow | None, run_id: str, at: str) -> RunRow:
    """A deleted run's row (or, given {}, the cells that make a row one): identity kept,
    content gone."""
    base: RunRow = {"run_id": run_id} if row is None else RunRow(**row)
    base.update(
        {
            "deleted": True,
            "hidden": True,
            "moderation": "delete",
            "moderated_at": at,
            "run_json": None,
            "kinds": "",
        }
    )
    return base


def result_rows(rec: RunRecord) -> list[ResultRow]:
    return [
        {
            "run_id": rec.run_id,
            "benchmark": rec.benchmark,
            "model_name": rec.model.name,
            "model_kind": str(rec.model.kind),
            "origin": str(rec.origin),
            "hidden": bool(rec.hidden),
            "split": r.split,
            "unit": r.unit,
            "slice_kind": r.slice_kind,
            "slice_value": r.slice_value,
            "metric": r.metric,
            "value": r.value,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "n": r.n,
            "grader": r.grader,
        }
        for r in rec.results
    ]


def shard_table(kind: str, parts: list[tuple[str, pa.Table]]) -> pa.Table:
    """One shard: the parts' rows (each a run's file, cast to the kind's schema), run_id first."""
    schema = shard_schema(kind)
    tables = []
    for run_id, t in parts:
        t = t.select(kind_schema(kind).names).cast(kind_schema(kind))
        tables.append(t.add_column(0, "run_id", pa.array([run_id] * len(t), pa.string())))
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(tables).cast(schema)


def update_runs(
    old: pa.Table | None, updates: Mapping[str, RunRow], new_rows: list[RunRow]
) -> pa.Table:
    """The runs table: `old` with some cells of some rows replaced (run id -> {column: value}),
    then `new_rows` appended; column by column in Arrow, so a change to a few rows of a large
    table never turns every run.json into a Python string."""
    import numpy as np

    cells: Mapping[str, Mapping[str, object]] = updates
    parts = []
    if old is not None and len(old):
        t = old
        if updates:
            pos: dict[str, int] = {}
            for i, rid in enumerate(t["run_id"].to_pylist()):
                pos.setdefault(rid, i)
            for col in sorted({c for u in cells.values() for c in u}):
                items = sorted(
                    ((pos[r], u[col]) for r, u in cells.items() if col in u and r in pos),
                    key=lambda item: item[0],
                )
                if not items:
                    continue
                mask = np.zeros(len(t), dtype=bool)
                mask[[i for i, _ in items]] = True
                at = t.schema.get_field_index(col)
                values = pa.array([v for _, v in items], t.schema.field(col).type)
                new = pc.replace_with_mask(t[col].combine_chunks(), pa.array(mask), values)
                t = t.set_column(at, col, new)
        parts.append(t)
    if new_rows:
        parts.append(rows_table(new_rows, RUNS_SCHEMA))
    return pa.concat_tables(parts) if parts else RUNS_SCHEMA.empty_table()


def merge_results(
    old: pa.Table | None,
    drop: set[str],
    hidden: dict[str, bool],
    new_rows: list[ResultRow],
) -> pa.Table:
    """The results table: `old` without the runs in `drop`, with `hidden` updated, plus new rows."""
    parts = []
    if old is not None and len(old):
        t = old
        if drop:
            t = t.filter(pc.invert(pc.is_in(t["run_id"], pa.array(sorted(drop), pa.string()))))
        if hidden and len(t):
            col = t["hidden"]
            for flag in (True, False):
                ids = sorted(r for r, h in hidden.items() if h is flag)
                if ids:
                    mask = pc.is_in(t["run_id"], pa.array(ids, pa.string()))
                    col = pc.if_else(mask, flag, col)
            t = t.set_column(t.schema.get_field_index("hidden"), "hidden", col)
        parts.append(t)
    if new_rows:
        parts.append(rows_table(new_rows, RESULTS_SCHEMA))
    if not parts:
        return RESULTS_SCHEMA.empty_table()
    return pa.concat_tables(parts)


# --------------------------------------------------------------------------------------------
# reading


class TableError(FactBoardError):
    """A table of the results repo cannot be read at all."""


def read_table(
    data: bytes, schema: pa.Schema, what: str, dictionary: tuple[str, ...] = ()
) -> pa.Table:
    """A repo table's bytes as `schema` (extra columns dropped); TableError if it cannot be.
    The `dictionary` columns are read as Parquet's dictionaries and left so (not cast)."""
    try:
        t = pq.read_table(io.BytesIO(data), read_dictionary=list(dictionary) or None)
        missing = [n for n in schema.names if n not in t.schema.names]
        if missing:
            raise TableError(f"{what} lacks column(s) {', '.join(missing)}")
        kept = [t.schema.field(f.name) if f.name in dictionary else f for f in schema]
        return t.select(schema.names).cast(pa.schema(kept))
    except (pa.ArrowException, OSError, ValueError) as e:
        raise TableError(f"{what} is not a readable table ({e})") from None


def read_rows(data: bytes | None, schema: pa.Schema, what: str) -> list[dict[str, object]]:
    if data is None:
        return []
    return read_table(data, schema, what).to_pylist()


@dataclass
class Manifest:
    version: int = H.LAYOUT_VERSION
    shards: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # bench -> id -> kinds
    problems: list[str] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        body = {"layout_version": self.version, "shards": self.shards}
        return (json.dumps(body, indent=1, sort_keys=True) + "\n").encode()

    def files(self) -> set[str]:
        out = set()
        for bench, ids in self.shards.items():
            for sid, kinds in ids.items():
                out |= {H.shard_file(bench, k, sid) for k in kinds}
        return out

    @classmethod
    def parse(cls, data: bytes) -> Manifest:
        try:
            body = json.loads(data)
        except (ValueError, RecursionError) as e:
            raise TableError(f"{H.MANIFEST} is not JSON ({e})") from None
        if not isinstance(body, dict) or not isinstance(body.get("layout_version"), int):
            raise TableError(f"{H.MANIFEST} has no layout_version")
        m = cls(int(body["layout_version"]))
        shards = body.get("shards") or {}
        if not isinstance(shards, dict):
            raise TableError(f"{H.MANIFEST}: shards is not an object")
        for bench, ids in shards.items():
            if not H.safe(bench) or not isinstance(ids, dict):
                m.problems.append(f"manifest: benchmark {bench!r} skipped (not a plain name)")
                continue
            for sid, kinds in ids.items():
                ok = [k for k in kinds if k in H.SHARD_KINDS] if isinstance(kinds, list) else []
                if not H.safe(sid) or "predictions" not in ok:
                    m.problems.append(f"manifest: shard {bench}/{sid!r} skipped (malformed)")
                    continue
                m.shards.setdefault(bench, {})[sid] = ok
        return m


def read_shard(data: bytes, kind: str, run_ids: set[str], what: str) -> dict[str, pa.Table]:
    """The rows of `run_ids` in one shard, per run, as the run folder file's schema. A shard is
    written run by run (each run's rows together, in their stored order): read so, its runs are
    slices of it, with no copy; a shard in another order is grouped by run first. The run id
    column, the same text on every row of a run, is read as a dictionary (at 10,000 runs of
    300 samples, 12 MB of codes instead of some 130 MB of text for each kind)."""
    t = read_table(data, shard_schema(kind), what, dictionary=("run_id",))
    try:
        col = _run_id_codes(t["run_id"])
    except (pa.ArrowException, ValueError) as e:
        raise TableError(f"{what} is not a readable table ({e})") from None
    t = t.drop_columns(["run_id"])
    if col.null_count:
        keep = pc.is_valid(col)
        t, col = t.filter(keep), col.filter(keep)
    out: dict[str, pa.Table] = {}
    if not len(t):
        return out
    import numpy as np

    idx = col.indices.to_numpy(zero_copy_only=False)
    names = col.dictionary.to_pylist()
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    if len(starts) != len(set(idx[starts].tolist())):  # a run's rows apart: group them
        order = np.argsort(idx, kind="stable")
        t, idx = t.take(pa.array(order)), idx[order]
        starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    ends = np.r_[starts[1:], len(idx)]
    for at, end in zip(starts.tolist(), ends.tolist(), strict=True):
        rid = names[idx[at]]
        if rid is not None and (not run_ids or rid in run_ids):
            out[rid] = t.slice(at, end - at)
    return out


def _run_id_codes(col: pa.ChunkedArray) -> pa.DictionaryArray:
    """A shard's run id column as one dictionary array of text (read as a dictionary, each row
    group with its own, unified here; a column of another type is cast to text first)."""
    if pa.types.is_dictionary(col.type):
        col = col.cast(pa.dictionary(col.type.index_type, pa.string()))
        col = pa.table({"run_id": col}).unify_dictionaries()["run_id"]
    else:
        col = col.cast(pa.string()).dictionary_encode()
    if col.num_chunks == 0:
        return pa.array([], pa.dictionary(pa.int32(), pa.string()))  # type: ignore[no-any-return]
    return col.combine_chunks()  # type: ignore[no-any-return]
