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

The per-run work is array work too: the files of a call are joined to the samples together (one
lookup of all their sample ids; each file's repeated or unknown ids, labels and scores found
over its rows at once), in blocks of at most `_CELLS` samples x files, and the runs with the
same splits, unit and threshold settings get their scope, final labels and counts together.
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
    """A block of prediction tables joined to the samples, one row per table."""

    ok: np.ndarray  # bool per table: joined (False: the scorer's own path must see it)
    has_pred: np.ndarray  # bool, tables x samples
    label: np.ndarray  # float, tables x samples: 0, 1, NaN (no usable label)
    score: np.ndarray  # float, tables x samples, NaN where none


# samples x tables held at once as dense arrays: the tables of a call are joined in blocks
_CELLS = 1 << 21


def _int_like(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_floating(t)


def _numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t)


@dataclass(frozen=True)
class _Lookup:
    ids: pa.Array  # the samples' ids as strings: the lookup set for the runs' ids
    unit_code: np.ndarray  # each sample's unit, as a position in `units` (past them: none)
    units: np.ndarray


_LOOKUPS: weakref.WeakKeyDictionary[Prepared, _Lookup] = weakref.WeakKeyDictionary()


def _lookup(prepared: Prepared) -> _Lookup:
    got = _LOOKUPS.get(prepared)
    if got is None:
        import pandas as pd

        code, units = pd.factorize(prepared.unit)  # a sample without a unit: -1
        code = np.where(code < 0, len(units), code)  # ... a code past the units
        ids = pa.array(prepared.index.astype(str), pa.string())
        got = _LOOKUPS[prepared] = _Lookup(ids, code, np.asarray(units))
    return got


_Columns = tuple[pa.ChunkedArray, pa.ChunkedArray | None, pa.ChunkedArray | None]


def _columns(table: pa.Table) -> _Columns | None:
    """The table's sample_id, label and score columns (None where it has no such column), or
    None where they are not of the types the array pass reads (the scorer's own path)."""
    if not table.num_rows:
        return None
    schema = table.schema
    cols: list[pa.ChunkedArray | None] = []
    for name in ("sample_id", "label", "score"):
        i = schema.get_field_index(name)
        if i < 0 and schema.get_all_field_indices(name):
            return None  # a column name given twice
        cols.append(None if i < 0 else table.column(i))
    ids, label, score = cols
    if ids is None or ids.null_count:
        return None
    if not pa.types.is_string(ids.type) and not pa.types.is_large_string(ids.type):
        return None
    if label is not None and not _int_like(label.type):
        return None
    if score is not None and not (_numeric(score.type) or score.null_count == table.num_rows):
        return None
    return ids, label, score


def _spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions start .. start + length - 1 of each span, one after the other."""
    ends = np.cumsum(lengths)
    return np.arange(ends[-1] if len(ends) else 0) + np.repeat(starts - (ends - lengths), lengths)


def _gather(cols: Sequence[pa.ChunkedArray | None], lengths: np.ndarray) -> np.ndarray:
    """A column of the tables, one after the other, as floats (NaN: null, or no such column in
    that table); the tables that have it in one type are converted together."""
    out = np.full(int(lengths.sum()), np.nan)
    by_type: dict[pa.DataType, list[tuple[int, pa.ChunkedArray]]] = {}
    for k, c in enumerate(cols):
        if c is not None:
            by_type.setdefault(c.type, []).append((k, c))
    starts = np.cumsum(lengths) - lengths
    for typ, got in by_type.items():
        chunks = [chunk for _, c in got for chunk in c.chunks]
        values = pa.chunked_array(chunks, typ).to_numpy(zero_copy_only=False).astype(np.float64)
        if len(got) == len(cols):
            out = values
        else:
            at = np.array([k for k, _ in got])
            out[_spans(starts[at], lengths[at])] = values
    return out


def _join(prepared: Prepared, tables: Sequence[pa.Table]) -> _Joined:
    """The prediction tables joined to the samples, all of them in one pass; a table is not
    joined where the scorer's own path must see it (an odd type, a repeated or unknown id, a
    label other than 0 or 1, a score not finite)."""
    n = len(prepared.samples)
    ok = np.zeros(len(tables), dtype=bool)
    has_pred = np.zeros((len(tables), n), dtype=bool)
    label, score = np.full((len(tables), n), np.nan), np.full((len(tables), n), np.nan)
    read = [(i, c) for i, c in enumerate(map(_columns, tables)) if c is not None]
    if not read or not n:
        return _Joined(ok, has_pred, label, score)
    take = np.array([i for i, _ in read])
    lengths = np.array([len(c[0]) for _, c in read], dtype=np.int64)
    ids = [c[0] if pa.types.is_string(c[0].type) else c[0].cast(pa.string()) for _, c in read]
    found = pc.index_in(
        pa.chunked_array([chunk for c in ids for chunk in c.chunks], pa.string()),
        value_set=_lookup(prepared).ids,
    )
    pos = found.fill_null(-1).to_numpy().astype(np.int64)
    x = _gather([c[1] for _, c in read], lengths)
    sc = _gather([c[2] for _, c in read], lengths)
    with np.errstate(invalid="ignore"):
        bad = (pos < 0) | (~np.isnan(x) & (x != 0) & (x != 1)) | np.isinf(sc)
    run = np.repeat(take, lengths)
    at = np.maximum(pos, 0)
    has_pred[run, at] = True
    label[run, at], score[run, at] = x, sc
    refused = np.bincount(np.repeat(np.arange(len(take)), lengths), bad, len(take)) > 0
    repeated = has_pred[take].sum(axis=1) != lengths
    ok[take] = ~refused & ~repeated
    return _Joined(ok, has_pred, label, score)


def _at(score: np.ndarray, t: float) -> np.ndarray:
    """`scoring.labels_from_threshold` of a fixed threshold: score >= t is consistent."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(score), np.nan, (score >= t).astype(np.float64))


