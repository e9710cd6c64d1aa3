"""Graded explanations: the type distribution per model, and judges against human grades."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluator.core import metrics as M
from explorer import queries as Q
from explorer.charts import TYPE_ORDER

JUDGE_HELP = (
    "No LLM judge has graded any explanation yet. Judges (EvalV1–EvalV4, "
    "docs/ARCHITECTURE.md) come with the LLM work: `python -m evaluator judge ...` will write "
    "their grades into the run folders (grades.parquet), and this table will then show each "
    "judge's agreement with the human grades of the same explanations."
)


def type_distribution(con: Q.Con, benchmark: str | None = None) -> pd.DataFrame:
    """model, explanation_type, n, share (of that model's human-annotated explanations)."""
    d = Q.explanation_types(con, benchmark)
    if d.empty:
        return pd.DataFrame(
            columns=["model", "run_id", "benchmark", "explanation_type", "n", "share", "total"]
        )
    d = d.rename(columns={"model_name": "model"})
    tot = d.groupby("run_id")["n"].transform("sum")
    d["share"] = d["n"] / tot
    d["total"] = tot
    return d[["model", "run_id", "benchmark", "explanation_type", "n", "share", "total"]]


def type_table(dist: pd.DataFrame) -> pd.DataFrame:
    """One row per model: explanations annotated, then the share of each type."""
    if dist.empty:
        return pd.DataFrame()
    wide = dist.pivot_table(
        index=["model", "run_id"], columns="explanation_type", values="share", fill_value=0.0
    )
    totals = dist.groupby(["model", "run_id"])["n"].sum().rename("explanations")
    out = pd.concat([totals, wide], axis=1).reset_index()
    types = [t for t in TYPE_ORDER if t in out.columns]
    types += sorted(c for c in wide.columns if c not in types)
    out = out[["model", "run_id", "explanations", *types]]
    lead = "correct" if "correct" in out.columns else "explanations"
    return out.sort_values(lead, ascending=False).reset_index(drop=True)


def judge_agreement(con: Q.Con) -> pd.DataFrame:
    """Per (benchmark, judge, protocol): agreement of the judge's grades with human grades."""
    pairs = Q.judge_pairs(con)
    cols = [
        "benchmark",
        "judge",
        "protocol",
        "n",
        "pearson",
        "cohen_kappa",
        "balanced_accuracy",
        "exact_agreement",
    ]
    if pairs.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for (b, judge, protocol), g in pairs.groupby(["benchmark", "judge", "protocol"], sort=True):
        g = g.dropna(subset=["judge_grade", "human_grade"])
        n = len(g)
        if n == 0:
            continue
        j = g["judge_grade"].to_numpy(float)
        h = g["human_grade"].to_numpy(float)
        rows.append(
            {
                "benchmark": b,
                "judge": judge,
                "protocol": protocol,
                "n": n,
                "pearson": M.pearson(j, h) if n >= 3 else np.nan,
                "cohen_kappa": M.cohen_kappa(list(j), list(h)),
                # the three grades as classes, as SummExecEdit Table 4 reports it
                "balanced_accuracy": M.balanced_accuracy_multiclass(h, j),
                "exact_agreement": float((j == h).mean()),
            }
        )
    return pd.DataFrame(rows, columns=cols)


def graded_table(graded: pd.DataFrame) -> pd.DataFrame:
    """Mean grade per run and grader (Q.graded_runs), best first within each benchmark; the
    grader is 'human' or 'judge / protocol'."""
    g = graded.sort_values(["benchmark", "mean_grade"], ascending=[True, False])
    grader = [
        "human" if p == "human" else f"{j} / {p}"
        for j, p in zip(g["judge"], g["protocol"], strict=True)
    ]
    out = g.assign(grader=grader)[
        ["benchmark", "model_name", "grader", "n", "n_graded", "mean_grade"]
    ]
    return out.rename(
        columns={"model_name": "model", "n_graded": "graded", "mean_grade": "mean grade"}
    )
