"""Metrics against scikit-learn / scipy / krippendorff on random data, and their properties."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn import metrics as skm

from evaluator.core import metrics as M

labels = st.lists(st.integers(0, 1), min_size=2, max_size=200)


def _pair(draw_len: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, draw_len), rng.integers(0, 2, draw_len)


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 300), st.integers(0, 10**6))
def test_label_metrics_match_sklearn(n: int, seed: int) -> None:
    y, p = _pair(n, seed)
    if len(set(y)) == 2:
        assert M.balanced_accuracy(y, p) == pytest.approx(skm.balanced_accuracy_score(y, p))
    assert M.accuracy(y, p) == pytest.approx(skm.accuracy_score(y, p))
    # inconsistent (0) is the positive class: recall/precision with pos_label=0
    if (y == 0).any():
        assert M.recall_inconsistent(y, p) == pytest.approx(skm.recall_score(y, p, pos_label=0))
        assert M.false_negative_rate(y, p) == pytest.approx(1 - skm.recall_score(y, p, pos_label=0))
    if (p == 0).any():
        assert M.precision_inconsistent(y, p) == pytest.approx(
            skm.precision_score(y, p, pos_label=0, zero_division=0)
        )
    if (y == 1).any():
        assert M.false_positive_rate(y, p) == pytest.approx(1 - skm.recall_score(y, p, pos_label=1))
    if len(set(y)) == 2:
        fpr, fnr = M.false_positive_rate(y, p), M.false_negative_rate(y, p)
        assert M.balanced_accuracy(y, p) == pytest.approx(1 - (fpr + fnr) / 2)


@settings(max_examples=100, deadline=None)
@given(st.integers(3, 300), st.integers(0, 10**6), st.sampled_from([1, 2, 10, 1000]))
def test_auroc_matches_sklearn_with_ties(n: int, seed: int, levels: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = rng.integers(0, levels, n) / levels  # few levels -> many ties
    if len(set(y)) < 2:
        assert np.isnan(M.roc_auc(y, s))
        return
    assert M.roc_auc(y, s) == pytest.approx(skm.roc_auc_score(y, s))


@settings(max_examples=100, deadline=None)
@given(st.integers(3, 200), st.integers(0, 10**6), st.booleans())
def test_correlations_match_scipy(n: int, seed: int, ties: bool) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    if ties:
        x, y = np.round(x), np.round(y)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert np.isnan(M.pearson(x, y))
        return
    assert M.pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-9)
    assert M.spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-9)
    assert M.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert M.kendall_tau(x, y, "c") == pytest.approx(
        stats.kendalltau(x, y, variant="c").statistic, abs=1e-12
    )


def test_partial_correlation_removes_the_control_effect() -> None:
    rng = np.random.default_rng(3)
    system = np.repeat(np.arange(5), 60)
    offset = system * 3.0  # systems differ a lot in both metric and human score
    noise = rng.normal(size=system.size)
    x = offset + noise
    y = offset + rng.normal(size=system.size)  # no within-system relation at all
    assert M.pearson(x, y) > 0.9
    assert abs(M.partial_correlation(x, y, system)) < 0.15
    # and equals the Pearson correlation of the within-group residuals, by construction
    rx = x - np.array([x[system == g].mean() for g in system])
    ry = y - np.array([y[system == g].mean() for g in system])
    assert M.partial_correlation(x, y, system) == pytest.approx(stats.pearsonr(rx, ry)[0])
    # FRANK's evaluate.py: Spearman of the residuals (not residuals of the ranks)
    assert M.partial_correlation(x, y, system, "spearman") == pytest.approx(
        stats.spearmanr(rx, ry)[0]
    )


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 200), st.integers(0, 10**6), st.integers(2, 4))
def test_cohen_kappa_matches_sklearn(n: int, seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, k, n), rng.integers(0, k, n)
    expected = skm.cohen_kappa_score(a, b)
    got = M.cohen_kappa(a, b)
    if np.isnan(expected):
        assert np.isnan(got) or got == 1.0
    else:
        assert got == pytest.approx(expected)


def test_mean_pairwise_kappa() -> None:
    runs = [[0, 1, 1, 0, 1], [0, 1, 0, 0, 1], [1, 1, 1, 0, 1]]
    pairs = [skm.cohen_kappa_score(runs[i], runs[j]) for i, j in [(0, 1), (0, 2), (1, 2)]]
    assert M.mean_pairwise_cohen_kappa(runs) == pytest.approx(np.mean(pairs))
    with pytest.raises(ValueError, match="at least two runs"):
        M.mean_pairwise_cohen_kappa([[0, 1]])


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 5),
    st.integers(3, 60),
    st.integers(0, 10**6),
    st.sampled_from(["nominal", "ordinal", "interval"]),
    st.floats(0, 0.4),
)
def test_krippendorff_alpha_matches_reference(
    raters: int, units: int, seed: int, level: str, missing: float
) -> None:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, (raters, units)).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = np.unique(data[:, pairable][~np.isnan(data[:, pairable])])
    if values.size < 2:
        return  # alpha undefined: the reference package raises here
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert M.krippendorff_alpha(data, level) == pytest.approx(ref, abs=1e-9)


def test_krippendorff_alpha_perfect_agreement_and_bad_level() -> None:
    data = np.array([[1, 0, 1, 1], [1, 0, 1, 1]], dtype=float)
    assert M.krippendorff_alpha(data) == 1.0
    with pytest.raises(ValueError, match="unknown level"):
        M.krippendorff_alpha(data, "ratio-ish")


def test_best_threshold_maximises_bacc_by_brute_force() -> None:
    rng = np.random.default_rng(11)
    for _ in range(30):
        n = int(rng.integers(5, 80))
        y = rng.integers(0, 2, n)
        if len(set(y)) < 2:
            continue
        s = np.round(rng.normal(size=n) + y, 1)
        t = M.best_threshold(y, s)
        brute = max(
            skm.balanced_accuracy_score(y, (s >= c).astype(int))
            for c in np.r_[np.unique(s), np.inf]
        )
        assert t.balanced_accuracy == pytest.approx(brute)
        assert skm.balanced_accuracy_score(y, M.apply_threshold(s, t.value)) == pytest.approx(brute)


def test_best_threshold_needs_both_classes() -> None:
    with pytest.raises(ValueError, match="both consistent and inconsistent"):
        M.best_threshold([1, 1, 1], [0.1, 0.2, 0.3])


def test_ds_es_js_definitions() -> None:
    y = np.array([0, 0, 0, 0, 1, 1])
    p = np.array([0, 0, 1, 0, 1, 0])
    g = np.array([1.0, 0.5, np.nan, np.nan, np.nan, np.nan])  # sample 3 detected, unparsable
    assert M.detection_score(y, p) == pytest.approx(3 / 4)
    assert M.explanation_score(g[:2]) == pytest.approx(0.75)
    # JS over inconsistent: detected x grade; undetected -> 0; detected+unparsable left out
    assert M.joint_score(y, p, g) == pytest.approx((1 + 0.5 + 0) / 3)


def test_metric_input_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="0/1 labels, found 2"):
        M.balanced_accuracy([0, 1, 2], [0, 1, 1])
    with pytest.raises(ValueError, match="non-finite"):
        M.roc_auc([0, 1], [0.1, float("nan")])
    with pytest.raises(ValueError, match="differ in length"):
        M.accuracy([0, 1], [0])


# ------------------------------------------------------------------ bootstrap


def test_bootstrap_is_seeded_and_reproducible() -> None:
    y, p = _pair(500, 1)
    stat = lambda W: M.balanced_accuracy_w(W, y, p)  # noqa: E731
    a = M.bootstrap_ci(stat, 500, resamples=400, seed=7)
    b = M.bootstrap_ci(stat, 500, resamples=400, seed=7)
    c = M.bootstrap_ci(stat, 500, resamples=400, seed=8)
    assert a == b
    assert a != c
    assert a.value == pytest.approx(skm.balanced_accuracy_score(y, p))
    assert a.ci_low < a.value < a.ci_high


def test_bootstrap_weights_are_exact_resamples() -> None:
    strata = np.repeat([0, 1, 2], [10, 30, 60])
    rs = M.Resampler(100, resamples=50, seed=1, strata=strata)
    for W in rs.chunks():
        # every resample keeps each stratum's size
        for s, size in [(0, 10), (1, 30), (2, 60)]:
            assert (W[:, strata == s].sum(axis=1) == size).all()
        assert (W >= 0).all()


def test_compressed_bootstrap_has_the_same_distribution() -> None:
    """Multinomial draws over distinct rows = counting n draws with replacement."""
    y, p = _pair(2000, 5)
    plain = M.Resampler(2000, resamples=3000, seed=1)
    comp = M.Resampler(2000, resamples=3000, seed=2, keys=np.column_stack([y, p]))
    assert len(comp.rows) == 4
    v1 = M.bootstrap_values(lambda W: M.balanced_accuracy_w(W, y, p), plain)
    r = comp.rows
    v2 = M.bootstrap_values(lambda W: M.balanced_accuracy_w(W, y[r], p[r]), comp)
    assert v1.mean() == pytest.approx(v2.mean(), abs=2e-3)
    assert v1.std() == pytest.approx(v2.std(), rel=0.08)
    assert stats.ks_2samp(v1, v2).pvalue > 0.001


def test_bootstrap_ci_matches_a_plain_loop() -> None:
    """The vectorised CI agrees with a per-resample sklearn loop on the same index draws."""
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    s = rng.normal(size=n) + y
    rs = M.Resampler(n, resamples=200, seed=3)
    W = next(rs.chunks())
    vec = M.roc_auc_w(W, y, s)
    loop = []
    for row in W:
        idx = np.repeat(np.arange(n), row.astype(int))
        loop.append(skm.roc_auc_score(y[idx], s[idx]))
    np.testing.assert_allclose(vec, loop, rtol=1e-10)
    vb = M.balanced_accuracy_w(W, y, (s > 0.5).astype(int))
    loopb = [
        skm.balanced_accuracy_score(
            y[np.repeat(np.arange(n), r.astype(int))],
            (s > 0.5).astype(int)[np.repeat(np.arange(n), r.astype(int))],
        )
        for r in W
    ]
    np.testing.assert_allclose(vb, loopb, rtol=1e-10)
    sp = M.spearman_w(W, s, y + rng.normal(size=n))
    assert np.isfinite(sp).all()


def test_weighted_spearman_equals_spearman_of_the_resample() -> None:
    rng = np.random.default_rng(4)
    n = 80
    x = np.round(rng.normal(size=n), 1)
    y = np.round(x + rng.normal(size=n), 1)
    W = next(M.Resampler(n, resamples=30, seed=9).chunks())
    got = M.spearman_w(W, x, y)
    for b, row in enumerate(W):
        idx = np.repeat(np.arange(n), row.astype(int))
        assert got[b] == pytest.approx(stats.spearmanr(x[idx], y[idx]).statistic, abs=1e-9)
    kt = M.kendall_tau_w(W[:5], x, y)
    for b, row in enumerate(W[:5]):
        idx = np.repeat(np.arange(n), row.astype(int))
        assert kt[b] == pytest.approx(stats.kendalltau(x[idx], y[idx]).statistic)


def test_ci_coverage_is_roughly_nominal() -> None:
    """95% percentile CIs of accuracy cover the true value about 95% of the time."""
    rng = np.random.default_rng(123)
    truth, covered, trials = 0.7, 0, 200
    for t in range(trials):
        correct = (rng.random(400) < truth).astype(float)
        est = M.bootstrap_ci(lambda W, c=correct: M.mean_w(W, c), 400, resamples=300, seed=t)
        covered += est.ci_low <= truth <= est.ci_high
    assert 0.89 <= covered / trials <= 0.99


# ------------------------------------------------------------------ comparisons and ranks


def test_paired_bootstrap_detects_a_real_difference_and_not_a_null_one() -> None:
    rng = np.random.default_rng(2)
    n = 1500
    y = rng.integers(0, 2, n)
    good = np.where(rng.random(n) < 0.85, y, 1 - y)
    bad = np.where(rng.random(n) < 0.6, y, 1 - y)
    same = np.where(rng.random(n) < 0.85, y, 1 - y)
    stat = lambda pred: lambda W: M.balanced_accuracy_w(W, y, pred)  # noqa: E731
    real = M.paired_bootstrap(stat(good), stat(bad), n, resamples=2000, seed=1)
    assert real.difference == pytest.approx(
        skm.balanced_accuracy_score(y, good) - skm.balanced_accuracy_score(y, bad)
    )
    assert real.ci_low > 0 and real.p_value < 0.01
    null = M.paired_bootstrap(stat(good), stat(same), n, resamples=2000, seed=1)
    assert null.ci_low < 0 < null.ci_high or abs(null.difference) < 0.03
    assert null.p_value > 0.01


def test_mcnemar_exact_matches_binomial_test() -> None:
    a = np.array([1] * 30 + [0] * 5 + [1] * 50 + [0] * 15, dtype=bool)
    b = np.array([0] * 30 + [1] * 5 + [1] * 50 + [0] * 15, dtype=bool)
    r = M.mcnemar_exact(a, b)
    assert (r.a_only, r.b_only) == (30, 5)
    assert r.p_value == pytest.approx(stats.binomtest(30, 35, 0.5).pvalue)
    assert M.mcnemar_exact(a, a).p_value == 1.0


def test_rank_with_ties() -> None:
    vals = [0.9, 0.89, 0.7, 0.69, 0.5]
    sb = np.zeros((5, 5), dtype=bool)
    sb[0, 2:] = sb[1, 2:] = True  # top two beat the rest, not each other
    sb[2, 4] = sb[3, 4] = True
    ranks = M.rank_with_ties(vals, sb)
    assert ranks == [1, 1, 3, 3, 5]
    assert M.tie_groups(ranks) == [1, 1, 2, 2, 3]
    sig = M.significance_from_cis([0.9, 0.8, 0.5], [0.85, 0.7, 0.4], [0.95, 0.88, 0.6])
    assert sig.tolist() == [[False, False, True], [False, False, True], [False, False, False]]


def test_weighted_partial_and_kendall_equal_the_resampled_computation() -> None:
    rng = np.random.default_rng(21)
    n = 120
    g = rng.integers(0, 4, n)
    x = np.round(rng.normal(size=n) + g, 1)
    y = np.round(x + rng.normal(size=n), 1)
    W = next(M.Resampler(n, resamples=25, seed=2).chunks())
    pp = M.partial_pearson_w(W, x, y, g)
    ps = M.partial_spearman_w(W, x, y, g)
    kt = M.kendall_tau_w(W, x, y)
    loop = M._kendall_tau_loop(W, x, y)
    for b, row in enumerate(W):
        idx = np.repeat(np.arange(n), row.astype(int))
        assert pp[b] == pytest.approx(M.partial_correlation(x[idx], y[idx], g[idx]), abs=1e-9)
        assert ps[b] == pytest.approx(
            M.partial_correlation(x[idx], y[idx], g[idx], "spearman"), abs=1e-9
        )
        assert kt[b] == pytest.approx(stats.kendalltau(x[idx], y[idx]).statistic, abs=1e-9)
    np.testing.assert_allclose(kt, loop, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 200), st.integers(0, 10**6))
def test_multiclass_balanced_accuracy_matches_sklearn(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    grades = np.array([0.0, 0.5, 1.0])
    h, j = rng.choice(grades, n), rng.choice(grades, n)
    assert M.balanced_accuracy_multiclass(h, j) == pytest.approx(
        skm.balanced_accuracy_score(h.astype(str), j.astype(str)), abs=1e-12
    )
