"""A run's evidence.parquet goes to the results repo with the run and comes back on a pull; the
Every Eval Ever records of the run are made as before (they carry no evidence: the format has
no place for it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaluator.detectors.runner import run_detector
from evaluator.hub import sync
from evaluator.hub.client import HubClient
from evaluator.interop import eee
from evaluator.store import layout, runs
from tests.support.evidence import EvidenceFactory
from tests.support.fake_hub import FakeHub
from tests.support.testdata import build_demo_root

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")


def test_evidence_travels_with_its_run(fake_hub: FakeHub, replica) -> None:
    from tests.hub.conftest import REPO_ID

    a, b = replica("a"), replica("b")
    build_demo_root(a.data, reported=False)
    path = run_detector("lexical-overlap", "demo", factory=EvidenceFactory(), limit=12, root=a.data)
    rid = path.name
    client = HubClient.from_env()
    sync.push(client, a.data, a.subs)
    files = dict(fake_hub.repo(REPO_ID).files() or {})
    local = (path / layout.EVIDENCE_FILE).read_bytes()
    assert files[f"runs/{rid}/{layout.EVIDENCE_FILE}"] == local
    records = [
        json.loads(v) for p, v in files.items() if p.startswith("eee/") and p.endswith(".json")
    ]
    assert len(records) == 1 and eee.problems(eee.record_validator(), records[0]) == []
    samples = [v for p, v in files.items() if p.endswith("_samples.jsonl")]
    assert len(samples) == 1 and b"share of the sentence" not in samples[0]

    shutil.rmtree(b.data)
    sync.pull(client, b.data, b.subs)
    pulled = layout.run_dir(rid, b.data)
    assert (pulled / layout.EVIDENCE_FILE).read_bytes() == local
    got, want = runs.read_evidence(pulled), runs.read_evidence(path)
    assert got is not None and want is not None and got.equals(want) and len(got) > 0


def test_runs_without_evidence_push_no_evidence_file(fake_hub: FakeHub, replica) -> None:
    from tests.hub.conftest import REPO_ID

    a = replica("a")
    build_demo_root(a.data, reported=False)
    path: Path = run_detector("lexical-overlap", "demo", limit=12, root=a.data)
    sync.push(HubClient.from_env(), a.data, a.subs)
    files = dict(fake_hub.repo(REPO_ID).files() or {})
    assert f"runs/{path.name}/{layout.PREDICTIONS_FILE}" in files
    assert not [p for p in files if p.endswith(layout.EVIDENCE_FILE)]
