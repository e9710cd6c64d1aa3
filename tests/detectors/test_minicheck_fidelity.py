"""MiniCheck as its authors run it, on tiny random-weight checkers of the authors' three kinds.

The authors' package (Liyan06/MiniCheck) is not on the package index (the `minicheck` there is
an unrelated model checker), so FactBoard's faithful setup is compared with a straightforward
re-computation of their code path, written here from minicheck/inference.py and
minicheck/minicheck.py with each step cited. Sentences are split by nltk's
own `sent_tokenize` in the re-computation, on a tiny punkt model written to a temporary nltk data
folder (the real model cannot be downloaded here).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from evaluator.detectors.base import DetectorError
from evaluator.detectors.runner import build_detector, default_model_name
from tests.support.detectors import DOCS, SUMMARIES, require_model_libraries

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def checkers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_model_libraries()
    from tests.support.tiny_minicheck import build_minicheck_checkers

    return build_minicheck_checkers(tmp_path_factory.mktemp("minicheck-checkers"))


@pytest.fixture(autouse=True)
def _punkt(nltk_data: Path) -> Path:
    """Every test here runs with nltk's punkt (a tiny model; tests/detectors/conftest.py)."""
    return nltk_data


def _inputs() -> tuple[list[str], list[str]]:
    """Short documents; a document of several lines with a blank line; a long one of many
    lines (over 500 words: several chunks for every checker); multi-sentence summaries."""
    lines = [s.strip() + "." for d in DOCS for s in d.replace("\n", " ").split(".") if s.strip()]
    long_doc = "\n".join(f"{i}. {line} " + line for i, line in enumerate(lines * 6))
    multi = DOCS[0].replace(". ", ".\n", 2) + "\n\n" + DOCS[1]
    docs = [*DOCS, multi, long_doc, long_doc]
    sums = [
        *SUMMARIES,
        SUMMARIES[0] + " " + SUMMARIES[1],
        SUMMARIES[2],
        "Brightwell Foods opened two factories.\nThe mayor is Maria Okafor.",
    ]
    assert len(long_doc.split()) > 1000
    return docs, sums


# ------------------------------------------------------------------------------------------
# the authors' code path, re-computed


def authors_sent_tokenize_with_newlines(
    text: str, sent_tokenize: Callable[[str], list[str]]
) -> list[str]:
    """inference.py, `sent_tokenize_with_newlines`: per line, its sentences, then "\\n"; the
    last "\\n" dropped."""
    blocks = text.split("\n")
    out: list[str] = []
    for block in blocks:
        out.extend(sent_tokenize(block))
        out.append("\n")
    return out[:-1]


def authors_chunks(lst: list[str], n: int, count: Callable[[str], int]) -> Iterator[str]:
    """inference.py, `Inferencer.inference_per_example.chunks`: a sentence that would take the
    count over n yields the chunk so far (possibly empty) and starts the next."""
    current: list[str] = []
    current_count = 0
    for sentence in lst:
        c = count(sentence)
        if current_count + c > n:
            yield " ".join(current)
            current = [sentence]
            current_count = c
        else:
            current.append(sentence)
            current_count += c
    if current:
        yield " ".join(current)


