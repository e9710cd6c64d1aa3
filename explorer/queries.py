"""Every DuckDB statement the app runs (docs/ARCHITECTURE.md): one module, bound parameters only.

The app keeps one in-memory DuckDB database per process (explorer.store.Store). The files on disk
are the source of truth; the tables here are caches of them, loaded incrementally:

  samples      one row per benchmark sample (+ derived topic_type, n_edit_types, sent_idx)
  runs         one row per run.json (model, origin, threshold, counts, hidden)
  results      the per-slice results of each run: a view of the store's snapshot file read in
               place (the runs it holds, less those gone or changed since: snapshot_gone)
               and of results_new (the runs read from their run.json since)
  predictions  per-sample predictions (score, label, explanation; raw output stays on disk)
  labels       final predicted labels per run and sample, as the scorer made them (threshold
               applied, sentence predictions rolled up to summaries): read from the run's
               labels.parquet, or made by evaluator.core.scoring.final_labels for a run stored
               without one; never derived in SQL
  grades       explanation grades (human or judge)
  sample_stats per sample and benchmark version: how many visible runs label it, how many get
               it wrong (the Samples page's difficulty), aggregated from the runs'
               labels.parquet read in place, so that no page loads every run's rows
  run_units    per visible run and unit: how many final labels and scores it has
  reported     published numbers from leaderboard_data/reported/*.csv

Identifiers are never built from user text: the only variable SQL fragments are chosen from
fixed whitelists in this module (sort orders, optional WHERE clauses with `?` parameters).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel

from evaluator.core.types import RunRecord, SliceResult

Con = duckdb.DuckDBPyConnection

SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (
    benchmark VARCHAR, sample_id VARCHAR, split VARCHAR, unit VARCHAR, summary_id VARCHAR,
    domain VARCHAR, doc_id VARCHAR, document VARCHAR, summary VARCHAR, seed_summary VARCHAR,
    label TINYINT, human_score DOUBLE, error_types VARCHAR[], reference_explanation VARCHAR,
    attributes VARCHAR, topic_type VARCHAR, n_edit_types VARCHAR, sent_idx INTEGER,
    ix INTEGER
);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR, folder VARCHAR, benchmark VARCHAR, benchmark_version VARCHAR,
    model_name VARCHAR, model_kind VARCHAR, model_org VARCHAR, model_params VARCHAR,
    model_url VARCHAR, model_license VARCHAR, model_description VARCHAR, origin VARCHAR,
    config VARCHAR, policy VARCHAR, threshold DOUBLE, per_domain VARCHAR, tuned_on VARCHAR,
    tuned_value DOUBLE, splits VARCHAR[], created_at VARCHAR, n_total BIGINT, predicted BIGINT,
    missing BIGINT, unparsable BIGINT, failed BIGINT, hidden BOOLEAN, submission VARCHAR,
    moderated BOOLEAN, supersedes VARCHAR
);
CREATE TABLE IF NOT EXISTS results_new (
    run_id VARCHAR, split VARCHAR, unit VARCHAR, slice_kind VARCHAR, slice_value VARCHAR,
    metric VARCHAR, value DOUBLE, ci_low DOUBLE, ci_high DOUBLE, n BIGINT,
    coverage VARCHAR[], grader VARCHAR, aggregation VARCHAR
);
CREATE TABLE IF NOT EXISTS snapshot_gone (run_id VARCHAR);
CREATE OR REPLACE VIEW results AS SELECT * FROM results_new;
CREATE TABLE IF NOT EXISTS predictions (
    run_id VARCHAR, sample_id VARCHAR, score DOUBLE, label TINYINT, explanation VARCHAR
);
CREATE TABLE IF NOT EXISTS labels (
    run_id VARCHAR, sample_id VARCHAR, unit VARCHAR, gold TINYINT, score DOUBLE,
    pred TINYINT, rolled BOOLEAN, ix INTEGER
);
CREATE TABLE IF NOT EXISTS grades (
    run_id VARCHAR, sample_id VARCHAR, judge VARCHAR, protocol VARCHAR, grade DOUBLE,
    rationale VARCHAR
);
CREATE TABLE IF NOT EXISTS sample_stats (
    benchmark VARCHAR, version VARCHAR, unit VARCHAR, sample_id VARCHAR, n_runs BIGINT,
    n_wrong BIGINT
);
CREATE TABLE IF NOT EXISTS run_units (
    benchmark VARCHAR, run_id VARCHAR, unit VARCHAR, n_labelled BIGINT, n_rows BIGINT,
    n_scored BIGINT
);
CREATE TABLE IF NOT EXISTS reported (
    model VARCHAR, kind VARCHAR, benchmark VARCHAR, split VARCHAR, unit VARCHAR,
    slice_kind VARCHAR, slice_value VARCHAR, metric VARCHAR, value DOUBLE, n BIGINT,
    coverage VARCHAR, source VARCHAR, note VARCHAR, file VARCHAR
);
"""

# run.json as a from_json structure, derived from the engine's pydantic models (missing keys read
# as NULL). Free-form objects (dicts, and the run's config) stay JSON text.
_KEPT_AS_JSON = frozenset({"config"})


