"""explorer.ranking against the engine: same metrics, same resamples, same p-values."""

from __future__ import annotations

import numpy as np
import pytest

from evaluator.core import metrics as M
from evaluator.core import vocabulary as V
from explorer import ranking as R

# the engine's weighted function of every label metric, as the vocabulary names it
ENGINE = {name: m.weighted for name, m in V.label_metrics().items() if m.weighted}


def _data(n: int = 300, runs: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int8)
    acc = np.linspace(0.55, 0.9, runs)[:, None]
    right = rng.random((runs, n)) < acc
    P = np.where(right, y, 1 - y).astype(np.int8)
    dom = rng.choice(["a", "b", "c"], n)
    return y, P, dom


@pytest.mark.parametrize("metric", sorted(ENGINE))
def test_stacked_metrics_equal_the_engine_run_by_run(metric: str) -> None:
    y, P, _ = _data()
    W = M.Resampler(len(y), resamples=50, seed=3).chunks().__next__()
    got = R.metric_many(metric, W, y, P)
    for r in range(P.shape[0]):
        np.testing.assert_allclose(got[:, r], ENGINE[metric](W, y, P[r]), rtol=0, atol=1e-12)


def test_mean_over_domains_equals_the_engine_statistic() -> None:
    y, P, dom = _data()
    W = np.concatenate(list(M.Resampler(len(y), resamples=40, seed=1, strata=dom).chunks()))
    groups = [dom == d for d in np.unique(dom)]
    got = R.metric_many("balanced_accuracy", W, y, P, groups)
    for r in range(P.shape[0]):
        engine = M.mean_over_strata_w(
            lambda W_, m, r=r: M.balanced_accuracy_w(W_[:, m], y[m], P[r][m]), dom
        )
        np.testing.assert_allclose(got[:, r], engine(W), atol=1e-12)


def test_shared_bootstrap_point_is_the_plain_metric() -> None:
    y, P, dom = _data()
    W = R.frame_weights(len(y), dom, resamples=100, seed=0)
    sb = R.shared_bootstrap("balanced_accuracy", y, P, W, [dom == d for d in np.unique(dom)])
    for r in range(P.shape[0]):
        per_dom = [M.balanced_accuracy(y[dom == d], P[r][dom == d]) for d in np.unique(dom)]
        assert sb.point[r] == pytest.approx(np.mean(per_dom), abs=1e-12)
    assert sb.boot.shape == (100, P.shape[0])


def test_frame_weights_are_the_engine_resamples() -> None:
    y, _, dom = _data(n=120)
    W = R.frame_weights(len(y), dom, resamples=30, seed=7)
    ref = np.concatenate(list(M.Resampler(len(y), resamples=30, seed=7, strata=dom).chunks()))
    np.testing.assert_array_equal(W, ref.astype(np.float32))
    # every resample keeps each domain's size (stratified)
    for d in np.unique(dom):
        np.testing.assert_array_equal(W[:, dom == d].sum(axis=1), (dom == d).sum())


def test_pair_p_values_match_evaluator_paired_bootstrap() -> None:
    """Same seed and n: the shared resamples are exactly the engine's, so are the p-values."""
    y, P, _ = _data(n=400, runs=4, seed=5)
    W = R.frame_weights(len(y), None, resamples=500, seed=11)
    sb = R.shared_bootstrap("balanced_accuracy", y, P, W)
    p = R.paired_p_values(sb.boot)
    for i, j in [(0, 1), (1, 3), (2, 3), (0, 3)]:
        ref = M.paired_bootstrap(
            lambda W_, i=i: M.balanced_accuracy_w(W_, y, P[i]),
            lambda W_, j=j: M.balanced_accuracy_w(W_, y, P[j]),
            len(y),
            resamples=500,
            seed=11,
        )
        assert sb.point[i] - sb.point[j] == pytest.approx(ref.difference, abs=1e-12)
        assert p[i, j] == pytest.approx(ref.p_value, abs=0.004)  # float32 ties at most
        assert p[j, i] == p[i, j]


def test_p_values_brute_force_with_undefined_resamples() -> None:
    rng = np.random.default_rng(0)
    boot = rng.random((300, 7))
    boot[5, 2] = np.nan
    boot[:, 6] = boot[:, 5]  # identical runs: p = 1
    p = R.paired_p_values(boot)
    for i in range(7):
        for j in range(7):
            if i == j:
                continue
            d = boot[:, i] - boot[:, j]
            d = d[~np.isnan(d)]
            ref = min(1.0, 2 * min((d <= 0).mean(), (d >= 0).mean()))
            assert p[i, j] == pytest.approx(ref, abs=1e-12)
    assert p[5, 6] == 1.0


def test_significance_and_ranks_with_ties() -> None:
    values = np.array([0.80, 0.78, 0.60, 0.59])
    lo = np.array([0.75, 0.74, 0.55, 0.50])
    hi = np.array([0.85, 0.82, 0.65, 0.66])
    sb = R.significance_matrix(values, lo, hi, lower_is_better=False)
    assert R.ranks(values, sb) == [1, 1, 3, 3]
    # lower is better (FPR): the same CIs, ranks reversed
    sb = R.significance_matrix(values, lo, hi, lower_is_better=True)
    assert R.ranks(values, sb) == [3, 3, 1, 1]


def test_paired_test_overrides_ci_overlap() -> None:
    """Overlapping CIs, but the paired test says 0 beats 1: rank 2 for run 1."""
    values = np.array([0.70, 0.69])
    lo, hi = np.array([0.6, 0.6]), np.array([0.8, 0.8])
    p = np.array([[1.0, 0.01], [0.01, 1.0]])
    sb = R.significance_matrix(
        values, lo, hi, False, paired=np.array([0, 1]), paired_point=values, paired_p=p
    )
    assert R.ranks(values, sb) == [1, 2]
    # a large p-value keeps them tied
    sb = R.significance_matrix(
        values,
        lo,
        hi,
        False,
        paired=np.array([0, 1]),
        paired_point=values,
        paired_p=np.full((2, 2), 0.4),
    )
    assert R.ranks(values, sb) == [1, 1]
