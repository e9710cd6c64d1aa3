"""LLM-AggreFact loader, on records written in the hub release's schema (no rows exist here):
the Parquet layout of lytang/LLM-AggreFact (data/dev-*.parquet, data/test-*.parquet; fields
dataset, doc, claim, label, contamination_identifier), JSON lines and CSV copies, the download
through a fake Hub, the ingest and the MiniCheck scoring protocol."""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.benchmarks import llm_aggrefact as la
from evaluator.benchmarks import registry
from evaluator.core import metrics as M
from evaluator.core import scoring
from evaluator.core.errors import IngestError, ScoringError
from evaluator.ingest import pipeline
from tests.support.fake_hub import FakeHub
from tests.support.llm_aggrefact_data import IDENT, records, write_hub_layout


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return write_hub_layout(tmp_path / "release", records("dev"), records("test"))


# ----------------------------------------------------------------------------------- spec


def test_spec() -> None:
    spec = registry.get("llm_aggrefact")
    assert spec.units == ("claim",) and spec.splits == ("dev", "test")
    assert spec.overall == "mean_over_domains" and spec.primary_metric == "balanced_accuracy"
    assert spec.fixed_threshold == 0.5
    assert spec.slice("dataset").fields == ("domain",)
    assert len(spec.domains) == 11 and "TofuEval-MediaS" in spec.domains
    assert spec.hub_id == "lytang/LLM-AggreFact"
    card = spec.card()
    assert card["fixed_threshold"] == 0.5
    assert "0.5" in card["description"] and "unweighted mean" in card["description"]
    assert any("cannot be reached here" in c for c in card["caveats"])


def test_dataset_names_match_the_leaderboard_columns(shared_benchmarks: Path) -> None:
    """Every column of both snapshots maps to one of the eleven datasets, one to one."""
    for snap in ("2024-10", "2025-09"):
        path = (
            shared_benchmarks / "llm_aggrefact" / f"llm_aggrefact_leaderboard_snapshot_{snap}.csv"
        )
        with open(path, encoding="utf-8") as f:
            header = next(csv.reader(f))
        cols = [c for c in header if c in la.LEADERBOARD_COLUMNS]
        assert len(cols) == 11
        assert sorted(la.LEADERBOARD_COLUMNS[c] for c in cols) == sorted(la.DATASETS)


# ------------------------------------------------------------------------------- parsing


def test_hub_layout(release: Path) -> None:
    lb = la.load(release)
    assert len(lb.samples) == 2 * 11 * 6
    s = lb.samples[0]
    assert (s.benchmark, s.unit, s.split, s.domain) == (
        "llm_aggrefact",
        "claim",
        "dev",
        "AggreFact-CNN",
    )
    assert s.summary.startswith("The council") or s.summary.startswith("Zoning")
    assert s.document and s.document.startswith("AggreFact-CNN dev document 0")
    assert s.attributes == {"contamination_identifier": IDENT}
    assert Counter(x.split for x in lb.samples) == {"dev": 66, "test": 66}
    assert set(x.domain for x in lb.samples) == set(la.DATASETS)
    labels = Counter(x.label for x in lb.samples)
    assert labels[0] > 0 and labels[1] > 0
    # one document's claims share a doc_id; documents differ across datasets and splits
    by_doc = Counter(x.doc_id for x in lb.samples)
    assert set(by_doc.values()) == {3}
    assert any("test: 66 claims" in n and "11 datasets" in n for n in lb.notes)
    assert lb.sources == [
        str(release / "data" / "dev-00000-of-00001.parquet"),
        str(release / "data" / "test-00000-of-00001.parquet"),
    ]


def test_ids_are_stable_under_reordering(tmp_path: Path) -> None:
    rows = records("test")
    a = la.load(write_hub_layout(tmp_path / "a", records("dev"), rows))
    b = la.load(write_hub_layout(tmp_path / "b", records("dev"), rows[::-1]))
    assert {s.sample_id: s for s in a.samples} == {s.sample_id: s for s in b.samples}


def test_repeated_pair_gets_a_suffix(tmp_path: Path) -> None:
    rows = records("test", 3)
    rows.append(dict(rows[0]))
    lb = la.load(write_jsonl(tmp_path / "test.jsonl", rows))
    ids = [s.sample_id for s in lb.samples]
    assert len(set(ids)) == len(ids) and ids[-1] == ids[0] + "-2"
    assert any("1 repeated" in n for n in lb.notes)


def test_jsonl_csv_and_split_field(tmp_path: Path) -> None:
    rows = records("test", 3)
    from_jsonl = la.load(write_jsonl(tmp_path / "test.jsonl", rows))
    path = tmp_path / "any_name.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=[*rows[0], "split"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "split": "test"})
    from_csv = la.load(path)
    assert [s.to_row() for s in from_csv.samples] == [s.to_row() for s in from_jsonl.samples]
    # "validation" is the dev split; leaderboard spellings of the datasets are accepted
    rows2 = [{**rows[0], "split": "validation", "dataset": "WiCE"}]
    s = la.load(write_jsonl(tmp_path / "x.jsonl", rows2)).samples[0]
    assert (s.split, s.domain, s.attributes["source_dataset"]) == ("dev", "Wice", "WiCE")


