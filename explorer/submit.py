"""The Submit page's words and files: the template (dev and test ids), a scored run's results
with human labels, the links to its board row and samples, and which benchmark a rejected
file looks like (evaluator.submissions.match). Pure functions; see docs/ARCHITECTURE.md."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from evaluator.core import formatting as F
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
    """A scored run's numbers with the board's words: level, slice, metric label, value and its
    95% CI as the board writes them (evaluator.core.formatting), and n; a judge column only
    where a number has one."""
    rows = [
        {
            "split": r.split,
            "level": level_label(r.unit),
            "slice": slice_text(r.slice_kind, r.slice_value),
            "metric": metric_label(r.metric),
            "judge": r.grader or "",
            "value": F.number(r.value),
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
    """'[0.499, 0.502]', the board's form; '—' without a CI."""
    return F.ci(low, high, missing=F.MISSING)


def counts_text(record: RunRecord) -> str:
    c = record.counts
    return (
        f"Samples: {F.count(c.n)}  ·  predicted {F.count(c.predicted)}  ·  missing "
        f"{F.count(c.missing)}  ·  unusable {F.count(c.unparsable)}"
    )


def rejected_text(n_problems: int, submission_id: str) -> str:
    return (
        f"{F.plural(n_problems, 'problem')} with submission {submission_id}: nothing was added "
        "to the board. Fix them all and upload again."
    )


def policy_label(policy: str, fixed_threshold: float | None = None) -> str:
    """How scores become labels, in plain words, for the policy picker."""
    best_on_dev = "the cut-off that works best on the file's dev rows"
    auto_scores = (
        f"scores in [0, 1] labelled at {fixed_threshold:g}, this benchmark's rule"
        if fixed_threshold is not None
        else best_on_dev
    )
    return {
        "auto": f"Automatic: the file's labels if it has them, else {auto_scores}",
        "labels": "The file's labels, as given",
        "dev": f"A cut-off on the scores: {best_on_dev}",
        "per-domain-dev": "One cut-off per domain, each the best on that domain's dev rows",
        "fixed": "A cut-off given below",
    }.get(policy, policy)


def how_to_text(splits: Sequence[str], fixed_threshold: float | None = None) -> str:
    """The three steps of a submission, for the top of the page (Markdown, no data in it)."""
    dev = "dev" in splits and "test" in splits
    if fixed_threshold is not None:
        scores = (
            f"**Only scores?** Scores in [0, 1] are read as probabilities and labelled at "
            f"{fixed_threshold:g} (this benchmark's rule): {fixed_threshold:g} or more is "
            "consistent."
        )
    elif dev:
        scores = (
            "**Only scores?** Keep the dev rows the template lists: FactBoard picks the cut-off "
            "that separates consistent from inconsistent best on them (balanced accuracy), then "
            "scores the test rows with it. A score at or above the cut-off counts as consistent."
        )
    else:
        scores = (
            "**Only scores?** This benchmark has no dev split to pick a cut-off on: give labels, "
            "or a fixed cut-off under *How scores become labels*."
        )
    return (
        "1. **Download the template** (the button above): one row per sample to predict"
        + (", dev rows first" if dev else "")
        + ".\n"
        "2. **Fill in** `label` (1 = consistent, 0 = inconsistent) or `score` (higher = more "
        "consistent), or both; `explanation` is optional.\n"
        "3. **Upload it** with your model's name: it is checked at once and scored with 95% "
        "confidence intervals.\n\n" + scores
    )


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
