"""Ingest a benchmark release: load it, validate it, and swap it in as a stored benchmark.

Ingest writes leaderboard_data/benchmarks/<name>/{samples.parquet, benchmark.json} in a staging
folder and swaps it in; re-ingesting identical data is a no-op. Per-sample outputs that a release
carries (FRANK's metrics, the FactCC explanation study) become runs with origin "released".
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec, LoadedBenchmark
from evaluator.core.errors import FactBoardError, IngestError
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import (
    SAMPLE_COLUMNS,
    SAMPLE_SCHEMA,
    Sample,
)
from evaluator.store import ingested, layout, runs
from evaluator.store.ingested import BenchmarkMeta, CardStats, SliceCount


def samples_table(spec: BenchmarkSpec, samples: list[Sample]) -> pa.Table:
    """Validate the loader's samples against the spec and build the canonical Arrow table."""
    if not samples:
        raise IngestError(f"the release of {spec.name} yielded no samples")
    seen: dict[str, int] = {}
    for i, s in enumerate(samples):
        where = f"sample {s.sample_id!r}"
        if s.benchmark != spec.name:
            raise IngestError(f"{where} belongs to benchmark {s.benchmark!r}, not {spec.name!r}")
        if not s.sample_id:
            raise IngestError(f"sample #{i} has an empty sample_id")
        if s.sample_id in seen:
            raise IngestError(
                f"sample_id {s.sample_id!r} occurs twice (samples #{seen[s.sample_id]} and #{i})",
                field="sample_id",
            )
        seen[s.sample_id] = i
        if s.split not in spec.splits:
            raise IngestError(
                f"{where}: split {s.split!r} not in {list(spec.splits)}", field="split"
            )
        if s.unit not in spec.units:
            raise IngestError(f"{where}: unit {s.unit!r} not in {list(spec.units)}", field="unit")
        if s.label is not None and s.label not in (0, 1):
            raise IngestError(f"{where}: label {s.label!r} is not 0 or 1", field="label")
        if not isinstance(s.summary, str) or not s.summary.strip():
            raise IngestError(f"{where}: empty summary", field="summary")
        if any(not isinstance(v, str) for v in s.attributes.values()):
            raise IngestError(f"{where}: attribute values must be strings", field="attributes")
    rows = [s.to_row() for s in samples]
    table = pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA)
    return table.sort_by("sample_id")


def version_of(table: pa.Table) -> str:
    """Hash of the samples' content (order-independent: the table is sorted by sample_id)."""
    h = hashlib.sha256()
    for batch in table.select(list(SAMPLE_COLUMNS)).to_batches(max_chunksize=2048):
        for row in batch.to_pylist():
            h.update(
                json.dumps(row, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
            )
            h.update(b"\n")
    return h.hexdigest()[:16]


def describe(spec: BenchmarkSpec, df: pd.DataFrame) -> CardStats:
    """Sizes and balance for the benchmark card: per split x unit x domain, and error types."""
    by: list[SliceCount] = []
    for (split, unit, domain), g in df.groupby(
        ["split", "unit", df["domain"].fillna("")], sort=True
    ):
        lab = g["label"]
        by.append(
            {
                "split": str(split),
                "unit": str(unit),
                "domain": str(domain),
                "n": int(len(g)),
                "consistent": int((lab == 1).sum()),
                "inconsistent": int((lab == 0).sum()),
                "with_document": int(g["document"].notna().sum()),
            }
        )
    by_unit: dict[str, dict[str, int]] = {}
    for unit, g in df.groupby("unit", sort=True):
        types: Counter[str] = Counter()
        for lst in g["error_types"]:
            if lst is not None:
                types.update(str(t) for t in lst)
        by_unit[str(unit)] = dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0])))
    present = sorted(set(df["domain"].dropna()))
    return {
        "n_samples": int(len(df)),
        "by": by,
        # counted once, on the benchmark's finest unit (TofuEval: sentences, not sentences and
        # summaries)
        "error_types": by_unit.get(spec.units[0], {}),
        "error_types_by_unit": by_unit,
        "domains_present": present,
        "domains_missing": [d for d in spec.domains if d not in present],
        "documents_included": bool(df["document"].notna().any()),
    }


