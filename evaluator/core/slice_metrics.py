"""The metrics of one scored frame, slice by slice, in one bootstrap pass: the vocabulary's
metrics for the benchmark's task (evaluator.core.vocabulary), each reported on the slices that
hold what it needs, ES and JS per grader, AUROC over sorted scores; where a benchmark averages
over its domains, the overall value of a metric that aggregates so is the mean of its
per-domain values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluator.core import metrics as M
from evaluator.core import vocabulary as V
from evaluator.core.slices import ScoringSpec
from evaluator.core.types import SliceResult
from evaluator.core.vocabulary import MEAN_OVER_DOMAINS

SliceStat = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (W, column mask) -> (b,)


@dataclass(frozen=True)
class MetricDef:
    name: str
    stat: SliceStat
    applies: Callable[[np.ndarray], bool]  # mask -> bool
    grader: str | None = None
    rows: Callable[[np.ndarray], np.ndarray] = lambda m: m  # the rows it averages over (for n)
    kinds: tuple[str, ...] | None = None  # only these slice kinds (None: every slice)
    confusion: str | None = None  # a label metric's formula (metrics.FROM_CONFUSION)


def _label_needs(needs: V.Needs, y: np.ndarray) -> Callable[[np.ndarray], bool]:
    """Whether a slice (a row mask) holds what a label metric needs (`Metric.needs`)."""
    if needs == "inconsistent":
        return lambda m: bool((y[m] == 0).any())
    if needs == "both_classes":
        return lambda m: bool((y[m] == 0).any() and (y[m] == 1).any())
    if needs == "inconsistent_only":
        return lambda m: bool((y[m] == 0).any() and not (y[m] == 1).any())
    return lambda m: bool(m.any())


def _pairs_needs(needs: V.Needs, codes: np.ndarray | None) -> Callable[[np.ndarray], bool]:
    """Whether a slice holds what a correlation needs: three pairs, from at least two control
    groups for a partial correlation."""
    if needs == "groups" and codes is not None:
        return lambda m: bool(m.sum() >= 3 and len(np.unique(codes[m])) > 1)
    return lambda m: bool(m.sum() >= 3)


def _label_stat(fn: V.WeightedFn, y: np.ndarray, p: np.ndarray) -> SliceStat:
    return lambda W, m: fn(W[:, m], y[m], p[m])


def detection_metrics(
    spec: ScoringSpec, y: np.ndarray, p: np.ndarray, grades: dict[str, np.ndarray]
) -> list[MetricDef]:
    """The vocabulary's label metrics for the benchmark's task, then ES and JS per grader."""
    defs = [
        MetricDef(
            m.name,
            _label_stat(m.weighted, y, p),
            _label_needs(m.needs, y),
            confusion=m.confusion,
        )
        for m in V.scored_metrics(spec.task, "labels")
        if m.weighted and m.needs
    ]
    inc = y == 0
    detected = p == 0
    for grader, g in grades.items():
        has_g = ~np.isnan(g)
        gz = np.where(has_g, g, 0.0)
        es_rows = inc & has_g
        js_rows = inc & ~(detected & ~has_g)
        js_val = np.where(detected, gz, 0.0)
        defs.append(_subset_mean_metric("explanation_score", es_rows, gz, grader))
        defs.append(_subset_mean_metric("joint_score", js_rows, js_val, grader))
    return defs


def _subset_mean_metric(name: str, rows: np.ndarray, values: np.ndarray, grader: str) -> MetricDef:
    """Mean of `values` over the slice's samples that are in `rows` (ES and JS)."""

    def stat(W: np.ndarray, m: np.ndarray) -> np.ndarray:
        sel = m & rows
        return M.mean_w(W[:, sel], values[sel])

    def applies(m: np.ndarray) -> bool:
        return bool((m & rows).any())

    def counted(m: np.ndarray) -> np.ndarray:
        return m & rows

    return MetricDef(name, stat, applies, grader, counted)


def correlation_metrics(
    spec: ScoringSpec, x: np.ndarray, h: np.ndarray, control: np.ndarray | None
) -> list[MetricDef]:
    """The vocabulary's correlations with human scores; the partial ones where the benchmark
    names a control variable."""
    codes = None if control is None else np.unique(control, return_inverse=True)[1].ravel()
    # FRANK reports the partial ones overall and per dataset; error-type subsets get the plain ones
    kinds = ("overall", *(s.kind for s in spec.slices if s.fields == ("domain",)))
    defs = []
    for m in V.scored_metrics(spec.task, "scores"):
        if m.needs is None:
            continue
        if m.weighted is not None:
            stat = _pair_stat(m.weighted, x, h)
            defs.append(MetricDef(m.name, stat, _pairs_needs(m.needs, None)))
        elif m.partialled is not None and codes is not None:
            stat = _partial_stat(m.partialled, x, h, codes)
            defs.append(MetricDef(m.name, stat, _pairs_needs(m.needs, codes), kinds=kinds))
    return defs


def _pair_stat(fn: V.WeightedFn, x: np.ndarray, h: np.ndarray) -> SliceStat:
    return lambda W, m: fn(W[:, m], x[m], h[m])


def _partial_stat(fn: V.PartialFn, x: np.ndarray, h: np.ndarray, codes: np.ndarray) -> SliceStat:
    return lambda W, m: fn(W[:, m], x[m], h[m], codes[m])


