"""Words on screen, one per concept: the level a number is measured at, slices, flags.

Every page says "summary level" / "sentence level" for a unit (never "summaries" on one page and
"summary" on another); metric and slice names come from evaluator.core.vocabulary."""

from __future__ import annotations

from evaluator.core.vocabulary import metric_label, slice_label

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


def grader_text(grader: str | None) -> str:
    """Who graded explanations, in words: 'human/human' -> 'graded by people',
    'gpt-4o/EvalV4' -> 'graded by gpt-4o with EvalV4'."""
    if not grader:
        return ""
    who, _, how = (s.strip() for s in str(grader).partition("/"))
    if who.lower() == "human":
        return "graded by people"
    return f"graded by {who}" + (f" with {how}" if how and how != who else "")


def metric_words(name: str, grader: str | None = None) -> str:
    """A metric's short label with its grader in words: 'ES (graded by people)', never
    'ES (human/human)'."""
    base = metric_label(name)
    return f"{base} ({grader_text(grader)})" if grader else base
