"""The front page's logic: for each benchmark, who tops the board and how FactBoard's runs
stand.

Pure functions over the leaderboard's rows (explorer.leaderboard.build_board, or
explorer.leaderboard.published_rows where a benchmark has published numbers only): the page
(views/home.py) builds each benchmark's default board (overall, first level, the benchmark's
primary metric) through the cached `explorer.ui.board` and shows one card per benchmark.

A card never lets a FactBoard run pass for the board's leader. Its first line names the best
detector on the whole board, published or run, with its source ("leads" is said of it alone);
its second line is about FactBoard's runs, and says so ("best FactBoard run"). A run's rank is
1 + the number of runs significantly better than it, so the runs ranked 1 are the best run and
those the board cannot tell apart from it; published numbers carry no CI and are never tested.
Numbers are written through evaluator.core.formatting. See docs/ARCHITECTURE.md ("Pages").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from evaluator.core import formatting as fmt
from evaluator.core.vocabulary import kind_label
from explorer.words import slice_text

# benchmarks with published numbers but no loader in evaluator.benchmarks (their titles, so
# that no page shows a raw id such as 'rank19')
PUBLISHED_TITLES = {
    "aggrefact_sota": "AggreFact-SOTA",
    "dialsummeval": "DialSummEval",
    "factcc_synthetic": "FactCC synthetic (150 samples of SummEdits §3.3)",
    "llm_aggrefact": "LLM-AggreFact",
    "rank19": "Rank19 (Falke et al. 2019)",
    "summeval": "SummEval",
}


def published_title(name: str) -> str:
    """A published-only benchmark's title ('rank19' -> 'Rank19 (Falke et al. 2019)'); an
    unknown name comes back with its underscores as spaces."""
    return PUBLISHED_TITLES.get(name) or name.replace("_", " ")


@dataclass(frozen=True)
class DefaultView:
    """A benchmark's board as it opens: level, metric key ('metric' or 'metric@grader')."""

    unit: str
    metric_key: str


def default_view(dims: pd.DataFrame, primary_metric: str | None) -> DefaultView | None:
    """The view the leaderboard opens on for a benchmark (overall, first level, primary
    metric when it has numbers there), or None when the benchmark has no number at all."""
    if dims.empty:
        return None
    unit = sorted(dims["unit"].unique(), key=lambda u: (u != "summary", u))[0]
    d = dims[(dims["unit"] == unit) & (dims["slice_kind"] == "overall")]
    if d.empty:
        return None
    # the metric the leaderboard's picker puts first (L.options: the primary, then ungraded)
    pairs = sorted(
        {
            (m, g if isinstance(g, str) else None)
            for m, g in zip(d["metric"], d["grader"], strict=True)
        },
        key=lambda mg: (mg[0] != primary_metric, mg[1] is not None, mg[0], mg[1] or ""),
    )
    m, g = pairs[0]
    return DefaultView(unit, m if g is None else f"{m}@{g}")


@dataclass(frozen=True)
class SubsetView:
    """Where a benchmark's published numbers are when none is on Overall: one level, one
    slice kind (its subsets, e.g. QAGS's cnndm and xsum) and one metric."""

    unit: str
    slice_kind: str
    metric: str
    values: tuple[str, ...]


def subset_view(
    dims: pd.DataFrame, primary_metric: str | None, unit: str | None = None
) -> SubsetView | None:
    """The subsets whose published numbers a card lists when its Overall view has none (QAGS,
    LongSciVerify and TofuEval are published per subset only): the card's level when it has
    some (else the first level with any, summary first), the slice kind with the fewest
    subsets, the primary metric when published there (else the most published one). None when
    the benchmark has no published number off Overall."""
    if dims.empty:
        return None
    d = dims[(dims["source"] == "reported") & (dims["slice_kind"] != "overall")]
    if d.empty:
        return None
    units = sorted(d["unit"].unique(), key=lambda u: (u != unit, u != "summary", u))
    d = d[d["unit"] == units[0]]
    metrics = d.groupby("metric")["n"].sum().sort_values(ascending=False, kind="mergesort")
    metric = str(primary_metric if primary_metric in metrics.index else metrics.index[0])
    d = d[d["metric"] == metric]
    sizes = d.groupby("slice_kind")["slice_value"].nunique()
    kind = str(sorted(sizes.index, key=lambda k: (sizes[k], k))[0])
    values = sorted({str(v) for v in d[d["slice_kind"] == kind]["slice_value"]})
    return SubsetView(str(units[0]), kind, metric, tuple(values))


