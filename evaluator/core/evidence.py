"""A pair's evidence, typed once: why a detector scored a (document, summary) pair as it did.
Built by the detectors (evaluator.detectors.base re-exports the builders), carried by blocks,
checkpoints and Ray actors as JSON, stored in a run's evidence.parquet and checked where it is
read (evaluator.store.evidence_file.check_evidence); the Samples page shows it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

EVIDENCE_UNITS = ("sentence", "claim", "chunk", "question", "snippet")


class EvidenceItem(TypedDict):
    """One piece of evidence: a part of the summary with its score, the source text that
    supports it best, and method-specific detail (JSON values only)."""

    text: str
    score: float | None
    support: NotRequired[str]
    extra: NotRequired[dict[str, object]]  # JSON values, as `_json_value` makes them


class Evidence(TypedDict):
    """A pair's evidence: what each item is (one of EVIDENCE_UNITS), the items in summary
    order, how their scores make the pair's score, and an optional note."""

    unit: str
    aggregate: str
    items: list[EvidenceItem]
    note: NotRequired[str]


def evidence_item(
    text: str, score: float | None, support: str | None = None, **extra: Any
) -> EvidenceItem:
    """One piece of evidence: a part of the summary (a sentence, the claim, a question) with its
    score, the source text that supports it best (a sentence, chunk or snippet) and any method
    specific detail in `extra` (QAGS: the answers from summary and source). JSON values only."""
    item: EvidenceItem = {"text": str(text), "score": _finite_or_none(score)}
    if support is not None:
        item["support"] = str(support)
    if extra:
        item["extra"] = {k: _json_value(v) for k, v in extra.items()}
    return item


def evidence(
    unit: str, items: Sequence[EvidenceItem], aggregate: str, note: str | None = None
) -> Evidence:
    """A pair's evidence: what each item is (`unit`, one of EVIDENCE_UNITS), the items in summary
    order, and how their scores make the pair's score (`aggregate`, e.g. "min", "mean")."""
    if unit not in EVIDENCE_UNITS:
        raise ValueError(f"evidence unit {unit!r} not in {EVIDENCE_UNITS}")
    out: Evidence = {"unit": unit, "aggregate": aggregate, "items": list(items)}
    if note:
        out["note"] = note
    return out


def _finite_or_none(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return f if f == f and abs(f) != float("inf") else None


def _json_value(v: Any) -> Any:
    if v is None or isinstance(v, (bool, str, int)):
        return v
    if isinstance(v, float):
        return _finite_or_none(v)
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    try:
        return _finite_or_none(float(v))  # numpy / torch scalars
    except (TypeError, ValueError):
        return str(v)
