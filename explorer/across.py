"""One model across benchmarks: the view LLM-AggreFact's users know, for every benchmark.

Pure functions over the Overall numbers of the board (explorer.queries.overall_numbers: the
per-slice results of visible runs, read from run.json, and the published numbers). For each
benchmark the view shows its primary metric on Overall, at the level its leaderboard opens on;
models are folded by evaluator.core.vocabulary.canonical_model (the papers and leaderboards
spell one model several ways), and each cell says where its number comes from: a FactBoard run
(the best of the model's runs there), a paper, or a leaderboard snapshot. The page is
views/across.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evaluator.core import formatting as F
from evaluator.core.vocabulary import (
    canonical_model,
    kind_label,
    lower_is_better,
    metric_label,
    model_key,
)

SOURCE_KINDS = ("run", "paper", "snapshot")


@dataclass(frozen=True)
class Column:
    """One benchmark of the table: the metric and level its cells show."""

    benchmark: str
    title: str
    metric: str
    unit: str

    @property
    def header(self) -> str:
        return f"{self.title} · {metric_label(self.metric)}"

    @property
    def source_header(self) -> str:
        return f"{self.title} · source"


@dataclass
class Across:
    columns: list[Column]
    table: pd.DataFrame  # Model, Kind, Benchmarks, then per column its value (text) and source
    cells: pd.DataFrame  # long form: model, benchmark, value, source_kind, source, runs, ...


def source_kind(origin_code: str, source: str | None) -> str:
    """'run' for a FactBoard run; a published number is from a 'snapshot' (a leaderboard:
    LLM-AggreFact's site, the SummEdits README) or a 'paper'."""
    if origin_code != "reported":
        return "run"
    text = (source or "").casefold()
    return "snapshot" if ("leaderboard" in text or "snapshot" in text) else "paper"


def level_order(unit: str) -> tuple[bool, str]:
    """The leaderboard's order of levels (summary first, as explorer.leaderboard.options)."""
    return (unit != "summary", unit)


def pick_columns(
    rows: pd.DataFrame, primary: Mapping[str, str | None], titles: Mapping[str, str]
) -> list[Column]:
    """Each benchmark's column: its primary metric (the most common metric of its Overall
    numbers when it has none registered, or none of its numbers uses it) at the first level
    that has it."""
    dims: dict[str, dict[str, set[str]]] = {}
    counts: dict[tuple[str, str], int] = {}
    sizes = rows.groupby(["benchmark", "metric", "unit"]).size()
    for (bench, metric, unit), n in zip(sizes.index.tolist(), sizes.tolist(), strict=True):
        dims.setdefault(str(bench), {}).setdefault(str(metric), set()).add(str(unit))
        counts[(str(bench), str(metric))] = counts.get((str(bench), str(metric)), 0) + int(n)
    out = []
    for bench in sorted(dims, key=lambda b: (titles.get(b, b).casefold(), b)):
        metric = primary.get(bench)
        if not metric or metric not in dims[bench]:
            metric = min(dims[bench], key=lambda m: (-counts[(bench, m)], m))
        unit = sorted(dims[bench][metric], key=level_order)[0]
        out.append(Column(bench, titles.get(bench, bench), metric, unit))
    return out


def build(
    rows: pd.DataFrame,
    primary: Mapping[str, str | None],
    titles: Mapping[str, str] | None = None,
    benchmarks: Sequence[str] | None = None,
    min_benchmarks: int = 1,
    search: str = "",
) -> Across:
    """The model × benchmark table.

    rows: explorer.queries.overall_numbers. primary: benchmark -> primary metric (None: not
    registered). benchmarks: the columns to show (None: every benchmark with a number).
    min_benchmarks: keep models with a number on at least that many of the shown columns.
    search: keep models one of whose names contains it (case-insensitive).
    A cell is the model's best FactBoard run there, else its best published number (with the
    best published one kept beside a run's)."""
    titles = dict(titles or {})
    rows = rows[rows["value"].notna() & rows["grader"].isna()]
    text = ["origin_code", "benchmark", "model", "kind", "run_id", "unit", "metric", "source"]
    rows = rows.astype(dict.fromkeys(text, object))  # small frames: numpy objects are faster
    if benchmarks is not None:
        rows = rows[rows["benchmark"].isin(list(benchmarks))]
    cols = pick_columns(rows, primary, titles) if not rows.empty else []
    keep = pd.Series(False, index=rows.index)
    for c in cols:
        keep |= (
            (rows["benchmark"] == c.benchmark)
            & (rows["metric"] == c.metric)
            & (rows["unit"] == c.unit)
        )
    rows = rows[keep].copy()
    canon = {m: canonical_model(m) for m in set(rows["model"].astype(str))}
    rows["canonical"] = rows["model"].astype(str).map(canon)
    rows["key"] = rows["canonical"].map({c: model_key(c) for c in set(canon.values())})
    rows["pub"] = rows["origin_code"] == "reported"
    sign = {c.benchmark: (1.0 if lower_is_better(c.metric) else -1.0) for c in cols}
    rows["order"] = rows["value"].astype(float) * rows["benchmark"].map(sign)
    rows["source"] = rows["source"].fillna("")
    rows = rows.sort_values(["key", "benchmark", "pub", "order", "source"], kind="stable")
    pair = ["key", "benchmark"]
    if search.strip():
        hit = (
            rows["model"]
            .astype(str)
            .str.casefold()
            .str.contains(search.strip().casefold(), regex=False)
        )
        rows = rows[rows["key"].isin(set(rows.loc[hit, "key"]))]
    best = rows.drop_duplicates(pair).set_index(pair)
    pub = rows[rows["pub"]].drop_duplicates(pair).set_index(pair)
    n_runs = rows[~rows["pub"]].groupby(pair).size()
    kinds = rows[rows["kind"].fillna("") != ""].drop_duplicates("key").set_index("key")["kind"]
    first_name = rows.drop_duplicates("key").set_index("key")["canonical"]
    run_cell = ~best["pub"]
    long = pd.DataFrame(
        {
            "key": best.index.get_level_values(0),
            "benchmark": best.index.get_level_values(1),
            "metric": best.index.get_level_values(1).map({c.benchmark: c.metric for c in cols}),
            "value": best["value"].astype(float).to_numpy(),
            "ci_low": best["ci_low"].astype(float).to_numpy(),
            "ci_high": best["ci_high"].astype(float).to_numpy(),
            "source_kind": [
                source_kind(o, s_)
                for o, s_ in zip(best["origin_code"], best["source"], strict=True)
            ],
            "source": [
                f"FactBoard run {r}" if is_run else str(s_)
                for r, s_, is_run in zip(best["run_id"], best["source"], run_cell, strict=True)
            ],
            "runs": n_runs.reindex(best.index).fillna(0).astype(int).to_numpy(),
            "run_id": best["run_id"].where(run_cell, None).to_numpy(),
            "published_value": pub["value"].reindex(best.index).astype(float).to_numpy(),
            "published_source": pub["source"].reindex(best.index).to_numpy(),
        }
    )
    long.insert(1, "model", long["key"].map(first_name))
    long.insert(2, "kind", [k if isinstance(k, str) else "" for k in long["key"].map(kinds)])
    if not long.empty:
        n = long.groupby("key")["benchmark"].transform("nunique")
        long = long[n >= max(1, int(min_benchmarks))].reset_index(drop=True)
    cols = [c for c in cols if c.benchmark in set(long["benchmark"])]
    return Across(cols, _wide(long, cols), long)


def cell_source(kind: str, runs: int) -> str:
    """'run', 'run ×3' (the best of three runs), 'paper' or 'snapshot'."""
    return f"run ×{runs}" if kind == "run" and runs > 1 else kind


def _wide(long: pd.DataFrame, cols: list[Column]) -> pd.DataFrame:
    headers = ["Model", "Kind", "Benchmarks"]
    for c in cols:
        headers += [c.header, c.source_header]
    if long.empty:
        return pd.DataFrame(columns=headers)
    long = long.assign(
        cell=[cell_source(k, r) for k, r in zip(long["source_kind"], long["runs"], strict=True)]
    )
    values = long.pivot(index="key", columns="benchmark", values="value")
    sources = long.pivot(index="key", columns="benchmark", values="cell")
    first = long.drop_duplicates("key").set_index("key")
    table = pd.DataFrame(
        {
            "Model": first["model"].astype(str),
            "Kind": [kind_label(k) for k in first["kind"].astype(str)],
            "Benchmarks": long.groupby("key")["benchmark"].nunique(),
        }
    )
    for c in cols:
        # written as the board writes numbers: fixed decimals, "—" where the model has none
        table[c.header] = [F.number(v) for v in values[c.benchmark].astype(float)]
        table[c.source_header] = sources[c.benchmark].fillna("").astype(str)
    table["_name"] = table["Model"].str.casefold()
    table = table.sort_values(["Benchmarks", "_name"], ascending=[False, True], kind="stable")
    return table[headers].reset_index(drop=True)


def model_cells(view: Across, model: str) -> pd.DataFrame:
    """One model across every benchmark of the view, one row per benchmark (those where it has
    no number too, as "—"): the metric, the value and its 95% CI as the board writes them,
    where the number comes from, and the published number beside a run's."""
    mine = view.cells[view.cells["model"] == model].set_index("benchmark")
    rows = []
    for col in view.columns:
        if col.benchmark not in mine.index:
            rows.append([col.title, metric_label(col.metric), F.MISSING, F.MISSING, "", "", ""])
            continue
        c: dict[Any, Any] = mine.loc[col.benchmark].to_dict()
        kind, pub = str(c["source_kind"]), c["published_value"]
        rows.append(
            [
                col.title,
                metric_label(col.metric),
                F.number(c["value"]),
                F.ci(c["ci_low"], c["ci_high"], missing=F.MISSING),
                cell_source(kind, int(c["runs"])),
                str(c["source"]),
                f"{F.number(pub)} ({c['published_source']})"
                if kind == "run" and F.finite(pub)
                else "",
            ]
        )
    return pd.DataFrame(
        rows, columns=["Benchmark", "Metric", "Value", "95% CI", "From", "Source", "Published"]
    )
