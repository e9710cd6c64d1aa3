"""Explanations and grades (judges, explanation types), and the tables' sizes and every Overall
number (the cross-benchmark view).
"""

from __future__ import annotations

import pandas as pd

from explorer.queries.schema import Con


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
