"""Point values of many runs on one benchmark in one array pass: what `Prepared.score` gives
each of them with `point_only`, for the runs whose final labels follow from their file alone. A
replica checks every pulled run's numbers (evaluator.verify), and a shard holds thousands of
runs.

A run is taken here only when nothing about it needs more than this: a benchmark of a label
task; a prediction file with a unique, known sample_id per row, labels 0, 1 or none and finite
scores or none; no grades; one unit that rolls up to nothing; final labels that are the labels
as given ("auto" with labels, "labels") or the scores at a threshold the run does not tune (a
"fixed" threshold, or the benchmark's protocol threshold on probabilities). Anything else, or
any row the scorer would refuse, gives None: that run is scored by `Prepared.score`, which says
what is wrong in its own words. What is taken is computed as the scorer computes it: the same
slices (`Prepared.masks`), the same plan of (slice, metric) (`slice_metrics.plan`), the
formulas of `metrics.FROM_CONFUSION` on integer counts for the runs that score the same samples
together, the overall mean over domains where the benchmark averages so, AUROC by the scorer's
own `slice_metrics.roc_auc_results` where every scored sample has a score, and only finite
values reported.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evaluator.core import metrics as M
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import Prepared, ScoreOptions, _splits, slice_context
from evaluator.core.slice_metrics import SliceContext, detection_metrics, plan, roc_auc_results
from evaluator.core.types import Counts

Key = tuple[str, str, str, str, str, str]  # split, unit, slice kind, slice value, metric, grader


@dataclass(frozen=True)
class PointScored:
    """A run's counts and its point values: key -> (value, n)."""

    counts: Counts
    values: dict[Key, tuple[float, int]]


@dataclass(frozen=True)
class _Joined:
    has_pred: np.ndarray  # bool over the samples
    label: np.ndarray  # float over the samples: 0, 1, NaN (no usable label)
    score: np.ndarray  # float over the samples, NaN where none


