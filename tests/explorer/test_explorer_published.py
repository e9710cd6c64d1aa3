"""Published rows of one model from several sources fold into one row naming them all."""

from __future__ import annotations

import pandas as pd

from explorer import leaderboard as L


def _rows(*rows: tuple[str, float, str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "origin_code": ["reported"] * len(rows) + ["submitted"],
            "model": [r[0] for r in rows] + ["A run"],
            "split": "all",
            "coverage_set": "a;b",
            "value": [r[1] for r in rows] + [0.7],
            "source": [r[2] for r in rows] + ["FactBoard run"],
            "config": [r[3] for r in rows] + [""],
        }
    )


PAPER, README = "SummEdits paper, Table 9", "SummEdits repo README leaderboard (2023-12-14)"


def test_the_same_number_from_a_paper_and_its_readme_is_one_row() -> None:
    out = L.fold_published(
        _rows(("Human Perf.", 0.909, PAPER, ""), ("Human Perf.", 0.909, README, ""))
    )
    rep = out[out["origin_code"] == "reported"]
    assert len(rep) == 1 and len(out) == 2
    assert rep["source"].iloc[0] == f"{PAPER}; {README}"


def test_a_readme_that_rounds_differently_folds_with_its_value_shown() -> None:
    out = L.fold_published(_rows(("GPT4", 0.821, README, ""), ("GPT-4", 0.824, PAPER, "prompt=ZS")))
    rep = out[out["origin_code"] == "reported"]
    assert len(rep) == 1
    row = rep.iloc[0]
    assert row["value"] == 0.824  # the paper's number
    assert row["source"] == f"{PAPER}; {README} gives 0.821"
    assert row["model"] == "GPT-4" and row["config"] == "prompt=ZS"


def test_the_more_precise_of_two_papers_is_kept() -> None:
    out = L.fold_published(
        _rows(
            ("QAGS", 0.55, "LongDocFACTScore paper, Table 6", ""),
            ("QAGS", 0.5453, "QAGS paper, Table 1", ""),
        )
    )
    rep = out[out["origin_code"] == "reported"]
    assert rep["value"].tolist() == [0.5453]
    assert (
        rep["source"].iloc[0] == "QAGS paper, Table 1; LongDocFACTScore paper, Table 6 gives 0.55"
    )


def test_numbers_far_apart_or_several_per_source_stay_apart() -> None:
    far = L.fold_published(
        _rows(
            ("BERTScore", 0.58, "LongDocFACTScore paper, Table 6", ""),
            ("BERTScore", 0.276, "QAGS paper, Table 1", ""),
        )
    )
    assert (far["origin_code"] == "reported").sum() == 2
    prompts = L.fold_published(
        _rows(
            ("GPT4", 0.824, PAPER, "prompt=ZS"),
            ("GPT4", 0.815, PAPER, "prompt=FS"),
            ("GPT4", 0.821, README, ""),
        )
    )
    assert (prompts["origin_code"] == "reported").sum() == 3


def test_folding_leaves_run_rows_and_the_order_as_they_were() -> None:
    rows = pd.concat(
        [
            _rows(("Human Perf.", 0.909, PAPER, "")).iloc[[1]],  # a run row first
            _rows(("Human Perf.", 0.909, README, ""), ("GPT4", 0.8, PAPER, "")),
            _rows(("Human Perf.", 0.909, PAPER, "")).iloc[[0]],
        ],
        ignore_index=True,
    )
    rows.loc[3, "model"] = "Another run"
    out = L.fold_published(rows)
    # the paper's row is kept where it was, naming both sources; the README's row goes
    assert out["model"].tolist() == ["A run", "GPT4", "Another run", "Human Perf."]
    assert out["source"].tolist() == [
        "FactBoard run",
        PAPER,
        "FactBoard run",
        f"{PAPER}; {README}",
    ]
    assert out.index.tolist() == [0, 1, 2, 3]
    assert len(rows) == 5 and rows.loc[1, "source"] == README  # the input is left alone
