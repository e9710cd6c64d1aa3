"""Every detector splits sentences as its authors do (evaluator.detectors.base: `sentence_style`,
the shared `splitter` option, `sentences()`), and the run says which splitter ran.

The authors call nltk's punkt (`sent_tokenize`): AlignScore and FactCG on the whole text,
MiniCheck and its LLMCheck (Bespoke-MiniCheck-7B, Granite Guardian) on each line of the document
(`sent_tokenize_with_newlines`) and on the whole claim. A tiny punkt model in a temporary nltk
data folder (the real one cannot be downloaded here) stands in for the released one; it knows
"zq." as an abbreviation, which pysbd does not, and punkt does not end a sentence at a line
break, which FactBoard's pysbd does. Without punkt data the authors' setup cannot run: the run
falls back to pysbd, records it, and is the named variant `splitter=pysbd`; so is a run that asks
for pysbd.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaluator.detectors.base import DetectorError, ModelDetector, splitter_opt
from evaluator.detectors.runner import build_detector, default_model_name
from evaluator.detectors.text import split_sentences
from tests.support.detectors import build_tiny_models
from tests.support.tiny_summac import punkt_installed

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TEXT = (
    "The zq. value rose by ten percent in May. Dr. Okafor said so.\n"
    "A line without a full stop\n"
    "\n"
    "continues here. It ends."
)
# nltk's sent_tokenize on TEXT with the tiny punkt model (test_text_splitter checks this against
# nltk itself): the abbreviation kept, a line break no boundary
PUNKT = (
    "The zq. value rose by ten percent in May.",
    "Dr. Okafor said so.",
    "A line without a full stop\n\ncontinues here.",
    "It ends.",
)
# FactBoard's pysbd: "zq." ends a sentence, so does every line break
PYSBD = (
    "The zq.",
    "value rose by ten percent in May.",
    "Dr. Okafor said so.",
    "A line without a full stop",
    "continues here.",
    "It ends.",
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    pytest.importorskip("torch")
    return build_tiny_models(tmp_path_factory.mktemp("tiny-splitters"))


@pytest.fixture(scope="module")
def checkers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    pytest.importorskip("torch")
    from tests.support.tiny_checkers import build_factcg

    return build_factcg(tmp_path_factory.mktemp("tiny-factcg-splitters"))


@pytest.fixture(scope="module")
def decoders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from tests.support.detectors import require_model_libraries
    from tests.support.tiny_decoders import build_tiny_decoders

    require_model_libraries()
    return build_tiny_decoders(tmp_path_factory.mktemp("tiny-decoders-splitters"))


@pytest.fixture(autouse=True)
def _punkt(nltk_data: Path) -> Path:
    """Every test here runs with nltk's punkt (a tiny model; tests/detectors/conftest.py)."""
    return nltk_data


def _recorded(make: Callable[..., Any], board: str) -> None:
    """With punkt: faithful, "nltk-punkt" recorded; without punkt data: the variant
    splitter=pysbd, the fallback recorded; splitter=pysbd asked for: a variant too."""
    det = make()
    assert det.deviations() == [] and det.fidelity()["faithful"] is True
    assert det.describe()["fidelity"]["splitter"] == "nltk-punkt"
    assert default_model_name(det) == board
    pysbd = make(splitter="pysbd")
    assert pysbd.deviations() == ["splitter=pysbd"]
    assert pysbd.fidelity()["splitter"] == "pysbd"
    assert default_model_name(pysbd) == f"{board} [variant: splitter=pysbd]"
    with punkt_installed(None):
        missing = make()
        assert missing.deviations() == ["splitter=pysbd"]
        fid = missing.describe()["fidelity"]
        assert fid["faithful"] is False and fid["splitter"] == "pysbd (punkt data not found)"
        assert default_model_name(missing) == f"{board} [variant: splitter=pysbd]"


# --------------------------------------------------------------------------------------------
# the shared option and method


def test_the_splitter_option_is_defined_once_in_the_base() -> None:
    opt = splitter_opt("nltk-newlines")
    assert opt.default == opt.faithful == "nltk-newlines"
    assert opt.choices == ("nltk-newlines", "pysbd")
    for bad in ("pysbd", "spacy"):
        with pytest.raises(ValueError, match=f"not '{bad}'"):
            splitter_opt(bad)
    from evaluator.detectors.registry import get_detector

    styles = {
        "summac-zs": "nltk",
        "summac-conv": "nltk",
        "alignscore": "nltk",
        "factcg": "nltk",
        "minicheck": "nltk-newlines",
        "bespoke-minicheck": "nltk-newlines",
        "granite-guardian": "nltk-newlines",
    }
    for name, style in styles.items():
        cls = get_detector(name)
        assert cls.sentence_style == style, name
        assert cls.OPTIONS["splitter"] == splitter_opt(style), name
    with pytest.raises(DetectorError, match="splitter='nltk' of detector minicheck.*must be one"):
        build_detector("minicheck", options={"splitter": "nltk"})


def test_a_detector_without_sentences_records_no_splitter() -> None:
    class _NoSentences(ModelDetector):
        name = "no-sentences"
        default_checkpoint = "x"

        def _load(self) -> None:
            pass

        def _score(self, documents: Any, summaries: Any) -> list[float]:
            return [0.0] * len(documents)

    det = _NoSentences(device="cpu")
    assert det.splitter_used() is None and "splitter" not in det.fidelity()
    with pytest.raises(DetectorError, match="no-sentences names no sentence style"):
        det.sentences("A. B.")
    det.score(["d"], ["s"])
    assert not any("sentence splitter" in n for n in det.stats.notes)