def test_folder_of_split_files_ignores_snapshots(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "dev.jsonl", records("dev", 3))
    write_jsonl(tmp_path / "test.jsonl", records("test", 3))
    (tmp_path / "llm_aggrefact_leaderboard_snapshot_2025-09.csv").write_text("model,CNN\n")
    lb = la.load(tmp_path)
    assert Counter(s.split for s in lb.samples) == {"dev": 33, "test": 33}


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"dataset": "AggreFact-FTSota"}, "dataset", "unknown dataset"),
        ({"label": 2}, "label", "must be 0"),
        ({"label": True}, "label", "must be 0"),
        ({"claim": None}, "claim", "expected a string"),
        ({"doc": "  "}, "doc", "must not be empty"),
        ({"contamination_identifier": 7}, "contamination_identifier", "expected a string"),
        ({"split": "train"}, "split", "unknown split"),
    ],
)
def test_bad_records_name_file_record_and_field(tmp_path, change, field, message) -> None:
    rows = records("test", 2)
    rows[3] = {**rows[3], **change}
    path = write_jsonl(tmp_path / "test.jsonl", rows)
    with pytest.raises(IngestError) as err:
        la.load(path)
    assert err.value.field == field and str(err.value.record) == "#3"
    assert message in str(err.value) and "test.jsonl" in str(err.value)


def test_missing_field_and_unknown_split(tmp_path: Path) -> None:
    rows = records("test", 2)
    del rows[1]["label"]
    with pytest.raises(IngestError) as err:
        la.load(write_jsonl(tmp_path / "test.jsonl", rows))
    assert (err.value.field, str(err.value.record)) == ("label", "#1")
    with pytest.raises(IngestError, match="cannot tell the split"):
        la.load(write_jsonl(tmp_path / "claims.jsonl", records("test", 2)))
    (tmp_path / "empty").mkdir()
    with pytest.raises(IngestError, match="no LLM-AggreFact data file"):
        la.load(tmp_path / "empty")
    bad = tmp_path / "test-0.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(IngestError, match="cannot read Parquet") as err:
        la.load(bad)
    assert str(bad) in str(err.value)


# ----------------------------------------------------------------------------------- hub


def _hub_files(dev: list[dict], test: list[dict]) -> dict[str, bytes]:
    out = {"README.md": b"---\nlicense: cc-by-nd-4.0\n---\n"}
    for split, rows in (("dev", dev), ("test", test)):
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(rows), sink)
        out[f"data/{split}-00000-of-00001.parquet"] = sink.getvalue().to_pybytes()
    return out


def test_hub_download_through_a_fake_hub(hub: FakeHub, release: Path) -> None:
    hub.create(la.HUB_ID)
    first = hub.put(la.HUB_ID, _hub_files(records("dev"), records("test")))
    lb = la.load("hub")
    assert [s.to_row() for s in lb.samples] == [s.to_row() for s in la.load(release).samples]
    assert lb.sources == [
        f"hf://datasets/{la.HUB_ID}/data/dev-00000-of-00001.parquet",
        f"hf://datasets/{la.HUB_ID}/data/test-00000-of-00001.parquet",
    ]
    # a revision pins the download: a later commit does not change what it reads
    hub.put(la.HUB_ID, _hub_files(records("dev", 3), records("test", 3)))
    assert len(la.load("hub").samples) == 66
    pinned = la.load("hub", revision=first)
    assert len(pinned.samples) == 132 and pinned.sources[0].endswith(f"@{first}")


def test_hub_unreachable(no_hub: str) -> None:
    with pytest.raises(IngestError) as err:
        la.load("hub")
    msg = str(err.value)
    assert "could not download" in msg and "--from PATH" in msg and "HF_TOKEN" in msg
    assert "hf://datasets/lytang/LLM-AggreFact" in msg


# ---------------------------------------------------------------------- ingest and scoring


def test_ingest_from_path_with_the_cli(tmp_data_root: Path, release: Path, capsys) -> None:
    from evaluator.cli.main import main
    from evaluator.store import ingested

    assert main(["ingest", "llm_aggrefact", "--from", str(release)]) == 0
    assert "llm_aggrefact: 132 samples" in capsys.readouterr().out
    meta = ingested.load_meta("llm_aggrefact")
    assert meta["stats"]["domains_missing"] == [] and meta["fixed_threshold"] == 0.5
    df = ingested.load_samples("llm_aggrefact")
    assert set(df["unit"]) == {"claim"} and len(df) == 132


