"""Rank with tie groups: which models on the board are significantly different?

Two runs scored on the same samples (same benchmark version, split and unit, every sample
predicted) are compared with a paired bootstrap of the metric difference (docs/ARCHITECTURE.md).
Comparing each pair with evaluator.core.metrics.paired_bootstrap would cost minutes for 200 runs, so
this module evaluates every run on the *same* bootstrap resamples at once (one matrix product
per domain) and reads each pair's difference off those shared resamples: the same test, done
once per board instead of once per pair. The resamples come from evaluator.core.metrics.Resampler
(exact, seeded, stratified by domain where the benchmark averages over domains), the p-value is
the one evaluator.core.metrics.paired_bootstrap defines, and the point values are checked against
the numbers stored in each run (a run whose per-sample labels do not reproduce its stored number
falls back to CI non-overlap). Everything else (reported numbers, other metrics, runs with
missing predictions) is compared by CI non-overlap (evaluator.core.metrics.significance_from_cis).
Each label metric's formula on confusion counts is the engine's (evaluator.core.metrics,
FROM_CONFUSION), chosen through the vocabulary (evaluator.core.vocabulary.metric(name).confusion).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluator.core import metrics as M
from evaluator.core import vocabulary as V

LEVEL = 0.95


# kept for callers of the old names; derived from the vocabulary, never restated
LABEL_METRICS: frozenset[str] = frozenset(V.label_metrics())
LOWER_IS_BETTER: frozenset[str] = frozenset(n for n in V.metric_names() if V.lower_is_better(n))


def confusion_formula(metric: str) -> M.ConfusionFn:
    """The engine's formula of a label metric on confusion counts (evaluator.core.metrics),
    as the vocabulary names it; KeyError for a metric that is not a function of final labels."""
    name = V.metric(metric).confusion
    if name is None:
        raise KeyError(f"{metric} is not a function of final labels")
    return M.FROM_CONFUSION[name]


def stacked_confusion(
    W: np.ndarray, y: np.ndarray, P: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Weighted (tp, fn, fp, tn) of R runs at once: W (b, n), y (n,), P (R, n) -> each (b, R).

    Inconsistent (0) is the positive class, as in evaluator.core.metrics.confusion_w.
    """
    return _Confusion(y, P).counts(W)


