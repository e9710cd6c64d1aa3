"""The detector classes, on the shared registry (evaluator.core.registry); see
docs/ARCHITECTURE.md ("Detectors")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from evaluator.core.registry import Registry


class Detector(Protocol):
    name: str

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        """One score per (document, summary) pair; higher = more consistent."""
        ...


T = TypeVar("T")
DETECTORS: Registry[Callable[..., Detector]] = Registry(
    "detector",
    modules=(
        "evaluator.detectors.lexical",
        "evaluator.detectors.baselines",
        "evaluator.detectors.summac",
        "evaluator.detectors.alignscore",
        "evaluator.detectors.minicheck",
        "evaluator.detectors.bartscore",
        "evaluator.detectors.ldfacts",
        "evaluator.detectors.qags",
        "evaluator.detectors.hhem",
        "evaluator.detectors.factcg",
        "evaluator.detectors.bespoke",
        "evaluator.detectors.granite",
    ),
)


def register_detector(name: str) -> Callable[[T], T]:
    return DETECTORS.register(name)


def get_detector(name: str) -> Callable[..., Detector]:
    return DETECTORS.get(name)


def detector_names() -> list[str]:
    return DETECTORS.names()
