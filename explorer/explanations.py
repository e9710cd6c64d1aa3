"""Graded explanations: the type distribution per model, judges against human grades, the
judge protocols EvalV1-V4 in plain words, and the published judge x protocol grid
(SummExecEdit, Table 4). Column names come from evaluator.core.vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluator.core import formatting as F
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


TYPE_WORDS = {
    "correct": "correct",
    "partially_correct": "partially correct",
    "incorrect": "incorrect",
    "unrelated": "unrelated",
    "no_explanation": "no explanation",
}
FAILURES = ("incorrect", "unrelated", "no_explanation")  # partially correct is half right

PAPER = "SummEdits paper, §3.5 and Figure 2"
# what the paper says of the models' failures (§3.5): (models, the failure it names, its words)
PAPER_CLAIMS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("Dav001", "Dav002", "Cur001"), "no_explanation", "no explanation"),
    (("Ada001", "LLaMa-13B", "Cohere-CMD-XL"), "unrelated", "an unrelated explanation"),
    (("MPT-7B-Chat", "Dolly-v2-12B"), "incorrect", "an incorrect explanation"),
    (("Dav003",), "no_explanation", "no explanation (it abstains)"),
)


def type_words(t: object) -> str:
    """'no_explanation' -> 'no explanation'."""
    return TYPE_WORDS.get(str(t), str(t).replace("_", " "))


@dataclass(frozen=True)
class PaperCheck:
    claimed: str  # the failure the paper names, in its words ("no explanation")
    models: tuple[str, ...]  # those of the claim that are on the board
    agrees: bool  # each model's most common failure is the one the paper names
    text: str  # what the data shows, with its numbers (plain text, model names from data)


def _names(models: list[str]) -> str:
    return models[0] if len(models) == 1 else ", ".join(models[:-1]) + " and " + models[-1]


def paper_comparison(dist: pd.DataFrame) -> list[PaperCheck]:
    """The paper's failure groups against the shares in the data (type_distribution rows of
    one benchmark): for each group, each model's most common failure (incorrect, unrelated or
    no explanation) and the share of the failure the paper names. Computed, never copied from
    the paper: a model the data lacks is left out, a group with none is skipped."""
    if dist.empty:
        return []
    share = dist.pivot_table(
        index="model", columns="explanation_type", values="share", aggfunc="sum", fill_value=0.0
    )
    lower = {str(m).lower(): str(m) for m in share.index}
    out = []
    for claim_models, claimed, words in PAPER_CLAIMS:
        models = [lower[m.lower()] for m in claim_models if m.lower() in lower]
        if not models:
            continue
        parts, agree = [], []
        for m in models:
            row = share.loc[m].to_dict()
            fails = {f: float(row.get(f, 0.0)) for f in FAILURES}
            main = max(fails, key=lambda f: (fails[f], f == claimed))
            agree.append(main == claimed)
            if main == claimed:
                parts.append(f"{m}: {type_words(claimed)} {F.percent(fails[claimed])}")
            else:
                parts.append(
                    f"{m}: {type_words(main)} {F.percent(fails[main])}, "
                    f"{type_words(claimed)} {F.percent(fails[claimed])}"
                )
        verdict = (
            "As the paper says"
            if all(agree)
            else ("Differs from the paper" if not any(agree) else "Partly differs from the paper")
        )
        text = (
            f"{verdict}: the paper ({PAPER}) says {_names(models)} "
            f"{'fails' if len(models) == 1 else 'fail'} mostly by giving {words}. "
            f"Share of their explanations in the released annotations: " + "; ".join(parts) + "."
        )
        out.append(PaperCheck(words, tuple(models), all(agree), text))
    return out


def type_table(dist: pd.DataFrame) -> pd.DataFrame:
    """One row per model: explanations annotated, then the share of each type (named in
    words: 'no explanation')."""
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
    out = out.sort_values(lead, ascending=False).reset_index(drop=True)
    return out.rename(columns={t: type_words(t) for t in types})


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


def _title(name: object) -> str:
    """A benchmark's title (never its id), from the registry."""
    from evaluator.benchmarks import registry
    from evaluator.core.errors import UnknownNameError

    try:
        return registry.get(str(name)).title
    except UnknownNameError:  # not registered: its id is all there is
        return str(name)


def graded_table(graded: pd.DataFrame) -> pd.DataFrame:
    """Mean grade per run and grader (Q.graded_runs), best first within each benchmark; the
    grader is 'human' or 'judge / protocol'."""
    g = graded.sort_values(["benchmark", "mean_grade"], ascending=[True, False])
    grader = [
        "human" if p == "human" else f"{j} / {p}"
        for j, p in zip(g["judge"], g["protocol"], strict=True)
    ]
    out = g.assign(grader=grader, benchmark=g["benchmark"].map(_title))[
        ["benchmark", "model_name", "grader", "n", "n_graded", "mean_grade"]
    ]
    return out.rename(
        columns={"model_name": "model", "n_graded": "graded", "mean_grade": "mean grade"}
    )