@dataclass
class IngestReport:
    name: str
    version: str
    changed: bool
    n_samples: int
    released_runs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def ingest(
    name: str,
    source: str | Path,
    options: Mapping[str, object] | None = None,
    root: Path | None = None,
    progress: bool = False,
) -> IngestReport:
    """Load a release, validate it, and swap it in as leaderboard_data/benchmarks/<name>/."""
    from tqdm import tqdm

    spec = registry.get(name)
    options = options or {}
    unknown = sorted(set(options) - set(spec.loader_options))
    if unknown:
        raise FactBoardError(
            f"unknown option {unknown[0]!r} for {name}; known: "
            f"{', '.join(sorted(spec.loader_options)) or '(none)'}"
        )
    bar = tqdm(total=4, desc=f"ingest {name}", disable=not progress, unit="step")
    loaded: LoadedBenchmark = spec.loader(source, **options)
    bar.update()
    table = samples_table(spec, loaded.samples)
    version = version_of(table)
    bar.update()
    target = layout.benchmark_dir(name, root)
    if ingested.is_ingested(name, root):
        old = ingested.load_meta(name, root)
        if old.get("version") == version and _released_ok(spec, version, loaded, root):
            bar.close()
            return IngestReport(name, version, False, table.num_rows, notes=loaded.notes)
    df = table.to_pandas()
    meta: BenchmarkMeta = {
        **spec.card(),
        "version": version,
        "ingested_at": runs.now_iso(),
        "sources": [str(s) for s in loaded.sources],
        "notes": loaded.notes,
        "stats": describe(spec, df),
    }
    tmp = runs.staging_path(f"bench-{name}", root)
    tmp.mkdir()
    try:
        pq.write_table(table, tmp / layout.SAMPLES_FILE)
        (tmp / layout.META_FILE).write_text(
            json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8"
        )
        _swap_in(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    bar.update()
    written = _write_released_runs(spec, version, loaded, df, root)
    bar.update()
    bar.close()
    return IngestReport(name, version, True, table.num_rows, written, loaded.notes)


def _swap_in(new: Path, target: Path) -> None:
    """Replace target by new: the old folder leaves first, then the new one is renamed in."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if target.exists():
        old = new.parent / f"{new.name}-old"
        os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        if old is not None:
            os.rename(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _released_ok(
    spec: BenchmarkSpec, version: str, loaded: LoadedBenchmark, root: Path | None
) -> bool:
    """True when every released run of this release is already stored for this version."""
    if not loaded.released_runs:
        return True
    have = {
        (r.model.name, r.benchmark_version)
        for r in runs.list_runs(root, benchmark=spec.name, include_hidden=True).runs
        if r.origin == "released"
    }
    return all((rr.model.name, version) in have for rr in loaded.released_runs)


def _write_released_runs(
    spec: BenchmarkSpec,
    version: str,
    loaded: LoadedBenchmark,
    samples: pd.DataFrame,
    root: Path | None,
) -> list[str]:
    if not loaded.released_runs:
        return []
    existing = [
        r
        for r in runs.list_runs(root, benchmark=spec.name, include_hidden=True).runs
        if r.origin == "released"
    ]
    written = []
    for rr in loaded.released_runs:
        policy = rr.threshold_policy if rr.threshold_policy != "none" else "auto"
        # a score-only run on a benchmark with a dev split is tuned on dev and scored on test
        rec_path = scorer.score_to_run(
            spec,
            version,
            samples,
            rr.predictions,
            rr.model,
            "released",
            rr.config,
            ScoreOptions(policy=policy),
            rr.grades,
            root,
        )
        written.append(rec_path.name)
    # the release is the source of truth for its runs: older copies of them are replaced
    names = {rr.model.name for rr in loaded.released_runs}
    for r in existing:
        if r.model.name in names:
            runs.delete_run(r.run_id, root)
    return written
