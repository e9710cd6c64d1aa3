"""Which ingested benchmark an uploaded prediction file's sample ids belong to.

A file made for one benchmark and uploaded against another is rejected for thousands of unknown
ids; `looks_like` names the benchmark the ids do match so that the message can say so. Pure
apart from reading the ingested benchmarks' sample ids (evaluator.store.ingested)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from evaluator.store import ingested, layout
from evaluator.submissions import validation

# the share of the file's ids a benchmark must hold to be named as the one the file looks like
MIN_SHARE = 0.5


@dataclass(frozen=True)
class Match:
    benchmark: str
    share: float  # of the file's ids that are this benchmark's sample ids
    found: int


def uploaded_ids(data: bytes, filename: str | None = None) -> set[str]:
    """Every sample id a prediction file has a row for, whatever else is wrong with it (empty
    when it cannot be read at all)."""
    return set(validation.validate_predictions(data, filename).seen_ids)


def benchmark_ids(name: str, data_root: Path | None = None) -> set[str]:
    f = layout.benchmark_dir(name, data_root) / layout.SAMPLES_FILE
    return {str(i) for i in pq.read_table(f, columns=["sample_id"]).column(0).to_pylist()}


def overlaps(
    ids: Collection[str], data_root: Path | None = None, names: Collection[str] | None = None
) -> list[Match]:
    """For each ingested benchmark (or those in `names`), how many of `ids` it holds, best
    first (ties by name)."""
    want = set(ids)
    out = []
    for name in sorted(names if names is not None else ingested.names(data_root)):
        found = len(want & benchmark_ids(name, data_root)) if want else 0
        out.append(Match(name, found / len(want) if want else 0.0, found))
    return sorted(out, key=lambda m: (-m.share, m.benchmark))


def looks_like(ids: Collection[str], chosen: str, data_root: Path | None = None) -> Match | None:
    """Another benchmark that holds at least MIN_SHARE of the ids and more of them than the
    chosen one does, or None."""
    ms = overlaps(ids, data_root)
    mine = next((m.share for m in ms if m.benchmark == chosen), 0.0)
    for m in ms:
        if m.benchmark != chosen and m.share >= MIN_SHARE and m.share > mine:
            return m
    return None


def mismatch_message(
    match: Match, chosen: str, title: Callable[[str], str] = str, advice: str | None = None
) -> str:
    """One sentence for the person who uploaded the file (title: a benchmark's display name;
    advice: what to do, by default the Submit page's)."""
    other, mine = title(match.benchmark), title(chosen)
    if advice is None:
        advice = f"Pick {other} above and upload it again."
    return (
        f"This looks like a {other} file: {match.found:,} of its sample ids ({match.share:.0%}) "
        f"belong to {other}, not to {mine}. {advice}"
    )


def wrong_benchmark_note(
    data: bytes,
    filename: str | None,
    chosen: str,
    problems: Sequence[str],
    title: Callable[[str], str] = str,
    root: Path | None = None,
    advice: Callable[[str], str] | None = None,
) -> str | None:
    """When a rejected file's ids are not the chosen benchmark's, which benchmark they match
    (the Submit page and `python -m evaluator submit` alike); advice: what to do, given the
    benchmark the file matches."""
    if not any("not in the benchmark" in p for p in problems):
        return None
    found = looks_like(uploaded_ids(data, filename), chosen, root)
    if found is None:
        return None
    return mismatch_message(found, chosen, title, advice(found.benchmark) if advice else None)