def _duck_type(annotation: Any) -> Any:
    """The from_json structure of one pydantic field annotation."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _duck_type(args[0])
    if origin is typing.Literal:
        return "VARCHAR"
    if origin is list and args:
        return [_duck_type(args[0])]
    if origin is dict or annotation is Any or annotation is dict:
        return "JSON"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_structure(annotation)
    simple = {str: "VARCHAR", int: "BIGINT", float: "DOUBLE", bool: "BOOLEAN"}
    if annotation in simple:
        return simple[annotation]
    raise TypeError(f"no DuckDB type for the run.json field type {annotation!r}")


def model_structure(
    model: type[BaseModel], as_json: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """{field: DuckDB type or nested structure} of a pydantic model."""
    return {
        name: "JSON" if name in as_json else _duck_type(f.annotation)
        for name, f in model.model_fields.items()
    }


RUN_JSON_STRUCTURE = json.dumps(model_structure(RunRecord, _KEPT_AS_JSON))

# where each column of the runs table comes from in run.json (a dotted path; None: not from
# run.json). tests/explorer/test_explorer_store.py checks these against RunRecord.
RUN_COLUMNS: dict[str, str | None] = {
    "run_id": "run_id",
    "folder": None,  # the run folder's name
    "benchmark": "benchmark",
    "benchmark_version": "benchmark_version",
    "model_name": "model.name",
    "model_kind": "model.kind",
    "model_org": "model.org",
    "model_params": "model.params",
    "model_url": "model.url",
    "model_license": "model.license",
    "model_description": "model.description",
    "origin": "origin",
    "config": "config",
    "policy": "threshold.policy",
    "threshold": "threshold.threshold",
    "per_domain": "threshold.per_domain",
    "tuned_on": "threshold.tuned_on",
    "tuned_value": "threshold.tuned_value",
    "splits": "splits",
    "created_at": "created_at",
    "n_total": "counts.n",
    "predicted": "counts.predicted",
    "missing": "counts.missing",
    "unparsable": "counts.unparsable",
    "failed": "counts.failed",
    "hidden": None,  # moderated OR superseded (apply_supersession)
    "submission": "submission",
    "moderated": "hidden",
    "supersedes": "supersedes",
}
# the results table: run_id, then one column per field of a result (run.json's results[])
RESULT_COLUMNS: dict[str, str | None] = {
    "run_id": "run_id",
    **{name: f"results.{name}" for name in SliceResult.model_fields},
}

# the run folder's name is the second-to-last path component of any file in it
_FOLDER_OF_FILE = r"regexp_extract(filename, '([^/\\]+)[/\\][^/\\]+$', 1)"


# the store's snapshot of the runs and results tables (explorer.store.snapshot_file): its
# name carries this digest of the tables' layout, so a changed layout never reads an old one
SNAPSHOT_LAYOUT = hashlib.sha1(f"1\x1f{SCHEMA}\x1f{RUN_JSON_STRUCTURE}".encode()).hexdigest()[:10]


def connect() -> Con:
    con = duckdb.connect(":memory:")
    con.execute(SCHEMA)
    # the snapshot's results are read in place on every query: keep their footers
    with contextlib.suppress(duckdb.Error):
        con.execute("SET parquet_metadata_cache = true")
    # warm up the JSON reader (its first use costs ~0.5 s) outside any user request
    con.execute("SELECT json_extract('{\"a\": 1}', '$.a')").fetchall()
    return con


# --------------------------------------------------------------------------------------------
# loading (called by explorer.store under its lock)


def load_samples(con: Con, benchmark: str, path: str) -> int:
    con.execute("DELETE FROM samples WHERE benchmark = ?", [benchmark])
    con.execute(
        """
        INSERT INTO samples
        SELECT ? AS benchmark, sample_id, split, unit, summary_id, domain, doc_id, document,
               summary, seed_summary, label, human_score, error_types, reference_explanation,
               attributes,
               json_extract_string(attributes, '$.topic_type'),
               json_extract_string(attributes, '$.n_edit_types'),
               TRY_CAST(json_extract_string(attributes, '$.sent_idx') AS INTEGER),
               CAST(row_number() OVER (ORDER BY sample_id) - 1 AS INTEGER)
        FROM read_parquet(?)
        """,
        [benchmark, path],
    )
    row = con.execute("SELECT count(*) FROM samples WHERE benchmark = ?", [benchmark]).fetchone()
    return int(row[0]) if row else 0


def delete_benchmark(con: Con, benchmark: str) -> None:
    con.execute("DELETE FROM samples WHERE benchmark = ?", [benchmark])


def stage_run_files(con: Con, files: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """Read run.json files once into the temp table _run_json (read_text + from_json: several
    times faster than read_json over many small files). Returns one row of identity fields per
    readable file (folder = the run folder's name) and the files that are not valid JSON."""
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _run_text AS
        SELECT {_FOLDER_OF_FILE} AS folder, filename, content, json_valid(content) AS ok
        FROM read_text(?)
        """,
        [list(files)],
    )
    bad = [
        str(r[0])
        for r in con.execute(
            "SELECT folder FROM _run_text WHERE NOT coalesce(ok, false)"
        ).fetchall()
    ]
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE _run_json AS
        SELECT folder, j.* FROM (SELECT folder, from_json(content, ?) AS j FROM _run_text
                                 WHERE ok AND json_type(content) = 'OBJECT')
        """,
        [RUN_JSON_STRUCTURE],
    )
    con.execute("DROP TABLE _run_text")
    meta = con.execute(
        "SELECT folder, run_id, benchmark, model.name AS model_name, origin FROM _run_json"
    ).df()
    return meta, bad


def stage_checked_runs(
    con: Con, files: Sequence[str], ledgers: Sequence[str], keys: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """stage_run_files, where the run.json text of some folders comes from the engine's ledger
    of checked runs (evaluator.store.runs.CHECKED_DIR: Parquet files with run_id, m_run and
    run_json) instead of their files: `keys` names those rows as "<run_id>:<m_run>" (one
    Parquet read instead of a file per run)."""
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _run_text AS
        SELECT {_FOLDER_OF_FILE} AS folder, filename, content, json_valid(content) AS ok
        FROM read_text(?)
        """,
        [list(files)],
    )
    if keys:
        ids = [k.rsplit(":", 1)[0] for k in keys]
        con.execute(
            """
            INSERT INTO _run_text
            SELECT run_id, NULL, run_json, json_valid(run_json)
            FROM read_parquet(?, union_by_name = true)
            WHERE run_id BETWEEN ? AND ?  -- row groups outside the range are not read
              AND list_contains(?, run_id || ':' || CAST(m_run AS VARCHAR))
            QUALIFY row_number() OVER (PARTITION BY run_id) = 1
            """,
            [list(ledgers), min(ids), max(ids), list(keys)],
        )
    bad = [
        str(r[0])
        for r in con.execute(
            "SELECT folder FROM _run_text WHERE NOT coalesce(ok, false)"
        ).fetchall()
    ]
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE _run_json AS
        SELECT folder, j.* FROM (SELECT folder, from_json(content, ?) AS j FROM _run_text
                                 WHERE ok AND json_type(content) = 'OBJECT')
        """,
        [RUN_JSON_STRUCTURE],
    )
    con.execute("DROP TABLE _run_text")
    meta = con.execute(
        "SELECT folder, run_id, benchmark, model.name AS model_name, origin FROM _run_json"
    ).df()
    return meta, bad


def supersession_rows(con: Con) -> list[tuple[str, str | None, bool]]:
    """(run_id, supersedes, moderated) of every loaded run: the input of
    evaluator.store.runs.superseded."""
    rows = con.execute("SELECT run_id, supersedes, moderated FROM runs").fetchall()
    return [(str(a), None if b is None else str(b), bool(c)) for a, b, c in rows]


def apply_supersession(con: Con, superseded: Sequence[str]) -> None:
    """A run is off the board when moderation hid it or when it is superseded (the set comes
    from evaluator.store.runs.superseded): `hidden` = moderated OR superseded."""
    con.execute(
        "UPDATE runs SET hidden = moderated OR list_contains(?::VARCHAR[], run_id)",
        [list(superseded)],
    )


def insert_staged_runs(con: Con, folders: Sequence[str]) -> None:
    """Insert the staged runs of the given folders (and their results)."""
    ids = list(folders)
    con.execute(
        """
        INSERT INTO runs
        SELECT run_id, folder, benchmark, benchmark_version, model.name, model.kind, model.org,
               model.params, model.url, model.license, model.description, origin,
               CAST(config AS VARCHAR), threshold.policy, threshold.threshold,
               CAST(threshold.per_domain AS VARCHAR), threshold.tuned_on, threshold.tuned_value,
               splits, created_at, counts.n, counts.predicted, counts.missing,
               coalesce(counts.unparsable, 0), coalesce(counts.failed, 0),
               coalesce(hidden, false), CAST(submission AS VARCHAR), coalesce(hidden, false),
               supersedes
        FROM _run_json WHERE list_contains(?, folder)
        """,
        [ids],
    )
    con.execute(
        """
        INSERT INTO results_new
        SELECT run_id, r.split, r.unit, r.slice_kind, coalesce(r.slice_value, ''), r.metric,
               r.value, r.ci_low, r.ci_high, r.n, r.coverage, r.grader, r.aggregation
        FROM (SELECT run_id, unnest(results) AS r FROM _run_json
              WHERE list_contains(?, folder))
        """,
        [ids],
    )


