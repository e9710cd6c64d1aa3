"""QAGS loader: fidelity to the release and to the paper's §5.1, and bad input."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from evaluator.benchmarks import qags, registry
from evaluator.benchmarks.registry import LoadedBenchmark
from evaluator.core.errors import IngestError
from evaluator.core.types import Sample


@pytest.fixture(scope="module")
def release(shared_benchmarks: Path) -> Path:
    return shared_benchmarks / "qags"


@pytest.fixture(scope="module")
def loaded(release: Path) -> LoadedBenchmark:
    return qags.load(release)


def _of(loaded: LoadedBenchmark, dataset: str) -> list[Sample]:
    return [s for s in loaded.samples if s.domain == dataset]


def _responses(sample: Sample) -> list[list[tuple[str, int]]]:
    return [
        [(w, v) for w, v in sentence] for sentence in json.loads(sample.attributes["responses"])
    ]


# ----------------------------------------------------------------------------- the spec


def test_spec_is_registered() -> None:
    spec = registry.get("qags")
    assert spec is qags.SPEC
    assert spec.task == "correlation"
    assert spec.units == ("summary",)
    assert spec.splits == ("test",)
    assert spec.primary_metric == "pearson"
    assert spec.domains == ("cnndm", "xsum")
    assert [(s.kind, s.field) for s in spec.slices] == [("dataset", "domain")]
    assert "2020.acl-main.450" in spec.citation
    assert qags.COMMIT in spec.source


# ----------------------------------------------------------------------------- fidelity

# SOURCE.md: lines, summary sentences, yes / no responses, fully consistent summaries
EXPECTED = {
    "cnndm": {"lines": 235, "sentences": 714, "yes": 1543, "no": 599, "consistent": 113},
    "xsum": {"lines": 239, "sentences": 239, "yes": 348, "no": 369, "consistent": 116},
}


@pytest.mark.parametrize("dataset", ["cnndm", "xsum"])
def test_counts_match_source_md(loaded: LoadedBenchmark, dataset: str) -> None:
    samples = _of(loaded, dataset)
    expected = EXPECTED[dataset]
    assert len(samples) == expected["lines"]
    assert [s.sample_id for s in samples] == [f"{dataset}-{i}" for i in range(len(samples))]
    n_sentences = sum(int(s.attributes["n_sentences"]) for s in samples)
    assert n_sentences == expected["sentences"]
    votes = Counter(v for s in samples for sentence in _responses(s) for _, v in sentence)
    assert (votes[1], votes[0]) == (expected["yes"], expected["no"])
    assert votes[1] + votes[0] == 3 * n_sentences  # 3 responses per sentence
    assert sum(s.label == 1 for s in samples) == expected["consistent"]


def test_sentences_per_summary(loaded: LoadedBenchmark) -> None:
    """SOURCE.md: CNN/DM summaries have 3-4 sentences (Bottom-Up), XSum ones 1 (BART)."""
    cnndm = Counter(int(s.attributes["n_sentences"]) for s in _of(loaded, "cnndm"))
    xsum = Counter(int(s.attributes["n_sentences"]) for s in _of(loaded, "xsum"))
    assert cnndm == {3: 226, 4: 9}
    assert xsum == {1: 239}


def test_scores_and_labels_follow_the_majority_vote(loaded: LoadedBenchmark) -> None:
    for s in loaded.samples:
        sentences = json.loads(s.attributes["sentences"])
        votes = json.loads(s.attributes["sentence_votes"])
        majority = [int(v >= 2) for v in votes]
        assert json.loads(s.attributes["sentence_majority"]) == majority
        assert votes == [sum(v for _, v in r) for r in _responses(s)]
        assert s.human_score == pytest.approx(sum(majority) / len(majority))
        assert s.label == int(all(majority))
        assert s.summary == " ".join(sentences)
        assert len(sentences) == int(s.attributes["n_sentences"])
        assert s.doc_id == s.summary_id == s.sample_id
        assert s.document and s.split == "test" and s.unit == "summary"
        assert all(isinstance(v, str) for v in s.attributes.values())
    assert len({s.sample_id for s in loaded.samples}) == 474


def test_human_score_distribution(loaded: LoadedBenchmark) -> None:
    """Sentence-level majority shares: CNN/DM 531/714 consistent, XSum 116/239."""
    for dataset, consistent_sentences, n in (("cnndm", 531, 714), ("xsum", 116, 239)):
        samples = _of(loaded, dataset)
        total = sum(sum(json.loads(s.attributes["sentence_majority"])) for s in samples)
        assert (total, sum(int(s.attributes["n_sentences"]) for s in samples)) == (
            consistent_sentences,
            n,
        )


def _reliability_by_worker(samples: list[Sample]) -> np.ndarray:
    """Raters = worker ids x units = summary sentences, NaN where a worker did not answer."""
    units = [sentence for s in samples for sentence in _responses(s)]
    workers = sorted({w for unit in units for w, _ in unit}, key=int)
    row = {w: i for i, w in enumerate(workers)}
    data = np.full((len(workers), len(units)), np.nan)
    for j, unit in enumerate(units):
        for w, v in unit:
            data[row[w], j] = v
    return data


def _reliability_by_position(samples: list[Sample]) -> np.ndarray:
    units = [sentence for s in samples for sentence in _responses(s)]
    return np.array([[unit[k][1] for unit in units] for k in range(3)], dtype=float)


@pytest.mark.parametrize(
    ("dataset", "paper_alpha", "recomputed", "n_workers"),
    [("cnndm", 0.51, 0.5135, 162), ("xsum", 0.34, 0.3421, 84)],
)
def test_krippendorff_alpha_of_paper_section_5_1(
    loaded: LoadedBenchmark, dataset: str, paper_alpha: float, recomputed: float, n_workers: int
) -> None:
    """QAGS §5.1: 'Krippendorff's alpha is 0.51 and 0.34 for CNN/DM and XSUM'."""
    from evaluator.core.metrics import krippendorff_alpha

    samples = _of(loaded, dataset)
    by_worker = _reliability_by_worker(samples)
    assert by_worker.shape[0] == n_workers
    assert (~np.isnan(by_worker)).sum(axis=0).tolist() == [3] * by_worker.shape[1]
    alpha = krippendorff_alpha(by_worker, level="nominal")
    assert round(alpha, 2) == paper_alpha
    assert alpha == pytest.approx(recomputed, abs=5e-5)
    # nominal alpha only sees the values within each unit, so who the raters are does not matter
    by_position = krippendorff_alpha(_reliability_by_position(samples), level="nominal")
    assert by_position == pytest.approx(alpha, abs=1e-12)


