"""AlignScore as its authors run it, on the tiny random-weight RoBERTa alignment checkpoint.

The authors' package (yuh-zha/AlignScore, `alignscore`) is not on the package index, so
FactBoard's faithful setup is compared with a straightforward re-computation of the released
code path (src/alignscore/inference.py, `Inferencer`, evaluation mode "nli_sp"; the model as
src/alignscore/model.py builds it), each step cited. Sentences are split by nltk's
own `sent_tokenize` in the re-computation, on a tiny punkt model written to a temporary nltk data
folder (the real model cannot be downloaded here).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from evaluator.detectors.base import DetectorError
from evaluator.detectors.runner import build_detector, default_model_name
from tests.support.detectors import DOCS, SUMMARIES, build_tiny_models, require_model_libraries

os.environ.setdefault("HF_HUB_OFFLINE", "1")

LONG_SENTENCE = "The library " + " and ".join(
    f"room {i} will hold {i * 7} books for residents of Westmere" for i in range(30)
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    require_model_libraries()
    return build_tiny_models(tmp_path_factory.mktemp("tiny-align"))


@pytest.fixture(autouse=True)
def _punkt(nltk_data: Path) -> Path:
    """Every test here runs with nltk's punkt (a tiny model; tests/detectors/conftest.py)."""
    return nltk_data


def _detector(tiny: dict[str, str], **options: object) -> object:
    return build_detector(
        "alignscore",
        checkpoint=tiny["align-ckpt"],
        device="cpu",
        batch_size=3,
        options={"base_model": tiny["align-base"], **options},
    )