def test_ingest_all_skips_a_folder_of_snapshots(tmp_data_root: Path, tmp_path: Path) -> None:
    from evaluator.ingest.folder import ingest_all

    shared = tmp_path / "shared"
    (shared / "llm_aggrefact").mkdir(parents=True)
    (shared / "llm_aggrefact" / "llm_aggrefact_leaderboard_snapshot_2025-09.csv").write_text("m\n")
    assert [r.name for r in ingest_all(shared)] == []
    write_hub_layout(shared / "llm_aggrefact", records("dev", 3), records("test", 3))
    assert [r.name for r in ingest_all(shared)] == ["llm_aggrefact"]


def _frame(release: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    spec = registry.get("llm_aggrefact")
    table = pipeline.samples_table(spec, la.load(release).samples)
    return spec, table.to_pandas()


def test_overall_is_the_mean_of_per_dataset_bacc(tmp_path: Path) -> None:
    """Overall = unweighted mean of the eleven per-dataset BAccs, not the pooled BAcc; the
    threshold is the protocol's fixed 0.5 (no dev tuning)."""
    release = write_hub_layout(tmp_path, records("dev", 8, True), records("test", 8, True))
    spec, samples = _frame(release)
    test = samples[samples["split"] == "test"].reset_index(drop=True)
    rng = np.random.default_rng(3)
    # per-dataset quality differs, so pooled and mean-of-datasets BAcc differ
    skill = {d: i / 12 for i, d in enumerate(la.DATASETS)}
    noise = rng.random(len(test))
    prob = np.where(
        test["domain"].map(skill) > noise,
        test["label"] * 0.8 + 0.1,
        1 - (test["label"] * 0.8 + 0.1),
    )
    preds = pd.DataFrame({"sample_id": test["sample_id"], "score": prob})
    out = scoring.score(spec, samples, preds, scoring.ScoreOptions(resamples=50))
    assert out.threshold.policy == "fixed" and out.threshold.threshold == 0.5
    assert out.splits == ["test"]
    res = {(r.slice_kind, r.slice_value, r.metric): r for r in out.results}
    y, yhat = test["label"].to_numpy(), (prob >= 0.5).astype(int)
    per = []
    for d in la.DATASETS:
        m = (test["domain"] == d).to_numpy()
        b = M.balanced_accuracy(y[m], yhat[m])
        assert res[("dataset", d, "balanced_accuracy")].value == pytest.approx(b)
        per.append(b)
    overall = res[("overall", "", "balanced_accuracy")]
    assert overall.value == pytest.approx(np.mean(per))
    assert abs(overall.value - M.balanced_accuracy(y, yhat)) > 1e-3  # not pooled
    assert overall.aggregation == "mean_over_domains"


def test_non_probability_scores_need_a_threshold(release: Path) -> None:
    spec, samples = _frame(release)
    test = samples[samples["split"] == "test"]
    preds = pd.DataFrame({"sample_id": test["sample_id"], "score": np.linspace(-3, 3, len(test))})
    with pytest.raises(ScoringError, match=r"fixed threshold 0.5.*from -3 to 3.*not probabilities"):
        scoring.score(spec, samples, preds, scoring.ScoreOptions(resamples=10))
    # tuned per dataset on dev, labelled as such
    both = samples.reset_index(drop=True)
    preds = pd.DataFrame(
        {
            "sample_id": both["sample_id"],
            "score": both["label"] * 2.0 - 1 + 0.01 * np.arange(len(both)),
        }
    )
    out = scoring.score(
        spec, samples, preds, scoring.ScoreOptions(policy="per-domain-dev", resamples=10)
    )
    assert out.threshold.policy == "per-domain-dev"
    assert set(out.threshold.per_domain or {}) == set(la.DATASETS)


def test_a_detector_scores_claims_at_the_fixed_threshold(
    tmp_data_root: Path, release: Path
) -> None:
    """Claims go through the same detector contract as summaries; the run records the unit
    'claim' and scores only the test split (no dev split is needed for a fixed threshold)."""
    from evaluator.detectors.base import DetectorError
    from evaluator.detectors.runner import run_detector
    from evaluator.store import runs

    pipeline.ingest("llm_aggrefact", release)
    path = run_detector("lexical-overlap", "llm_aggrefact")
    rec = runs.read_record(path)
    assert rec.config.extra["unit"] == "claim"
    assert rec.config.extra["splits_run"] == ["test"]
    assert rec.threshold.policy == "fixed" and rec.threshold.threshold == 0.5
    units = {r.unit for r in rec.results}
    assert units == {"claim"}
    kinds = {r.slice_kind for r in rec.results if r.metric == "balanced_accuracy"}
    assert kinds == {"overall", "dataset"}
    with pytest.raises((ScoringError, DetectorError), match="not probabilities"):
        run_detector("novel-entities", "llm_aggrefact")
    assert os.listdir(tmp_data_root / "runs") == [path.name]
