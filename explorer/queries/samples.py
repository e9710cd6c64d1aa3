"""The samples explorer: its filter, order and pages, facets, one sample with its sentences,
predictions and grades.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from explorer.queries.schema import Con

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
