"""Weight-free lexical baselines: they need no model and run anywhere."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluator.detectors.base import Detector
from evaluator.detectors.registry import register_detector

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*")
_NAME_OR_NUMBER = re.compile(r"\b(?:[A-Z][a-z]+|\d+(?:[.,]\d+)*)\b")


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _WORD.findall(text)]


def _check(documents: Sequence[str], summaries: Sequence[str]) -> None:
    if len(documents) != len(summaries):
        raise ValueError(f"{len(documents)} documents for {len(summaries)} summaries")


@register_detector("lexical-overlap")
class TokenPrecision(Detector):
    """Share of the summary's word tokens that occur in the document (unigram precision)."""

    name = "lexical-overlap"

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        _check(documents, summaries)
        out = []
        for doc, summ in zip(documents, summaries, strict=True):
            vocab = set(_tokens(doc or ""))
            toks = _tokens(summ)
            out.append(sum(t in vocab for t in toks) / len(toks) if toks else 1.0)
        return out


@register_detector("novel-entities")
class NovelEntities(Detector):
    """Minus the number of numbers and capitalised words of the summary absent from the
    document (sentence-initial words excepted): 0 when every one is grounded."""

    name = "novel-entities"

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        _check(documents, summaries)
        out = []
        for doc, summ in zip(documents, summaries, strict=True):
            doc_l = (doc or "").lower()
            novel = 0
            for m in _NAME_OR_NUMBER.finditer(summ):
                start = m.start()
                before = summ[:start].rstrip()
                if m.group(0)[0].isalpha() and (not before or before[-1] in ".!?:"):
                    continue
                if m.group(0).lower() not in doc_l:
                    novel += 1
            out.append(-float(novel))
        return out
