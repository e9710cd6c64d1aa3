"""The store's layout, written once: where FactBoard keeps its files and what each file is called.

Everything hangs off one data root so tests can use tmp_path. The read side (explorer/) imports
these names; nothing else spells them. See docs/ARCHITECTURE.md, "Data contracts".

    <data root>/benchmarks/<name>/{samples.parquet, benchmark.json}
    <data root>/runs/<run_id>/{run.json, predictions.parquet[, grades.parquet, labels.parquet,
                               evidence.parquet]}
    <data root>/_staging/          runs and benchmarks being written (renamed into place)
    <data root>/reported/*.csv     published numbers beyond those FactBoard ships (pulled from the
                                   results repo, imported): see `reported_files`
    <submissions root>/            uploads, submission records and the job queue
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def mtime_ns(path: str | os.PathLike[str]) -> int | None:
    """A file's or folder's modification time in nanoseconds; None where there is none."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


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


def from_checkout() -> bool:
    """Whether the code runs from a FactBoard checkout (pyproject.toml beside the packages), not
    from an installed package (site-packages), whose folder is no place for data."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "evaluator").is_dir()


def user_data_dir() -> Path:
    """Where an installed FactBoard keeps its files by default: the platform's per-user data
    folder ($XDG_DATA_HOME or ~/.local/share, ~/Library/Application Support, %LOCALAPPDATA%),
    then factboard/."""
    import sys

    home = Path.home()
    if sys.platform == "win32":  # pragma: no cover - the CI runs on Linux
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":  # pragma: no cover
        base = home / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME", "")
        base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share"
    return base / "factboard"


def data_root() -> Path:
    """$FACTBOARD_DATA; else leaderboard_data/ of the checkout, or for an installed package
    the user's data folder (user_data_dir()/data; never inside site-packages)."""
    env = os.environ.get("FACTBOARD_DATA")
    if env:
        return Path(env).expanduser().resolve()
    return REPO_ROOT / "leaderboard_data" if from_checkout() else user_data_dir() / "data"


def data_root_note() -> str:
    """Where the data root is and why, in one line (for a command that finds it empty)."""
    if os.environ.get("FACTBOARD_DATA"):
        return f"data root {data_root()} ($FACTBOARD_DATA)"
    if from_checkout():
        return f"data root {data_root()} (the checkout's; set FACTBOARD_DATA for another)"
    return (
        f"data root {data_root()} (FactBoard is installed as a package, so its files go in "
        "your user data folder; set FACTBOARD_DATA to use another folder)"
    )


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


def shipped_reported_dir() -> Path:
    """The published numbers that ship with the code (leaderboard_data/reported/ in the checkout
    or the container image; $FACTBOARD_REPORTED replaces the folder)."""
    env = os.environ.get("FACTBOARD_REPORTED")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / "leaderboard_data" / "reported"


def reported_dir(root: Path | None = None) -> Path:
    """One folder of published-numbers tables: the data root's own (`root`/reported, where a
    pull from the results repo and an import write), or without a root the shipped one. What
    the board and the exports read is `reported_files`, never one folder alone."""
    return root / "reported" if root is not None else shipped_reported_dir()


def reported_files(root: Path | None = None) -> list[Path]:
    """The published-numbers tables that the board, the exports and every other reader read,
    on any data root (`root`, default the data root): every table that ships with the code,
    plus every table in the data root's reported/ folder; a data-root table with a shipped
    table's file name replaces it (a newer copy pulled from the results repo). In file-name
    order, each name once."""
    own = reported_dir(root or data_root())
    chosen: dict[str, Path] = {}
    for d in (shipped_reported_dir(), own):
        if d.is_dir():
            chosen.update((f.name, f) for f in d.glob("*.csv") if f.is_file())
    return [chosen[name] for name in sorted(chosen)]


def submissions_root() -> Path:
    """$FACTBOARD_SUBMISSIONS; else submissions/ of the checkout, or for an installed package
    user_data_dir()/submissions."""
    env = os.environ.get("FACTBOARD_SUBMISSIONS")
    if env:
        return Path(env).expanduser().resolve()
    return REPO_ROOT / "submissions" if from_checkout() else user_data_dir() / "submissions"
