"""`python -m explorer.warm [--demo-when-empty]`: the board's store made ready before the server
takes its first visitor (the container's start-up, scripts/space_prepare.sh).

A replica that has just pulled its results repo holds run folders its board has never read: the
server's first page would read and check every one of them (seconds at thousands of runs) while
its visitor waits. This reads them once, the way a page does (explorer/store.py: every run
checked, what fails listed), and writes the store's snapshot in the cache folder
(explorer/snapshot.py): the server's first page then reads one file and looks at the run folders
only by their mtimes, as on a replica that has been up for a while.

Runs a pull kept in packs (evaluator/store/pulled.py: `hub pull --packed`) are written as run
folders here when they are few (under pulled.WRITE_AT_ONCE_BELOW: well under a second), so the
first visitors' pages do not meet that write. Many are read in place and noted in the snapshot
with their packs; the app writes them as run folders in the background after its first sync, and
its store takes each folder as loaded when the engine wrote it from its pack.
With --demo-when-empty, a data root with no benchmark and no run gets the built-in demo first
(evaluator/ingest/demo.py): a board with nothing to show shows the demo. A cache otherwise: when
it fails, the first page reads the files itself, so the caller goes on.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from evaluator.store import ingested, layout, pulled, runs
from explorer.store import Store


def demo_when_empty(root: Path) -> bool:
    """Build the demo in `root` when it holds no benchmark and no run; True if it did. Packed
    runs are asked of first: listing the runs would write them all as folders."""
    if ingested.names(root) or pulled.packed_runs(root) or runs.list_runs(root).runs:
        return False
    from evaluator.ingest.demo import build_demo

    for _ in build_demo(root=root):
        pass
    return True


def warm(root: Path | None = None) -> Store:
    """Write the packed runs of `root` (default: $FACTBOARD_DATA) as folders when they are
    few, then read every run into a store, which writes its snapshot; returns the store."""
    root = root or layout.data_root()
    if 0 < len(pulled.packed_runs(root)) < pulled.WRITE_AT_ONCE_BELOW:
        runs.materialize(root)
    s = Store(root)
    s.refresh()
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m explorer.warm",
        description="Read the data root's runs once and write the board's snapshot, so that "
        "the server's first page does not.",
    )
    ap.add_argument("--data", type=Path, help="data root (default: $FACTBOARD_DATA)")
    ap.add_argument(
        "--demo-when-empty",
        action="store_true",
        help="build the built-in demo first when the data root has no benchmark and no run",
    )
    args = ap.parse_args(argv)
    root = args.data or layout.data_root()
    t = time.perf_counter()
    if args.demo_when_empty and demo_when_empty(root):
        print(f"nothing to show in {root}: the built-in demo is built")
    s = warm(root)
    took = time.perf_counter() - t
    names = s.benchmarks()
    print(f"the board's store of {root} is ready in {took:.1f} s: {len(names)} benchmarks")
    for folder, why in sorted(s.problems.items()):
        print(f"  left off the board: run {folder}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
