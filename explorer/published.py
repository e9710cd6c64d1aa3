"""Published numbers on a board: the rows of a view's published numbers, their identity
(model, source, configuration), the folding of one model's numbers from several sources into
one row (`fold_published`), and a paper's per-slice table (`published_table`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evaluator.core.vocabulary import (
    canonical_model,
    lower_is_better,
)
from explorer import queries as Q
from explorer.board_rows import as_list, coverage_text, split_note
from explorer.board_types import BoardQuery


def reported_rows(rep: pd.DataFrame, q: BoardQuery, declared: Sequence[str]) -> pd.DataFrame:
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
            "rep_key": report_key(sel["model"], sel["source"], sel["note"]),
        }
    )
    return out.reset_index(drop=True)


def report_key(model: pd.Series, source: pd.Series, note: pd.Series) -> pd.Series:
    """Identity of a published row: model, source and configuration (the note's key=value)."""
    return row_key(model, source, note.map(lambda n: split_note(n)[0]))


def row_key(model: pd.Series, source: pd.Series, config: pd.Series) -> pd.Series:
    """report_key of board rows, whose configuration is already split from the note."""
    return model.astype(str) + "\x1f" + source.astype(str) + "\x1f" + config.astype(str)


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
        rows = rows.assign(rep_key=row_key(rows["model"], rows["source"], rows["config"]))
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
    rows = fold_published(reported_rows(rep, q, []))
    return rows.sort_values(
        ["value", "model"],
        ascending=[lower_is_better(q.metric), True],
        na_position="last",
        kind="mergesort",
    ).reset_index(drop=True)


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
