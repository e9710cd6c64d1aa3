"""Where TofuEval runs (6 summarizers, Model-Extra included) stand beside the paper's Table 3
(5 summarizers, 1,479 summaries), a note says so; nowhere else."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evaluator.benchmarks import registry
from explorer import scope_notes as N


def test_the_note_stands_where_runs_and_table_3_meet() -> None:
    note = N.published_population("tofueval", ["reported", "evaluated"], "dataset")
    assert note is not None
    assert "Model-Extra" in note and "1,479" in note and "6 summarizers" in note


def test_no_note_without_both_or_per_summarizer() -> None:
    assert N.published_population("tofueval", ["reported"], "overall") is None
    assert N.published_population("tofueval", ["evaluated", "submitted"], "overall") is None
    assert N.published_population("tofueval", ["reported", "evaluated"], "summarizer") is None
    assert N.published_population("summedits", ["reported", "evaluated"], "overall") is None


def test_the_card_says_it_too() -> None:
    assert (
        N.published_population("tofueval", ["reported", "x"], "overall")
        in (registry.get("tofueval").card()["caveats"])
    )


def test_the_counts_in_the_note_are_the_releases(shared_benchmarks: Path) -> None:
    """The numbers the note states, counted from the release as ingested."""
    from evaluator.benchmarks import tofueval

    loaded = tofueval.load(shared_benchmarks / "tofueval")
    s = pd.DataFrame(
        {
            "split": [x.split for x in loaded.samples],
            "unit": [x.unit for x in loaded.samples],
            "extra": [x.attributes.get("summarizer") == "Model-Extra" for x in loaded.samples],
        }
    )
    n = s.groupby(["unit"]).size()
    five = s[~s["extra"]].groupby(["unit"]).size()
    test = s[s["split"] == "test"]
    note = tofueval.PAPER_POPULATION
    assert f"{n['summary']:,} summaries, {n['sentence']:,} sentences" in note
    assert f"{five['summary']:,} summaries" in note
    t6 = test.groupby("unit").size()
    t5 = test[~test["extra"]].groupby("unit").size()
    assert f"test: {t6['summary']:,} summaries, {t6['sentence']:,} sentences" in note
    assert f"test: {t5['summary']:,} summaries, {t5['sentence']:,} sentences" in note
