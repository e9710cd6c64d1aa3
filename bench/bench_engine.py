"""Engine speed: scoring, the vectorised bootstrap, the paired bootstrap.

Run: python bench/bench_engine.py
Every figure is measured in this run, beside a baseline measured in the same run:
- scoring a 20,000-sample submission over all slices with 1,000-resample CIs (target < 2 s),
  as a ratio to the target and to a per-resample scikit-learn loop over the same slices;
- the vectorised bootstrap vs a per-resample scikit-learn loop (target >= 20x);
- a paired bootstrap of two runs on 6,348 samples with 10,000 resamples (target < 1 s).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluator.benchmarks import get
from evaluator.core import metrics as M
from evaluator.core.scoring import ScoreOptions, score, slice_masks

DOMAINS = [
    "podcast",
    "billsum",
    "samsum",
    "news",
    "sales_call",
    "sales_email",
    "shakespeare",
    "scitldr",
    "qmsumm",
    "ectsum",
]
TYPES = [
    "entity_modification",
    "antonym_swap",
    "hallucinated_fact_insertion",
    "negation_insertion_removal",
]


def summedits_like(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    label = (rng.random(n) < 0.35).astype("int8")
    types = [
        [] if lab else sorted(set(rng.choice(TYPES, rng.integers(1, 4)).tolist())) for lab in label
    ]
    return pd.DataFrame(
        {
            "benchmark": "summedits",
            "sample_id": [f"s{i}" for i in range(n)],
            "split": np.where(rng.random(n) < 0.2, "dev", "test"),
            "unit": "summary",
            "summary_id": None,
            "domain": rng.choice(DOMAINS, n),
            "doc_id": None,
            "document": "d",
            "summary": "s",
            "seed_summary": None,
            "label": label,
            "human_score": np.nan,
            "error_types": types,
            "reference_explanation": None,
            "attributes": [json.dumps({"n_edit_types": str(len(t))}) for t in types],
        }
    )


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    spec = get("summedits")
    n = 25_000  # ~20,000 test samples after the dev split is set aside
    samples = summedits_like(n)
    rng = np.random.default_rng(1)
    scores = samples["label"] * 0.7 + rng.normal(size=n)
    with_scores = pd.DataFrame({"sample_id": samples["sample_id"], "score": scores})
    with_labels = pd.DataFrame(
        {"sample_id": samples["sample_id"], "label": (scores > 0.3).astype(int)}
    )
    n_test = int((samples["split"] == "test").sum())
    opts = ScoreOptions(resamples=1000, seed=0)
    t_scores = timed(lambda: score(spec, samples, with_scores, opts))
    t_labels = timed(lambda: score(spec, samples, with_labels, opts))
    out = score(spec, samples, with_scores, opts)
    n_results = len(out.results)

    # baseline: a per-resample scikit-learn loop over the same slices (BAcc + AUROC), on a
    # fraction of the resamples, extrapolated linearly
    test = samples[samples["split"] == "test"].merge(with_scores, on="sample_id")
    y = test["label"].to_numpy()
    s = test["score"].to_numpy()
    yhat = (s >= out.threshold.threshold).astype(int)
    masks = [m for _, _, m in slice_masks(spec, test)]
    rs = np.random.default_rng(0)
    base_resamples = 20

    def sk_loop() -> None:
        for _ in range(base_resamples):
            idx = rs.integers(0, len(y), len(y))
            for m in masks:
                sel = idx[m[idx]]
                balanced_accuracy_score(y[sel], yhat[sel])
                roc_auc_score(y[sel], s[sel])

    t_sk = timed(sk_loop, 1) * 1000 / base_resamples

    # vectorised bootstrap vs per-resample sklearn loop, one metric over the whole set
    def vec() -> None:  # the scorer's path: exact multinomial draws over distinct rows
        keys = np.column_stack([y, yhat])
        r = M.Resampler(len(y), resamples=1, keys=keys).rows
        M.bootstrap_ci(
            lambda W: M.balanced_accuracy_w(W, y[r], yhat[r]), len(y), resamples=1000, keys=keys
        )

    def vec_plain() -> None:  # plain index resampling, vectorised
        M.bootstrap_ci(lambda W: M.balanced_accuracy_w(W, y, yhat), len(y), resamples=1000)

    def loop() -> None:
        r = np.random.default_rng(0)
        for _ in range(200):
            idx = r.integers(0, len(y), len(y))
            balanced_accuracy_score(y[idx], yhat[idx])

    t_vec = timed(vec)
    t_vec_plain = timed(vec_plain)
    t_loop = timed(loop, 1) * 1000 / 200

    # paired bootstrap, 6,348 samples, 10,000 resamples, labels (BAcc) and scores (AUROC)
    m = 6348
    yy = (rng.random(m) < 0.35).astype(int)
    pa = np.where(rng.random(m) < 0.8, yy, 1 - yy)
    pb = np.where(rng.random(m) < 0.75, yy, 1 - yy)
    dom = rng.choice(DOMAINS, m)
    keys = np.column_stack([yy, pa, pb])

    def paired_labels() -> None:
        rsm = M.Resampler(m, resamples=1, keys=keys, strata=dom)
        r = rsm.rows
        M.paired_bootstrap(
            lambda W: M.balanced_accuracy_w(W, yy[r], pa[r]),
            lambda W: M.balanced_accuracy_w(W, yy[r], pb[r]),
            m,
            resamples=10_000,
            keys=keys,
            strata=dom,
        )

    sa, sb = pa + rng.normal(size=m), pb + rng.normal(size=m)

    def paired_scores() -> None:
        M.paired_bootstrap(
            lambda W: M.roc_auc_w(W, yy, sa),
            lambda W: M.roc_auc_w(W, yy, sb),
            m,
            resamples=10_000,
            dtype=np.float32,
        )

    t_pl = timed(paired_labels)
    t_ps = timed(paired_scores, 1)

    print(f"scoring {n_test:,} test samples ({n_results} slice x metric results, 1,000 resamples)")
    print(
        f"  with scores (dev threshold + AUROC): {t_scores:.2f} s = {t_scores / 2:.2f} x the "
        f"2 s target; {t_sk / t_scores:.0f}x faster than a per-resample sklearn loop "
        f"({t_sk:.0f} s extrapolated)"
    )
    print(
        f"  with labels:                         {t_labels:.2f} s = {t_labels / 2:.2f} x the "
        f"2 s target"
    )
    print(
        f"vectorised bootstrap (BAcc, {len(y):,} samples, 1,000 resamples): {t_vec:.3f} s; "
        f"sklearn loop {t_loop:.1f} s: {t_loop / t_vec:.0f}x faster (target >= 20x); plain "
        f"index resampling {t_vec_plain:.3f} s: {t_loop / t_vec_plain:.0f}x"
    )
    print(
        f"paired bootstrap, {m:,} samples x 10,000 resamples: labels {t_pl:.3f} s "
        f"({t_pl:.2f} x the 1 s target); scores/AUROC {t_ps:.2f} s"
    )


if __name__ == "__main__":
    main()
