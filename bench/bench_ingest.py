"""Ingest speed: every benchmark in ../shared/benchmarks into a fresh data root, then again.

Run: python bench/bench_ingest.py [PATH]   (default ../shared/benchmarks beside the repo)
Targets: the whole ingest (including scoring the released FRANK and FactCC runs) under 30 s on
2 cores; re-ingesting unchanged data is a no-op (printed as a ratio to the first ingest).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluator.ingest.folder import ingest_all


def main() -> None:
    repo = Path(__file__).resolve().parent.parent
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else repo.parent / "shared" / "benchmarks"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        per: list[tuple[str, float, int, int]] = []
        t0 = time.perf_counter()
        last = t0
        for rep in ingest_all(src, root=root):
            now = time.perf_counter()
            per.append((rep.name, now - last, rep.n_samples, len(rep.released_runs)))
            last = now
        first = time.perf_counter() - t0
        t1 = time.perf_counter()
        changed = [r.name for r in ingest_all(src, root=root) if r.changed]
        again = time.perf_counter() - t1
    for name, secs, n, released in per:
        print(f"  {name:20} {n:6,} samples {released:3} released runs  {secs:6.2f} s")
    print(f"ingest all: {first:.1f} s = {first / 30:.2f} x the 30 s target")
    print(
        f"re-ingest unchanged: {again:.2f} s = {again / first:.3f} x the first ingest; "
        f"changed: {changed or 'nothing'}"
    )


if __name__ == "__main__":
    main()
