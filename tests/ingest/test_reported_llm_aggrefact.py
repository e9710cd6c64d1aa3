"""The LLM-AggreFact published numbers (leaderboard/reported/llm_aggrefact_snapshot*.csv): both
leaderboard snapshots transcribed exactly from ../shared, their Overall rows re-derived as the site
derives its Avg, their sources, and the model names that fold with runs and other papers."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

from evaluator.benchmarks.llm_aggrefact import DATASETS, LEADERBOARD_COLUMNS
from evaluator.core.vocabulary import canonical_model
from evaluator.store import layout

REPORTED = Path(__file__).resolve().parents[2] / "leaderboard_data" / "reported"
FILES = {
    "2024-10": ("llm_aggrefact_snapshot.csv", "(2024-10-25)", "rin2401/llm-aggrefact", 33),
    "2025-09": (
        "llm_aggrefact_snapshot_2025-09.csv",
        "(2025-09-08)",
        "llm-aggrefact/llm-aggrefact.github.io",
        39,
    ),
}


def ours(snap: str) -> pd.DataFrame:
    return pd.read_csv(REPORTED / FILES[snap][0], dtype=str, keep_default_na=False)


def shared(shared_benchmarks: Path, snap: str) -> list[dict[str, str]]:
    path = shared_benchmarks / "llm_aggrefact" / f"llm_aggrefact_leaderboard_snapshot_{snap}.csv"
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("snap", sorted(FILES))
def test_schema_and_sources(snap: str) -> None:
    name, date, repo, n_models = FILES[snap]
    with open(REPORTED / name, newline="", encoding="utf-8") as f:
        assert next(csv.reader(f)) == list(layout.REPORTED_COLUMNS)
    df = ours(snap)
    assert df["model"].nunique() == n_models
    assert set(df["benchmark"]) == {"llm_aggrefact"}
    assert set(df["split"]) == {"test"} and set(df["unit"]) == {"claim"}
    assert set(df["metric"]) == {"balanced_accuracy"}
    # every row names the snapshot's date, the site and the file it was read from
    for src in df["source"]:
        assert src.startswith(f"LLM-AggreFact leaderboard snapshot {date}, ")
        assert "https://llm-aggrefact.github.io" in src and repo in src
    per_model = df.groupby("model")["slice_kind"].value_counts().unstack()
    assert (per_model["dataset"] == 11).all() and (per_model["overall"] == 1).all()
    assert set(df.loc[df["slice_kind"] == "dataset", "slice_value"]) == set(DATASETS)


@pytest.mark.parametrize("snap", sorted(FILES))
def test_dataset_rows_are_the_snapshot_exactly(snap: str, shared_benchmarks: Path) -> None:
    want = []
    for r in shared(shared_benchmarks, snap):
        want += [(r["model"], ds, Decimal(r[col]) / 100) for col, ds in LEADERBOARD_COLUMNS.items()]
    df = ours(snap)
    df = df[df["slice_kind"] == "dataset"]
    got = [
        (m, ds, Decimal(v))
        for m, ds, v in zip(df["model"], df["slice_value"], df["value"], strict=True)
    ]
    assert got == want
    # the printed precision is kept (71.0 -> 0.710)
    assert all(len(v.split(".")[1]) == 3 for v in df["value"])


@pytest.mark.parametrize("snap", sorted(FILES))
def test_overall_is_the_mean_of_the_datasets(snap: str, shared_benchmarks: Path) -> None:
    """The site's Avg is the mean of the eleven columns: each Overall row is that mean rounded
    to 0.1 point, and the one Average the 2025-09 snapshot prints agrees with it."""
    df = ours(snap)
    printed = {
        r["model"]: Decimal(r["Average"])
        for r in shared(shared_benchmarks, snap)
        if (r.get("Average") or "").strip()
    }
    assert (snap == "2025-09") == bool(printed)
    for model, g in df.groupby("model", sort=False):
        vals = [Decimal(v) * 100 for v in g.loc[g["slice_kind"] == "dataset", "value"]]
        mean = sum(vals) / len(vals)
        overall = g[g["slice_kind"] == "overall"].iloc[0]
        got = Decimal(overall["value"]) * 100
        assert set(overall["coverage"].split(";")) == set(DATASETS)
        if model in printed:
            assert got == printed[model] and abs(got - mean) <= Decimal("0.05")
            assert "as printed" in overall["note"]
        else:
            assert got == mean.quantize(Decimal("0.1")), model
            assert "mean of the 11 per-dataset values" in overall["note"]


def test_todays_leaders() -> None:
    df = ours("2025-09")
    ov = df[df["slice_kind"] == "overall"]
    top = {canonical_model(m): Decimal(v) for m, v in zip(ov["model"], ov["value"], strict=True)}
    assert top["Bespoke-MiniCheck-7B"] == Decimal("0.774") == max(top.values())
    assert top["Claude-3.5 Sonnet"] == Decimal("0.772")
    assert top["Granite Guardian 3.3 8B"] == Decimal("0.765")
    assert top["FactCG-DeBERTa-L"] == Decimal("0.756")
    assert top["HHEM-2.1-Open"] == Decimal("0.718")


def test_snapshots_agree_where_they_overlap() -> None:
    """Models on both boards kept their numbers (HHEM-2.1 was renamed HHEM-2.1-open), so the
    board folds the two rows into one naming both sources."""
    key = ["slice_kind", "slice_value"]
    old, new = ours("2024-10"), ours("2025-09")
    old["m"] = old["model"].map(canonical_model)
    new["m"] = new["model"].map(canonical_model)
    assert set(old["m"]) <= set(new["m"])
    joined = old.merge(new, on=["m", *key], suffixes=("_old", "_new"))
    assert len(joined) == len(old)
    assert (joined["value_old"] == joined["value_new"]).all()


def test_names_fold_with_runs_and_other_papers() -> None:
    # the two snapshots' spellings of one model
    assert canonical_model("HHEM-2.1") == canonical_model("HHEM-2.1-open") == "HHEM-2.1-Open"
    assert canonical_model("Bespoke-Minicheck-7B") == "Bespoke-MiniCheck-7B"
    # checkpoints and FactBoard detector board names
    for name in ("vectara/hallucination_evaluation_model", "HHEM-2.1-Open"):
        assert canonical_model(name) == "HHEM-2.1-Open"
    for name in ("ibm-granite/granite-guardian-3.3-8b", "Granite Guardian 3.3"):
        assert canonical_model(name) == "Granite Guardian 3.3 8B"
    assert canonical_model("yaxili96/FactCG-DeBERTa-v3-Large") == "FactCG-DeBERTa-L"
    assert canonical_model("MiniCheck (lytang/MiniCheck-RoBERTa-Large)") == "MiniCheck-RoBERTa-L"
    assert canonical_model("SummaC-CV") == "SummaC-Conv"  # SummaC-Conv's board name
    # other papers: SummExecEdit's claude3-opus, mixtral-8x7b
    assert canonical_model("claude3-opus") == canonical_model("Claude-3 Opus")
    assert canonical_model("mixtral-8x7b") == canonical_model("Mistral-8x7B") == "Mixtral-8x7B"
    # distinct models stay distinct
    assert canonical_model("Mistral-Large 2") != canonical_model("Mistral-Large")
    assert canonical_model("MiniCheck-Flan-T5-L") != canonical_model("MiniCheck-DeBERTa-L")
