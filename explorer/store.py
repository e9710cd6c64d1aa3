"""The app's view of leaderboard_data/: an in-memory DuckDB kept in step with the files.

One Store per process and data root (explorer.ui caches it with st.cache_resource). `refresh()`
is cheap when nothing changed (a directory scan and a few stat calls): it loads only the run
folders, benchmarks and reported CSVs that are new or whose files changed, and forgets the ones
that are gone. Run folders are immutable apart from moderation (hidden), which rewrites run.json,
so a run is keyed on its run.json mtime. Per-sample predictions of a benchmark are loaded the
first time a page needs them (`ensure_labels`), then never again, with the final labels the
scorer stored (labels.parquet); a run stored before final labels were kept gets them from the
engine (evaluator.core.scoring.final_labels), never from SQL.

`token(benchmark)` changes whenever anything about that benchmark changes; derived results
cached elsewhere (st.cache_data) are keyed on it.
"""

from __future__ import annotations

import json
import math
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
from pydantic import ValidationError

from evaluator.core import scoring
from evaluator.core.types import LABEL_SCHEMA, ThresholdInfo
from evaluator.store import layout, runs
from evaluator.store.layout import (
    GRADES_FILE,
    LABELS_FILE,
    META_FILE,
    PREDICTIONS_FILE,
    RUN_FILE,
    SAMPLES_FILE,
)
from explorer import queries as Q


@dataclass(frozen=True)
class _RunFiles:
    mtime: int
    grades: bool
    labels: bool  # the scorer's final labels are stored (runs written before that have none)


def _number(v: object) -> float | None:
    """A DOUBLE read back through pandas: NULL comes back as NaN."""
    if v is None:
        return None
    f = float(v)  # type: ignore[arg-type]
    return f if math.isfinite(f) else None


def _mtime(p: Path) -> int | None:
    try:
        return p.stat().st_mtime_ns
    except OSError:
        return None


