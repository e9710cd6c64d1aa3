"""How a scored submission is described to the one who sent it (the Submit page and
`python -m evaluator submit`): its results as a table and its threshold in words."""

from __future__ import annotations

import pandas as pd

from evaluator.core.types import RunRecord


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
    t = record.threshold
    if t.policy == "labels":
        return "labels as given (no threshold)"
    if t.policy == "none":
        return "scores used as they are (correlation; no threshold)"
    if t.policy == "per-domain-dev" and t.per_domain:
        return "one threshold per domain, each maximising balanced accuracy on dev: " + ", ".join(
            f"{k}={v:.4g}" for k, v in sorted(t.per_domain.items())
        )
    out = f"{t.policy}: threshold {t.threshold:.6g}" if t.threshold is not None else t.policy
    if t.tuned_on:
        out += f", tuned on {t.tuned_on}"
        if t.tuned_value is not None:
            out += f" (balanced accuracy {t.tuned_value:.4f} there)"
    return out
