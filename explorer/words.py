"""Words on screen, one per concept: the level a number is measured at, slices, flags.

Every page says "summary level" / "sentence level" for a unit (never "summaries" on one page and
"summary" on another); metric and slice names come from evaluator.core.vocabulary."""

from __future__ import annotations

from evaluator.core.vocabulary import slice_label

LEVEL_LABELS = {"summary": "summary level", "sentence": "sentence level"}


def level_label(unit: str) -> str:
    """'summary' -> 'summary level'."""
    return LEVEL_LABELS.get(unit, f"{unit} level")


def slice_text(kind: str, value: str | None) -> str:
    """'overall' -> 'Overall'; ('domain', 'news') -> 'domain: news'."""
    if not value:
        return slice_label(kind)
    noun = slice_label(kind).removeprefix("By ")
    return f"{noun}: {value}"


def yes_no(flag: object, yes: str, no: str = "") -> str:
    """A flag as words (e.g. suspect=yes -> 'suspect value')."""
    return yes if str(flag).strip().lower() in ("1", "yes", "true") else no