def _arrow(con: Con, sql: str) -> pa.Table:
    """A query's rows as an Arrow table (DuckDB 1.x: fetch_arrow_table; 2.x: to_arrow_table)."""
    import warnings

    res = con.execute(sql)
    fetch = getattr(res, "fetch_arrow_table", None)
    if fetch is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "makes an extra copy": small tables
            return res.to_arrow_table()
    return fetch()


SnapshotState = tuple[str, str, int, bool, bool, list[int | None]]


def write_snapshot(
    con: Con,
    states: Sequence[SnapshotState],
    runs_path: str,
    results_path: str,
    generation: str,
) -> None:
    """Write the results table to results_path, then the runs table with each run folder's
    state (folder, benchmark, run.json mtime, has grades, has labels, data files' mtimes) and
    the `generation` that names the results file to runs_path (Parquet; the caller renames
    the runs file into place)."""
    import pyarrow.parquet as pq

    state = pa.table(
        {
            "folder": [s[0] for s in states],
            "s_mtime": pa.array([s[2] for s in states], pa.int64()),
            "s_grades": [s[3] for s in states],
            "s_labels": [s[4] for s in states],
            "s_files": pa.array([s[5] for s in states], pa.list_(pa.int64())),
        }
    )
    cur = con.cursor()
    try:
        # by benchmark, level and slice, in small row groups: a query for one view reads
        # the row groups of that view only
        ordered = _arrow(
            cur,
            "SELECT x.* FROM results x LEFT JOIN runs r USING (run_id) "
            "ORDER BY r.benchmark, x.unit, x.slice_kind, x.slice_value, x.run_id",
        )
        pq.write_table(ordered, results_path, row_group_size=4096)
        cur.register("_snap_state", state)
        table = _arrow(
            cur,
            "SELECT r.*, s.s_mtime, s.s_grades, s.s_labels, s.s_files, "
            f"'{generation}' AS s_generation FROM runs r JOIN _snap_state s USING (folder)",
        )
        cur.unregister("_snap_state")
    finally:
        cur.close()
    pq.write_table(table, runs_path)


def load_snapshot(
    con: Con, runs_path: str, results_path: Callable[[str], str]
) -> list[SnapshotState]:
    """Fill the runs and results tables from a snapshot (write_snapshot; results_path: where
    the results file of a generation is); returns each run folder's state as written."""
    con.execute("CREATE OR REPLACE TEMP TABLE _snap AS SELECT * FROM read_parquet(?)", [runs_path])
    try:
        gens = con.execute("SELECT DISTINCT s_generation FROM _snap").fetchall()
        if len(gens) != 1:
            raise ValueError("a snapshot of runs names one results file")
        run_cols = ", ".join(RUN_COLUMNS)
        con.execute(f"INSERT INTO runs BY NAME SELECT {run_cols} FROM _snap")
        use_snapshot_results(con, results_path(str(gens[0][0])))
        rows = con.execute(
            "SELECT folder, benchmark, s_mtime, s_grades, s_labels, s_files FROM _snap"
        ).fetchall()
    finally:
        con.execute("DROP TABLE IF EXISTS _snap")
    return [
        (str(f), str(b), int(m), bool(g), bool(lab), [None if v is None else int(v) for v in fs])
        for f, b, m, g, lab, fs in rows
    ]


