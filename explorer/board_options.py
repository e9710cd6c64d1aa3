"""What the leaderboard page's pickers offer (units, slice kinds and values, metrics), the view
a page opens on, and the notice when a view lacks the chosen metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from evaluator.core.vocabulary import (
    metric_label,
    slice_label,
)


@dataclass(frozen=True)
class Options:
    units: list[str]
    slice_kinds: list[str]
    slice_values: dict[str, list[str]]
    metrics: list[tuple[str, str | None]]  # (metric, grader)


def options(
    dims: pd.DataFrame, unit: str | None, slice_kind: str | None, primary_metric: str | None = None
) -> Options:
    """What can be picked, given the current unit and slice kind (from result_dimensions)."""
    if dims.empty:
        return Options([], ["overall"], {"overall": [""]}, [])
    units = sorted(dims["unit"].unique(), key=lambda u: (u != "summary", u))
    u = unit if unit in units else units[0]
    d = dims[dims["unit"] == u]
    kinds = sorted(d["slice_kind"].unique(), key=lambda k: (k != "overall", k))
    values = {
        k: sorted(d[d["slice_kind"] == k]["slice_value"].unique(), key=_natural) for k in kinds
    }
    k = slice_kind if slice_kind in kinds else kinds[0]
    dk = d[d["slice_kind"] == k]
    pairs = sorted(
        {
            (m, g if isinstance(g, str) else None)
            for m, g in zip(dk["metric"], dk["grader"], strict=True)
        },
        key=lambda mg: (mg[0] != primary_metric, mg[1] is not None, mg[0], mg[1] or ""),
    )
    return Options(units, kinds, values, pairs)


def run_metrics(dims: pd.DataFrame, unit: str, kind: str, value: str) -> list[str]:
    """The ungraded metrics the runs have on one view (from result_dimensions): the other
    metrics a board names as columns without reading their values (build_board's
    run_metrics)."""
    d = dims[
        (dims["source"] == "run")
        & (dims["unit"] == unit)
        & (dims["slice_kind"] == kind)
        & (dims["slice_value"] == value)
        & dims["grader"].isna()
    ]
    return sorted(set(d["metric"].astype(str)))


def default_slice_value(dims: pd.DataFrame, unit: str, kind: str, values: Sequence[str]) -> str:
    """The value a view opens on: the first (in the picker's order) that a FactBoard run has a
    number for, so SummEdits "By domain" does not open on a domain only a paper reports
    (billsum is not in the ingested release); the first value when no run has one."""
    if not values:
        return ""
    d = dims[(dims["source"] == "run") & (dims["unit"] == unit) & (dims["slice_kind"] == kind)]
    with_runs = set(d["slice_value"].astype(str))
    return next((v for v in values if v in with_runs), values[0])


def benchmark_order(
    ingested: Sequence[str], with_runs: Sequence[str], with_reported: Sequence[str]
) -> list[str]:
    """Every benchmark with something to show: ingested first, the demo last among them."""
    have = set(ingested)
    return sorted(
        have | set(with_runs) | set(with_reported), key=lambda b: (b not in have, b == "demo", b)
    )


def metric_keys(opts: Options) -> list[str]:
    """The metric picker's options: 'metric', or 'metric@grader' for a graded metric."""
    return [m if g is None else f"{m}@{g}" for m, g in opts.metrics]


def parse_metric_key(key: str) -> tuple[str, str | None]:
    metric, _, grader = key.partition("@")
    return metric, grader or None


def metric_key_label(key: str) -> str:
    return metric_label(*parse_metric_key(key))


def slice_noun(kind: str) -> str:
    """'dataset+topic_type' -> 'dataset × topic type': what one slice value is."""
    return slice_label(kind).removeprefix("By ")


def metric_notice(
    wanted: str | None, keys: Sequence[str], shown: str, unit: str, kind: str
) -> str | None:
    """What to tell the reader when the metric they had is not reported in the view they
    switched to (the picker then falls back to `shown`); None when nothing changed."""
    if not wanted or wanted in keys:
        return None
    return (
        f"{metric_key_label(wanted)} is not reported in the view '{slice_label(kind)}' "
        f"({unit} level); showing {metric_key_label(shown)} instead."
    )


def _natural(s: str) -> tuple[int, float, str]:
    try:
        return (0, float(s), s)
    except ValueError:
        return (1, 0.0, s)
