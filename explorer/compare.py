"""Two runs on the same samples: paired-bootstrap difference, McNemar, per-slice differences.

All statistics come from evaluator.core.metrics (paired_bootstrap, mcnemar_exact and the weighted
metric functions); this module only lines the two runs up on the samples both were scored on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core import metrics as M
from evaluator.core.scoring import MEAN_OVER_DOMAINS, slice_masks
from explorer import queries as Q

# metric -> weighted engine function of (W, y, pred) on labels, or (W, x, human) on scores
LABEL_W: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "balanced_accuracy": M.balanced_accuracy_w,
    "accuracy": M.accuracy_w,
    "detection_accuracy": M.accuracy_w,
    "fpr": M.false_positive_rate_w,
    "fnr": M.false_negative_rate_w,
    "recall": M.recall_inconsistent_w,
    "detection_score": M.recall_inconsistent_w,
}
SCORE_W: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "roc_auc": M.roc_auc_w,
    "pearson": M.pearson_w,
    "spearman": M.spearman_w,
    "kendall_tau": M.kendall_tau_w,
}
CORRELATION = {"pearson", "spearman", "kendall_tau"}


def metric_name(metric: str) -> str:
    from explorer.leaderboard import metric_label

    return metric_label(metric)


def p_text(p: float, resamples: int) -> str:
    """A bootstrap p-value as text: 0 means below the resolution of the resamples."""
    if p != p:
        return "n/a"
    return f"< {1 / resamples:.0e}".replace("e-0", "e-") if p == 0 else f"{p:.3g}"


def comparable_metrics(task: str) -> list[str]:
    if task == "correlation":
        return ["pearson", "spearman", "kendall_tau"]
    if task == "detection+explanation":
        return [
            "detection_accuracy",
            "detection_score",
            "balanced_accuracy",
            "fpr",
            "fnr",
            "roc_auc",
        ]
    return ["balanced_accuracy", "accuracy", "fpr", "fnr", "roc_auc"]


@dataclass
class Comparison:
    metric: str
    n: int
    value_a: float
    value_b: float
    diff: M.PairedComparison | None
    mcnemar: M.McNemar | None
    slices: pd.DataFrame
    disagreements: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def _arrays(frame: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """(target, a, b, kind) on the rows usable for the metric; kind 'labels' or 'scores'."""
    if metric in LABEL_W:
        y = frame["label"].to_numpy(dtype=float)
        a = frame["pred_a"].to_numpy(dtype=float)
        b = frame["pred_b"].to_numpy(dtype=float)
        return y, a, b, "labels"
    target = frame["human_score"] if metric in CORRELATION else frame["label"]
    return (
        target.to_numpy(dtype=float),
        frame["score_a"].to_numpy(dtype=float),
        frame["score_b"].to_numpy(dtype=float),
        "scores",
    )


def _stat_pair(
    metric: str, y: np.ndarray, a: np.ndarray, b: np.ndarray, domains: np.ndarray | None
) -> tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], np.ndarray]]:
    f = LABEL_W.get(metric) or SCORE_W[metric]
    if domains is None:
        return (lambda W: f(W, y, a)), (lambda W: f(W, y, b))
    groups = [domains == d for d in np.unique(domains)]

    def mean_of(x: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        return lambda W: np.mean(np.stack([f(W[:, g], y[g], x[g]) for g in groups], axis=1), axis=1)

    return mean_of(a), mean_of(b)


def paired_difference(
    metric: str,
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    *,
    strata: np.ndarray | None,
    mean_over_strata: bool,
    resamples: int,
    seed: int = 0,
) -> M.PairedComparison:
    """evaluator.core.metrics.paired_bootstrap of metric(a) - metric(b).

    Label metrics are computed on the distinct (stratum, gold, a, b) rows (exact, much faster:
    the Resampler's `keys`); the statistic is then built on those representative rows.
    """
    n = len(y)
    keys = None
    y_r, a_r, b_r, rows = y, a, b, np.arange(n)
    if metric in LABEL_W:
        keys = np.column_stack([y, a, b]).astype(np.int8)
        rows = M.Resampler(n, resamples=1, seed=seed, strata=strata, keys=keys).rows
        y_r, a_r, b_r = (x[rows].astype(np.int8) for x in (y, a, b))
    dom = strata[rows] if (mean_over_strata and strata is not None) else None
    sa, sb = _stat_pair(metric, y_r, a_r, b_r, dom)
    return M.paired_bootstrap(sa, sb, n, resamples=resamples, seed=seed, strata=strata, keys=keys)


def _applies(metric: str, y: np.ndarray) -> bool:
    if metric in ("balanced_accuracy", "roc_auc"):
        return bool((y == 0).any() and (y == 1).any())
    if metric in ("fnr", "recall", "detection_score"):
        return bool((y == 0).any())
    if metric == "fpr":
        return bool((y == 1).any())
    if metric in CORRELATION:
        return len(y) >= 3
    return len(y) > 0


def compare_runs(
    con: Q.Con,
    spec: BenchmarkSpec,
    unit: str,
    run_a: str,
    run_b: str,
    metric: str,
    resamples: int = 10_000,
    slice_resamples: int = 2_000,
    seed: int = 0,
) -> Comparison:
    frame = Q.pair_frame(con, spec.name, unit, run_a, run_b)
    notes: list[str] = []
    y, a, b, kind = _arrays(frame, metric)
    for name, x in (("A", a), ("B", b)):
        if len(x) and np.isnan(x).all():
            what = "labels" if kind == "labels" else "scores"
            notes.append(
                f"Run {name} has no {what} on these samples, so "
                f"{metric_name(metric)} cannot be compared; pick another metric."
            )
    usable = ~(np.isnan(y) | np.isnan(a) | np.isnan(b))
    dropped = int((~usable).sum())
    if dropped:
        notes.append(
            f"{dropped} sample(s) left out: a run has no usable "
            f"{'label' if kind == 'labels' else 'score'} for them, or the sample has "
            "no gold value."
        )
    f = frame[usable].reset_index(drop=True)
    y, a, b = y[usable], a[usable], b[usable]
    n = len(f)
    empty_slices = pd.DataFrame(
        columns=[
            "slice_kind",
            "slice_value",
            "n",
            "value_a",
            "value_b",
            "difference",
            "ci_low",
            "ci_high",
            "p_value",
        ]
    )
    if n == 0 or not _applies(metric, y):
        notes.append("No sample both runs were scored on supports this metric.")
        return Comparison(
            metric, n, np.nan, np.nan, None, None, empty_slices, _disagreements(f, kind), notes
        )
    stratify = spec.overall == "mean_over_domains"
    domains = f["domain"].fillna("").astype(str).to_numpy()
    mean_dom = stratify and metric in MEAN_OVER_DOMAINS
    if kind == "scores":
        # no compression possible: every resample re-ranks the scores
        cap = 1000 if metric == "kendall_tau" else 2000
        resamples, slice_resamples = min(resamples, cap), min(slice_resamples, 500)
        notes.append(
            f"{metric_name(metric)} is recomputed on every resample: "
            f"{resamples:,} resamples overall, {slice_resamples:,} per slice."
        )
    if metric in LABEL_W:
        y, a, b = y.astype(np.int8), a.astype(np.int8), b.astype(np.int8)
    strata = domains if stratify else None
    diff = paired_difference(
        metric, y, a, b, strata=strata, mean_over_strata=mean_dom, resamples=resamples, seed=seed
    )
    sa, sb = _stat_pair(metric, y, a, b, domains if mean_dom else None)
    ones = np.ones((1, n))
    va, vb = float(sa(ones)[0]), float(sb(ones)[0])
    mc = M.mcnemar_exact(a == y, b == y) if kind == "labels" else None
    slices = _slices(spec, f, metric, y, a, b, domains if stratify else None, slice_resamples, seed)
    return Comparison(metric, n, va, vb, diff, mc, slices, _disagreements(f, kind), notes)


def _slices(
    spec: BenchmarkSpec,
    f: pd.DataFrame,
    metric: str,
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    strata: np.ndarray | None,
    resamples: int,
    seed: int,
) -> pd.DataFrame:
    rows = []
    for kind, value, mask in slice_masks(spec, f):
        if kind == "overall":
            continue
        ys = y[mask]
        if not _applies(metric, ys):
            continue
        st = strata[mask] if strata is not None else None
        pc = paired_difference(
            metric,
            ys,
            a[mask],
            b[mask],
            strata=st,
            mean_over_strata=False,
            resamples=resamples,
            seed=seed,
        )
        sa, sb = _stat_pair(metric, ys, a[mask], b[mask], None)
        ones = np.ones((1, int(mask.sum())))
        rows.append(
            {
                "slice_kind": kind,
                "slice_value": value,
                "n": int(mask.sum()),
                "value_a": float(sa(ones)[0]),
                "value_b": float(sb(ones)[0]),
                "difference": pc.difference,
                "ci_low": pc.ci_low,
                "ci_high": pc.ci_high,
                "p_value": pc.p_value,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "slice_kind",
            "slice_value",
            "n",
            "value_a",
            "value_b",
            "difference",
            "ci_low",
            "ci_high",
            "p_value",
        ],
    )


def _disagreements(f: pd.DataFrame, kind: str) -> pd.DataFrame:
    cols = ["sample_id", "split", "domain", "label", "pred_a", "pred_b", "right", "summary"]
    if kind != "labels" or f.empty:
        return pd.DataFrame(columns=cols)
    d = f[f["pred_a"] != f["pred_b"]].copy()
    d["right"] = np.where(d["pred_a"] == d["label"], "A", "B")
    return d[cols].reset_index(drop=True)
