"""Many label runs scored in one array pass give each run exactly the point values, n and counts
that the scorer gives it alone; what that pass does not take, it leaves to the scorer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from evaluator.benchmarks import registry
from evaluator.core.batch_scoring import Key, score_labels
from evaluator.core.errors import ScoringError
from evaluator.core.scoring import Prepared, ScoreOptions
from evaluator.core.types import Counts
from evaluator.store import ingested
from tests.support import llm_data, testdata


def _alone(
    prepared: Prepared, table: pa.Table, options: ScoreOptions
) -> tuple[Counts, dict[Key, tuple[float, int]]]:
    scored = prepared.score(table.to_pandas(), options)
    values = {
        (r.split, r.unit, r.slice_kind, r.slice_value, r.metric, r.grader or ""): (r.value, r.n)
        for r in scored.results
    }
    return scored.counts, values


def _tables(samples: pd.DataFrame, rng: np.random.Generator) -> list[pa.Table]:
    """Prediction files of every shape a label run takes: all samples or some, labels of every
    mix (all flagged, none flagged), unusable labels, several dtypes, an all-null score column."""
    ids = samples["sample_id"].astype(str).to_numpy()
    n = len(ids)
    out = []
    for k in range(24):
        keep = np.ones(n, dtype=bool) if k % 3 == 0 else rng.random(n) < rng.uniform(0.3, 0.95)
        lab = rng.integers(0, 2, n).astype(float)
        if k % 5 == 1:
            lab[:] = 0.0  # every sample flagged
        if k % 5 == 2:
            lab[:] = 1.0  # none flagged: precision and recall have no value
        if k % 4 == 3:
            lab[rng.random(n) < 0.2] = np.nan  # replies that gave no usable label
        sel = np.flatnonzero(keep)
        rng.shuffle(sel)  # rows in any order
        cols: dict[str, pa.Array] = {"sample_id": pa.array(ids[sel])}
        x = lab[sel]
        if k % 6 == 4:
            cols["label"] = pa.array(x, pa.float64())
        elif k % 6 == 5 and not np.isnan(x).any():
            cols["label"] = pa.array(x.astype(bool))
        else:
            cols["label"] = pa.array([None if np.isnan(v) else int(v) for v in x], pa.int8())
        if k % 2:
            cols["score"] = pa.nulls(len(sel), pa.float64())
        out.append(pa.table(cols))
    return out


def _scored_tables(samples: pd.DataFrame, rng: np.random.Generator) -> list[pa.Table]:
    """Files with scores: with labels too (labels are final, AUROC from the scores), scores
    alone, some scores missing, scores tied, integer scores, scores beyond [0, 1]."""
    ids = samples["sample_id"].astype(str).to_numpy()
    n = len(ids)
    out = []
    for k in range(16):
        keep = np.ones(n, dtype=bool) if k % 2 == 0 else rng.random(n) < 0.8
        sel = np.flatnonzero(keep)
        sc = rng.random(len(sel))
        if k % 4 == 1:
            sc = np.round(sc, 1)  # ties
        if k % 5 == 2:
            sc[rng.random(len(sel)) < 0.15] = np.nan
        cols: dict[str, pa.Array] = {"sample_id": pa.array(ids[sel])}
        if k % 3 == 0:
            cols["label"] = pa.array(rng.integers(0, 2, len(sel)), pa.int8())
        if k == 7:
            cols["score"] = pa.array(rng.integers(0, 3, len(sel)))  # integers beyond [0, 1]
        else:
            cols["score"] = pa.array(sc * (4.0 if k == 11 else 1.0), pa.float64())
        out.append(pa.table(cols))
    return out


def _check_same(prepared: Prepared, tables: list[pa.Table], options: list[ScoreOptions]) -> int:
    batch = score_labels(prepared, tables, options)
    taken = 0
    for table, opts, got in zip(tables, options, batch, strict=True):
        if got is None:
            continue
        taken += 1
        counts, values = _alone(prepared, table, opts)
        assert got.counts == counts
        assert got.values.keys() == values.keys()
        for k, (v, n) in got.values.items():
            want_v, want_n = values[k]
            assert n == want_n, k
            assert v == pytest.approx(want_v, abs=1e-12), k
    return taken


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Prepared:
    root = testdata.build_demo_root(tmp_path_factory.mktemp("demo") / "leaderboard_data")
    return Prepared(registry.get("demo"), ingested.load_samples("demo", root))


def test_label_runs_scored_together_equal_each_scored_alone(demo: Prepared) -> None:
    """On a benchmark whose overall value is the mean over its domains, with its slices."""
    rng = np.random.default_rng(7)
    tables = _tables(demo.samples, rng)
    point = ScoreOptions(point_only=True)
    options = [point] * len(tables)
    options[1] = ScoreOptions(splits=("dev", "test"), point_only=True)
    options[2] = ScoreOptions(policy="labels", splits=("dev",), point_only=True)
    taken = _check_same(demo, tables, options)
    assert taken == len(tables)


def test_runs_the_array_pass_does_not_take_are_left_to_the_scorer(demo: Prepared) -> None:
    ids = demo.samples["sample_id"].astype(str).tolist()
    lab = [i % 2 for i in range(len(ids))]
    good = pa.table({"sample_id": ids, "label": pa.array(lab, pa.int8())})
    infinite = good.append_column("score", pa.array([float("inf")] + [0.5] * (len(ids) - 1)))
    text_score = good.append_column("score", pa.array(["0.5"] * len(ids)))
    repeated = pa.table({"sample_id": ids + ids[:1], "label": pa.array(lab + lab[:1], pa.int8())})
    unknown = pa.table({"sample_id": ["nope", *ids[1:]], "label": pa.array(lab, pa.int8())})
    two = pa.table({"sample_id": ids, "label": pa.array([2] + lab[1:], pa.int8())})
    text = pa.table({"sample_id": ids, "label": [str(v) for v in lab]})
    no_label = pa.table({"sample_id": ids, "label": pa.nulls(len(ids), pa.int8())})
    point = ScoreOptions(point_only=True)
    cases = [
        (good, point),
        (infinite, point),
        (text_score, point),
        (repeated, point),
        (unknown, point),
        (two, point),
        (text, point),
        (no_label, point),
        (good, ScoreOptions(policy="fixed", threshold=0.5, point_only=True)),  # no score
        (good, ScoreOptions(policy="dev", point_only=True)),
        (good, ScoreOptions()),  # with CIs: the bootstrap is the scorer's
        (good, ScoreOptions(labels_given=True, point_only=True)),
    ]
    got = score_labels(demo, [t for t, _ in cases], [o for _, o in cases])
    assert got[0] is not None
    assert got[1:] == [None] * (len(cases) - 1)


def test_pooled_benchmarks_and_units(tmp_path: Path) -> None:
    """A pooled benchmark with error-type slices (SummExecEdit), and TofuEval, whose summary
    labels are taken while sentence labels, which roll up, are left to the scorer."""
    root = tmp_path / "leaderboard_data"
    llm_data.ingest_summexecedit(tmp_path, root)
    llm_data.write_tofueval(root)
    rng = np.random.default_rng(3)
    for name in ("summexecedit", "tofueval"):
        prepared = Prepared(registry.get(name), ingested.load_samples(name, root))
        samples = prepared.samples
        if name == "tofueval":
            sentences = samples[samples["unit"] == "sentence"]
            ids = sentences["sample_id"].tolist()
            table = pa.table({"sample_id": ids, "label": pa.array([0] * len(ids), pa.int8())})
            assert score_labels(prepared, [table], [ScoreOptions(point_only=True)]) == [None]
            samples = samples[samples["unit"] == "summary"]
        tables = _tables(samples, rng)
        options = [ScoreOptions(splits=("dev", "test"), point_only=True)] * len(tables)
        if name == "summexecedit":
            options = [ScoreOptions(point_only=True)] * len(tables)
        assert _check_same(prepared, tables, options) > len(tables) // 2


def test_scored_runs_scored_together_equal_each_scored_alone(demo: Prepared) -> None:
    """Labels as given with AUROC from the scores; a fixed threshold; the benchmark's protocol
    threshold on probabilities; and what those refuse (scores that are not probabilities under
    the protocol, a threshold tuned on dev) left to the scorer."""
    import dataclasses

    rng = np.random.default_rng(11)
    tables = _scored_tables(demo.samples, rng)
    fixed = ScoreOptions(policy="fixed", threshold=0.5, point_only=True)  # ties at it
    auto = ScoreOptions(point_only=True)
    assert _check_same(demo, tables, [fixed] * len(tables)) == len(tables)
    with_labels = [t for t in tables if "label" in t.column_names]
    assert _check_same(demo, with_labels, [auto] * len(with_labels)) == len(with_labels)
    scores_only = [t for t in tables if "label" not in t.column_names]
    # "auto" on scores alone tunes a threshold on dev: the scorer's own path
    assert score_labels(demo, scores_only, [auto] * len(scores_only)) == [None] * len(scores_only)
    spec = dataclasses.replace(demo._spec(), fixed_threshold=0.5)
    protocol = Prepared(spec, demo.samples)
    taken = _check_same(protocol, scores_only, [auto] * len(scores_only))
    beyond = [t for t in scores_only if pc.max(t["score"]).as_py() > 1]
    assert beyond and taken == len(scores_only) - len(beyond)
    with pytest.raises(ScoringError, match="not probabilities"):
        protocol.score(beyond[0].to_pandas(), auto)


def _bad_tables(samples: pd.DataFrame) -> list[pa.Table]:
    """Files the array pass leaves to the scorer, each wrong in one way: a repeated id, an
    unknown id, a label 2, an infinite score, a null id, a text label, two label columns."""
    ids = samples["sample_id"].astype(str).tolist()
    lab = pa.array([i % 2 for i in range(len(ids))], pa.int8())
    good = pa.table({"sample_id": ids, "label": lab})
    return [
        pa.table({"sample_id": ids[:-1] + ids[:1], "label": lab}),
        pa.table({"sample_id": ["nope", *ids[1:]], "label": lab}),
        pa.table({"sample_id": ids, "label": pa.array([2] + lab.to_pylist()[1:], pa.int8())}),
        good.append_column("score", pa.array([float("-inf")] + [0.5] * (len(ids) - 1))),
        pa.table({"sample_id": [None, *ids[1:]], "label": lab}),
        pa.table({"sample_id": ids, "label": [str(v) for v in lab.to_pylist()]}),
        pa.table([pa.array(ids), lab, lab], names=["sample_id", "label", "label"]),
    ]


def test_a_call_mixing_taken_and_refused_runs_gives_each_what_it_gets_alone(
    demo: Prepared, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Good runs of different lengths and column types among runs the array pass refuses (one
    repeats a sample id among good runs), with different settings per run: each good run gets
    what the scorer gives it alone and each refused one None, whether the call's tables are
    joined in one block or in many, as when each is the only table of its call."""
    from evaluator.core import batch_scoring

    rng = np.random.default_rng(5)
    good = _tables(demo.samples, rng) + _scored_tables(demo.samples, rng)[:8]
    bad = _bad_tables(demo.samples)
    ids = demo.samples["sample_id"].astype(str).to_numpy()
    big = pa.table(
        {
            "sample_id": pa.array(ids, pa.large_string()),
            "label": pa.array([None if i % 7 == 0 else i % 3 == 0 for i in range(len(ids))]),
        }
    )
    chunked = pa.Table.from_batches(
        big.cast(pa.schema([("sample_id", pa.string()), ("label", pa.bool_())])).to_batches(50)
    )
    good += [big, chunked, big.slice(10, 40), big.slice(100, 1)]
    tables: list[pa.Table] = []
    for k, t in enumerate(good):
        tables.append(t)
        if k % 3 == 0:
            tables.append(bad[k // 3 % len(bad)])
    kinds = [
        ScoreOptions(point_only=True),
        ScoreOptions(splits=("dev", "test"), point_only=True),
        ScoreOptions(policy="labels", splits=("dev",), point_only=True),
        ScoreOptions(policy="fixed", threshold=0.3, point_only=True),
        ScoreOptions(policy="fixed", threshold=0.5, point_only=True),
    ]
    options = [kinds[k % len(kinds)] for k in range(len(tables))]
    together = score_labels(demo, tables, options)
    assert _check_same(demo, tables, options) > len(good) // 2
    for t, o, got in zip(tables, options, together, strict=True):
        assert score_labels(demo, [t], [o]) == [got]
    for t in bad:
        assert score_labels(demo, [t], [options[0]]) == [None]
    assert sum(got is None for got in together) >= len(bad)
    monkeypatch.setattr(batch_scoring, "_CELLS", 3 * len(ids))  # blocks of three tables
    assert score_labels(demo, tables, options) == together


def test_bool_labels_with_gaps_and_null_scores_of_other_types(demo: Prepared) -> None:
    """Labels as booleans with nulls, an all-null score column of another type, a run of one
    sample, ids as large strings, a file in many chunks: read as the scorer reads them."""
    ids = demo.samples["sample_id"].astype(str).tolist()
    lab = pa.array([None if i % 5 == 0 else bool(i % 2) for i in range(len(ids))])
    one = ids[int(np.flatnonzero(demo.split == "test")[0])]
    tables = [
        pa.table({"sample_id": ids, "label": lab}),
        pa.table({"sample_id": ids, "label": lab, "score": pa.nulls(len(ids), pa.string())}),
        pa.table({"sample_id": ids, "label": lab, "score": pa.nulls(len(ids))}),
        pa.table({"sample_id": [one], "label": pa.array([0], pa.int64())}),
        pa.table({"sample_id": pa.array(ids, pa.large_string()), "label": lab}),
        pa.Table.from_batches(pa.table({"sample_id": ids, "label": lab}).to_batches(40)),
    ]
    assert tables[-1]["label"].num_chunks > 1
    options = [ScoreOptions(point_only=True)] * len(tables)
    assert _check_same(demo, tables, options) == len(tables)


def test_samples_without_a_unit_and_a_benchmark_without_samples(demo: Prepared) -> None:
    """A run over a sample whose unit is missing is left to the scorer; runs over the others
    are taken as usual; a benchmark with no samples takes no run."""
    samples = demo.samples.copy()
    gone = np.flatnonzero(demo.split == "test")[:5]
    samples.loc[gone, "unit"] = None
    prepared = Prepared(demo.spec, samples)
    ids = samples["sample_id"].astype(str).to_numpy()
    lab = pa.array(np.arange(len(ids)) % 2, pa.int8())
    every = pa.table({"sample_id": ids, "label": lab})
    keep = np.setdiff1d(np.arange(len(ids)), gone)
    others = pa.table({"sample_id": ids[keep], "label": lab.take(pa.array(keep))})
    only = pa.table({"sample_id": ids[gone], "label": lab.take(pa.array(gone))})
    point = ScoreOptions(point_only=True)
    got = score_labels(prepared, [every, others, only], [point] * 3)
    assert got[0] is None and got[2] is None and got[1] is not None
    assert _check_same(prepared, [others], [point]) == 1
    empty = Prepared(demo.spec, demo.samples.iloc[:0])
    assert score_labels(empty, [every], [point]) == [None]
