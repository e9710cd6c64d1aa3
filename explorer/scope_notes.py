"""Notes for a table where FactBoard runs and published numbers stand together but were
computed on different samples of a benchmark (TofuEval: runs score the release's 6 summarizers,
the paper's Table 3 its 5). Pure functions of the rows' origins and the view."""

from __future__ import annotations

from collections.abc import Iterable


def _population_notes() -> dict[str, str]:
    from evaluator.benchmarks import tofueval

    return {tofueval.NAME: tofueval.PAPER_POPULATION}


def published_population(benchmark: str, origins: Iterable[str], slice_kind: str) -> str | None:
    """The note for a view of `benchmark` whose rows have these origin codes ('reported' for a
    published number): None unless runs and published numbers are shown together and the
    benchmark's runs and paper scored different samples; a per-summarizer view (each row
    one summarizer's samples) needs none."""
    note = _population_notes().get(benchmark)
    if note is None or slice_kind == "summarizer":
        return None
    codes = {str(o) for o in origins}
    if "reported" not in codes or not codes - {"reported"}:
        return None
    return note
