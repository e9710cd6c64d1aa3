"""The compare page's words, tables and charts, from a Comparison (explorer.compare): the
verdict on the difference, the per-slice table and chart, the samples the runs label differently
and, on correlation benchmarks, where two metrics rank the samples most differently. Pure pandas
(altair imported where a chart is drawn); numbers written by evaluator.core.formatting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from evaluator.core import formatting as F
from evaluator.core.vocabulary import lower_is_better
from explorer import leaderboard as L
from explorer import samples as X

SLICE_COLUMNS = ["slice", "n", "value_a", "value_b", "A − B", "95% CI", "p", "significant"]
SIGNIFICANCE = {True: "CI excludes 0", False: "CI contains 0"}


def better(metric: str) -> str:
    """Which way is better for the metric, in a word."""
    return "lower" if lower_is_better(metric) else "higher"


def significant(ci_low: float, ci_high: float) -> bool:
    """A difference is significant at 5% when its 95% CI excludes 0."""
    return bool(ci_low > 0 or ci_high < 0)


def verdict(ci_low: float, ci_high: float, n: int) -> str:
    """The CI of the difference and what it means, as markdown."""
    head = (
        f"95% CI of the difference: **{F.signed_ci(ci_low, ci_high)}** on "
        f"{F.plural(n, 'sample')} both runs scored. "
    )
    if significant(ci_low, ci_high):
        return head + "The CI excludes 0: the difference is significant at 5%."
    return head + "The CI contains 0: the runs are not distinguishable on this metric."


def version_note(title: str, version_a: str, version_b: str) -> str | None:
    """What the reader must know when the two runs scored different benchmark versions."""
    if version_a == version_b:
        return None
    return (
        f"The runs were scored on different versions of {title} ({version_a} and "
        f"{version_b}); only the samples both versions share (same sample id) are compared."
    )


def slice_table(slices: pd.DataFrame) -> pd.DataFrame:
    """Per-slice differences with a readable slice name ('Domain: news'), the CI and p-value
    written by the formatter, and significance in words."""
    sl = slices.copy()
    sl["slice"] = sl["slice_kind"].map(L.slice_noun) + ": " + sl["slice_value"].astype(str)
    sig = (sl["ci_low"] > 0) | (sl["ci_high"] < 0)
    sl["significant"] = sig.map({True: "yes", False: "no"})
    sl["significance"] = sig.map(SIGNIFICANCE)
    sl["95% CI"] = [F.signed_ci(lo, hi) for lo, hi in zip(sl["ci_low"], sl["ci_high"], strict=True)]
    sl["p"] = sl["p_value"].map(F.p_value)
    sl["A − B"] = sl["difference"].map(F.signed)  # the minus sign the CI uses
    return sl


def difference_chart(sl: pd.DataFrame, title: str) -> Any:
    """A - B per slice (slice_table rows) with its paired-bootstrap 95% CI and a zero line;
    colour says in words whether the CI excludes 0. None when there is nothing to draw."""
    if sl.empty:
        return None
    import altair as alt

    order = sl["slice"].tolist()
    d = sl[["slice", "n", "difference", "ci_low", "ci_high", "p", "significance"]]
    base = alt.Chart(d).encode(
        y=alt.Y("slice:N", sort=order, title=None, axis=alt.Axis(labelLimit=280)),
        color=alt.Color(
            "significance:N",
            title="95% CI",
            scale=alt.Scale(domain=list(SIGNIFICANCE.values()), range=["#d62728", "#7f7f7f"]),
        ),
        tooltip=[
            alt.Tooltip("slice:N"),
            alt.Tooltip("n:Q", format=","),
            alt.Tooltip("difference:Q", title=title, format="+.3f"),
            alt.Tooltip("ci_low:Q", title="CI low", format="+.3f"),
            alt.Tooltip("ci_high:Q", title="CI high", format="+.3f"),
            alt.Tooltip("p:N"),
        ],
    )
    rule = base.mark_rule(strokeWidth=2).encode(x=alt.X("ci_low:Q", title=title), x2="ci_high:Q")
    point = base.mark_point(filled=True, size=60).encode(x="difference:Q")
    zero = (
        alt.Chart(pd.DataFrame({"x": [0.0]}))
        .mark_rule(strokeDash=[4, 4], color="#444")
        .encode(x="x:Q")
    )
    return (zero + rule + point).properties(height=max(180, 28 * len(d) + 50), width="container")


def disagreement_table(
    dis: pd.DataFrame, link: Callable[[str], str], unit: str = "summary"
) -> pd.DataFrame:
    """The samples the two runs label differently, each with a link (link(sample_id)); the
    text column is named after the level ('summary' or 'sentence'), as on the Samples page."""
    return pd.DataFrame(
        {
            "open": [link(i) for i in dis["sample_id"]],
            "sample": dis["sample_id"],
            "domain": dis["domain"],
            "gold": dis["label"].map(X.label_text),
            "A says": dis["pred_a"].map(X.label_text),
            "B says": dis["pred_b"].map(X.label_text),
            "right": dis["right"],
            unit: dis["summary"],
        }
    )


def disagreement_summary(dis: pd.DataFrame) -> str:
    counts = dis["right"].value_counts()
    return (
        f"**{F.count(len(dis))}** {'sample gets' if len(dis) == 1 else 'samples get'} different "
        f"labels: A is right on {F.count(counts.get('A', 0))}, B on "
        f"{F.count(counts.get('B', 0))}."
    )


# --------------------------------------------------------------------------------------------
# correlation benchmarks: where two metrics rank the samples most differently

RANK_HELP = (
    "Each sample's rank among the samples both metrics and people rated, as a percentile "
    "(0 = rated least consistent, 100 = most). 'A − B' is A's rank minus B's: +100 means A "
    "rates it the most consistent and B the least. Sorted by the size of that gap."
)


def rank_table(
    ranks: pd.DataFrame, link: Callable[[str], str], unit: str = "summary"
) -> pd.DataFrame:
    """compare.rank_disagreements rows ready to show: a link, the sample, each metric's rank
    beside the human rank, the gap, the human score and the text."""
    return pd.DataFrame(
        {
            "open": [link(i) for i in ranks["sample_id"]],
            "sample": ranks["sample_id"],
            "domain": ranks["domain"],
            "A − B": ranks["gap"].astype(float).round(0),
            "A's rank": ranks["rank_a"].astype(float).round(0),
            "B's rank": ranks["rank_b"].astype(float).round(0),
            "human rank": ranks["human_rank"].astype(float).round(0),
            "human score": ranks["human_score"].astype(float),
            unit: ranks["summary"],
        }
    )


def rank_summary(ranks: pd.DataFrame, unit: str = "summary") -> str:
    """One sentence: how often the two metrics' ranks are far apart, and who is closer to
    people there."""
    n = len(ranks)
    if n == 0:
        return ""
    far = ranks[ranks["gap"].abs() >= 50]
    closer_a = int(
        (
            (far["rank_a"] - far["human_rank"]).abs() < (far["rank_b"] - far["human_rank"]).abs()
        ).sum()
    )
    noun = X.unit_plural(unit) if n != 1 else unit
    return (
        f"On **{F.count(len(far))}** of {F.count(n)} {noun} the two metrics' ranks are at least "
        f"50 points apart; there A is closer to the human rank on {F.count(closer_a)} and B on "
        f"{F.count(len(far) - closer_a)}."
    )


def rank_scatter(ranks: pd.DataFrame, label_a: str, label_b: str, unit: str = "summary") -> Any:
    """Each metric's rank against the human rank, one panel per run (points on the diagonal:
    the metric ranks the sample where people do). None when there is nothing to draw."""
    if ranks.empty:
        return None
    import altair as alt

    panels = []
    for name, rank, score in (
        (f"A: {label_a}", "rank_a", "score_a"),
        (f"B: {label_b}", "rank_b", "score_b"),
    ):
        d = pd.DataFrame(
            {
                "sample": ranks["sample_id"],
                "human rank": ranks["human_rank"].astype(float),
                "metric rank": ranks[rank].astype(float),
                "human score": ranks["human_score"].astype(float),
                "metric score": ranks[score].astype(float),
            }
        )
        axis = alt.Scale(domain=[0, 100])
        diagonal = (
            alt.Chart(pd.DataFrame({"x": [0.0, 100.0]}))
            .mark_line(strokeDash=[4, 4], color="#888")
            .encode(x=alt.X("x:Q", scale=axis), y=alt.Y("x:Q", scale=axis))
        )
        points = (
            alt.Chart(d)
            .mark_circle(size=28, opacity=0.55)
            .encode(
                x=alt.X("human rank:Q", title=f"rank by the human score ({unit})", scale=axis),
                y=alt.Y("metric rank:Q", title="rank by the metric", scale=axis),
                tooltip=[
                    alt.Tooltip("sample:N"),
                    alt.Tooltip("human score:Q", format=".3f"),
                    alt.Tooltip("metric score:Q", format=".4g"),
                    alt.Tooltip("human rank:Q", format=".0f"),
                    alt.Tooltip("metric rank:Q", format=".0f"),
                ],
            )
        )
        title = alt.TitleParams(name[:80], fontSize=12, fontWeight="normal")
        panels.append((diagonal + points).properties(width=280, height=280, title=title))
    return alt.hconcat(*panels)
