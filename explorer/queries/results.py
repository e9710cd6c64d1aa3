"""Runs and their per-slice results: the runs table, the dimensions a page offers, the board's
narrow queries, and published numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from explorer.queries.schema import Con


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


# every (benchmark, unit, slice, metric, grader) with a number of a visible run, and how many
# results hold it: what the store keeps in the run_dimensions table (fill_run_dimensions)
_RUN_DIMENSIONS = """
    SELECT r.benchmark, unit, slice_kind, slice_value, metric, grader, count(*) AS n
    FROM results x JOIN runs r USING (run_id)
    WHERE NOT r.hidden
    GROUP BY ALL
"""


def fill_run_dimensions(con: Con) -> None:
    """Put the runs' dimensions, from one pass over the results, into the run_dimensions
    table (the store keeps them there while the runs do not change, and in its snapshot)."""
    con.execute("DELETE FROM run_dimensions")
    con.execute(f"INSERT INTO run_dimensions {_RUN_DIMENSIONS}")


def all_result_dimensions(con: Con, kept: bool = False) -> pd.DataFrame:
    """result_dimensions of every benchmark at once (with a benchmark column): one pass over
    the results for a page that shows every benchmark. kept: the runs' dimensions as the
    run_dimensions table holds them (fill_run_dimensions), without a pass over the results;
    only while the runs and results have not changed since it was filled."""
    runs = "SELECT * FROM run_dimensions" if kept else _RUN_DIMENSIONS
    return con.execute(
        f"""
        SELECT benchmark, unit, slice_kind, slice_value, metric, grader, 'run' AS source, n
        FROM ({runs})
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


@dataclass(frozen=True)
class OtherValues:
    """The point value of every other ungraded metric of every visible run on one slice, one
    per entry, as Arrow arrays (no Python text per row): run ids, metrics (dictionary-encoded:
    a handful of names), values (NaN for NULL); in no particular order."""

    run_id: pa.Array
    metric: pa.DictionaryArray
    value: np.ndarray


@dataclass(frozen=True)
class BoardSlice:
    """One view's numbers from one pass over the slice's results: `results`, the board's
    per-slice columns of every visible run for the view's metric and grader (run_id, split,
    value, 95% CI, n, and the coverage as text: its domains joined by the unit separator, in
    their order; NULL for none), ordered by run id; `others`, every other ungraded metric of
    these runs (OtherValues). The run's own fields (name, kind, threshold, ...) do not change
    with the slice: see board_run_fields."""

    results: pd.DataFrame
    others: OtherValues


def board_slice(
    con: Con,
    benchmark: str,
    unit: str,
    slice_kind: str,
    slice_value: str,
    metric: str,
    grader: str | None,
    others: bool = True,
) -> BoardSlice:
    """The view's numbers (BoardSlice) in one query, read through Arrow. others=False: the
    view's metric alone (`others` empty; slice_other_values reads them when they are shown)."""
    got = _slice_rows(
        con, benchmark, unit, slice_kind, slice_value, metric, grader, "all" if others else "view"
    )
    same = pc.fill_null(pc.equal(got["metric"], metric), False)
    ungraded = pc.is_null(got["grader"])
    this = ungraded if grader is None else pc.fill_null(pc.equal(got["grader"], grader), False)
    cols = ["run_id", "split", "value", "ci_low", "ci_high", "n", "coverage"]
    # the view's rows ordered by run id by Arrow's stable sort (DuckDB's ORDER BY costs more
    # here); the other metrics' rows as fetched (what reads them looks each up by run and
    # metric, the first fetched of a run and metric first)
    results = got.select(cols).filter(pc.and_(same, this)).sort_by("run_id").to_pandas()
    if results.empty:  # text columns as DuckDB gives them without rows: objects
        results = results.astype({c: object for c in ("run_id", "split", "coverage")})
    return BoardSlice(results, _other_values(got, pc.and_(pc.invert(same), ungraded)))


def slice_other_values(
    con: Con, benchmark: str, unit: str, slice_kind: str, slice_value: str, metric: str
) -> OtherValues:
    """BoardSlice.others alone: every ungraded metric but `metric` of the slice's visible
    runs."""
    got = _slice_rows(con, benchmark, unit, slice_kind, slice_value, metric, None, "others")
    return _other_values(got, None)


def _other_values(got: pa.Table, keep: pa.ChunkedArray | None) -> OtherValues:
    rest = got.select(["run_id", "metric", "value"])
    rest = rest if keep is None else rest.filter(keep)
    return OtherValues(
        run_id=rest["run_id"].combine_chunks(),
        metric=pc.dictionary_encode(rest["metric"].combine_chunks()),
        value=rest["value"].combine_chunks().to_numpy(zero_copy_only=False).astype(float),
    )


# which of a slice's rows _slice_rows reads: the view's metric and every other ungraded one,
# the view's metric alone, or the other ungraded ones alone
_SLICE_METRICS = {
    "all": "((x.metric = $metric AND x.grader IS NOT DISTINCT FROM $grader) OR x.grader IS NULL)",
    "view": "x.metric = $metric AND x.grader IS NOT DISTINCT FROM $grader",
    "others": "x.metric <> $metric AND x.grader IS NULL",
}


def _slice_rows(
    con: Con,
    benchmark: str,
    unit: str,
    slice_kind: str,
    slice_value: str,
    metric: str,
    grader: str | None,
    which: str,
) -> pa.Table:
    """The slice's results of the benchmark's visible runs (_SLICE_METRICS[which]), as Arrow."""
    return con.sql(
        f"""
        SELECT x.run_id, x.metric, x.grader, x.split, x.value, x.ci_low, x.ci_high, x.n,
               CASE WHEN x.metric = $metric AND x.grader IS NOT DISTINCT FROM $grader
                    THEN array_to_string(x.coverage, chr(31)) END AS coverage
        FROM results x JOIN runs r USING (run_id)
        WHERE r.benchmark = $benchmark AND NOT r.hidden AND x.unit = $unit
              AND x.slice_kind = $kind AND x.slice_value = $value
              AND {_SLICE_METRICS[which]}
        """,
        params={
            "benchmark": benchmark,
            "unit": unit,
            "kind": slice_kind,
            "value": slice_value,
            "metric": metric,
            "grader": grader,
        },
    ).to_arrow_table()


def board_run_fields(
    con: Con, run_ids: Sequence[str] | None, benchmark: str | None = None
) -> pd.DataFrame:
    """The fields of these runs (or, run_ids None, of every run of the benchmark) that the
    board shows beside every slice's numbers (the submission record only for an imported
    run, whose source it names, and a submitted one, whose recipe and verification it holds;
    of the config, what says whether FactBoard made the run from a recipe). Read through
    Arrow: text columns come as pandas text without a Python string per cell."""
    where = "benchmark = ?" if run_ids is None else "run_id IN (SELECT unnest(?::VARCHAR[]))"
    return (
        con.sql(
            """
            SELECT run_id, model_name, model_kind, origin, model_org, model_params,
                   benchmark_version, policy, threshold, created_at, missing, unparsable,
                   CASE WHEN origin IN ('imported', 'submitted') THEN submission END
                       AS submission,
                   json_object('detector', json_extract_string(config, '$.detector'),
                               'llm', json_extract_string(config, '$.llm'),
                               'prompt_id', json_extract_string(config, '$.prompt_id'))
                       AS recipe_config
            FROM runs
            WHERE """
            + where
            + """
            ORDER BY run_id
            """,
            params=[benchmark if run_ids is None else list(run_ids)],
        )
        .to_arrow_table()
        .to_pandas()
    )


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
