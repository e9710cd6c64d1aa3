"""The leaderboard of one view (`build_board`): FactBoard runs (explorer.board_rows) and
published numbers (explorer.published) for one benchmark slice, every other metric of the
slice as extra columns, the rank (tie groups, explorer.ranking; the best complete runs by a
paired bootstrap, explorer.paired, the others by CI overlap; published numbers placed by
value), the difference to the leader with its paired CI and p, the pairwise matrix of the
best runs, and notes that say when rows are not comparable (different domain coverage,
different split).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.formatting import plural
from evaluator.core.vocabulary import (
    ORIGIN_BADGES,
    kind_label,
    lower_is_better,
)
from explorer import queries as Q
from explorer import ranking as R
from explorer import scope_notes
from explorer.board_rows import params_to_float, row_labels, run_rows
from explorer.board_types import Board, BoardQuery, LabelReader
from explorer.paired import PAIRED_TOP, PairedRuns, paired_test
from explorer.published import fold_published, report_key, reported_rows, row_key
from explorer.queries.results import OtherValues

PAIRWISE_TOP = 10  # runs in the pairwise significance matrix
# the columns of the ranked runs that the paired test reads (explorer.paired.paired_test)
PAIRED_COLUMNS = ("run_id", "version", "missing", "unparsable", "split", "value")


def _with_published(runs: pd.DataFrame, pub: pd.DataFrame) -> pd.DataFrame:
    """The runs' rows, then the published rows. Without published rows the runs' text columns
    keep their text type (a concatenation with an empty frame makes them objects: a Python
    string per cell, to copy, and at 10,000 runs some 6 ms a view), and the published rows'
    own columns are added empty, of their type."""
    if len(pub) or not len(runs):
        return pd.concat([runs, pub], ignore_index=True)
    rows = runs.reset_index(drop=True)
    for c in pub.columns.difference(rows.columns, sort=False):
        rows[c] = pd.Series(index=rows.index, dtype=pub[c].dtype)
    return rows


def _other_metrics(
    values: OtherValues | None,
    rep: pd.DataFrame,
    q: BoardQuery,
    rows: pd.DataFrame,
    unread: Sequence[str] = (),
) -> tuple[pd.DataFrame, list[str]]:
    """Every other metric of the same slice as extra columns (value only). values: the runs'
    other ungraded metrics (BoardSlice.others, explorer.queries.results), None without runs.
    unread: other metrics the runs have whose values were not read (with_other_values reads
    them): each a column, its runs' cells missing until then."""
    if q.grader is not None:
        return rows, []
    names_of = [] if values is None else values.metric.dictionary.to_pylist()
    metrics = sorted((set(names_of) | set(rep["metric"]) | set(unread)) - {q.metric})
    is_rep = (rows["origin_code"] == "reported").to_numpy()
    both = np.full((len(rows), len(metrics)), np.nan)
    if values is not None:
        _spread_run_values(values, metrics, rows, is_rep, both)
    if is_rep.any() and metrics:  # published rows by their key
        r = rep.assign(key=report_key(rep["model"], rep["source"], rep["note"]))
        rep_wide = r.drop_duplicates(["key", "metric"]).pivot(
            index="key", columns="metric", values="value"
        )
        pub = rows[is_rep]
        keys = row_key(pub["model"], pub["source"], pub["config"])
        got = rep_wide.reindex(index=keys.to_numpy(), columns=metrics)
        both[is_rep] = got.to_numpy(dtype=float, na_value=np.nan)
    names = []
    extra = {}
    for j, m in enumerate(metrics):
        vals = both[:, j]
        if m in unread or not np.isnan(vals).all():
            extra[f"m:{m}"] = vals
            names.append(f"m:{m}")
    if extra:
        rows = pd.concat([rows, pd.DataFrame(extra, index=rows.index)], axis=1)
    return rows, names


def _spread_run_values(
    values: OtherValues,
    metrics: Sequence[str],
    rows: pd.DataFrame,
    is_rep: np.ndarray,
    out: np.ndarray,
) -> None:
    """The runs' values of `metrics` written into out (rows x metrics) at the runs' rows (not
    the published ones, is_rep), the first value of a (run, metric) kept."""
    if not len(values.value) or not len(metrics):
        return
    # the runs' values in one (runs, metrics) array; then one lookup of the rows' run ids
    # (Arrow's: no Python text per row)
    names_of = values.metric.dictionary.to_pylist()
    in_metrics = np.array([metrics.index(m) if m in metrics else -1 for m in names_of])
    m_at = in_metrics[values.metric.indices.to_numpy(zero_copy_only=False)]
    ids = pc.unique(values.run_id)
    r_at = pc.index_in(values.run_id, value_set=ids).to_numpy(zero_copy_only=False)
    ok = m_at >= 0
    cell = r_at[ok] * len(metrics) + m_at[ok]
    _, first = np.unique(cell, return_index=True)
    wide = np.full((len(ids), len(metrics)), np.nan)
    wide[r_at[ok][first], m_at[ok][first]] = values.value[ok][first]
    row_ids = pa.array(rows["run_id"].to_numpy(dtype=object), pa.string(), from_pandas=True)
    at = pc.index_in(row_ids, value_set=ids).fill_null(-1).to_numpy(zero_copy_only=False)
    have = (at >= 0) & ~is_rep
    out[have] = wide[at[have]]


