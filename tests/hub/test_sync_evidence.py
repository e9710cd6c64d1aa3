"""A run's evidence.parquet goes to the results repo's evidence shard with the run and comes back
on a pull, row for row."""

from __future__ import annotations

import io
import json
import shutil

import pyarrow.parquet as pq
import pytest

from evaluator.detectors.runner import run_detector
from evaluator.hub import sync
from evaluator.hub.client import HubClient
from evaluator.store import evidence_file, layout
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
    (shard,) = [p for p in files if p.startswith("shards/demo/evidence-")]
    manifest = json.loads(files["manifest.json"])
    assert list(manifest["shards"]["demo"].values()) == [["predictions", "labels", "evidence"]]
    rows = pq.read_table(io.BytesIO(files[shard])).to_pandas()
    assert set(rows["run_id"]) == {rid}
    want = evidence_file.read_evidence(path)
    assert want is not None
    assert [json.loads(e) for e in rows["evidence"]] == list(want["evidence"])

    shutil.rmtree(b.data)
    sync.pull(client, b.data, b.subs)
    pulled = layout.run_dir(rid, b.data)
    got = evidence_file.read_evidence(pulled)
    assert got is not None and got.equals(want) and len(got) > 0


def test_runs_without_evidence_push_no_evidence_file(fake_hub: FakeHub, replica) -> None:
    from tests.hub.conftest import REPO_ID

    a = replica("a")
    build_demo_root(a.data, reported=False)
    run_detector("lexical-overlap", "demo", limit=12, root=a.data)
    sync.push(HubClient.from_env(), a.data, a.subs)
    files = dict(fake_hub.repo(REPO_ID).files() or {})
    assert [p for p in files if p.startswith("shards/")]
    assert not [p for p in files if "evidence" in p]
