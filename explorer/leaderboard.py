"""The leaderboard table: FactBoard runs and published numbers for one benchmark slice.

`build_board` returns one row per run or published (model, source, configuration; the same
number of one model from two sources folded into one row), with the rank (tie groups, see
explorer.ranking), the metric with its 95% CI and n, the difference to the leader with its
paired CI and p, the coverage in words, and notes that say when rows are not comparable
(different domain coverage, different split). Per-slice numbers come from run.json (the runs
and results tables): per view one narrow query of the slice's numbers, joined to each run's
own columns, which are made once per run and kept (_run_fields). Per-sample labels are read
only for the PAIRED_TOP best complete runs, each run's once, which the paired bootstrap
compares (the others by CI overlap), and the PAIRWISE_TOP best of them make the pairwise
significance matrix.
The rest is what the page shows of a board: the picker options, the reader's filters and order
(`Look`, `filter_rows`), the notice when a view lacks the chosen metric, the table as shown and
downloaded, the link to the samples a run gets wrong, and the charts' data. Labels and metric
direction come from evaluator.core.vocabulary. Pure pandas/numpy over explorer.queries; the page
only reads widgets and renders (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core import formatting as F
from evaluator.core.formatting import plural
from evaluator.core.scoring import MEAN_OVER_DOMAINS, slice_masks
from evaluator.core.vocabulary import (
    MODEL_KIND_LABELS,
    ORIGIN_BADGES,
    ORIGIN_HELP,
    canonical_model,
    kind_label,
    label_metrics,
    lower_is_better,
    metric_definition,
    metric_label,
    metric_names,
    slice_definition,
    slice_label,
)
from evaluator.submissions import verification
from explorer import queries as Q
from explorer import ranking as R
from explorer import scope_notes

_CONFIG_PAIR = re.compile(r"^[a-z_]+=[^ ]")
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bBmM])(?![a-zA-Z])")


def split_note(note: str | None) -> tuple[str, str]:
    """A reported row's note -> (configuration 'key=value; ...', free text)."""
    if not note or not isinstance(note, str):
        return "", ""
    config: list[str] = []
    text: list[str] = []
    for part in note.split("; "):
        (config if _CONFIG_PAIR.match(part) and not text else text).append(part)
    return "; ".join(config), "; ".join(text)


def params_to_float(params: str | None, name: str | None = None) -> tuple[float | None, str]:
    """'7B' -> 7e9. Falls back to a size written in the model name ('Llama2-13b').
    Returns (count, where it came from: 'stated' / 'from name' / '')."""
    for text, where in ((params, "stated"), (name, "from name")):
        if not text or not isinstance(text, str):
            continue
        m = _SIZE.search(text)
        if m:
            scale = 1e9 if m.group(2).lower() == "b" else 1e6
            return float(m.group(1)) * scale, where
    return None, ""


def as_list(v: object) -> list[str] | None:
    """A list cell from DuckDB/pandas (list, ndarray, None, NA, NaN) as a list of str or None."""
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, str):
        return [c for c in v.split(";") if c]
    try:
        return [str(x) for x in v]  # type: ignore[attr-defined]
    except TypeError:
        return None


def coverage_text(
    cov: Sequence[str] | str | None, declared: Sequence[str], slice_kind: str, slice_value: str
) -> str:
    """What a number covers, in words: '8/10 domains (no billsum, shakespeare)'."""
    if slice_kind in ("domain", "dataset"):
        return slice_value
    covered = as_list(cov)
    if not covered:
        return ""
    if declared:
        missing = [d for d in declared if d not in covered]
        text = f"{len([c for c in covered if c in declared])}/{len(declared)} domains"
        return text + (f" (no {', '.join(missing)})" if missing else "")
    return f"{len(covered)} domains: {', '.join(covered)}"


@dataclass(frozen=True)
class BoardQuery:
    benchmark: str
    unit: str
    slice_kind: str = "overall"
    slice_value: str = ""
    metric: str = "balanced_accuracy"
    grader: str | None = None


@dataclass
class Board:
    rows: pd.DataFrame
    method: str = ""
    notes: list[str] = field(default_factory=list)
    paired_runs: list[str] = field(default_factory=list)
    other_metrics: list[str] = field(default_factory=list)
    # p-values of the paired test between the best paired runs (row/column: run_id), and
    # each one's point value; empty when fewer than two runs are paired
    pairwise: pd.DataFrame = field(default_factory=pd.DataFrame)
    pairwise_values: dict[str, float] = field(default_factory=dict)
    # "significance": runs ranked by significance (published rows unranked, placed by value);
    # "value": no run in the view, the published numbers ranked by value alone
    rank_by: str = "significance"


# labels(run_ids, frame) -> each run's final labels on the frame's samples (int8, -1: none)
LabelReader = Callable[[list[str], pd.DataFrame], dict[str, np.ndarray]]

PAIRWISE_TOP = 10  # runs in the pairwise significance matrix
# metrics of per-sample scores that the paired bootstrap compares (the label metrics are
# compared on the runs' final labels)
SCORE_METRICS: frozenset[str] = frozenset({"roc_auc"})
PAIRED_TOP = 20  # best runs compared by the paired test (their predictions are loaded)


BOARD_COLUMNS = [
    "rank",
    "model",
    "kind",
    "origin",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "coverage",
    "split",
    "config",
    "source",
    "note",
    "org",
    "params",
    "threshold",
    "run_id",
    "version",
    "created",
    "paired",
    "kind_code",
    "origin_code",
    "params_value",
    "params_from",
    "label",
    "verified",
    "verified_code",
]


def _threshold_text(policy: str | None, threshold: float | None) -> str:
    if policy in (None, "", "none"):
        return ""
    if policy == "labels":
        return "labels as given"
    if policy == "per-domain-dev":
        return "per-domain, tuned on dev"
    if threshold is None or (isinstance(threshold, float) and np.isnan(threshold)):
        return str(policy)
    where = "tuned on dev" if policy == "dev" else policy
    return f"{threshold:.4g} ({where})"


RUN_FIELDS_KEY = "board-run-fields"  # memo key (with the benchmark) of the runs' own columns


def _run_fields(
    con: Q.Con, benchmark: str, run_ids: Sequence[str], memo: dict[object, object]
) -> pd.DataFrame:
    """The board columns of each run that no slice changes (name, kind and origin with their
    labels, source, note, threshold in words, size, ...), one row per run id asked for, in
    that order. Made once per run and kept in `memo` per benchmark: a slice change computes
    them only for runs not seen yet. Valid because a run's fields change only when its
    run.json does, and the store then clears the memo (explorer.store.Store._refresh_runs);
    which runs are shown (hidden, superseded) is decided per slice by the query, not here."""
    key = (RUN_FIELDS_KEY, benchmark)
    have: pd.DataFrame | None = memo.get(key)  # type: ignore[assignment]
    ids = pd.unique(pd.Series(run_ids, dtype=object))
    new = list(ids) if have is None else list(ids[~pd.Index(ids).isin(have.index)])
    if new or have is None:
        made = _make_run_fields(Q.board_run_fields(con, new) if new else None)
        have = made if have is None or have.empty else pd.concat([have, made])
    memo[key] = have  # (again: the most recently used)
    return have.reindex(pd.Index(list(run_ids), dtype=object)).reset_index(drop=True)


