"""Fixtures the detector tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.tiny_summac import punkt_installed, write_punkt_tab


@pytest.fixture
def nltk_data(tmp_path: Path) -> Iterator[Path]:
    """The authors split sentences with nltk's punkt: a tiny punkt model in a temporary nltk
    data folder (the real one cannot be downloaded here), so the faithful setup runs."""
    root = write_punkt_tab(tmp_path / "nltk_data")
    with punkt_installed(root):
        yield root
