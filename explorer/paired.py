"""The paired bootstrap of a board: the best complete runs (at most PAIRED_TOP) compared on
the same samples with shared resamples (explorer.ranking), their labels or scores read once
per run and kept in the memo with the frame, the slice masks and the bootstrap weights.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd

from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.scoring import MEAN_OVER_DOMAINS, slice_masks
from evaluator.core.vocabulary import (
    label_metrics,
    lower_is_better,
    metric_label,
)
from explorer import queries as Q
from explorer import ranking as R
from explorer.board_types import BoardQuery, LabelReader

# metrics of per-sample scores that the paired bootstrap compares (the label metrics are
# compared on the runs' final labels)
SCORE_METRICS: frozenset[str] = frozenset({"roc_auc"})
PAIRED_TOP = 20  # best runs compared by the paired test (their predictions are loaded)

# derived arrays kept between boards (explorer.store_files.Memo)
Memo = MutableMapping[object, object]
T = TypeVar("T")


def kept(memo: Memo, key: object, kind: type[T], make: Callable[[], T]) -> T:
    """memo[key] when it holds a `kind`, else make() kept there."""
    got = memo.get(key)
    if isinstance(got, kind):
        memo[key] = got  # (again: the most recently used)
        return got
    made = make()
    memo[key] = made
    return made


@dataclass(frozen=True)
class PairedRuns:
    """The runs compared by the paired bootstrap: their positions in the board's runs, their
    point values, the p-value matrix between them and the bootstrap values (resamples × runs),
    all in the order of `at`."""

    at: np.ndarray
    point: np.ndarray
    p_values: np.ndarray
    boot: np.ndarray


@dataclass(frozen=True)
class PairedTest:
    """What the paired bootstrap gives a board: the runs it compared (None when fewer than two
    could be) and why the others, or all, are compared by their CIs instead ('' when none)."""

    runs: PairedRuns | None
    why: str = ""


def paired_test(
    con: Q.Con,
    runs: pd.DataFrame,
    q: BoardQuery,
    spec: BenchmarkSpec | None,
    version: str | None,
    resamples: int,
    seed: int,
    memo: Memo,
    ensure: Callable[[list[str]], None] | None = None,
    labels: LabelReader | None = None,
) -> PairedTest:
    """The best complete runs (PAIRED_TOP at most, on the most common split) compared by a
    paired bootstrap on the view's slice; see PairedTest. runs: the ranked runs with their
    run_id, version, missing, unparsable, split and value (explorer.board.PAIRED_COLUMNS)."""
    by_scores = q.metric in SCORE_METRICS
    if q.metric not in label_metrics() and not by_scores:
        why = f"{metric_label(q.metric)} is not a function of labels or per-sample scores"
        return PairedTest(None, why)
    if spec is None:
        return PairedTest(None, "benchmark not ingested")
    chosen = _candidates(runs, q.metric, version)
    if chosen is None:
        return PairedTest(None, "fewer than two complete runs on this benchmark version")
    ok_pos, split = chosen
    run_ids = runs.iloc[ok_pos]["run_id"].tolist()
    frame, full = _run_vectors(con, q, version, split, run_ids, memo, ensure, labels)
    if frame.empty:
        return PairedTest(None, "no samples")
    mkey = ("masks", q.benchmark, version, q.unit, split, q.slice_kind)
    mask = kept(memo, mkey, dict, lambda: _slice_masks(spec, frame, q.slice_kind)).get(
        q.slice_value
    )
    if mask is None or not mask.any():
        return PairedTest(None, "slice not found in the samples")
    P = full[:, mask]
    complete = np.isfinite(P).all(axis=1) if by_scores else (P >= 0).all(axis=1)
    y = frame["label"].to_numpy()[mask]
    if np.isnan(y.astype(float)).any():
        return PairedTest(None, "samples without gold labels")
    y = y.astype(np.int8)
    domains = frame["domain"].fillna("").astype(str).to_numpy()[mask]
    stratify = spec.overall == "mean_over_domains"
    mean_dom = stratify and q.slice_kind == "overall" and q.metric in MEAN_OVER_DOMAINS
    keep = np.flatnonzero(complete)
    if len(keep) < 2:
        return PairedTest(None, "per-sample labels missing")
    wkey = ("weights", q.benchmark, version, q.unit, split, stratify, resamples, seed)

    def weights() -> np.ndarray:
        all_domains = frame["domain"].fillna("").astype(str).to_numpy()
        return R.frame_weights(len(frame), all_domains if stratify else None, resamples, seed)

    W = kept(memo, wkey, np.ndarray, weights)[:, mask]
    groups = [domains == d for d in np.unique(domains)] if mean_dom else None
    # the paired tests of these runs on this slice: the same whatever else joins the board
    bkey = ("boot", *wkey, q.slice_kind, q.slice_value, q.metric, tuple(run_ids), mean_dom)
    sb = kept(
        memo,
        bkey,
        R.SharedBootstrap,
        lambda: (
            R.shared_bootstrap_scores(y, P[keep], W, groups)
            if by_scores
            else R.shared_bootstrap(q.metric, y, P[keep], W, groups)
        ),
    )
    stored = runs.iloc[ok_pos[keep]]["value"].to_numpy(float)
    agree = np.isclose(sb.point, stored, rtol=0, atol=1e-9)
    if agree.sum() < 2:
        return PairedTest(None, "per-sample labels do not reproduce the stored numbers")
    use = keep[agree]
    boot = sb.boot[:, agree]
    pvals = R.paired_p_values(boot)
    why = "" if agree.all() else "labels do not reproduce the stored number"
    if len(use) < len(runs):
        why = why or "incomplete predictions, another benchmark version or split"
    return PairedTest(PairedRuns(ok_pos[use], sb.point[agree], pvals, boot), why)


def _run_vectors(
    con: Q.Con,
    q: BoardQuery,
    version: str | None,
    split: str,
    run_ids: list[str],
    memo: Memo,
    ensure: Callable[[list[str]], None] | None,
    labels: LabelReader | None,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The scored samples of the split (the frame) and each run's final labels (or scores,
    for SCORE_METRICS) on them, one row per run in run_ids' order. Kept per run in the memo:
    a new set of best runs, e.g. on another slice, loads and reads only the runs not seen."""
    by_scores = q.metric in SCORE_METRICS
    vkey = ("score-rows" if by_scores else "label-rows", q.benchmark, version, q.unit, split)
    vectors: dict[str, np.ndarray] = kept(memo, vkey, dict, dict)
    new = sorted(r for r in set(run_ids) if r not in vectors)
    if ensure is not None:
        # (the samples, at least; without a reader, the runs' labels and scores are read from
        # the labels table)
        ensure(new if labels is None else [])
    fkey = ("frame", q.benchmark, version, q.unit, split)
    frame = kept(
        memo,
        fkey,
        pd.DataFrame,
        lambda: Q.scored_samples(con, q.benchmark, q.unit, split.split("+")),
    )
    if new and labels is not None:
        read = labels(new, frame, by_scores)
        vectors = {**vectors, **{r: read[r] for r in new}}
    elif new and by_scores:
        got_s = Q.score_matrix(con, new, q.unit, frame["ix"].to_numpy())
        vectors = {**vectors, **dict(zip(new, got_s, strict=True))}
    elif new:
        got = Q.label_matrix(con, new, q.unit, frame["ix"].to_numpy())
        vectors = {**vectors, **dict(zip(new, got, strict=True))}
    memo[vkey] = vectors
    if not run_ids:
        return frame, np.empty((0, len(frame)), dtype=float if by_scores else np.int8)
    return frame, np.stack([vectors[r] for r in run_ids])


