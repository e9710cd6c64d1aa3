"""The store's layout, written once: where FactBoard keeps its files and what each file is called.

Everything hangs off one data root so tests can use tmp_path. The read side (explorer/) imports
these names; nothing else spells them. See docs/ARCHITECTURE.md, "Data contracts".

    <data root>/benchmarks/<name>/{samples.parquet, benchmark.json}
    <data root>/runs/<run_id>/{run.json, predictions.parquet[, grades.parquet, labels.parquet,
                               evidence.parquet]}
    <data root>/_staging/          runs and benchmarks being written (renamed into place)
    <data root>/reported/*.csv     published numbers (the repo's copy unless a root is given)
    <submissions root>/            uploads, submission records and the job queue
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

RUN_FILE = "run.json"
PREDICTIONS_FILE = "predictions.parquet"
GRADES_FILE = "grades.parquet"
LABELS_FILE = "labels.parquet"
EVIDENCE_FILE = "evidence.parquet"  # per pair, why a detector scored it so (when it said)
SAMPLES_FILE = "samples.parquet"
META_FILE = "benchmark.json"

# the columns of a published-numbers table (reported/*.csv): one row per published number;
# the first ones every file must have (what the number is), then what a paper may leave out
REPORTED_REQUIRED: tuple[str, ...] = (
    "model",
    "kind",
    "benchmark",
    "split",
    "unit",
    "slice_kind",
    "slice_value",
    "metric",
    "value",
)
REPORTED_COLUMNS: tuple[str, ...] = (*REPORTED_REQUIRED, "n", "coverage", "source", "note")


def data_root() -> Path:
    """leaderboard_data/ (or $FACTBOARD_DATA)."""
    env = os.environ.get("FACTBOARD_DATA")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / "leaderboard_data"


def cache_dir(what: str) -> Path:
    """A folder of derived files that can be rebuilt or fetched again (never the source of
    truth): $FACTBOARD_CACHE/<what>, default ~/.cache/factboard/<what>."""
    env = os.environ.get("FACTBOARD_CACHE")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "factboard"
    return base / what


def benchmarks_dir(root: Path | None = None) -> Path:
    return (root or data_root()) / "benchmarks"


def runs_dir(root: Path | None = None) -> Path:
    return (root or data_root()) / "runs"


def benchmark_dir(name: str, root: Path | None = None) -> Path:
    return benchmarks_dir(root) / name


def run_dir(run_id: str, root: Path | None = None) -> Path:
    return runs_dir(root) / run_id


def staging_dir(root: Path | None = None) -> Path:
    """Outside the runs/ and benchmarks/ globs, on the same filesystem, so rename is atomic."""
    return (root or data_root()) / "_staging"


def reported_dir(root: Path | None = None) -> Path:
    """Published numbers ship with the code: the repo's copy, whatever the data root is."""
    if root is not None:
        return root / "reported"
    env = os.environ.get("FACTBOARD_REPORTED")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / "leaderboard_data" / "reported"


def submissions_root() -> Path:
    env = os.environ.get("FACTBOARD_SUBMISSIONS")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / "submissions"
