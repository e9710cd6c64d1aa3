"""The cross-benchmark table (explorer.across): pure tests on hand-made Overall numbers, and the
query that feeds it on a real store (runs' run.json results and the published CSVs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer import across as A
from explorer import queries as Q
from explorer.store import Store
from tests.support import testdata
from tests.support.llm_aggrefact_data import write_release


def row(bench, model, metric, value, *, origin="reported", source="", unit="summary", **kw):
    base = {
        "origin_code": "reported" if origin == "reported" else "run",
        "benchmark": bench,
        "model": model,
        "kind": kw.get("kind", "non-llm"),
        "origin": origin,
        "run_id": kw.get("run_id"),
        "created_at": None,
        "split": "test",
        "unit": unit,
        "metric": metric,
        "grader": kw.get("grader"),
        "value": value,
        "ci_low": kw.get("ci_low", np.nan),
        "ci_high": kw.get("ci_high", np.nan),
        "n": None,
        "coverage": "",
        "source": source if origin == "reported" else None,
        "note": "",
    }
    return base


SNAP = "LLM-AggreFact leaderboard snapshot (2025-09-08), https://llm-aggrefact.github.io"
SNAP_OLD = SNAP.replace("2025-09-08", "2024-10-25")
PAPER = "SummEdits paper, Table 9"
README = "SummEdits repo README leaderboard (2023-12-14)"
SEE = "SummExecEdit paper, Table 2"
LA, BA, LLM = "llm_aggrefact", "balanced_accuracy", "proprietary-llm"
RUN = {"origin": "evaluated"}


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        [
            row(LA, "HHEM-2.1-open", BA, 0.718, source=SNAP, unit="claim"),
            row(LA, "HHEM-2.1", BA, 0.718, source=SNAP_OLD, unit="claim"),
            row(LA, "HHEM-2.1-Open", BA, 0.70, **RUN, run_id="r1", unit="claim", ci_low=0.68),
            row(LA, "HHEM-2.1-Open", BA, 0.73, **RUN, run_id="r2", unit="claim"),
            row(LA, "HHEM-2.1-Open", "fpr", 0.01, **RUN, run_id="r2", unit="claim"),
            row("summedits", "HHEM-2.1", BA, 0.61, source=PAPER),
            row("summedits", "HHEM-2.1", BA, 0.66, source=PAPER, unit="sentence"),
            row("summedits", "GPT4", BA, 0.82, source=PAPER, kind=LLM),
            row("summedits", "GPT-4", BA, 0.80, source=README, kind=LLM),
            row("summexecedit", "gpt4", "detection_accuracy", 0.70, source=SEE, kind=LLM),
            row("summexecedit", "gpt4", "explanation_score", 0.9, source=SEE, kind=LLM),
            row("summexecedit", "gpt4", "joint_score", 0.5, **RUN, run_id="j", grader="gpt-4o"),
            row("tofueval", "GPT-4", "fpr", 0.10, **RUN, run_id="t1"),
            row("tofueval", "GPT-4", "fpr", 0.05, **RUN, run_id="t2"),
            row("tofueval", "GPT-4", BA, np.nan, **RUN, run_id="t3"),
        ]
    )


PRIMARY = {
    "llm_aggrefact": "balanced_accuracy",
    "summedits": "balanced_accuracy",
    "summexecedit": "detection_accuracy",
    "tofueval": "fpr",  # lower is better: the best run is the lowest
}
TITLES = {"llm_aggrefact": "LLM-AggreFact", "summedits": "SummEdits", "tofueval": "TofuEval"}


def test_models_fold_and_cells_name_their_source() -> None:
    v = A.build(frame(), PRIMARY, TITLES)
    t = v.table.set_index("Model")
    assert list(v.table["Model"]) == ["GPT-4", "HHEM-2.1-Open"]  # most benchmarks first
    assert t.loc["GPT-4", "Benchmarks"] == 3 and t.loc["HHEM-2.1-Open", "Benchmarks"] == 2
    # HHEM: the best of two runs beats the snapshot's number as the cell; the snapshot stays
    assert t.loc["HHEM-2.1-Open", "LLM-AggreFact · BAcc"] == "0.730"  # the formatter's form
    assert t.loc["HHEM-2.1-Open", "LLM-AggreFact · source"] == "run ×2"
    cell = v.cells.set_index(["model", "benchmark"]).loc[("HHEM-2.1-Open", "llm_aggrefact")]
    assert cell["run_id"] == "r2" and cell["published_value"] == 0.718
    assert cell["published_source"].startswith("LLM-AggreFact leaderboard snapshot (2024-10-25)")
    # summary level (the board's first level), not the sentence-level 0.66
    assert t.loc["HHEM-2.1-Open", "SummEdits · BAcc"] == "0.610"
    assert t.loc["HHEM-2.1-Open", "SummEdits · source"] == "paper"
    assert t.loc["HHEM-2.1-Open", "TofuEval · FPR"] == "—"  # no number: a dash, not None
    # GPT4 / GPT-4 / gpt4 are one model; a README leaderboard is a snapshot; best published wins
    assert (
        t.loc["GPT-4", "SummEdits · BAcc"] == "0.820"
        and t.loc["GPT-4", "SummEdits · source"] == "paper"
    )
    assert t.loc["GPT-4", "summexecedit · DA"] == "0.700"
    # FPR: lower is better, so the best run is the lower; a NaN value is no number
    assert t.loc["GPT-4", "TofuEval · FPR"] == "0.050"
    assert [c.benchmark for c in v.columns] == [
        "llm_aggrefact",
        "summedits",
        "summexecedit",
        "tofueval",
    ]
    assert [c.metric for c in v.columns] == [
        "balanced_accuracy",
        "balanced_accuracy",
        "detection_accuracy",
        "fpr",
    ]
    assert A.source_kind("reported", "SummEdits repo README leaderboard (2023-12-14)") == "snapshot"
    # one model across every benchmark of the view, a dash where it has no number
    hhem = A.model_cells(v, "HHEM-2.1-Open").set_index("Benchmark")
    assert list(hhem.index) == ["LLM-AggreFact", "SummEdits", "summexecedit", "TofuEval"]
    assert hhem.loc["LLM-AggreFact", "Value"] == "0.730"
    assert hhem.loc["LLM-AggreFact", "From"] == "run ×2"
    assert hhem.loc["LLM-AggreFact", "Published"].startswith("0.718 (LLM-AggreFact leaderboard")
    assert (hhem.loc["TofuEval", ["Value", "95% CI"]] == "—").all()
    assert hhem.loc["TofuEval", "Metric"] == "FPR" and hhem.loc["TofuEval", "From"] == ""


def test_filters() -> None:
    v = A.build(frame(), PRIMARY, TITLES, min_benchmarks=3)
    assert list(v.table["Model"]) == ["GPT-4"]
    assert [c.benchmark for c in v.columns] == ["summedits", "summexecedit", "tofueval"]
    v = A.build(
        frame(), PRIMARY, TITLES, benchmarks=["llm_aggrefact", "summedits"], min_benchmarks=2
    )
    assert list(v.table["Model"]) == ["HHEM-2.1-Open"]
    assert list(v.table.columns) == [
        "Model", "Kind", "Benchmarks", "LLM-AggreFact · BAcc", "LLM-AggreFact · source",
        "SummEdits · BAcc", "SummEdits · source",
    ]  # fmt: skip
    assert list(v.table["Kind"]) == ["non-LLM"]  # the board's words, not the stored code
    # search matches any spelling the sources used
    assert list(A.build(frame(), PRIMARY, TITLES, search="hhem-2.1-o").table["Model"]) == [
        "HHEM-2.1-Open"
    ]
    assert list(A.build(frame(), PRIMARY, TITLES, search="gpt4").table["Model"]) == ["GPT-4"]
    empty = A.build(frame(), PRIMARY, TITLES, min_benchmarks=5)
    assert (
        empty.table.empty
        and empty.columns == []
        and list(empty.table.columns)[:3]
        == [
            "Model",
            "Kind",
            "Benchmarks",
        ]
    )


def test_unregistered_benchmark_takes_its_most_common_metric() -> None:
    f = pd.DataFrame(
        [
            row("rank19", "QAGS", "accuracy", 0.7, source="QAGS paper, Table 5"),
            row("rank19", "BERTScore", "accuracy", 0.6, source="QAGS paper, Table 5"),
            row("rank19", "BERTScore", "pearson", 0.2, source="x"),
        ]
    )
    (col,) = A.pick_columns(f, {"rank19": None}, {})
    assert (col.metric, col.unit, col.title) == ("accuracy", "summary", "rank19")
    assert A.pick_columns(f, {"rank19": "pearson"}, {})[0].metric == "pearson"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """The demo, LLM-AggreFact (records in its schema) and the repo's published numbers, with
    runs named as the snapshot spells them."""
    from evaluator.ingest import pipeline

    tmp = tmp_path_factory.mktemp("across")
    root = testdata.build_demo_root(tmp / "leaderboard_data")
    pipeline.ingest("llm_aggrefact", write_release(tmp / "release"), root=root)
    testdata.add_run(root, "llm_aggrefact", "Bespoke-MiniCheck-7B", unit="claim", seed=1)
    testdata.add_run(root, "demo", "Bespoke-Minicheck-7B", seed=2)
    s = Store(root)
    s.refresh()
    return s


def test_overall_numbers_from_a_store(store: Store) -> None:
    rows = Q.overall_numbers(store.cursor())
    assert set(rows["origin_code"]) == {"run", "reported"}
    assert (rows.loc[rows["origin_code"] == "reported", "run_id"].isna()).all()
    assert not rows["source"].fillna("").str.contains("role=judge").any()
    runs = rows[rows["origin_code"] == "run"]
    assert set(runs["benchmark"]) == {"demo", "llm_aggrefact"}
    assert runs.loc[runs["benchmark"] == "llm_aggrefact", "unit"].eq("claim").all()
    v = A.build(rows, {"llm_aggrefact": "balanced_accuracy", "demo": "balanced_accuracy"}, {})
    t = v.table.set_index("Model")
    # the run on LLM-AggreFact and the one on the demo fold with both snapshots' rows
    bespoke = t.loc["Bespoke-MiniCheck-7B"]
    assert bespoke["llm_aggrefact · source"] == "run" and bespoke["demo · source"] == "run"
    cell = v.cells.set_index(["model", "benchmark"]).loc[("Bespoke-MiniCheck-7B", "llm_aggrefact")]
    assert cell["published_value"] == pytest.approx(0.774)
    # published-only models are there with their snapshot numbers
    assert t.loc["Granite Guardian 3.3 8B", "llm_aggrefact · BAcc"] == "0.765"
    assert t.loc["Granite Guardian 3.3 8B", "llm_aggrefact · source"] == "snapshot"
    # Claude 3 Opus: LLM-AggreFact's snapshot and SummExecEdit's paper, one row
    assert t.loc["Claude-3 Opus", "Benchmarks"] >= 2


def test_a_thousand_runs_read_only_results(tmp_path: Path) -> None:
    """1,000 runs: the table comes from the results the store reads from run.json; the
    per-sample predictions and labels tables stay empty."""
    s = Store(tmp_path)
    con = s.cursor()
    rng = np.random.default_rng(0)
    benches = ["summedits", "tofueval", "llm_aggrefact", "qags"]
    runs, results = [], []
    for i in range(1000):
        b = benches[i % 4]
        unit = "claim" if b == "llm_aggrefact" else "summary"
        runs.append((f"run{i:04d}", b, f"model-{i // 4}", False))
        results.append((f"run{i:04d}", "test", unit, "overall", "", BA, float(rng.random())))
    con.executemany(
        "INSERT INTO runs (run_id, benchmark, model_name, hidden) VALUES (?, ?, ?, ?)", runs
    )
    con.executemany(
        "INSERT INTO results_new (run_id, split, unit, slice_kind, slice_value, metric, value) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        results,
    )
    rows = Q.overall_numbers(con)
    assert len(rows[rows["origin_code"] == "run"]) == 1000
    v = A.build(rows, dict.fromkeys(benches, "balanced_accuracy"), {}, min_benchmarks=4)
    assert len(v.table) == 250 and (v.table["Benchmarks"] == 4).all()
    assert set(v.cells["runs"]) == {1}
    for table in ("predictions", "labels"):
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)


def test_llm_aggrefact_board_before_any_run(tmp_path: Path) -> None:
    """Published numbers only: the board opens on the claim level's Overall with today's
    leaders; the two snapshots' equal rows are one row naming both sources."""
    import shutil

    from evaluator.benchmarks import registry
    from evaluator.store import layout
    from explorer import home as F
    from explorer import leaderboard as L

    root = tmp_path / "leaderboard_data"
    (root / "runs").mkdir(parents=True)
    shutil.copytree(layout.REPO_ROOT / "leaderboard_data" / "reported", root / "reported")
    s = Store(root)
    s.refresh()
    view = F.default_view(Q.result_dimensions(s.cursor(), LA), BA)
    assert view == F.DefaultView("claim", BA)
    q = L.BoardQuery(LA, "claim", "overall", "", BA, None)
    rows = L.build_board(s.cursor(), q, registry.get(LA), None, 50).rows
    assert len(rows) == 39  # the 2025-09 models; the 2024-10 rows fold into theirs
    top = rows.head(2)
    assert list(top["model"]) == ["Bespoke-MiniCheck-7B", "Claude-3.5 Sonnet"]
    assert list(top["value"]) == pytest.approx([0.774, 0.772])
    assert "(2024-10-25)" in top["source"].iloc[0] and "(2025-09-08)" in top["source"].iloc[0]