class Store:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.con = Q.connect()
        self.instance = uuid.uuid4().hex[:8]
        self._lock = threading.RLock()
        self._bench_files: dict[str, tuple[int, int]] = {}
        self._samples_loaded: dict[str, tuple[int, int]] = {}
        self.meta: dict[str, dict[str, Any]] = {}
        self._runs: dict[str, _RunFiles] = {}  # run folder -> files state
        self._run_benchmark: dict[str, str] = {}
        self._predictions_loaded: set[str] = set()
        self._labelled: set[str] = set()
        self._reported_files: tuple[tuple[str, int], ...] = ()
        self._gen: dict[str, int] = {}
        self.problems: dict[str, str] = {}  # run folder -> why it is not shown
        self.memo: dict[object, object] = {}  # derived arrays, keyed with token(benchmark)

    # ----------------------------------------------------------------------------------------
    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor for one query (DuckDB cursors are cheap and thread-safe to hand out)."""
        return self.con.cursor()

    def token(self, benchmark: str | None = None) -> str:
        """Changes whenever the benchmark's samples or runs (or, for None, anything) change."""
        if benchmark is None:
            return f"{self.instance}:{sum(self._gen.values())}:{len(self._gen)}"
        return f"{self.instance}:{benchmark}:{self._gen.get(benchmark, 0)}"

    def _bump(self, benchmark: str) -> None:
        self._gen[benchmark] = self._gen.get(benchmark, 0) + 1
        self.memo.clear()

    # ----------------------------------------------------------------------------------------
    def refresh(self) -> None:
        with self._lock:
            self._refresh_benchmarks()
            self._refresh_runs()
            self._refresh_reported()

    def _refresh_benchmarks(self) -> None:
        bdir = layout.benchmarks_dir(self.root)
        seen: dict[str, tuple[int, int]] = {}
        if bdir.is_dir():
            for d in sorted(bdir.iterdir()):
                if not d.is_dir() or d.name.startswith((".", "_")):
                    continue
                ms, mj = _mtime(d / SAMPLES_FILE), _mtime(d / META_FILE)
                if ms is None or mj is None:
                    continue
                seen[d.name] = (ms, mj)
        for name in list(self._bench_files):
            if name not in seen:
                Q.delete_benchmark(self.con, name)
                self.meta.pop(name, None)
                self._samples_loaded.pop(name, None)
                del self._bench_files[name]
                self._invalidate_labels(name)
                self._bump(name)
        for name, state in seen.items():
            if self._bench_files.get(name) == state:
                continue
            d = bdir / name
            try:
                meta = json.loads((d / META_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                self.problems[f"benchmarks/{name}"] = f"unreadable: {e}"
                continue
            self.problems.pop(f"benchmarks/{name}", None)
            self.meta[name] = meta
            self._bench_files[name] = state
            self._samples_loaded.pop(name, None)  # samples are (re)loaded when first needed
            Q.delete_benchmark(self.con, name)
            self._invalidate_labels(name)
            self._bump(name)

    def _invalidate_labels(self, benchmark: str) -> None:
        """Samples changed: final labels (which carry gold labels) must be recomputed."""
        stale = [r for r, b in self._run_benchmark.items() if b == benchmark]
        self._labelled.difference_update(stale)

    def _refresh_runs(self) -> None:
        rdir = layout.runs_dir(self.root)
        seen: dict[str, _RunFiles] = {}
        present: set[str] = set()
        if rdir.is_dir():
            with os.scandir(rdir) as it:
                for e in it:
                    if not e.is_dir() or e.name.startswith((".", "_")):
                        continue
                    present.add(e.name)
                    d = Path(e.path)
                    m = _mtime(d / RUN_FILE)
                    if m is None:
                        self.problems[e.name] = f"{RUN_FILE} is missing"
                        continue
                    if not (d / PREDICTIONS_FILE).is_file():
                        self.problems[e.name] = f"{PREDICTIONS_FILE} is missing"
                        continue
                    seen[e.name] = _RunFiles(
                        m, (d / GRADES_FILE).is_file(), (d / LABELS_FILE).is_file()
                    )
        for f in [p for p in self.problems if "/" not in p and p != "reported"]:
            if f not in present:
                del self.problems[f]
        gone = [f for f in self._runs if f not in seen]
        changed = [f for f, s in seen.items() if self._runs.get(f) != s]
        if not gone and not changed:
            return
        drop = gone + [f for f in changed if f in self._runs]
        for f in drop:
            b = self._run_benchmark.pop(f, None)
            if b:
                self._bump(b)
            self._runs.pop(f, None)
            self._predictions_loaded.discard(f)
            self._labelled.discard(f)
        Q.delete_runs(self.con, drop)
        if changed:
            self._load_runs(rdir, changed, seen)
        Q.apply_supersession(self.con, sorted(runs.superseded(Q.supersession_rows(self.con))))

    def _load_runs(self, rdir: Path, folders: list[str], seen: dict[str, _RunFiles]) -> None:
        files = [str(rdir / f / RUN_FILE) for f in folders]
        meta, bad = Q.stage_run_files(self.con, files)
        for f in bad:
            self.problems[f] = f"{RUN_FILE} is not valid JSON"
        good = self._check_runs(meta)
        Q.insert_staged_runs(self.con, [f for f, _ in good])
        Q.drop_staged_runs(self.con)
        for f, benchmark in good:
            self._runs[f] = seen[f]
            self._run_benchmark[f] = benchmark
            self.problems.pop(f, None)
            self._bump(benchmark)

    def _check_runs(self, meta: pd.DataFrame) -> list[tuple[str, str]]:
        good = []
        for row in meta.itertuples(index=False):
            folder = str(row.folder)
            if row.run_id != folder:
                self.problems[folder] = f"run_id {row.run_id!r} does not match the folder name"
            elif not row.benchmark or not row.model_name or not row.origin:
                self.problems[folder] = f"{RUN_FILE} lacks benchmark, model.name or origin"
            else:
                good.append((folder, str(row.benchmark)))
        return good

    def _refresh_reported(self) -> None:
        d = layout.reported_dir(self.root)
        files = (
            tuple(sorted((str(f), _mtime(f) or 0) for f in d.glob("*.csv"))) if d.is_dir() else ()
        )
        if files == self._reported_files:
            return
        try:
            Q.load_reported(self.con, [f for f, _ in files])
        except duckdb.Error as e:
            self.problems["reported"] = f"unreadable: {str(e).splitlines()[0]}"
        self._reported_files = files
        for b in Q.reported_benchmarks(self.con):
            self._bump(b)
        self._bump("")

    # ----------------------------------------------------------------------------------------
    def ensure_samples(self, benchmark: str) -> bool:
        """Load the benchmark's samples if they are not loaded yet; False if not ingested."""
        with self._lock:
            state = self._bench_files.get(benchmark)
            if state is None:
                return False
            if self._samples_loaded.get(benchmark) == state:
                return True
            path = layout.benchmark_dir(benchmark, self.root) / SAMPLES_FILE
            try:
                Q.load_samples(self.con, benchmark, str(path))
            except duckdb.Error as e:
                self.problems[f"benchmarks/{benchmark}"] = f"unreadable: {e}"
                return False
            self._samples_loaded[benchmark] = state
            return True

    def ensure_labels(self, benchmark: str) -> None:
        """Load the per-sample predictions (and grades) of the benchmark's runs not loaded yet,
        and their final labels: as stored by the scorer, or, for a run stored without them,
        made by the engine (evaluator.core.scoring.final_labels)."""
        with self._lock:
            has_samples = self.ensure_samples(benchmark)
            folders = [f for f, b in self._run_benchmark.items() if b == benchmark]
            new = [f for f in folders if f not in self._predictions_loaded]
            rdir = layout.runs_dir(self.root)
            if new:
                Q.load_predictions(self.con, [str(rdir / f / PREDICTIONS_FILE) for f in new])
                Q.load_grades(
                    self.con, [str(rdir / f / GRADES_FILE) for f in new if self._runs[f].grades]
                )
                self._predictions_loaded.update(new)
            todo = [f for f in folders if f not in self._labelled]
            if not todo or not has_samples:
                return
            Q.delete_labels(self.con, todo)
            stored = [f for f in todo if self._runs[f].labels]
            Q.load_labels(self.con, benchmark, [str(rdir / f / LABELS_FILE) for f in stored])
            older = [f for f in todo if not self._runs[f].labels]
            if older:
                self._make_labels(older, benchmark)
            self._labelled.update(todo)

    def _make_labels(self, run_ids: list[str], benchmark: str) -> None:
        """Final labels of runs stored without them, by the engine's rule."""
        samples = Q.label_inputs(self.con, benchmark)
        preds = dict(iter(Q.run_predictions(self.con, run_ids).groupby("run_id", sort=False)))
        tables = []
        for row in Q.run_thresholds(self.con, run_ids).to_dict("records"):
            run_id = str(row["run_id"])
            try:
                per_domain = row["per_domain"]
                threshold = ThresholdInfo(
                    policy=str(row["policy"]),
                    threshold=_number(row["threshold"]),
                    per_domain=json.loads(per_domain) if isinstance(per_domain, str) else None,
                )
            except (ValueError, ValidationError) as e:
                self.problems[run_id] = f"threshold unreadable: {str(e).splitlines()[0]}"
                continue
            p = preds.get(run_id)
            if p is None:
                continue
            splits = [str(x) for x in (row["splits"] if row["splits"] is not None else [])]
            t = scoring.final_labels(samples, p, threshold, splits)
            tables.append(t.assign(run_id=run_id))
        if tables:
            table = pd.concat(tables, ignore_index=True)
            schema = LABEL_SCHEMA.append(pa.field("run_id", pa.string()))
            Q.insert_labels(
                self.con,
                benchmark,
                pa.Table.from_pandas(table, schema=schema, preserve_index=False),
            )

    def ensure_all_grades(self) -> None:
        """Grades of every run (the explanations page spans benchmarks)."""
        for b in sorted(set(self._run_benchmark.values())):
            if any(self._runs[f].grades for f, bb in self._run_benchmark.items() if bb == b):
                self.ensure_labels(b)

    # ----------------------------------------------------------------------------------------
    def benchmarks(self) -> list[str]:
        """Ingested benchmarks (with samples on disk), by name."""
        return sorted(self.meta)

    def version(self, benchmark: str) -> str | None:
        m = self.meta.get(benchmark)
        return str(m["version"]) if m and m.get("version") else None
