"""Graded explanations: the type distribution per model, judges against human grades, the
judge protocols EvalV1-V4 in plain words, and the published judge x protocol grid
(SummExecEdit, Table 4). Column names come from evaluator.core.vocabulary."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluator.core import metrics as M
from evaluator.core.vocabulary import metric_label
from explorer import queries as Q
from explorer.charts import TYPE_ORDER

JUDGE_HELP = (
    "No LLM judge has graded any explanation yet. A judge (an LLM following one of the "
    "protocols EvalV1–EvalV4 above) is run with `python -m evaluator judge ...`; this table then "
    "shows how far each judge's grades agree with the human grades of the same explanations."
)

# what the judge is given besides the explanation it grades (SummExecEdit §5.1 and Table 4)
PROTOCOLS: dict[str, str] = {
    "EvalV1": "the document and the edited summary: no reference, no seed summary",
    "EvalV2": "the seed summary (the unedited, consistent one) and the edited summary: no "
    "reference explanation",
    "EvalV3": "the seed summary, the edited summary and the reference explanation written "
    "with the edit",
    "EvalV4": "only the reference explanation: the judge compares the two explanations",
}
PROTOCOL_INTRO = (
    "An LLM judge grades a model's explanation of why a summary is inconsistent as entirely "
    "correct (1), partially correct (0.5) or not correct (0). The SummExecEdit paper tried four "
    "protocols, which differ only in what the judge is shown besides the explanation. A judge "
    "is as good as its agreement with human grades of the same explanations; the paper found "
    "EvalV4 (reference only) agrees best and uses it with GPT-4o for its Explanation Score."
)

AGREEMENT_COLUMNS = {
    "pearson": metric_label("pearson"),
    "cohen_kappa": metric_label("cohen_kappa"),
    "balanced_accuracy": metric_label("balanced_accuracy"),
    "exact_agreement": "Exact agreement",
}


def protocols_table() -> pd.DataFrame:
    """The four judge protocols: name and what the judge is shown besides the explanation."""
    return pd.DataFrame(
        {"protocol": list(PROTOCOLS), "the judge sees, besides the explanation": PROTOCOLS.values()}
    )


def protocol_of(note: object) -> str | None:
    """'protocol=EvalV3; role=judge; ...' -> 'EvalV3'."""
    import re

    m = re.search(r"protocol=(EvalV\d)", str(note or ""))
    return m.group(1) if m else None


def judge_grid(reported: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Published judge agreement (Q.reported_judges) as one judge x protocol grid per metric,
    keyed by the metric's label; judges in the order the source lists them."""
    if reported.empty:
        return {}
    r = reported.assign(protocol=reported["note"].map(protocol_of)).dropna(subset=["protocol"])
    out: dict[str, pd.DataFrame] = {}
    # correlation before balanced accuracy, as Table 4 prints them
    order = sorted(r["metric"].unique(), key=lambda m: (m != "correlation", m))
    for metric in order:
        g = r[r["metric"] == metric]
        grid = g.pivot_table(index="judge", columns="protocol", values="value", aggfunc="first")
        grid = grid.reindex(columns=[p for p in PROTOCOLS if p in grid.columns])
        grid = grid.reindex(list(dict.fromkeys(g["judge"])))
        out[metric_label(str(metric))] = grid.rename_axis(columns=None).reset_index()
    return out


def agreement_table(agree: pd.DataFrame) -> pd.DataFrame:
    """judge_agreement with the board's words for its columns."""
    return agree.rename(columns=AGREEMENT_COLUMNS)


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
