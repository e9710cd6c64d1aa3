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

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from evaluator.core import formatting as fmt
from evaluator.core.vocabulary import canonical_model, kind_label, lower_is_better
from explorer import leaderboard as L
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


# the columns a card reads; a board's rows are turned into plain records once (a board
# frame is wide, and pandas row access on it costs more than the whole card)
_COLUMNS = (
    "model",
    "kind_code",
    "origin_code",
    "value",
    "ci_low",
    "ci_high",
    "rank",
    "source",
    "coverage",
)
Row = dict[str, object]


def _records(rows: pd.DataFrame) -> list[Row]:
    """The rows with a number, best first, as plain records (`run`: a FactBoard run; `rank`:
    an int or None; `i`: the position on the board)."""
    have = rows[[c for c in _COLUMNS if c in rows.columns]]
    out: list[Row] = []
    for i, rec in enumerate(have.to_dict("records")):
        r: Row = {str(k): v for k, v in rec.items()}
        if not fmt.finite(r.get("value")):
            continue
        rank = r.get("rank")
        r["rank"] = int(float(rank)) if fmt.finite(rank) else None  # type: ignore[arg-type]
        r["run"] = r.get("origin_code") != "reported"
        r["i"] = i
        out.append(r)
    return out


def _is_reference(r: Row) -> bool:
    return not r["run"] and r.get("kind_code") in REFERENCE_KINDS


def _detectors(recs: list[Row]) -> list[Row]:
    """The rows that are detectors (not human performance, not an oracle); FactBoard runs
    always count."""
    return [r for r in recs if not _is_reference(r)] or recs


def _coverage_words(coverage: object) -> str:
    """'10 domains: podcast, …' -> '10 domains'."""
    return coverage.split(":")[0].strip() if isinstance(coverage, str) else ""


def _score(r: Row) -> str:
    return fmt.value_ci(r["value"], r.get("ci_low"), r.get("ci_high"))


def _source(r: Row) -> str:
    if not r["run"]:
        return f"published: {short_source(r.get('source'))}"
    return str(r.get("source") or "FactBoard run")


def _table_source(r: Row) -> str:
    """A table cell's source: the first source alone, '+ 1 more' when a published row folds
    several (the headline and the leaderboard name them all), so that the cell fits."""
    if r["run"]:
        return _source(r)
    parts = short_source(r.get("source")).split("; ")
    first = parts[0].split(" gives ")[0]
    return first + (f" + {len(parts) - 1} more" if len(parts) > 1 else "")


def card(
    rows: pd.DataFrame, metric_title: str, published_elsewhere: bool = False, k: int = TABLE_ROWS
) -> Card:
    """The card of one board. rows: the board's rows, best first (build_board or
    published_rows). published_elsewhere: the benchmark has published numbers on other
    slices (per subset) but none on this view, so no run is said to lead it."""
    recs = _records(rows)
    det = _detectors(recs)
    if not det:
        return Card(("No number yet.",), _table([], []))
    top = det[0]
    runs = [r for r in recs if r["run"]]
    n_published = len(recs) - len(runs)
    lines: list[str] = []
    if not (top["run"] and published_elsewhere):
        lines.append(
            f"{top['model']} leads the board: {metric_title} {_score(top)} ({_source(top)})."
        )
    lines.append(_runs_line(runs, None if published_elsewhere else top, metric_title))
    if runs and n_published and not top["run"]:
        best = runs[0]
        a, b = _coverage_words(top.get("coverage")), _coverage_words(best.get("coverage"))
        if a and b and a != b:
            lines.append(
                f"They cover different data: {top['model']} {a}, {best['model']} {b}; "
                "published numbers carry no CI and are not tested against runs."
            )
        else:
            lines.append("Published numbers carry no CI and are not tested against runs.")
    human = [r for r in recs if not r["run"] and r.get("kind_code") == "human"]
    reference = ""
    if human:
        h = human[0]
        reference = (
            f"For reference, human performance: {metric_title} {fmt.number(h['value'])} "
            f"({_source(h)})."
        )
    return Card(tuple(lines), _table(_card_rows(det, runs, k), runs), reference)