def use_snapshot_results(con: Con, path: str | None) -> None:
    """Point the results view at a snapshot's results file (read in place, never loaded), or
    at results_new alone (None). The path is the store's own file name; a path with a quote
    is refused, since a view's file cannot be a bound parameter."""
    cols = ", ".join(RESULT_COLUMNS)
    if path is None:
        con.execute(f"CREATE OR REPLACE VIEW results AS SELECT {cols} FROM results_new")
        return
    if "'" in path or "\\" in path:
        raise ValueError(f"a snapshot path with a quote or backslash: {path!r}")
    con.execute(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()  # readable now
    con.execute(
        f"""
        CREATE OR REPLACE VIEW results AS
        SELECT {cols} FROM read_parquet('{path}')
        WHERE run_id NOT IN (SELECT run_id FROM snapshot_gone)
        UNION ALL
        SELECT {cols} FROM results_new
        """
    )


def switch_to_snapshot_results(con: Con, path: str) -> None:
    """After writing a snapshot that holds every loaded run's results: read them from its
    file, and empty results_new and snapshot_gone, in one transaction (a query on another
    cursor sees the rows once, before or after)."""
    con.execute("BEGIN TRANSACTION")
    try:
        use_snapshot_results(con, path)
        con.execute("DELETE FROM results_new")
        con.execute("DELETE FROM snapshot_gone")
        con.execute("COMMIT")
    except duckdb.Error:
        con.execute("ROLLBACK")
        raise


def drop_staged_runs(con: Con) -> None:
    con.execute("DROP TABLE IF EXISTS _run_json")


def delete_runs(con: Con, run_ids: Sequence[str]) -> None:
    ids = list(run_ids)
    if not ids:
        return
    for table in ("runs", "results_new", "predictions", "labels", "grades", "run_units"):
        con.execute(f"DELETE FROM {table} WHERE list_contains(?, run_id)", [ids])
    # and the snapshot's rows of these runs, if it holds them, from now on
    con.execute("INSERT INTO snapshot_gone SELECT unnest(?::VARCHAR[])", [ids])


def delete_predictions(con: Con, run_ids: Sequence[str]) -> None:
    """The per-sample rows (predictions and grades) of these runs, e.g. before a reload."""
    for table in ("predictions", "grades"):
        con.execute(f"DELETE FROM {table} WHERE list_contains(?, run_id)", [list(run_ids)])


def load_predictions(con: Con, files: Sequence[str]) -> None:
    """predictions.parquet files (the run folder names the run)."""
    if not files:
        return
    con.execute(
        f"""
        INSERT INTO predictions
        SELECT {_FOLDER_OF_FILE}, CAST(sample_id AS VARCHAR), CAST(score AS DOUBLE),
               CAST(label AS TINYINT), CAST(explanation AS VARCHAR)
        FROM read_parquet(?, filename = true, union_by_name = true)
        """,
        [list(files)],
    )


def load_grades(con: Con, files: Sequence[str]) -> None:
    if not files:
        return
    con.execute(
        f"""
        INSERT INTO grades
        SELECT {_FOLDER_OF_FILE}, CAST(sample_id AS VARCHAR), judge, protocol,
               CAST(grade AS DOUBLE), rationale
        FROM read_parquet(?, filename = true, union_by_name = true)
        """,
        [list(files)],
    )


def delete_labels(con: Con, run_ids: Sequence[str]) -> None:
    con.execute("DELETE FROM labels WHERE list_contains(?, run_id)", [list(run_ids)])


def load_labels(con: Con, benchmark: str, files: Sequence[str]) -> None:
    """Runs' stored final labels (labels.parquet, as the scorer made them), with each sample's
    gold label and position from the benchmark's samples."""
    if not files:
        return
    con.execute(
        f"""
        INSERT INTO labels
        SELECT {_FOLDER_OF_FILE}, s.sample_id, s.unit, s.label, CAST(l.score AS DOUBLE),
               CAST(l.final_label AS TINYINT), l.rolled, s.ix
        FROM read_parquet(?, filename = true, union_by_name = true) l
        JOIN samples s ON s.benchmark = ? AND s.sample_id = l.sample_id AND s.unit = l.unit
        """,
        [list(files), benchmark],
    )


def insert_labels(con: Con, benchmark: str, labels: pa.Table) -> None:
    """Final labels made in Python (evaluator.core.scoring.final_labels, for runs stored without
    them; a run_id column beside LABEL_COLUMNS), with gold labels and positions from the
    samples."""
    con.register("_final_labels", labels)
    try:
        con.execute(
            """
            INSERT INTO labels
            SELECT l.run_id, s.sample_id, s.unit, s.label, l.score, l.final_label, l.rolled,
                   s.ix
            FROM _final_labels l
            JOIN samples s ON s.benchmark = ? AND s.sample_id = l.sample_id AND s.unit = l.unit
            """,
            [benchmark],
        )
    finally:
        con.unregister("_final_labels")


def label_inputs(con: Con, benchmark: str) -> pd.DataFrame:
    """The sample columns final labels are made from (evaluator.core.scoring.final_labels)."""
    return con.execute(
        "SELECT sample_id, split, unit, summary_id, domain, label FROM samples "
        "WHERE benchmark = ? ORDER BY ix",
        [benchmark],
    ).df()


def run_thresholds(con: Con, run_ids: Sequence[str]) -> pd.DataFrame:
    """How the given runs turned scores into labels: policy, threshold, per_domain, splits."""
    return con.execute(
        "SELECT run_id, policy, threshold, per_domain, splits FROM runs "
        "WHERE list_contains(?, run_id)",
        [list(run_ids)],
    ).df()


def run_predictions(con: Con, run_ids: Sequence[str]) -> pd.DataFrame:
    """The given runs' loaded predictions: run_id, sample_id, score, label."""
    return con.execute(
        "SELECT run_id, sample_id, score, label FROM predictions WHERE list_contains(?, run_id)",
        [list(run_ids)],
    ).df()


def load_reported(con: Con, files: Sequence[str]) -> None:
    con.execute("DELETE FROM reported")
    if not files:
        return
    con.execute(
        """
        INSERT INTO reported
        SELECT model, kind, benchmark, split, unit, slice_kind, coalesce(slice_value, ''),
               metric, TRY_CAST(value AS DOUBLE), TRY_CAST(n AS BIGINT), coverage, source,
               note, filename
        FROM read_csv(?, all_varchar = true, header = true, filename = true,
                      union_by_name = true)
        """,
        [list(files)],
    )


# --------------------------------------------------------------------------------------------
# runs and results


def runs_frame(
    con: Con, benchmark: str | None = None, include_hidden: bool = False
) -> pd.DataFrame:
    sql = "SELECT * FROM runs WHERE (? IS NULL OR benchmark = ?)"
    if not include_hidden:
        sql += " AND NOT hidden"
    sql += " ORDER BY created_at, run_id"
    return con.execute(sql, [benchmark, benchmark]).df()


def run_row(con: Con, run_id: str) -> dict[str, Any] | None:
    df = con.execute("SELECT * FROM runs WHERE run_id = ?", [run_id]).df()
    return None if df.empty else {str(k): v for k, v in df.iloc[0].to_dict().items()}


def hidden_runs(con: Con, benchmark: str) -> set[str]:
    """The benchmark's runs off the board (moderated or superseded)."""
    rows = con.execute(
        "SELECT run_id FROM runs WHERE benchmark = ? AND hidden", [benchmark]
    ).fetchall()
    return {str(r[0]) for r in rows}


def run_benchmarks(con: Con) -> list[str]:
    rows = con.execute("SELECT DISTINCT benchmark FROM runs WHERE NOT hidden ORDER BY 1").fetchall()
    return [str(r[0]) for r in rows]


def result_dimensions(con: Con, benchmark: str) -> pd.DataFrame:
    """Every (unit, slice_kind, slice_value, metric, grader) with a number, from runs or papers."""
    return con.execute(
        """
        SELECT unit, slice_kind, slice_value, metric, grader, 'run' AS source, count(*) AS n
        FROM results x JOIN runs r USING (run_id)
        WHERE r.benchmark = ? AND NOT r.hidden
        GROUP BY ALL
        UNION ALL
        SELECT unit, slice_kind, slice_value, metric, NULL, 'reported', count(*)
        FROM reported
        WHERE benchmark = ? AND coalesce(note, '') NOT LIKE '%role=judge%'
        GROUP BY ALL
        """,
        [benchmark, benchmark],
    ).df()


def all_result_dimensions(con: Con) -> pd.DataFrame:
    """result_dimensions of every benchmark at once (with a benchmark column): one pass over
    the results for a page that shows every benchmark."""
    return con.execute(
        """
        SELECT r.benchmark, unit, slice_kind, slice_value, metric, grader, 'run' AS source,
               count(*) AS n
        FROM results x JOIN runs r USING (run_id)
        WHERE NOT r.hidden
        GROUP BY ALL
        UNION ALL
        SELECT benchmark, unit, slice_kind, slice_value, metric, NULL, 'reported', count(*)
        FROM reported
        WHERE coalesce(note, '') NOT LIKE '%role=judge%'
        GROUP BY ALL
        """
    ).df()


def has_runs(con: Con, benchmark: str) -> bool:
    """Whether the benchmark has a visible run (a published-only board skips the run queries)."""
    row = con.execute(
        "SELECT count(*) FROM runs WHERE benchmark = ? AND NOT hidden", [benchmark]
    ).fetchone()
    return bool(row and row[0])


def run_results(
    con: Con,
    benchmark: str,
    unit: str,
    slice_kind: str,
    slice_value: str | None = None,
    metric: str | None = None,
) -> pd.DataFrame:
    """Every metric (or only `metric`) of every visible run of the benchmark for one slice (or
    all its values); a benchmark without runs (published numbers only) gets the columns
    without a pass over the results."""
    none = "" if has_runs(con, benchmark) else " AND false"
    return con.execute(
        """
        SELECT r.run_id, r.model_name, r.model_kind, r.origin, r.model_org, r.model_params,
               r.model_url, r.benchmark_version, r.policy, r.threshold, r.created_at,
               r.n_total, r.predicted, r.missing, r.unparsable,
               CASE WHEN r.origin = 'imported' THEN r.submission END AS submission,
               x.split, x.unit, x.slice_kind, x.slice_value, x.metric, x.grader, x.value,
               x.ci_low, x.ci_high, x.n, x.coverage, x.aggregation
        FROM results x JOIN runs r USING (run_id)
        WHERE r.benchmark = ? AND NOT r.hidden AND x.unit = ? AND x.slice_kind = ?
              AND (? IS NULL OR x.slice_value = ?) AND (? IS NULL OR x.metric = ?)"""
        + none
        + """
        ORDER BY r.run_id, x.metric
        """,
        [benchmark, unit, slice_kind, slice_value, slice_value, metric, metric],
    ).df()


def board_slice_results(
    con: Con,
    benchmark: str,
    unit: str,
    slice_kind: str,
    slice_value: str,
    metric: str,
    grader: str | None,
) -> pd.DataFrame:
    """The board's per-slice columns of every visible run, for one metric (and grader: None
    for none): run_id, split, value, 95% CI, n, and the coverage as text (its domains joined
    by the unit separator, in their order; NULL for none). The run's own fields (name, kind,
    threshold, ...) do not change with the slice: see board_run_fields."""
    return con.execute(
        """
        SELECT x.run_id, x.split, x.value, x.ci_low, x.ci_high, x.n,
               array_to_string(x.coverage, chr(31)) AS coverage
        FROM results x JOIN runs r USING (run_id)
        WHERE r.benchmark = ? AND NOT r.hidden AND x.unit = ? AND x.slice_kind = ?
              AND x.slice_value = ? AND x.metric = ? AND x.grader IS NOT DISTINCT FROM ?
        ORDER BY x.run_id
        """,
        [benchmark, unit, slice_kind, slice_value, metric, grader],
    ).df()


def board_run_fields(con: Con, run_ids: Sequence[str]) -> pd.DataFrame:
    """The fields of these runs that the board shows beside every slice's numbers (the
    submission record only for an imported run, whose source it names)."""
    return con.execute(
        """
        SELECT run_id, model_name, model_kind, origin, model_org, model_params,
               benchmark_version, policy, threshold, created_at, missing, unparsable,
               CASE WHEN origin = 'imported' THEN submission END AS submission
        FROM runs
        WHERE list_contains(?, run_id)
        ORDER BY run_id
        """,
        [list(run_ids)],
    ).df()


def board_other_values(
    con: Con, benchmark: str, unit: str, slice_kind: str, slice_value: str, metric: str
) -> dict[str, np.ndarray]:
    """The point value of every other ungraded metric of every visible run for one slice, as
    arrays (run_id, metric, value): the board's extra metric columns."""
    got = con.execute(
        """
        SELECT x.run_id, x.metric, x.value
        FROM results x JOIN runs r USING (run_id)
        WHERE r.benchmark = ? AND NOT r.hidden AND x.unit = ? AND x.slice_kind = ?
              AND x.slice_value = ? AND x.metric <> ? AND x.grader IS NULL
        ORDER BY x.run_id, x.metric
        """,
        [benchmark, unit, slice_kind, slice_value, metric],
    ).fetchnumpy()
    value = got["value"]
    return {
        "run_id": np.asarray(got["run_id"], dtype=object),
        "metric": np.asarray(got["metric"], dtype=object),
        "value": np.ma.filled(np.ma.asarray(value, dtype=float), np.nan),  # NULL: NaN
    }


def reported_results(
    con: Con, benchmark: str, unit: str, slice_kind: str, slice_value: str | None = None
) -> pd.DataFrame:
    """Published numbers for one slice; judge-agreement rows (role=judge) are left out."""
    return con.execute(
        """
        SELECT model, kind, split, unit, slice_kind, slice_value, metric, value, n, coverage,
               source, note
        FROM reported
        WHERE benchmark = ? AND unit = ? AND slice_kind = ? AND (? IS NULL OR slice_value = ?)
              AND coalesce(note, '') NOT LIKE '%role=judge%'
        ORDER BY model, source
        """,
        [benchmark, unit, slice_kind, slice_value, slice_value],
    ).df()


def reported_benchmarks(con: Con) -> list[str]:
    rows = con.execute("SELECT DISTINCT benchmark FROM reported ORDER BY 1").fetchall()
    return [str(r[0]) for r in rows]


def reported_judges(con: Con, benchmark: str | None = None) -> pd.DataFrame:
    """Published agreement of LLM judges with human grades (rows with role=judge)."""
    return con.execute(
        """
        SELECT model AS judge, kind, benchmark, metric, value, n, source, note
        FROM reported
        WHERE note LIKE '%role=judge%' AND (? IS NULL OR benchmark = ?)
        ORDER BY benchmark, model, note, metric
        """,
        [benchmark, benchmark],
    ).df()


# --------------------------------------------------------------------------------------------
# per-sample labels (ranking, compare)


def scored_samples(con: Con, benchmark: str, unit: str, splits: Sequence[str]) -> pd.DataFrame:
    """The samples of one unit in the given splits, in sample_id order (the scorer's frame)."""
    return con.execute(
        """
        SELECT sample_id, split, unit, domain, label, human_score, error_types, attributes,
               summary_id, ix
        FROM samples
        WHERE benchmark = ? AND unit = ? AND list_contains(?, split)
        ORDER BY sample_id
        """,
        [benchmark, unit, list(splits)],
    ).df()


def label_matrix(
    con: Con, run_ids: Sequence[str], unit: str, sample_ix: Sequence[int] | np.ndarray
) -> np.ndarray:
    """(len(run_ids), len(sample_ix)) int8 matrix of final labels; -1 where there is none.

    sample_ix: the samples' `ix` (their position in the benchmark, by sample_id)."""
    out = _run_sample_matrix(con, run_ids, unit, sample_ix, "pred", -1.0)
    return out.astype(np.int8)


def score_matrix(
    con: Con, run_ids: Sequence[str], unit: str, sample_ix: Sequence[int] | np.ndarray
) -> np.ndarray:
    """(len(run_ids), len(sample_ix)) float matrix of the scores the runs' final labels were
    made from (the labels table); NaN where a run has none. sample_ix as in label_matrix."""
    return _run_sample_matrix(con, run_ids, unit, sample_ix, "score", np.nan)


def _run_sample_matrix(
    con: Con,
    run_ids: Sequence[str],
    unit: str,
    sample_ix: Sequence[int] | np.ndarray,
    column: str,
    fill: float,
) -> np.ndarray:
    """(runs x samples) float matrix of one labels-table column ("pred" or "score"), `fill`
    where a run has no value for a sample."""
    assert column in ("pred", "score")  # a fixed column name, never text from a caller
    ids = list(run_ids)
    ix = np.asarray(sample_ix, dtype=np.int64)
    out = np.full((len(ids), len(ix)), fill)
    if not ids or not len(ix):
        return out
    got = con.execute(
        f"""
        WITH r AS (SELECT unnest(?::VARCHAR[]) AS run_id, unnest(range(?)) AS i)
        SELECT r.i, l.ix, l.{column} AS v
        FROM labels l JOIN r ON r.run_id = l.run_id
        WHERE l.unit = ? AND l.{column} IS NOT NULL
        """,
        [ids, len(ids), unit],
    ).fetchnumpy()
    col = np.full(int(max(ix.max(), np.max(got["ix"], initial=0))) + 1, -1, dtype=np.int64)
    col[ix] = np.arange(len(ix))
    j = col[np.asarray(got["ix"], dtype=np.int64)]
    keep = j >= 0
    out[np.asarray(got["i"], dtype=np.int64)[keep], j[keep]] = np.asarray(got["v"], dtype=float)[
        keep
    ]
    return out


def pair_frame(con: Con, benchmark: str, unit: str, run_a: str, run_b: str) -> pd.DataFrame:
    """Samples both runs were scored on, with both final labels and scores."""
    return con.execute(
        """
        SELECT s.sample_id, s.split, s.unit, s.domain, s.label, s.human_score, s.error_types,
               s.attributes, s.summary_id, left(s.summary, 160) AS summary,
               a.pred AS pred_a, b.pred AS pred_b, a.score AS score_a, b.score AS score_b
        FROM samples s
        JOIN labels a ON a.sample_id = s.sample_id AND a.run_id = ? AND a.unit = s.unit
        JOIN labels b ON b.sample_id = s.sample_id AND b.run_id = ? AND b.unit = s.unit
        WHERE s.benchmark = ? AND s.unit = ?
        ORDER BY s.sample_id
        """,
        [run_a, run_b, benchmark, unit],
    ).df()


def labelled_runs(con: Con, benchmark: str) -> pd.DataFrame:
    """Per visible run of the benchmark: which units it has final labels (and scores) for, and
    how many (run_units, made by build_sample_stats)."""
    return con.execute(
        """
        SELECT u.run_id, u.unit, u.n_labelled, u.n_rows, u.n_scored
        FROM run_units u JOIN runs r USING (run_id)
        WHERE u.benchmark = ? AND NOT r.hidden
        ORDER BY u.run_id, u.unit
        """,
        [benchmark],
    ).df()


_STORED_LABELS = f"""
    SELECT {_FOLDER_OF_FILE} AS run_id, CAST(sample_id AS VARCHAR) AS sample_id,
           CAST(unit AS VARCHAR) AS unit, CAST(final_label AS TINYINT) AS pred,
           CAST(score AS DOUBLE) AS score, CAST(rolled AS BOOLEAN) AS rolled
    FROM read_parquet(?, filename = true, union_by_name = true)
"""


def _label_rows(label_files: Sequence[str], table_runs: Sequence[str]) -> tuple[str, list[Any]]:
    """A subquery of final labels (run_id, sample_id, unit, pred, score, rolled): the given
    labels.parquet files read in place, and the labels table's rows of `table_runs`."""
    parts, params = [], []
    if label_files:
        parts.append(_STORED_LABELS)
        params.append(list(label_files))
    if table_runs:
        parts.append(
            "SELECT run_id, sample_id, unit, pred, score, rolled FROM labels "
            "WHERE list_contains(?, run_id)"
        )
        params.append(list(table_runs))
    if not parts:
        parts.append("SELECT run_id, sample_id, unit, pred, score, rolled FROM labels WHERE false")
    return " UNION ALL ".join(parts), params


def check_label_files(con: Con, label_files: Sequence[str]) -> None:
    """Read the files' rows as build_sample_stats does (duckdb.Error when one fails)."""
    sub, params = _label_rows(label_files, [])
    con.execute(f"SELECT count(*), count(pred), count(score) FROM ({sub})", params).fetchall()


def build_sample_stats(
    con: Con, benchmark: str, label_files: Sequence[str], table_runs: Sequence[str]
) -> None:
    """(Re)make the benchmark's sample_stats and run_units from its visible runs' final
    labels: labels.parquet files read in place (never copied into the database) and, for
    runs stored without them, the labels table's rows (`table_runs`)."""
    con.execute("DELETE FROM sample_stats WHERE benchmark = ?", [benchmark])
    con.execute("DELETE FROM run_units WHERE benchmark = ?", [benchmark])
    sub, params = _label_rows(label_files, table_runs)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _stats AS
        SELECT GROUPING(l.run_id) AS per_sample, l.run_id, r.benchmark_version AS version,
               l.unit, l.sample_id, count(l.pred) AS n_runs,
               count(*) FILTER (WHERE l.pred IS NOT NULL AND l.pred <> s.label) AS n_wrong,
               count(*) AS n_rows, count(l.score) AS n_scored
        FROM ({sub}) l
        JOIN runs r ON r.run_id = l.run_id AND r.benchmark = ? AND NOT r.hidden
        JOIN samples s ON s.benchmark = ? AND s.sample_id = l.sample_id AND s.unit = l.unit
        GROUP BY GROUPING SETS ((r.benchmark_version, l.unit, l.sample_id), (l.run_id, l.unit))
        """,
        [*params, benchmark, benchmark],
    )
    try:
        con.execute(
            "INSERT INTO sample_stats SELECT ?, version, unit, sample_id, n_runs, n_wrong "
            "FROM _stats WHERE per_sample = 1",
            [benchmark],
        )
        con.execute(
            "INSERT INTO run_units SELECT ?, run_id, unit, n_runs, n_rows, n_scored "
            "FROM _stats WHERE per_sample = 0",
            [benchmark],
        )
    finally:
        con.execute("DROP TABLE IF EXISTS _stats")


def explanation_files(con: Con, prediction_files: Sequence[str]) -> list[str]:
    """The predictions.parquet files (of those given) whose explanation column holds text,
    from their footers (a file without the column, or with nothing but nulls, is left out)."""
    if not prediction_files:
        return []
    rows = con.execute(
        """
        SELECT DISTINCT file_name FROM parquet_metadata(?)
        WHERE path_in_schema = 'explanation'
              AND (stats_null_count IS NULL OR stats_null_count < num_values)
        """,
        [list(prediction_files)],
    ).fetchall()
    return sorted(str(r[0]) for r in rows)


def explanation_matches(con: Con, prediction_files: Sequence[str], needle: str) -> list[str]:
    """Sample ids whose explanation (in the given predictions.parquet files, read in place)
    contains `needle` (lower case, literally)."""
    if not prediction_files or not needle:
        return []
    rows = con.execute(
        """
        SELECT DISTINCT CAST(sample_id AS VARCHAR)
        FROM read_parquet(?, union_by_name = true)
        WHERE contains(lower(CAST(explanation AS VARCHAR)), ?)
        """,
        [list(prediction_files), needle],
    ).fetchall()
    return sorted(str(r[0]) for r in rows)


def sample_predictions_in_files(
    con: Con,
    benchmark: str,
    sample_id: str,
    label_files: Sequence[str],
    table_runs: Sequence[str],
    explanation_files: Sequence[str],
) -> pd.DataFrame:
    """Every visible run's final label, score and explanation for one sample (the columns of
    predictions_for_sample), from labels.parquet files read in place (and the labels table
    for `table_runs`); explanations from the given predictions.parquet files."""
    sub, params = _label_rows(label_files, table_runs)
    expl = "SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS explanation WHERE false"
    eparams: list[Any] = []
    if explanation_files:
        expl = (
            f"SELECT {_FOLDER_OF_FILE} AS run_id, CAST(explanation AS VARCHAR) AS explanation "
            "FROM read_parquet(?, filename = true, union_by_name = true) "
            "WHERE CAST(sample_id AS VARCHAR) = ?"
        )
        eparams = [list(explanation_files), sample_id]
    return con.execute(
        f"""
        WITH l AS (SELECT * FROM ({sub}) WHERE sample_id = ?),
             e AS ({expl}),
             t AS (SELECT run_id, explanation FROM predictions
                   WHERE list_contains(?, run_id) AND sample_id = ?)
        SELECT r.run_id, r.model_name, r.model_kind, r.origin, r.benchmark_version, l.unit,
               l.score, l.pred, s.label AS gold, l.rolled,
               coalesce(e.explanation, t.explanation) AS explanation
        FROM l
        JOIN runs r ON r.run_id = l.run_id AND r.benchmark = ? AND NOT r.hidden
        JOIN samples s ON s.benchmark = ? AND s.sample_id = l.sample_id AND s.unit = l.unit
        LEFT JOIN e ON e.run_id = l.run_id
        LEFT JOIN t ON t.run_id = l.run_id
        ORDER BY r.model_name, r.run_id
        """,
        [*params, sample_id, *eparams, list(table_runs), sample_id, benchmark, benchmark],
    ).df()


# --------------------------------------------------------------------------------------------
# the samples explorer

SORTS: dict[str, str] = {
    "id": "s.sample_id",
    "most_wrong": "coalesce(d.n_wrong::DOUBLE / nullif(d.n_runs, 0), -1) DESC, s.sample_id",
    "domain": "s.domain, s.sample_id",
}


@dataclass(frozen=True)
class SampleFilter:
    """What the explorer shows. Every field maps to one fixed WHERE clause with parameters."""

    benchmark: str
    unit: str
    version: str | None = None  # runs on other versions do not count for "wrong" filters
    splits: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    label: int | None = None
    error_types: tuple[str, ...] = ()
    topic_types: tuple[str, ...] = ()
    text: str = ""
    wrong_by: str | None = None  # run id
    most_wrong: float | None = None  # share of runs that get it wrong, strictly more than this
    min_runs: int = 2
    sort: str = "id"
    extra: tuple[tuple[str, str], ...] = field(default=())  # unused hook for later filters
    # samples whose explanation contains `text` in runs whose rows are not loaded
    # (explorer.store.Store.explanation_hits: predictions.parquet read in place)
    explained: tuple[str, ...] = ()


def _sample_where(f: SampleFilter) -> tuple[str, list[Any]]:
    where = ["s.benchmark = ?", "s.unit = ?"]
    params: list[Any] = [f.benchmark, f.unit]
    if f.splits:
        where.append("list_contains(?, s.split)")
        params.append(list(f.splits))
    if f.domains:
        where.append("list_contains(?, s.domain)")
        params.append(list(f.domains))
    if f.label is not None:
        where.append("s.label = ?")
        params.append(int(f.label))
    if f.error_types:
        where.append("list_has_any(s.error_types, ?)")
        params.append(list(f.error_types))
    if f.topic_types:
        where.append("list_contains(?, s.topic_type)")
        params.append(list(f.topic_types))
    if f.text.strip():
        needle = f.text.strip().lower()
        where.append(
            "(contains(lower(s.summary), ?) OR contains(lower(coalesce(s.document, '')), ?)"
            " OR contains(lower(coalesce(s.reference_explanation, '')), ?)"
            " OR list_contains(?, s.sample_id)"
            " OR EXISTS (SELECT 1 FROM predictions p JOIN runs r ON r.run_id = p.run_id"
            "            WHERE p.sample_id = s.sample_id AND r.benchmark = s.benchmark"
            "            AND NOT r.hidden AND contains(lower(p.explanation), ?)))"
        )
        params += [needle] * 3 + [list(f.explained), needle]
    if f.wrong_by:
        where.append(
            "EXISTS (SELECT 1 FROM labels l WHERE l.run_id = ? AND l.sample_id = s.sample_id"
            " AND l.unit = s.unit AND l.pred IS NOT NULL AND l.pred <> l.gold)"
        )
        params.append(f.wrong_by)
    if f.most_wrong is not None:
        where.append("d.n_runs >= ? AND d.n_wrong > d.n_runs * ?")
        params += [int(f.min_runs), float(f.most_wrong)]
    return " AND ".join(where), params


_DIFFICULTY = """
WITH d AS (
    SELECT sample_id, sum(n_runs) AS n_runs, sum(n_wrong) AS n_wrong
    FROM sample_stats
    WHERE benchmark = ? AND unit = ? AND (? IS NULL OR version = ?)
    GROUP BY sample_id
)
"""


def count_samples(con: Con, f: SampleFilter) -> int:
    where, params = _sample_where(f)
    row = con.execute(
        _DIFFICULTY + f"SELECT count(*) FROM samples s LEFT JOIN d USING (sample_id) WHERE {where}",
        [f.benchmark, f.unit, f.version, f.version, *params],
    ).fetchone()
    return int(row[0]) if row else 0


def samples_page(con: Con, f: SampleFilter, limit: int, offset: int) -> pd.DataFrame:
    where, params = _sample_where(f)
    order = SORTS.get(f.sort, SORTS["id"])
    return con.execute(
        _DIFFICULTY
        + f"""
        SELECT s.sample_id, s.split, s.domain, s.label, s.error_types, s.topic_type,
               left(s.summary, 240) AS summary, d.n_runs, d.n_wrong
        FROM samples s LEFT JOIN d USING (sample_id)
        WHERE {where}
        ORDER BY {order}
        LIMIT ? OFFSET ?
        """,
        [f.benchmark, f.unit, f.version, f.version, *params, int(limit), int(offset)],
    ).df()


def sample_facets(con: Con, benchmark: str, unit: str) -> dict[str, list[str]]:
    """The filter options of a benchmark unit: splits, domains, error types, topic types."""
    out: dict[str, list[str]] = {}
    for name, expr in (("splits", "split"), ("domains", "domain"), ("topic_types", "topic_type")):
        rows = con.execute(
            f"SELECT DISTINCT {expr} FROM samples WHERE benchmark = ? AND unit = ? "
            f"AND {expr} IS NOT NULL ORDER BY 1",
            [benchmark, unit],
        ).fetchall()
        out[name] = [str(r[0]) for r in rows]
    rows = con.execute(
        "SELECT t, count(*) FROM (SELECT unnest(error_types) AS t FROM samples "
        "WHERE benchmark = ? AND unit = ?) GROUP BY t ORDER BY 2 DESC, 1",
        [benchmark, unit],
    ).fetchall()
    out["error_types"] = [str(r[0]) for r in rows]
    rows = con.execute(
        "SELECT DISTINCT unit FROM samples WHERE benchmark = ? ORDER BY 1", [benchmark]
    ).fetchall()
    out["units"] = [str(r[0]) for r in rows]
    return out


def sample_units(con: Con, benchmark: str) -> list[str]:
    rows = con.execute(
        "SELECT unit, count(*) FROM samples WHERE benchmark = ? GROUP BY unit ORDER BY 2 DESC",
        [benchmark],
    ).fetchall()
    return [str(r[0]) for r in rows]


def sample(con: Con, benchmark: str, sample_id: str) -> dict[str, Any] | None:
    df = con.execute(
        "SELECT * FROM samples WHERE benchmark = ? AND sample_id = ?", [benchmark, sample_id]
    ).df()
    if df.empty:
        return None
    row = {str(k): v for k, v in df.iloc[0].to_dict().items()}
    et = row.get("error_types")
    row["error_types"] = [str(x) for x in et] if et is not None else []
    return row


def sentences_of(con: Con, benchmark: str, summary_id: str) -> pd.DataFrame:
    """TofuEval: the annotated sentences of one summary, in order."""
    return con.execute(
        """
        SELECT sample_id, sent_idx, summary AS sentence, label, error_types,
               reference_explanation
        FROM samples
        WHERE benchmark = ? AND unit = 'sentence' AND summary_id = ?
        ORDER BY sent_idx NULLS LAST, sample_id
        """,
        [benchmark, summary_id],
    ).df()


def predictions_for_sample(con: Con, benchmark: str, sample_id: str) -> pd.DataFrame:
    """Every visible run's final label, score and explanation for one sample."""
    return con.execute(
        """
        SELECT r.run_id, r.model_name, r.model_kind, r.origin, r.benchmark_version, l.unit,
               l.score, l.pred, l.gold, l.rolled, p.explanation
        FROM labels l
        JOIN runs r ON r.run_id = l.run_id
        LEFT JOIN predictions p ON p.run_id = l.run_id AND p.sample_id = l.sample_id
        WHERE r.benchmark = ? AND NOT r.hidden AND l.sample_id = ?
        ORDER BY r.model_name, r.run_id
        """,
        [benchmark, sample_id],
    ).df()


