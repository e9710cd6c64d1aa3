"""Ingest every benchmark whose release sits in one folder (laid out like ../shared/benchmarks),
and say which releases were left out and why (`skipped`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.errors import IngestError
from evaluator.ingest import pipeline


@dataclass(frozen=True)
class Skipped:
    """A benchmark with a release folder that `ingest_all` did not ingest, and why."""

    name: str
    reason: str


def _why_not(spec: BenchmarkSpec, folder: Path) -> str | None:
    """Why the benchmark's release is not ingested from `folder` (None: it is)."""
    src = folder / str(spec.release_folder)
    if not src.is_dir():
        return f"no {spec.release_folder}/ folder in {folder}"
    if spec.release_files is not None and not any(src.glob(spec.release_files)):
        # LLM-AggreFact, SummExecEdit: their loaders download the release (`--from hub`)
        where = f"; its rows are on the Hugging Face Hub ({spec.hub_id})" if spec.hub_id else ""
        return (
            f"{src} holds no release file ({spec.release_files}){where}: ingest it with "
            f"`ingest {spec.name} --from hub`"
        )
    return None


def skipped(folder: Path) -> list[Skipped]:
    """The benchmarks with a release folder that `ingest_all(folder)` leaves out, and why: no
    sub-folder for them, or one without their release files (LLM-AggreFact's and SummExecEdit's
    rows live on the Hub; a folder of leaderboard snapshots is not a release)."""
    out = []
    for spec in registry.specs():
        if spec.release_folder is None:
            continue
        why = _why_not(spec, folder)
        if why is not None:
            out.append(Skipped(spec.name, why))
    return out


def ingest_all(
    folder: Path, root: Path | None = None, progress: bool = False
) -> Iterator[pipeline.IngestReport]:
    """Ingest each benchmark whose release sub-folder (BenchmarkSpec.release_folder) exists and
    holds its release files (BenchmarkSpec.release_files); `skipped` lists the others."""
    if not folder.is_dir():
        raise IngestError("not a folder", file=str(folder))
    for spec in registry.specs():
        if spec.release_folder is None or _why_not(spec, folder) is not None:
            continue
        yield pipeline.ingest(spec.name, folder / spec.release_folder, root=root, progress=progress)