def _make_run_fields(f: pd.DataFrame | None) -> pd.DataFrame:
    if f is None or f.empty:
        cols = ["model", "kind_code", "origin_code", "source", "note", "org", "params"]
        cols += ["threshold", "version", "created", "missing", "unparsable", "kind", "origin"]
        cols += ["verified", "verified_code"]
        empty = pd.DataFrame({c: pd.Series(dtype="str") for c in cols})
        empty["missing"] = empty["unparsable"] = pd.Series(dtype=int)
        empty["params_value"] = pd.Series(dtype=float)
        empty["params_from"] = pd.Series(dtype="str")
        return empty.set_axis(pd.Index([], dtype=object), axis=0)
    f = f.set_index(pd.Index(f["run_id"].to_numpy(), dtype=object))
    sizes = [params_to_float(p, m) for p, m in zip(f["model_params"], f["model_name"], strict=True)]
    return pd.DataFrame(
        {
            "model": f["model_name"],
            "kind_code": f["model_kind"],
            "origin_code": f["origin"],
            "source": [run_source(o, s) for o, s in zip(f["origin"], f["submission"], strict=True)],
            "note": _run_notes(f["missing"], f["unparsable"]),
            "org": f["model_org"],
            "params": f["model_params"],
            "threshold": [
                _threshold_text(p, t) for p, t in zip(f["policy"], f["threshold"], strict=True)
            ],
            "version": f["benchmark_version"],
            "created": f["created_at"],
            "missing": f["missing"].astype(int),
            "unparsable": f["unparsable"].astype(int),
            "kind": f["model_kind"].map(kind_label),
            "origin": f["origin"].map(lambda o: ORIGIN_BADGES.get(o, o)),
            "params_value": np.array([np.nan if v is None else v for v, _ in sizes], float),
            "params_from": [w for _, w in sizes],
            # has FactBoard re-run it? (evaluator.submissions.verification)
            "verified": [
                verification.label_of(o, c, s)
                for o, c, s in zip(f["origin"], f["recipe_config"], f["submission"], strict=True)
            ],
            "verified_code": [
                verification.status_of(o, c, s)
                for o, c, s in zip(f["origin"], f["recipe_config"], f["submission"], strict=True)
            ],
        },
        index=f.index,
    ).astype({c: "str" for c in _RUN_TEXT})  # one dtype, however many runs are kept


_RUN_TEXT: tuple[str, ...] = ("model", "kind_code", "origin_code", "source", "note", "org")
_RUN_TEXT += ("params", "threshold", "version", "created", "kind", "origin", "params_from")
_RUN_TEXT += ("verified", "verified_code")


def _coverage_cells(
    coverage: pd.Series, declared: Sequence[str], q: BoardQuery
) -> tuple[list[str], list[str]]:
    """(coverage in words, the covered domains sorted and joined by ';') per row, from the
    coverage as Q.board_slice_results gives it; worked out once per distinct coverage."""
    made: dict[object, tuple[str, str]] = {}
    keys = [c if isinstance(c, str) else None for c in coverage.tolist()]
    for c in dict.fromkeys(keys):
        covered = None if c is None else [d for d in c.split("\x1f") if d]
        made[c] = (
            coverage_text(covered, declared, q.slice_kind, q.slice_value),
            ";".join(sorted(covered or [])),
        )
    return [made[c][0] for c in keys], [made[c][1] for c in keys]


def _run_rows(
    con: Q.Con, q: BoardQuery, declared: Sequence[str], memo: dict[object, object]
) -> pd.DataFrame:
    """One row per visible run with a number for the view: the slice's columns from one
    narrow query, the run's own columns from _run_fields."""
    sl = Q.board_slice_results(
        con, q.benchmark, q.unit, q.slice_kind, q.slice_value, q.metric, q.grader
    )
    fx = _run_fields(con, q.benchmark, sl["run_id"].tolist(), memo)
    coverage, coverage_set = _coverage_cells(sl["coverage"], declared, q)
    return pd.DataFrame(
        {
            "model": fx["model"],
            "kind_code": fx["kind_code"],
            "origin_code": fx["origin_code"],
            "value": sl["value"].astype(float),
            "ci_low": sl["ci_low"].astype(float),
            "ci_high": sl["ci_high"].astype(float),
            "n": sl["n"].astype("Int64"),
            "coverage": coverage,
            "coverage_set": coverage_set,
            "split": sl["split"],
            "config": "",
            "source": fx["source"],
            "note": fx["note"],
            "org": fx["org"],
            "params": fx["params"],
            "threshold": fx["threshold"],
            "run_id": sl["run_id"],
            "version": fx["version"],
            "created": fx["created"],
            "missing": fx["missing"],
            "unparsable": fx["unparsable"],
            "kind": fx["kind"],
            "origin": fx["origin"],
            "params_value": fx["params_value"].astype(float),
            "params_from": fx["params_from"],
            "verified": fx["verified"],
            "verified_code": fx["verified_code"],
        }
    )


def run_source(origin: str, submission: object) -> str:
    """'FactBoard run', or for an imported run the source its Every Eval Ever record names."""
    if origin != "imported" or not isinstance(submission, str):
        return "FactBoard run"
    try:
        sub = json.loads(submission)
    except ValueError:
        sub = None
    if not isinstance(sub, dict):
        return "FactBoard run"
    who = sub.get("source_name") or sub.get("source_organization_name") or "a record"
    return f"{who} (via Every Eval Ever)"


def _run_notes(missing: pd.Series, unparsable: pd.Series) -> list[str]:
    out = []
    for m, u in zip(
        missing.fillna(0).astype(int).tolist(),
        unparsable.fillna(0).astype(int).tolist(),
        strict=True,
    ):
        parts = []
        if m:
            parts.append(f"{plural(m, 'sample')} without a prediction")
        if u:
            parts.append(f"{plural(u, 'unusable prediction')}")
        out.append("; ".join(parts))
    return out


def _reported_rows(rep: pd.DataFrame, q: BoardQuery, declared: Sequence[str]) -> pd.DataFrame:
    sel = rep[rep["metric"] == q.metric] if q.grader is None else rep.iloc[0:0]
    cfg = [split_note(n) for n in sel["note"]]
    out = pd.DataFrame(
        {
            "model": sel["model"],
            "kind_code": sel["kind"],
            "origin_code": "reported",
            "value": sel["value"].astype(float),
            "ci_low": np.nan,
            "ci_high": np.nan,
            "n": sel["n"].astype("Int64"),
            "coverage": [
                coverage_text(c, declared, q.slice_kind, q.slice_value) for c in sel["coverage"]
            ],
            "coverage_set": [";".join(sorted(as_list(c) or [])) for c in sel["coverage"]],
            "split": sel["split"],
            "config": [c for c, _ in cfg],
            "source": sel["source"],
            "note": [t for _, t in cfg],
            "org": None,
            "params": None,
            "threshold": "",
            "run_id": None,
            "version": None,
            "created": None,
            "missing": 0,
            "unparsable": 0,
            "verified": "",  # a published number: nothing FactBoard can re-run
            "verified_code": "",
            # which published rows a board row stands for (several once folded, the kept one
            # first): how its numbers on other slices are found (slice_long)
            "rep_key": _report_key(sel["model"], sel["source"], sel["note"]),
        }
    )
    return out.reset_index(drop=True)


def _report_key(model: pd.Series, source: pd.Series, note: pd.Series) -> pd.Series:
    """Identity of a published row: model, source and configuration (the note's key=value)."""
    return _row_key(model, source, note.map(lambda n: split_note(n)[0]))


def _row_key(model: pd.Series, source: pd.Series, config: pd.Series) -> pd.Series:
    """_report_key of board rows, whose configuration is already split from the note."""
    return model.astype(str) + "\x1f" + source.astype(str) + "\x1f" + config.astype(str)


