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
from evaluator.core import vocabulary as V
from evaluator.core.formatting import plural
from evaluator.core.scoring import MEAN_OVER_DOMAINS, correlation_control, slice_masks
from explorer import queries as Q

# (W, target, x, control codes or None) -> one value per weight row
_Fn = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None], np.ndarray]

# the partial correlations need the control variable's groups besides the two columns; the
# scorer computes them with these engine functions
# (evaluator.core.slice_metrics.correlation_metrics)
_PARTIAL_W: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "partial_pearson": M.partial_pearson_w,
    "partial_spearman": M.partial_spearman_w,
}


def _uses_labels(metric: str) -> bool:
    return V.metric(metric).uses == "labels"


def _correlates(metric: str) -> bool:
    """Compared against human scores (correlation benchmarks), not gold labels."""
    return "correlation" in V.metric(metric).tasks


def _weighted(metric: str) -> _Fn:
    """The engine's weighted function of the metric, as (W, target, x, codes)."""
    if metric in _PARTIAL_W:
        part = _PARTIAL_W[metric]

        def partial(
            W: np.ndarray, y: np.ndarray, x: np.ndarray, c: np.ndarray | None
        ) -> np.ndarray:
            assert c is not None
            return part(W, x, y, c)

        return partial
    fn = V.metric(metric).weighted
    if fn is None:
        raise KeyError(f"{metric} cannot be compared run against run")
    return lambda W, y, x, c: fn(W, y, x)


def comparable_metrics(task: str | BenchmarkSpec) -> list[str]:
    """The metrics two runs can be compared on: the task's label and score metrics (from the
    vocabulary) that the engine computes from the samples both runs scored. Given the benchmark
    rather than its task, the partial correlations are offered only when it names a control."""
    spec = task if isinstance(task, BenchmarkSpec) else None
    name = spec.task if spec else str(task)
    out = []
    for m in V.metric_names(name):
        if V.metric(m).uses not in ("labels", "scores"):
            continue
        if m in _PARTIAL_W:
            if spec is None or spec.correlation_control:
                out.append(m)
        elif V.metric(m).weighted is not None:
            out.append(m)
    return out


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
    # correlation benchmarks: where the two metrics rank the samples most differently
    # (rank_disagreements), None where the benchmark has no human scores
    rank_gaps: pd.DataFrame | None = None


