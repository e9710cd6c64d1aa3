"""Parity with the official `longdocfactscore` package (1.0.0): the same tiny local BART and the
real packaged sentence-embedding model in both, so the scores must agree to 1e-5.

The package hard-codes hub ids and `cuda:0` and splits sentences with nltk's punkt (whose data
cannot be downloaded here); the test points it at the local models and installs a tiny punkt
model in a temporary nltk data folder, so that both split with the same real punkt and what is
compared is the whole pipeline. Its BARTScore class is also compared with FactBoard's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from evaluator.detectors.runner import build_detector
from tests.support.detectors import (
    DOCS,
    SUMMARIES,
    build_tiny_models,
    embedding_model_path,
    require_model_libraries,
)
from tests.support.tiny_summac import punkt_installed, write_punkt_tab

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# the package calls np.argsort on a torch tensor
pytestmark = pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")


@pytest.fixture(scope="module", autouse=True)
def punkt(tmp_path_factory: pytest.TempPathFactory):
    """nltk's punkt (a tiny model) for the package and for FactBoard's faithful splitter."""
    with punkt_installed(write_punkt_tab(tmp_path_factory.mktemp("nltk_data"))):
        yield


@pytest.fixture(scope="module")
def official(tmp_path_factory: pytest.TempPathFactory):
    require_model_libraries(("torch", "transformers", "sentence_transformers", "longdocfactscore"))
    import longdocfactscore.ldfacts as ldf
    from sentence_transformers import SentenceTransformer

    bart = build_tiny_models(tmp_path_factory.mktemp("tiny-parity"))["bart"]
    emb = embedding_model_path()
    mp = pytest.MonkeyPatch()
    mp.setattr(ldf, "SentenceTransformer", lambda _hub_id: SentenceTransformer(emb))
    real_bartscore = ldf.BARTScore
    mp.setattr(ldf, "BARTScore", lambda device: real_bartscore(device=device, checkpoint=bart))
    scorer = ldf.LongDocFACTScore(device="cpu")
    yield {"module": ldf, "scorer": scorer, "bart": bart, "emb": emb, "mp": mp}
    mp.undo()


def _long_inputs(shared: Path | None) -> tuple[list[str], list[str]]:
    """The hand-written pairs, plus three real PubMed articles of LongSciVerify (when the data
    is there) with summaries written from their abstracts. Repeated sentences are removed from
    the articles: equal sentences tie exactly in similarity, and the package breaks such ties
    with an unstable sort (FactBoard: the earlier sentence first), so only tie-free documents
    can be compared score for score."""
    docs, sums = list(DOCS), list(SUMMARIES)
    if shared is not None:
        from evaluator.detectors.text import split_sentences

        arts = json.loads(
            (shared / "longsciverify/raw_data/LongSciVerify/pubmed_test.json").read_text()
        )
        for a in arts[:3]:
            sents = list(dict.fromkeys(split_sentences(" ".join(a["article_text"]))))
            docs.append(" ".join(sents))
            abstract = " ".join(a["abstract_text"]).replace("<S>", "").replace("</S>", "")
            sums.append(" ".join(split_sentences(abstract)[:4]))
    return docs, sums


@pytest.fixture(scope="module")
def inputs() -> tuple[list[str], list[str]]:
    from tests.conftest import SHARED_BENCHMARKS

    return _long_inputs(SHARED_BENCHMARKS if SHARED_BENCHMARKS.is_dir() else None)


def test_longdocfactscore_equals_the_official_package(official, inputs) -> None:
    """The default (faithful) configuration is the package's."""
    docs, sums = inputs
    expected = official["scorer"].score_src_hyp_long(docs, sums)
    det = build_detector(
        "longdocfactscore",
        checkpoint=official["bart"],
        device="cpu",
        options={"embedding_model": official["emb"]},
    )
    assert det.options["context"] == "released" and det.deviations() == []
    got = det.score(docs, sums)
    assert det.describe()["fidelity"]["splitter"] == "nltk-punkt"
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)
    assert len(set(np.round(got, 4))) == len(got)  # distinct scores: a real comparison


def test_longdocfactscore_evidence_is_the_packages_per_sentence_max(official) -> None:
    """Per summary sentence: the package's metric on the retrieved snippets, max = the item's
    score and its snippet the support; the mean of the items is the pair's score."""
    det = build_detector(
        "longdocfactscore",
        checkpoint=official["bart"],
        device="cpu",
        options={"embedding_model": official["emb"]},
    )
    scores, ev = det.score_with_evidence(DOCS, SUMMARIES)
    metric = official["scorer"].metric_function
    for score, e, summ in zip(scores, ev, SUMMARIES, strict=True):
        assert e is not None and e["unit"] == "sentence"
        assert [it["text"] for it in e["items"]] == official["module"].sent_tokenize(summ)
        for it in e["items"]:
            snippets = [x["text"] for x in it["extra"]["snippets"]]
            assert len(snippets) == 3
            ref = metric(snippets, [it["text"]] * len(snippets))
            np.testing.assert_allclose(
                [x["score"] for x in it["extra"]["snippets"]], ref, atol=1e-5
            )
            assert it["score"] == pytest.approx(max(ref), abs=1e-5)
            assert it["support"] == snippets[int(np.argmax(ref))]
        assert score == pytest.approx(np.mean([it["score"] for it in e["items"]]), abs=1e-9)


def test_paper_context_equals_the_package_with_the_papers_window(official, inputs) -> None:
    """The paper's s_{k-1} + s_k + s_{k+1}: the package with only its window changed agrees."""
    ldf = official["module"]

    def paper_window(self, sentence_array, ii):
        return " ".join(sentence_array[max(ii - 1, 0) : ii + 2])

    docs, sums = inputs
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ldf.LongDocFACTScore, "get_surrounding_sentences", paper_window)
        expected = official["scorer"].score_src_hyp_long(docs, sums)
    det = build_detector(
        "longdocfactscore",
        checkpoint=official["bart"],
        device="cpu",
        options={"embedding_model": official["emb"], "context": "paper"},
    )
    assert det.deviations() == ["context=paper"]  # a labelled variant
    np.testing.assert_allclose(det.score(docs, sums), expected, atol=1e-5, rtol=0)
    released = build_detector(
        "longdocfactscore",
        checkpoint=official["bart"],
        device="cpu",
        options={"embedding_model": official["emb"]},
    ).score(docs, sums)
    assert not np.allclose(released, expected, atol=1e-5)  # the two windows do differ


def test_bartscore_equals_the_official_bartscore(official) -> None:
    ref = official["module"].BARTScore(device="cpu")  # patched to the tiny local BART
    docs = [*DOCS, " ".join(DOCS * 30)]  # the last one is cut at 1024 tokens by both
    sums = [*SUMMARIES, SUMMARIES[0]]
    expected = ref.bart_score(docs, sums, batch_size=4)
    det = build_detector("bartscore", checkpoint=official["bart"], device="cpu", batch_size=3)
    np.testing.assert_allclose(det.score(docs, sums), expected, atol=1e-5, rtol=0)
    assert det.stats.samples_truncated == 1
