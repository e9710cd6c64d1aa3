"""The container's first minute (AppTest): on a fresh data root set as the Dockerfile sets it,
with the demo the entry script builds, the board has the published numbers that ship with
FactBoard (a leaderboard of a published-only benchmark, the cross-benchmark table), and the
first page says that no results repo is connected."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.cli.main import main
from explorer import ui
from tests.support.apptest import open_app_page


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the entry script leaves on an empty $FACTBOARD_DATA: the demo, nothing else."""
    home = tmp_path_factory.mktemp("container") / "home" / "user"
    root = home / "data" / "leaderboard_data"
    mp = pytest.MonkeyPatch()
    mp.setenv("FACTBOARD_DATA", str(root))
    mp.setenv("FACTBOARD_CACHE", str(home / "cache"))
    try:
        assert main(["demo"]) == 0
    finally:
        mp.undo()
    assert not (root / "reported").exists()
    return root


@pytest.fixture
def container(built: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(built))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(built.parent / "submissions"))
    monkeypatch.setenv("FACTBOARD_CACHE", str(built.parent / "cache"))
    monkeypatch.delenv("FACTBOARD_HUB_REPO", raising=False)
    monkeypatch.delenv("FACTBOARD_REPORTED", raising=False)
    return built


def test_a_published_only_benchmark_is_on_the_board_of_a_fresh_container(
    container: Path,
) -> None:
    at = open_app_page("views/leaderboard.py", {"benchmark": "summedits"})
    assert not [w for w in at.warning if "not on this board" in w.value]
    assert at.query_params["benchmark"] == "summedits"
    models = set(at.dataframe[0].value["Model"])
    assert {"GPT4", "Human Perf."} & models, models


def test_the_across_page_of_a_fresh_container_has_the_published_models(container: Path) -> None:
    at = open_app_page("views/across.py")
    t = at.dataframe[0].value
    assert len(t) > 20
    assert any(h.startswith("LLM-AggreFact") for h in t.columns)
    assert any(h.startswith("SummEdits") for h in t.columns)


def test_the_first_page_says_no_results_repo_is_connected(container: Path) -> None:
    at = open_app_page("views/home.py")
    # a quiet line (a caption), not a warning
    notes = [c.value for c in at.caption if c.value.startswith(ui.NOTICE_MARK)]
    assert len(notes) == 1 and "not connected to a results repo" in notes[0]
    assert "published numbers that ship with FactBoard" in notes[0]
    assert not [w for w in at.warning if "results repo" in w.value]