def _runs_line(runs: list[Row], top: Row | None, metric_title: str) -> str:
    """The sentence on FactBoard's own runs, which says that it is about them alone."""
    if not runs:
        return (
            "No FactBoard run yet: published numbers only, without CIs, so whether a lead is "
            "significant cannot be tested."
        )
    best = runs[0]
    same = top is not None and top is best
    named = f"Best FactBoard run: {best['model']}, {metric_title} {_score(best)}"
    if len(runs) == 1:
        return "It is the only FactBoard run." if same else f"{named}, the only FactBoard run."
    who = "Among FactBoard runs, it" if same else f"{named}. It"
    others = len(runs) - 1
    if best["rank"] is None:
        return f"{who} is not tested against the other {fmt.plural(others, 'FactBoard run')}."
    tied = sum(1 for r in runs[1:] if r["rank"] == 1)
    if tied == 0:
        return (
            f"{who} is significantly ahead of every other FactBoard run "
            f"({fmt.plural(others, 'run')}, 95%)."
        )
    return (
        f"{who} is statistically tied with {fmt.plural(tied, 'other FactBoard run')} (95%): "
        "its lead among FactBoard runs is not significant."
    )


def _card_rows(det: list[Row], runs: list[Row], k: int) -> list[Row]:
    """The board's k best detectors, and FactBoard's best runs when they are not among them,
    in the board's order."""
    keep = {id(r) for r in det[:k]} | {id(r) for r in runs[:TABLE_RUNS]}
    return [r for r in det if id(r) in keep]


def _table(pick: list[Row], runs: list[Row]) -> pd.DataFrame:
    """A card's rows as shown: model, kind, score with its 95% CI, the tie with FactBoard's
    best run (runs only), source."""
    best = runs[0] if runs else None
    ties = []
    for r in pick:
        if not r["run"]:
            ties.append("")
        elif r is best:
            ties.append("best run")
        else:
            ties.append("" if r["rank"] is None else "tied" if r["rank"] == 1 else "no")
    out = pd.DataFrame(
        {
            "Model": [str(r["model"]) for r in pick],
            "Kind": [kind_label(str(r.get("kind_code") or "")) for r in pick],
            "Score [95% CI]": [_score(r) for r in pick],
            TIE_COLUMN: ties,
            "Source": [_table_source(r) for r in pick],
        }
    )
    if best is None:  # no FactBoard run: nothing is tested, no empty column
        out = out.drop(columns=TIE_COLUMN)
    return out


def markdown_table(table: pd.DataFrame, escape: Callable[[object], str]) -> str:
    """A card's table as one Markdown table (one element for the browser to draw, where a
    static table element renders each cell as Markdown of its own); escape: the page's
    Markdown escape for text from data (a cell is one line: line breaks become spaces)."""

    def cell(v: object) -> str:
        text = " ".join(str(v).split())
        return escape(text) if text else " "

    head = "| " + " | ".join(cell(c) for c in table.columns) + " |"
    rule = "|" + "|".join(" --- " for _ in table.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(False)]
    return "\n".join([head, rule, *body])


def subset_lines(reported: pd.DataFrame, view: SubsetView, metric_title: str) -> list[str]:
    """'dataset: cnndm: best published QAGS, Pearson r 0.545 (QAGS paper, Table 1)', one per
    subset. reported: the published rows of the view's slice kind, every subset at once
    (explorer.queries.reported_results with no slice value); human performance and oracles
    are references, not detectors, as on a card."""
    rep = reported[(reported["metric"] == view.metric) & reported["value"].notna()]
    rep = rep[~rep["kind"].isin(REFERENCE_KINDS)].assign(
        origin_code="reported",
        coverage_set=rep["coverage"].fillna("").astype(str),
        config="",
    )
    out = []
    for value in view.values:
        # a model one source restates (QAGS's 0.175, printed 0.18 elsewhere) is one row,
        # with the paper's value, as on the leaderboard (L.fold_published)
        g = L.fold_published(rep[rep["slice_value"] == value].reset_index(drop=True))
        if g.empty:
            continue
        g = g.sort_values(
            ["value", "model"], ascending=[lower_is_better(view.metric), True], kind="mergesort"
        )
        r = g.iloc[0]
        out.append(
            f"{slice_text(view.slice_kind, value)}: best published "
            f"{canonical_model(str(r['model']))}, {metric_title} {fmt.number(r['value'])} "
            f"({short_source(r['source'])})"
        )
    return out


def counts_text(rows: pd.DataFrame) -> str:
    """'1 FactBoard run, 23 published numbers'."""
    n_runs = int((rows["origin_code"] != "reported").sum())
    return (
        f"{fmt.plural(n_runs, 'FactBoard run')}, "
        f"{fmt.plural(len(rows) - n_runs, 'published number')}"
    )