# --------------------------------------------------------------------------------------------
# per detector


def test_alignscore_splits_document_and_summary_with_punkt(tiny: dict[str, str]) -> None:
    def make(**options: object) -> Any:
        opts = {"base_model": tiny["align-base"], **options}
        return build_detector(
            "alignscore", checkpoint=tiny["align-ckpt"], device="cpu", options=opts
        )

    det = make()
    # sent_tokenize(hypo); sent_tokenize(premise) joined into ~350-word chunks (one here)
    assert det.summary_sentences(TEXT) == PUNKT
    assert det.chunks(TEXT) == (" ".join(PUNKT),)
    _, ev = det.score_with_evidence([TEXT], [TEXT])
    assert [i["text"] for i in ev[0]["items"]] == list(PUNKT)
    assert "sentence splitter: nltk-punkt" in det.stats.notes
    assert make(splitter="pysbd").summary_sentences(TEXT) == PYSBD
    assert make(splitter="pysbd").chunks(TEXT) == (" ".join(PYSBD),)
    _recorded(make, "AlignScore (align.ckpt)")


@pytest.mark.parametrize("family", ["t5", "minicheck-enc"])
def test_minicheck_splits_document_lines_and_claims_with_punkt(
    tiny: dict[str, str], family: str
) -> None:
    def make(**options: object) -> Any:
        return build_detector("minicheck", checkpoint=tiny[family], device="cpu", options=options)

    # a chunk of one word (or token): every sentence of every line is a chunk of its own, the
    # line-break markers dropped as empty chunks (sent_tokenize_with_newlines, then `chunks`)
    det = make(chunk_size=1)
    det.ensure_loaded()
    assert det.chunks(TEXT)[:2] == PUNKT[:2]
    assert "A line without a full stop" in det.chunks(TEXT)  # each line split on its own
    sentence_variant = make(aggregate="min")
    assert sentence_variant.claims(TEXT) == PUNKT  # LLMCheck: nltk.sent_tokenize(claim)
    pysbd = make(chunk_size=1, splitter="pysbd")
    pysbd.ensure_loaded()
    assert pysbd.chunks(TEXT)[:2] == PYSBD[:2]
    assert make(aggregate="min", splitter="pysbd").claims(TEXT) == PYSBD
    with punkt_installed(None):  # punkt per line falls back to pysbd per line
        fallback = make(chunk_size=1)
        fallback.ensure_loaded()
        assert fallback.chunks(TEXT) == pysbd.chunks(TEXT)
        assert "sentence splitter: pysbd (punkt data not found)" in fallback.stats.notes
    _recorded(make, f"MiniCheck ({family})")


def test_factcg_splits_the_document_with_punkt(checkers: dict[str, str]) -> None:
    def make(**options: object) -> Any:
        ckpt = checkers["factcg"]
        return build_detector("factcg", checkpoint=ckpt, device="cpu", options=options)

    det = make()
    det.ensure_loaded()
    # chunking_src: sent_tokenize(src), the sentences of a chunk joined by line breaks
    assert det.chunks(TEXT) == ("\n".join(PUNKT),)
    _, ev = det.score_with_evidence([TEXT], ["It rose."])
    assert ev[0]["items"][0]["support"] == "\n".join(PUNKT)
    pysbd = make(splitter="pysbd")
    pysbd.ensure_loaded()
    assert pysbd.chunks(TEXT) == ("\n".join(PYSBD),)
    _recorded(make, "FactCG-DeBERTa-L (factcg)")


@pytest.mark.parametrize(
    ("name", "role", "board"),
    [
        ("bespoke-minicheck", "qwen2-chat", "Bespoke-MiniCheck-7B (qwen2-chat)"),
        ("granite-guardian", "granite", "Granite Guardian 3.3 8B (granite)"),
    ],
)
def test_decoder_judges_split_as_llmcheck(
    decoders: dict[str, str], name: str, role: str, board: str
) -> None:
    def make(**options: object) -> Any:
        opts = {"max_new_tokens": 2} if name == "granite-guardian" else {}
        return build_detector(
            name, checkpoint=decoders[role], device="cpu", options={**opts, **options}
        )

    det = make()
    assert det.claims(TEXT) == list(PUNKT)  # split_into_sentences: nltk.sent_tokenize
    assert make(splitter="pysbd").claims(TEXT) == list(PYSBD)
    small = make(chunk_size=1)  # every item a chunk: the document's lines split by punkt
    small.ensure_loaded()
    assert small.chunks(TEXT)[:2] == list(PUNKT[:2])
    assert "A line without a full stop" in small.chunks(TEXT)
    pysbd = make(chunk_size=1, splitter="pysbd")
    pysbd.ensure_loaded()
    assert pysbd.chunks(TEXT)[:2] == list(PYSBD[:2])
    if name == "bespoke-minicheck":
        _, ev = det.score_with_evidence([TEXT], [TEXT])
        assert [i["text"] for i in ev[0]["items"]] == list(PUNKT)
    _recorded(make, board)


def test_summac_uses_the_shared_splitter(tiny: dict[str, str]) -> None:
    def make(**options: object) -> Any:
        return build_detector("summac-zs", checkpoint=tiny["nli"], device="cpu", options=options)

    det = make(min_chars=0)
    assert det._segments(TEXT, TEXT)[1] == PUNKT
    assert make(min_chars=0, splitter="pysbd")._segments(TEXT, TEXT)[1] == PYSBD
    assert split_sentences(TEXT, "nltk") == PUNKT  # the same function under both
    _recorded(make, "SummaC-ZS (nli)")
