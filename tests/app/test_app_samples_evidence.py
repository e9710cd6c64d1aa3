"""AppTest: the Samples page shows, beside the open sample, the evidence each run's detector
stored (parts, scores, supporting source text, flagged parts), and says so for runs that stored
none."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.detectors.runner import run_detector
from evaluator.store import ingested, runs
from tests.support import testdata
from tests.support.apptest import open_app_page
from tests.support.evidence import EvidenceFactory, sentence_evidence

PAGE = "views/samples.py"
MODEL = "Sentence overlap"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("ev") / "leaderboard_data")
    run_detector("lexical-overlap", "demo", factory=EvidenceFactory(), model_name=MODEL, root=r)
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


def _test_sample(root: Path, with_evidence: bool) -> tuple[str, dict]:
    s = ingested.load_samples("demo", root)
    s = s[s["split"] == "test"].sort_values("sample_id")
    for _, row in s.iterrows():
        ev = sentence_evidence(row["document"], row["summary"])[1]
        if (ev is not None) == with_evidence:
            return str(row["sample_id"]), {"evidence": ev, **row.to_dict()}
    raise AssertionError("no such sample in the demo")


def test_the_open_sample_shows_each_runs_evidence(data: Path) -> None:
    sid, row = _test_sample(data, with_evidence=True)
    at = open_app_page(PAGE, {"sample": sid})
    assert not at.exception
    assert any("Why each run scored it so" in m.value for m in at.markdown)
    box = next(e for e in at.expander if e.label == MODEL)
    table = box.dataframe[0].value
    items = row["evidence"]["items"]
    assert table["summary sentence"].tolist() == [i["text"] for i in items]
    assert table["score"].tolist() == pytest.approx([i["score"] for i in items])
    assert table["best-supporting source sentence"].tolist() == [i["support"] for i in items]
    assert all(t in row["document"] for t in table["best-supporting source sentence"])
    # the flag: parts below the run's threshold
    rec = next(r for r in runs.list_runs(data).runs if r.model.name == MODEL)
    threshold = rec.threshold.threshold
    assert threshold is not None
    want = ["⚠" if i["score"] < threshold else "" for i in items]
    assert table[""].tolist() == want
    caption = " ".join(c.value for c in box.caption)
    assert "score = min of theirs" in caption and f"threshold {threshold:.4f}" in caption
    # the demo's baseline runs stored no evidence: said once for each
    quiet = " ".join(c.value for c in at.caption)
    assert quiet.count("this detector stored no evidence") == 4


def test_a_sample_the_detector_said_nothing_about(data: Path) -> None:
    sid, _ = _test_sample(data, with_evidence=False)
    at = open_app_page(PAGE, {"sample": sid})
    assert not at.exception
    assert not [e for e in at.expander if e.label == MODEL]
    quiet = " ".join(c.value for c in at.caption)
    assert f"{MODEL}: this detector stored no evidence for this sample" in quiet
