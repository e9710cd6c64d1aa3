"""Fixtures for the Hub tests: a fake Hub on 127.0.0.1 (tests.support.fake_hub) that the real
huggingface_hub client reaches through HF_ENDPOINT, and replicas (data + submissions roots)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.fake_hub import FakeHub

WRITE_TOKEN = "hf_writetokenAAAAAAAAAAAAAAAA"
READ_TOKEN = "hf_readtokenBBBBBBBBBBBBBBBBB"
REPO_ID = "factboard/results"


@dataclass
class Replica:
    data: Path
    subs: Path

    def env(self) -> dict[str, str]:
        return {"FACTBOARD_DATA": str(self.data), "FACTBOARD_SUBMISSIONS": str(self.subs)}


def hub_env(hub: FakeHub, token: str = WRITE_TOKEN) -> dict[str, str]:
    """The environment of a process that talks to the fake Hub."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE",)}
    env.update(
        HF_ENDPOINT=hub.url,
        HF_TOKEN=token,
        FACTBOARD_HUB_REPO=REPO_ID,
        FACTBOARD_HUB_BACKOFF="0.01",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_XET="1",  # the fake Hub has LFS, not Xet storage
    )
    return env


@pytest.fixture
def fake_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A running fake Hub with an empty results repo; this process is pointed at it."""
    import huggingface_hub.constants as hc

    hub = FakeHub({WRITE_TOKEN: "write", READ_TOKEN: "read"}).start()
    hub.create(REPO_ID)
    for k, v in hub_env(hub).items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hc, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    yield hub
    hub.stop()


@pytest.fixture
def replica(tmp_path: Path):
    def make(name: str) -> Replica:
        r = Replica(tmp_path / name / "leaderboard_data", tmp_path / name / "submissions")
        (r.data / "runs").mkdir(parents=True, exist_ok=True)
        (r.data / "benchmarks").mkdir(exist_ok=True)
        return r

    return make


def repo_table(hub: FakeHub, path: str) -> list[dict]:
    """A table of the fake results repo, as rows (empty when the repo has none)."""
    import io

    import pyarrow.parquet as pq

    data = (hub.repo(REPO_ID).files() or {}).get(path)
    return [] if data is None else pq.read_table(io.BytesIO(data)).to_pylist()


def repo_runs(hub: FakeHub, deleted: bool = False) -> dict[str, dict]:
    """run id -> its runs table row (live runs; with deleted=True, tombstones too)."""
    return {
        r["run_id"]: r
        for r in repo_table(hub, "tables/runs.parquet")
        if deleted or not r["deleted"]
    }


def repo_run_records(hub: FakeHub) -> dict[str, dict]:
    """run id -> its run.json as published, for every live run."""
    import json

    return {rid: json.loads(r["run_json"]) for rid, r in repo_runs(hub).items()}


def repo_records(hub: FakeHub) -> dict[str, dict]:
    """submission id -> its published record."""
    import json

    return {
        r["submission_id"]: json.loads(r["record"])
        for r in repo_table(hub, "tables/submissions.parquet")
    }
