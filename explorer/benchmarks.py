"""Benchmark cards: what each benchmark measures, its size and balance, license and citation."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core import formatting as fmt
from evaluator.core.vocabulary import metric
from explorer.words import level_label

TASK_WORDS = {
    "detection": "detection (consistent or not)",
    "detection+explanation": "detection and explanation",
    "correlation": "correlation with human scores",
    "explanation-grading": "explanation grading",
}


def _stats(meta: Mapping[str, object] | None) -> Mapping[str, object]:
    """A benchmark.json's `stats` (evaluator.ingest.pipeline.describe: sizes, balance, error
    types, domains), as read: each value is narrowed where it is used."""
    stats = (meta or {}).get("stats")
    return stats if isinstance(stats, dict) else {}


def _list(v: object) -> list[object]:
    return v if isinstance(v, list) else []


def overview(specs: list[BenchmarkSpec], meta: Mapping[str, Mapping[str, object]]) -> pd.DataFrame:
    """One row per benchmark: task, size, levels, domains, main metric, status, license.
    meta: the ingested benchmarks' benchmark.json, by name."""
    rows = []
    for sp in specs:
        m = meta.get(sp.name)
        st = _stats(m)
        present = _list(st.get("domains_present"))
        rows.append(
            {
                "benchmark": sp.title,
                "name": sp.name,
                "task": TASK_WORDS.get(sp.task, sp.task),
                "samples": st.get("n_samples"),
                "levels": ", ".join(level_label(u) for u in sp.units),
                "domains": (
                    f"{len(present)} of {len(sp.domains)}"
                    if m and sp.domains
                    else (str(len(sp.domains)) if sp.domains else "")
                ),
                "main metric": metric_title(sp.primary_metric),
                "status": (
                    "synthetic demo" if sp.synthetic and m else "ingested" if m else "not ingested"
                ),
                "license": sp.license,
            }
        )
    out = pd.DataFrame(rows)
    # unknown until ingested: a dash (a number column would print "None")
    out["samples"] = [fmt.count(n) for n in out["samples"]]
    return out


def metric_title(name: str) -> str:
    """A metric in plain words ('partial_pearson' -> 'Partial Pearson correlation (system
    partialled out)'), never its short label or id."""
    return metric(name).title


def balance_table(meta: Mapping[str, object]) -> pd.DataFrame:
    """Size and balance per domain (like SummEdits Table 8): samples per split, total,
    consistent / inconsistent, % consistent and how many come with their document. One row per
    level x domain when the benchmark has several levels (TofuEval), plus a total row."""
    by = pd.DataFrame(_list(_stats(meta).get("by")))
    if by.empty:
        return by
    by["domain"] = by["domain"].replace("", "(none)")
    keys = ["unit", "domain"] if by["unit"].nunique() > 1 else ["domain"]
    splits = sorted(by["split"].unique(), key=lambda x: (x != "dev", x))
    per_split = by.pivot_table(index=keys, columns="split", values="n", aggfunc="sum", fill_value=0)
    per_split = per_split[[c for c in splits if c in per_split.columns]]
    per_split.columns = [str(c) for c in per_split.columns]
    sums = by.groupby(keys)[["n", "consistent", "inconsistent", "with_document"]].sum()
    out = pd.concat([per_split, sums], axis=1).reset_index()
    if len(keys) == 1:  # a total over levels would add sentences to summaries
        total = out.drop(columns=keys).sum(numeric_only=True)
        out = pd.concat(
            [out, pd.DataFrame([{"domain": "total", **total.to_dict()}])], ignore_index=True
        )
    labelled = out["consistent"] + out["inconsistent"]
    out["% consistent"] = (100 * out["consistent"] / labelled.where(labelled > 0)).round(1)
    out = out.rename(columns={"n": "total", "with_document": "with document"})
    if "unit" in out.columns:  # 'sentence' -> 'sentence level', under a plain heading
        out["unit"] = out["unit"].map(level_label)
        out = out.rename(columns={"unit": "level"})
    return out


def domain_balance(meta: Mapping[str, object], split: str | None = None) -> pd.DataFrame:
    """consistent / inconsistent per domain (summed over units' first level and splits)."""
    by = pd.DataFrame(_list(_stats(meta).get("by")))
    if by.empty:
        return pd.DataFrame(columns=["domain", "consistent", "inconsistent"])
    unit = by["unit"].value_counts().index[0] if "summary" not in set(by["unit"]) else "summary"
    by = by[by["unit"] == unit]
    if split:
        by = by[by["split"] == split]
    g = by.groupby("domain", as_index=False)[["consistent", "inconsistent"]].sum()
    g["domain"] = g["domain"].replace("", "(none)")
    return g


def error_type_counts(meta: Mapping[str, object]) -> pd.DataFrame:
    """Samples per error or edit type, named in words ('entity_modification' -> 'entity
    modification')."""
    et = _stats(meta).get("error_types")
    counts = et if isinstance(et, dict) else {}
    return pd.DataFrame({"name": [words(k) for k in counts], "n": list(counts.values())})


def words(name: str) -> str:
    """A data value written as an id ('entity_modification') as words."""
    return str(name).replace("_", " ")


SPLIT_WORDS = {"dev": "dev (for tuning)", "test": "test (for scoring)"}


def tags(spec: BenchmarkSpec) -> str:
    """The card's one-line summary in plain words: task, levels, splits, main metric, how
    Overall is made."""
    overall = (
        "Overall: the mean over domains"
        if spec.overall == "mean_over_domains"
        else "Overall: all samples together"
    )
    return " · ".join(
        [
            f"Task: {TASK_WORDS.get(spec.task, spec.task)}",
            f"Judged at: {', '.join(level_label(u) for u in spec.units)}",
            f"Splits: {', '.join(SPLIT_WORDS.get(s, s) for s in spec.splits)}",
            f"Main metric: {metric_title(spec.primary_metric)}",
            overall,
        ]
    )


def size_note(meta: Mapping[str, object], spec: BenchmarkSpec) -> str:
    """'1,234 samples; 8 of 10 published domains present (absent from this release: x).'"""
    stats = _stats(meta)
    missing = _list(stats.get("domains_missing"))
    n = stats.get("n_samples")
    msg = fmt.plural(n if isinstance(n, int) else 0, "sample")
    if spec.domains:
        present = len(_list(stats.get("domains_present")))
        msg += f"; {present} of {fmt.plural(len(spec.domains), 'published domain')} present"
    if missing:
        msg += f" (absent from this release: {', '.join(map(str, missing))})"
    if not stats.get("documents_included", True):
        msg += "; source documents are not redistributed"
    return msg + "."