def test_xsum_articles_do_not_contain_their_summary(loaded: LoadedBenchmark) -> None:
    """The paper prepended the XSum summary for annotation; the release does not (caveat)."""
    xsum = _of(loaded, "xsum")
    assert sum(s.summary.strip().lower() in s.document.lower() for s in xsum) == 0


def test_single_file_source(release: Path) -> None:
    lb = qags.load(release / "mturk_xsum.jsonl")
    assert {s.domain for s in lb.samples} == {"xsum"}
    assert len(lb.samples) == 239
    assert lb.notes == ["only mturk_xsum.jsonl was given: cnndm absent"]
    assert lb.sources == [str(release / "mturk_xsum.jsonl")]


def test_samples_pass_the_ingest_validation(loaded: LoadedBenchmark) -> None:
    from evaluator.ingest.pipeline import samples_table

    table = samples_table(qags.SPEC, loaded.samples)
    assert table.num_rows == 474


def test_loads_fast(release: Path) -> None:
    import time

    start = time.perf_counter()
    qags.load(release)
    assert time.perf_counter() - start < 5


# ----------------------------------------------------------------------------- bad input


def _record(votes: tuple[str, ...] = ("yes", "yes", "no"), n_sentences: int = 2) -> dict:
    return {
        "article": "An article.",
        "summary_sentences": [
            {
                "sentence": f"Sentence {k}.",
                "responses": [{"worker_id": i, "response": v} for i, v in enumerate(votes)],
            }
            for k in range(n_sentences)
        ],
    }