def _candidates(
    runs: pd.DataFrame, metric: str, version: str | None
) -> tuple[np.ndarray, str] | None:
    """The runs the paired test may compare: complete runs on this benchmark version, on the
    most common split (ties: the first by name), the PAIRED_TOP best of them (positions into
    runs, in order) and that split; None when fewer than two runs are complete."""
    ok = (runs["version"] == version) & (runs["missing"] == 0) & (runs["unparsable"] == 0)
    ok_pos = np.flatnonzero(ok.to_numpy())
    if len(ok_pos) < 2:
        return None
    splits = runs["split"].to_numpy(dtype=object)[ok_pos]
    codes, names = pd.factorize(pd.Series(splits, dtype=object).astype(str))
    counts = np.bincount(codes[codes >= 0], minlength=len(names))  # (no split: not counted)
    by_count = zip(names.tolist(), counts.tolist(), strict=True)
    split = min(by_count, key=lambda kv: (-kv[1], kv[0]))[0]  # the most common, then by name
    ok_pos = ok_pos[(runs["split"].iloc[ok_pos] == split).to_numpy()]
    sign = -1.0 if lower_is_better(metric) else 1.0
    best = np.argsort(-sign * runs["value"].to_numpy(float)[ok_pos], kind="stable")
    return np.sort(ok_pos[best[:PAIRED_TOP]]), str(split)


def _slice_masks(spec: BenchmarkSpec, frame: pd.DataFrame, kind: str) -> dict[str, np.ndarray]:
    """Every value's sample mask for one slice kind (evaluator.core.scoring.slice_masks)."""
    if kind == "overall":
        return {"": np.ones(len(frame), dtype=bool)}
    try:
        masks = slice_masks(spec, frame, kinds=[kind])
    except Exception:  # an unknown slice field: no paired ranking, CI fallback
        return {}
    return {v: m for k, v, m in masks if k == kind}
