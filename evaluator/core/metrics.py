"""Metrics, as the papers define them. Pure numpy/scipy; no I/O.

Conventions
- Gold and predicted labels: 1 = consistent, 0 = inconsistent. The detection target ("positive") is
  the inconsistent class, as in TofuEval: FPR = consistent samples flagged inconsistent, FNR =
  inconsistent samples passed as consistent; BAcc = 1 - (FPR + FNR) / 2.
- Scores: higher = more consistent; a threshold t turns a score s into label 1 when s >= t.
- Every metric with a bootstrap CI is written once in *weighted* form: `W` is a (B, n) matrix of
  per-sample weights (bootstrap counts); row b gives the metric on resample b. The point estimate is
  the same function with one row of ones, so point values and CIs cannot drift apart.
- The bootstrap (evaluator.core.bootstrap) is exact (each resample is n draws with replacement,
  within strata when given), vectorised, seeded, and drawn in chunks so memory stays bounded.
- Label metrics are written once as functions of confusion counts (`*_from_confusion`,
  FROM_CONFUSION); the weighted forms and the board's stacked ranking both call them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

# the bootstrap, the paired tests and the ranks are written in evaluator.core.bootstrap; their
# names stay readable here for the callers that take every number tool from this module
from evaluator.core.bootstrap import (  # noqa: F401
    Estimate,
    McNemar,
    PairedComparison,
    Resampler,
    Stat,
    bootstrap_ci,
    bootstrap_values,
    mcnemar_exact,
    mean_over_strata_w,
    paired_bootstrap,
    percentile_ci,
    rank_with_ties,
    significance_from_cis,
    tie_groups,
)

ArrayLike = Sequence[float] | np.ndarray

# --------------------------------------------------------------------------------------------
# helpers


def _labels(y: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(y)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if a.size and not np.isin(a, (0, 1)).all():
        bad = a[~np.isin(a, (0, 1))][0]
        raise ValueError(f"{name} must hold 0/1 labels, found {bad.item()!r}")
    return a.astype(np.int8)


def _floats(x: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} holds non-finite values (NaN or inf)")
    return a


def _same_length(*arrays: np.ndarray) -> None:
    lengths = {len(a) for a in arrays}
    if len(lengths) > 1:
        raise ValueError(f"arrays differ in length: {sorted(lengths)}")


def _ones(n: int) -> np.ndarray:
    return np.ones((1, n), dtype=np.float64)


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


# --------------------------------------------------------------------------------------------
# weighted (vectorised) forms: W is (B, n); each returns (B,)


def confusion_w(W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray) -> tuple[np.ndarray, ...]:
    """Weighted (tp, fn, fp, tn) with inconsistent (0) as the positive class."""
    pos = y_true == 0
    flag = y_pred == 0
    ind = np.stack([pos & flag, pos & ~flag, ~pos & flag, ~pos & ~flag], axis=1)
    c = W @ ind.astype(W.dtype)
    return c[:, 0], c[:, 1], c[:, 2], c[:, 3]


# Label metrics as functions of confusion counts (inconsistent = positive), written once: the
# weighted forms below use them, and so does the board, which stacks the counts of many runs
# (explorer.ranking). Each takes (tp, fn, fp, tn) arrays of any one shape and returns that shape.


def balanced_accuracy_from_confusion(
    tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray
) -> np.ndarray:
    return (_div(tp, tp + fn) + _div(tn, tn + fp)) / 2


def accuracy_from_confusion(
    tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray
) -> np.ndarray:
    return _div(tp + tn, tp + fn + fp + tn)


def fpr_from_confusion(
    tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray
) -> np.ndarray:
    return _div(fp, fp + tn)


def fnr_from_confusion(
    tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray
) -> np.ndarray:
    return _div(fn, fn + tp)


def recall_from_confusion(
    tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray
) -> np.ndarray:
    return _div(tp, tp + fn)


def precision_from_confusion(
    tp: np.ndarray, fn: np.ndarray, fp: np.ndarray, tn: np.ndarray
) -> np.ndarray:
    return _div(tp, tp + fp)


ConfusionFn = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]

# the formula names evaluator.core.vocabulary.Metric.confusion refers to
FROM_CONFUSION: dict[str, ConfusionFn] = {
    "balanced_accuracy": balanced_accuracy_from_confusion,
    "accuracy": accuracy_from_confusion,
    "fpr": fpr_from_confusion,
    "fnr": fnr_from_confusion,
    "recall": recall_from_confusion,
    "precision": precision_from_confusion,
}


def balanced_accuracy_w(W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return balanced_accuracy_from_confusion(*confusion_w(W, y_true, y_pred))


def accuracy_w(W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return accuracy_from_confusion(*confusion_w(W, y_true, y_pred))


def false_positive_rate_w(W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return fpr_from_confusion(*confusion_w(W, y_true, y_pred))


def false_negative_rate_w(W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return fnr_from_confusion(*confusion_w(W, y_true, y_pred))


def recall_inconsistent_w(W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return recall_from_confusion(*confusion_w(W, y_true, y_pred))


def precision_inconsistent_w(W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return precision_from_confusion(*confusion_w(W, y_true, y_pred))


def balanced_accuracy_multiclass_w(
    W: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray
) -> np.ndarray:
    """Mean over the classes present in y_true of the recall of that class (any labels)."""
    recalls = []
    for c in np.unique(y_true):
        m = y_true == c
        recalls.append(_div(W[:, m & (y_pred == c)].sum(axis=1), W[:, m].sum(axis=1)))
    import warnings

    with warnings.catch_warnings():  # a resample may miss a class: that recall is left out
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.stack(recalls, axis=1), axis=1)


def mean_w(W: np.ndarray, x: np.ndarray) -> np.ndarray:
    return _div(W @ x.astype(W.dtype), W.sum(axis=1))


def roc_auc_w(W: np.ndarray, y_true: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Weighted AUROC of `score` for recognising consistent samples (ties count one half).

    = P(score of a consistent sample > score of an inconsistent one), as sklearn's roc_auc_score
    with y_true=label. O(B * n) after one sort.
    """
    return RocAucSlices(y_true, score, [np.ones(len(score), dtype=bool)])(W)[:, 0]


