"""The published numbers that ship with FactBoard (leaderboard_data/reported/) are read on any
data root, by the board and by the exports alike (evaluator.store.layout.reported_files): the
container points $FACTBOARD_DATA at a folder of its own, and a results repo adds tables to it."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from evaluator.store import export, layout

SHIPPED = layout.REPO_ROOT / "leaderboard_data" / "reported"
HEADER = ",".join(layout.REPORTED_COLUMNS)


@pytest.fixture
def container_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data root as the Dockerfile sets one: $FACTBOARD_DATA under the user's home, outside
    the app's folder, with nothing in it yet."""
    root = tmp_path / "home" / "user" / "data" / "leaderboard_data"
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(tmp_path / "home/user/data/submissions"))
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FACTBOARD_REPORTED", raising=False)
    return root


def test_a_fresh_data_root_reads_every_shipped_table(container_root: Path) -> None:
    files = layout.reported_files()
    assert [f.name for f in files] == sorted(f.name for f in SHIPPED.glob("*.csv"))
    rows = export.reported_rows(benchmark="summedits")
    assert len(rows) > 100 and "GPT4" in set(rows["model"])


def test_a_data_root_table_adds_to_the_shipped_ones_and_a_same_named_one_replaces_its_copy(
    container_root: Path,
) -> None:
    own = layout.reported_dir(container_root)
    own.mkdir(parents=True)
    (own / "extra.csv").write_text(
        f"{HEADER}\nNew checker,non-llm,qags,test,summary,overall,,pearson,0.5,,,a paper,\n"
    )
    (own / "qags_paper.csv").write_text(
        f"{HEADER}\nQAGS,non-llm,qags,test,summary,overall,,pearson,0.9,,,newer copy,\n"
    )
    files = layout.reported_files()
    assert own / "extra.csv" in files and own / "qags_paper.csv" in files
    assert SHIPPED / "qags_paper.csv" not in files and SHIPPED / "tofueval_paper.csv" in files
    qags = export.reported_rows(benchmark="qags")
    assert set(qags["source"]) >= {"a paper", "newer copy"}
    assert not qags["source"].str.startswith("QAGS paper").any()


def test_the_cli_export_and_the_board_read_the_same_published_numbers(
    container_root: Path,
) -> None:
    from evaluator.cli.main import main
    from explorer.store import Store

    own = layout.reported_dir(container_root)
    own.mkdir(parents=True)
    (own / "extra.csv").write_text(
        f"{HEADER}\nNew checker,non-llm,qags,test,summary,overall,,pearson,0.5,,,a paper,\n"
    )
    out = container_root.parent / "export.csv"
    assert main(["export", "--format", "csv", "--slice", "all", "-o", str(out)]) == 0
    exported = pd.read_csv(out, dtype=str, keep_default_na=False)
    exported = exported[exported["origin"] == "reported"]
    s = Store(container_root, snapshot=False)
    s.refresh(0.0)
    board = s.cursor().execute("SELECT benchmark, model, source FROM reported").df()
    assert len(board) == len(exported) > 1000
    key = ["benchmark", "model", "source"]
    assert sorted(map(tuple, board[key].to_numpy().tolist())) == sorted(
        map(tuple, exported[key].to_numpy().tolist())
    )
    assert "New checker" in set(board["model"])


def test_a_csv_export_keeps_numbers_as_numbers(container_root: Path) -> None:
    text = export.export_results("csv", benchmark="summedits", slice_kind="all")
    df = pd.read_csv(io.StringIO(text))
    assert pd.api.types.is_float_dtype(df["value"]) and df["value"].notna().all()
    assert pd.api.types.is_numeric_dtype(df["n"])
    first = text.splitlines()[1]
    assert "'" not in first  # no formula guard on a number
