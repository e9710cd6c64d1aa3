"""Fixtures of the tests of evaluate, detector packages and reproduction."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.testdata import build_demo_root


@pytest.fixture(scope="module")
def demo_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo benchmark and its baseline runs, built once per module."""
    return build_demo_root(tmp_path_factory.mktemp("demo") / "leaderboard_data", reported=False)


@pytest.fixture
def demo_root(demo_src: Path, tmp_data_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's own copy of the demo, made the data root (with its own board cache)."""
    monkeypatch.setenv("FACTBOARD_CACHE", str(tmp_data_root.parent / "cache"))
    shutil.rmtree(tmp_data_root)
    shutil.copytree(demo_src, tmp_data_root)
    return tmp_data_root
