"""Submission speed and memory: a 20,000-row prediction file, end to end.

Run: python bench/bench_submit.py

The measured call is `evaluator.submissions.service.submit(bytes, filename, meta)`, the same call
the Submit page makes: the upload is saved, validated against the benchmark, checked for
duplicates, scored with 1,000-resample bootstrap CIs over every slice, and written as a run. The
benchmark is the synthetic demo release replicated to 20,000+ samples (dev + test) and ingested
into a temporary data root, so nothing outside /tmp is touched.

Figures, each beside a baseline measured in this run on the same file:
- wall time (best of 3) against the 3 s target and against pandas.read_csv of the file;
- peak Python heap (tracemalloc) during a submission, against the 500 MB target and against
  the peak of pandas.read_csv;
- the peak resident set size of a fresh process making one submission (VmHWM; interpreter,
  libraries and the benchmark included), against the 500 MB target, with the part the
  submission itself added; for scores, the same with a smaller bootstrap chunk (an engine
  setting this script does not change) to show where the memory goes.
The temporary data root is deleted at the end.
"""

from __future__ import annotations

import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TARGET_SECONDS = 3.0
TARGET_MB = 500.0
MIN_SAMPLES = 20_000
KINDS = ("scores", "labels")


def build_release(folder: Path) -> int:
    """The demo release, replicated with fresh ids until it has at least MIN_SAMPLES samples."""
    from evaluator.ingest.demo import release_records

    base = release_records()
    per_copy = sum(len(v) for v in base.values())
    copies = -(-MIN_SAMPLES // per_copy)
    folder.mkdir(parents=True, exist_ok=True)
    for domain, recs in base.items():
        out = []
        for k in range(copies):
            for r in recs:
                out.append({**r, "id": f"{r['id']}-c{k:03d}"})
        (folder / f"demo_{domain}.json").write_text(json.dumps(out), encoding="utf-8")
    return copies * per_copy


def prediction_file(samples: pd.DataFrame, seed: int, kind: str) -> bytes:
    """Every sample (dev and test): scores that separate the classes noisily, or labels."""
    rng = np.random.default_rng(seed)
    s = samples.sort_values("sample_id")
    df = pd.DataFrame({"sample_id": s["sample_id"].to_numpy()})
    if kind == "scores":
        df["score"] = s["label"].to_numpy() + rng.normal(0, 0.6, len(s))
    else:
        flip = rng.random(len(s)) < 0.2
        df["label"] = np.where(flip, 1 - s["label"].to_numpy(), s["label"].to_numpy())
    df["explanation"] = np.where(rng.random(len(s)) < 0.3, "the summary changes a number", "")
    return df.to_csv(index=False).encode()


def best_of(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def traced_peak(fn) -> float:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def _rss_mb() -> tuple[float, float]:
    """(current RSS, peak RSS) of this process in MB: /proc/self/status (Linux), which starts
    fresh at exec; elsewhere ru_maxrss for both."""
    status = Path("/proc/self/status")
    if status.exists():
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        return (
            float(fields["VmRSS"].split()[0]) / 1024,
            float(fields["VmHWM"].split()[0]) / 1024,
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return peak, peak


def rss_child(kind: str) -> None:
    """Run in a fresh process: one submission; prints RSS before it and the peak after."""
    from evaluator.store import ingested
    from evaluator.submissions import service as submit

    samples = ingested.load_samples("demo")
    seed = 900 + (0 if kind == "scores" else 1)
    data = prediction_file(samples, seed, kind)
    before, _ = _rss_mb()
    name = f"RSS child {kind}"
    res = submit.submit(data, "child.csv", submit.SubmissionMeta("demo", name))
    _, peak = _rss_mb()
    print(json.dumps({"ok": res.ok, "before": before, "peak": peak, "problems": res.problems}))


def child_rss(kind: str) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--rss-child", kind]
    child = subprocess.run(argv, capture_output=True, text=True, check=True, env=os.environ.copy())
    r: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    if not r["ok"]:
        raise SystemExit(f"the child's submission was refused: {r}")
    return r


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "--rss-child":
        rss_child(sys.argv[2])
        return
    tmp = Path(tempfile.mkdtemp(prefix="factboard-bench-submit-"))
    try:
        run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(tmp: Path) -> None:
    os.environ["FACTBOARD_DATA"] = str(tmp / "leaderboard_data")
    os.environ["FACTBOARD_SUBMISSIONS"] = str(tmp / "submissions")
    os.environ.pop("FACTBOARD_JUDGE", None)
    from evaluator.ingest import pipeline
    from evaluator.store import ingested
    from evaluator.submissions import report
    from evaluator.submissions import service as submit

    n = build_release(tmp / "release")
    pipeline.ingest("demo", tmp / "release")
    samples = ingested.load_samples("demo")
    n_test, n_dev = (samples["split"] == "test").sum(), (samples["split"] == "dev").sum()
    print(
        f"benchmark: synthetic demo x {n // 294}, {len(samples):,} samples ({n_test:,} test, "
        f"{n_dev:,} dev)"
    )
    files = {k: iter([prediction_file(samples, i, k) for i in range(6)]) for k in KINDS}
    counter = iter(range(10_000))

    def submit_one(kind: str) -> submit.SubmitResult:
        meta = submit.SubmissionMeta("demo", f"Bench {kind} {next(counter)}")
        res = submit.submit(next(files[kind]), "bench.csv", meta)
        if not res.ok:
            raise SystemExit(f"the benchmark submission was refused: {res.problems[:3]}")
        return res

    sample_file = prediction_file(samples, 0, "scores")
    rows = sample_file.count(b"\n") - 1
    print(
        f"file: {rows:,} rows, {len(sample_file) / 2**20:.1f} MB (CSV with sample_id, "
        "score or label, explanation)"
    )
    base_t = best_of(lambda: pd.read_csv(io.BytesIO(sample_file)))
    base_mem = traced_peak(lambda: pd.read_csv(io.BytesIO(sample_file)))
    print(
        f"baseline pandas.read_csv of the file: {base_t * 1000:.0f} ms, peak heap {base_mem:.1f} MB"
    )
    for kind in KINDS:
        submit_one(kind)  # warm-up: imports, caches
        t = best_of(lambda kind=kind: submit_one(kind))
        res = submit_one(kind)
        peak = traced_peak(lambda kind=kind: submit_one(kind))
        rec = res.record
        assert rec is not None
        print(
            f"submit {rows:,} rows with {kind} ({report.threshold_text(rec)[:32]}, "
            f"{len(rec.results)} results with 95% CIs, {rec.bootstrap['resamples']} resamples):"
        )
        print(
            f"  time {t:.2f} s = {t / TARGET_SECONDS:.2f} x the {TARGET_SECONDS:.0f} s target "
            f"({'ok' if t < TARGET_SECONDS else 'OVER'}); {t / base_t:.0f}x read_csv"
        )
        print(
            f"  peak Python heap (tracemalloc) {peak:.0f} MB = {peak / TARGET_MB:.2f} x the "
            f"{TARGET_MB:.0f} MB target ({'ok' if peak < TARGET_MB else 'OVER'}); "
            f"{peak / base_mem:.0f}x read_csv"
        )
        r = child_rss(kind)
        grown = r["peak"] - r["before"]
        print(
            f"  fresh process: max RSS {r['peak']:.0f} MB = {r['peak'] / TARGET_MB:.2f} x the "
            f"{TARGET_MB:.0f} MB target ({'ok' if r['peak'] < TARGET_MB else 'OVER'}); "
            f"{r['before']:.0f} MB of it before the submission (interpreter, pandas, pyarrow, "
            f"the benchmark), {grown:.0f} MB added by it"
        )


if __name__ == "__main__":
    main()
