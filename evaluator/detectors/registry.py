"""A small decorator registry of detector classes (DESIGN.md §5.5-6)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from evaluator.core.errors import UnknownNameError


class Detector(Protocol):
    name: str

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        """One score per (document, summary) pair; higher = more consistent."""
        ...


T = TypeVar("T")
_DETECTORS: dict[str, Callable[..., Detector]] = {}
_MODULES = (
    "evaluator.detectors.lexical",
    "evaluator.detectors.baselines",
    "evaluator.detectors.summac",
    "evaluator.detectors.alignscore",
    "evaluator.detectors.minicheck",
    "evaluator.detectors.bartscore",
    "evaluator.detectors.ldfacts",
    "evaluator.detectors.qags",
)


def register_detector(name: str) -> Callable[[T], T]:
    def deco(cls: T) -> T:
        if name in _DETECTORS:
            raise ValueError(f"detector {name!r} registered twice")
        _DETECTORS[name] = cls  # type: ignore[assignment]
        return cls

    return deco


def _load() -> None:
    for m in _MODULES:
        importlib.import_module(m)


def get_detector(name: str) -> Callable[..., Detector]:
    _load()
    try:
        return _DETECTORS[name]
    except KeyError:
        raise UnknownNameError("detector", name, _DETECTORS) from None


def detector_names() -> list[str]:
    _load()
    return sorted(_DETECTORS)
