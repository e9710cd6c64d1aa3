"""Sentence splitting (pysbd: rule-based, needs no downloaded data, unlike nltk's punkt) and the
document chunkings the detectors' papers use. Results are cached: benchmark documents repeat
across many summaries."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_BLANK = re.compile(r"\n\s*\n")
_segmenter: Any = None


def _seg() -> Any:
    global _segmenter
    if _segmenter is None:
        import pysbd

        _segmenter = pysbd.Segmenter(language="en", clean=False)
    return _segmenter


@lru_cache(maxsize=100_000)
def split_sentences(text: str) -> tuple[str, ...]:
    """The sentences of `text`, stripped, empty ones dropped; line breaks end a sentence too
    (bulleted or line-per-sentence sources). An empty text has no sentences."""
    out: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        for s in _seg().segment(line):
            s = s.strip()
            if s:
                out.append(s)
    return tuple(out)


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


def alignscore_chunks(text: str, words_per_chunk: int = 350) -> tuple[str, ...]:
    """AlignScore's chunking (Zha et al. 2023, released inference code): with W words in the
    document, n = W // 350 + 1 chunks are wanted, so consecutive runs of max(S // n, 1)
    sentences are joined (S = number of sentences). An empty document is one empty chunk."""
    sents = split_sentences(text) or ("",)
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
