"""A weight-free detector that gives evidence, for the tests of how evidence travels (blocks,
checkpoints, Ray, the run folder, the Samples page): each summary sentence is scored by the
share of its words found in the document (lexical-overlap), the sentence's support is the
document sentence that holds most of its words, and the pair's score is the lowest sentence's.
Pairs whose summary length is a multiple of 4 get no evidence (a detector may say nothing about
some pairs). Passed to the runners through their `factory=` hook (picklable: Ray actors build it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evaluator.detectors.base import evidence, evidence_item
from evaluator.detectors.lexical import TokenPrecision, _tokens
from evaluator.detectors.text import split_sentences


def sentence_evidence(document: str, summary: str) -> tuple[float, dict[str, Any] | None]:
    """The pair's score and its evidence, as SentenceOverlap gives them."""
    precision = TokenPrecision()
    doc_sents = list(split_sentences(document)) or [document]
    items = []
    for sent in split_sentences(summary) or (summary,):
        score = precision.score([document], [sent])[0]
        words = set(_tokens(sent))
        support = max(doc_sents, key=lambda d: len(words & set(_tokens(d))))
        items.append(evidence_item(sent, score, support, words=len(words)))
    low = min(float(i["score"]) for i in items)
    if len(summary) % 4 == 0:
        return low, None
    return low, evidence("sentence", items, "min", note="share of the sentence's words")


class SentenceOverlap:
    """The detector (the shape evaluator.detectors.blocks.score_block calls)."""

    name = "lexical-overlap"

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        return self.score_with_evidence(documents, summaries)[0]

    def score_with_evidence(
        self, documents: Sequence[str], summaries: Sequence[str]
    ) -> tuple[list[float], list[dict[str, Any] | None]]:
        pairs = [sentence_evidence(d, s) for d, s in zip(documents, summaries, strict=True)]
        return [p[0] for p in pairs], [p[1] for p in pairs]


class EvidenceFactory:
    """factory= for run_detector: builds SentenceOverlap in this process or each Ray actor."""

    def __call__(self) -> SentenceOverlap:
        return SentenceOverlap()