# a person's or an oracle's number is a reference for the card, not a detector that can lead
REFERENCE_KINDS = ("human", "baseline")
TABLE_ROWS = 5  # the board's best rows on a card
TABLE_RUNS = 3  # FactBoard's best runs on a card, when they are not among those
TIE_COLUMN = "Tied with best run"


@dataclass(frozen=True)
class Card:
    """One benchmark's part of the front page: its lines (plain sentences, shown as text), the
    few best rows of its board, and a reference line (human performance) when published."""

    lines: tuple[str, ...]
    table: pd.DataFrame
    reference: str = ""


def short_source(source: object) -> str:
    """A source without its address: 'LLM-AggreFact leaderboard snapshot (2025-09-08),
    https://…' -> 'LLM-AggreFact leaderboard snapshot (2025-09-08)'; folded sources (';')
    are shortened one by one."""
    if not isinstance(source, str) or not source.strip():
        return fmt.MISSING
    parts = [s.split(", http")[0].split(" http")[0].strip() for s in source.split(";")]
    return "; ".join(dict.fromkeys(p for p in parts if p))


def _is_run(rows: pd.DataFrame) -> pd.Series:
    return rows["origin_code"] != "reported"


def _kind_code(rows: pd.DataFrame) -> pd.Series:
    return rows["kind_code"].fillna("").astype(str)


def _run_ranks(rows: pd.DataFrame) -> list[int | None]:
    ranks = rows["rank"] if "rank" in rows else pd.Series([None] * len(rows), index=rows.index)
    return [int(r) if fmt.finite(r) else None for r in ranks.astype("Float64").astype(object)]


def _detectors(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with a number that are detectors (not human performance, not an oracle);
    FactBoard runs always count."""
    have = rows[rows["value"].notna()]
    det = have[_is_run(have) | ~_kind_code(have).isin(REFERENCE_KINDS)]
    return det if len(det) else have


def _coverage_words(coverage: object) -> str:
    """'10 domains: podcast, …' -> '10 domains'."""
    return coverage.split(":")[0].strip() if isinstance(coverage, str) else ""


def _score(row: pd.Series) -> str:
    return fmt.value_ci(row["value"], row.get("ci_low"), row.get("ci_high"))


def _source(row: pd.Series) -> str:
    if row["origin_code"] == "reported":
        return f"published: {short_source(row.get('source'))}"
    return str(row.get("source") or "FactBoard run")


def _table_source(row: pd.Series) -> str:
    """A table cell's source: the first source alone, '+ 1 more' when a published row folds
    several (the headline and the leaderboard name them all), so that the cell fits."""
    if row["origin_code"] != "reported":
        return _source(row)
    parts = short_source(row.get("source")).split("; ")
    first = parts[0].split(" gives ")[0]
    return first + (f" + {len(parts) - 1} more" if len(parts) > 1 else "")


def card(
    rows: pd.DataFrame, metric_title: str, published_elsewhere: bool = False, k: int = TABLE_ROWS
) -> Card:
    """The card of one board. rows: the board's rows, best first (build_board or
    published_rows). published_elsewhere: the benchmark has published numbers on other
    slices (per subset) but none on this view, so no run is said to lead it."""
    det = _detectors(rows)
    if det.empty:
        return Card(("No number yet.",), _table(rows.iloc[0:0]))
    top = det.iloc[0]
    runs = rows[_is_run(rows) & rows["value"].notna()]
    n_published = int((~_is_run(rows) & rows["value"].notna()).sum())
    lines: list[str] = []
    top_is_run = top["origin_code"] != "reported"
    if not (top_is_run and published_elsewhere):
        lines.append(
            f"{top['model']} leads the board: {metric_title} {_score(top)} ({_source(top)})."
        )
    lines.append(_runs_line(runs, top if not published_elsewhere else None, metric_title))
    if len(runs) and n_published and not top_is_run:
        best = runs.iloc[0]
        a, b = _coverage_words(top.get("coverage")), _coverage_words(best.get("coverage"))
        if a and b and a != b:
            lines.append(
                f"They cover different data: {top['model']} {a}, {best['model']} {b}; "
                "published numbers carry no CI and are not tested against runs."
            )
        else:
            lines.append("Published numbers carry no CI and are not tested against runs.")
    pick = _card_rows(det, runs, k)
    ref = rows[~_is_run(rows) & (_kind_code(rows) == "human") & rows["value"].notna()]
    reference = ""
    if len(ref):
        h = ref.iloc[0]
        reference = (
            f"For reference, human performance: {metric_title} {fmt.number(h['value'])} "
            f"({_source(h)})."
        )
    return Card(tuple(lines), _table(pick, runs), reference)


def _runs_line(runs: pd.DataFrame, top: pd.Series | None, metric_title: str) -> str:
    """The sentence on FactBoard's own runs, which says that it is about them alone."""
    if runs.empty:
        return (
            "No FactBoard run yet: published numbers only, without CIs, so whether a lead is "
            "significant cannot be tested."
        )
    best = runs.iloc[0]
    same = top is not None and top["origin_code"] != "reported" and top.name == best.name
    who = (
        "Among FactBoard runs, it"
        if same
        else (f"Best FactBoard run: {best['model']}, {metric_title} {_score(best)}. It")
    )
    n = len(runs)
    if n == 1:
        return (
            "It is the only FactBoard run."
            if same
            else f"Best FactBoard run: {best['model']}, {metric_title} {_score(best)}, the only "
            "FactBoard run."
        )
    ranks = _run_ranks(runs)
    if ranks[0] is None:
        return f"{who} is not tested against the other {fmt.plural(n - 1, 'FactBoard run')}."
    tied = sum(1 for r in ranks[1:] if r == 1)
    if tied == 0:
        return (
            f"{who} is significantly ahead of every other FactBoard run "
            f"({fmt.plural(n - 1, 'run')}, 95%)."
        )
    return (
        f"{who} is statistically tied with {fmt.plural(tied, 'other FactBoard run')} (95%): "
        "its lead among FactBoard runs is not significant."
    )


