"""Loading the files into the tables (called by explorer.store under its lock): samples, run.json
files through a staging table, supersession, the snapshot, predictions, grades, labels and
published numbers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from explorer.queries.schema import (
    FOLDER_OF_FILE,
    RESULT_COLUMNS,
    RUN_COLUMNS,
    RUN_JSON_STRUCTURE,
    Con,
)


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
    return stage_checked_runs(con, files, [], [])


def stage_checked_runs(
    con: Con, files: Sequence[str], ledgers: Sequence[str], keys: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """stage_run_files, where the run.json text of some folders comes from the engine's ledger
    of checked runs (evaluator.store.runs.CHECKED_DIR: Parquet files with run_id, m_run and
    run_json) instead of their files: `keys` names those rows as "<run_id>:<m_run>" (one
    Parquet read instead of a file per run). A ledger's texts are the engine's, each checked
    as a RunRecord before it was noted: parsed once, by from_json, where a file's text is
    first checked to be a JSON object."""
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _run_text AS
        SELECT {FOLDER_OF_FILE} AS folder, filename, content, json_valid(content) AS ok
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
    if keys:
        # parsed as they are read, in the same pipeline (on every thread, a row group each)
        ids = [k.rsplit(":", 1)[0] for k in keys]
        con.execute(
            """
            INSERT INTO _run_json
            SELECT folder, j.* FROM (
                SELECT run_id AS folder, from_json(run_json, ?) AS j FROM (
                    SELECT run_id, run_json FROM read_parquet(?, union_by_name = true)
                    WHERE run_id BETWEEN ? AND ?  -- row groups outside the range are not read
                      AND list_contains(?, run_id || ':' || CAST(m_run AS VARCHAR))
                      AND run_json IS NOT NULL
                    QUALIFY row_number() OVER (PARTITION BY run_id) = 1
                )
            )
            """,
            [RUN_JSON_STRUCTURE, list(ledgers), min(ids), max(ids), list(keys)],
        )
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


SnapshotState = tuple[str, str, int, bool, bool, list[int | None], int | None, str | None]
SNAPSHOT_STATE_COLUMNS = (
    "folder",
    "benchmark",
    "s_mtime",
    "s_grades",
    "s_labels",
    "s_files",
    "s_folder",
    "s_pack",
)  # a SnapshotState's fields as the snapshot's runs file names them


def write_snapshot(
    con: Con,
    states: Sequence[SnapshotState],
    paths: tuple[str, str, str],
    generation: str,
    dirs: tuple[int | None, int | None] = (None, None),
) -> None:
    """Write the results table to the results path, the run_dimensions table (filled by the
    caller from these results: explorer.queries.results.fill_run_dimensions) to the
    dimensions path, then the runs table with each run folder's state (folder, benchmark,
    run.json mtime, has grades, has labels, data files' mtimes, the folder's own mtime, the
    pack a pulled run is read from) and the `generation` that names the other two files to the
    runs path (paths: runs, results, dimensions; Parquet; the caller renames the runs file into
    place); `dirs`: the runs and packs folders' mtimes read before the states were (beside
    every row)."""
    runs_path, results_path, dims_path = paths
    state = pa.table(
        {
            "folder": [s[0] for s in states],
            "s_mtime": pa.array([s[2] for s in states], pa.int64()),
            "s_grades": [s[3] for s in states],
            "s_labels": [s[4] for s in states],
            "s_files": pa.array([s[5] for s in states], pa.list_(pa.int64())),
            "s_folder": pa.array([s[6] for s in states], pa.int64()),
            "s_pack": pa.array([s[7] for s in states], pa.string()),
            "s_runs_dir": pa.array([dirs[0]] * len(states), pa.int64()),
            "s_packs_dir": pa.array([dirs[1]] * len(states), pa.int64()),
        }
    )
    cur = con.cursor()
    try:
        # by benchmark, level, slice and metric, in small row groups: a query for one view
        # reads the row groups of that view only, each metric's rows together (at 10,000
        # runs a view's scan takes a quarter less than with the metrics of a run together).
        # Written by DuckDB itself, in a stream: the tables are not copied out of it (at
        # 10,000 runs, some 100 MB at the peak)
        _copy_to_parquet(
            cur,
            "SELECT x.* FROM results x LEFT JOIN runs r USING (run_id) ORDER BY r.benchmark, "
            "x.unit, x.slice_kind, x.slice_value, x.metric, x.grader, x.run_id",
            results_path,
            row_group_size=4096,
        )
        _copy_to_parquet(cur, "SELECT * FROM run_dimensions", dims_path)
        cur.register("_snap_state", state)
        _copy_to_parquet(
            cur,
            "SELECT r.*, s.s_mtime, s.s_grades, s.s_labels, s.s_files, s.s_folder, "
            "s.s_pack, s.s_runs_dir, s.s_packs_dir, "
            f"'{generation}' AS s_generation FROM runs r JOIN _snap_state s USING (folder)",
            runs_path,
        )
        cur.unregister("_snap_state")
    finally:
        cur.close()


def _copy_to_parquet(con: Con, sql: str, path: str, row_group_size: int | None = None) -> None:
    """A query's rows written to a Parquet file by DuckDB, in the query's order (path: see
    _own_path)."""
    _own_path(path)
    options = "FORMAT parquet" + (f", ROW_GROUP_SIZE {row_group_size}" if row_group_size else "")
    # one thread: a parallel copy keeps a row group in flight per thread (at 10,000 runs the
    # process's peak memory is 480 MB instead of 560 MB, in the same time)
    with _one_thread(con):
        con.execute(f"COPY ({sql}) TO '{path}' ({options})")


@contextlib.contextmanager
def _one_thread(con: Con) -> Iterator[None]:
    """DuckDB on one thread for the statements inside, then as many as before."""
    threads = con.execute("SELECT current_setting('threads')").fetchone()
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(threads[0]) if threads else 1}")


def _own_path(path: str) -> None:
    """A snapshot file's path goes into SQL text (a view's or COPY's file cannot be a bound
    parameter): the store's own names only, never one with a quote or backslash."""
    if "'" in path or "\\" in path:
        raise ValueError(f"a snapshot path with a quote or backslash: {path!r}")