def grades_for_sample(con: Con, benchmark: str, sample_id: str) -> pd.DataFrame:
    return con.execute(
        """
        SELECT g.run_id, r.model_name, g.judge, g.protocol, g.grade, g.rationale
        FROM grades g JOIN runs r ON r.run_id = g.run_id
        WHERE r.benchmark = ? AND NOT r.hidden AND g.sample_id = ?
        ORDER BY r.model_name, g.judge, g.protocol
        """,
        [benchmark, sample_id],
    ).df()


def samples_by_id(con: Con, benchmark: str, sample_ids: Sequence[str]) -> pd.DataFrame:
    return con.execute(
        "SELECT sample_id, left(summary, 160) AS summary FROM samples "
        "WHERE benchmark = ? AND list_contains(?, sample_id)",
        [benchmark, list(sample_ids)],
    ).df()


# --------------------------------------------------------------------------------------------
# explanations and grades


def graded_runs(con: Con) -> pd.DataFrame:
    """Per visible run with grades: grader (judge, protocol), n graded, mean grade."""
    return con.execute(
        """
        SELECT r.run_id, r.benchmark, r.model_name, r.model_kind, r.origin, g.judge,
               g.protocol, count(*) AS n, count(g.grade) AS n_graded, avg(g.grade) AS mean_grade
        FROM grades g JOIN runs r ON r.run_id = g.run_id
        WHERE NOT r.hidden
        GROUP BY ALL
        ORDER BY r.benchmark, r.model_name, g.judge, g.protocol
        """
    ).df()


