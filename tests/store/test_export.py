"""LaTeX, CSV and JSON exports: missing values, printed precision of published numbers, counts."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd

from evaluator.store import export
from evaluator.store.layout import REPO_ROOT


def test_latex_writes_missing_values_as_a_dash_and_counts_as_integers() -> None:
    df = pd.DataFrame(
        {
            "model": ["A & B", "C"],
            "value": [0.71234, None],
            "n": pd.array([1575, None], dtype="Int64"),
            "hidden": [True, False],
        }
    )
    tex = export.to_latex(df)
    lines = tex.splitlines()
    assert lines[0] == "\\begin{tabular}{lrrl}"
    assert "A \\& B & 0.712 & 1575 & True \\\\" in lines
    assert "C & — & — & False \\\\" in lines
    assert "<NA>" not in tex and "nan" not in tex and "None" not in tex


def test_latex_keeps_the_digits_a_paper_printed() -> None:
    # QAGS prints 54.53 (100 x r): stored as 0.5453, written with its 4 digits, not 0.545;
    # a printed 0.34 is not padded to 0.3400; a computed value gets 3 decimals
    df = pd.DataFrame({"model": ["QAGS", "ROUGE-1", "run"], "value": [0.5453, 0.34, 1 / 3]})
    lines = export.to_latex(df).splitlines()
    assert "QAGS & 0.5453 \\\\" in lines and "ROUGE-1 & 0.34 \\\\" in lines
    assert "run & 0.333 \\\\" in lines
    assert export.format_number(0.5) == "0.5" and export.format_number(-0.01) == "-0.01"
    assert export.format_number(45.0, whole=True) == "45"
    assert export.whole_numbers([1.0, 45.0, None]) and not export.whole_numbers([0.34, 1.0])


def test_export_writes_n_as_an_integer_beside_published_rows_without_n(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "runs").mkdir(parents=True)
    (root / "reported").mkdir()
    src = REPO_ROOT / "leaderboard_data" / "reported" / "qags_paper.csv"
    (root / "reported" / "qags_paper.csv").write_text(src.read_text())
    (root / "reported" / "x.csv").write_text(
        "model,kind,benchmark,split,unit,slice_kind,slice_value,metric,value,n,coverage,source,note\n"
        "M,non-llm,qags,test,summary,overall,,pearson,0.5,,,paper,\n"
    )
    csv_text = export.export_results("csv", benchmark="qags", root=root, slice_kind="all")
    n_col = list(pd.read_csv(io.StringIO(csv_text), dtype=str, keep_default_na=False)["n"])
    assert "235" in n_col and "239" in n_col and "" in n_col
    assert not any(v.endswith(".0") for v in n_col)
    rows = json.loads(export.export_results("json", benchmark="qags", root=root, slice_kind="all"))
    assert {r["n"] for r in rows} >= {235, 239, None}
    tex = export.export_results("latex", benchmark="qags", root=root, slice_kind="all")
    assert (
        "QAGS & non-llm & reported & qags & test & summary & dataset & cnndm & pearson & — & 0.5453"
        in tex
    )
    assert "<NA>" not in tex and "235" in tex and "235.0" not in tex


def test_a_run_rolled_up_from_sentences_says_so_on_its_summary_rows(tmp_data_root: Path) -> None:
    from evaluator.core.types import Counts, ModelInfo, RunRecord, SliceResult, ThresholdInfo
    from evaluator.store import runs

    def rec(run_id: str, units: tuple[str, ...]) -> RunRecord:
        return RunRecord(
            run_id=run_id,
            benchmark="tofueval",
            benchmark_version="v",
            created_at="t",
            model=ModelInfo(name=run_id, kind="non-llm"),
            origin="submitted",
            threshold=ThresholdInfo(policy="dev", threshold=0.5),
            splits=["test"],
            counts=Counts(n=2, predicted=2, missing=0),
            results=[
                SliceResult(
                    split="test",
                    unit=u,
                    slice_kind="overall",
                    slice_value="",
                    metric="balanced_accuracy",
                    value=0.6,
                    n=2,
                )
                for u in units
            ],
        )

    preds = pd.DataFrame({"sample_id": ["a"], "score": [0.3]})
    runs.write_run(rec("sentences", ("sentence", "summary")), preds)
    runs.write_run(rec("summaries", ("summary",)), preds)
    rows = export.run_rows(tmp_data_root, "tofueval")
    note = dict(zip(zip(rows["run_id"], rows["unit"], strict=True), rows["note"], strict=True))
    assert note[("sentences", "summary")].endswith(export.ROLLED_UP_NOTE)
    assert "rolled up" not in note[("sentences", "sentence")]
    assert "rolled up" not in note[("summaries", "summary")]
