"""The detector classes, on the shared registry (evaluator.core.registry); see
docs/ARCHITECTURE.md ("Detectors").

Besides FactBoard's own, a detector published as a Python package joins the registry through the
entry-point group `factboard.detectors`: the entry point names a callable
`score(documents, summaries) -> list[float]` or a class with that method, e.g. in the package's
pyproject.toml

    [project.entry-points."factboard.detectors"]
    my-detector = "my_package.scoring:score"

and `python -m evaluator run --detector my-detector` finds it once the package is installed. A
built-in name wins over an entry point of the same name. The run records the package's name and
version (`detector_package`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from evaluator.core.registry import Registry

ENTRY_POINT_GROUP = "factboard.detectors"


class Detector(Protocol):
    name: str

    def score(self, documents: Sequence[str], summaries: Sequence[str]) -> list[float]:
        """One score per (document, summary) pair; higher = more consistent."""
        ...


class _Detectors(Registry[Callable[..., Detector]]):
    """The registry, with the installed packages' entry points read on first use and again when
    a name is not found (a package installed since)."""

    def __init__(self, what: str, modules: Sequence[str]) -> None:
        super().__init__(what, modules)
        self.packages: dict[str, dict[str, str]] = {}

    def load(self) -> None:
        first = not self._loaded
        super().load()
        if first:
            self.scan_entry_points()

    def scan_entry_points(self) -> None:
        """Add the entry points of group `factboard.detectors` not registered yet (lazily: a
        package's module is imported when its detector is used)."""
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in self._entries:
                continue
            self.add_lazy(ep.name, _entry_point_loader(ep))
            dist = ep.dist
            self.packages[ep.name] = {
                "name": dist.name if dist is not None else "",
                "version": dist.version if dist is not None else "",
                "entry_point": f"{ep.name} = {ep.value}",
            }

    def names(self) -> list[str]:
        self.load()
        self.scan_entry_points()
        return super().names()

    def get(self, name: str) -> Callable[..., Detector]:
        self.load()
        if name not in self._entries:
            self.scan_entry_points()
        return super().get(name)


def _entry_point_loader(ep: Any) -> Callable[[], Callable[..., Detector]]:
    def load() -> Callable[..., Detector]:
        from evaluator.detectors.custom import detector_factory

        return detector_factory(ep.load(), ep.name)

    return load


T = TypeVar("T")
DETECTORS: _Detectors = _Detectors(
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


def detector_package(name: str) -> dict[str, str] | None:
    """The installed package a detector came from ({name, version, entry_point}), None for
    FactBoard's own."""
    DETECTORS.load()
    return dict(DETECTORS.packages[name]) if name in DETECTORS.packages else None