def _write(folder: Path, cnndm: list[str], xsum: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mturk_cnndm.jsonl").write_text("\n".join(cnndm) + "\n")
    xsum = xsum if xsum is not None else [json.dumps(_record(n_sentences=1))]
    (folder / "mturk_xsum.jsonl").write_text("\n".join(xsum) + "\n")
    return folder


def test_hand_made_records(tmp_path: Path) -> None:
    lines = [
        json.dumps(_record(("yes", "yes", "no"))),
        json.dumps(
            {
                **_record(),
                "summary_sentences": _record()["summary_sentences"][:1]
                + _record(("no", "no", "YES"))["summary_sentences"][:1],
            }
        ),
    ]
    lb = qags.load(_write(tmp_path / "q", lines))
    a, b, x = lb.samples
    assert (a.sample_id, a.human_score, a.label) == ("cnndm-0", 1.0, 1)
    assert (b.sample_id, b.human_score, b.label) == ("cnndm-1", 0.5, 0)
    assert json.loads(b.attributes["sentence_votes"]) == [2, 1]
    assert json.loads(b.attributes["responses"])[1] == [["0", 0], ["1", 0], ["2", 1]]
    assert x.sample_id == "xsum-0" and x.summary == "Sentence 0."
    assert lb.notes == []


def test_truncated_line(tmp_path: Path) -> None:
    good = json.dumps(_record())
    folder = _write(tmp_path / "q", [good, good[: len(good) // 2]])
    with pytest.raises(IngestError, match="malformed or truncated JSON") as err:
        qags.load(folder)
    assert "mturk_cnndm.jsonl" in str(err.value)
    assert err.value.record == "line 2"


def test_missing_responses(tmp_path: Path) -> None:
    record = _record()
    del record["summary_sentences"][1]["responses"]
    folder = _write(tmp_path / "q", [json.dumps(_record())], [json.dumps(record)])
    with pytest.raises(IngestError, match="missing field") as err:
        qags.load(folder)
    message = str(err.value)
    assert "mturk_xsum.jsonl" in message and "line 1" in message and "'responses'" in message


@pytest.mark.parametrize("value", ["maybe", "", None, 1])
def test_response_outside_yes_no(tmp_path: Path, value: object) -> None:
    record = _record()
    record["summary_sentences"][0]["responses"][2]["response"] = value
    folder = _write(
        tmp_path / "q", [json.dumps(_record()), json.dumps(_record()), json.dumps(record)]
    )
    with pytest.raises(IngestError, match="is not 'yes' or 'no'") as err:
        qags.load(folder)
    assert err.value.record == "line 3" and err.value.field == "response"
    assert "mturk_cnndm.jsonl" in str(err.value)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r.pop("article"), "article"),
        (lambda r: r.update(article=""), "article"),
        (lambda r: r.update(summary_sentences=[]), "summary_sentences"),
        (lambda r: r["summary_sentences"][0].pop("sentence"), "sentence"),
        (lambda r: r["summary_sentences"][0].update(responses="yes"), "responses"),
        (lambda r: r["summary_sentences"][0]["responses"][0].pop("worker_id"), "worker_id"),
        (lambda r: r["summary_sentences"][0]["responses"][1].update(worker_id=0), "worker_id"),
        (lambda r: r["summary_sentences"][0]["responses"].pop(0), "responses"),  # 1-1 tie
    ],
)
def test_malformed_records(tmp_path: Path, mutate, field: str) -> None:
    record = _record()
    mutate(record)
    folder = _write(tmp_path / "q", [json.dumps(record)])
    with pytest.raises(IngestError) as err:
        qags.load(folder)
    assert err.value.field == field and err.value.record == "line 1"


def test_bad_sources(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="does not exist"):
        qags.load(tmp_path / "nowhere")
    folder = _write(tmp_path / "q", [json.dumps(_record())])
    (folder / "mturk_xsum.jsonl").unlink()
    with pytest.raises(IngestError, match="missing from the QAGS folder") as err:
        qags.load(folder)
    assert "mturk_xsum.jsonl" in str(err.value)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(_record()) + "\n")
    with pytest.raises(IngestError, match="QAGS release file names"):
        qags.load(other)
    (folder / "mturk_xsum.jsonl").write_text("\n\n")
    with pytest.raises(IngestError, match="no record"):
        qags.load(folder)
    (folder / "mturk_xsum.jsonl").write_text("[1, 2]\n")
    with pytest.raises(IngestError, match="expected a JSON object"):
        qags.load(folder)
    with pytest.raises(IngestError, match="no Hugging Face hub release.*--from PATH"):
        qags.load("hub")
