"""The app's view of leaderboard_data/: an in-memory DuckDB kept in step with the files.

One Store per process and data root (explorer.ui caches it with st.cache_resource). `refresh()`
is cheap when nothing changed (a directory scan and a few stat calls): it loads only the run
folders, benchmarks and reported CSVs that are new or whose files changed, and forgets the ones
that are gone. Run folders are immutable apart from moderation (hidden), which rewrites run.json,
so a run is keyed on its run.json mtime. Per-sample predictions of a benchmark are loaded the
first time a page needs them (`ensure_labels`), then never again, with the final labels the
scorer stored (labels.parquet); a run stored before final labels were kept gets them from the
engine (evaluator.core.scoring.final_labels), never from SQL.

A run folder the engine would reject never reaches the board: its run.json is validated by the
engine (`evaluator.store.runs.read_record`, the pydantic RunRecord) and its Parquet files must
begin and end with Parquet's magic bytes (a truncated file does not). A file that still fails
when its rows are loaded (`ensure_labels`: a column of the wrong type, a damaged page) takes
its run off the board. Either way the folder is listed in `problems` (folder -> why) until its
files change, and no page goes down.

A new store with no snapshot of this root (a replica's first page after a pull) takes the runs
the pull wrote and checked in bulk from the engine's ledger (evaluator.store.pulled.checked_runs:
their run.json texts in one Parquet file, and their files' modification times as written),
for the folders whose files still have those times; any other folder is read and checked.

`token(benchmark)` changes whenever anything about that benchmark changes; derived results
cached elsewhere (st.cache_data) are keyed on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import ValidationError

from evaluator.core import scoring
from evaluator.core.types import LABEL_SCHEMA, ThresholdInfo
from evaluator.store import layout, pulled, runs
from evaluator.store.layout import (
    GRADES_FILE,
    LABELS_FILE,
    META_FILE,
    PREDICTIONS_FILE,
    RUN_FILE,
    SAMPLES_FILE,
)
from explorer import queries as Q
from explorer.snapshot import (
    ResultsLink,
    dimensions_file,
    private_copy,
    results_file,
    snapshot_file,
    sweep,
)
from explorer.store_files import (
    Memo,
    RunFiles,
    db_number,
    engine_problem,
    label_vector,
    labels_on,
    vector_columns,
)

_RUN_DATA_FILES = pulled.CHECKED_FILES  # predictions, labels, grades
# a run file's mtime in the scan of the run folders (a name of its own: a test counts the
# files that scan looks at)
file_mtime = layout.mtime_ns
_NEVER = -1e9  # Store._scanned_at before its first scan
CHECKED_MIN = 50  # new folders from which the engine's ledger of checked runs is looked up
LOAD_CHUNK = 1000  # run folders read and inserted at a time


def _files_of(state: Q.SnapshotState) -> RunFiles:
    """A run folder's files state as the snapshot notes it."""
    _, _, mtime, grades, labels, files, folder_mtime, pack = state
    return RunFiles(mtime, grades, labels, tuple(files), pack, folder_mtime)