class AuthorsInferencer:
    """inference.py, `Inferencer` for 'flan-t5-large', 'roberta-large', 'deberta-v3-large'."""

    def __init__(self, path: str, model_name: str, batch_size: int = 16) -> None:
        from transformers import (
            AutoModelForSeq2SeqLM,
            AutoModelForSequenceClassification,
            AutoTokenizer,
        )

        self.model_name = model_name
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        if model_name == "flan-t5-large":  # __init__: max_model_len 2048
            self.model = AutoModelForSeq2SeqLM.from_pretrained(path)
            self.max_model_len = 2048
        else:  # __init__: 512 for roberta-large, 2048 for deberta-v3-large
            self.model = AutoModelForSequenceClassification.from_pretrained(path)
            self.max_model_len = 512 if model_name == "roberta-large" else 2048
        self.model.eval()  # float32: from_pretrained without a dtype, never cast
        self.batch_size = batch_size
        # minicheck.py, `_score_inferencer`: 500 for flan-t5-large, else 400
        self.chunk_size = 500 if model_name == "flan-t5-large" else 400

    def count(self, sentence: str) -> int:
        """`chunks`: words for Flan-T5, tokens (no specials, cut at max_model_len) otherwise."""
        if self.model_name == "flan-t5-large":
            return len(sentence.split())
        ids = self.tokenizer(
            sentence,
            padding=False,
            add_special_tokens=False,
            max_length=self.max_model_len,
            truncation=True,
        )["input_ids"]
        return len(ids)

    def doc_chunks(self, doc: str, sent_tokenize: Callable[[str], list[str]]) -> list[str]:
        """`inference_per_example`: sentences with newline markers (or [''] when none), chunks
        with " \\n " turned back into line breaks, stripped, empty ones dropped."""
        doc_sents = authors_sent_tokenize_with_newlines(doc, sent_tokenize) or [""]
        chunks = [
            c.replace(" \n ", "\n").strip()
            for c in authors_chunks(doc_sents, self.chunk_size, self.count)
        ]
        return [c for c in chunks if c != ""]

    def inference(self, docs: list[str], claims: list[str]) -> np.ndarray:
        """`inference` + `batch_tokenize`: chunk EOS claim, batches of batch_size padded,
        cut at max_model_len; Flan-T5: "predict: " first, decoder input zeros, softmax over
        ids [3, 209]; the classifiers: softmax over the two labels; P(supported) = column 1."""
        import torch

        texts = [self.tokenizer.eos_token.join([d, c]) for d, c in zip(docs, claims, strict=True)]
        probs = []
        for i in range(0, len(texts), self.batch_size):
            mini = texts[i : i + self.batch_size]
            if self.model_name == "flan-t5-large":
                mini = ["predict: " + t for t in mini]
            enc = self.tokenizer(
                mini,
                max_length=self.max_model_len,
                truncation=True,
                padding=True,
                return_tensors="pt",
            )
            with torch.no_grad():
                if self.model_name == "flan-t5-large":
                    dec = torch.zeros((enc["input_ids"].size(0), 1), dtype=torch.long)
                    logits = self.model(
                        input_ids=enc["input_ids"],
                        attention_mask=enc["attention_mask"],
                        decoder_input_ids=dec,
                    ).logits.squeeze(1)
                    p = torch.nn.functional.softmax(logits[:, torch.tensor([3, 209])], dim=-1)
                else:
                    p = torch.nn.functional.softmax(self.model(**enc).logits, dim=1)
            probs.append(p)
        return torch.cat(probs)[:, 1].numpy()

    def score(
        self, doc: str, claim: str, sent_tokenize: Callable[[str], list[str]]
    ) -> tuple[float, list[str], np.ndarray]:
        """`inference_per_example`: the claim as one text against every chunk; max over chunks
        (`max_support_prob`), the chunks and the per-chunk probabilities."""
        chunks = self.doc_chunks(doc, sent_tokenize)
        per_chunk = self.inference(chunks, [claim] * len(chunks))
        return float(per_chunk.max()), chunks, per_chunk


def _splitter() -> Callable[[str], list[str]]:
    """The authors' `sent_tokenize`: nltk's own, on the punkt model the `nltk_data` fixture
    installs."""
    from nltk.tokenize import sent_tokenize

    return sent_tokenize


AUTHORS_NAME = {
    "flan-t5": "flan-t5-large",
    "roberta": "roberta-large",
    "deberta": "deberta-v3-large",
}


# ------------------------------------------------------------------------------------------
# tests


