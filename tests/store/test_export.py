"""LaTeX, CSV and JSON exports: missing values, printed precision of published numbers, counts."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

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
    assert lines[0] == "\\begin{tabular}{lrr}"  # the short set: model, value, n
    assert "A \\& B & 0.712 & 1,575 \\\\" in lines
    assert "C & --- & --- \\\\" in lines
    assert "<NA>" not in tex and "nan" not in tex and "None" not in tex
    # asked for by name, every column, the flag too
    assert "A \\& B & 0.712 & 1,575 & True \\\\" in export.to_latex(df, list(df.columns))


def test_latex_writes_values_with_fixed_decimals() -> None:
    # one column, one number of decimals: a paper's 0.9 beside a run's 0.883 reads 0.900
    df = pd.DataFrame({"model": ["QAGS", "ROUGE-1", "run"], "value": [0.5453, 0.9, 1 / 3]})
    lines = export.to_latex(df).splitlines()
    assert "QAGS & 0.545 \\\\" in lines and "ROUGE-1 & 0.900 \\\\" in lines
    assert "run & 0.333 \\\\" in lines
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
    # the columns that say which number a row is (the slice varies) then the short set, the
    # value column named after its one metric
    assert "Slice kind & Slice & Model & Kind & Pearson r & 95\\% CI & $n$ & Source \\\\" in tex
    assert "dataset & cnndm & QAGS & non-LLM & 0.545 & --- & 235 & QAGS paper" in tex
    assert "<NA>" not in tex and "235.0" not in tex


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


# a page's table as downloaded (explorer.leaderboard.display_table): a metric-named value column,
# emoji in Origin, Δ and — in headers and cells, the CI as two columns, a text CI bar
PAGE_TABLE = pd.DataFrame(
    {
        "Rank": pd.array([1, 2, None], dtype="Int64"),
        "Model": ["Novel_entities & co", "GPT-4 — 0613", "Bespoke-MiniCheck-7B"],
        "Kind": ["non-LLM", "proprietary LLM", "open LLM"],
        "Origin": ["🧪 evaluated", "📄 reported", "📄 reported"],
        "BAcc": [0.6004, 0.824, 0.9],
        "CI low": [0.55, None, None],
        "CI high": [0.65, None, None],
        "n": pd.array([1479, 500, None], dtype="Int64"),
        "95% CI": ["░▓█▓░", "", ""],
        "Δ to leader": [None, -0.012, 0.01],
        "p vs leader": ["", "< 0.001", ""],
        "Source": ["FactBoard run x_1", "SummEdits paper, Table 9 ± 1%", "LLM-AggreFact — 2025"],
    }
)


def test_latex_for_a_paper_is_ascii_booktabs_with_the_short_column_set() -> None:
    tex = export.to_latex(PAGE_TABLE)
    assert tex.isascii()
    lines = tex.splitlines()
    assert lines[0] == "\\begin{tabular}{rllrcrl}"
    assert lines[1] == "\\toprule" and lines[-2] == "\\bottomrule" and lines[3] == "\\midrule"
    assert lines[2] == "Rank & Model & Kind & BAcc & 95\\% CI & $n$ & Source \\\\"
    assert lines[4] == (
        "1 & Novel\\_entities \\& co & non-LLM & 0.600 & [0.550, 0.650] & 1,479 & "
        "FactBoard run x\\_1 \\\\"
    )
    assert lines[5] == (
        "2 & GPT-4 --- 0613 & proprietary LLM & 0.824 & --- & 500 & "
        "SummEdits paper, Table 9 $\\pm$ 1\\% \\\\"
    )
    assert lines[6].startswith("--- & Bespoke-MiniCheck-7B & open LLM & 0.900 & --- & --- &")
    # the columns left out: no CI bar, no emoji, no difference to the leader
    assert "evaluated" not in tex and "leader" not in tex
    # asked for: Origin without its emoji, Δ as a macro
    picked = export.to_latex(PAGE_TABLE, ["Model", "Origin", "Δ to leader"])
    assert picked.isascii() and "$\\Delta$ to leader" in picked
    assert "Novel\\_entities \\& co & evaluated & ---" in picked
    assert "GPT-4 --- 0613 & reported & -0.012" in picked


def test_latex_escape_writes_ascii_latex() -> None:
    assert export.latex_escape("a_b & c% $x$ #1 {y} ~^\\") == (
        "a\\_b \\& c\\% \\$x\\$ \\#1 \\{y\\} \\textasciitilde{}\\textasciicircum{}\\textbackslash{}"
    )
    assert export.latex_escape("Δ BAcc — 0.5 ± 0.1 · κ") == (
        "$\\Delta$ BAcc --- 0.5 $\\pm$ 0.1 $\\cdot$ $\\kappa$"
    )
    assert export.latex_escape("🏆 Café naïve") == "Cafe naive"


def _compile(tmp_path: Path, table: str) -> None:
    doc = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + table
        + "\\end{document}\n"
    )
    (tmp_path / "t.tex").write_text(doc, encoding="ascii")
    out = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-3000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_the_latex_tables_compile_with_pdflatex(tmp_path: Path) -> None:
    """scripts/test.sh installs TeX Live's LaTeX base and recommended packages (booktabs)."""
    if shutil.which("pdflatex") is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex not found: scripts/test.sh installs it")
        pytest.skip("pdflatex not found (scripts/test.sh installs it)")
    root = tmp_path / "data"
    (root / "runs").mkdir(parents=True)
    tex = export.export_results("latex", benchmark="summedits", root=root, slice_kind="overall")
    assert tex.isascii() and tex.count("\\\\\n") > 20
    _compile(tmp_path, export.to_latex(PAGE_TABLE) + "\n" + tex)