class Store:
    def __init__(self, root: Path, snapshot: bool = True):
        """snapshot: keep the runs and their per-slice results in a snapshot file
        (snapshot_file) and start from it, so a new process reads one file instead of every
        run.json; each run in it is checked against its folder's files (modification times)
        and re-read when they changed."""
        self.root = Path(root)
        self.con = Q.connect()
        self.instance = uuid.uuid4().hex[:8]
        self.snapshot = snapshot_file(self.root) if snapshot else None
        self._snapshot_read = False
        self._results = ResultsLink()  # this process's link to the snapshot's results
        # the run_dimensions table holds the runs' dimensions of the tables as they are now
        # (filled when the snapshot is read or written; a change of the runs leaves it stale)
        self._dims_kept = False
        self._scanned_at = _NEVER  # a page's first scan may look at run folders only
        self._runs_dir_mtime: tuple[int | None, int | None] | None = None
        self._scan_dirs: tuple[int | None, int | None] | None = None  # as of the last scan
        self._lock = threading.RLock()
        self._bench_files: dict[str, tuple[int, int]] = {}
        self._samples_loaded: dict[str, tuple[int, int]] = {}
        self.meta: dict[str, dict[str, Any]] = {}
        self._run_files: dict[str, RunFiles] = {}  # run folder -> files state (see _runs)
        self._benchmark_of: dict[str, str] = {}  # run folder -> its benchmark
        self._unmade: pa.Table | None = None  # the snapshot's states not made objects yet
        self._unmade_at: dict[str, int] | None = None  # run folder -> its row in _unmade
        self._predictions_loaded: set[str] = set()
        self._labelled: set[str] = set()
        self._reported_files: tuple[tuple[str, int], ...] = ()
        self._gen: dict[str, int] = {}
        self.problems: dict[str, str] = {}  # run folder -> why it is not shown
        self._broken: dict[str, RunFiles] = {}  # run folders left off, as they were seen
        self._seen_state: dict[str, RunFiles] = {}
        self.memo: Memo = Memo()  # derived arrays, keyed on their inputs (see Memo)
        self._stats_token: dict[str, str] = {}  # benchmark -> token its sample_stats are of
        self._explained: dict[str, tuple[str, list[str]]] = {}  # files with explanations

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

    # ----------------------------------------------------------------------------------------
    def refresh(self, max_age: float = 0.0) -> None:
        """Bring the tables in step with the files. max_age > 0 (the pages): the run folders
        are looked at one by one at most every max_age seconds; in between only the runs
        folder itself is (a run added or deleted changes it, and so does the engine's one
        in-place rewrite of a run.json, evaluator.store.runs.rewrite_record)."""
        with self._lock:
            self._refresh_benchmarks()
            now = time.monotonic()
            # a run added, deleted or rewritten moves the runs folder; a pack added or
            # removed moves the packs folder
            rdir_mtime = (
                layout.mtime_ns(layout.runs_dir(self.root)),
                layout.mtime_ns(pulled.packs_dir(self.root)),
            )
            if not self._snapshot_read:
                self._snapshot_read = True
                as_of = self._read_snapshot()
                if max_age > 0 and as_of == rdir_mtime and rdir_mtime[0] is not None:
                    # neither folder has moved since the snapshot's states were looked at:
                    # nothing the engine writes has happened since; they stand until the
                    # page's next look at every file, max_age later
                    self._scanned_at, self._runs_dir_mtime = now, rdir_mtime
            if (
                max_age <= 0
                or now - self._scanned_at >= max_age
                or rdir_mtime != self._runs_dir_mtime
            ):
                # a page's first scan after the snapshot is read looks at each run folder's
                # own mtime and at the files of those that moved; the next, max_age later, at
                # every file (a file edited in place by hand moves no folder)
                quick = max_age > 0 and self._scanned_at == _NEVER
                self._scan_dirs = rdir_mtime  # (read before the scan: what its states are of)
                self._refresh_runs(quick=quick)
                self._scanned_at = now
                self._runs_dir_mtime = rdir_mtime
            self._refresh_reported()

    def _read_snapshot(self) -> tuple[int | None, int | None] | None:
        """Start from the snapshot of the runs (when there is one): its runs count as loaded
        with the folder states they had, its results are read in place (through this
        process's own link to the file, which another process's newer snapshot cannot take
        away); _refresh_runs then re-reads the runs whose files changed and forgets those
        that are gone. Returns the mtimes of the runs and packs folders as they were before
        the snapshot's states were looked at (None: no snapshot read)."""
        if self.snapshot is None or not self.snapshot.is_file():
            return None
        snap = self.snapshot
        with pulled.collector_paused():  # a state per run: thousands of objects
            try:
                with private_copy(snap) as own:
                    states, as_of, self._dims_kept = Q.load_snapshot(
                        self.con,
                        str(own),
                        lambda g: str(self._results.link(results_file(snap, g))),
                        lambda g: str(dimensions_file(snap, g)),
                    )
            except (duckdb.Error, OSError, ValueError, KeyError):
                self.con.execute("DELETE FROM runs")  # unreadable: start from the files
                Q.use_snapshot_results(self.con, None)
                self._results.drop()
                self._dims_kept = False
                return None
            # made objects when first asked for (_runs): a page that asks for none of them
            # (a leaderboard's first render) does not make 10,000
            self._unmade = states
            for count in pc.value_counts(states["benchmark"]).to_pylist():
                benchmark, n = count["values"], int(count["counts"])
                self._gen[benchmark] = self._gen.get(benchmark, 0) + n  # a _bump per run
        return as_of

    @property
    def _runs(self) -> dict[str, RunFiles]:
        """Run folder -> its files' state: the snapshot's states, made on first use, then
        what the scans found."""
        if self._unmade is not None:
            self._make_states()
        return self._run_files

    @property
    def _run_benchmark(self) -> dict[str, str]:
        """Run folder -> its benchmark (the runs of _runs)."""
        if self._unmade is not None:
            self._make_states()
        return self._benchmark_of

    def _state(self, folder: str) -> tuple[str, RunFiles] | None:
        """A run folder's benchmark and files' state (None: not a run on the board), read
        without making every snapshot state an object: what a view asks of the few runs it
        compares (the paired tests' best runs). Read only; a change goes through _runs."""
        with self._lock:
            states = self._unmade
            if states is None:
                files = self._run_files.get(folder)
                return None if files is None else (self._benchmark_of[folder], files)
            if self._unmade_at is None:
                self._unmade_at = {f: i for i, f in enumerate(states["folder"].to_pylist())}
            at = self._unmade_at.get(folder)
            if at is None:
                return None
            state = next(Q.snapshot_states(states.slice(at, 1)))
            return state[1], _files_of(state)

    def _make_states(self) -> None:
        with self._lock:
            states, self._unmade, self._unmade_at = self._unmade, None, None
            if states is None:
                return
            with pulled.collector_paused():  # a state per run: thousands of objects
                for state in Q.snapshot_states(states):
                    self._run_files[state[0]] = _files_of(state)
                    self._benchmark_of[state[0]] = state[1]

    def _write_snapshot(self) -> None:
        """Write the snapshot (every loaded run and its results), then read the results from
        it in place: the rows read from run.json files since leave memory. A run read from a
        pack is noted with its pack: when it is a folder by the time a new process reads the
        snapshot, the folder is taken as loaded if the engine wrote it from the pack
        (_written_from_packs), and read otherwise."""
        if self.snapshot is None:
            return
        states = [
            (
                f,
                self._run_benchmark[f],
                st.mtime,
                st.grades,
                st.labels,
                list(st.files),
                st.folder,
                st.pack,
            )
            for f, st in self._runs.items()
        ]
        generation = uuid.uuid4().hex[:12]
        snap = self.snapshot
        tmp = snap.with_name(f".{snap.name}.{generation}")
        results = results_file(snap, generation)
        try:
            snap.parent.mkdir(parents=True, exist_ok=True)
            # the folders' mtimes only when no run folder is left off: a new process's first
            # page then looks at the folders, and lists the broken ones again
            broken = bool(self._run_problems())
            dirs = (None, None) if broken or self._scan_dirs is None else self._scan_dirs
            self._dims_kept = False
            Q.fill_run_dimensions(self.con)
            self._dims_kept = True
            paths = (str(tmp), str(results), str(dimensions_file(snap, generation)))
            Q.write_snapshot(self.con, states, paths, generation, dirs)
            os.replace(tmp, snap)
            Q.switch_to_snapshot_results(self.con, str(self._results.link(results)))
        except (duckdb.Error, OSError, ValueError):
            tmp.unlink(missing_ok=True)  # a cache: the files stay the source of truth
            return
        sweep(snap, results)

    def _refresh_benchmarks(self) -> None:
        bdir = layout.benchmarks_dir(self.root)
        seen: dict[str, tuple[int, int]] = {}
        if bdir.is_dir():
            for d in sorted(bdir.iterdir()):
                if not d.is_dir() or d.name.startswith((".", "_")):
                    continue
                ms, mj = layout.mtime_ns(d / SAMPLES_FILE), layout.mtime_ns(d / META_FILE)
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

    def _run_problems(self) -> list[str]:
        """The run folders left off (problems' other keys name benchmarks and reported)."""
        return [p for p in self.problems if "/" not in p and p != "reported"]

    def _refresh_runs(self, quick: bool = False) -> None:
        """Compare the run folders (and packs) with the loaded runs; read the new and changed,
        drop the gone. quick: a run whose folder's own mtime is the one noted is taken as it
        was, without looking at its files (RunFiles.folder)."""
        rdir = layout.runs_dir(self.root)
        seen: dict[str, RunFiles] = {}
        present: set[str] = set()
        # the packs before the folders: a pack is removed only once its runs are folders, so
        # a run written and its pack removed between the two looks is still seen
        packed = pulled.packed_runs(self.root)
        if rdir.is_dir():
            with os.scandir(rdir) as it:
                for e in it:
                    if not e.is_dir() or e.name.startswith((".", "_")):
                        continue
                    present.add(e.name)
                    try:
                        folder = e.stat().st_mtime_ns
                    except OSError:
                        folder = None
                    was = self._runs.get(e.name)
                    if quick and was is not None and was.folder == folder and folder is not None:
                        seen[e.name] = was
                        continue
                    d = e.path + os.sep
                    m = file_mtime(d + RUN_FILE)
                    if m is None:
                        self.problems[e.name] = f"{RUN_FILE} is missing"
                        continue
                    mt = tuple(file_mtime(d + f) for f in _RUN_DATA_FILES)
                    if mt[0] is None:
                        self.problems[e.name] = f"{PREDICTIONS_FILE} is missing"
                        continue
                    seen[e.name] = RunFiles(
                        m, mt[2] is not None, mt[1] is not None, mt, None, folder
                    )
        for rid, pk in packed.items():
            if rid not in present:  # not written as a folder yet: read from its pack
                present.add(rid)
                seen[rid] = RunFiles(pulled.PACKED_MTIME, pk.grades, pk.labels, (), pk.ledger)
        for f in self._run_problems():
            if f not in present:
                del self.problems[f]
        for f in [f for f, s in self._broken.items() if seen.get(f) != s]:
            del self._broken[f]  # gone or changed: look at it again
        gone = [f for f in self._runs if f not in seen]
        changed = [
            f for f, s in seen.items() if self._runs.get(f) != s and self._broken.get(f) != s
        ]
        written = self._written_from_packs(changed, seen)
        changed = [f for f in changed if f not in written]
        if not gone and not changed:
            if written:
                self._write_snapshot()
            return
        self._dims_kept = False  # the runs change
        drop = gone + [f for f in changed if f in self._runs]
        if drop:
            self.memo.clear()  # a run id may come back with other files
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
        self._write_snapshot()

    def _written_from_packs(self, changed: list[str], seen: dict[str, RunFiles]) -> set[str]:
        """The runs loaded from a pack that are folders now, written from it with the same
        run.json text (evaluator.store.runs.materialize: their folders' files have the times
        the engine's ledger noted as it wrote them): kept as loaded, with their folders' state
        (a new run.json, moderation's, would not have those times: it is read again)."""
        was = [f for f in changed if (old := self._runs.get(f)) is not None and old.pack]
        if not was:
            return set()
        ledger = pulled.checked_runs(self.root)
        out = set()
        for f in was:
            entry, now = ledger.get(f), seen[f]
            if now.pack is None and entry is not None and entry[:2] == (now.mtime, now.files):
                self._runs[f] = now
                out.add(f)
        return out

    def _load_runs(self, rdir: Path, folders: list[str], seen: dict[str, RunFiles]) -> None:
        """Read, check and insert the runs of these folders, LOAD_CHUNK at a time (their
        run.json texts are staged whole: a bounded batch bounds the memory it takes)."""
        self._seen_state = seen
        checked = self._checked(folders, seen)
        folders = sorted(folders)  # a chunk's ledger rows sit together (see runs.write_runs)
        for i in range(0, len(folders), LOAD_CHUNK):
            self._load_chunk(rdir, folders[i : i + LOAD_CHUNK], seen, checked)

    def _load_chunk(
        self, rdir: Path, folders: list[str], seen: dict[str, RunFiles], ledger: dict[str, str]
    ) -> None:
        checked = {f: ledger[f] for f in folders if f in ledger}
        files = [str(rdir / f / RUN_FILE) for f in folders if f not in checked]
        meta: pd.DataFrame | None = None
        bad: list[str] = []
        if checked:
            ledgers = sorted(set(checked.values()))
            keys = [f"{f}:{seen[f].mtime}" for f in checked]
            try:
                meta, bad = Q.stage_checked_runs(self.con, files, ledgers, keys)
            except duckdb.Error:  # a ledger merged or a pack written as folders meanwhile:
                checked = {}  # every run is read from its folder (packed runs without one
                folders = [  # yet wait for the next refresh)
                    f for f in folders if seen[f].pack is None or (rdir / f / RUN_FILE).is_file()
                ]
                files = [str(rdir / f / RUN_FILE) for f in folders]
        if meta is None:
            meta, bad = Q.stage_run_files(self.con, files)
        for f in bad:
            self._set_broken(f, f"{RUN_FILE} is not valid JSON", seen[f])
        good = []
        for f, benchmark in self._check_runs(meta):
            why = None if f in checked else engine_problem(rdir / f, seen[f])
            if why:
                self._set_broken(f, why, seen[f])
            else:
                good.append((f, benchmark))
        Q.insert_staged_runs(self.con, [f for f, _ in good])
        Q.drop_staged_runs(self.con)
        for f, benchmark in good:
            self._runs[f] = seen[f]
            self._run_benchmark[f] = benchmark
            self.problems.pop(f, None)
            self._bump(benchmark)

    def _checked(self, folders: list[str], seen: dict[str, RunFiles]) -> dict[str, str]:
        """The folders the engine wrote and checked in bulk (a pull: evaluator.store.runs
        .write_runs) and that have not changed since, by the times of their files: folder ->
        the ledger file holding its run.json text. These need neither their run.json read nor
        the engine's check again."""
        out = {f: p for f in folders if (p := seen[f].pack) is not None}  # the pack's own
        if len(folders) < CHECKED_MIN:  # a few runs: reading them is as quick
            return out
        ledger = pulled.checked_runs(self.root)
        for f in folders:
            entry = ledger.get(f)
            if entry is not None and entry[0] == seen[f].mtime and entry[1] == seen[f].files:
                out[f] = entry[2]
        return out

    def _set_broken(self, folder: str, why: str, state: RunFiles | None) -> None:
        self.problems[folder] = why
        if state is not None:
            self._broken[folder] = state

    def _check_runs(self, meta: pd.DataFrame) -> list[tuple[str, str]]:
        good = []
        for row in meta.itertuples(index=False):
            folder = str(row.folder)
            state = self._seen_state.get(folder)
            if row.run_id != folder:
                self._set_broken(
                    folder, f"run_id {row.run_id!r} does not match the folder name", state
                )
            elif not row.benchmark or not row.model_name or not row.origin:
                self._set_broken(folder, f"{RUN_FILE} lacks benchmark, model.name or origin", state)
            else:
                good.append((folder, str(row.benchmark)))
        return good

    def _refresh_reported(self) -> None:
        files = tuple((str(f), layout.mtime_ns(f) or 0) for f in layout.reported_files(self.root))
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

    def ensure_labels(
        self, benchmark: str, run_ids: Sequence[str] | None = None, predictions: bool = True
    ) -> None:
        """Load the per-sample predictions (and grades) of the benchmark's runs not loaded yet
        (only `run_ids` when given: what a view needs, e.g. the best runs for the paired
        tests or the two compared runs), and their final labels: as stored by the scorer, or,
        for a run stored without them, made by the engine (scoring.final_labels).
        predictions=False: final labels only (the paired tests need no explanation); the
        predictions of a run are then read only when its labels must be made from them."""
        with self._lock:
            has_samples = self.ensure_samples(benchmark)
            if run_ids is None:
                folders = [f for f, b in self._run_benchmark.items() if b == benchmark]
            else:
                folders = [
                    f
                    for f in dict.fromkeys(run_ids)
                    if (st := self._state(f)) is not None and st[0] == benchmark
                ]
            self._unpack(folders)
            new = [
                f
                for f in folders
                if f not in self._predictions_loaded
                and (predictions or (f not in self._labelled and not self._stored_labels(f)))
            ]
            rdir = layout.runs_dir(self.root)
            if new:
                loaded = self._load_each(
                    new, self._load_run_rows, lambda fs: Q.delete_predictions(self.con, fs)
                )
                self._predictions_loaded.update(loaded)
                folders = [f for f in folders if self._state(f) is not None]
            todo = [f for f in folders if f not in self._labelled]
            if not todo or not has_samples:
                return
            Q.delete_labels(self.con, todo)
            stored = [f for f in todo if self._stored_labels(f)]
            self._load_each(
                stored,
                lambda fs: Q.load_labels(
                    self.con, benchmark, [str(rdir / f / LABELS_FILE) for f in fs]
                ),
                lambda fs: Q.delete_labels(self.con, fs),
            )
            todo = [f for f in todo if self._state(f) is not None]
            older = [f for f in todo if not self._stored_labels(f)]
            if older:
                self._make_labels(older, benchmark)
            self._labelled.update(todo)
        if run_ids is None:
            self.ensure_sample_stats(benchmark)

    def label_vectors(
        self,
        benchmark: str,
        unit: str,
        frame: pd.DataFrame,
        run_ids: Sequence[str],
        scores: bool = False,
    ) -> dict[str, np.ndarray]:
        """Each run's final labels at this level on the samples of `frame` (Q.scored_samples:
        sample_id and ix), int8 in the frame's order, -1 where the run has none (scores=True:
        the scores they were made from, NaN where none): what the board's paired tests
        compare. Read in place from the runs' labels.parquet (three
        columns, nothing loaded into the tables); a run stored without final labels, or whose
        file fails to read, goes through ensure_labels and the labels table (which takes a
        broken run off the board). A pulled run not yet written as a folder is read in place
        from its pack (the rows of its row groups alone), not written first: on a replica that
        has just booted, a view's paired test would otherwise write its best runs' folders,
        and the store then look at every run again."""
        with self._lock:
            ids = pa.array(frame["sample_id"].astype(str).tolist(), pa.string())
            rdir = layout.runs_dir(self.root)
            out: dict[str, np.ndarray] = {}
            rest: list[str] = []
            in_packs: dict[str, list[str]] = {}  # a pack's folder -> its runs asked for
            for f in dict.fromkeys(run_ids):
                state = self._state(f)
                if state is None or not state[1].labels or state[0] != benchmark:
                    rest.append(f)
                    continue
                pack = state[1].pack
                if pack is not None and not (rdir / f).is_dir():
                    in_packs.setdefault(str(Path(pack).parent), []).append(f)
                    continue
                try:
                    out[f] = label_vector(rdir / f / LABELS_FILE, unit, ids, scores)
                except (OSError, pa.ArrowException, KeyError, ValueError):
                    rest.append(f)
            for pack, folders in in_packs.items():
                try:
                    got = pulled.pack_rows(Path(pack), LABELS_FILE, folders, vector_columns(scores))
                except (OSError, pa.ArrowException, KeyError, ValueError):
                    got = {}  # the pack removed meanwhile (its runs are folders now), or odd
                for f in folders:
                    try:
                        out[f] = labels_on(got[f], unit, ids, scores)
                    except (KeyError, ValueError, pa.ArrowException):
                        rest.append(f)
            if rest:
                self.ensure_labels(benchmark, rest, predictions=False)
                matrix = Q.score_matrix if scores else Q.label_matrix
                rows = matrix(self.con, rest, unit, frame["ix"].to_numpy())
                out.update(zip(rest, rows, strict=True))
            return out

    # ----------------------------------------------------------------------------------------
    # the Samples page: what every run says about the samples, without loading every run

    def _visible(self, benchmark: str) -> list[str]:
        hidden = Q.hidden_runs(self.con, benchmark)
        return [f for f, b in self._run_benchmark.items() if b == benchmark and f not in hidden]

    def _split_by_storage(self, folders: list[str]) -> tuple[list[str], list[str]]:
        """(labels.parquet files of the runs that have one, runs whose labels live in the
        labels table: stored without them, so made by the engine when loaded)."""
        rdir = layout.runs_dir(self.root)
        files = [str(rdir / f / LABELS_FILE) for f in folders if self._runs[f].labels]
        table = [f for f in folders if not self._runs[f].labels]
        return files, table

    def ensure_sample_stats(self, benchmark: str) -> None:
        """Per sample, how many visible runs label it and how many get it wrong, and per run
        the units it has labels and scores for (Q.build_sample_stats): made from the runs'
        labels.parquet read in place, once per change of the benchmark. Runs stored without
        final labels, and runs with grades, are loaded (few). A labels file that fails to read
        takes its run off the board, as in ensure_labels."""
        with self._lock:
            if not self.ensure_samples(benchmark):
                return
            token = self.token(benchmark)
            if self._stats_token.get(benchmark) == token:
                return
            folders = self._visible(benchmark)
            self._unpack(folders)
            load = [f for f in folders if not self._runs[f].labels or self._runs[f].grades]
            if load:
                self.ensure_labels(benchmark, load)
            folders = self._visible(benchmark)
            files, table = self._split_by_storage(folders)
            try:
                Q.build_sample_stats(self.con, benchmark, files, table)
            except duckdb.Error:
                for f in [f for f in folders if self._runs[f].labels]:
                    try:
                        Q.check_label_files(
                            self.con, [str(layout.runs_dir(self.root) / f / LABELS_FILE)]
                        )
                    except duckdb.Error as e:
                        self._drop_broken_run(f, f"unreadable: {str(e).splitlines()[0][:200]}")
                folders = self._visible(benchmark)
                files, table = self._split_by_storage(folders)
                Q.build_sample_stats(self.con, benchmark, files, table)
            self._stats_token[benchmark] = self.token(benchmark)

    def _explanation_files(self, benchmark: str) -> list[str]:
        """The benchmark's visible runs' predictions.parquet files that hold explanations
        (from their footers, once per change of the benchmark)."""
        token = self.token(benchmark)
        have = self._explained.get(benchmark)
        if have is None or have[0] != token:
            rdir = layout.runs_dir(self.root)
            visible = self._visible(benchmark)
            self._unpack(visible)
            files = [str(rdir / f / PREDICTIONS_FILE) for f in visible]
            try:
                found = Q.explanation_files(self.con, files)
            except duckdb.Error:
                found = files  # a footer the metadata reader refuses: read them all
            have = (token, found)
            self._explained[benchmark] = have
        return have[1]

    def explanation_hits(self, benchmark: str, text: str) -> tuple[str, ...]:
        """Samples whose explanation, in any visible run, contains `text` (case-insensitive,
        literally), read in place from the runs' predictions files; cached per change."""
        needle = text.strip().lower()
        if not needle:
            return ()
        with self._lock:
            key = ("explained", self.token(benchmark), needle)
            if key not in self.memo:
                try:
                    hits = Q.explanation_matches(
                        self.con, self._explanation_files(benchmark), needle
                    )
                except duckdb.Error:
                    hits = []
                self.memo[key] = tuple(hits)
            return self.memo[key]  # type: ignore[return-value]

    def sample_predictions(self, benchmark: str, sample_id: str) -> pd.DataFrame:
        """Every visible run's final label, score and explanation for one sample (the columns
        of Q.predictions_for_sample), read in place from the runs' files."""
        with self._lock:
            self.ensure_sample_stats(benchmark)
            files, table = self._split_by_storage(self._visible(benchmark))
            try:
                return Q.sample_predictions_in_files(
                    self.con,
                    benchmark,
                    sample_id,
                    files,
                    table,
                    self._explanation_files(benchmark),
                )
            except duckdb.Error:  # a file changed under us: what the tables hold
                return Q.predictions_for_sample(self.con, benchmark, sample_id)

    def _unpack(self, folders: Sequence[str]) -> None:
        """Have the runs among `folders` that are still kept in a pack written as folders
        (evaluator.store.runs.materialize) before their per-sample files are read; the next
        refresh keeps them as loaded (_written_from_packs)."""
        rdir = layout.runs_dir(self.root)
        packed = [
            f
            for f in folders
            if (s := self._state(f)) is not None and s[1].pack and not (rdir / f).is_dir()
        ]
        if packed:  # on a full disk their files stay missing, and reading them says so
            with contextlib.suppress(OSError):
                runs.materialize(self.root, packed)

    def _stored_labels(self, folder: str) -> bool:
        """The run's final labels are stored in its folder (a run on the board)."""
        state = self._state(folder)
        return state is not None and state[1].labels

    def _load_run_rows(self, folders: list[str]) -> None:
        rdir = layout.runs_dir(self.root)
        Q.load_predictions(self.con, [str(rdir / f / PREDICTIONS_FILE) for f in folders])
        Q.load_grades(
            self.con,
            [str(rdir / f / GRADES_FILE) for f in folders if (s := self._state(f)) and s[1].grades],
        )

    def _load_each(self, folders: list[str], load: Any, clear: Any) -> list[str]:
        """load(folders) at once; if a file fails, clear(folders) and load folder by folder:
        the folders whose files fail leave the board (listed in problems). Returns the folders
        loaded."""
        if not folders:
            return []
        try:
            load(folders)
            return folders
        except duckdb.Error:
            clear(folders)
        ok = []
        for f in folders:
            try:
                load([f])
                ok.append(f)
            except duckdb.Error as e:
                self._drop_broken_run(f, f"unreadable: {str(e).splitlines()[0][:200]}")
        return ok

    def _drop_broken_run(self, folder: str, why: str) -> None:
        self._dims_kept = False
        state = self._runs.pop(folder, None)
        self._set_broken(folder, why, state)
        b = self._run_benchmark.pop(folder, None)
        self._predictions_loaded.discard(folder)
        self._labelled.discard(folder)
        Q.delete_runs(self.con, [folder])
        if b:
            self._bump(b)

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
                    threshold=db_number(row["threshold"]),
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
        """Grades of every run that has them (the explanations page spans benchmarks); the
        runs without grades are not loaded."""
        for b in sorted(set(self._run_benchmark.values())):
            graded = [
                f for f, bb in self._run_benchmark.items() if bb == b and self._runs[f].grades
            ]
            if graded:
                self.ensure_labels(b, graded)

    # ----------------------------------------------------------------------------------------
    def result_dimensions(self) -> pd.DataFrame:
        """Q.all_result_dimensions of the tables as they are: the runs' part as kept with the
        snapshot (no pass over every result) while the runs have not changed since."""
        with self._lock:
            return Q.all_result_dimensions(self.cursor(), kept=self._dims_kept)

    def benchmarks(self) -> list[str]:
        """Ingested benchmarks (with samples on disk), by name."""
        return sorted(self.meta)

    def version(self, benchmark: str) -> str | None:
        m = self.meta.get(benchmark)
        return str(m["version"]) if m and m.get("version") else None
