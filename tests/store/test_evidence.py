"""evidence.parquet: a detector run that gives evidence stores it with the run (only then), one
sample's rows are read back without the rest, and a damaged file or row is an error naming the
run, the file and the sample."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.core.errors import CorruptRunError, FactBoardError
from evaluator.detectors import blocks as B
from evaluator.detectors.runner import run_detector
from evaluator.runner import Engine
from evaluator.store import doctor, evidence_file, ingested, layout, runs
from tests.support.evidence import EvidenceFactory, sentence_evidence

LIMIT = 12


@pytest.fixture
def demo(tmp_data_root: Path) -> Path:
    from evaluator.ingest.demo import build_demo

    list(build_demo(root=tmp_data_root))
    return tmp_data_root


def _evidence_run(**kw: object) -> Path:
    return run_detector(
        "lexical-overlap",
        "demo",
        limit=LIMIT,
        factory=EvidenceFactory(),
        engine=Engine("local", block_size=8),
        **kw,  # type: ignore[arg-type]
    )


def test_a_detector_run_with_evidence_stores_it_and_one_sample_reads_back(demo: Path) -> None:
    path = _evidence_run()
    f = path / layout.EVIDENCE_FILE
    assert f.is_file()
    meta = pq.ParquetFile(f).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"
    samples = ingested.load_samples("demo").set_index("sample_id")
    stored = evidence_file.read_evidence(path)
    assert stored is not None and list(stored.columns) == ["sample_id", "split", "evidence"]
    assert stored["sample_id"].is_monotonic_increasing and stored["sample_id"].is_unique
    # every pair the detector gave evidence for, and only those; dev pairs (threshold) too
    preds = runs.read_predictions(path)
    scored = samples.loc[preds["sample_id"]]
    want = {
        sid: ev
        for sid, row in scored.iterrows()
        if (ev := sentence_evidence(row["document"], row["summary"])[1]) is not None
    }
    assert 0 < len(want) < len(scored)  # some pairs have none
    assert set(stored["sample_id"]) == set(want)
    assert set(stored["split"]) == {"dev", "test"}
    for sid, ev in zip(stored["sample_id"], stored["evidence"], strict=True):
        assert ev == json.loads(json.dumps(want[sid]))
        assert stored.set_index("sample_id").loc[sid, "split"] == samples.loc[sid, "split"]
    # one sample (or a few) without the others
    one = str(stored["sample_id"].iloc[3])
    got = evidence_file.read_evidence(path, [one])
    assert got is not None and got["sample_id"].tolist() == [one]
    assert got["evidence"].iloc[0]["unit"] == "sentence"
    assert got["evidence"].iloc[0]["items"][0]["support"]
    two = evidence_file.read_evidence(path, [one, "no-such-sample"])
    assert two is not None and two["sample_id"].tolist() == [one]
    assert doctor.run_problems() == []


def test_a_run_without_evidence_has_no_evidence_file(demo: Path) -> None:
    path = run_detector("lexical-overlap", "demo", limit=LIMIT)
    assert not (path / layout.EVIDENCE_FILE).exists()
    assert evidence_file.read_evidence(path) is None
    assert evidence_file.read_evidence(path, ["x"]) is None


def test_a_sample_is_read_from_its_row_group_only(tmp_path: Path) -> None:
    """Written in row groups sorted by sample id: a filtered read touches one group."""
    n = evidence_file.EVIDENCE_ROW_GROUP * 3
    ev = {"unit": "claim", "aggregate": "max", "items": [{"text": "c", "score": 0.5}]}
    frame = pd.DataFrame(
        {
            "sample_id": [f"s{i:05d}" for i in reversed(range(n))],
            "split": "test",
            "evidence": [ev] * n,
        }
    )
    table = evidence_file.evidence_table(frame)
    assert table is not None
    f = tmp_path / "evidence.parquet"
    pq.write_table(table, f, row_group_size=evidence_file.EVIDENCE_ROW_GROUP)
    meta = pq.ParquetFile(f).metadata
    assert meta.num_row_groups == 3
    stats = [meta.row_group(g).column(0).statistics for g in range(3)]
    assert [(s.min, s.max) for s in stats] == [
        ("s00000", "s00511"),
        ("s00512", "s01023"),
        ("s01024", "s01535"),
    ]
    got = evidence_file.read_evidence(tmp_path, ["s00700"])
    assert got is not None and got["sample_id"].tolist() == ["s00700"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{not json", "is not valid JSON"),
        ({"unit": "paragraph", "aggregate": "min", "items": []}, "unit 'paragraph' is not one"),
        ({"unit": "sentence", "items": []}, "aggregate is missing"),
        ({"unit": "sentence", "aggregate": "min", "items": [{"score": 1}]}, "item #0 has no text"),
        (
            {"unit": "sentence", "aggregate": "min", "items": [{"text": "a", "score": "high"}]},
            "item #0 score 'high' is not a number",
        ),
    ],
)
def test_bad_evidence_is_refused_naming_the_sample(value: object, problem: str) -> None:
    frame = pd.DataFrame({"sample_id": ["a", "b"], "split": ["test", "test"]})
    frame["evidence"] = pd.Series([None, value], dtype=object)
    with pytest.raises(FactBoardError, match=f"evidence of sample 'b'.*{problem}"):
        evidence_file.evidence_table(frame)


def test_no_evidence_at_all_makes_no_table_and_duplicates_are_refused() -> None:
    none = pd.DataFrame({"sample_id": ["a"], "split": ["test"], "evidence": [None]})
    assert evidence_file.evidence_table(none) is None
    ev = {"unit": "claim", "aggregate": "max", "items": []}
    dup = pd.DataFrame({"sample_id": ["a", "a"], "split": ["test"] * 2, "evidence": [ev, ev]})
    with pytest.raises(FactBoardError, match="two rows for sample 'a'"):
        evidence_file.evidence_table(dup)
    with pytest.raises(FactBoardError, match="no column"):
        evidence_file.evidence_table(pd.DataFrame({"sample_id": ["a"]}))


def test_evidence_text_is_redacted(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-" + "x" * 24
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    ev = {"unit": "claim", "aggregate": "max", "items": [{"text": f"key {secret}", "score": 1.0}]}
    table = evidence_file.evidence_table(
        pd.DataFrame({"sample_id": ["a"], "split": ["test"], "evidence": [ev]})
    )
    assert table is not None
    text = table.column("evidence")[0].as_py()
    assert secret not in text and json.loads(text)["items"][0]["score"] == 1.0


def test_a_damaged_evidence_file_is_an_error_naming_run_file_and_sample(demo: Path) -> None:
    path = _evidence_run()
    f = path / layout.EVIDENCE_FILE
    good = pq.read_table(f)
    first = good.column("sample_id")[0].as_py()
    bad_rows = good.to_pandas()
    bad_rows.loc[0, "evidence"] = json.dumps({"unit": "sentence", "items": []})
    pq.write_table(pa.Table.from_pandas(bad_rows, preserve_index=False), f)
    with pytest.raises(CorruptRunError, match=f"evidence.parquet, sample '{first}'.*aggregate"):
        evidence_file.read_evidence(path, [first])
    others = [bad_rows.loc[1, "sample_id"]]
    assert evidence_file.read_evidence(path, others) is not None  # the other samples are read

    pq.write_table(pa.table({"sample_id": ["a"], "evidence": [1]}), f)
    with pytest.raises(CorruptRunError, match=r"evidence.parquet has no column\(s\) split"):
        evidence_file.read_evidence(path)
    problems = doctor.run_problems()
    assert [p.path for p in problems] == [str(path)] and "evidence.parquet" in problems[0].problem

    f.write_bytes(b"PAR1 truncated")
    with pytest.raises(CorruptRunError, match="evidence.parquet unreadable"):
        evidence_file.read_evidence(path)


def test_evidence_survives_a_block_checkpoint(tmp_path: Path) -> None:
    """A resumed run takes a block's evidence from its checkpoint, as it was scored."""
    store = B.BlockStore(tmp_path / "blocks")
    ev = B.evidence_json({"unit": "claim", "aggregate": "max", "items": []})
    r = B.BlockResult(0, ["a", "b"], [0.5, float("nan")], {"stats": None}, [ev, None])
    store.save(r)
    back = store.load(0, ["a", "b"])
    assert back is not None and back.evidence == [ev, None]
    # a checkpoint written before blocks carried evidence is scored again, not taken as "none"
    pq.write_table(pa.table({"sample_id": ["a"], "score": [0.1]}), tmp_path / "blocks" / "x")
    (tmp_path / "blocks" / "x").rename(tmp_path / "blocks" / "block-00001.parquet")
    assert store.load(1, ["a"]) is None
