"""The one sentence splitter: pysbd (FactBoard's default), nltk's punkt as SummaC, AlignScore and
LongDocFACTScore call it, MiniCheck's newline-keeping variant, and the pysbd fallback where punkt
data is missing (which the run can ask about). The punkt path runs nltk's real loader on a tiny
punkt_tab model written into a temporary nltk data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.detectors.text import (
    PUNKT_MISSING,
    SENTENCE_STYLES,
    split_sentences,
    splitter_used,
)
from tests.support.tiny_summac import punkt_installed, write_punkt_tab

TEXT = (
    "The zq. value rose by ten percent in May. Dr. Okafor said so.\n"
    "A line without a full stop\n"
    "\n"
    "continues here. It ends."
)


@pytest.fixture
def punkt(tmp_path: Path):
    with punkt_installed(write_punkt_tab(tmp_path / "nltk_data")):
        yield


@pytest.fixture
def no_punkt():
    with punkt_installed(None):
        yield


def test_the_default_style_is_pysbd_with_every_line_break_a_boundary() -> None:
    assert splitter_used() == "pysbd"
    assert split_sentences(TEXT) == split_sentences(TEXT, "pysbd")
    assert split_sentences(TEXT) == (
        "The zq.",  # pysbd does not know this abbreviation
        "value rose by ten percent in May.",
        "Dr. Okafor said so.",
        "A line without a full stop",
        "continues here.",
        "It ends.",
    )


def test_nltk_style_runs_punkt_from_the_nltk_data_folder(punkt: None) -> None:
    import nltk

    assert splitter_used("nltk") == "nltk-punkt"
    got = split_sentences(TEXT, "nltk")
    # exactly what nltk's own sent_tokenize gives (the authors' call), with the model's
    # abbreviation kept inside its sentence and line breaks not a boundary
    assert got == tuple(nltk.tokenize.sent_tokenize(TEXT))
    assert got == (
        "The zq. value rose by ten percent in May.",
        "Dr. Okafor said so.",
        "A line without a full stop\n\ncontinues here.",
        "It ends.",
    )


def test_minicheck_style_keeps_the_line_breaks_as_items(punkt: None) -> None:
    import nltk

    # MiniCheck's sent_tokenize_with_newlines, recomputed: punkt per line, "\n" between lines
    expected: list[str] = []
    for block in TEXT.split("\n"):
        expected += nltk.tokenize.sent_tokenize(block) + ["\n"]
    assert split_sentences(TEXT, "nltk-newlines") == tuple(expected[:-1])
    assert split_sentences(TEXT, "nltk-newlines") == (
        "The zq. value rose by ten percent in May.",
        "Dr. Okafor said so.",
        "\n",
        "A line without a full stop",
        "\n",
        "\n",
        "continues here.",
        "It ends.",
    )
    assert splitter_used("nltk-newlines") == "nltk-punkt"


def test_without_punkt_data_the_nltk_styles_fall_back_to_pysbd_and_say_so(no_punkt: None) -> None:
    assert splitter_used("nltk") == PUNKT_MISSING == "pysbd (punkt data not found)"
    assert splitter_used("nltk-newlines") == PUNKT_MISSING
    assert split_sentences(TEXT, "nltk")[:2] == ("The zq.", "value rose by ten percent in May.")
    assert split_sentences(TEXT, "nltk-newlines")[3:5] == ("\n", "A line without a full stop")


def test_the_splitter_follows_the_data_folder_without_a_restart(tmp_path: Path) -> None:
    """Results are cached per splitter: a text split without punkt is split again with it."""
    with punkt_installed(None):
        without = split_sentences(TEXT, "nltk")
    with punkt_installed(write_punkt_tab(tmp_path / "data")):
        with_punkt = split_sentences(TEXT, "nltk")
    with punkt_installed(None):
        assert split_sentences(TEXT, "nltk") == without
        assert splitter_used("nltk") == PUNKT_MISSING
    assert with_punkt != without and with_punkt[0] == "The zq. value rose by ten percent in May."


def test_empty_text_and_unknown_style(punkt: None) -> None:
    for style in SENTENCE_STYLES:
        assert split_sentences("", style) == ()
    assert split_sentences("  \n ", "pysbd") == split_sentences("  \n ", "nltk") == ()
    assert split_sentences("  \n ", "nltk-newlines") == ("\n",)  # as MiniCheck's own
    with pytest.raises(ValueError, match="unknown sentence-splitting style 'spacy'; known: pysbd"):
        split_sentences(TEXT, "spacy")
    with pytest.raises(ValueError, match="unknown sentence-splitting style"):
        splitter_used("punkt")
