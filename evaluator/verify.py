"""Does a stored run's record follow from its predictions? A run's numbers are what the scorer
makes of its predictions (and grades) against the benchmark's samples with the settings the run
records: `verify_run` scores them again and compares. A run written elsewhere (pulled from the
results repo, copied in by hand, imported) may claim numbers its predictions do not give, or
carry another benchmark's predictions: that is a problem the doctor names and a replica lists.

`full=False` (the default) recomputes the point values only (no resample is drawn for the
detection and correlation metrics: a few milliseconds per run); `full=True` recomputes the
confidence intervals too, with the run's own seeded bootstrap, so every number must match
exactly. A benchmark is prepared for scoring once
(`Reference`), and the runs checked against it share that work (a replica checks the runs of a
pulled shard against one), through the scorer every run is scored with.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator.benchmarks import registry
from evaluator.core.errors import FactBoardError
from evaluator.core.scoring import Prepared, ScoreOptions
from evaluator.core.types import Counts, RunRecord, SliceResult
from evaluator.store import ingested, runs

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from evaluator.benchmarks.registry import BenchmarkSpec

TOLERANCE = 1e-9
SHOW_FIRST = 3


@dataclass(frozen=True)
class Reference:
    """A benchmark as runs are checked against it: its spec, its benchmark.json and its samples
    prepared for scoring (once per benchmark and version)."""

    spec: BenchmarkSpec
    meta: Mapping[str, object]
    prepared: Prepared

    @classmethod
    def of(
        cls, spec: BenchmarkSpec, meta: Mapping[str, object], samples: pd.DataFrame
    ) -> Reference:
        return cls(spec, meta, Prepared(spec, samples))

    @classmethod
    def load(cls, name: str, root: Path | None = None) -> Reference:
        """The benchmark as ingested under `root` (FactBoardError when it is not there)."""
        spec = registry.get(name)
        meta = ingested.load_meta(name, root)
        return cls.of(spec, meta, ingested.load_samples(name, root))


def options_of(rec: RunRecord, full: bool = True) -> ScoreOptions:
    """The scoring settings a stored run records (threshold policy, splits, bootstrap)."""
    return ScoreOptions.recorded(
        rec.threshold,
        rec.splits,
        rec.bootstrap or {},
        bool(rec.config.extra.get("labels_given")),
        None if full else 1,
        point_only=not full,
    )


Key = tuple[str, str, str, str, str, str]  # split, unit, slice kind, slice value, metric, grader


def _key(r: SliceResult) -> Key:
    return (r.split, r.unit, r.slice_kind, r.slice_value, r.metric, r.grader or "")


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE)


def _name(k: Key) -> str:
    split, unit, kind, value, metric, grader = k
    where = "overall" if kind == "overall" else f"{kind}={value}"
    return f"{metric}{f' ({grader})' if grader else ''} {where} [{split}/{unit}]"


def verify_run(run_dir: Path, root: Path | None = None, full: bool = False) -> list[str]:
    """What in the run's record does not follow from its predictions (empty: it all does).
    A run of a benchmark that is not ingested here, or of another version of it, cannot be
    checked and says so."""
    rec = runs.read_record(run_dir)
    try:
        spec = registry.get(rec.benchmark)
        meta = ingested.load_meta(rec.benchmark, root)
    except FactBoardError as e:
        return [f"cannot be checked: {e}"]
    if meta.get("version") != rec.benchmark_version:
        return [_other_version(rec, meta)]
    reference = Reference.of(spec, meta, ingested.load_samples(rec.benchmark, root))
    preds = runs.read_predictions(run_dir)
    grades = runs.read_grades(run_dir)
    return verify_record(rec, preds, grades, reference, full)


def _other_version(rec: RunRecord, meta: Mapping[str, object]) -> str:
    return (
        f"cannot be checked: scored against {rec.benchmark} version "
        f"{rec.benchmark_version}; this store has version {meta.get('version')}"
    )


def verify_record(
    rec: RunRecord,
    preds: pd.DataFrame,
    grades: pd.DataFrame | None,
    reference: Reference,
    full: bool = False,
) -> list[str]:
    """What in `rec` does not follow from `preds` (and `grades`) scored on the `reference`
    benchmark: the check of a run before it is written, as a pulled run is, or of a stored one
    (`verify_run`)."""
    if reference.meta.get("version") != rec.benchmark_version:
        return [_other_version(rec, reference.meta)]
    try:
        scored = reference.prepared.score(preds, options_of(rec, full), grades)
    except FactBoardError as e:
        return [f"its predictions do not score on {rec.benchmark}: {e}"]
    got = {
        _key(r): (r.value, r.n, r.ci_low, r.ci_high) if full else (r.value, r.n)
        for r in scored.results
    }
    return _compare(rec, scored.counts, got, full)


def verify_records(
    items: Sequence[tuple[RunRecord, pa.Table, pa.Table | None]], reference: Reference
) -> list[list[str]]:
    """`verify_record` (point values) of many runs of one benchmark, their predictions and
    grades as Arrow tables (a pulled shard's rows): the same answers, with the runs that
    evaluator.core.batch_scoring takes scored together in one array pass and the rest one by
    one."""
    from evaluator.core.batch_scoring import score_labels

    out: list[list[str] | None] = [None] * len(items)
    batch: list[int] = []
    options: list[ScoreOptions] = []
    for i, (rec, _, grades) in enumerate(items):
        if reference.meta.get("version") != rec.benchmark_version:
            out[i] = [_other_version(rec, reference.meta)]
        elif grades is None:
            with contextlib.suppress(FactBoardError):  # malformed: the scorer's path says so
                options.append(options_of(rec, full=False))
                batch.append(i)
    scored = score_labels(reference.prepared, [items[i][1] for i in batch], options)
    for i, s in zip(batch, scored, strict=True):
        if s is not None:
            out[i] = _compare(items[i][0], s.counts, s.values, False)
    for i, found in enumerate(out):
        if found is None:
            rec, preds, grades = items[i]
            frame = None if grades is None else grades.to_pandas()
            out[i] = verify_record(rec, preds.to_pandas(), frame, reference)
    return [found or [] for found in out]


def _compare(
    rec: RunRecord,
    counts: Counts,
    got: Mapping[Key, tuple[float | None, ...]],
    full: bool,
) -> list[str]:
    """What in `rec` differs from the counts and numbers its predictions score (`got`: key ->
    value and n, then with `full` the CI low and high, which are compared only then)."""
    problems = []
    if counts != rec.counts:
        problems.append(
            f"its counts {rec.counts.model_dump()} differ from its predictions' "
            f"{counts.model_dump()}"
        )
    claimed = {
        (r.split, r.unit, r.slice_kind, r.slice_value, r.metric, r.grader or ""): r
        for r in rec.results
    }
    if not full and [got.get(k) for k in claimed] == [(r.value, r.n) for r in claimed.values()]:
        return problems  # every number as scored, exactly (the usual case, checked at once)
    missing, differ = [], []
    for k, r in claimed.items():
        g = got.get(k)
        if g is None:
            missing.append(k)
        elif not (
            _same(r.value, g[0])
            and r.n == g[1]
            and (not full or (_same(r.ci_low, g[2]) and _same(r.ci_high, g[3])))
        ):
            differ.append(k)
    if missing:
        problems.append(
            f"{len(missing)} of its numbers are not made from its predictions, e.g. "
            + ", ".join(_name(k) for k in missing[:SHOW_FIRST])
        )
    if differ:
        shown = [
            f"{_name(k)}: recorded {claimed[k].value!r}, scored {got[k][0]!r}"
            for k in differ[:SHOW_FIRST]
        ]
        problems.append(
            f"{len(differ)} of its {len(claimed)} numbers differ from what its predictions "
            f"score, e.g. {'; '.join(shown)}"
        )
    return problems