class RocAucSlices:
    """Weighted AUROC over many subsets of the same samples: one sort, per-subset tie groups
    precomputed, so each resample chunk costs one gather plus a pass per subset."""

    def __init__(self, y_true: np.ndarray, score: np.ndarray, masks: list[np.ndarray]):
        self.order = np.argsort(score, kind="mergesort")
        ys, ss = y_true[self.order], score[self.order]
        self.parts = []
        for m in masks:
            cols = np.flatnonzero(m[self.order])
            sub = ss[cols]
            starts = np.flatnonzero(np.r_[True, sub[1:] != sub[:-1]]) if cols.size else cols
            self.parts.append((cols, starts, ys[cols] == 1))

    def __call__(self, W: np.ndarray) -> np.ndarray:
        # samples-major layout: every cumulative sum and group sum runs across resamples at once
        Wt = W.T[self.order]
        out = np.full((W.shape[0], len(self.parts)), np.nan)
        for j, (cols, starts, pos) in enumerate(self.parts):
            if cols.size == 0 or pos.all() or not pos.any():
                continue
            Wm = Wt[cols]
            if starts.size == cols.size:  # no tied scores: one cumulative sum
                # cumulative counts stay exact in the weights' dtype (integers below 2**24)
                below = np.cumsum(np.where(pos[:, None], 0, Wm), axis=0)
                num = (Wm[pos] * below[pos]).sum(axis=0, dtype=np.float64)
                p_tot = Wm[pos].sum(axis=0, dtype=np.float64)
                n_tot = below[-1]
            else:
                P = np.add.reduceat(np.where(pos[:, None], Wm, 0), starts, axis=0)
                N = np.add.reduceat(np.where(pos[:, None], 0, Wm), starts, axis=0)
                neg_below = np.cumsum(N, axis=0) - N
                num = (P * (neg_below + 0.5 * N)).sum(axis=0, dtype=np.float64)
                p_tot = P.sum(axis=0, dtype=np.float64)
                n_tot = N.sum(axis=0, dtype=np.float64)
            out[:, j] = _div(num, p_tot * n_tot)
        return out


