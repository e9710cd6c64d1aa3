"""A run's numbers must follow from its predictions and the benchmark's samples: a run written
elsewhere (pulled, copied in, imported) that claims what its predictions do not give is named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evaluator.cli.main import main
from evaluator.store import doctor, runs
from evaluator.verify import verify_run
from tests.support import testdata


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("demo") / "leaderboard_data")
    testdata.add_run(r, "demo", "Scored honestly", accuracy=0.7, seed=4, scores=True)
    return r


@pytest.fixture
def root(demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return testdata.own_copy(demo_root, tmp_path, monkeypatch)


def _edit(run_dir: Path, fn: Any) -> None:
    rec = json.loads((run_dir / "run.json").read_text())
    fn(rec)
    (run_dir / "run.json").write_text(json.dumps(rec))


def test_every_stored_run_follows_from_its_predictions(root: Path) -> None:
    for r in runs.list_runs(root).runs:
        d = runs.find_run(r.run_id, root)
        assert verify_run(d, root) == [], r.run_id
        assert verify_run(d, root, full=True) == [], r.run_id
    assert doctor.verify_problems(root) == []


def test_a_run_claiming_numbers_its_predictions_do_not_give_is_named(root: Path) -> None:
    d = runs.find_run(runs.list_runs(root).runs[0].run_id, root)

    def inflate(rec: dict[str, Any]) -> None:
        for r in rec["results"]:
            if r["metric"] == "balanced_accuracy":
                r.update(value=0.99, ci_low=0.98, ci_high=0.995)

    _edit(d, inflate)
    [problem] = verify_run(d, root)
    assert "differ from what its predictions score" in problem and "recorded 0.99" in problem
    assert [p.path for p in doctor.verify_problems(root)] == [str(d)]


def test_a_run_carrying_another_benchmark_s_predictions_is_named(
    root: Path, shared_benchmarks: Path
) -> None:
    """A run whose predictions belong to another benchmark, claiming 0.99 [0.98, 0.995], led
    the front page "significantly ahead of every other run"; doctor reported 0 problems."""
    from evaluator.ingest import pipeline

    pipeline.ingest("summedits", shared_benchmarks / "summedits", root=root)
    theirs = testdata.add_run(root, "summedits", "Other benchmark", accuracy=0.6, seed=1)
    d = runs.find_run(runs.list_runs(root, benchmark="demo").runs[0].run_id, root)
    shutil.copy(theirs / "predictions.parquet", d / "predictions.parquet")
    found = verify_run(d, root)
    assert found and "do not score on demo" in found[0]
    assert any(p.path == str(d) for p in doctor.find_problems(root, verify=True))


def test_cli_doctor_verifies_unless_quick(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    monkeypatch.setenv("FACTBOARD_SUBMISSIONS", str(root.parent / "submissions"))
    assert main(["doctor"]) == 0
    d = runs.find_run(runs.list_runs(root).runs[0].run_id, root)
    _edit(d, lambda rec: rec["results"][0].update(value=rec["results"][0]["value"] / 2))
    assert main(["doctor", "--quick"]) == 0
    capsys.readouterr()
    assert main(["doctor"]) == 1
    assert "differ from what its predictions score" in capsys.readouterr().out


def test_a_shard_of_runs_checked_together_gives_what_each_gives_alone(root: Path) -> None:
    """A replica checks the runs of a pulled shard against one prepared benchmark: every number
    is the one `score` gives the run alone, bit for bit, and a run that must fail fails."""
    import pandas as pd
    import pyarrow as pa

    from evaluator.benchmarks import registry
    from evaluator.core.scoring import score
    from evaluator.hub.checks import run_problems
    from evaluator.store import ingested
    from evaluator.verify import Reference, options_of, verify_record, verify_records

    items = []
    for r in runs.list_runs(root).runs:
        d = runs.find_run(r.run_id, root)
        items.append((runs.read_record(d), runs.read_predictions(d), runs.read_grades(d)))
    assert len(items) >= 4
    rec, preds, grades = items[0]
    inflated = rec.model_copy(
        update={
            "results": [
                x.model_copy(update={"value": 0.99}) if x.metric == "balanced_accuracy" else x
                for x in rec.results
            ]
        }
    )
    other_version = rec.model_copy(update={"benchmark_version": "0" * 16})
    shard = [*items, (inflated, preds, grades), (other_version, preds, grades)]

    spec, samples = registry.get("demo"), ingested.load_samples("demo", root)
    reference = Reference.load("demo", root)
    for full in (False, True):
        for r, p, g in shard:
            together = reference.prepared.score(p, options_of(r, full), g)
            alone = score(spec, samples, p, options_of(r, full), g)
            assert [x.model_dump() for x in together.results] == [
                x.model_dump() for x in alone.results
            ]
            assert (together.counts, together.threshold) == (alone.counts, alone.threshold)
            pd.testing.assert_frame_equal(together.final_labels, alone.final_labels)

    def arrow(f: pd.DataFrame | None) -> pa.Table | None:
        return None if f is None else pa.Table.from_pandas(f, preserve_index=False)

    pulled = [(r, arrow(p), arrow(g)) for r, p, g in shard]
    found = run_problems(pulled, root)
    assert found[: len(items)] == [None] * len(items)
    assert "recorded 0.99" in str(found[-2]) and "do not follow" in str(found[-2])
    assert "cannot be checked" in str(found[-1]) and "tried again" in str(found[-1])
    assert [run_problems([one], root)[0] for one in pulled] == found
    # the many-run check answers as the one-run check does, for label runs and scored ones
    assert verify_records(pulled, reference) == [
        verify_record(r, p, g, reference) for r, p, g in shard
    ]


def test_a_check_of_point_values_draws_no_resample_and_gives_each_value(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check of a run's numbers (full=False) scores every value as the full scoring does,
    with the same n, and draws no bootstrap resample for them (its CIs are the values)."""
    from evaluator.core import bootstrap
    from evaluator.verify import Reference, options_of

    drawn: list[int] = []
    real = bootstrap.Resampler.chunks

    def counting(self: bootstrap.Resampler):  # type: ignore[no-untyped-def]
        for w in real(self):
            drawn.append(len(w))
            yield w

    reference = Reference.load("demo", root)
    checked = 0
    for r in runs.list_runs(root).runs:
        d = runs.find_run(r.run_id, root)
        rec, preds, grades = runs.read_record(d), runs.read_predictions(d), runs.read_grades(d)
        full = reference.prepared.score(preds, options_of(rec, True), grades)
        drawn.clear()
        with monkeypatch.context() as m:
            m.setattr(bootstrap.Resampler, "chunks", counting)
            quick = reference.prepared.score(preds, options_of(rec, False), grades)
        assert drawn == []
        assert [(x.metric, x.slice_kind, x.slice_value, x.value, x.n) for x in quick.results] == [
            (x.metric, x.slice_kind, x.slice_value, x.value, x.n) for x in full.results
        ]
        assert all(x.ci_low == x.value == x.ci_high for x in quick.results)
        assert verify_run(d, root, full=True) == []  # and the full scoring is the run's own
        checked += 1
    assert checked >= 4


