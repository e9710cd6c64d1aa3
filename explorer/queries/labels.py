"""Per-sample labels (ranking, compare): the scored samples of a split, label and score
matrices, pairs of runs, the sample statistics and the explanations in prediction files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from explorer.queries.schema import FOLDER_OF_FILE, Con


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
    SELECT {FOLDER_OF_FILE} AS run_id, CAST(sample_id AS VARCHAR) AS sample_id,
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
            f"SELECT {FOLDER_OF_FILE} AS run_id, CAST(explanation AS VARCHAR) AS explanation "
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