def with_other_values(con: Q.Con, q: BoardQuery, rows: pd.DataFrame) -> pd.DataFrame:
    """A board's rows (built with its runs' other metrics unread: build_board's
    `run_metrics`) with the runs' values of those metrics read into their columns."""
    cols = [c for c in rows.columns if c.startswith("m:")]
    if q.grader is not None or not cols or not len(rows):
        return rows
    values = Q.slice_other_values(con, q.benchmark, q.unit, q.slice_kind, q.slice_value, q.metric)
    is_rep = (rows["origin_code"] == "reported").to_numpy()
    both = rows[cols].to_numpy(dtype=float, na_value=np.nan, copy=True)
    _spread_run_values(values, [c[2:] for c in cols], rows, is_rep, both)
    out = rows.copy(deep=False)
    for j, c in enumerate(cols):
        out[c] = both[:, j]
    return out


def build_board(
    con: Q.Con,
    q: BoardQuery,
    spec: BenchmarkSpec | None,
    version: str | None,
    resamples: int = 1000,
    seed: int = 0,
    memo: MutableMapping[object, object] | None = None,
    ensure: Callable[[list[str]], None] | None = None,
    labels: LabelReader | None = None,
    run_metrics: Sequence[str] | None = None,
) -> Board:
    """The board for one view. memo: a dict that may keep per-sample label matrices and the
    runs' own columns between calls (the caller clears it when a run or the samples change;
    a new run needs no clearing). run_metrics: the other ungraded metrics the view's runs
    have (from the view's dimensions): each is a column whose runs' values are not read here
    (with_other_values reads them when one is shown); None: they are read with the view's
    numbers. ensure(run_ids): loads the
    per-sample labels of these runs (explorer.store.Store.ensure_labels); only the
    PAIRED_TOP best complete runs are compared by the paired test, the others by their CIs
    (read from run.json), so a board never loads every run's predictions. labels(run_ids,
    frame, scores): these runs' final labels (or their scores) on the frame's samples, read in
    place (explorer.store.Store.label_vectors); without it they are loaded with ensure and
    read from the labels table."""
    memo = memo if memo is not None else {}
    rep = Q.reported_results(con, q.benchmark, q.unit, q.slice_kind, q.slice_value)
    declared = list(spec.domains) if spec is not None else []
    view = Q.board_slice(
        con,
        q.benchmark,
        q.unit,
        q.slice_kind,
        q.slice_value,
        q.metric,
        q.grader,
        others=run_metrics is None,
    )
    runs = run_rows(con, q, declared, memo, view.results)
    rows = _with_published(runs, reported_rows(rep, q, declared))
    values = view.others if len(runs) and run_metrics is None else None
    unread = run_metrics if len(runs) and run_metrics is not None else ()
    rows, others = _other_metrics(values, rep, q, rows, unread)
    rows = fold_published(rows)
    # the runs' kind, origin and size come with their fields (run_fields); the published
    # rows' here, after folding (a folded row takes the canonical model name)
    pub = np.flatnonzero((rows["origin_code"] == "reported").to_numpy())
    if len(pub):
        sub = rows.iloc[pub]
        at = rows.index[pub]
        sizes = [params_to_float(p, m) for p, m in zip(sub["params"], sub["model"], strict=True)]
        rows.loc[at, "kind"] = sub["kind_code"].map(kind_label).to_numpy()
        badge = sub["origin_code"].map(lambda o: ORIGIN_BADGES.get(o, o))
        rows.loc[at, "origin"] = badge.to_numpy()
        rows.loc[at, "params_value"] = [np.nan if s is None else s for s, _ in sizes]
        rows.loc[at, "params_from"] = [w for _, w in sizes]
        for c in ("kind", "origin", "params_from"):  # text columns, as the runs' are
            rows[c] = rows[c].to_numpy(dtype=object)
    rows["params_value"] = rows["params_value"].astype(float)
    rows["paired"] = False
    rows["label"] = row_labels(rows)
    # no rank yet: every cell missing (an Int64 array made from its mask, not from a list)
    rows["rank"] = pd.arrays.IntegerArray(
        np.zeros(len(rows), dtype=np.int64), np.ones(len(rows), dtype=bool)
    )
    for c in ("delta", "delta_low", "delta_high", "delta_p"):
        rows[c] = np.nan
    board = Board(rows=rows, other_metrics=others)
    _rank(con, board, q, spec, version, resamples, seed, memo, ensure, labels)
    board.notes = _notes(rows, q, declared)
    board.rows = rows.take(_order(rows, lower_is_better(q.metric))).reset_index(drop=True)
    return board


