"""Sentence splitting, one function for every detector, in the style each paper's code uses, and
the document chunkings the detectors' papers use.

Styles of `split_sentences(text, style)`:

- "pysbd" (the default, FactBoard's own): pysbd (rule-based, needs no downloaded data), every line
  break a boundary too (bulleted or line-per-sentence sources).
- "nltk": nltk's `sent_tokenize` (the punkt model, English), as SummaC, AlignScore and
  LongDocFACTScore call it.
- "nltk-newlines": MiniCheck's `sent_tokenize_with_newlines`: each line split with punkt, and a
  "\n" item between the lines (its chunker joins items with spaces and turns " \n " back
  into line breaks).

nltk's punkt needs its data (`python -m nltk.downloader punkt_tab`), which a deployment can fetch
and some machines cannot: where it is not found, the nltk styles split with pysbd instead (the
whole text, or each line) and `splitter_used(style)` says so ("pysbd (punkt data not found)"), so
that a run records which splitter actually ran. Results are cached: benchmark documents repeat
across many summaries.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_BLANK = re.compile(r"\n\s*\n")
_segmenter: Any = None

SENTENCE_STYLES = ("pysbd", "nltk", "nltk-newlines")
PUNKT_MISSING = "pysbd (punkt data not found)"
# the punkt tokenizer per nltk data path (None: no punkt data there), so that data installed
# into another folder (or a test's) is found without restarting
_punkt_by_path: dict[tuple[str, ...], Any] = {}


def _seg() -> Any:
    global _segmenter
    if _segmenter is None:
        import pysbd

        _segmenter = pysbd.Segmenter(language="en", clean=False)
    return _segmenter


def _punkt() -> Any:
    """nltk's English punkt tokenizer (the one `nltk.sent_tokenize` uses), or None where nltk or
    its punkt_tab data is missing."""
    try:
        import nltk.data
        from nltk.tokenize import punkt
    except ImportError:
        return None
    key = tuple(str(p) for p in nltk.data.path)
    if key not in _punkt_by_path:
        tok = None
        if hasattr(punkt, "PunktTokenizer"):  # nltk >= 3.8.2 reads the punkt_tab data
            try:
                tok = punkt.PunktTokenizer("english")
            except (LookupError, OSError, ValueError):
                tok = None
        _punkt_by_path[key] = tok
    return _punkt_by_path[key]


def splitter_used(style: str = "pysbd") -> str:
    """Which splitter `split_sentences(..., style)` runs on this machine: "pysbd",
    "nltk-punkt", or "pysbd (punkt data not found)" for an nltk style without punkt data."""
    _check_style(style)
    if style == "pysbd":
        return "pysbd"
    return "nltk-punkt" if _punkt() is not None else PUNKT_MISSING


def _check_style(style: str) -> None:
    if style not in SENTENCE_STYLES:
        raise ValueError(
            f"unknown sentence-splitting style {style!r}; known: {', '.join(SENTENCE_STYLES)}"
        )


def split_sentences(text: str, style: str = "pysbd") -> tuple[str, ...]:
    """The sentences of `text` in the given style (see the module's docstring). "pysbd" and
    "nltk" give stripped, non-empty sentences (an empty text has none); "nltk-newlines" gives
    MiniCheck's items, "\n" between lines included."""
    if style == "pysbd":
        return _split_lines(text)
    _check_style(style)
    return _split_nltk(text, style, _punkt())


@lru_cache(maxsize=100_000)
def _split_lines(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        for s in _seg().segment(line):
            s = s.strip()
            if s:
                out.append(s)
    return tuple(out)


def _pysbd_whole(text: str) -> list[str]:
    return [s.strip() for s in _seg().segment(text) if s.strip()]


@lru_cache(maxsize=100_000)
def _split_nltk(text: str, style: str, tok: Any) -> tuple[str, ...]:
    split = tok.tokenize if tok is not None else _pysbd_whole
    if style == "nltk":
        return tuple(split(text))
    # MiniCheck: every line split on its own, "\n" between the lines (an empty line too)
    out: list[str] = []
    for block in text.split("\n"):
        out.extend(split(block))
        out.append("\n")
    return tuple(out[:-1])


def split_paragraphs(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in _BLANK.split(text) if p.strip())


def doc_blocks(text: str, granularity: str) -> tuple[str, ...]:
    """SummaC's document blocks: sentences, sliding pairs of sentences ("2sents"), paragraphs
    (blank-line separated), or the whole document."""
    if granularity == "sentence":
        return split_sentences(text)
    if granularity == "2sents":
        sents = split_sentences(text)
        if len(sents) < 2:
            return sents
        return tuple(f"{a} {b}" for a, b in zip(sents, sents[1:], strict=False))
    if granularity == "paragraph":
        return split_paragraphs(text)
    if granularity == "document":
        return (text.strip(),) if text.strip() else ()
    raise ValueError(f"unknown granularity {granularity!r}")


def alignscore_chunks(
    text: str, words_per_chunk: int = 350, style: str = "pysbd"
) -> tuple[str, ...]:
    """AlignScore's chunking (Zha et al. 2023, released inference code): with W words in the
    document, n = W // 350 + 1 chunks are wanted, so consecutive runs of max(S // n, 1)
    sentences (split in `style`; the authors' is "nltk") are joined (S = number of sentences).
    An empty document is one empty chunk."""
    sents = split_sentences(text, style) or ("",)
    n_chunk = len(text.strip().split()) // words_per_chunk + 1
    per = max(len(sents) // n_chunk, 1)
    return tuple(" ".join(sents[i : i + per]) for i in range(0, len(sents), per))


def greedy_chunks(
    sentences: tuple[str, ...], sizes: list[int], limit: int, sep: str = " "
) -> tuple[str, ...]:
    """MiniCheck's chunking: consecutive sentences are packed while the running size (words or
    tokens, given per sentence in `sizes`) stays within `limit`; a sentence that would overflow
    starts a new chunk (an over-long sentence is a chunk of its own). `sep` joins a chunk's
    sentences (FactCG joins with a line break)."""
    chunks: list[str] = []
    cur: list[str] = []
    count = 0
    for s, n in zip(sentences, sizes, strict=True):
        if cur and count + n > limit:
            chunks.append(sep.join(cur))
            cur, count = [s], n
        else:
            cur.append(s)
            count += n
    if cur:
        chunks.append(sep.join(cur))
    return tuple(c.strip() for c in chunks if c.strip())