@pytest.mark.parametrize("family", ["flan-t5", "roberta", "deberta"])
def test_faithful_minicheck_equals_the_authors_code_path(
    checkers: dict[str, str], family: str
) -> None:
    docs, sums = _inputs()
    det = build_detector("minicheck", checkpoint=checkers[family], device="cpu", batch_size=5)
    assert det.deviations() == []  # the defaults are the authors' setup
    scores, evidence = det.score_with_evidence(docs, sums)
    authors = AuthorsInferencer(checkers[family], AUTHORS_NAME[family])
    split = _splitter()
    n_chunks = []
    for doc, summ, got, ev in zip(docs, sums, scores, evidence, strict=True):
        want, chunks, per_chunk = authors.score(doc, summ, split)
        assert got == pytest.approx(want, abs=1e-5)
        assert det.chunks(doc) == tuple(chunks)
        # evidence: per chunk, the claim's support probability (the authors'
        # support_prob_per_chunk) with the chunk as support (their used_chunks)
        assert ev is not None and ev["unit"] == "chunk" and ev["aggregate"] == "max"
        assert [i["support"] for i in ev["items"]] == chunks
        assert {i["text"] for i in ev["items"]} == {summ}
        np.testing.assert_allclose([i["score"] for i in ev["items"]], per_chunk, atol=1e-5)
        n_chunks.append(len(chunks))
    assert max(n_chunks) >= 3  # the long document is cut into several chunks
    assert any("\n" in c for c in det.chunks(docs[3]))  # line breaks kept inside a chunk
    assert det.max_length == authors.max_model_len
    assert det.chunk_size == authors.chunk_size
    assert det.describe()["fidelity"]["faithful"] is True
    assert len(set(scores)) > 1


def test_sentence_variant_is_the_min_over_sentences_of_the_max_over_chunks(
    checkers: dict[str, str],
) -> None:
    """aggregate=min: each summary sentence checked on its own, as the authors' 7B code
    (LLMCheck.score: max over chunks per sentence, then the min) and their README advise for
    multi-sentence claims; a named variant on the board."""
    from evaluator.detectors.text import split_sentences

    docs, sums = _inputs()
    det = build_detector(
        "minicheck",
        checkpoint=checkers["roberta"],
        device="cpu",
        options={"aggregate": "min"},
    )
    assert det.deviations() == ["aggregate=min"]
    assert default_model_name(det).endswith("[variant: aggregate=min]")
    scores, evidence = det.score_with_evidence(docs, sums)
    authors = AuthorsInferencer(checkers["roberta"], "roberta-large")
    split = _splitter()
    for doc, summ, got, ev in zip(docs, sums, scores, evidence, strict=True):
        sents = split(summ)  # LLMCheck.split_into_sentences: nltk.sent_tokenize
        per_sentence = [authors.score(doc, s, split) for s in sents]
        assert got == pytest.approx(min(p[0] for p in per_sentence), abs=1e-5)
        assert ev is not None and ev["unit"] == "sentence" and ev["aggregate"] == "min"
        assert [i["text"] for i in ev["items"]] == list(sents)
        for item, (best, chunks, per_chunk) in zip(ev["items"], per_sentence, strict=True):
            assert item["score"] == pytest.approx(best, abs=1e-5)
            assert item["support"] == chunks[int(np.argmax(per_chunk))]
    whole = build_detector("minicheck", checkpoint=checkers["roberta"], device="cpu")
    two = [i for i, s in enumerate(sums) if len(split_sentences(s)) > 1]
    assert two  # multi-sentence summaries score differently as one claim
    assert any(
        abs(a - b) > 1e-4
        for a, b in zip(
            whole.score([docs[i] for i in two], [sums[i] for i in two]),
            [scores[i] for i in two],
            strict=True,
        )
    )


def test_decoder_only_checkpoints_are_refused_with_the_detector_to_use(
    checkers: dict[str, str],
) -> None:
    from transformers import AutoModelForSequenceClassification

    # without the guard, the classifier path loads a causal LM with a new, untrained 2-label head
    loaded = AutoModelForSequenceClassification.from_pretrained(checkers["qwen2"])
    assert int(loaded.config.num_labels) == 2
    for name, expect in (
        ("qwen2", "bespoke-minicheck"),
        ("llama", "bespoke-minicheck"),
        ("granite", "granite-guardian"),
    ):
        det = build_detector("minicheck", checkpoint=checkers[name], device="cpu")
        with pytest.raises(DetectorError, match="decoder-only") as e:
            det.score(DOCS[:1], SUMMARIES[:1])
        assert expect in str(e.value)
        assert checkers[name] in str(e.value)
    # a checkpoint named like Bespoke-MiniCheck-7B gets that detector named alone
    from evaluator.detectors.minicheck import refuse_decoder_only

    class Cfg:
        model_type = "qwen2"
        architectures = ["Qwen2ForCausalLM"]

    with pytest.raises(DetectorError, match="runs with --detector bespoke-minicheck\\.$"):
        refuse_decoder_only(Cfg(), "bespokelabs/Bespoke-MiniCheck-7B")
    Cfg.model_type = "somethingnew"  # an unknown type is caught by its architecture
    with pytest.raises(DetectorError, match="Qwen2ForCausalLM"):
        refuse_decoder_only(Cfg(), "x")
    Cfg.architectures = ["RobertaForSequenceClassification"]
    refuse_decoder_only(Cfg(), "x")  # an encoder classifier passes


