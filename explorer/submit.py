"""The Submit page's words and files: the template (dev and test ids), a scored run's results
with human labels, the links to its board row and samples, and which benchmark a rejected
file looks like (evaluator.submissions.match). Pure functions; see docs/ARCHITECTURE.md."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from evaluator.core.types import RunRecord
from evaluator.core.vocabulary import metric_label
from evaluator.submissions import match
from evaluator.submissions import service as submit
from explorer.words import level_label, slice_text


def template_splits(spec_splits: Sequence[str], split: str) -> list[str]:
    """The splits a template lists: dev first when test is scored and the benchmark has dev
    (a scores-only detector needs dev scores for its threshold), then the scored split."""
    if split != "dev" and "dev" in spec_splits:
        return ["dev", split]
    return [split]


def template_csv(benchmark: str, spec_splits: Sequence[str], split: str) -> str:
    """The sample ids to predict (template_splits), with empty label, score and explanation
    columns: one header, dev ids before test ids."""
    parts = [submit.template_csv(benchmark, s) for s in template_splits(spec_splits, split)]
    head, *rest = parts
    return head + "".join(p.split("\n", 1)[1] for p in rest)


def results_table(record: RunRecord, overall_only: bool = True) -> pd.DataFrame:
    """A scored run's numbers with the board's words: level, slice, metric label, value, 95%
    CI and n; a judge column only where a number has one."""
    rows = [
        {
            "split": r.split,
            "level": level_label(r.unit),
            "slice": slice_text(r.slice_kind, r.slice_value),
            "metric": metric_label(r.metric),
            "judge": r.grader or "",
            "value": r.value,
            "95% CI": ci_text(r.ci_low, r.ci_high),
            "n": r.n,
        }
        for r in record.results
        if not overall_only or r.slice_kind == "overall"
    ]
    out = pd.DataFrame(
        rows, columns=["split", "level", "slice", "metric", "judge", "value", "95% CI", "n"]
    )
    if not (out["judge"] != "").any():
        out = out.drop(columns="judge")
    return out


def ci_text(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "—"
    return f"{low:.3f} – {high:.3f}"


def board_params(record: RunRecord) -> dict[str, str]:
    """The leaderboard's URL parameters that show this run's row: its benchmark, the level and
    metric of its first overall number, the Overall view, and its model name in the search."""
    first = next((r for r in record.results if r.slice_kind == "overall"), None)
    params = {"benchmark": record.benchmark, "slice": "overall", "q": record.model.name}
    if first is not None:
        params |= {"unit": first.unit, "metric": first.metric}
    return params


def samples_params(record: RunRecord) -> dict[str, str]:
    """The Samples page's URL parameters that list the samples this run gets wrong."""
    first = next((r for r in record.results if r.slice_kind == "overall"), None)
    params = {"benchmark": record.benchmark, "wrong": record.run_id}
    if first is not None:
        params["unit"] = first.unit
    return params


def wrong_benchmark_note(
    data: bytes,
    filename: str | None,
    chosen: str,
    problems: Sequence[str],
    title: Callable[[str], str] = str,
    root: Path | None = None,
) -> str | None:
    """When a rejected file's ids are not the chosen benchmark's, which benchmark they match."""
    if not any("not in the benchmark" in p for p in problems):
        return None
    found = match.looks_like(match.uploaded_ids(data, filename), chosen, root)
    return match.mismatch_message(found, chosen, title) if found else None