def _int_like(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_floating(t)


def _numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


_IDS: weakref.WeakKeyDictionary[Prepared, pa.Array] = weakref.WeakKeyDictionary()


def _ids(prepared: Prepared) -> pa.Array:
    """The prepared samples' ids as an Arrow array (a lookup set for the runs' ids)."""
    got = _IDS.get(prepared)
    if got is None:
        got = _IDS[prepared] = pa.array(prepared.index.astype(str), pa.string())
    return got


def _column(table: pa.Table, name: str, n: int) -> np.ndarray:
    if name not in table.column_names:
        return np.full(n, np.nan)
    return table[name].to_numpy(zero_copy_only=False).astype(np.float64)


def _join(prepared: Prepared, table: pa.Table) -> _Joined | None:
    """A prediction table joined to the samples; None where the scorer's own path must see it
    (an odd type, a repeated or unknown id, a label other than 0 or 1, a score not finite)."""
    names = table.column_names
    if "sample_id" not in names or not len(table):
        return None
    ids = table["sample_id"]
    if not pa.types.is_string(ids.type) and not pa.types.is_large_string(ids.type):
        return None
    if ids.null_count:
        return None
    if "label" in names and not _int_like(table["label"].type):
        return None
    if "score" in names and not (
        _numeric(table["score"].type) or table["score"].null_count == len(table)
    ):
        return None
    found = pc.index_in(ids, value_set=_ids(prepared))
    if found.null_count:
        return None
    pos = found.to_numpy()
    if len(np.unique(pos)) != len(pos):
        return None
    x = _column(table, "label", len(table))
    given = ~np.isnan(x)
    if ((x[given] != 0) & (x[given] != 1)).any():
        return None
    sc = _column(table, "score", len(table))
    if np.isinf(sc).any():
        return None
    n = len(prepared.samples)
    has_pred = np.zeros(n, dtype=bool)
    has_pred[pos] = True
    label, score = np.full(n, np.nan), np.full(n, np.nan)
    label[pos], score[pos] = x, sc
    return _Joined(has_pred, label, score)


def _at(score: np.ndarray, t: float) -> np.ndarray:
    """`scoring.labels_from_threshold` of a fixed threshold: score >= t is consistent."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(score), np.nan, (score >= t).astype(np.float64))


def _final(
    prepared: Prepared, label: np.ndarray, score: np.ndarray, options: ScoreOptions
) -> np.ndarray | None:
    """The final labels of the scored rows as `scoring.resolve_labels` makes them (NaN: none),
    or None where it tunes a threshold or refuses."""
    spec = prepared._spec()
    has_label = bool((~np.isnan(label)).any())
    scored = score[~np.isnan(score)]
    policy = options.policy
    if policy == "auto":
        if has_label:
            policy = "labels"
        elif len(scored) and spec.fixed_threshold is not None:
            if scored.min() < 0.0 or scored.max() > 1.0:
                return None
            return _at(score, float(spec.fixed_threshold))
        else:
            return None
    if policy == "labels":
        return label if has_label else None
    if policy == "fixed" and len(scored) and options.threshold is not None:
        return _at(score, float(options.threshold))
    return None


@dataclass(frozen=True)
class _Scope:
    rows: np.ndarray  # the samples scored (a usable final label in scope)
    split: str
    unit: str
    counts: Counts
    labels: np.ndarray  # their final labels
    scores: np.ndarray | None  # their scores, where each has one (AUROC)


def _scope(prepared: Prepared, j: _Joined, options: ScoreOptions) -> _Scope | None:
    """What `Prepared.score` scores of a joined run, or None where it takes another path."""
    spec = prepared._spec()
    if options.labels_given or not options.point_only:
        return None
    try:
        splits = _splits(spec, options)
    except FactBoardError:
        return None
    units = np.unique(prepared.unit[j.has_pred])
    if len(units) != 1:
        return None
    unit = str(units[0])
    if unit == "sentence" and "summary" in spec.units:
        return None  # sentence labels roll up to summaries: the scorer's own path
    scope = np.flatnonzero((prepared.unit == unit) & np.isin(prepared.split, splits))
    scored = scope[j.has_pred[scope]]
    final = None if not len(scored) else _final(prepared, j.label[scored], j.score[scored], options)
    if final is None:
        return None
    usable = ~np.isnan(final)
    if not usable.any():
        return None
    unparsable = int((~usable).sum())
    counts = Counts(
        n=len(scope),
        predicted=len(scored) - unparsable,
        missing=len(scope) - len(scored),
        unparsable=unparsable,
    )
    rows = scored[usable]
    scores = j.score[rows]
    auroc = not np.isnan(scores).any()
    return _Scope(rows, "+".join(splits), unit, counts, final[usable], scores if auroc else None)


def score_labels(
    prepared: Prepared, tables: Sequence[pa.Table], options: Sequence[ScoreOptions]
) -> list[PointScored | None]:
    """For each prediction table (with the options its run was scored with), its point values
    as `prepared.score(..., point_only)` gives them, or None: that run needs the scorer's own
    path. Runs that score the same samples are computed together."""
    spec = prepared.spec
    out: list[PointScored | None] = [None] * len(tables)
    if spec is None or spec.task not in ("detection", "detection+explanation"):
        return out
    cols = prepared.samples.columns
    if "label" not in cols or "domain" not in cols:
        return out
    truth = prepared.samples["label"].to_numpy(dtype=np.float64, na_value=np.nan)
    domain = prepared.samples["domain"].fillna("").astype(str).to_numpy()
    groups: dict[tuple[bytes, str, str], list[tuple[int, _Scope, ScoreOptions]]] = {}
    for i, (table, opts) in enumerate(zip(tables, options, strict=True)):
        j = _join(prepared, table)
        s = None if j is None else _scope(prepared, j, opts)
        if s is None or np.isnan(truth[s.rows]).any():
            continue
        groups.setdefault((s.rows.tobytes(), s.split, s.unit), []).append((i, s, opts))
    for members in groups.values():
        first = members[0][1]
        rows = first.rows
        y, doms = truth[rows].astype(int), domain[rows]
        masks = prepared.masks(rows)
        labels = np.stack([s.labels for _, s, _ in members])
        ctx = slice_context(spec, first.split, first.unit, doms, ScoreOptions(point_only=True))
        values = _group_values(prepared, masks, y, labels, doms, ctx)
        for (i, s, opts), v in zip(members, values, strict=True):
            if s.scores is not None:  # AUROC: the scorer's own function, run by run
                run_ctx = slice_context(spec, s.split, s.unit, doms, opts)
                for r in roc_auc_results(y, s.scores, masks, doms, run_ctx):
                    if r.value is not None:
                        v[(r.slice_kind, r.slice_value, r.metric)] = (r.value, r.n)
            out[i] = PointScored(
                s.counts, {(s.split, s.unit, *k[:3], ""): val for k, val in v.items()}
            )
    return out


def _group_values(
    prepared: Prepared,
    masks: list[tuple[str, str, np.ndarray]],
    y: np.ndarray,
    labels: np.ndarray,
    domains: np.ndarray,
    ctx: SliceContext,
) -> list[dict[tuple[str, str, str], tuple[float, int]]]:
    """The label metrics' point values of the runs whose final labels are the rows of `labels`
    (over samples whose true labels are `y`): (kind, value, metric) -> (value, n)."""
    spec = prepared._spec()
    present = ctx.present
    planned = plan(detection_metrics(spec, y, y, {}), masks, domains, ctx)
    # every mask a value needs, once: the slice's, or each domain's part of it
    needed: dict[bytes, int] = {}
    stack: list[np.ndarray] = []

    def column(m: np.ndarray) -> int:
        k = m.tobytes()
        if k not in needed:
            needed[k] = len(stack)
            stack.append(m)
        return needed[k]

    where: list[list[int]] = []
    for _, _, d, m, mean_dom in planned:
        if d.confusion is None:
            raise ValueError(f"label metric {d.name} has no confusion formula")
        parts = [m & (domains == dm) for dm in present] if mean_dom else [m]
        where.append([column(p) for p in parts])
    if not stack:
        return [{} for _ in labels]
    masks_m = np.stack(stack, axis=1)  # samples x masks
    pos = masks_m & (y == 0)[:, None]
    neg = masks_m & (y == 1)[:, None]
    flag = (labels == 0).astype(np.float64)  # runs x samples: flagged inconsistent
    tp, fp = flag @ pos.astype(np.float64), flag @ neg.astype(np.float64)
    fn, tn = pos.sum(axis=0) - tp, neg.sum(axis=0) - fp
    cols = []
    for (_, _, d, _, mean_dom), ks in zip(planned, where, strict=True):
        f = M.FROM_CONFUSION[d.confusion or ""]
        per = [f(tp[:, k], fn[:, k], fp[:, k], tn[:, k]) for k in ks]
        cols.append(np.mean(np.stack(per, axis=1), axis=1) if mean_dom else per[0])
    point = np.stack(cols, axis=1)  # runs x planned
    ns = [int(d.rows(m).sum()) for _, _, d, m, _ in planned]
    keys = [(kind, value, d.name) for kind, value, d, _, _ in planned]
    return [
        {keys[c]: (float(point[r, c]), ns[c]) for c in range(len(keys)) if np.isfinite(point[r, c])}
        for r in range(len(labels))
    ]