class AuthorsAlignScore:
    """The released `Inferencer` with nlg_eval_mode "nli_sp" (alignscore.py: `AlignScore`)."""

    def __init__(self, ckpt: str, base: str, batch_size: int = 32) -> None:
        import torch
        from transformers import AutoConfig, AutoTokenizer, RobertaModel

        # model.py, BERTAlignModel.__init__ ('roberta' in model): RobertaModel (with its pooler)
        # and tri_layer = nn.Linear(hidden_size, 3); inference.py: load_from_checkpoint(
        # strict=False), .eval() (dropout off), never cast: float32
        state = torch.load(ckpt, map_location="cpu", weights_only=True)["state_dict"]
        self.base_model = RobertaModel(AutoConfig.from_pretrained(base))
        self.base_model.load_state_dict(
            {k[len("base_model.") :]: v for k, v in state.items() if k.startswith("base_model.")}
        )
        self.base_model.eval()
        hidden = self.base_model.config.hidden_size
        self.tri_layer = torch.nn.Linear(hidden, 3)
        self.tri_layer.load_state_dict(
            {"weight": state["tri_layer.weight"], "bias": state["tri_layer.bias"]}
        )
        self.tokenizer = AutoTokenizer.from_pretrained(base)
        self.batch_size = batch_size
        self.retried = 0

    def batch_tokenize(self, premise: list[str], hypo: list[str]) -> list[dict]:
        """inference.py, `batch_tokenize`: mini-batches of batch_size, (premise, hypo) cut
        only_first and padded to tokenizer.model_max_length; when that raises, the whole
        mini-batch again with truncation=True."""
        batches = []
        for i in range(0, len(premise), self.batch_size):
            pre, hyp = premise[i : i + self.batch_size], hypo[i : i + self.batch_size]
            kw = dict(
                padding="max_length",
                max_length=self.tokenizer.model_max_length,
                return_tensors="pt",
            )
            try:
                batches.append(self.tokenizer(pre, hyp, truncation="only_first", **kw))
            except Exception:
                self.retried += 1
                batches.append(self.tokenizer(pre, hyp, truncation=True, **kw))
        return batches

    def inference(self, premise: list[str], hypo: list[str]) -> np.ndarray:
        """inference.py, `inference`: softmax of tri_label_logits (model.py: tri_layer on the
        pooled output), all three columns."""
        import torch

        out = []
        for batch in self.batch_tokenize(premise, hypo):
            with torch.no_grad():
                pooled = self.base_model(
                    input_ids=batch["input_ids"],
                    attention_mask=batch["attention_mask"],
                    token_type_ids=batch.get("token_type_ids"),
                ).pooler_output
                out.append(torch.softmax(self.tri_layer(pooled), dim=-1))
        return torch.cat(out).numpy()

    def inference_per_example(
        self, premise: str, hypo: str, sent_tokenize: Callable[[str], list[str]]
    ) -> tuple[float, list[str], list[str], np.ndarray]:
        """inference.py, `inference_per_example`: premise sentences (or ['']) joined into runs
        of max(S // n_chunk, 1) with n_chunk = words // 350 + 1; hypothesis sentences; every
        (chunk, sentence) pair chunk-major; "nli_sp": column 0 (ALIGNED), viewed
        [chunks, sentences], max over chunks, mean over sentences."""
        premise_sents = sent_tokenize(premise) or [""]
        n_chunk = len(premise.strip().split()) // 350 + 1
        n_chunk = max(len(premise_sents) // n_chunk, 1)
        chunks = [
            " ".join(premise_sents[i : i + n_chunk]) for i in range(0, len(premise_sents), n_chunk)
        ]
        hypo_sents = sent_tokenize(hypo)
        pre = [c for c in chunks for _ in hypo_sents]
        hyp = [h for _ in chunks for h in hypo_sents]
        aligned = self.inference(pre, hyp)[:, 0].reshape(len(chunks), len(hypo_sents))
        return float(aligned.max(axis=0).mean()), chunks, hypo_sents, aligned


def _splitter() -> Callable[[str], list[str]]:
    """The authors' `sent_tokenize`: nltk's own, on the punkt model the `nltk_data` fixture
    installs."""
    from nltk.tokenize import sent_tokenize

    return sent_tokenize


def _inputs() -> tuple[list[str], list[str]]:
    long_doc = " ".join(DOCS * 12)  # over 350 words: several chunks
    docs = [*DOCS, long_doc, DOCS[1], DOCS[0]]
    sums = [
        *SUMMARIES,
        SUMMARIES[0] + " " + SUMMARIES[2],
        f"Brightwell Foods opened two factories. {LONG_SENTENCE}.",
        f"{LONG_SENTENCE}.",
    ]
    assert len(long_doc.split()) > 700
    return docs, sums


def test_faithful_alignscore_equals_the_authors_code_path(tiny: dict[str, str]) -> None:
    docs, sums = _inputs()
    det = _detector(tiny)
    assert det.deviations() == []  # type: ignore[attr-defined]
    scores, evidence = det.score_with_evidence(docs, sums)  # type: ignore[attr-defined]
    authors = AuthorsAlignScore(tiny["align-ckpt"], tiny["align-base"])
    split = _splitter()
    n_chunks = []
    for doc, summ, got, ev in zip(docs, sums, scores, evidence, strict=True):
        want, chunks, sents, aligned = authors.inference_per_example(doc, summ, split)
        assert got == pytest.approx(want, abs=1e-5)
        # evidence: per summary sentence its alignment (max over chunks) and the best chunk
        assert ev is not None and ev["unit"] == "sentence" and ev["aggregate"] == "mean"
        assert [i["text"] for i in ev["items"]] == sents
        np.testing.assert_allclose([i["score"] for i in ev["items"]], aligned.max(0), atol=1e-5)
        assert [i["support"] for i in ev["items"]] == [chunks[k] for k in aligned.argmax(0)]
        n_chunks.append(len(chunks))
    assert max(n_chunks) >= 3
    # the over-long summary sentences made the authors retry; FactBoard scored them too
    assert authors.retried >= 2
    stats = det.describe()["stats"]  # type: ignore[attr-defined]
    assert any("cut longest_first" in n for n in stats["notes"])
    assert stats["samples_truncated"] >= 3
    assert len(set(scores)) > 2


def test_options_away_from_the_authors_are_named_variants(tiny: dict[str, str]) -> None:
    from evaluator.detectors.alignscore import AlignScore

    assert AlignScore.gpu_precision == "float32"
    for opts, devs in (
        ({"head": "bin"}, ["head=bin"]),
        ({"chunk_words": 200}, ["chunk_words=200"]),
        ({"precision": "float16"}, ["precision=float16"]),
        ({"precision": "float32"}, []),
    ):
        det = _detector(tiny, **opts)
        assert det.deviations() == devs  # type: ignore[attr-defined]
        name = default_model_name(det)
        assert ("[variant: " in name) is bool(devs)
    fid = _detector(tiny).fidelity()  # type: ignore[attr-defined]
    assert fid["faithful"] and fid["known_differences"] == list(AlignScore.KNOWN_DIFFERENCES)


def test_bin_head_and_empty_summary(tiny: dict[str, str]) -> None:
    det = _detector(tiny, head="bin")
    scores, ev = det.score_with_evidence(DOCS + [DOCS[0]], SUMMARIES + ["  "])  # type: ignore[attr-defined]
    assert all(math.isfinite(s) for s in scores[:3])
    assert math.isnan(scores[3]) and ev[3] is None
    faithful = _detector(tiny).score(DOCS, SUMMARIES)  # type: ignore[attr-defined]
    assert any(abs(a - b) > 1e-4 for a, b in zip(scores[:3], faithful, strict=True))


def test_encode_falls_back_only_when_asked(tiny: dict[str, str]) -> None:
    from transformers import AutoTokenizer

    from evaluator.detectors.batching import encode

    tok = AutoTokenizer.from_pretrained(tiny["align-base"])
    firsts = ["Side effects were rare.", DOCS[1] * 3, DOCS[2]]
    seconds = [SUMMARIES[0], SUMMARIES[1], LONG_SENTENCE]
    with pytest.raises(DetectorError, match=r"input pair #2 cannot be cut to 128 tokens"):
        encode(tok, firsts, seconds, 128)
    fell: list[int] = []
    rows, flags = encode(tok, firsts, seconds, 128, fallback="longest_first", fell_back=fell)
    assert fell == [2] and flags == [False, True, True]
    assert all(len(r["input_ids"]) <= 128 for r in rows)
    # the pair that only_first can cut is cut so; the other longest_first, as the tokenizer does
    assert (
        rows[1]["input_ids"]
        == tok(firsts[1], seconds[1], truncation="only_first", max_length=128)["input_ids"]
    )
    assert (
        rows[2]["input_ids"]
        == tok(firsts[2], seconds[2], truncation="longest_first", max_length=128)["input_ids"]
    )