def _other_metrics(
    values: dict[str, np.ndarray] | None, rep: pd.DataFrame, q: BoardQuery, rows: pd.DataFrame
) -> tuple[pd.DataFrame, list[str]]:
    """Every other metric of the same slice as extra columns (value only). values: the runs'
    other ungraded metrics (Q.board_other_values), None without runs."""
    if q.grader is not None:
        return rows, []
    v_run = np.asarray(values["run_id"], dtype=object) if values else np.array([], object)
    v_metric = np.asarray(values["metric"], dtype=object) if values else np.array([], object)
    v_value = np.asarray(values["value"], dtype=float) if values else np.array([], float)
    metrics = sorted((set(pd.unique(v_metric)) | set(rep["metric"])) - {q.metric})
    rep_wide = pd.DataFrame()
    if not rep.empty:
        r = rep.assign(key=_report_key(rep["model"], rep["source"], rep["note"]))
        rep_wide = r.drop_duplicates(["key", "metric"]).pivot(
            index="key", columns="metric", values="value"
        )
    is_rep = (rows["origin_code"] == "reported").to_numpy()
    # the runs' values in one (runs, metrics) array, the first value of a (run, metric) kept;
    # then one lookup per row set (not per metric and row): runs by run id, published by key
    run_vals = np.full((len(rows), len(metrics)), np.nan)
    if len(v_run) and metrics:
        ids = pd.Index(pd.unique(v_run))
        r_at = ids.get_indexer(v_run)
        m_at = pd.Index(metrics).get_indexer(v_metric)
        ok = m_at >= 0
        cell = r_at[ok] * len(metrics) + m_at[ok]
        _, first = np.unique(cell, return_index=True)
        wide = np.full((len(ids), len(metrics)), np.nan)
        wide[r_at[ok][first], m_at[ok][first]] = v_value[ok][first]
        at = ids.get_indexer(rows["run_id"].to_numpy(dtype=object))
        have = (at >= 0) & ~is_rep
        run_vals[have] = wide[at[have]]
    if is_rep.any():
        row_key = _row_key(rows["model"], rows["source"], rows["config"])
        rep_vals = rep_wide.reindex(index=row_key.to_numpy(), columns=metrics)
    else:
        rep_vals = pd.DataFrame(np.nan, index=range(len(rows)), columns=metrics)
    both = np.where(
        is_rep[:, None],
        rep_vals.to_numpy(dtype=float, na_value=np.nan),
        run_vals,
    )
    names = []
    extra = {}
    for j, m in enumerate(metrics):
        vals = both[:, j]
        if not np.isnan(vals).all():
            extra[f"m:{m}"] = vals
            names.append(f"m:{m}")
    if extra:
        rows = pd.concat([rows, pd.DataFrame(extra, index=rows.index)], axis=1)
    return rows, names


FOLD_TOLERANCE = 0.02  # published numbers of one model this close are the same number


