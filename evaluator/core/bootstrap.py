"""Uncertainty, written once: the exact bootstrap (resampler, percentile CIs, point estimates
with their CIs), the paired tests between two runs on the same samples (paired bootstrap,
McNemar's exact test) and ranks with tie groups. Pure numpy/scipy; no I/O.

The statistics are the weighted metric forms of evaluator.core.metrics: `stat(W)` takes a (B, n)
matrix of bootstrap weights and returns one value per row, so a point value (one row of ones)
and its CI come from the same code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

ArrayLike = Sequence[float] | np.ndarray

# --------------------------------------------------------------------------------------------
# bootstrap


@dataclass
class Resampler:
    """Exact, seeded, chunked bootstrap weights over n samples (optionally within strata).

    keys (n, k) of small integer codes: samples with identical keys are interchangeable for the
    statistic, so the resampler works on the distinct rows and draws their counts from a
    multinomial, which has exactly the distribution of counting n draws with replacement. The
    statistic is then evaluated on `rows` (indices of one representative per distinct row).
    """

    n: int
    resamples: int = 1000
    seed: int = 0
    strata: np.ndarray | None = None
    keys: np.ndarray | None = None
    max_cells: int = 2_500_000  # weights per chunk: bounds memory (20 MB in float64)
    dtype: type = np.float64  # float32 halves memory traffic; counts stay exact below 2**24
    rows: np.ndarray = field(init=False)
    _inverse: np.ndarray = field(init=False)
    _strata_codes: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        if self.resamples < 1:
            raise ValueError(f"resamples must be >= 1, got {self.resamples}")
        strata = (
            np.zeros(self.n, dtype=np.int64)
            if self.strata is None
            else np.unique(np.asarray(self.strata), return_inverse=True)[1].ravel()
        )
        if len(strata) != self.n:
            raise ValueError(f"strata has {len(strata)} values for {self.n} samples")
        self._strata_codes = strata
        if self.keys is not None:
            k = np.column_stack([strata, np.asarray(self.keys).reshape(self.n, -1)])
            uniq, first, inverse = np.unique(k, axis=0, return_index=True, return_inverse=True)
            self.rows = first
            self._inverse = inverse.ravel()
        else:
            self.rows = np.arange(self.n)
            self._inverse = np.arange(self.n)

    @property
    def compressed(self) -> bool:
        return len(self.rows) < self.n

    def chunks(self) -> Iterator[np.ndarray]:
        """Weight matrices (b, len(rows)), b summing to `resamples`, same sequence for a seed."""
        rng = np.random.default_rng(self.seed)
        m = len(self.rows)
        per = max(1, min(self.resamples, self.max_cells // max(self.n, 1)))
        done = 0
        row_stratum = self._strata_codes[self.rows]
        strata_ids = np.unique(self._strata_codes)
        while done < self.resamples:
            b = min(per, self.resamples - done)
            W: np.ndarray = np.zeros((b, m), dtype=self.dtype)
            for s in strata_ids:
                members = np.flatnonzero(self._strata_codes == s)
                n_s = len(members)
                if self.compressed:
                    cols = np.flatnonzero(row_stratum == s)
                    p = np.bincount(self._inverse[members], minlength=m)[cols] / n_s
                    W[:, cols] = rng.multinomial(n_s, p, size=b)
                else:
                    draws = rng.integers(0, n_s, size=(b, n_s))
                    draws += (np.arange(b) * n_s)[:, None]  # row offsets, in place
                    W[:, members] = np.bincount(draws.ravel(), minlength=b * n_s).reshape(b, n_s)
                    del draws
            done += b
            yield W

    def point_weights(self) -> np.ndarray:
        """One row: the multiplicity of each representative row in the original sample."""
        return np.bincount(self._inverse, minlength=len(self.rows))[None, :].astype(np.float64)


Stat = Callable[[np.ndarray], np.ndarray]


def bootstrap_values(stat: Stat, resampler: Resampler) -> np.ndarray:
    """stat(W) on every resample: shape (resamples,) or (resamples, m) if stat returns (b, m)."""
    return np.concatenate([np.asarray(stat(W)) for W in resampler.chunks()], axis=0)


def percentile_ci(values: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over axis 0, ignoring resamples where the metric is undefined."""
    if len(values) == 1:  # one resample (point values only): each quantile is that value
        one = np.where(np.isinf(values[0]), np.nan, values[0])  # as nanquantile gives them
        return one, one.copy()
    alpha = (1 - level) / 2
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo = np.nanquantile(values, alpha, axis=0)
            hi = np.nanquantile(values, 1 - alpha, axis=0)
    return lo, hi


@dataclass(frozen=True)
class Estimate:
    value: float
    ci_low: float
    ci_high: float
    n: int


