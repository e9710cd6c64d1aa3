"""The benchmark registry: what each benchmark is, how it is sliced and scored, and its loader."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

import pandas as pd

from evaluator.core.errors import UnknownNameError
from evaluator.core.registry import Registry
from evaluator.core.slices import SliceSpec as SliceSpec  # the loaders declare slices with it
from evaluator.core.types import ModelInfo, RunConfig, Sample
from evaluator.core.vocabulary import Task


@dataclass
class ReleasedRun:
    """Per-sample outputs a benchmark's authors released (FRANK metrics, FactCC explanations).

    predictions: DataFrame with PREDICTION_COLUMNS (sample_id plus score and/or label, ...).
    grades: optional DataFrame with GRADE_COLUMNS (human grades of the explanations).
    """

    model: ModelInfo
    predictions: pd.DataFrame
    config: RunConfig = field(default_factory=RunConfig)
    grades: pd.DataFrame | None = None
    threshold_policy: str = "labels"
    note: str = ""


@dataclass
class LoadedBenchmark:
    samples: list[Sample]
    released_runs: list[ReleasedRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # facts about this ingest (e.g. domains absent)
    sources: list[str] = field(default_factory=list)  # files or hub ids read


Loader = Callable[..., LoadedBenchmark]


class BenchmarkCard(TypedDict):
    """The static part of a benchmark's card (`BenchmarkSpec.card`), the head of its
    benchmark.json (evaluator.store.ingested.BenchmarkMeta adds what the ingest found)."""

    name: str
    title: str
    task: Task
    units: list[str]
    splits: list[str]
    slices: list[str]  # the slice kinds
    primary_metric: str
    overall: Literal["pooled", "mean_over_domains"]
    fixed_threshold: float | None
    domains: list[str]
    license: str
    citation: str
    source: str
    hub_id: str | None
    description: str
    caveats: list[str]
    synthetic: bool


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    title: str
    task: Task
    units: tuple[str, ...]
    splits: tuple[str, ...]
    slices: tuple[SliceSpec, ...]
    primary_metric: str
    license: str
    citation: str  # BibTeX
    source: str  # where the release lives (repo + commit, or hub id)
    description: str
    loader: Loader
    overall: Literal["pooled", "mean_over_domains"] = "pooled"
    domains: tuple[str, ...] = ()  # the full published set (to say what a number covers)
    hub_id: str | None = None
    caveats: tuple[str, ...] = ()
    loader_options: dict[str, str] = field(default_factory=dict)  # option -> help text
    synthetic: bool = False
    # correlation benchmarks: a field whose groups are partialled out (FRANK: the system)
    correlation_control: str | None = None
    # the sub-folder of a release folder (laid out like ../shared/benchmarks) that the loader
    # reads, and a glob that sub-folder must match to be ingested from it (None: any content)
    release_folder: str | None = None
    release_files: str | None = None
    # the benchmark's own threshold protocol for score-only predictions in [0, 1] (probabilities):
    # policy "auto" labels them at this threshold instead of tuning one on dev (LLM-AggreFact:
    # 0.5, the MiniCheck protocol); None: "auto" tunes on dev
    fixed_threshold: float | None = None

    def slice(self, kind: str) -> SliceSpec:
        for s in self.slices:
            if s.kind == kind:
                return s
        raise UnknownNameError(
            f"slice of benchmark {self.name}", kind, ["overall", *(s.kind for s in self.slices)]
        )

    def card(self) -> BenchmarkCard:
        """The static part of the benchmark card (the ingest adds sizes and distributions)."""
        return {
            "name": self.name,
            "title": self.title,
            "task": self.task,
            "units": list(self.units),
            "splits": list(self.splits),
            "slices": [s.kind for s in self.slices],
            "primary_metric": self.primary_metric,
            "overall": self.overall,
            "fixed_threshold": self.fixed_threshold,
            "domains": list(self.domains),
            "license": self.license,
            "citation": self.citation,
            "source": self.source,
            "hub_id": self.hub_id,
            "description": self.description,
            "caveats": list(self.caveats),
            "synthetic": self.synthetic,
        }


BENCHMARKS: Registry[BenchmarkSpec] = Registry(
    "benchmark",
    modules=tuple(
        f"evaluator.benchmarks.{m}"
        for m in (
            "demo",
            "summedits",
            "summexecedit",
            "factcc_explanations",
            "tofueval",
            "longsciverify",
            "qags",
            "frank",
            "llm_aggrefact",
            "faithbench",
        )
    ),
)


def register(spec: BenchmarkSpec) -> BenchmarkSpec:
    return BENCHMARKS.add(spec.name, spec)


def get(name: str) -> BenchmarkSpec:
    return BENCHMARKS.get(name)


def names() -> list[str]:
    return BENCHMARKS.names()


def specs() -> Iterator[BenchmarkSpec]:
    for n in BENCHMARKS.names():
        yield BENCHMARKS.get(n)


def resolve_source(source: str | Path, default_file: str | None = None) -> Path:
    """A user-given path (file or folder) that must exist; raises IngestError naming it."""
    from evaluator.core.errors import IngestError

    p = Path(source).expanduser()
    if not p.exists():
        raise IngestError("path does not exist", file=str(p))
    if default_file and p.is_dir() and (p / default_file).exists():
        return p / default_file
    return p