def _order(rows: pd.DataFrame, lower: bool) -> np.ndarray:
    """The rows' positions best first: by value (missing last), then by model name, ties in
    their order (rows.sort_values(["value", "model"], ...) as a stable sort), by Arrow's
    stable sort of the two columns (pandas orders the names through Python's comparisons)."""
    value = rows["value"].to_numpy(dtype=float)
    try:
        model = pa.array(rows["model"].to_numpy(dtype=object), type=pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a name that is not text
        got = rows.sort_values(
            ["value", "model"], ascending=[lower, True], na_position="last", kind="mergesort"
        )
        return rows.index.get_indexer(got.index)
    # missing values and names as flags before them (last), so that no key holds a null
    no_value = np.isnan(value)
    no_model = model.is_null()
    keys = pa.table(
        {
            "no_value": no_value,
            "value": np.where(no_value, 0.0, value),
            "no_model": no_model,
            "model": model.fill_null(""),
        }
    )
    up, down = "ascending", "descending"
    order = pc.sort_indices(
        keys, [("no_value", up), ("value", up if lower else down), ("no_model", up), ("model", up)]
    )
    return np.asarray(order.to_numpy(), dtype=np.intp)


def _rank(
    con: Q.Con,
    board: Board,
    q: BoardQuery,
    spec: BenchmarkSpec | None,
    version: str | None,
    resamples: int,
    seed: int,
    memo: MutableMapping[object, object],
    ensure: Callable[[list[str]], None] | None = None,
    labels: LabelReader | None = None,
) -> None:
    rows = board.rows
    is_run = (rows["origin_code"] != "reported").to_numpy()
    value = rows["value"].to_numpy(float)
    idx = np.flatnonzero(is_run & ~np.isnan(value))
    lower = lower_is_better(q.metric)
    if len(idx) == 0:
        _rank_by_value(board, lower)
        return
    vals = value[idx]
    lo = rows["ci_low"].to_numpy(float)[idx]
    hi = rows["ci_high"].to_numpy(float)[idx]
    # the paired test reads these columns of the ranked runs (not the whole board's)
    narrow = rows[list(PAIRED_COLUMNS)].iloc[idx]
    test = paired_test(con, narrow, q, spec, version, resamples, seed, memo, ensure, labels)
    paired = test.runs
    rk = R.rank_array(
        vals,
        lo,
        hi,
        lower,
        None if paired is None else paired.at,
        None if paired is None else paired.point,
        None if paired is None else paired.p_values,
    )
    rank = np.zeros(len(rows), dtype=np.int64)
    rank[idx] = rk
    unranked = np.ones(len(rows), dtype=bool)
    unranked[idx] = False
    rows["rank"] = pd.arrays.IntegerArray(rank, unranked)
    sign = -1.0 if lower else 1.0
    lead = int(np.argmax(sign * vals))
    # every row's difference to the best run (a published number above it reads positive)
    rows["delta"] = value - vals[lead]
    if paired is not None and len(paired.at):
        on = np.zeros(len(rows), dtype=bool)
        on[idx[paired.at]] = True
        rows["paired"] = on
        board.paired_runs = rows["run_id"].to_numpy(dtype=object)[idx[paired.at]].tolist()
        _leader_and_pairs(board, idx[paired.at], idx[lead], paired, sign)
    n_paired = len(board.paired_runs)
    n_ci = len(idx) - n_paired
    parts = [
        "Rank = 1 + the number of runs significantly better (95%); runs that share a rank "
        "are not distinguishable."
    ]
    if n_paired:
        parts.append(
            f"{n_paired} runs with complete per-sample predictions on the same samples "
            f"(the best {PAIRED_TOP} at most) are compared by a paired bootstrap "
            f"({resamples:,} shared resamples)."
        )
    if n_ci:
        parts.append(
            f"{plural(n_ci, 'run')} compared by CI non-overlap"
            + (f" ({test.why})." if test.why else ".")
        )
    if (~is_run).any():
        parts.append(PUBLISHED_ORDER)
    board.method = " ".join(parts)


PUBLISHED_ORDER = (
    "Published numbers carry no CI here: they are not ranked, only placed by value, and "
    "their order is not significance."
)


def _rank_by_value(board: Board, lower: bool) -> None:
    """A view with published numbers only: each row's place by value (equal numbers share
    it; `value_rank`) and its difference to the top number; the method says that this is not
    a significance rank."""
    rows = board.rows
    v = rows["value"].astype(float)
    have = v.notna().to_numpy()
    if not have.any():
        board.method = "No number in this view."
        return
    place = v.rank(method="min", ascending=lower)
    # beside the significance rank, which stays empty (what the front page and the exports
    # read as "not ranked"): the table shows this one, titled as a rank by value
    rows["value_rank"] = pd.array([int(x) if x == x else pd.NA for x in place], dtype="Int64")
    top = float(v.min() if lower else v.max())
    rows["delta"] = v - top
    board.rank_by = "value"
    board.method = (
        "Rank by value: these published numbers carry no CI here, so their order is by "
        "value alone, not significance (close numbers may not differ)."
    )


def _leader_and_pairs(
    board: Board,
    at: np.ndarray,
    leader_at: int,
    paired: PairedRuns,
    sign: float,
) -> None:
    """The paired difference to the leader (its 95% percentile CI and p) for the paired runs,
    when the leader is one of them, and the p-value matrix of the best paired runs."""
    rows = board.rows
    point, pvals, boot = paired.point, paired.p_values, paired.boot
    where = np.flatnonzero(at == leader_at)
    if len(where):
        li = int(where[0])
        d = boot - boot[:, [li]]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = np.nanpercentile(d, [2.5, 97.5], axis=0)
        for col, got in (("delta_low", lo), ("delta_high", hi), ("delta_p", pvals[li])):
            cells = rows[col].to_numpy(dtype=float, copy=True)
            cells[at] = got
            cells[leader_at] = np.nan
            rows[col] = cells
    top = np.argsort(-sign * point, kind="stable")[:PAIRWISE_TOP]
    ids = rows.loc[at[top], "run_id"].astype(str).tolist()
    board.pairwise = pd.DataFrame(pvals[np.ix_(top, top)], index=ids, columns=ids)
    board.pairwise_values = dict(zip(ids, point[top].tolist(), strict=True))


def _who_has(keys: pd.Series, is_rep: np.ndarray) -> dict[Any, set[str]]:
    """Each value of keys (in order of first sight) with who has it: "published numbers",
    "FactBoard runs" or both."""
    codes, uniques = pd.factorize(keys, use_na_sentinel=False)
    has = np.zeros((2, len(uniques)), dtype=bool)
    has[0, codes[is_rep]] = True
    has[1, codes[~is_rep]] = True
    who = ("published numbers", "FactBoard runs")
    return {
        k: {w for w, h in zip(who, has[:, i].tolist(), strict=True) if h}
        for i, k in enumerate(uniques.tolist())
    }


def _notes(rows: pd.DataFrame, q: BoardQuery, declared: Sequence[str]) -> list[str]:
    notes = []
    is_rep = (rows["origin_code"] == "reported").to_numpy()
    if q.slice_kind == "overall" and declared:
        sets = {c: w for c, w in _who_has(rows["coverage_set"], is_rep).items() if c}
        if len(sets) > 1:
            parts = []
            for cov, who_set in sorted(sets.items(), key=lambda kv: -len(kv[0])):
                doms = cov.split(";")
                missing = [d for d in declared if d not in doms]
                what = f"{len(doms)} of {len(declared)} domains"
                if missing:
                    what += f" (without {', '.join(missing)})"
                parts.append(f"{' and '.join(sorted(who_set))} cover {what}")
            notes.append(
                "Rows average over different domains: "
                + "; ".join(parts)
                + ". An Overall over fewer domains is not directly comparable."
            )
    # (a published table's row may leave its split empty: a number on no named split)
    splits = _who_has(rows["split"].astype(object).where(rows["split"].notna(), ""), is_rep)
    if len(splits) > 1:
        desc = "; ".join(
            f"{' and '.join(sorted(w))} " + (f"on split '{sp}'" if sp else "on no named split")
            for sp, w in sorted(splits.items(), key=lambda kv: str(kv[0]))
        )
        notes.append(
            f"Rows come from different splits: {desc}. ('all' means the paper scored "
            "every row, before the dev/test split existed.)"
        )
    if rows["config"].str.contains("suspect=yes", regex=False).any():
        notes.append(
            "Rows flagged ⚠ suspect in the Check column are printed that way in the paper "
            "but contradict the paper's own other numbers; hover the flag for the reason."
        )
    population = scope_notes.published_population(q.benchmark, rows["origin_code"], q.slice_kind)
    if population:
        notes.append(population)
    return notes