def fold_published(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per published model: rows of the same model (its canonical name,
    evaluator.core.vocabulary.canonical_model) with the same split and coverage from several
    sources (a paper and its repository's README) become one row naming every source. With
    the same value, the sources are listed; with values a rounding or a re-run apart (at most
    FOLD_TOLERANCE: the README's 0.821 beside the paper's 0.824), the row keeps the paper's
    value and its source column gives the other sources' values, when each source gives that
    model one number there (several numbers of one source, e.g. one per prompt, and numbers
    further apart, e.g. another correlation, stay apart)."""
    rep = rows["origin_code"] == "reported"
    if rep.sum() < 2:
        return rows
    # the folding works on the published rows alone (a few dozen), then writes the changed
    # cells back once per column: cell by cell on the whole board costs O(runs) per write
    if "rep_key" not in rows.columns:
        rows = rows.assign(rep_key=_row_key(rows["model"], rows["source"], rows["config"]))
    cols = ["model", "split", "coverage_set", "value", "source", "config", "rep_key"]
    sub = rows.loc[rep, cols].copy()
    folded = _fold_subset(sub)
    if folded is None:
        return rows
    kept, gone = folded
    out = rows.drop(index=gone)
    for col in ("source", "config", "model", "rep_key"):
        out.loc[kept.index, col] = kept[col]
    return out.reset_index(drop=True)


def _fold_subset(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.Index] | None:
    """fold_published on the published rows only: (the kept rows as folded, the index of the
    rows folded away), or None when nothing folds."""
    r = rows
    base = (
        r["model"].astype(str).map(canonical_model)
        + "\x1f"
        + r["split"].astype(str)
        + "\x1f"
        + r["coverage_set"].astype(str)
    )
    dup = base.duplicated(keep=False)
    if not dup.any():
        return None
    keep: list[int] = [int(i) for i in r.index[~dup.to_numpy()]]
    r, base = r[dup], base[dup]
    same_value = base + "\x1f" + r["value"].round(4).astype(str)
    for _, g in r.groupby(base, sort=False):
        sources = g["source"].astype(str)
        spread = float(g["value"].max() - g["value"].min()) if g["value"].notna().all() else 1.0
        if len(g) > 1 and sources.is_unique and spread <= FOLD_TOLERANCE:
            keep.append(_fold(rows, g, differing=same_value[g.index].nunique() > 1))
            continue
        for _, same in g.groupby(same_value[g.index], sort=False):
            keep.append(_fold(rows, same, differing=False) if len(same) > 1 else same.index[0])
    gone = r.index.difference(pd.Index(keep))
    return rows.loc[rows.index.difference(gone)], gone


def _fold(rows: pd.DataFrame, g: pd.DataFrame, differing: bool) -> int:
    """Fold the published rows `g` into one: from a paper rather than a README, then the most
    precise number (0.545 rather than 0.55); returns its index. differing: the values differ,
    so the others' values go beside their sources."""

    def decimals(v: object) -> int:
        text = f"{float(v):.6f}".rstrip("0")  # type: ignore[arg-type]
        return len(text.split(".")[1]) if "." in text else 0

    first = min(
        g.index,
        key=lambda i: (
            "paper" not in str(g.at[i, "source"]).lower(),
            -decimals(g.at[i, "value"]),
            list(g.index).index(i),
        ),
    )
    order = [first, *[i for i in g.index if i != first]]
    parts = []
    for i in order:
        src = str(g.at[i, "source"]) if isinstance(g.at[i, "source"], str) else ""
        if differing and i != first and src:
            # the number as that source prints it (0.55, not 0.550)
            src = f"{src} gives {float(g.at[i, 'value']):.4g}"  # type: ignore[arg-type]
        if src:
            parts.append(src)
    rows.at[first, "source"] = "; ".join(dict.fromkeys(parts))
    cfg = [str(g.at[i, "config"]) for i in order if isinstance(g.at[i, "config"], str)]
    rows.at[first, "config"] = "; ".join(dict.fromkeys(c for c in cfg if c))
    rows.at[first, "model"] = canonical_model(str(g.at[first, "model"]))
    keys = [str(g.at[i, "rep_key"]) for i in order if isinstance(g.at[i, "rep_key"], str)]
    rows.at[first, "rep_key"] = KEY_SEP.join(dict.fromkeys(keys))
    return int(first)


KEY_SEP = "\x1e"  # between the keys of the published rows folded into one board row


def published_rows(con: Q.Con, q: BoardQuery) -> pd.DataFrame:
    """The published rows of a view as build_board shows them (folded, best first), without
    runs, ranks or extra columns: what a card of a published-only benchmark needs."""
    rep = Q.reported_results(con, q.benchmark, q.unit, q.slice_kind, q.slice_value)
    rows = fold_published(_reported_rows(rep, q, []))
    return rows.sort_values(
        ["value", "model"],
        ascending=[lower_is_better(q.metric), True],
        na_position="last",
        kind="mergesort",
    ).reset_index(drop=True)


def build_board(
    con: Q.Con,
    q: BoardQuery,
    spec: BenchmarkSpec | None,
    version: str | None,
    resamples: int = 1000,
    seed: int = 0,
    memo: dict[object, object] | None = None,
    ensure: Callable[[list[str]], None] | None = None,
    labels: LabelReader | None = None,
) -> Board:
    """The board for one view. memo: a dict that may keep per-sample label matrices and the
    runs' own columns between calls (the caller clears it when a run or the samples change;
    a new run needs no clearing). ensure(run_ids): loads the
    per-sample labels of these runs (explorer.store.Store.ensure_labels); only the
    PAIRED_TOP best complete runs are compared by the paired test, the others by their CIs
    (read from run.json), so a board never loads every run's predictions. labels(run_ids,
    frame): these runs' final labels on the frame's samples, read in place
    (explorer.store.Store.label_vectors); without it they are loaded with ensure and read
    from the labels table."""
    memo = memo if memo is not None else {}
    rep = Q.reported_results(con, q.benchmark, q.unit, q.slice_kind, q.slice_value)
    declared = list(spec.domains) if spec is not None else []
    run_rows = _run_rows(con, q, declared, memo)
    rows = pd.concat([run_rows, _reported_rows(rep, q, declared)], ignore_index=True)
    values = None
    if q.grader is None and len(run_rows):
        values = Q.board_other_values(
            con, q.benchmark, q.unit, q.slice_kind, q.slice_value, q.metric
        )
    rows, others = _other_metrics(values, rep, q, rows)
    rows = fold_published(rows)
    # the runs' kind, origin and size come with their fields (_run_fields); the published
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
    rows["rank"] = pd.array([pd.NA] * len(rows), dtype="Int64")
    for c in ("delta", "delta_low", "delta_high", "delta_p"):
        rows[c] = np.nan
    board = Board(rows=rows, other_metrics=others)
    _rank(con, board, q, spec, version, resamples, seed, memo, ensure, labels)
    board.notes = _notes(rows, q, declared)
    lower = lower_is_better(q.metric)
    board.rows = rows.sort_values(
        ["value", "model"], ascending=[lower, True], na_position="last", kind="mergesort"
    ).reset_index(drop=True)
    return board


def _rank(
    con: Q.Con,
    board: Board,
    q: BoardQuery,
    spec: BenchmarkSpec | None,
    version: str | None,
    resamples: int,
    seed: int,
    memo: dict[object, object],
    ensure: Callable[[list[str]], None] | None = None,
    labels: LabelReader | None = None,
) -> None:
    rows = board.rows
    is_run = (rows["origin_code"] != "reported").to_numpy()
    idx = np.flatnonzero(is_run & rows["value"].notna().to_numpy())
    lower = lower_is_better(q.metric)
    if len(idx) == 0:
        _rank_by_value(board, lower)
        return
    vals = rows.loc[idx, "value"].to_numpy(float)
    lo = rows.loc[idx, "ci_low"].to_numpy(float)
    hi = rows.loc[idx, "ci_high"].to_numpy(float)
    paired_local, point, pvals, why, boot = _paired(
        con, rows.loc[idx], q, spec, version, resamples, seed, memo, ensure, labels
    )
    rk = R.ranks_by_significance(vals, lo, hi, lower, paired_local, point, pvals)
    rows.loc[idx, "rank"] = rk
    sign = -1.0 if lower else 1.0
    lead = int(np.argmax(sign * vals))
    # every row's difference to the best run (a published number above it reads positive)
    rows["delta"] = rows["value"].astype(float) - vals[lead]
    if paired_local is not None and len(paired_local):
        rows.loc[idx[paired_local], "paired"] = True
        board.paired_runs = rows.loc[idx[paired_local], "run_id"].tolist()
        if point is not None and pvals is not None and boot is not None:
            _leader_and_pairs(board, idx[paired_local], idx[lead], point, pvals, boot, sign)
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
            f"{plural(n_ci, 'run')} compared by CI non-overlap" + (f" ({why})." if why else ".")
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
    point: np.ndarray,
    pvals: np.ndarray,
    boot: np.ndarray,
    sign: float,
) -> None:
    """The paired difference to the leader (its 95% percentile CI and p) for the paired runs,
    when the leader is one of them, and the p-value matrix of the best paired runs."""
    rows = board.rows
    where = np.flatnonzero(at == leader_at)
    if len(where):
        li = int(where[0])
        d = boot - boot[:, [li]]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = np.nanpercentile(d, [2.5, 97.5], axis=0)
        rows.loc[at, "delta_low"] = lo
        rows.loc[at, "delta_high"] = hi
        rows.loc[at, "delta_p"] = pvals[li]
        rows.loc[leader_at, ["delta_low", "delta_high", "delta_p"]] = np.nan
    top = np.argsort(-sign * point, kind="stable")[:PAIRWISE_TOP]
    ids = rows.loc[at[top], "run_id"].astype(str).tolist()
    board.pairwise = pd.DataFrame(pvals[np.ix_(top, top)], index=ids, columns=ids)
    board.pairwise_values = dict(zip(ids, point[top].tolist(), strict=True))


def _paired(
    con: Q.Con,
    runs: pd.DataFrame,
    q: BoardQuery,
    spec: BenchmarkSpec | None,
    version: str | None,
    resamples: int,
    seed: int,
    memo: dict[object, object],
    ensure: Callable[[list[str]], None] | None = None,
    labels: LabelReader | None = None,
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None, str, np.ndarray | None]:
    """Indices (into runs) compared by the paired bootstrap, their point values, p-values, why
    some runs are not, and the bootstrap values (resamples × runs)."""
    by_scores = q.metric in SCORE_METRICS
    if q.metric not in label_metrics() and not by_scores:
        why = f"{metric_label(q.metric)} is not a function of labels or per-sample scores"
        return None, None, None, why, None
    if spec is None:
        return None, None, None, "benchmark not ingested", None
    ok = (runs["version"] == version) & (runs["missing"] == 0) & (runs["unparsable"] == 0)
    ok_pos = np.flatnonzero(ok.to_numpy())
    if len(ok_pos) < 2:
        return None, None, None, "fewer than two complete runs on this benchmark version", None
    # the most common split (ties: the first by name)
    counts = runs["split"].iloc[ok_pos].astype(str).value_counts()
    split = min(
        zip(counts.index.tolist(), counts.tolist(), strict=True), key=lambda kv: (-kv[1], kv[0])
    )[0]
    ok_pos = ok_pos[(runs.iloc[ok_pos]["split"] == split).to_numpy()]
    sign = -1.0 if lower_is_better(q.metric) else 1.0
    best = np.argsort(-sign * runs.iloc[ok_pos]["value"].to_numpy(float), kind="stable")
    ok_pos = np.sort(ok_pos[best[:PAIRED_TOP]])
    run_ids = runs.iloc[ok_pos]["run_id"].tolist()
    # each run's final labels on the frame, kept per run (a new set of best runs, e.g. on
    # another slice, loads and reads only the runs not seen yet)
    vkey = ("score-rows" if by_scores else "label-rows", q.benchmark, version, q.unit, split)
    vectors: dict[str, np.ndarray] = memo.get(vkey) or {}  # type: ignore[assignment]
    new = sorted(r for r in set(run_ids) if r not in vectors)
    if ensure is not None:
        # (the samples, at least; scores are read from the labels table)
        ensure(new if labels is None or by_scores else [])
    fkey = ("frame", q.benchmark, version, q.unit, split)
    if fkey not in memo:
        memo[fkey] = Q.scored_samples(con, q.benchmark, q.unit, split.split("+"))
    frame: pd.DataFrame = memo[fkey]  # type: ignore[assignment]
    if new and by_scores:
        got_s = Q.score_matrix(con, new, q.unit, frame["ix"].to_numpy())
        vectors = {**vectors, **dict(zip(new, got_s, strict=True))}
    elif new and labels is not None:
        read = labels(new, frame)
        vectors = {**vectors, **{r: read[r] for r in new}}
    elif new:
        got = Q.label_matrix(con, new, q.unit, frame["ix"].to_numpy())
        vectors = {**vectors, **dict(zip(new, got, strict=True))}
    memo[vkey] = vectors
    order = sorted(run_ids)
    full = (
        np.stack([vectors[r] for r in order])
        if order
        else np.empty((0, len(frame)), dtype=float if by_scores else np.int8)
    )
    if frame.empty:
        return None, None, None, "no samples", None
    mkey = ("masks", q.benchmark, version, q.unit, split, q.slice_kind)
    if mkey not in memo:
        memo[mkey] = _slice_masks(spec, frame, q.slice_kind)
    mask = memo[mkey].get(q.slice_value)  # type: ignore[attr-defined]
    if mask is None or not mask.any():
        return None, None, None, "slice not found in the samples", None
    pos = {r: i for i, r in enumerate(order)}
    P = full[[pos[r] for r in run_ids]][:, mask]
    complete = np.isfinite(P).all(axis=1) if by_scores else (P >= 0).all(axis=1)
    y = frame["label"].to_numpy()[mask]
    if np.isnan(y.astype(float)).any():
        return None, None, None, "samples without gold labels", None
    y = y.astype(np.int8)
    domains = frame["domain"].fillna("").astype(str).to_numpy()[mask]
    stratify = spec.overall == "mean_over_domains"
    mean_dom = stratify and q.slice_kind == "overall" and q.metric in MEAN_OVER_DOMAINS
    keep = np.flatnonzero(complete)
    if len(keep) < 2:
        return None, None, None, "per-sample labels missing", None
    wkey = ("weights", q.benchmark, version, q.unit, split, stratify, resamples, seed)
    if wkey not in memo:
        all_domains = frame["domain"].fillna("").astype(str).to_numpy()
        memo[wkey] = R.frame_weights(len(frame), all_domains if stratify else None, resamples, seed)
    W = memo[wkey][:, mask]  # type: ignore[index]
    groups = [domains == d for d in np.unique(domains)] if mean_dom else None
    # the paired tests of these runs on this slice: the same whatever else joins the board
    bkey = ("boot", *wkey, q.slice_kind, q.slice_value, q.metric, tuple(run_ids), mean_dom)
    if bkey not in memo and by_scores:
        memo[bkey] = R.shared_bootstrap_scores(y, P[keep], W, groups)
    elif bkey not in memo:
        memo[bkey] = R.shared_bootstrap(q.metric, y, P[keep], W, groups)
    sb: R.SharedBootstrap = memo[bkey]  # type: ignore[assignment]
    stored = runs.iloc[ok_pos[keep]]["value"].to_numpy(float)
    agree = np.isclose(sb.point, stored, rtol=0, atol=1e-9)
    if agree.sum() < 2:
        return None, None, None, "per-sample labels do not reproduce the stored numbers", None
    use = keep[agree]
    boot = sb.boot[:, agree]
    pvals = R.paired_p_values(boot)
    why = "" if agree.all() else "labels do not reproduce the stored number"
    if len(use) < len(runs):
        why = why or "incomplete predictions, another benchmark version or split"
    return ok_pos[use], sb.point[agree], pvals, why, boot


def _slice_masks(spec: BenchmarkSpec, frame: pd.DataFrame, kind: str) -> dict[str, np.ndarray]:
    """Every value's sample mask for one slice kind (evaluator.core.scoring.slice_masks)."""
    if kind == "overall":
        return {"": np.ones(len(frame), dtype=bool)}
    try:
        masks = slice_masks(spec, frame, kinds=[kind])
    except Exception:  # an unknown slice field: no paired ranking, CI fallback
        return {}
    return {v: m for k, v, m in masks if k == kind}


def _notes(rows: pd.DataFrame, q: BoardQuery, declared: Sequence[str]) -> list[str]:
    notes = []
    who_col = np.where(rows["origin_code"] == "reported", "published numbers", "FactBoard runs")
    if q.slice_kind == "overall" and declared:
        sets: dict[str, set[str]] = {}
        for cov, who in zip(rows["coverage_set"].tolist(), who_col.tolist(), strict=True):
            if cov:
                sets.setdefault(cov, set()).add(who)
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
    splits: dict[str, set[str]] = {}
    for sp, who in zip(rows["split"].astype(str).tolist(), who_col.tolist(), strict=True):
        splits.setdefault(sp, set()).add(who)
    if len(splits) > 1:
        desc = "; ".join(
            f"{' and '.join(sorted(w))} on split '{sp}'" for sp, w in sorted(splits.items())
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


# --------------------------------------------------------------------------------------------
# options for the page's pickers


@dataclass(frozen=True)
class Options:
    units: list[str]
    slice_kinds: list[str]
    slice_values: dict[str, list[str]]
    metrics: list[tuple[str, str | None]]  # (metric, grader)


def options(
    dims: pd.DataFrame, unit: str | None, slice_kind: str | None, primary_metric: str | None = None
) -> Options:
    """What can be picked, given the current unit and slice kind (from result_dimensions)."""
    if dims.empty:
        return Options([], ["overall"], {"overall": [""]}, [])
    units = sorted(dims["unit"].unique(), key=lambda u: (u != "summary", u))
    u = unit if unit in units else units[0]
    d = dims[dims["unit"] == u]
    kinds = sorted(d["slice_kind"].unique(), key=lambda k: (k != "overall", k))
    values = {
        k: sorted(d[d["slice_kind"] == k]["slice_value"].unique(), key=_natural) for k in kinds
    }
    k = slice_kind if slice_kind in kinds else kinds[0]
    dk = d[d["slice_kind"] == k]
    pairs = sorted(
        {
            (m, g if isinstance(g, str) else None)
            for m, g in zip(dk["metric"], dk["grader"], strict=True)
        },
        key=lambda mg: (mg[0] != primary_metric, mg[1] is not None, mg[0], mg[1] or ""),
    )
    return Options(units, kinds, values, pairs)


def default_slice_value(dims: pd.DataFrame, unit: str, kind: str, values: Sequence[str]) -> str:
    """The value a view opens on: the first (in the picker's order) that a FactBoard run has a
    number for, so SummEdits "By domain" does not open on a domain only a paper reports
    (billsum is not in the ingested release); the first value when no run has one."""
    if not values:
        return ""
    d = dims[(dims["source"] == "run") & (dims["unit"] == unit) & (dims["slice_kind"] == kind)]
    with_runs = set(d["slice_value"].astype(str))
    return next((v for v in values if v in with_runs), values[0])


def benchmark_order(
    ingested: Sequence[str], with_runs: Sequence[str], with_reported: Sequence[str]
) -> list[str]:
    """Every benchmark with something to show: ingested first, the demo last among them."""
    have = set(ingested)
    return sorted(
        have | set(with_runs) | set(with_reported), key=lambda b: (b not in have, b == "demo", b)
    )


def metric_keys(opts: Options) -> list[str]:
    """The metric picker's options: 'metric', or 'metric@grader' for a graded metric."""
    return [m if g is None else f"{m}@{g}" for m, g in opts.metrics]


def parse_metric_key(key: str) -> tuple[str, str | None]:
    metric, _, grader = key.partition("@")
    return metric, grader or None


def metric_key_label(key: str) -> str:
    return metric_label(*parse_metric_key(key))


def slice_noun(kind: str) -> str:
    """'dataset+topic_type' -> 'dataset × topic type': what one slice value is."""
    return slice_label(kind).removeprefix("By ")


def metric_notice(
    wanted: str | None, keys: Sequence[str], shown: str, unit: str, kind: str
) -> str | None:
    """What to tell the reader when the metric they had is not reported in the view they
    switched to (the picker then falls back to `shown`); None when nothing changed."""
    if not wanted or wanted in keys:
        return None
    return (
        f"{metric_key_label(wanted)} is not reported in the view '{slice_label(kind)}' "
        f"({unit} level); showing {metric_key_label(shown)} instead."
    )


def _natural(s: str) -> tuple[int, float, str]:
    try:
        return (0, float(s), s)
    except ValueError:
        return (1, 0.0, s)


# --------------------------------------------------------------------------------------------
# the table as shown

COLUMN_TITLES = {
    "rank": "Rank",
    "model": "Model",
    "kind": "Kind",
    "origin": "Origin",
    "ci_bar": "95% CI",
    "ci": "CI bounds",
    "delta": "Δ to best run",
    "delta_ci": "Δ 95% CI (paired)",
    "delta_p": "p vs best run",
    "n": "n",
    "source": "Source",
    "flag": "Check",
    "coverage": "Coverage",
    "split": "Split",
    "config": "Config",
    "note": "Note",
    "threshold": "Threshold",
    "org": "Org",
    "params": "Params",
    "run_id": "Run",
    "version": "Version",
    "created": "Created",
    "verified": "Verification",
}
# the columns a reader can show or hide (the column picker), in the order the table shows
# them; rank, model and the view's metric are always there
OPTIONAL_COLUMNS = [
    "kind",
    "ci_bar",
    "ci",
    "delta",
    "delta_ci",
    "delta_p",
    "n",
    "source",
    "origin",
    "verified",
    "coverage",
    "split",
    "config",
    "note",
    "threshold",
    "org",
    "params",
    "run_id",
    "version",
    "created",
]
# a handful by default, as the leaderboards readers know (rank, model, kind, score with its
# CI drawn, the difference to the best, n, source)
DEFAULT_COLUMNS = ["kind", "ci_bar", "delta", "n", "source"]
RUN_SOURCE = "FactBoard run"


SORTS = {"value": "score", "rank": "rank", "model": "model", "n": "n"}


@dataclass(frozen=True)
class Look:
    """How the reader filters, orders and widens the board (the row of widgets above it)."""

    search: str = ""
    kinds: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    sort: str = "value"
    columns: tuple[str, ...] = tuple(DEFAULT_COLUMNS)
    verified: tuple[str, ...] = ()  # verification statuses (evaluator.submissions.verification)


def count_line(shown: pd.DataFrame, rows: pd.DataFrame) -> str:
    """'**5** rows shown (4 FactBoard runs, 1 published number) of 9' (markdown)."""
    n_runs = int((shown["origin_code"] != "reported").sum())
    head = plural(len(shown), "row").split(" ", 1)
    return (
        f"**{head[0]}** {head[1]} shown ({plural(n_runs, 'FactBoard run')}, "
        f"{plural(len(shown) - n_runs, 'published number')}) of {F.count(len(rows))}"
    )


def column_label(column: str) -> str:
    """A column's title in the picker: 'm:fpr' -> 'FPR', 'run_id' -> 'Run'."""
    if column.startswith("m:"):
        return metric_label(column[2:])
    return COLUMN_TITLES.get(column, column)


def column_titles(board: Board | None, metric_title: str) -> dict[str, str]:
    """Column key -> title for this board: a published-only board's rank is a rank by value,
    and its differences are to the top number, not to a run."""
    names = {**COLUMN_TITLES, "value": metric_title}
    if board is not None and board.rank_by == "value":
        names["rank"] = "Rank (by value)"
        names["delta"] = "Δ to top"
    return names


def kinds_present(rows: pd.DataFrame) -> list[str]:
    """The model kinds among the rows, in the vocabulary's order."""
    have = set(rows["kind_code"].dropna().unique().tolist())
    return [k for k in MODEL_KIND_LABELS if k in have]


def origins_present(rows: pd.DataFrame) -> list[str]:
    have = set(rows["origin_code"].dropna().unique().tolist())
    return [o for o in ORIGIN_BADGES if o in have]


def verified_present(rows: pd.DataFrame) -> list[str]:
    """The verification statuses among the rows, in the vocabulary's order."""
    have = set(rows["verified_code"].dropna().unique().tolist())
    return [v for v in verification.STATUSES if v in have]


def filter_rows(rows: pd.DataFrame, metric: str, look: Look | None = None) -> pd.DataFrame:
    """The board rows the reader asked for: name contains the search (case-insensitive), of
    the chosen kinds, origins and verification statuses, ordered by score (the board's
    order), rank, model name or n."""
    look = look or Look()
    search, kinds, origins, sort = look.search, look.kinds, look.origins, look.sort
    shown = rows
    if search:
        shown = shown[shown["model"].str.lower().str.contains(search.lower(), regex=False)]
    if kinds:
        shown = shown[shown["kind_code"].isin(kinds)]
    if origins:
        shown = shown[shown["origin_code"].isin(origins)]
    if look.verified:
        shown = shown[shown["verified_code"].isin(look.verified)]
    if sort == "rank":
        lower = lower_is_better(metric)
        shown = shown.sort_values(["rank", "value"], ascending=[True, lower], na_position="last")
    elif sort == "model":
        shown = shown.sort_values("model", key=lambda c: c.str.lower())
    elif sort == "n":
        shown = shown.sort_values("n", ascending=False, na_position="last")
    return shown


CI_WIDTH, CI_HEIGHT, CI_PAD = 160, 22, 7  # the drawn CI, in SVG pixels
CI_COLOR, CI_POINT, PUBLISHED_POINT = "%236f9fd8", "%2317365d", "%238c8c8c"  # (%23: '#')


def _ci_svg(lo: int, v: int, hi: int, has_ci: bool) -> str:
    """One row's drawing as a data URI: the CI as a bar and the value as a dot, or a
    published number as a hollow dot. Kept short (every row sends one to the
    browser) and written as it is: in a data URI only '#' and '%' need escaping."""
    y = CI_HEIGHT // 2
    mark = (
        f"<path d='M{lo} {y}H{hi}' stroke='{CI_COLOR}' stroke-width='7'/>"
        f"<circle cx='{v}' cy='{y}' r='2.5' fill='{CI_POINT}'/>"
        if has_ci
        else f"<circle cx='{v}' cy='{y}' r='3.5' fill='none' stroke='{PUBLISHED_POINT}'/>"
    )
    return (
        "data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg' "
        f"width='{CI_WIDTH}' height='{CI_HEIGHT}'>"
        f"{mark}</svg>"
    )


def ci_images(rows: pd.DataFrame) -> list[str | None]:
    """Each row's 95% CI drawn on the scale shared by the table (a small forest plot, one
    image per row: the interval as a bar, the value as a dot; a published number without a
    CI as a hollow dot at its value); None for a row without a number. A few distinct
    drawings however many rows (positions are whole pixels)."""
    v = rows["value"].to_numpy(dtype=float, na_value=np.nan)
    lo = rows["ci_low"].to_numpy(dtype=float, na_value=np.nan)
    hi = rows["ci_high"].to_numpy(dtype=float, na_value=np.nan)
    has_v = np.isfinite(v)
    has_ci = has_v & np.isfinite(lo) & np.isfinite(hi)
    out: list[str | None] = [None] * len(rows)
    if not has_v.any():
        return out
    a = float(np.nanmin(np.r_[v[has_v], lo[has_ci]]))
    b = float(np.nanmax(np.r_[v[has_v], hi[has_ci]]))
    span = (b - a) or 1.0

    def px(x: np.ndarray) -> np.ndarray:
        t = (np.where(np.isfinite(x), x, a) - a) / span
        return np.rint(CI_PAD + t * (CI_WIDTH - 2 * CI_PAD)).astype(int)

    p_lo, p_v, p_hi = px(lo), px(v), px(hi)
    made: dict[tuple[int, int, int, bool], str] = {}
    for i in np.flatnonzero(has_v).tolist():
        key = (int(p_lo[i]), int(p_v[i]), int(p_hi[i]), bool(has_ci[i]))
        if key not in made:
            made[key] = _ci_svg(*key)
        out[i] = made[key]
    return out


def suspect_reason(config: object, note: object) -> str:
    """Why a published number is flagged: the note of a row marked suspect=yes, else ''."""
    if not isinstance(config, str) or "suspect=yes" not in config:
        return ""
    return str(note) if isinstance(note, str) and note else "flagged by the transcriber"


def _flags(rows: pd.DataFrame) -> np.ndarray:
    """'⚠ suspect: <why>' on the published numbers flagged suspect, '' elsewhere."""
    config, note = rows["config"].to_numpy(dtype=object), rows["note"].to_numpy(dtype=object)
    marked = [isinstance(c, str) and "suspect=yes" in c for c in config.tolist()]
    flagged = np.flatnonzero(np.asarray(marked, dtype=bool))
    flags = np.full(len(rows), "", dtype=object)
    flags[flagged] = [f"⚠ suspect: {suspect_reason(config[i], note[i])}" for i in flagged]
    return flags


def _each_distinct(values: np.ndarray, write: Callable[[float], str]) -> list[str]:
    """write(x) for each value, computed once per distinct value (a board of a thousand
    runs has a few hundred distinct differences)."""
    made: dict[float, str] = {}
    out = []
    for x in values.tolist():
        if x not in made:
            made[x] = write(x)
        out.append(made[x])
    return out


def _empty(col: pd.Series) -> bool:
    """Nothing to read in the column: every cell missing or blank."""
    if col.dtype.kind in "fiub" or str(col.dtype) in ("Int64", "Float64"):
        return bool(col.isna().all())
    return bool(col.map(lambda x: x is None or x != x or str(x).strip() == "").all())


def display_table(
    rows: pd.DataFrame,
    columns: Sequence[str],
    metric_title: str,
    *,
    board: Board | None = None,
    download: bool = False,
) -> pd.DataFrame:
    """The board as shown: rank, model and the view's metric, then the chosen `columns`
    (OPTIONAL_COLUMNS and other metrics 'm:<name>') in the table's order, a Check column
    when a published number is flagged; a chosen column with nothing to read on these rows
    is left out (and a Source that says 'FactBoard run' on every row). download: the same
    table for the files: the drawn CI becomes its bounds as numbers (CI low, CI high), the
    paired CI of the difference its bounds, differences and p-values stay numbers. Only the
    columns shown are read or written (a board of a thousand runs has some thirty)."""
    chosen = set(columns)
    order = ["rank", "model", *[c for c in ("kind",) if c in chosen], "value"]
    order += [c for c in OPTIONAL_COLUMNS if c in chosen and c != "kind"]
    order += [c for c in columns if c.startswith("m:") and c in rows.columns]
    flags = _flags(rows)
    if flags.any():
        at = order.index("source") + 1 if "source" in order else len(order)
        order.insert(at, "flag")
    nan = np.full(len(rows), np.nan)

    def num(c: str) -> np.ndarray:
        return rows[c].to_numpy(dtype=float, na_value=np.nan) if c in rows.columns else nan

    lo, hi = num("ci_low"), num("ci_high")
    d_lo, d_hi = num("delta_low"), num("delta_high")
    has_ci = bool((np.isfinite(lo) & np.isfinite(hi)).any())
    names = column_titles(board, metric_title)
    by_value = board is not None and board.rank_by == "value"
    out: dict[str, object] = {}
    for c in order:
        if c == "rank" and by_value and "value_rank" in rows.columns:
            out[c] = rows["value_rank"].array
        elif c in ("rank", "model", "value"):
            out[c] = rows[c].array  # (the rank keeps its missing values: Int64)
        elif c == "ci_bar" or c == "ci":
            if not has_ci:
                continue
            if download:  # the bounds as numbers, once, after the value
                out["ci_low"], out["ci_high"] = lo, hi
                names.update({"ci_low": "CI low", "ci_high": "CI high"})
            elif c == "ci_bar":
                out[c] = ci_images(rows)
            else:
                out[c] = [F.ci(a, b) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
        elif c == "delta_ci":
            if not np.isfinite(d_lo).any():
                continue
            if download:
                out["delta_low"], out["delta_high"] = d_lo, d_hi
                names.update({"delta_low": "Δ CI low (paired)", "delta_high": "Δ CI high (paired)"})
            else:
                out[c] = [
                    F.signed_ci(a, b) for a, b in zip(d_lo.tolist(), d_hi.tolist(), strict=True)
                ]
        elif c in ("delta", "delta_p"):
            v = num(c)
            if not np.isfinite(v).any():
                continue
            if download:
                out[c] = v
            elif c == "delta":
                out[c] = _each_distinct(v, lambda x: F.signed(x, missing=""))
            else:
                out[c] = _each_distinct(v, F.p_value)
        elif c == "flag":
            out[c] = flags
        elif c == "source":
            src = rows["source"]
            if not (src.fillna(RUN_SOURCE) == RUN_SOURCE).all():
                out[c] = src.to_numpy()
        elif c in rows.columns and not _empty(rows[c]):
            out[c] = rows[c].array
    names.update({c: metric_label(c[2:]) for c in out if c.startswith("m:")})
    table = pd.DataFrame(out, index=pd.RangeIndex(len(rows)))
    return table.rename(columns=names)


def column_help(
    table: pd.DataFrame, metric: str, grader: str | None, kind: str, value: str, method: str
) -> dict[str, str]:
    """The hover text of each column of display_table's table: what a metric measures (from
    the vocabulary), what the slice is, how ranks and differences are made."""
    m_def = metric_definition(metric)
    where = slice_label(kind) + (f": {value}" if value else "")
    s_def = slice_definition(kind)
    out = {
        metric_label(metric, grader): f"{m_def} Here: {where}. {s_def}".strip(),
        "Rank": method,
        "Rank (by value)": method,
        "Kind": "What the model is: a non-LLM checker, an open or proprietary LLM, people, "
        "or a simple baseline.",
        "95% CI": "The 95% bootstrap confidence interval (bar) around the number (dot), on "
        "one scale for the whole table; a hollow dot is a published number without a CI. "
        "The bounds are in the CI bounds column and the downloads.",
        "CI bounds": "The 95% bootstrap confidence interval of the number.",
        "Δ to best run": "This row's number minus the best FactBoard run's.",
        "Δ to top": "This row's number minus the top number of the table.",
        "Δ 95% CI (paired)": "95% CI of the difference to the best run by a paired bootstrap "
        "on the same samples (runs with complete per-sample predictions).",
        "p vs best run": "Two-sided paired-bootstrap p-value of the difference to the best run.",
        "n": "How many samples the number is computed on.",
        "Source": "Where the number comes from: a FactBoard run, or the paper or leaderboard "
        "that published it.",
        "Check": "Published numbers that contradict the paper's own other numbers, with the "
        "reason.",
        "Coverage": f"Which part of the benchmark the number covers. {slice_definition(kind)}",
        "Origin": ORIGIN_HELP,
        "Verification": verification.HELP,
        "Threshold": "How scores were turned into consistent / inconsistent labels.",
    }
    for c in table.columns:
        name = metric_key_of_label(str(c))
        if name and c not in out:
            out[str(c)] = metric_definition(name)
    return {c: out[c] for c in table.columns if c in out}


def metric_key_of_label(label: str) -> str | None:
    """The vocabulary name of a metric column title ('FPR' -> 'fpr'), None for other columns."""
    for name in metric_names():
        if metric_label(name) == label:
            return name
    return None


def screen_table(table: pd.DataFrame, decimals: int = 3) -> tuple[pd.DataFrame, list[str]]:
    """The table for the screen: a number column with missing values (a paper's rank, CI, n
    or AUROC) is written through evaluator.core.formatting, with its "—" where nothing is
    given (a grid shows "None" for a missing number); whole columns stay numbers (they sort
    as numbers). Returns the table and the columns made text (to align right)."""
    out = table.copy()
    made = []
    for c in table.columns:
        col = table[c]
        if col.dtype.kind not in "iuf" and str(col.dtype) not in ("Int64", "Float64"):
            continue
        missing = col.isna().to_numpy()
        if not missing.any():
            continue
        integer = col.dtype.kind in "iu" or str(col.dtype) == "Int64"
        vals = col.to_numpy(dtype=float, na_value=np.nan)
        out[c] = [F.count(v) if integer else F.number(v, decimals) for v in vals]
        made.append(str(c))
    return out, made


def pairwise_table(board: Board, labels: dict[str, str], lower: bool) -> pd.DataFrame:
    """The paired-test matrix of the best runs as shown: cell (row, column) reads '▲ p' when
    the row's run is significantly better (95%), '▼ p' when worse, '≈ p' when tied."""
    m = board.pairwise
    if m.empty:
        return pd.DataFrame()
    vals = board.pairwise_values
    sign = -1.0 if lower else 1.0
    out = {}
    for col in m.columns:
        cells = []
        for row in m.index:
            if row == col:
                cells.append("—")
                continue
            p = float(m.at[row, col])  # type: ignore[arg-type]
            better = sign * (vals[row] - vals[col]) > 0
            mark = "≈" if not p < 0.05 else ("▲" if better else "▼")
            cells.append(f"{mark} {F.p_value(p, missing='—')}")
        out[labels.get(col, col)] = cells
    return pd.DataFrame(out, index=[labels.get(r, r) for r in m.index])


ROW_SETS = {"all": "all rows", "runs": "FactBoard runs", "published": "published numbers"}


def rows_of(rows: pd.DataFrame, which: str) -> pd.DataFrame:
    """'runs' keeps FactBoard's runs, 'published' the papers' numbers, 'all' both."""
    if which == "runs":
        return rows[rows["origin_code"] != "reported"]
    if which == "published":
        return rows[rows["origin_code"] == "reported"]
    return rows


def file_stem(benchmark: str, unit: str, kind: str, value: str, metric: str) -> str:
    """A download file name from the view (characters outside [A-Za-z0-9._-] become '_')."""
    raw = "-".join(p for p in ("factboard", benchmark, unit, kind, value, metric) if p)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)[:120]


# --------------------------------------------------------------------------------------------
# links and charts from a view


def samples_link(
    benchmark: str, unit: str, kind: str, value: str, run_id: str, split: str
) -> dict[str, str | list[str]]:
    """The samples explorer's query parameters for 'samples this run gets wrong' in the view's
    slice (domain, error/edit type or topic type; other slices open the whole split)."""
    params: dict[str, str | list[str]] = {
        "benchmark": benchmark,
        "unit": unit,
        "wrong": run_id,
        "split": str(split).split("+"),
    }
    if kind in ("domain", "dataset"):
        params["domain"] = value
    elif kind in ("edit_type", "error_type"):
        params["etype"] = value
    elif kind == "topic_type":
        params["topic"] = value
    elif kind == "dataset+topic_type" and "+" in value:
        params["domain"], params["topic"] = value.split("+", 1)
    return params


def chart_kinds(available: Sequence[str] | set[str], kind: str) -> tuple[str | None, str | None]:
    """(the slice kind the model × slice heatmap spreads, the error-type kind), given the slice
    kinds with numbers at this level: the heatmap shows the current view's slices, or for
    Overall the domains."""
    have = set(available)
    if kind != "overall":
        spread: str | None = kind
    else:
        spread = next((k for k in ("domain", "dataset", "dataset+topic_type") if k in have), None)
    err = next((k for k in ("edit_type", "error_type") if k in have), None)
    return spread, err


# --------------------------------------------------------------------------------------------
# chart data


def row_labels(rows: pd.DataFrame) -> list[str]:
    """A unique, readable label per board row (model, plus what tells same-named rows apart)."""
    config = rows["config"].fillna("").astype(str)
    base_s = pd.Series(
        rows["model"].astype(str)
        + np.where(rows["origin_code"] == "reported", " · published", "")
        + np.where(config != "", " (" + config + ")", ""),
        index=rows.index,
    )
    if not base_s.duplicated().any():
        return base_s.tolist()
    base = base_s.tolist()
    run_ids = rows["run_id"].tolist()
    sources = rows["source"].astype(str).tolist()
    total: dict[str, int] = {}
    for b in base:
        total[b] = total.get(b, 0) + 1
    out: list[str] = []
    taken: set[str] = set()
    for b, rid, src in zip(base, run_ids, sources, strict=True):
        if total[b] > 1:
            tag = str(rid)[-6:] if isinstance(rid, str) else src
            b = f"{b} [{tag}]"
            k = 2
            while b in taken:
                b = f"{b.rsplit(' #', 1)[0]} #{k}"
                k += 1
        taken.add(b)
        out.append(b)
    return out


def slice_long(
    con: Q.Con, q: BoardQuery, kind: str, rows: pd.DataFrame, metric: str | None = None
) -> pd.DataFrame:
    """Long table (label, slice_value, value, origin) of `metric` for every value of slice
    `kind`, for the board rows given (which carry a `label` column)."""
    metric = metric or q.metric
    cols = ["label", "slice_value", "value", "origin"]
    runs = Q.run_results(con, q.benchmark, q.unit, kind, None)
    runs = runs[(runs["metric"] == metric) & runs["grader"].isna()]
    by_run = rows[rows["origin_code"] != "reported"].set_index("run_id")["label"]
    a = runs.assign(label=runs["run_id"].map(by_run)).dropna(subset=["label"])
    out = [a[["label", "slice_value", "value", "origin"]]]
    rep = Q.reported_results(con, q.benchmark, q.unit, kind, None)
    rep = rep[rep["metric"] == metric]
    rr = rows[rows["origin_code"] == "reported"]
    if len(rep) and len(rr):
        # a board row stands for the published rows folded into it (rep_key, the kept one
        # first): each of their numbers on this slice kind, the first source's where two give
        # one (a row made without keys is matched by its own model, source and config)
        own = _row_key(rr["model"], rr["source"], rr["config"])
        keys = rr["rep_key"].where(rr["rep_key"].notna(), own) if "rep_key" in rr else own
        pairs = [
            (k, lab, j)
            for ks, lab in zip(keys.astype(str), rr["label"], strict=True)
            for j, k in enumerate(ks.split(KEY_SEP))
        ]
        by_key = pd.DataFrame(pairs, columns=["key", "label", "order"])
        by_key = by_key.drop_duplicates("key").set_index("key")
        key = _report_key(rep["model"], rep["source"], rep["note"])
        b = rep.assign(
            label=key.map(by_key["label"]),
            order=key.map(by_key["order"]),
            origin="reported",
        ).dropna(subset=["label"])
        b = b.sort_values("order", kind="stable").drop_duplicates(["label", "slice_value"])
        out.append(b[cols])
    res = pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=cols)
    res["value"] = res["value"].astype(float)
    return res[cols]


def published_table(con: Q.Con, q: BoardQuery, kind: str = "dataset+topic_type") -> pd.DataFrame:
    """A paper's per-slice table for an Overall view that has no published Overall (TofuEval's
    Table 3: BAcc per dataset × topic type): one row per published model and configuration,
    one column per slice value; empty when the view has published Overall rows or the paper
    gives no such table."""
    if q.slice_kind != "overall" or q.grader is not None:
        return pd.DataFrame()
    overall = Q.reported_results(con, q.benchmark, q.unit, "overall")
    if not overall[overall["metric"] == q.metric].empty:
        return pd.DataFrame()
    rep = Q.reported_results(con, q.benchmark, q.unit, kind)
    rep = rep[rep["metric"] == q.metric]
    if rep.empty:
        return pd.DataFrame()
    cfg = rep["note"].map(lambda n: split_note(n)[0])
    rep = rep.assign(
        Model=[f"{m} ({c})" if c else str(m) for m, c in zip(rep["model"], cfg, strict=True)],
        Source=rep["source"],
    )
    wide = rep.pivot_table(
        index=["Model", "Source"], columns="slice_value", values="value", aggfunc="first"
    )
    wide.columns = [str(c).replace("+", " × ") for c in wide.columns]
    return wide.reset_index().sort_values("Model", key=lambda c: c.str.lower(), ignore_index=True)


def eee_download(
    rows: pd.DataFrame, root: Path, benchmark: str | None
) -> Callable[[], bytes] | None:
    """What the board's Every Eval Ever button downloads: the runs among `rows` and the
    benchmark's published numbers, built when clicked (None when there is nothing to export)."""
    ids = [str(r) for r in rows.get("run_id", pd.Series(dtype=object)).dropna() if r]
    if not ids and benchmark is None:
        return None

    def build() -> bytes:
        from evaluator.interop.export import eee_zip

        return eee_zip(ids, root, reported_benchmark=benchmark)

    return build