class _Confusion:
    """Indicator matrices of R runs' labels, built once and multiplied by each weight chunk."""

    def __init__(self, y: np.ndarray, P: np.ndarray):
        pos = y == 0
        flagged = (P == 0).T  # (n, R)
        self.R = P.shape[0]
        # one matrix, one product: [tp indicators | tn indicators | positives | negatives]
        self.ind = np.concatenate(
            [pos[:, None] & flagged, ~pos[:, None] & ~flagged, pos[:, None], ~pos[:, None]], axis=1
        ).astype(np.float32)

    def counts(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        Wf = W.astype(np.float32, copy=False)  # counts are small integers: exact in float32
        c = (Wf @ self.ind).astype(np.float64)
        R = self.R
        tp, tn = c[:, :R], c[:, R : 2 * R]
        fn = c[:, 2 * R : 2 * R + 1] - tp
        fp = c[:, 2 * R + 1 :] - tn
        return tp, fn, fp, tn


def metric_many(
    metric: str,
    W: np.ndarray,
    y: np.ndarray,
    P: np.ndarray,
    groups: Sequence[np.ndarray] | None = None,
) -> np.ndarray:
    """metric of R runs on each weight row: (b, R). groups: column masks whose per-group metric
    is averaged without weights (SummEdits overall = mean of the domain values)."""
    f = confusion_formula(metric)
    if not groups:
        return f(*stacked_confusion(W, y, P))
    vals = [f(*stacked_confusion(W[:, g], y[g], P[:, g])) for g in groups]
    return np.mean(np.stack(vals, axis=0), axis=0)


@dataclass(frozen=True)
class SharedBootstrap:
    point: np.ndarray  # (R,)
    boot: np.ndarray  # (B, R)


def frame_weights(
    n: int, strata: np.ndarray | None, resamples: int = 1000, seed: int = 0
) -> np.ndarray:
    """Bootstrap weights (B, n) over a whole scored frame, from evaluator.core.metrics.Resampler
    (exact, seeded, within strata), as float32 (counts are small integers: exact).

    Like the scorer, a slice is evaluated on its columns of these whole-frame resamples, so
    one matrix serves every slice of the frame."""
    rs = M.Resampler(n, resamples=resamples, seed=seed, strata=strata)
    return np.concatenate([W.astype(np.float32) for W in rs.chunks()], axis=0)


def shared_bootstrap(
    metric: str,
    y: np.ndarray,
    P: np.ndarray,
    weights: np.ndarray,
    groups: Sequence[np.ndarray] | None = None,
) -> SharedBootstrap:
    """Every run's metric on the same resamples: y (n,), P (R, n), weights (B, n).

    groups: column masks whose per-group values are averaged without weights (SummEdits
    Overall = the mean of the domain values); None: one group, all columns."""
    f = confusion_formula(metric)
    n = len(y)
    masks = list(groups) if groups else [np.ones(n, dtype=bool)]
    point = np.zeros(P.shape[0])
    boot = np.zeros((weights.shape[0], P.shape[0]))
    for g in masks:
        c = _Confusion(y[g], P[:, g])
        point += f(*c.counts(np.ones((1, int(g.sum())), dtype=np.float32)))[0]
        boot += f(*c.counts(weights[:, g]))
    return SharedBootstrap(point / len(masks), boot / len(masks))


def shared_bootstrap_scores(
    y: np.ndarray,
    S: np.ndarray,
    weights: np.ndarray,
    groups: Sequence[np.ndarray] | None = None,
) -> SharedBootstrap:
    """Every run's weighted AUROC (evaluator.core.metrics.RocAucSlices, as the scorer computes
    it) on the same resamples: y (n,), S (R, n) scores, weights (B, n). groups: column masks
    whose AUROCs are averaged (SummEdits Overall = the mean of the domains' AUROC)."""
    n = len(y)
    masks = list(groups) if groups else [np.ones(n, dtype=bool)]
    one = np.ones((1, n), dtype=np.float32)
    point = np.zeros(S.shape[0])
    boot = np.zeros((weights.shape[0], S.shape[0]))
    for r in range(S.shape[0]):
        stat = M.RocAucSlices(y, S[r], masks)
        point[r] = float(np.mean(stat(one)[0]))
        boot[:, r] = stat(weights).mean(axis=1)
    return SharedBootstrap(point, boot)


def paired_p_values(boot: np.ndarray, max_cells: int = 24_000_000) -> np.ndarray:
    """(R, R) two-sided paired-bootstrap p-values of metric(i) - metric(j), as defined by
    evaluator.core.metrics.paired_bootstrap (twice the smaller share of resamples on either side of
    zero, capped at 1; resamples where the difference is undefined are dropped).

    The matrix is symmetric, so only pairs i < j are computed."""
    B, R = boot.shape
    b = boot.astype(np.float32)
    ok = ~np.isnan(b)
    any_nan = not ok.all()
    p = np.ones((R, R))
    step = max(1, max_cells // max(B * R, 1))
    for i0 in range(0, R, step):
        i1 = min(R, i0 + step)
        a = b[:, i0:i1, None]
        rest = b[:, None, i0:]
        if any_nan:
            valid = np.count_nonzero(ok[:, i0:i1, None] & ok[:, None, i0:], axis=0)
        else:
            valid = np.full((i1 - i0, R - i0), B)
        le = np.count_nonzero(a <= rest, axis=0)  # NaN compares False: drops out
        ge = np.count_nonzero(a >= rest, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            pv = np.where(valid > 0, np.minimum(1.0, 2 * np.minimum(le, ge) / valid), np.nan)
        p[i0:i1, i0:] = pv
        p[i0:, i0:i1] = pv.T
    np.fill_diagonal(p, 1.0)
    return p


def _higher_is_better(
    values: np.ndarray, ci_low: np.ndarray, ci_high: np.ndarray, lower_is_better: bool
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """(sign, values, CI low, CI high) turned so that higher is better."""
    sign = -1.0 if lower_is_better else 1.0
    v = sign * np.asarray(values, dtype=np.float64)
    lo_, hi_ = np.asarray(ci_low, dtype=np.float64), np.asarray(ci_high, dtype=np.float64)
    lo, hi = (-hi_, -lo_) if lower_is_better else (lo_, hi_)
    return sign, v, lo, hi


def significance_matrix(
    values: np.ndarray,
    ci_low: np.ndarray,
    ci_high: np.ndarray,
    lower_is_better: bool,
    paired: np.ndarray | None = None,
    paired_point: np.ndarray | None = None,
    paired_p: np.ndarray | None = None,
    alpha: float = 0.05,
) -> np.ndarray:
    """sb[i, j] = i is significantly better than j.

    CI non-overlap for every pair; for pairs where both are in `paired` (indices into values),
    the paired-bootstrap p-value decides instead.
    """
    sign, v, lo, hi = _higher_is_better(values, ci_low, ci_high, lower_is_better)
    sb = M.significance_from_cis(list(v), list(lo), list(hi))
    if paired is not None and paired_p is not None and paired_point is not None and len(paired):
        idx = np.asarray(paired)
        pv = sign * np.asarray(paired_point)
        better = (pv[:, None] > pv[None, :]) & (paired_p < alpha)
        sb[np.ix_(idx, idx)] = better
    np.fill_diagonal(sb, False)
    return sb


def ranks(values: Sequence[float], sb: np.ndarray) -> list[int]:
    """evaluator.core.metrics.rank_with_ties: 1 + the number of models significantly better."""
    return M.rank_with_ties(list(values), sb)


def rank_array(
    values: np.ndarray,
    ci_low: np.ndarray,
    ci_high: np.ndarray,
    lower_is_better: bool,
    paired: np.ndarray | None = None,
    paired_point: np.ndarray | None = None,
    paired_p: np.ndarray | None = None,
    alpha: float = 0.05,
) -> np.ndarray:
    """ranks(values, significance_matrix(...)) as an integer array, without the (n, n)
    matrix: 1 + the number of rows significantly better, counted by CI non-overlap over the
    sorted lower bounds (O(n log n)), then corrected on the paired block (the
    paired-bootstrap p-values decide there, as in significance_matrix)."""
    sign, v, lo, hi = _higher_is_better(values, ci_low, ci_high, lower_is_better)
    valid = ~np.isnan(v)
    can_beat = valid & ~np.isnan(lo)
    sorted_lo = np.sort(lo[can_beat])
    # how many i have lo[i] > hi[j] (a NaN hi sorts last: beaten by none)
    beat = len(sorted_lo) - np.searchsorted(sorted_lo, hi, side="right")
    with np.errstate(invalid="ignore"):
        beat = beat - (can_beat & (lo > hi))  # a row never beats itself
    beat[~valid] = 0
    if paired is not None and paired_p is not None and paired_point is not None and len(paired):
        idx = np.asarray(paired)
        pv = sign * np.asarray(paired_point, dtype=np.float64)
        better = (pv[:, None] > pv[None, :]) & (np.asarray(paired_p) < alpha)
        with np.errstate(invalid="ignore"):
            by_ci = lo[idx][:, None] > hi[idx][None, :]
        by_ci &= can_beat[idx][:, None] & valid[idx][None, :]
        np.fill_diagonal(better, False)
        np.fill_diagonal(by_ci, False)
        beat[idx] += better.sum(axis=0) - by_ci.sum(axis=0)
    return np.asarray(1 + beat, dtype=np.int64)