def test_a_shard_of_odd_runs_checked_together_says_what_each_check_alone_says(root: Path) -> None:
    """Runs whose records claim another n, a number nothing makes, other counts; predictions
    with a repeated sample id, or of only some samples, among runs that follow: the check of
    the shard names for each run what the check of that run alone names, in the same words."""
    import pyarrow as pa

    from evaluator.core.types import Counts
    from evaluator.verify import Reference, verify_record, verify_records

    items = []
    for r in runs.list_runs(root).runs:
        d = runs.find_run(r.run_id, root)
        items.append((runs.read_record(d), runs.read_predictions(d), runs.read_grades(d)))
    rec, preds, grades = items[0]
    first = rec.results[0]
    other_n = rec.model_copy(
        update={"results": [first.model_copy(update={"n": first.n + 1}), *rec.results[1:]]}
    )
    extra = first.model_copy(update={"slice_kind": "domain", "slice_value": "nowhere"})
    made_up = rec.model_copy(update={"results": [*rec.results, extra]})
    counts = rec.counts.model_dump()
    other_counts = rec.model_copy(update={"counts": Counts(**{**counts, "n": counts["n"] + 1})})
    repeated = preds.iloc[list(range(len(preds))) + [0]].reset_index(drop=True)
    shard = [
        *items,
        (other_n, preds, grades),
        (made_up, preds, grades),
        (other_counts, preds, grades),
        (rec, repeated, grades),
        (rec, preds.iloc[: len(preds) // 2], grades),
        (rec, preds.iloc[len(preds) // 3 :], grades),
        *items,
    ]

    def arrow(f: Any) -> pa.Table | None:
        return None if f is None else pa.Table.from_pandas(f, preserve_index=False)

    reference = Reference.load("demo", root)
    together = verify_records([(r, arrow(p), arrow(g)) for r, p, g in shard], reference)
    assert together == [verify_record(r, p, g, reference) for r, p, g in shard]
    odd = together[len(items) : -len(items)]
    assert all(odd) and not any(together[: len(items)]) and not any(together[-len(items) :])
    assert "not made from its predictions" in odd[1][0] and "its counts" in odd[2][0]
