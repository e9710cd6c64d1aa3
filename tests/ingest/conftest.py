"""The Hugging Face Hub of the ingest tests: a fake Hub on 127.0.0.1 (tests/support/fake_hub.py)
reached by the real huggingface_hub client through HF_ENDPOINT, or an endpoint where nothing
listens (the Hub unreachable). Nothing is patched inside the SDK but its module-level copies of
the environment, which it reads once at import."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_hub import FakeHub

READ_TOKEN = "hf_readtokenCCCCCCCCCCCCCCCC"


def point_client_at(url: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The huggingface_hub client talks to `url`, online, with its cache under `home`."""
    import huggingface_hub.constants as hc

    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_TOKEN", READ_TOKEN)
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    # read by huggingface_hub from the environment once, when it is first imported
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hc, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(hc, "ENDPOINT", url)
    monkeypatch.setattr(
        hc, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(home / "hub"))


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A fake Hub, reached by the real huggingface_hub client; `hub.put` seeds a repo."""
    server = FakeHub({READ_TOKEN: "read"}).start()
    point_client_at(server.url, tmp_path / "hf_home", monkeypatch)
    yield server
    server.stop()


@pytest.fixture
def no_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An endpoint where nothing listens: every request to the Hub is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    point_client_at(url, tmp_path / "hf_home", monkeypatch)
    return url


def files_under(root: Path, prefix: str = "") -> dict[str, bytes]:
    """Every file under `root`, keyed by its path in a repo (below `prefix`)."""
    return {
        f"{prefix}{p.relative_to(root).as_posix()}": p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