def explanation_types(con: Con, benchmark: str | None = None) -> pd.DataFrame:
    """Human-labelled explanation types (protocol 'human', type in the rationale) per run."""
    return con.execute(
        """
        SELECT r.run_id, r.benchmark, r.model_name, r.model_kind, r.origin,
               coalesce(g.rationale, '(none)') AS explanation_type, count(*) AS n
        FROM grades g JOIN runs r ON r.run_id = g.run_id
        WHERE NOT r.hidden AND g.protocol = 'human' AND (? IS NULL OR r.benchmark = ?)
        GROUP BY ALL
        ORDER BY r.model_name, explanation_type
        """,
        [benchmark, benchmark],
    ).df()


def judge_pairs(con: Con) -> pd.DataFrame:
    """Judge grades next to the human grade of the same explanation (same run and sample)."""
    return con.execute(
        """
        SELECT r.benchmark, j.judge, j.protocol, j.run_id, j.sample_id, j.grade AS judge_grade,
               h.grade AS human_grade
        FROM grades j
        JOIN grades h ON h.run_id = j.run_id AND h.sample_id = j.sample_id
             AND h.protocol = 'human'
        JOIN runs r ON r.run_id = j.run_id
        WHERE NOT r.hidden AND j.protocol <> 'human'
        ORDER BY r.benchmark, j.judge, j.protocol, j.run_id, j.sample_id
        """
    ).df()


