"""Fixtures for the hardening tests: the demo benchmark in a temporary data root, a maintainer
token, quotas switched to known values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.submit import demo_copy

TOKEN = "maintainer-token-0123456789"


@pytest.fixture
def demo(tmp_data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_copy(tmp_data_root, tmp_path_factory)


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FACTBOARD_ADMIN_TOKEN", TOKEN)
    return TOKEN