def _final(
    prepared: Prepared, label: np.ndarray, score: np.ndarray, policy: str, threshold: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """The final labels of each run's rows (runs x samples; NaN where a sample is not scored
    or has none) as `scoring.resolve_labels` makes them, and which runs have them: not those
    whose final labels come from a tuned threshold, nor those the scorer refuses."""
    spec = prepared._spec()
    has_label = (~np.isnan(label)).any(axis=1)
    has_score = ~np.isnan(score)
    scored = has_score.any(axis=1)
    if policy == "auto":
        final, fine = label.copy(), has_label.copy()
        rest = ~has_label & scored
        if spec.fixed_threshold is not None and rest.any():
            lo = np.where(has_score, score, np.inf).min(axis=1)
            hi = np.where(has_score, score, -np.inf).max(axis=1)
            probabilities = rest & (lo >= 0.0) & (hi <= 1.0)
            final[probabilities] = _at(score[probabilities], float(spec.fixed_threshold))
            fine |= probabilities
        return final, fine
    if policy == "labels":
        return label, has_label
    if policy == "fixed" and threshold is not None:
        return _at(score, float(threshold)), scored
    return label, np.zeros(len(label), dtype=bool)


@dataclass(frozen=True)
class _Scope:
    rows: np.ndarray  # the samples scored (a usable final label in scope)
    split: str
    unit: str
    counts: Counts
    labels: np.ndarray  # their final labels
    scores: np.ndarray | None  # their scores, where each has one (AUROC)


def _scope(
    prepared: Prepared, j: _Joined, options: Sequence[ScoreOptions], truth: np.ndarray
) -> list[_Scope | None]:
    """What `Prepared.score` scores of each joined run, or None where it takes another path
    (or a scored sample has no true label)."""
    spec = prepared._spec()
    out: list[_Scope | None] = [None] * len(options)
    look = _lookup(prepared)
    code = np.where(j.has_pred, look.unit_code, len(look.units) + 1).min(axis=1)
    one_unit = (code == np.where(j.has_pred, look.unit_code, -1).max(axis=1)) & (
        code < len(look.units)
    )
    splits_of: dict[tuple[str, ...] | None, list[str] | None] = {}
    classes: dict[tuple[tuple[str, ...], str, str, float | None], list[int]] = {}
    for r in np.flatnonzero(j.ok & one_unit).tolist():
        opts = options[r]
        if opts.labels_given or not opts.point_only:
            continue
        if opts.splits not in splits_of:
            try:
                splits_of[opts.splits] = _splits(spec, opts)
            except FactBoardError:
                splits_of[opts.splits] = None
        splits = splits_of[opts.splits]
        unit = str(look.units[code[r]])
        if splits is None or (unit == "sentence" and "summary" in spec.units):
            continue  # sentence labels roll up to summaries: the scorer's own path
        key = (tuple(splits), unit, opts.policy, opts.threshold)
        classes.setdefault(key, []).append(r)
    for (chosen, unit, policy, threshold), members in classes.items():
        scope = np.flatnonzero((prepared.unit == unit) & np.isin(prepared.split, chosen))
        idx = np.ix_(np.asarray(members), scope)
        has, label, score = j.has_pred[idx], j.label[idx], j.score[idx]
        final, fine = _final(prepared, label, score, policy, threshold)
        usable = has & ~np.isnan(final)
        n_scored, n_usable = has.sum(axis=1), usable.sum(axis=1)
        fine &= (n_usable > 0) & ~(usable & np.isnan(truth[scope])).any(axis=1)
        auroc = ~(usable & np.isnan(score)).any(axis=1)
        for k in np.flatnonzero(fine).tolist():
            u, scored, used = usable[k], int(n_scored[k]), int(n_usable[k])
            counts = Counts(
                n=len(scope), predicted=used, missing=len(scope) - scored, unparsable=scored - used
            )
            scores = score[k, u] if auroc[k] else None
            out[members[k]] = _Scope(scope[u], "+".join(chosen), unit, counts, final[k, u], scores)
    return out


def score_labels(
    prepared: Prepared, tables: Sequence[pa.Table], options: Sequence[ScoreOptions]
) -> list[PointScored | None]:
    """For each prediction table (with the options its run was scored with), its point values
    as `prepared.score(..., point_only)` gives them, or None: that run needs the scorer's own
    path. Runs that score the same samples are computed together."""
    spec = prepared.spec
    out: list[PointScored | None] = [None] * len(tables)
    if len(tables) != len(options):
        raise ValueError("one set of options per table")
    if spec is None or spec.task not in ("detection", "detection+explanation"):
        return out
    cols = prepared.samples.columns
    if "label" not in cols or "domain" not in cols or not len(prepared.samples):
        return out
    truth = prepared.samples["label"].to_numpy(dtype=np.float64, na_value=np.nan)
    domain = prepared.samples["domain"].fillna("").astype(str).to_numpy()
    groups: dict[tuple[bytes, str, str], list[tuple[int, _Scope, ScoreOptions]]] = {}
    block = max(1, _CELLS // max(1, len(prepared.samples)))
    for b in range(0, len(tables), block):
        part = options[b : b + block]
        scopes = _scope(prepared, _join(prepared, tables[b : b + block]), part, truth)
        for i, (s, o) in enumerate(zip(scopes, part, strict=True), start=b):
            if s is not None:
                groups.setdefault((s.rows.tobytes(), s.split, s.unit), []).append((i, s, o))
    for members in groups.values():
        first = members[0][1]
        rows = first.rows
        y, doms = truth[rows].astype(int), domain[rows]
        masks = prepared.masks(rows)
        labels = np.stack([s.labels for _, s, _ in members])
        ctx = slice_context(spec, first.split, first.unit, doms, ScoreOptions(point_only=True))
        where = (first.split, first.unit)
        values = _group_values(prepared, masks, y, labels, doms, ctx, where)
        for (i, s, opts), v in zip(members, values, strict=True):
            if s.scores is not None:  # AUROC: the scorer's own function, run by run
                run_ctx = slice_context(spec, s.split, s.unit, doms, opts)
                for r in roc_auc_results(y, s.scores, masks, doms, run_ctx):
                    if r.value is not None:
                        v[(*where, r.slice_kind, r.slice_value, r.metric, "")] = (r.value, r.n)
            out[i] = PointScored(s.counts, v)
    return out


def _group_values(
    prepared: Prepared,
    masks: list[tuple[str, str, np.ndarray]],
    y: np.ndarray,
    labels: np.ndarray,
    domains: np.ndarray,
    ctx: SliceContext,
    where: tuple[str, str],
) -> list[dict[Key, tuple[float, int]]]:
    """The label metrics' point values of the runs whose final labels are the rows of `labels`
    (over samples whose true labels are `y`, of split and unit `where`): key -> (value, n)."""
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

    at: list[list[int]] = []
    for _, _, d, m, mean_dom in planned:
        if d.confusion is None:
            raise ValueError(f"label metric {d.name} has no confusion formula")
        parts = [m & (domains == dm) for dm in present] if mean_dom else [m]
        at.append([column(p) for p in parts])
    if not stack:
        return [{} for _ in labels]
    masks_m = np.stack(stack, axis=1)  # samples x masks
    pos = masks_m & (y == 0)[:, None]
    neg = masks_m & (y == 1)[:, None]
    flag = (labels == 0).astype(np.float64)  # runs x samples: flagged inconsistent
    tp, fp = flag @ pos.astype(np.float64), flag @ neg.astype(np.float64)
    fn, tn = pos.sum(axis=0) - tp, neg.sum(axis=0) - fp
    cols = []
    for (_, _, d, _, mean_dom), ks in zip(planned, at, strict=True):
        f = M.FROM_CONFUSION[d.confusion or ""]
        per = [f(tp[:, k], fn[:, k], fp[:, k], tn[:, k]) for k in ks]
        cols.append(np.mean(np.stack(per, axis=1), axis=1) if mean_dom else per[0])
    point = np.stack(cols, axis=1)  # runs x planned
    ns = [int(d.rows(m).sum()) for _, _, d, m, _ in planned]
    keys: list[Key] = [(*where, kind, value, d.name, "") for kind, value, d, _, _ in planned]
    finite = np.isfinite(point)
    every = finite.all(axis=1).tolist()
    out = []
    for values, fin, all_finite in zip(point.tolist(), finite.tolist(), every, strict=True):
        if all_finite:
            out.append(dict(zip(keys, zip(values, ns, strict=True), strict=True)))
        else:
            out.append({k: (v, c) for k, v, c, f in zip(keys, values, ns, fin, strict=True) if f})
    return out
