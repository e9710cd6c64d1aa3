"""How a scored submission is described to the one who sent it (the Submit page and
`python -m evaluator submit`): its results as a table and its threshold in words."""

from __future__ import annotations

import pandas as pd

from evaluator.core import formatting as F
from evaluator.core.types import RunRecord
from evaluator.core.vocabulary import metric_label


def results_frame(record: RunRecord, overall_only: bool = True) -> pd.DataFrame:
    """A run's results as a table: split, unit, slice, metric, grader, value, CI, n."""
    rows = [
        {
            "split": r.split,
            "unit": r.unit,
            "slice": r.slice_kind if not r.slice_value else f"{r.slice_kind}={r.slice_value}",
            "metric": r.metric,
            "grader": r.grader or "",
            "value": r.value,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "n": r.n,
        }
        for r in record.results
        if not overall_only or r.slice_kind == "overall"
    ]
    return pd.DataFrame(
        rows,
        columns=["split", "unit", "slice", "metric", "grader", "value", "ci_low", "ci_high", "n"],
    )


def threshold_text(record: RunRecord) -> str:
    """How the file's scores became consistent / inconsistent labels, in plain words."""
    t = record.threshold
    if t.policy == "labels":
        return "labels as given (no threshold)"
    if t.policy == "none":
        return "scores used as they are (correlation; no threshold)"
    if t.policy == "per-domain-dev" and t.per_domain:
        return (
            "one cut-off per domain, each the one that separates consistent from inconsistent "
            "best (balanced accuracy) on that domain's dev rows: "
            + ", ".join(f"{k} {v:.4g}" for k, v in sorted(t.per_domain.items()))
        )
    if t.threshold is None:
        return t.policy
    cut = f"a score of {t.threshold:.4g} or more counts as consistent, below as inconsistent"
    if t.tuned_on:
        reached = (
            f" ({metric_label('balanced_accuracy')} {F.number(t.tuned_value)} there)"
            if t.tuned_value is not None
            else ""
        )
        return (
            f"{cut}; the cut-off that separates the two best on the {t.tuned_on} rows of your "
            f"file{reached}, then applied to the rows scored"
        )
    return f"{cut} (a fixed cut-off)" if t.policy == "fixed" else f"{cut} ({t.policy})"
