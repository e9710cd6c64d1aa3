"""The compare page's words and tables, from a Comparison (explorer.compare): the verdict on the
difference, the per-slice table and the disagreements with their links. Pure pandas."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from evaluator.core.vocabulary import lower_is_better
from explorer import leaderboard as L
from explorer import samples as X

SLICE_COLUMNS = [
    "slice",
    "n",
    "value_a",
    "value_b",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
    "significant",
]


def better(metric: str) -> str:
    """Which way is better for the metric, in a word."""
    return "lower" if lower_is_better(metric) else "higher"


def significant(ci_low: float, ci_high: float) -> bool:
    """A difference is significant at 5% when its 95% CI excludes 0."""
    return bool(ci_low > 0 or ci_high < 0)


def verdict(ci_low: float, ci_high: float, n: int) -> str:
    """The CI of the difference and what it means, as markdown."""
    head = (
        f"95% CI of the difference: **[{ci_low:+.3f}, {ci_high:+.3f}]** on "
        f"{n:,} samples both runs scored. "
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
    """Per-slice differences with a readable slice name ('Domain: news') and significance."""
    sl = slices.copy()
    sl["slice"] = sl["slice_kind"].map(L.slice_noun) + ": " + sl["slice_value"].astype(str)
    sl["significant"] = (sl["ci_low"] > 0) | (sl["ci_high"] < 0)
    return sl


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
        f"**{len(dis):,}** samples get different labels: A is right on "
        f"{int(counts.get('A', 0)):,}, B on {int(counts.get('B', 0)):,}."
    )