def judge_runs(con: Con) -> pd.DataFrame:
    """(benchmark, judge, protocol) that graded anything, human-paired or not."""
    return con.execute(
        """
        SELECT r.benchmark, g.judge, g.protocol, count(*) AS n, count(g.grade) AS n_graded
        FROM grades g JOIN runs r ON r.run_id = g.run_id
        WHERE NOT r.hidden AND g.protocol <> 'human'
        GROUP BY ALL ORDER BY ALL
        """
    ).df()


# --------------------------------------------------------------------------------------------
# memory / size


def table_sizes(con: Con) -> dict[str, int]:
    out = {}
    for t in ("samples", "runs", "results", "predictions", "labels", "grades", "reported"):
        row = con.execute(f"SELECT count(*) FROM {t}").fetchone()
        out[t] = int(row[0]) if row else 0
    return out


def overall_numbers(con: Con) -> pd.DataFrame:
    """Every Overall number on the board, of every benchmark: the per-slice results of visible
    runs (run.json, already in the store; no per-sample file is read) and the published numbers
    (judge-agreement rows left out). One row per run and metric, or per published row; the
    cross-benchmark view (explorer.across) picks each benchmark's primary metric."""
    return con.execute(
        """
        SELECT 'run' AS origin_code, r.benchmark, r.model_name AS model, r.model_kind AS kind,
               r.run_id, x.split, x.unit, x.metric, x.grader, x.value, x.ci_low, x.ci_high, x.n,
               CAST(NULL AS VARCHAR) AS source
        FROM results x JOIN runs r USING (run_id)
        WHERE NOT r.hidden AND x.slice_kind = 'overall' AND x.value IS NOT NULL
        UNION ALL
        SELECT 'reported', benchmark, model, kind, NULL, split, unit, metric, NULL, value, NULL,
               NULL, n, source
        FROM reported
        WHERE slice_kind = 'overall' AND value IS NOT NULL
              AND coalesce(note, '') NOT LIKE '%role=judge%'
        ORDER BY 2, 1, 3
        """
    ).df()
