"""The results repo's notice is on the first page: a Hub that has not answered when the first
page's wait for the first sync ends is said there and then, not on a reload after the client's
retries have given up."""

from __future__ import annotations

import re

import pytest

from evaluator.hub import background
from tests.support.apptest import open_app_page
from tests.support.fake_hub import FakeHub
from tests.support.testdata import build_demo_root

# huggingface_hub's LFS upload passes raw bytes the way httpx now deprecates
pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


@pytest.fixture(autouse=True)
def _stop_background():
    yield
    background.stop_all()


def test_a_hub_that_does_not_answer_is_noticed_on_the_first_page(
    fake_hub: FakeHub, replica, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = replica("b")
    build_demo_root(b.data, reported=False)  # what the entry script builds when the pull fails
    monkeypatch.setenv("FACTBOARD_DATA", str(b.data))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(b.subs))
    monkeypatch.setenv("FACTBOARD_HUB_BOOT_WAIT", "1")
    fake_hub.delay = 4.0  # every request hangs past the first page's wait
    at = open_app_page("views/leaderboard.py")
    notes = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning if "results repo" in w.value]
    assert notes and "cannot be reached" in notes[0] and "retrying" in notes[0]
    assert "factboard/results" in notes[0]
    assert len(at.dataframe[0].value) == 4  # the local demo meanwhile
    fake_hub.delay = 0.0


def test_without_a_results_repo_the_notice_says_how_the_board_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FACTBOARD_HUB_REPO", raising=False)
    n = background.page_notice()
    assert n is not None and n.level == "info" and "not connected" in n.text
    monkeypatch.setenv("FACTBOARD_HUB_REPO", "not-a-repo")
    n = background.page_notice()
    assert n is not None and n.level == "warning" and "owner/name" in n.text
