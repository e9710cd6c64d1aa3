"""Text that comes from data is shown as text on every page that shows it: a model name with
Markdown (bold, a link, a remote image that would be a tracking pixel) never renders as such.
Each element Streamlit renders as Markdown (markdown, captions, notices, expander and tab
labels) is checked for the name's Markdown left unescaped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evaluator.store import runs
from tests.support import testdata
from tests.support.apptest import open_app_page

NAME = "Evil **bold** [click](http://evil.example) ![px](http://evil.example/p.png)"
# Markdown that renders: a link or image with an unescaped bracket, or bold with unescaped stars
LIVE = re.compile(r"(?<!\\)!?(?<!\\)\[[^\]]*(?<!\\)\]\(|(?<!\\)\*\*bold(?<!\\)\*\*")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("md") / "leaderboard_data")
    testdata.add_run(r, "demo", NAME, accuracy=0.8, seed=4, explanations=True)
    testdata.add_run(r, "demo", "Plain model", accuracy=0.7, seed=5)
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_path / "cache"))
    return root


def _rendered(at: AppTest) -> list[str]:
    out = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success"):
        out += [str(e.value) for e in at.get(kind)]
    out += [str(e.label) for e in at.get("expander")]
    out += [str(e.label) for e in at.get("tab")]
    return out


def _assert_text(at: AppTest) -> None:
    live = [t for t in _rendered(at) if "evil.example" in t and LIVE.search(t)]
    assert live == [], live


def _ids(root: Path) -> tuple[str, str]:
    listing = runs.list_runs(root, benchmark="demo").runs
    evil = next(r.run_id for r in listing if r.model.name == NAME)
    plain = next(r.run_id for r in listing if r.model.name == "Plain model")
    return evil, plain


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("views/home.py", {}),
        ("views/leaderboard.py", {"benchmark": "demo", "chart": "CI forest plot"}),
        ("views/samples.py", {"benchmark": "demo"}),
        ("views/compare.py", {"benchmark": "demo"}),
        ("views/across.py", {}),
        ("views/explanations.py", {}),
    ],
)
def test_a_markdown_model_name_is_text_on_every_page(
    data: Path, page: str, params: dict[str, str]
) -> None:
    evil, plain = _ids(data)
    if page.endswith("compare.py"):
        params = {**params, "a": evil, "b": plain}
    if page.endswith("samples.py"):
        params = {**params, "run": evil}
    if page.endswith("across.py"):
        params = {"model": NAME}
    at = open_app_page(page, params)
    _assert_text(at)
