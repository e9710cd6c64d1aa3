"""Benchmark cards: what each benchmark measures, its size and balance, license and citation."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.vocabulary import metric_label
from explorer.words import level_label

TASK_WORDS = {
    "detection": "detection (consistent or not)",
    "detection+explanation": "detection and explanation",
    "correlation": "correlation with human scores",
    "explanation-grading": "explanation grading",
}


def overview(specs: list[BenchmarkSpec], meta: dict[str, dict[str, Any]]) -> pd.DataFrame:
    rows = []
    for sp in specs:
        m = meta.get(sp.name)
        st = (m or {}).get("stats", {})
        present = st.get("domains_present") or []
        rows.append(
            {
                "benchmark": sp.title,
                "name": sp.name,
                "task": TASK_WORDS.get(sp.task, sp.task),
                "samples": st.get("n_samples"),
                "levels": ", ".join(level_label(u) for u in sp.units),
                "domains": (
                    f"{len(present)}/{len(sp.domains)}"
                    if m and sp.domains
                    else (str(len(sp.domains)) if sp.domains else "")
                ),
                "primary metric": metric_label(sp.primary_metric),
                "status": (
                    "synthetic demo" if sp.synthetic and m else "ingested" if m else "not ingested"
                ),
                "license": sp.license,
            }
        )
    out = pd.DataFrame(rows)
    # unknown until ingested: a dash (a number column would print "None")
    out["samples"] = [f"{int(n):,}" if n is not None and n == n else "—" for n in out["samples"]]
    return out


def balance_table(meta: dict[str, Any]) -> pd.DataFrame:
    """Size and balance per domain (like SummEdits Table 8): samples per split, total,
    consistent / inconsistent, % consistent and how many come with their document. One row per
    level x domain when the benchmark has several levels (TofuEval), plus a total row."""
    by = pd.DataFrame((meta.get("stats") or {}).get("by") or [])
    if by.empty:
        return by
    by["domain"] = by["domain"].replace("", "(none)")
    keys = ["unit", "domain"] if by["unit"].nunique() > 1 else ["domain"]
    splits = sorted(by["split"].unique(), key=lambda x: (x != "dev", x))
    per_split = by.pivot_table(index=keys, columns="split", values="n", aggfunc="sum", fill_value=0)
    per_split = per_split[[c for c in splits if c in per_split.columns]]
    per_split.columns = [f"{c} n" for c in per_split.columns]
    sums = by.groupby(keys)[["n", "consistent", "inconsistent", "with_document"]].sum()
    out = pd.concat([per_split, sums], axis=1).reset_index()
    if len(keys) == 1:  # a total over levels would add sentences to summaries
        total = out.drop(columns=keys).sum(numeric_only=True)
        out = pd.concat(
            [out, pd.DataFrame([{"domain": "total", **total.to_dict()}])], ignore_index=True
        )
    labelled = out["consistent"] + out["inconsistent"]
    out["% consistent"] = (100 * out["consistent"] / labelled.where(labelled > 0)).round(1)
    out = out.rename(columns={"n": "total n", "with_document": "with document"})
    return out


def domain_balance(meta: dict[str, Any], split: str | None = None) -> pd.DataFrame:
    """consistent / inconsistent per domain (summed over units' first level and splits)."""
    by = pd.DataFrame((meta.get("stats") or {}).get("by") or [])
    if by.empty:
        return pd.DataFrame(columns=["domain", "consistent", "inconsistent"])
    unit = by["unit"].value_counts().index[0] if "summary" not in set(by["unit"]) else "summary"
    by = by[by["unit"] == unit]
    if split:
        by = by[by["split"] == split]
    g = by.groupby("domain", as_index=False)[["consistent", "inconsistent"]].sum()
    g["domain"] = g["domain"].replace("", "(none)")
    return g


def error_type_counts(meta: dict[str, Any]) -> pd.DataFrame:
    et = (meta.get("stats") or {}).get("error_types") or {}
    return pd.DataFrame({"name": list(et), "n": list(et.values())})


def tags(spec: BenchmarkSpec) -> str:
    """The card's one-line summary: task, levels, splits, primary metric, how overall is made."""
    overall = (
        "overall = mean over domains"
        if spec.overall == "mean_over_domains"
        else "overall = pooled over samples"
    )
    return " · ".join(
        [
            f"task: {TASK_WORDS.get(spec.task, spec.task)}",
            f"levels: {', '.join(level_label(u) for u in spec.units)}",
            f"splits: {', '.join(spec.splits)}",
            f"primary metric: {metric_label(spec.primary_metric)}",
            overall,
        ]
    )


def size_note(meta: dict[str, Any], spec: BenchmarkSpec) -> str:
    """'1,234 samples; 8 of 10 published domains present (absent from this release: x).'"""
    stats = meta.get("stats", {})
    missing = stats.get("domains_missing") or []
    msg = f"{stats.get('n_samples', 0):,} samples"
    if spec.domains:
        present = len(stats.get("domains_present") or [])
        msg += f"; {present} of {len(spec.domains)} published domains present"
    if missing:
        msg += f" (absent from this release: {', '.join(missing)})"
    if not stats.get("documents_included", True):
        msg += "; source documents are not redistributed"
    return msg + "."
