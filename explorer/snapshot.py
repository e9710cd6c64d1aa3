"""The files of the store's snapshot (explorer.store): where a data root's snapshot lives in the
cache folder, the results file each generation of it writes, this process's link to the results
it reads, and the sweep of the files nobody reads any more.

A snapshot is a cache only: the runs file (`snapshot_file`) names its generation, whose results
file (`results_file`) and file of the results' dimensions (`dimensions_file`) sit beside it. A
process reads the runs file through a name of its own (`private_copy`) and the results through
its own hard link (`ResultsLink`), so a newer snapshot written by another process cannot change
the one or take the other away from under it; `sweep` removes the older generations' files and
the links of processes that are gone.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from evaluator.store import layout
from explorer import queries as Q


def snapshot_dir(root: Path) -> Path:
    """Where the store keeps its snapshot of a data root's runs: $FACTBOARD_CACHE/board
    (default ~/.cache/factboard/board); one file per data root (named from its path) and per
    table layout (a new layout of the tables never reads an old snapshot)."""
    return layout.cache_dir("board")


def snapshot_file(root: Path) -> Path:
    """The snapshot's runs file (its results file sits beside it, named with the same stem
    and the generation that wrote it)."""
    key = hashlib.sha1(str(Path(root).resolve()).encode()).hexdigest()[:16]
    return snapshot_dir(root) / f"runs-{key}-{Q.SNAPSHOT_LAYOUT}.parquet"


def results_file(runs_file: Path, generation: str) -> Path:
    """The results file that the snapshot `runs_file` of this generation reads."""
    return runs_file.with_name(f"{runs_file.stem}.{generation}.results.parquet")


def dimensions_file(runs_file: Path, generation: str) -> Path:
    """The file of the results' dimensions (what the pickers offer) of this generation: read
    once when the snapshot is, so a first page does not pass over every result for them."""
    return runs_file.with_name(f"{runs_file.stem}.{generation}.dims.parquet")


@contextlib.contextmanager
def private_copy(runs_file: Path) -> Iterator[Path]:
    """The snapshot's runs file under a name of this process's own (a hard link; a copy where
    links are not possible), for as long as it is read: another process's newer snapshot,
    renamed into place meanwhile, cannot change it between two reads."""
    own = runs_file.with_name(f".{runs_file.name}.read.pid{os.getpid()}-{uuid.uuid4().hex[:6]}")
    try:
        os.link(runs_file, own)
    except OSError:
        shutil.copyfile(runs_file, own)
    try:
        yield own
    finally:
        own.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


class ResultsLink:
    """This process's hard link to a snapshot's results file (a copy where links are not
    possible), removed when the process ends. The link before the current one is kept until
    the next: a query another session began on it before the store switched to the new one
    may still be reading it."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self._previous: Path | None = None
        self._atexit = False

    def link(self, results: Path) -> Path:
        """Link to `results`; the current link becomes the previous one, and the one before
        it goes."""
        link = results.with_name(f"{results.stem}.pid{os.getpid()}-{uuid.uuid4().hex[:6]}.link")
        try:
            os.link(results, link)
        except OSError:
            shutil.copyfile(results, link)
        stale, self._previous, self.path = self._previous, self.path, link
        if stale is not None:
            stale.unlink(missing_ok=True)
        if not self._atexit:
            atexit.register(self.drop)
            self._atexit = True
        return link

    def drop(self) -> None:
        for p in (self.path, self._previous):
            if p is not None:
                p.unlink(missing_ok=True)
        self.path = self._previous = None


def sweep(snap: Path, results: Path) -> None:
    """After the snapshot `snap` switched to `results`: remove the results files of its older
    generations (their readers keep their own links) and the links of processes that are gone."""
    dims = results.name.removesuffix(".results.parquet") + ".dims.parquet"
    for pattern in (f"{snap.stem}.*.results.parquet", f"{snap.stem}.*.dims.parquet"):
        for old in snap.parent.glob(pattern):
            if old != results and old.name != dims:
                old.unlink(missing_ok=True)
    for link in [
        *snap.parent.glob(f"{snap.stem}.*.link"),
        *snap.parent.glob(f".{snap.name}.read.pid*"),
    ]:
        pid = link.name.rsplit(".pid", 1)[-1].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            link.unlink(missing_ok=True)