def test_precision_and_options_away_from_the_authors_are_named_variants(
    checkers: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from evaluator.detectors.device import resolve_device
    from evaluator.detectors.minicheck import MiniCheck

    t5 = checkers["flan-t5"]
    # "auto" precision on a GPU is the authors' float32 (torch made to report a CUDA device)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    auto = resolve_device(None, "auto", gpu=MiniCheck.gpu_precision)
    assert (auto.name, auto.dtype_name) == ("cuda", "float32")
    monkeypatch.undo()
    half = build_detector("minicheck", checkpoint=t5, options={"precision": "float16"})
    assert half.deviations() == ["precision=float16"]
    assert "[variant: precision=float16]" in default_model_name(half)
    assert build_detector("minicheck", checkpoint=t5, options={"precision": "float32"}).fidelity()[
        "faithful"
    ]
    # an explicit chunk size is a variant unless it is the authors' value for this checker
    # (read from the config on disk, before anything is loaded)
    assert (
        build_detector("minicheck", checkpoint=t5, options={"chunk_size": 500}).deviations() == []
    )
    assert build_detector("minicheck", checkpoint=t5, options={"chunk_size": 400}).deviations() == [
        "chunk_size=400"
    ]
    rob = build_detector(
        "minicheck", checkpoint=checkers["roberta"], options={"chunk_size": 400, "max_length": 512}
    )
    assert rob.deviations() == []
    opts = {"support_token_id": 5, "aggregate": "mean"}
    assert build_detector("minicheck", checkpoint=t5, options=opts).deviations() == [
        "aggregate=mean",
        "support_token_id=5",
    ]
    fid = build_detector("minicheck", checkpoint=t5).fidelity()
    assert fid["faithful"] and fid["known_differences"] == list(MiniCheck.KNOWN_DIFFERENCES)


def test_float16_flan_t5_is_labelled_in_the_run(checkers: dict[str, str]) -> None:
    det = build_detector(
        "minicheck", checkpoint=checkers["flan-t5"], device="cpu", options={"precision": "float16"}
    )
    det.score(DOCS[:1], SUMMARIES[:1])
    assert det.describe()["dtype"] == "float16"
    assert any("clamps infinite" in n for n in det.stats.notes)
    assert det.describe()["fidelity"]["deviations"] == ["precision=float16"]


def test_empty_document_is_one_empty_chunk_and_empty_summary_has_no_score(
    checkers: dict[str, str], tmp_path: Path
) -> None:
    from evaluator.detectors.minicheck import join_chunk, lines_and_sentences

    assert lines_and_sentences("") == ("",)
    assert lines_and_sentences("The cat sat.\n\nThe dog ran. The bird sang.") == (
        "The cat sat.",
        "\n",
        "\n",
        "The dog ran.",
        "The bird sang.",
    )
    assert join_chunk("A b. \n \n C d.") == "A b.\n\n C d."  # as str.replace does it
    det = build_detector("minicheck", checkpoint=checkers["roberta"], device="cpu")
    scores, ev = det.score_with_evidence(["", "   \n ", DOCS[0]], [SUMMARIES[0]] * 2 + ["  "])
    assert det.chunks("") == ("",) and det.chunks("   \n ") == ("",)
    assert math.isfinite(scores[0]) and math.isfinite(scores[1])
    assert math.isnan(scores[2]) and ev[2] is None
    assert det.stats.undefined == 1
