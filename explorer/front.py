"""The front page's logic: for each benchmark, who is best and who is statistically tied.

Pure functions over the leaderboard's rows (explorer.leaderboard.build_board): the page
(views/home.py) builds each benchmark's default board (overall, first level, the benchmark's
primary metric) through the cached `explorer.ui.board` and shows the few best rows. A run's
rank is 1 + the number of runs significantly better than it, so the runs ranked 1 are the
leader and everything the board cannot tell apart from it. See docs/ARCHITECTURE.md ("Pages").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

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


def ci_text(value: float, low: float, high: float) -> str:
    """'0.712 [0.690, 0.734]', or '0.712' when the number has no CI (published numbers)."""
    if not _finite(value):
        return "—"
    if _finite(low) and _finite(high):
        return f"{value:.3f} [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}"


def _finite(v: object) -> bool:
    try:
        return v is not None and math.isfinite(float(v))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def leaders(rows: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """The best FactBoard runs of a board (its rows, best first), at most k, with whether each
    is statistically tied with the leader (rank 1). A board without runs gives its best
    published rows instead (no CI, not ranked)."""
    runs = rows[(rows["origin_code"] != "reported") & rows["value"].notna()]
    published = runs.empty
    pick = (rows[rows["value"].notna()] if published else runs).head(k)
    tied = [
        (not published) and _finite(r) and int(r) == 1
        for r in pick["rank"].astype("Float64").fillna(float("nan"))
    ]
    return pd.DataFrame(
        {
            "Rank": [
                str(int(r)) if _finite(r) else "—"
                for r in pick["rank"].astype("Float64").fillna(float("nan"))
            ],
            "Model": pick["model"].astype(str).tolist(),
            "Kind": pick["kind"].astype(str).tolist(),
            "Score [95% CI]": [
                ci_text(v, lo, hi)
                for v, lo, hi in zip(pick["value"], pick["ci_low"], pick["ci_high"], strict=True)
            ],
            "Tied with the leader": [
                ("leader" if i == 0 else "yes") if t else "" for i, t in enumerate(tied)
            ],
            "Source": pick["source"].astype(str).tolist(),
        }
    ).reset_index(drop=True)


def tie_line(table: pd.DataFrame, total_runs: int) -> str:
    """One sentence on the lead: 'X leads; 2 others are statistically tied with it.'"""
    if table.empty:
        return "No number yet."
    if (table["Rank"] == "—").all():
        return (
            "Published numbers only: papers give no per-sample predictions, so no test of "
            "the lead is possible."
        )
    leader = table["Model"].iloc[0]
    tied = int((table["Tied with the leader"] == "yes").sum())
    if total_runs < 2:
        return f"{leader} is the only FactBoard run."
    if tied <= 0:
        return f"{leader} leads, significantly ahead of every other run (95%)."
    more = " (and possibly more below)" if tied == len(table) - 1 else ""
    return (
        f"{leader} leads, but {tied} other run(s){more} are statistically tied with it "
        "(95%): the lead is not significant."
    )


def best_line(rows: pd.DataFrame, metric_title: str) -> str:
    """'best published: GPT-4, BAcc 0.821 (SummEdits paper, Table 9)'."""
    have = rows[rows["value"].notna()]
    if have.empty:
        return "No number yet."
    r = have.iloc[0]
    return f"best published: {r['model']}, {metric_title} {r['value']:.3f} ({r['source']})"