def _card_rows(det: pd.DataFrame, runs: pd.DataFrame, k: int) -> pd.DataFrame:
    """The board's k best detectors, and FactBoard's best runs when they are not among them,
    in the board's order."""
    keep = list(det.index[:k])
    keep += [i for i in runs.index[:TABLE_RUNS] if i not in keep]
    return det.loc[[i for i in det.index if i in set(keep)]] if len(det) else det


def _table(pick: pd.DataFrame, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """A card's rows as shown: model, kind, score with its 95% CI, the tie with FactBoard's
    best run (runs only), source."""
    best = runs.index[0] if runs is not None and len(runs) else None
    rank_of = dict(zip(runs.index, _run_ranks(runs), strict=True)) if runs is not None else {}
    ties = []
    for i, r in pick.iterrows():
        if r["origin_code"] == "reported":
            ties.append("")
        elif i == best:
            ties.append("best run")
        else:
            rank = rank_of.get(i)
            ties.append("" if rank is None else "tied" if rank == 1 else "no")
    kinds = pick["kind_code"].map(lambda c: kind_label(c) if isinstance(c, str) else "")
    out = pd.DataFrame(
        {
            "Model": pick["model"].astype(str).tolist(),
            "Kind": kinds.tolist(),
            "Score [95% CI]": [_score(r) for _, r in pick.iterrows()],
            TIE_COLUMN: ties,
            "Source": [_table_source(r) for _, r in pick.iterrows()],
        }
    )
    if best is None:  # no FactBoard run: nothing is tested, no empty column
        out = out.drop(columns=TIE_COLUMN)
    return out.reset_index(drop=True)


def subset_lines(
    best: Sequence[tuple[str, pd.DataFrame]], view: SubsetView, metric_title: str
) -> list[str]:
    """'dataset: cnndm: best published QAGS, Pearson r 0.545 (QAGS paper, Table 1)', one per
    subset, from each subset's published rows (best first)."""
    out = []
    for value, rows in best:
        det = _detectors(rows)
        if det.empty:
            continue
        r = det.iloc[0]
        out.append(
            f"{slice_text(view.slice_kind, value)}: best published {r['model']}, "
            f"{metric_title} {_score(r)} ({short_source(r.get('source'))})"
        )
    return out


def counts_text(rows: pd.DataFrame) -> str:
    """'1 FactBoard run, 23 published numbers'."""
    n_runs = int(_is_run(rows).sum())
    return (
        f"{fmt.plural(n_runs, 'FactBoard run')}, "
        f"{fmt.plural(len(rows) - n_runs, 'published number')}"
    )
