"""Every model-based detector end to end on tiny random-weight models built offline, with its
batched, deduplicated, length-sorted scoring checked against plain one-pair-at-a-time model
calls written out here; determinism; truncation recorded; errors named."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from evaluator.detectors.base import DetectorError
from evaluator.detectors.runner import build_detector
from tests.support.detectors import DOCS, SUMMARIES, build_tiny_models, embedding_model_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _need(*modules: str) -> None:
    import importlib

    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            msg = f"{m} is not installed (pip install -r requirements-detectors.txt)"
            if os.environ.get("CI"):
                pytest.fail(msg)
            pytest.skip(msg)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    _need("torch", "transformers", "tokenizers")
    return build_tiny_models(tmp_path_factory.mktemp("tiny-models"))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def _configs(tiny: dict[str, str]) -> dict[str, dict]:
    return {
        "summac-zs": {"checkpoint": tiny["nli"]},
        "alignscore": {
            "checkpoint": tiny["align-ckpt"],
            "options": {"base_model": tiny["align-base"]},
        },
        "minicheck": {"checkpoint": tiny["minicheck-enc"]},
        "bartscore": {"checkpoint": tiny["bart"]},
        "longdocfactscore": {
            "checkpoint": tiny["bart"],
            "options": {"embedding_model": embedding_model_path()},
        },
        "qags": {
            "checkpoint": tiny["t5"],
            "options": {
                "qa_model": tiny["qa"],
                "spacy_model": "none",
                "num_beams": 3,
                "questions_per_answer": 3,
                "n_questions": 4,
                "min_question_tokens": 1,
                "n_answers": 3,
                "max_question_tokens": 12,
            },
        },
        "bertscore": {"checkpoint": tiny["encoder"], "options": {"num_layers": 2}},
    }


def test_summac_image_equals_one_pair_at_a_time(tiny: dict[str, str]) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from evaluator.detectors.summac import zs_score
    from evaluator.detectors.text import split_sentences

    det = build_detector("summac-zs", checkpoint=tiny["nli"], device="cpu", batch_size=4)
    images = det.images(DOCS, SUMMARIES)
    tok = AutoTokenizer.from_pretrained(tiny["nli"])
    model = AutoModelForSequenceClassification.from_pretrained(tiny["nli"]).eval()
    for doc, summ, img in zip(DOCS, SUMMARIES, images, strict=True):
        blocks, sents = split_sentences(doc, "nltk"), split_sentences(summ, "nltk")
        assert img.shape == (3, len(blocks), len(sents))
        for i, b in enumerate(blocks):
            for j, s in enumerate(sents):
                enc = tok(b, s, truncation="only_first", max_length=128, return_tensors="pt")
                with torch.no_grad():
                    p = _softmax(model(**enc).logits[0].numpy())
                # VitaminC order: SUPPORTS (entail) 0, REFUTES (contradict) 1, NEI (neutral) 2
                np.testing.assert_allclose(img[:, i, j], p[[0, 1, 2]], atol=1e-5)
    assert det.score(DOCS, SUMMARIES) == pytest.approx([zs_score(i) for i in images], abs=1e-9)
    assert any("from config labels" in n for n in det.stats.notes)


def test_alignscore_matrix_equals_one_pair_at_a_time(tiny: dict[str, str]) -> None:
    import torch
    from transformers import AutoConfig, AutoTokenizer, RobertaModel

    from evaluator.detectors.alignscore import alignscore_aggregate
    from evaluator.detectors.text import alignscore_chunks, split_sentences

    det = build_detector(
        "alignscore",
        checkpoint=tiny["align-ckpt"],
        device="cpu",
        options={"base_model": tiny["align-base"]},
    )
    det.ensure_loaded()
    mats = det.matrices(DOCS, SUMMARIES)
    state = torch.load(tiny["align-ckpt"], weights_only=True)["state_dict"]
    backbone = RobertaModel(AutoConfig.from_pretrained(tiny["align-base"]))
    backbone.load_state_dict(
        {k[len("base_model.") :]: v for k, v in state.items() if k.startswith("base_model.")}
    )
    backbone.eval()
    tok = AutoTokenizer.from_pretrained(tiny["align-base"])
    for doc, summ, m in zip(DOCS, SUMMARIES, mats, strict=True):
        chunks = alignscore_chunks(doc, style="nltk")
        sents = split_sentences(summ, "nltk")
        for i, c in enumerate(chunks):
            for j, s in enumerate(sents):
                enc = tok(c, s, truncation="only_first", max_length=128, return_tensors="pt")
                with torch.no_grad():
                    pooled = backbone(**enc).pooler_output[0]
                    logits = state["tri_layer.weight"] @ pooled + state["tri_layer.bias"]
                assert m[i, j] == pytest.approx(float(_softmax(logits.numpy())[0]), abs=1e-5)
    assert det.score(DOCS, SUMMARIES) == pytest.approx([alignscore_aggregate(m) for m in mats])
    assert det.stats.samples_truncated >= 1  # tiny 128-token limit: recorded, not silent


@pytest.mark.parametrize("which", ["minicheck-enc", "t5"])
def test_minicheck_matrix_equals_one_chunk_at_a_time(tiny: dict[str, str], which: str) -> None:
    import torch
    from transformers import (
        AutoModelForSeq2SeqLM,
        AutoModelForSequenceClassification,
        AutoTokenizer,
    )

    from evaluator.detectors.minicheck import minicheck_aggregate
    from evaluator.detectors.text import split_sentences

    det = build_detector(
        "minicheck",
        checkpoint=tiny[which],
        device="cpu",
        options={"chunk_size": 20, "aggregate": "min"},
    )
    det.ensure_loaded()
    mats = det.matrices(DOCS, SUMMARIES)
    tok = AutoTokenizer.from_pretrained(tiny[which])
    seq2seq = which == "t5"
    if seq2seq:
        model = AutoModelForSeq2SeqLM.from_pretrained(tiny[which]).eval()
    else:
        model = AutoModelForSequenceClassification.from_pretrained(tiny[which]).eval()
    for doc, summ, m in zip(DOCS, SUMMARIES, mats, strict=True):
        chunks, claims = det.chunks(doc), split_sentences(summ, "nltk")
        assert len(chunks) > 1  # 20-word (or token) chunks: the document is split
        for i, c in enumerate(chunks):
            for j, s in enumerate(claims):
                with torch.no_grad():
                    if seq2seq:
                        enc = tok("predict: " + c + "</s>" + s, return_tensors="pt")
                        out = model(**enc, decoder_input_ids=torch.tensor([[1]])).logits[0, 0]
                        p = float(_softmax(out[[3, 209]].numpy())[1])
                    else:
                        enc = tok(
                            c + "</s>" + s, truncation=True, max_length=256, return_tensors="pt"
                        )
                        p = float(_softmax(model(**enc).logits[0].numpy())[1])
                assert m[i, j] == pytest.approx(p, abs=1e-5)
    assert det.score(DOCS, SUMMARIES) == pytest.approx([minicheck_aggregate(m) for m in mats])


@pytest.mark.parametrize(
    "name",
    ["summac-zs", "alignscore", "minicheck", "bartscore", "longdocfactscore", "qags", "bertscore"],
)
def test_every_detector_end_to_end_and_deterministic(tiny: dict[str, str], name: str) -> None:
    cfg = _configs(tiny)[name]
    docs, sums = DOCS + DOCS[:1], SUMMARIES + SUMMARIES[1:2]  # a document with two summaries
    a, ev = build_detector(name, device="cpu", batch_size=2, **cfg).score_with_evidence(docs, sums)
    assert len(a) == len(docs)
    assert all(isinstance(v, float) and math.isfinite(v) for v in a)
    varied = len(set(a)) > 1  # the scores depend on the inputs
    if name == "qags" and not varied:  # random QA weights: every answer pair may disagree (0)
        varied = len({str(e) for e in ev}) > 1  # then its questions and answers must vary
    assert varied
    # a fresh instance, other batch size, inputs reversed: the same score for every pair
    b = build_detector(name, device="cpu", batch_size=3, **cfg).score(docs[::-1], sums[::-1])
    assert b[::-1] == pytest.approx(a, abs=1e-5)
    again = build_detector(name, device="cpu", batch_size=2, **cfg).score(docs, sums)
    assert again == a  # same inputs, same batches: identical


def test_bertscore_is_bert_score_precision_and_counts_truncation(tiny: dict[str, str]) -> None:
    from bert_score import BERTScorer

    long_doc = " ".join(DOCS * 4)
    docs, sums = [*DOCS, long_doc], [*SUMMARIES, SUMMARIES[0]]
    det = build_detector("bertscore", device="cpu", **_configs(tiny)["bertscore"])
    got = det.score(docs, sums)
    p, _, _ = BERTScorer(model_type=tiny["encoder"], num_layers=2, device="cpu").score(sums, docs)
    assert got == pytest.approx([float(v) for v in p], abs=1e-6)
    assert det.stats.samples_truncated >= 1


def test_truncation_is_counted_per_sample(tiny: dict[str, str]) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny["bart"])
    det = build_detector(
        "bartscore", checkpoint=tiny["bart"], device="cpu", options={"max_length": 60}
    )
    det.score(DOCS, SUMMARIES)
    expected = sum(
        len(tok(d)["input_ids"]) > 60 or len(tok(s)["input_ids"]) > 60
        for d, s in zip(DOCS, SUMMARIES, strict=True)
    )
    assert expected >= 1
    st = det.describe()["stats"]
    assert st["samples_truncated"] == expected
    assert st["max_input_tokens"] == {"source": 60}


def test_qags_uses_windows_over_long_sources(tiny: dict[str, str]) -> None:
    from evaluator.detectors.device import resolve_device
    from evaluator.detectors.qags import ExtractiveQA

    qa = ExtractiveQA(tiny["qa"], resolve_device("cpu"), max_length=64, stride=16)
    ctx = " ".join(DOCS)
    answers, windows = qa.answer(["Who is the mayor?", "What rose?"], [ctx, DOCS[1]], 4, 10)
    assert windows > 2  # the long context needed several windows
    for a, c in zip(answers, [ctx, DOCS[1]], strict=True):
        assert a == "" or a in c


def test_summac_conv_trains_scores_and_reloads(tiny: dict[str, str], tmp_path: Path) -> None:
    import json

    det = build_detector(
        "summac-conv", checkpoint=tiny["nli"], device="cpu", options={"conv_weights": "dev"}
    )
    assert det.needs_fit
    with pytest.raises(DetectorError, match="not trained"):
        det.score(DOCS, SUMMARIES)
    docs = DOCS * 2
    sums = SUMMARIES + [d.split(". ")[0] + "." for d in DOCS]  # 3 edited-like, 3 extractive
    state = det.fit(docs, sums, [0, 0, 0, 1, 1, 1])
    scores = det.score(docs, sums)
    assert all(0.0 <= s <= 1.0 for s in scores)
    f = tmp_path / "conv.json"
    f.write_text(json.dumps(state))
    again = build_detector(
        "summac-conv", checkpoint=tiny["nli"], device="cpu", options={"conv_weights": str(f)}
    )
    assert not again.needs_fit
    assert again.score(docs, sums) == pytest.approx(scores, abs=1e-9)
    f.write_text(json.dumps({"conv_weight": [1.0]}))
    with pytest.raises(DetectorError, match="holds no SummaC-Conv weights"):
        build_detector("summac-conv", checkpoint=tiny["nli"], options={"conv_weights": str(f)})


def test_errors_name_what_is_wrong(tiny: dict[str, str], tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-model")
    det = build_detector("summac-zs", checkpoint=missing, device="cpu")
    with pytest.raises(DetectorError, match="cannot load the NLI tokenizer from .*no-such-model"):
        det.score(["a"], ["b"])
    with pytest.raises(DetectorError, match="unknown option 'k' for detector summac-zs"):
        build_detector("summac-zs", checkpoint=tiny["nli"], options={"k": "3"})
    with pytest.raises(DetectorError, match="give all three"):
        build_detector("summac-zs", checkpoint=tiny["nli"], options={"entailment_idx": "0"})
    with pytest.raises(DetectorError, match="takes no checkpoint"):
        build_detector("rouge-1", checkpoint=tiny["nli"])
    with pytest.raises(DetectorError, match="3 documents for 2 summaries"):
        build_detector("bartscore", checkpoint=tiny["bart"]).score(DOCS, SUMMARIES[:2])
    with pytest.raises(DetectorError, match="give option num_layers"):
        build_detector("bertscore", checkpoint=tiny["encoder"], device="cpu").score(DOCS, SUMMARIES)
    # an explicit label order that the checkpoint cannot have
    bad = build_detector(
        "summac-zs",
        checkpoint=tiny["nli"],
        device="cpu",
        options={"entailment_idx": 0, "contradiction_idx": 1, "neutral_idx": 5},
    )
    with pytest.raises(DetectorError, match="out of range"):
        bad.score(DOCS, SUMMARIES)


def test_device_resolution() -> None:
    import torch

    from evaluator.detectors.device import resolve_device

    auto = resolve_device(None)
    if not torch.cuda.is_available():
        assert auto.kind in ("cpu", "mps")
        with pytest.raises(DetectorError, match="torch sees no CUDA device"):
            resolve_device("cuda")
    assert resolve_device("cpu").dtype_name == "float32"
    assert resolve_device("cpu", "bfloat16").dtype_name == "bfloat16"
    with pytest.raises(DetectorError, match="unknown device 'tpu'"):
        resolve_device("tpu")
    with pytest.raises(DetectorError, match="unknown precision"):
        resolve_device("cpu", "int4")