def _arrays(frame: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """(target, a, b, kind) on the rows usable for the metric; kind 'labels' or 'scores'."""
    if _uses_labels(metric):
        y = frame["label"].to_numpy(dtype=float)
        a = frame["pred_a"].to_numpy(dtype=float)
        b = frame["pred_b"].to_numpy(dtype=float)
        return y, a, b, "labels"
    target = frame["human_score"] if _correlates(metric) else frame["label"]
    return (
        target.to_numpy(dtype=float),
        frame["score_a"].to_numpy(dtype=float),
        frame["score_b"].to_numpy(dtype=float),
        "scores",
    )


def _stat_pair(
    metric: str,
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    domains: np.ndarray | None,
    codes: np.ndarray | None = None,
) -> tuple[Callable[[np.ndarray], np.ndarray], Callable[[np.ndarray], np.ndarray]]:
    f = _weighted(metric)
    if domains is None:
        return (lambda W: f(W, y, a, codes)), (lambda W: f(W, y, b, codes))
    groups = [domains == d for d in np.unique(domains)]

    def sub(c: np.ndarray | None, g: np.ndarray) -> np.ndarray | None:
        return None if c is None else c[g]

    def mean_of(x: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        return lambda W: np.mean(
            np.stack([f(W[:, g], y[g], x[g], sub(codes, g)) for g in groups], axis=1), axis=1
        )

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
    codes: np.ndarray | None = None,
) -> M.PairedComparison:
    """evaluator.core.metrics.paired_bootstrap of metric(a) - metric(b).

    codes: the control variable's group of each sample (partial correlations only).

    Label metrics are computed on the distinct (stratum, gold, a, b) rows (exact, much faster:
    the Resampler's `keys`); the statistic is then built on those representative rows.
    """
    n = len(y)
    keys = None
    y_r, a_r, b_r, rows = y, a, b, np.arange(n)
    if _uses_labels(metric):
        keys = np.column_stack([y, a, b]).astype(np.int8)
        rows = M.Resampler(n, resamples=1, seed=seed, strata=strata, keys=keys).rows
        y_r, a_r, b_r = (x[rows].astype(np.int8) for x in (y, a, b))
    dom = strata[rows] if (mean_over_strata and strata is not None) else None
    sa, sb = _stat_pair(metric, y_r, a_r, b_r, dom, codes)
    return M.paired_bootstrap(sa, sb, n, resamples=resamples, seed=seed, strata=strata, keys=keys)


def _applies(metric: str, y: np.ndarray, codes: np.ndarray | None = None) -> bool:
    if metric in ("balanced_accuracy", "roc_auc"):
        return bool((y == 0).any() and (y == 1).any())
    if metric in ("fnr", "recall", "detection_score"):
        return bool((y == 0).any())
    if metric == "fpr":
        return bool((y == 1).any())
    if metric in _PARTIAL_W:  # partialling out needs two control groups, as in the scorer
        return len(y) >= 3 and codes is not None and len(np.unique(codes)) > 1
    if _correlates(metric):
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
                f"{V.metric_label(metric)} cannot be compared; pick another metric."
            )
    usable = ~(np.isnan(y) | np.isnan(a) | np.isnan(b))
    dropped = int((~usable).sum())
    if dropped:
        notes.append(
            f"{plural(dropped, 'sample')} left out: a run has no usable "
            f"{'label' if kind == 'labels' else 'score'} for them, or the sample has "
            "no gold value."
        )
    f = frame[usable].reset_index(drop=True)
    y, a, b = y[usable], a[usable], b[usable]
    n = len(f)
    codes = None
    if metric in _PARTIAL_W:
        control = correlation_control(spec, f)
        if control is None:
            notes.append(f"{spec.title} names no control variable to partial out.")
        else:
            codes = np.unique(control, return_inverse=True)[1].ravel()
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
    ranks = rank_disagreements(f) if spec.task == "correlation" else None
    if n == 0 or not _applies(metric, y, codes):
        notes.append("No sample both runs were scored on supports this metric.")
        return Comparison(
            metric,
            n,
            np.nan,
            np.nan,
            None,
            None,
            empty_slices,
            _disagreements(f, kind),
            notes,
            ranks,
        )
    stratify = spec.overall == "mean_over_domains"
    domains = f["domain"].fillna("").astype(str).to_numpy()
    mean_dom = stratify and metric in MEAN_OVER_DOMAINS
    if kind == "scores":
        # no compression possible: every resample re-ranks the scores
        cap = 1000 if metric == "kendall_tau" else 2000
        resamples, slice_resamples = min(resamples, cap), min(slice_resamples, 500)
        notes.append(
            f"{V.metric_label(metric)} is recomputed on every resample: "
            f"{plural(resamples, 'resample')} overall, {slice_resamples:,} per slice."
        )
    if kind == "labels":
        y, a, b = y.astype(np.int8), a.astype(np.int8), b.astype(np.int8)
    strata = domains if stratify else None
    diff = paired_difference(
        metric,
        y,
        a,
        b,
        strata=strata,
        mean_over_strata=mean_dom,
        resamples=resamples,
        seed=seed,
        codes=codes,
    )
    sa, sb = _stat_pair(metric, y, a, b, domains if mean_dom else None, codes)
    ones = np.ones((1, n))
    va, vb = float(sa(ones)[0]), float(sb(ones)[0])
    mc = M.mcnemar_exact(a == y, b == y) if kind == "labels" else None
    slices = _slices(
        spec, f, metric, y, a, b, domains if stratify else None, slice_resamples, seed, codes
    )
    return Comparison(metric, n, va, vb, diff, mc, slices, _disagreements(f, kind), notes, ranks)


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
    codes: np.ndarray | None = None,
) -> pd.DataFrame:
    rows = []
    for kind, value, mask in slice_masks(spec, f):
        if kind == "overall":
            continue
        ys = y[mask]
        cs = codes[mask] if codes is not None else None
        if not _applies(metric, ys, cs):
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
            codes=cs,
        )
        sa, sb = _stat_pair(metric, ys, a[mask], b[mask], None, cs)
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


RANK_COLUMNS = [
    "sample_id",
    "split",
    "domain",
    "human_score",
    "score_a",
    "score_b",
    "human_rank",
    "rank_a",
    "rank_b",
    "gap",
    "summary",
]


def rank_disagreements(f: pd.DataFrame) -> pd.DataFrame:
    """Where two metrics rank the samples most differently (correlation benchmarks, whose runs
    give scores, not labels): each sample's rank by A's score, by B's score and by the human
    score, as percentiles among the samples all three rate (0 = least consistent, 100 = most;
    ties share their average rank), and gap = A's rank - B's rank; the largest |gap| first.

    f: Q.pair_frame rows (sample_id, human_score, score_a, score_b, ...)."""
    cols = ["human_score", "score_a", "score_b"]
    if f.empty or not set(cols) <= set(f.columns):
        return pd.DataFrame(columns=RANK_COLUMNS)
    m = f.dropna(subset=cols).copy()
    if m.empty:
        return pd.DataFrame(columns=RANK_COLUMNS)
    for src, dst in (("human_score", "human_rank"), ("score_a", "rank_a"), ("score_b", "rank_b")):
        m[dst] = percentile_rank(m[src].astype(float))
    m["gap"] = m["rank_a"] - m["rank_b"]
    order = np.lexsort((m["sample_id"].astype(str).to_numpy(), -m["gap"].abs().round(6).to_numpy()))
    return m.iloc[order][RANK_COLUMNS].reset_index(drop=True)


def percentile_rank(x: pd.Series) -> pd.Series:
    """Ranks as percentiles, 0 (lowest) to 100 (highest), ties at their average rank."""
    n = len(x)
    if n == 1:
        return pd.Series([50.0], index=x.index)
    return (x.rank(method="average") - 1) / (n - 1) * 100
