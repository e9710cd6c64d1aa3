"""Ingest every benchmark whose release sits in one folder (laid out like ../shared/benchmarks)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from evaluator.core.errors import IngestError
from evaluator.ingest import pipeline

# benchmark -> sub-folder of the release folder that its loader reads
RELEASE_FOLDERS: dict[str, str] = {
    "summedits": "summedits",
    "factcc_explanations": "summedits",
    "tofueval": "tofueval",
    "longsciverify": "longsciverify",
    "longeval_pubmed": "longsciverify",
    "qags": "qags",
    "frank": "frank",
    "summexecedit": "summexecedit",
}


def ingest_all(
    folder: Path, root: Path | None = None, progress: bool = False
) -> Iterator[pipeline.IngestReport]:
    """Ingest each benchmark whose sub-folder exists. SummExecEdit is skipped when its folder
    holds no data file (its rows live on the hub only)."""
    if not folder.is_dir():
        raise IngestError("not a folder", file=str(folder))
    for name, sub in RELEASE_FOLDERS.items():
        src = folder / sub
        if not src.is_dir():
            continue
        if name == "summexecedit" and not any(src.glob("*.json*")):
            continue
        yield pipeline.ingest(name, src, root=root, progress=progress)