def load_snapshot(
    con: Con, runs_path: str, results_path: Callable[[str], str], dims_path: Callable[[str], str]
) -> tuple[pa.Table, tuple[int | None, int | None], bool]:
    """Fill the runs table from a snapshot (write_snapshot; runs_path: a file no other
    process replaces while it is read, since it is read more than once) and point the results
    at its results file (results_path: where the results file of a generation is); returns
    each run folder's state as written (a table of SNAPSHOT_STATE_COLUMNS: snapshot_states
    makes them tuples), the runs and packs folders' mtimes the states are
    of, and whether the run_dimensions table was filled from the snapshot's dimensions file
    (dims_path: where it is; one missing or unreadable leaves the table to be made again).
    Each read takes the columns it needs from the file, none copied twice."""
    _own_path(runs_path)
    snap = f"read_parquet('{runs_path}')"
    got = con.sql(
        "SELECT folder, benchmark, s_mtime, s_grades, s_labels, s_files, s_folder, s_pack, "
        f"s_generation, s_runs_dir, s_packs_dir FROM {snap}"
    ).to_arrow_table()
    # one generation and one look at the folders for every row
    once = [pc.unique(got[c]).to_pylist() for c in ("s_generation", "s_runs_dir", "s_packs_dir")]
    if any(len(v) != 1 for v in once):
        raise ValueError("a snapshot of runs names one results file")
    generation = str(once[0][0])
    dirs = tuple(None if v[0] is None else int(v[0]) for v in once[1:])
    run_cols = ", ".join(RUN_COLUMNS)
    with _one_thread(con):  # the runs file is one row group: more threads only wait
        con.execute(f"INSERT INTO runs BY NAME SELECT {run_cols} FROM {snap}")
    use_snapshot_results(con, results_path(generation))
    states = got.select(list(SNAPSHOT_STATE_COLUMNS))
    return states, (dirs[0], dirs[1]), _load_dimensions(con, dims_path(generation))


def snapshot_states(table: pa.Table) -> Iterator[SnapshotState]:
    """The states of load_snapshot's table, a tuple per run (SnapshotState's order)."""
    return zip(*(table[c].to_pylist() for c in SNAPSHOT_STATE_COLUMNS), strict=True)


def _load_dimensions(con: Con, path: str) -> bool:
    """The run_dimensions table from a snapshot's dimensions file; False (and the table
    empty) when it cannot be read."""
    con.execute("DELETE FROM run_dimensions")
    try:
        _own_path(path)
        con.execute(f"INSERT INTO run_dimensions BY NAME SELECT * FROM read_parquet('{path}')")
    except (duckdb.Error, ValueError):
        con.execute("DELETE FROM run_dimensions")
        return False
    return True


def use_snapshot_results(con: Con, path: str | None) -> None:
    """Point the results view at a snapshot's results file (read in place, never loaded), or
    at results_new alone (None). The path is the store's own file name; a path with a quote
    is refused, since a view's file cannot be a bound parameter."""
    cols = ", ".join(RESULT_COLUMNS)
    if path is None:
        con.execute(f"CREATE OR REPLACE VIEW results AS SELECT {cols} FROM results_new")
        return
    _own_path(path)
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
        SELECT {FOLDER_OF_FILE}, CAST(sample_id AS VARCHAR), CAST(score AS DOUBLE),
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
        SELECT {FOLDER_OF_FILE}, CAST(sample_id AS VARCHAR), judge, protocol,
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
        SELECT {FOLDER_OF_FILE}, s.sample_id, s.unit, s.label, CAST(l.score AS DOUBLE),
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
