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
    """The splits a template lists (evaluator.submissions.service.template_splits)."""
    return submit.template_splits(spec_splits, split)


def template_csv(benchmark: str, spec_splits: Sequence[str], split: str) -> str:
    """The prediction-file template the CLI writes too (`python -m evaluator template`): the
    sample ids to predict with their split, dev ids first, and empty label, score and
    explanation columns."""
    return submit.template_csv(benchmark, split)


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
    return match.wrong_benchmark_note(data, filename, chosen, problems, title, root)