@dataclass(frozen=True)
class SliceContext:
    """What every result of one scored frame shares, and the bootstrap's settings."""

    split: str
    unit: str
    resamples: int
    seed: int
    level: float
    strata: np.ndarray | None
    present: list[str]  # domains present
    overall_mean: bool  # overall = unweighted mean of the per-domain values
    point_only: bool = False  # values alone: no resample drawn, each CI is its value


def _interval(
    stat_all: M.Stat, rs: M.Resampler, point: np.ndarray, ctx: SliceContext
) -> tuple[np.ndarray, np.ndarray]:
    """The percentile CI of every column of stat_all; with ctx.point_only, the point values."""
    if ctx.point_only:
        return point.copy(), point.copy()
    return M.percentile_ci(M.bootstrap_values(stat_all, rs), ctx.level)


Planned = tuple[str, str, MetricDef, np.ndarray, bool]  # kind, value, metric, mask, mean_dom


def plan(
    defs: list[MetricDef],
    masks: list[tuple[str, str, np.ndarray]],
    dom_rows: np.ndarray,
    ctx: SliceContext,
) -> list[Planned]:
    """Every (slice, metric) that applies: the slice holds what the metric needs, and, where the
    overall value is the mean over domains, so does each domain."""
    out: list[Planned] = []
    for kind, value, m in masks:
        for d in defs:
            if (d.kinds is not None and kind not in d.kinds) or not d.applies(m):
                continue
            mean_dom = kind == "overall" and ctx.overall_mean and d.name in MEAN_OVER_DOMAINS
            if mean_dom and not all(d.applies(m & (dom_rows == dm)) for dm in ctx.present):
                continue
            out.append((kind, value, d, m, mean_dom))
    return out


def evaluate(
    defs: list[MetricDef],
    masks: list[tuple[str, str, np.ndarray]],
    rs: M.Resampler,
    dom_rows: np.ndarray,
    ctx: SliceContext,
) -> list[SliceResult]:
    """Point values and CIs of every (slice, metric) that applies, in one bootstrap pass."""
    planned = plan(defs, masks, dom_rows, ctx)

    def stat_all(W: np.ndarray) -> np.ndarray:
        cols = []
        for _, _, d, m, mean_dom in planned:
            if mean_dom:
                cols.append(
                    np.mean(
                        np.stack([d.stat(W, m & (dom_rows == dm)) for dm in ctx.present], axis=1),
                        axis=1,
                    )
                )
            else:
                cols.append(d.stat(W, m))
        return np.stack(cols, axis=1) if cols else np.zeros((W.shape[0], 0))

    P = rs.point_weights()
    point = stat_all(P)[0]
    lo, hi = _interval(stat_all, rs, point, ctx)
    return [
        _result(
            ctx,
            kind,
            value,
            d.name,
            point[j],
            lo[j],
            hi[j],
            int(P[0][d.rows(m)].sum()),
            d.grader,
            mean_dom,
        )
        for j, (kind, value, d, m, mean_dom) in enumerate(planned)
        if np.isfinite(point[j])
    ]


def roc_auc_results(
    y: np.ndarray,
    s: np.ndarray,
    masks: list[tuple[str, str, np.ndarray]],
    domains: np.ndarray,
    ctx: SliceContext,
) -> list[SliceResult]:
    """AUROC per slice: one sort shared by every slice; the overall mean over domains reuses
    the per-domain columns."""
    both = [
        (k, v, m)
        for k, v, m in masks
        if (y[m] == 0).any() and (y[m] == 1).any() and not (k == "overall" and ctx.overall_mean)
    ]
    dom_masks = [domains == d for d in ctx.present] if ctx.overall_mean else []
    mean_ok = bool(dom_masks) and all((y[m] == 0).any() and (y[m] == 1).any() for m in dom_masks)
    stat = M.RocAucSlices(y, s, [m for _, _, m in both] + (dom_masks if mean_ok else []))
    k = len(both)

    def stat_all(W: np.ndarray) -> np.ndarray:
        v = stat(W)
        if mean_ok:
            v = np.column_stack([v[:, :k], v[:, k:].mean(axis=1)])
        return v

    rs = M.Resampler(
        len(y),
        resamples=ctx.resamples,
        seed=ctx.seed,
        strata=ctx.strata,
        dtype=np.float32,
    )
    point = stat_all(rs.point_weights())[0]
    lo, hi = _interval(stat_all, rs, point, ctx)
    out = [
        _result(ctx, kind, value, "roc_auc", point[j], lo[j], hi[j], int(m.sum()), None, False)
        for j, (kind, value, m) in enumerate(both)
        if np.isfinite(point[j])
    ]
    if mean_ok and np.isfinite(point[k]):
        out.append(
            _result(ctx, "overall", "", "roc_auc", point[k], lo[k], hi[k], len(y), None, True)
        )
    return out


def _result(
    ctx: SliceContext,
    kind: str,
    value: str,
    metric: str,
    point: float,
    lo: float,
    hi: float,
    n: int,
    grader: str | None,
    mean_dom: bool,
) -> SliceResult:
    return SliceResult(
        split=ctx.split,
        unit=ctx.unit,
        slice_kind=kind,
        slice_value=value,
        metric=metric,
        value=float(point),
        ci_low=float(lo) if np.isfinite(lo) else None,
        ci_high=float(hi) if np.isfinite(hi) else None,
        n=n,
        coverage=ctx.present if (kind == "overall" and ctx.present) else None,
        grader=grader,
        aggregation="mean_over_domains" if mean_dom else None,
    )
