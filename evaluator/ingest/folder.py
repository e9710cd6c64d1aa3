"""Ingest every benchmark whose release sits in one folder (laid out like ../shared/benchmarks)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from evaluator.benchmarks import registry
from evaluator.core.errors import IngestError
from evaluator.ingest import pipeline


def ingest_all(
    folder: Path, root: Path | None = None, progress: bool = False
) -> Iterator[pipeline.IngestReport]:
    """Ingest each benchmark whose release sub-folder (BenchmarkSpec.release_folder) exists and
    holds its release files (BenchmarkSpec.release_files: SummExecEdit is skipped when its folder
    holds no data file, its rows live on the hub only)."""
    if not folder.is_dir():
        raise IngestError("not a folder", file=str(folder))
    for spec in registry.specs():
        if spec.release_folder is None:
            continue
        src = folder / spec.release_folder
        if not src.is_dir():
            continue
        if spec.release_files is not None and not any(src.glob(spec.release_files)):
            continue
        yield pipeline.ingest(spec.name, src, root=root, progress=progress)
