"""Ingested benchmarks as stored: <data root>/benchmarks/<name>/{samples.parquet, benchmark.json}.

Written by evaluator.ingest.pipeline (staged, then swapped in); read here by the engine. The app
reads the same files through explorer.store.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkCard
from evaluator.core.errors import FactBoardError
from evaluator.core.types import VERSION_PATTERN
from evaluator.store import layout


def is_ingested(name: str, root: Path | None = None) -> bool:
    d = layout.benchmark_dir(name, root)
    return (d / layout.SAMPLES_FILE).is_file() and (d / layout.META_FILE).is_file()


VERSION = re.compile(VERSION_PATTERN)


class SliceCount(TypedDict):
    """Samples of one split x unit x domain, by label (a benchmark card's sizes)."""

    split: str
    unit: str
    domain: str
    n: int
    consistent: int
    inconsistent: int
    with_document: int


class CardStats(TypedDict):
    """Sizes and balance of an ingested benchmark (benchmark.json's `stats`)."""

    n_samples: int
    by: list[SliceCount]
    error_types: dict[str, int]  # on the benchmark's finest unit
    error_types_by_unit: dict[str, dict[str, int]]
    domains_present: list[str]
    domains_missing: list[str]
    documents_included: bool


class BenchmarkMeta(BenchmarkCard):
    """benchmark.json as the ingest writes it: the card, then what this ingest found."""

    version: str  # a hash of the samples' content
    ingested_at: str
    sources: list[str]
    notes: list[str]
    stats: CardStats


def load_meta(name: str, root: Path | None = None) -> dict[str, Any]:
    """The benchmark.json of an ingested benchmark, checked for what every reader relies on
    (`meta_problem`). A file written before a key of BenchmarkMeta existed lacks it, so it is
    returned as the JSON object it is, not as that record."""
    registry.get(name)  # unknown names fail with the known ones
    f = layout.benchmark_dir(name, root) / layout.META_FILE
    if not f.is_file():
        raise FactBoardError(
            f"benchmark {name!r} is not ingested (no {f}); run "
            f"`python -m evaluator ingest {name} --from PATH`"
        )
    try:
        meta = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise FactBoardError(f"{f} is unreadable: {e}") from None
    problem = meta_problem(meta)
    if problem:
        raise FactBoardError(f"{f}: {problem}")
    return meta


def meta_problem(meta: object) -> str | None:
    """What makes a benchmark.json unusable (None when nothing does): it must be an object whose
    `version` is a plain version string (a content hash) and whose `ingested_at`, when given, is
    an ISO date-time; both are shown on pages, so neither may carry anything else."""
    if not isinstance(meta, dict):
        return "not a JSON object"
    version = meta.get("version")
    if not isinstance(version, str) or not VERSION.match(version):
        return f"version {str(version)[:80]!r} is not a version (letters, digits, . _ : + -)"
    when = meta.get("ingested_at")
    if when is not None:
        try:
            datetime.fromisoformat(str(when))
        except ValueError:
            return f"ingested_at {str(when)[:80]!r} is not an ISO date-time"
    return None


def load_samples(name: str, root: Path | None = None) -> pd.DataFrame:
    load_meta(name, root)
    f = layout.benchmark_dir(name, root) / layout.SAMPLES_FILE
    try:
        return pq.read_table(f).to_pandas()
    except (OSError, pa.ArrowException) as e:
        raise FactBoardError(f"{f} is unreadable: {e}") from None


def names(root: Path | None = None) -> list[str]:
    d = layout.benchmarks_dir(root)
    if not d.is_dir():
        return []
    known = set(registry.names())
    return sorted(p.name for p in d.iterdir() if p.name in known and is_ingested(p.name, root))