def pearson_w(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    w = W.sum(axis=1)
    mx = _div(W @ x, w)
    my = _div(W @ y, w)
    cxy = _div(W @ (x * y), w) - mx * my
    cxx = _div(W @ (x * x), w) - mx * mx
    cyy = _div(W @ (y * y), w) - my * my
    with np.errstate(invalid="ignore"):
        den = np.sqrt(np.clip(cxx, 0, None) * np.clip(cyy, 0, None))
    r = _div(cxy, den)
    # constant input: correlation undefined (rounding can leave a tiny variance)
    tiny = 1e-12 * (1 + np.abs(mx) ** 2 + np.abs(my) ** 2)
    return np.where((cxx <= tiny) | (cyy <= tiny), np.nan, np.clip(r, -1, 1))


def _weighted_midranks(W: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Mid-ranks each sample gets in the resample where sample i appears W[b, i] times."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    group = np.cumsum(np.r_[True, xs[1:] != xs[:-1]]) - 1
    Wo = W[:, order]
    gw = np.add.reduceat(Wo, starts, axis=1)  # weight per tied group
    before = np.cumsum(gw, axis=1) - gw
    ranks_sorted = (before + (gw + 1) / 2)[:, group]
    ranks = np.empty_like(ranks_sorted)
    ranks[:, order] = ranks_sorted
    return ranks


def spearman_w(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho on each resample (Pearson on the resample's mid-ranks)."""
    rx = _weighted_midranks(W, x)
    ry = _weighted_midranks(W, y)
    w = W.sum(axis=1, keepdims=True)
    mx = (W * rx).sum(axis=1, keepdims=True) / w
    my = (W * ry).sum(axis=1, keepdims=True) / w
    cxy = (W * (rx - mx) * (ry - my)).sum(axis=1)
    cxx = (W * (rx - mx) ** 2).sum(axis=1)
    cyy = (W * (ry - my) ** 2).sum(axis=1)
    return _div(cxy, np.sqrt(cxx * cyy))


def _group_weight_sums(W: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(B, groups): each resample's total weight on each distinct value of x."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    return np.add.reduceat(W[:, order], starts, axis=1)


KENDALL_QUADRATIC_MAX_N = 2500


def kendall_tau_w(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b on each resample, exactly.

    C - D = sum over pairs i < j of w_i w_j sign(dx) sign(dy) = w'Sw / 2 (a quadratic form, one
    matrix product for all resamples); the tie terms come from per-value weight sums (a value
    drawn k times contributes k(k-1)/2 tied pairs). Above KENDALL_QUADRATIC_MAX_N samples the
    n x n matrix is too large and scipy runs per resample.
    """
    n = W.shape[1]
    if n > KENDALL_QUADRATIC_MAX_N:
        return _kendall_tau_loop(W, x, y)
    S = (np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])).astype(np.float32)
    Wf = W.astype(np.float32)
    c_minus_d = 0.5 * np.einsum("bi,bi->b", (Wf @ S).astype(np.float64), W)
    total = W.sum(axis=1)
    n0 = total * (total - 1) / 2
    gx = _group_weight_sums(W, x)
    gy = _group_weight_sums(W, y)
    n1 = (gx * (gx - 1) / 2).sum(axis=1)
    n2 = (gy * (gy - 1) / 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            (n0 - n1 > 0) & (n0 - n2 > 0),
            c_minus_d / np.sqrt(np.clip((n0 - n1) * (n0 - n2), 0, None)),
            np.nan,
        )


def _kendall_tau_loop(W: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty(W.shape[0])
    idx = np.arange(W.shape[1])
    for b in range(W.shape[0]):
        take = np.repeat(idx, W[b].astype(np.int64))
        if take.size < 2:
            out[b] = np.nan
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            out[b] = stats.kendalltau(x[take], y[take], variant="b").statistic
    return out


def _residuals_w(W: np.ndarray, v: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """(B, n): v minus its resample-weighted mean within each control group."""
    G = (codes[:, None] == np.unique(codes)[None, :]).astype(np.float64)
    gw = W @ G
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.nan_to_num((W @ (G * v[:, None])) / gw)
    return v[None, :] - means @ G.T


def _row_midranks(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Weighted mid-ranks when every resample b has its own values X[b] (residuals)."""
    B, n = X.shape
    order = np.argsort(X, axis=1, kind="mergesort")
    Xs = np.take_along_axis(X, order, axis=1)
    Ws = np.take_along_axis(W, order, axis=1)
    gid = np.concatenate(
        [np.zeros((B, 1), dtype=np.int64), np.cumsum(Xs[:, 1:] != Xs[:, :-1], axis=1)], axis=1
    )
    flat = (gid + (np.arange(B) * n)[:, None]).ravel()
    gsum = np.bincount(flat, Ws.ravel(), minlength=B * n).reshape(B, n)
    before = np.cumsum(gsum, axis=1) - gsum
    ranks_sorted = np.take_along_axis(before + (gsum + 1) / 2, gid, axis=1)
    ranks = np.empty_like(ranks_sorted)
    np.put_along_axis(ranks, order, ranks_sorted, axis=1)
    return ranks


def _weighted_row_pearson(W: np.ndarray, A: np.ndarray, C: np.ndarray) -> np.ndarray:
    w = W.sum(axis=1, keepdims=True)
    ma = (W * A).sum(axis=1, keepdims=True) / w
    mc = (W * C).sum(axis=1, keepdims=True) / w
    cac = (W * (A - ma) * (C - mc)).sum(axis=1)
    caa = (W * (A - ma) ** 2).sum(axis=1)
    ccc = (W * (C - mc) ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((caa > 1e-15) & (ccc > 1e-15), cac / np.sqrt(caa * ccc), np.nan)


def partial_pearson_w(W: np.ndarray, x: np.ndarray, y: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Pearson of x and y after removing each control group's mean (FRANK's protocol)."""
    return _weighted_row_pearson(W, _residuals_w(W, x, codes), _residuals_w(W, y, codes))


def partial_spearman_w(
    W: np.ndarray, x: np.ndarray, y: np.ndarray, codes: np.ndarray
) -> np.ndarray:
    """Spearman of the within-group residuals of x and y (FRANK's evaluate.py)."""
    # residuals equal in exact arithmetic must tie whatever order the float sums ran in
    rx = _row_midranks(W, np.round(_residuals_w(W, x, codes), 10))
    ry = _row_midranks(W, np.round(_residuals_w(W, y, codes), 10))
    return _weighted_row_pearson(W, rx, ry)


# --------------------------------------------------------------------------------------------
# point metrics (public API). Each is the weighted form on one row of ones.


def _on_labels(fn: Callable[..., np.ndarray], y_true: ArrayLike, y_pred: ArrayLike) -> float:
    t, p = _labels(y_true, "y_true"), _labels(y_pred, "y_pred")
    _same_length(t, p)
    return float(fn(_ones(len(t)), t, p)[0])


def _on_floats(
    fn: Callable[..., np.ndarray], a: ArrayLike, b: ArrayLike, names: tuple[str, str] = ("x", "y")
) -> float:
    x, y = _floats(a, names[0]), _floats(b, names[1])
    _same_length(x, y)
    return float(fn(_ones(len(x)), x, y)[0])


def balanced_accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Mean of the recall on consistent and on inconsistent samples."""
    return _on_labels(balanced_accuracy_w, y_true, y_pred)


def accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    return _on_labels(accuracy_w, y_true, y_pred)


def false_positive_rate(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Share of consistent samples flagged as inconsistent."""
    return _on_labels(false_positive_rate_w, y_true, y_pred)


def false_negative_rate(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Share of inconsistent samples passed as consistent."""
    return _on_labels(false_negative_rate_w, y_true, y_pred)


def recall_inconsistent(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Share of inconsistent samples flagged (SummExecEdit's DS; TofuEval's error-type recall)."""
    return _on_labels(recall_inconsistent_w, y_true, y_pred)


def precision_inconsistent(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Share of samples flagged inconsistent that are inconsistent."""
    return _on_labels(precision_inconsistent_w, y_true, y_pred)


def balanced_accuracy_multiclass(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Balanced accuracy over any number of classes (e.g. judge grades 1 / 0.5 / 0 against
    human grades, SummExecEdit Table 4): scikit-learn's balanced_accuracy_score."""
    t, p = np.asarray(y_true), np.asarray(y_pred)
    if t.shape != p.shape:
        raise ValueError(f"arrays differ in length: {sorted({len(t), len(p)})}")
    return float(balanced_accuracy_multiclass_w(_ones(len(t)), t, p)[0])


def roc_auc(y_true: ArrayLike, score: ArrayLike) -> float:
    """AUROC of the consistency score (NaN when one class is absent)."""
    t, s = _labels(y_true, "y_true"), _floats(score, "score")
    _same_length(t, s)
    return float(roc_auc_w(_ones(len(t)), t, s)[0])


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    return _on_floats(pearson_w, x, y)


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    return _on_floats(spearman_w, x, y)


def kendall_tau(x: ArrayLike, y: ArrayLike, variant: str = "b") -> float:
    """Kendall's tau (variant "b" handles ties in both; "c" for rectangular tables)."""
    a, b = _floats(x, "x"), _floats(y, "y")
    _same_length(a, b)
    if variant not in ("b", "c"):
        raise ValueError(f"unknown Kendall variant {variant!r}; known: b, c")
    if len(a) < 2:
        return float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(stats.kendalltau(a, b, variant=variant).statistic)


def partial_correlation(
    x: ArrayLike, y: ArrayLike, control: Sequence[object], method: str = "pearson"
) -> float:
    """Correlation of x and y after removing the mean of each control group from both.

    FRANK's protocol (its evaluate.py): the summarization system is the control variable, so a
    metric is not rewarded for merely ranking systems. x and y are regressed on the one-hot
    control (which subtracts group means), then Pearson or Spearman is taken of the residuals.
    """
    a, b = _floats(x, "x"), _floats(y, "y")
    _same_length(a, b)
    g = np.asarray(control)
    if len(g) != len(a):
        raise ValueError(f"control has {len(g)} values for {len(a)} samples")
    if method not in ("pearson", "spearman"):
        raise ValueError(f"unknown method {method!r}; known: pearson, spearman")
    codes = np.unique(g, return_inverse=True)[1].ravel()
    fn = partial_pearson_w if method == "pearson" else partial_spearman_w
    return float(fn(_ones(len(a)), a, b, codes)[0])


def cohen_kappa(a: Sequence[object], b: Sequence[object]) -> float:
    """Cohen's kappa between two raters' categorical labels."""
    x, y = np.asarray(a), np.asarray(b)
    if len(x) != len(y):
        raise ValueError(f"raters labelled {len(x)} and {len(y)} items")
    if len(x) == 0:
        return float("nan")
    cats, codes = np.unique(np.concatenate([x, y]), return_inverse=True)
    cx, cy = codes[: len(x)], codes[len(x) :]
    k = len(cats)
    m = np.zeros((k, k))
    np.add.at(m, (cx, cy), 1)
    m /= m.sum()
    po = np.trace(m)
    pe = float(m.sum(axis=1) @ m.sum(axis=0))
    if pe == 1:
        return 1.0 if po == 1 else float("nan")
    return float((po - pe) / (1 - pe))


def mean_pairwise_cohen_kappa(runs: Sequence[Sequence[object]]) -> float:
    """Mean Cohen's kappa over every pair of repeated runs (TofuEval Table 4 self-agreement)."""
    if len(runs) < 2:
        raise ValueError(f"need at least two runs, got {len(runs)}")
    return float(np.mean([cohen_kappa(a, b) for a, b in combinations(runs, 2)]))


def krippendorff_alpha(
    reliability_data: ArrayLike | Sequence[Sequence[float]], level: str = "nominal"
) -> float:
    """Krippendorff's alpha. reliability_data: raters x units, np.nan where a rater gave no value.

    Units with fewer than two values are not pairable and are dropped, as the definition says.
    level: nominal, ordinal or interval (the difference function delta).
    """
    data = np.asarray(reliability_data, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError(f"reliability_data must be raters x units, got shape {data.shape}")
    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"unknown level {level!r}; known: nominal, ordinal, interval")
    values = np.unique(data[~np.isnan(data)])
    if values.size == 0:
        return float("nan")
    k = len(values)
    index = {v: i for i, v in enumerate(values)}
    # value counts per unit (units x values)
    counts = np.zeros((data.shape[1], k))
    for u in range(data.shape[1]):
        col = data[:, u]
        for v in col[~np.isnan(col)]:
            counts[u, index[v]] += 1
    m_u = counts.sum(axis=1)
    counts = counts[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if counts.size == 0:
        return float("nan")
    # coincidence matrix
    o = np.zeros((k, k))
    for row, m in zip(counts, m_u, strict=True):
        o += (np.outer(row, row) - np.diag(row)) / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    elif level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    else:  # ordinal: squared count of values between c and d, halves at both ends
        delta = np.zeros((k, k))
        for c in range(k):
            for d in range(c + 1, k):
                delta[c, d] = delta[d, c] = (n_c[c : d + 1].sum() - (n_c[c] + n_c[d]) / 2) ** 2
    d_o = (o * delta).sum()
    d_e = (np.outer(n_c, n_c) * delta).sum() / (n - 1)
    if d_e == 0:
        return 1.0 if d_o == 0 else float("nan")
    return float(1 - d_o / d_e)


# --------------------------------------------------------------------------------------------
# thresholds


@dataclass(frozen=True)
class Threshold:
    value: float
    balanced_accuracy: float


def best_threshold(y_true: ArrayLike, score: ArrayLike) -> Threshold:
    """The threshold maximising BAcc (label 1 when score >= t), ties broken by the smallest t.

    Candidates are the distinct scores plus +inf (flag everything); a chosen t is moved to the
    midpoint between its score and the next lower one, so it generalises to unseen scores.
    """
    t, s = _labels(y_true, "y_true"), _floats(score, "score")
    _same_length(t, s)
    n_pos, n_neg = int((t == 1).sum()), int((t == 0).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("threshold tuning needs both consistent and inconsistent samples")
    order = np.argsort(s, kind="mergesort")
    ss, tt = s[order], t[order]
    uniq, first = np.unique(ss, return_index=True)
    # with t = uniq[i], samples before first[i] are flagged inconsistent (label 0)
    neg_below = np.r_[0, np.cumsum(tt == 0)][first]
    pos_below = np.r_[0, np.cumsum(tt == 1)][first]
    bacc = (neg_below / n_neg + (n_pos - pos_below) / n_pos) / 2
    bacc_all_flagged = 0.5  # t = +inf: every sample flagged inconsistent
    i = int(np.argmax(bacc))
    if bacc_all_flagged > bacc[i]:
        return Threshold(float("inf"), bacc_all_flagged)
    value = uniq[i] if i == 0 else _midpoint(float(uniq[i - 1]), float(uniq[i]))
    return Threshold(float(value), float(bacc[i]))


def _midpoint(lo: float, hi: float) -> float:
    """A threshold strictly above `lo` and at most `hi` (lo < hi, both finite), near halfway.

    Halves are added, not the sum halved, so scores near the float limit (1.7e308) cannot
    overflow to inf; when lo and hi are adjacent floats the midpoint rounds to one of them,
    and `hi` is the one that keeps `lo` below the threshold."""
    mid = lo / 2 + hi / 2
    return mid if lo < mid <= hi else hi


def apply_threshold(score: ArrayLike, threshold: float) -> np.ndarray:
    """Labels from scores: 1 (consistent) where score >= threshold."""
    return (np.asarray(score, dtype=np.float64) >= threshold).astype(np.int8)


# --------------------------------------------------------------------------------------------
# SummExecEdit: detection and explanation scores


def detection_score(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """DS: share of the inconsistent summaries the model flags."""
    return recall_inconsistent(y_true, y_pred)


def explanation_score(grades: ArrayLike) -> float:
    """ES: mean grade (1 / 0.5 / 0) over the graded explanations; unparsable (NaN) left out."""
    g = np.asarray(grades, dtype=np.float64)
    g = g[~np.isnan(g)]
    return float(g.mean()) if g.size else float("nan")


def joint_score(y_true: ArrayLike, y_pred: ArrayLike, grades: ArrayLike) -> float:
    """JS: mean over inconsistent summaries of detected x grade (grade of an undetected one is 0).

    A detected summary whose grade is unparsable (NaN) is left out, not scored as wrong.
    """
    t, p = _labels(y_true, "y_true"), _labels(y_pred, "y_pred")
    g = np.asarray(grades, dtype=np.float64)
    _same_length(t, p, g)
    inc = t == 0
    detected = p[inc] == 0
    gi = g[inc]
    keep = ~(detected & np.isnan(gi))
    vals = np.where(detected, gi, 0.0)[keep]
    return float(vals.mean()) if vals.size else float("nan")
