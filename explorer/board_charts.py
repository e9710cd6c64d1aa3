"""The leaderboard's chart data: which slice kinds the charts spread, and the long table of
every board row's number on each value of a slice kind.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from explorer import queries as Q
from explorer.board_types import BoardQuery
from explorer.published import KEY_SEP, report_key, row_key


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
        own = row_key(rr["model"], rr["source"], rr["config"])
        keys = rr["rep_key"].where(rr["rep_key"].notna(), own) if "rep_key" in rr else own
        pairs = [
            (k, lab, j)
            for ks, lab in zip(keys.astype(str), rr["label"], strict=True)
            for j, k in enumerate(ks.split(KEY_SEP))
        ]
        by_key = pd.DataFrame(pairs, columns=["key", "label", "order"])
        by_key = by_key.drop_duplicates("key").set_index("key")
        key = report_key(rep["model"], rep["source"], rep["note"])
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