def bootstrap_ci(
    stat: Stat,
    n: int,
    *,
    resamples: int = 1000,
    seed: int = 0,
    strata: np.ndarray | None = None,
    level: float = 0.95,
    keys: np.ndarray | None = None,
) -> Estimate:
    """Point value and percentile CI of stat (a weighted statistic over n samples).

    With keys, stat receives weights over the distinct rows only (Resampler(...).rows, in the
    order np.unique gives them): build it on those rows (see Resampler)."""
    rs = Resampler(n, resamples=resamples, seed=seed, strata=strata, keys=keys)
    point = float(np.asarray(stat(rs.point_weights()))[0])
    lo, hi = percentile_ci(bootstrap_values(stat, rs), level)
    return Estimate(point, float(lo), float(hi), n)


def mean_over_strata_w(
    stat: Callable[[np.ndarray, np.ndarray], np.ndarray], strata: np.ndarray
) -> Stat:
    """A statistic that is the unweighted mean over strata of `stat` within each stratum.

    stat(W, mask) computes the metric on the columns selected by mask. SummEdits "Overall".
    """
    groups = [strata == s for s in np.unique(strata)]

    def f(W: np.ndarray) -> np.ndarray:
        return np.mean(np.stack([stat(W, g) for g in groups], axis=1), axis=1)

    return f


# --------------------------------------------------------------------------------------------
# comparing two runs on the same samples


@dataclass(frozen=True)
class PairedComparison:
    difference: float  # metric(a) - metric(b)
    ci_low: float
    ci_high: float
    p_value: float  # two-sided paired-bootstrap p-value for a difference of zero
    n: int
    resamples: int


def paired_bootstrap(
    stat_a: Stat,
    stat_b: Stat,
    n: int,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    strata: np.ndarray | None = None,
    keys: np.ndarray | None = None,
    level: float = 0.95,
    dtype: type = np.float64,
) -> PairedComparison:
    """Paired bootstrap of metric(a) - metric(b): both evaluated on the same resamples.

    The p-value is twice the smaller share of resamples on either side of zero (capped at 1).
    keys: optional per-sample codes that make samples interchangeable (see Resampler).
    """
    rs = Resampler(n, resamples=resamples, seed=seed, strata=strata, keys=keys, dtype=dtype)
    P = rs.point_weights()
    diff = float(np.asarray(stat_a(P))[0] - np.asarray(stat_b(P))[0])
    d = bootstrap_values(lambda W: np.asarray(stat_a(W)) - np.asarray(stat_b(W)), rs)
    d = d[~np.isnan(d)]
    lo, hi = percentile_ci(d, level)
    if d.size == 0:
        p = float("nan")
    else:
        p = float(min(1.0, 2 * min((d <= 0).mean(), (d >= 0).mean())))
    return PairedComparison(diff, float(lo), float(hi), p, n, resamples)


@dataclass(frozen=True)
class McNemar:
    a_only: int  # samples a gets right and b gets wrong
    b_only: int
    p_value: float


def mcnemar_exact(correct_a: ArrayLike, correct_b: ArrayLike) -> McNemar:
    """McNemar's exact test: two-sided binomial test on the discordant pairs."""
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if len(a) != len(b):
        raise ValueError(f"arrays differ in length: {sorted({len(a), len(b)})}")
    n01 = int((a & ~b).sum())
    n10 = int((~a & b).sum())
    if n01 + n10 == 0:
        return McNemar(n01, n10, 1.0)
    p = stats.binomtest(n01, n01 + n10, 0.5, alternative="two-sided").pvalue
    return McNemar(n01, n10, float(min(1.0, p)))


# --------------------------------------------------------------------------------------------
# ranks with tie groups


def rank_with_ties(values: Sequence[float], significantly_better: np.ndarray) -> list[int]:
    """Rank = 1 + the number of models significantly better than this one.

    significantly_better[i, j] is True when model i is significantly better than model j. Models
    that no one beats share rank 1; a model can only be pushed down by a significant difference.
    """
    v = np.asarray(values, dtype=np.float64)
    sb = np.asarray(significantly_better, dtype=bool)
    if sb.shape != (len(v), len(v)):
        raise ValueError(f"significance matrix has shape {sb.shape} for {len(v)} models")
    return [int(c) for c in 1 + sb.sum(axis=0)]


def significance_from_cis(
    values: Sequence[float], ci_low: Sequence[float], ci_high: Sequence[float]
) -> np.ndarray:
    """i beats j when i's CI lies wholly above j's (for models not scored on the same samples)."""
    v, lo, hi = (np.asarray(a, dtype=np.float64) for a in (values, ci_low, ci_high))
    with np.errstate(invalid="ignore"):
        sb = lo[:, None] > hi[None, :]
    np.fill_diagonal(sb, False)
    return sb & ~np.isnan(v)[:, None] & ~np.isnan(v)[None, :]


def tie_groups(ranks: Sequence[int]) -> list[int]:
    """Group number per model: models with the same rank share a group (1 = top group)."""
    order = sorted(set(ranks))
    return [order.index(r) + 1 for r in ranks]
