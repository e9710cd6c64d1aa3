"""explorer.store and explorer.queries on real files: the demo, extra runs, real TofuEval."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.core import metrics as M
from evaluator.core import scoring
from evaluator.core.scoring import slice_masks
from evaluator.core.types import LABEL_COLUMNS, RunRecord
from evaluator.ingest import pipeline
from evaluator.store import export, ingested, runs
from explorer import queries as Q
from explorer.store import Store
from tests.support import testdata


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testdata.build_demo_root(tmp_path_factory.mktemp("demo") / "leaderboard_data")


@pytest.fixture
def root(demo_root: Path, tmp_path: Path) -> Path:
    """A private copy of the demo root (tests here add, hide and break runs)."""
    dst = tmp_path / "leaderboard_data"
    shutil.copytree(demo_root, dst)
    return dst


def _bacc_from_labels(
    con: Q.Con, run_id: str, benchmark: str, unit: str, mean_over_domains: bool
) -> float:
    df = con.execute(
        "SELECT l.gold, l.pred, s.domain FROM labels l JOIN samples s ON s.sample_id = "
        "l.sample_id AND s.benchmark = ? WHERE l.run_id = ? AND l.unit = ? "
        "AND l.pred IS NOT NULL",
        [benchmark, run_id, unit],
    ).df()
    if not mean_over_domains:
        return M.balanced_accuracy(df["gold"], df["pred"])
    return float(
        np.mean([M.balanced_accuracy(g["gold"], g["pred"]) for _, g in df.groupby("domain")])
    )


def test_refresh_loads_runs_results_and_reported(demo_root: Path) -> None:
    s = Store(demo_root)
    s.refresh()
    con = s.cursor()
    assert s.benchmarks() == ["demo"]
    r = Q.runs_frame(con, "demo")
    assert len(r) == 4 and set(r["origin"]) == {"evaluated"}
    assert s.problems == {}
    n_results = sum(len(runs.read_record(demo_root / "runs" / i).results) for i in r["run_id"])
    assert Q.table_sizes(con)["results"] == n_results
    assert Q.table_sizes(con)["reported"] > 1000
    assert "summedits" in Q.reported_benchmarks(con)


def test_final_labels_reproduce_every_stored_number(demo_root: Path) -> None:
    """The app's labels (the ones the scorer stored) give the numbers the scorer stored."""
    s = Store(demo_root)
    s.refresh()
    s.ensure_labels("demo")
    con = s.cursor()
    for run_id in Q.runs_frame(con, "demo")["run_id"]:
        rec = runs.read_record(demo_root / "runs" / run_id)
        stored = rec.result("balanced_accuracy").value
        assert _bacc_from_labels(con, run_id, "demo", "summary", True) == pytest.approx(
            stored, abs=1e-12
        )


def test_a_new_run_appears_and_a_deleted_one_goes(root: Path) -> None:
    s = Store(root)
    s.refresh()
    token = s.token("demo")
    path = testdata.add_run(root, "demo", "Newcomer", accuracy=0.9)
    s.refresh()
    assert s.token("demo") != token
    assert "Newcomer" in set(Q.runs_frame(s.cursor(), "demo")["model_name"])
    runs.delete_run(path.name, root)
    s.refresh()
    assert "Newcomer" not in set(Q.runs_frame(s.cursor(), "demo")["model_name"])
    assert Q.table_sizes(s.cursor())["runs"] == 4


def test_refresh_without_changes_keeps_the_token(demo_root: Path) -> None:
    s = Store(demo_root)
    s.refresh()
    t = s.token("demo"), s.token()
    s.refresh()
    assert (s.token("demo"), s.token()) == t


def test_hidden_runs_leave_the_board(root: Path) -> None:
    s = Store(root)
    s.refresh()
    rid = Q.runs_frame(s.cursor(), "demo")["run_id"].iloc[0]
    runs.set_hidden(rid, True, root)
    os.utime(root / "runs" / rid / "run.json", ns=(1, 1))  # a new mtime, even on coarse clocks
    s.refresh()
    assert rid not in set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    assert rid in set(Q.runs_frame(s.cursor(), "demo", include_hidden=True)["run_id"])


def test_broken_run_folders_are_reported_not_fatal(root: Path) -> None:
    bad = root / "runs" / "demo-broken-json-000000"
    bad.mkdir()
    (bad / "run.json").write_text("{not json", encoding="utf-8")
    (bad / "predictions.parquet").write_bytes(b"")
    half = root / "runs" / "demo-no-predictions-000000"
    half.mkdir()
    (half / "run.json").write_text("{}", encoding="utf-8")
    good = next(p for p in (root / "runs").iterdir() if p.name.startswith("demo-always"))
    wrong = root / "runs" / "demo-renamed-folder-000000"
    shutil.copytree(good, wrong)
    s = Store(root)
    s.refresh()
    assert "not valid JSON" in s.problems["demo-broken-json-000000"]
    assert "predictions.parquet is missing" in s.problems["demo-no-predictions-000000"]
    assert "does not match" in s.problems["demo-renamed-folder-000000"]
    assert len(Q.runs_frame(s.cursor(), "demo")) == 4
    shutil.rmtree(bad)
    shutil.rmtree(half)
    shutil.rmtree(wrong)
    s.refresh()
    assert s.problems == {}


def test_per_domain_threshold_labels(root: Path) -> None:
    path = testdata.add_run(
        root, "demo", "Per-domain scorer", scores=True, policy="per-domain-dev", accuracy=0.8
    )
    rec = runs.read_record(path)
    assert rec.threshold.policy == "per-domain-dev" and rec.threshold.per_domain
    s = Store(root)
    s.refresh()
    s.ensure_labels("demo")
    got = _bacc_from_labels(s.cursor(), rec.run_id, "demo", "summary", True)
    assert got == pytest.approx(rec.result("balanced_accuracy").value, abs=1e-12)


# --------------------------------------------------------------------------------------------
# the explorer's queries


def test_sample_filters_match_pandas(demo_root: Path) -> None:
    s = Store(demo_root)
    s.refresh()
    s.ensure_labels("demo")
    con = s.cursor()
    df = ingested.load_samples("demo", demo_root)
    f = Q.SampleFilter(
        benchmark="demo",
        unit="summary",
        splits=("test",),
        domains=("news",),
        label=0,
        error_types=("antonym_swap",),
    )
    want = df[
        (df["split"] == "test")
        & (df["domain"] == "news")
        & (df["label"] == 0)
        & df["error_types"].map(lambda t: "antonym_swap" in list(t))
    ]
    assert Q.count_samples(con, f) == len(want) > 0
    page = Q.samples_page(con, f, 100, 0)
    assert sorted(page["sample_id"]) == sorted(want["sample_id"])
    # paging: disjoint pages that cover the filter in order
    f_all = Q.SampleFilter(benchmark="demo", unit="summary")
    ids = [i for p in range(0, 300, 40) for i in Q.samples_page(con, f_all, 40, p)["sample_id"]]
    assert ids == sorted(df["sample_id"])


def test_text_search_is_literal(demo_root: Path) -> None:
    s = Store(demo_root)
    s.refresh()
    s.ensure_labels("demo")
    con = s.cursor()
    df = ingested.load_samples("demo", demo_root)
    word = "Harrowgate"
    want = df[
        df["summary"].str.lower().str.contains(word.lower())
        | df["document"].str.lower().str.contains(word.lower())
    ]
    f = Q.SampleFilter(benchmark="demo", unit="summary", text=word)
    assert Q.count_samples(con, f) == len(want) > 0
    for text in ("'; DROP TABLE samples; --", "%", "_", "\\", '" OR 1=1 --'):
        assert (
            Q.count_samples(con, Q.SampleFilter(benchmark="demo", unit="summary", text=text)) == 0
        )
    assert Q.table_sizes(con)["samples"] == len(df)


def test_wrong_filters(demo_root: Path) -> None:
    s = Store(demo_root)
    s.refresh()
    s.ensure_labels("demo")
    con = s.cursor()
    rid = Q.runs_frame(con, "demo").query("model_name == 'Always consistent'")["run_id"].iloc[0]
    df = ingested.load_samples("demo", demo_root)
    inconsistent_test = df[(df["split"] == "test") & (df["label"] == 0)]
    f = Q.SampleFilter(benchmark="demo", unit="summary", wrong_by=rid)
    assert Q.count_samples(con, f) == len(inconsistent_test)  # it passes every one of them
    hard = Q.SampleFilter(
        benchmark="demo",
        unit="summary",
        version=s.version("demo"),
        most_wrong=0.5,
        sort="most_wrong",
    )
    page = Q.samples_page(con, hard, 500, 0)
    assert len(page) > 0
    assert ((page["n_wrong"] / page["n_runs"]) > 0.5).all()
    assert (page["n_runs"] >= 2).all()
    shares = (page["n_wrong"] / page["n_runs"]).to_numpy()
    assert (np.diff(shares) <= 1e-12).all()  # hardest first


def test_sample_detail_queries(demo_root: Path) -> None:
    s = Store(demo_root)
    s.refresh()
    s.ensure_labels("demo")
    con = s.cursor()
    smp = Q.sample(con, "demo", "demo-news-05_3")
    assert smp and smp["label"] == 0 and smp["error_types"] == ["antonym_swap"]
    preds = Q.predictions_for_sample(con, "demo", "demo-news-05_3")
    assert len(preds) == 4 and set(preds["gold"]) == {0}
    assert Q.sample(con, "demo", "no-such-sample") is None
    assert Q.predictions_for_sample(con, "demo", "demo-news-00_3").empty  # dev: not scored


def test_label_matrix_layout(demo_root: Path) -> None:
    s = Store(demo_root)
    s.refresh()
    s.ensure_labels("demo")
    con = s.cursor()
    frame = Q.scored_samples(con, "demo", "summary", ["test"])
    ids = sorted(Q.runs_frame(con, "demo")["run_id"])
    P = Q.label_matrix(con, ids, "summary", frame["ix"].to_numpy())
    assert P.shape == (4, len(frame)) and (P >= 0).all()
    const = ids.index(next(i for i in ids if "always-consistent" in i))
    assert (P[const] == 1).all()
    # a sub-selection of samples keeps their order
    sub = frame["ix"].to_numpy()[::-7]
    pos = {int(ix): k for k, ix in enumerate(frame["ix"])}
    np.testing.assert_array_equal(
        Q.label_matrix(con, ids, "summary", sub), P[:, [pos[int(i)] for i in sub]]
    )


# --------------------------------------------------------------------------------------------
# real data: TofuEval sentence runs roll up to summaries as the scorer does


def test_tofueval_sentence_runs_roll_up_like_the_scorer(
    shared_benchmarks: Path, tmp_path: Path
) -> None:
    root = tmp_path / "leaderboard_data"
    (root / "benchmarks").mkdir(parents=True)
    pipeline.ingest("tofueval", shared_benchmarks / "tofueval", root=root)
    path = testdata.add_run(root, "tofueval", "Sentence judge", accuracy=0.8, seed=3)
    rec = runs.read_record(path)
    s = Store(root)
    s.refresh()
    s.ensure_labels("tofueval")
    con = s.cursor()
    for unit in ("sentence", "summary"):
        stored = rec.result("balanced_accuracy", unit=unit).value
        assert _bacc_from_labels(con, rec.run_id, "tofueval", unit, False) == pytest.approx(
            stored, abs=1e-12
        )
    # a TofuEval summary has its sentences, in order, and no document
    sid = con.execute(
        "SELECT sample_id FROM samples WHERE benchmark = 'tofueval' AND unit = "
        "'summary' AND label = 0 LIMIT 1"
    ).fetchone()[0]
    sent = Q.sentences_of(con, "tofueval", sid)
    assert len(sent) >= 1 and list(sent["sent_idx"]) == sorted(sent["sent_idx"])
    assert (sent["label"] == 0).any()
    assert Q.sample(con, "tofueval", sid)["document"] is None
    # slices the scorer defines exist in the samples the app reads
    spec = registry.get("tofueval")
    frame = Q.scored_samples(con, "tofueval", "sentence", ["test"])
    kinds = {k for k, _, _ in slice_masks(spec, frame)}
    assert {"dataset", "topic_type", "error_type"} <= kinds
    meta = json.loads((root / "benchmarks" / "tofueval" / "benchmark.json").read_text())
    assert meta["stats"]["documents_included"] is False


def test_a_superseded_run_leaves_the_board_until_its_successor_goes(root: Path) -> None:
    s = Store(root)
    s.refresh()
    con = s.cursor()
    before = Q.runs_frame(con, "demo")
    old = runs.list_runs(root, benchmark="demo").runs[0]
    spec = registry.get("demo")
    samples = ingested.load_samples("demo", root)
    preds = runs.read_predictions(root / "runs" / old.run_id)
    new = scorer.score_to_run(
        spec,
        old.benchmark_version,
        samples,
        preds,
        old.model,
        old.origin,
        old.config,
        root=root,
        supersedes=old.run_id,
    )
    s.refresh()
    after = Q.runs_frame(con, "demo")
    assert old.run_id not in set(after["run_id"]) and new.name in set(after["run_id"])
    assert len(after) == len(before)
    runs.delete_run(new.name, root)
    s.refresh()
    assert set(Q.runs_frame(con, "demo")["run_id"]) == set(before["run_id"])


def _clone_run(root: Path, src: str, new_id: str, **changes: object) -> None:
    """A copy of run `src` under a new id, with run.json fields changed."""
    d = root / "runs" / new_id
    shutil.copytree(root / "runs" / src, d)
    rec = json.loads((d / "run.json").read_text(encoding="utf-8"))
    rec.update(run_id=new_id, **changes)
    (d / "run.json").write_text(json.dumps(rec), encoding="utf-8")


@pytest.mark.parametrize(
    ("hidden", "shown"),
    [
        ((), {"c"}),  # a chain shows its newest run
        (("c",), {"b"}),  # hiding the newest brings the one before back
        (("b",), {"c"}),  # a hidden middle run does not bring the oldest back
        (("b", "c"), {"a"}),
        (("a", "b", "c"), set()),
    ],
)
def test_engine_and_board_agree_on_supersession(
    root: Path, hidden: tuple[str, ...], shown: set[str]
) -> None:
    src = runs.list_runs(root, benchmark="demo").runs[0].run_id
    ids = {k: f"demo-chain-{k}-000000" for k in "abc"}
    _clone_run(root, src, ids["a"], hidden="a" in hidden)
    _clone_run(root, src, ids["b"], hidden="b" in hidden, supersedes=ids["a"])
    _clone_run(root, src, ids["c"], hidden="c" in hidden, supersedes=ids["b"])
    chain = set(ids.values())
    engine = {r.run_id for r in runs.list_runs(root, benchmark="demo").runs} & chain
    s = Store(root)
    s.refresh()
    board = set(Q.runs_frame(s.cursor(), "demo")["run_id"]) & chain
    assert engine == board == {ids[k] for k in shown}
    # moderation is kept apart from supersession: every chain run is still listed when asked
    every = Q.runs_frame(s.cursor(), "demo", include_hidden=True)
    assert chain <= set(every["run_id"])
    moderated = set(every.loc[every["moderated"], "run_id"]) & chain
    assert moderated == {ids[k] for k in hidden}


# --------------------------------------------------------------------------------------------
# the explorer's tables and the engine's run.json models agree

# run.json fields the board does not read (a new RunRecord field must be read or listed here)
NOT_READ = {"schema_version", "bootstrap"}


def _leaves(structure: object, prefix: str = "") -> dict[str, object]:
    """Dotted path -> DuckDB type of every leaf of a from_json structure (lists of structs are
    walked into: results.metric)."""
    if isinstance(structure, list) and structure and isinstance(structure[0], dict):
        return _leaves(structure[0], prefix)
    if isinstance(structure, dict):
        out: dict[str, object] = {}
        for k, v in structure.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: structure}


def _column_type(model_type: object) -> str:
    """The DuckDB column type a run.json field of this structure type is stored in."""
    if isinstance(model_type, list):
        return f"{_column_type(model_type[0])}[]"
    return "VARCHAR" if model_type == "JSON" else str(model_type)


def test_explorer_tables_read_what_the_run_models_define() -> None:
    con = Q.connect()
    structure = Q.model_structure(RunRecord, frozenset({"config"}))
    leaves = _leaves(structure)
    for table, columns in (("runs", Q.RUN_COLUMNS), ("results", Q.RESULT_COLUMNS)):
        described = dict(
            con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall()
        )
        assert list(described) == list(columns), (
            f"{table}: columns and {table.upper()}_COLUMNS differ"
        )
        for col, path in columns.items():
            if path is None:
                continue
            assert path in leaves, f"{table}.{col} reads {path!r}, which RunRecord does not define"
            assert described[col] == _column_type(leaves[path]), (
                f"{table}.{col} is {described[col]} but run.json's {path} is {leaves[path]}"
            )
    read = {p for cols in (Q.RUN_COLUMNS, Q.RESULT_COLUMNS) for p in cols.values() if p}
    unread = sorted(set(leaves) - read - NOT_READ)
    assert not unread, (
        f"run.json fields {unread} are read by no explorer table: add a column to the runs or "
        "results table (explorer/queries/schema.py: SCHEMA, RUN_COLUMNS or RESULT_COLUMNS, "
        "insert_staged_runs), or list them in NOT_READ"
    )
    # the structure the board parses run.json with is the models' own
    assert json.loads(Q.RUN_JSON_STRUCTURE) == structure


def test_a_new_run_field_is_named_by_the_agreement_check() -> None:
    class Extended(RunRecord):
        reviewer: str | None = None

    leaves = _leaves(Q.model_structure(Extended, frozenset({"config"})))
    read = {p for cols in (Q.RUN_COLUMNS, Q.RESULT_COLUMNS) for p in cols.values() if p}
    assert sorted(set(leaves) - read - NOT_READ) == ["reviewer"]


# --------------------------------------------------------------------------------------------
# final labels: stored by the scorer, made by the engine for runs stored without them


def _sorted_labels(df: pd.DataFrame) -> pd.DataFrame:
    out = df[list(LABEL_COLUMNS)].sort_values(["unit", "sample_id"]).reset_index(drop=True)
    out["final_label"] = out["final_label"].astype("Int8")
    out["score"] = out["score"].astype(float)
    out["rolled"] = out["rolled"].astype(bool)
    return out


def _assert_stored_labels_are_the_engines(root: Path, benchmark: str) -> int:
    samples = ingested.load_samples(benchmark, root)
    n = 0
    for rec in runs.list_runs(root, benchmark=benchmark).runs:
        d = root / "runs" / rec.run_id
        stored = runs.read_labels(d)
        assert stored is not None, f"{rec.run_id} has no labels.parquet"
        again = scoring.final_labels(
            samples, runs.read_predictions(d), rec.threshold, list(rec.splits)
        )
        pd.testing.assert_frame_equal(_sorted_labels(stored), _sorted_labels(again))
        n += 1
    return n


def _labels_table(con: Q.Con) -> pd.DataFrame:
    return con.execute("SELECT * FROM labels ORDER BY run_id, unit, sample_id").df()


def test_stored_labels_equal_the_engines_recomputed_labels_on_the_demo(root: Path) -> None:
    testdata.add_run(root, "demo", "Scores, dev threshold", scores=True, accuracy=0.8)
    testdata.add_run(root, "demo", "Per-domain", scores=True, policy="per-domain-dev", seed=2)
    assert _assert_stored_labels_are_the_engines(root, "demo") == 6


def test_stored_labels_equal_the_engines_on_a_sentence_benchmark(
    shared_benchmarks: Path, tmp_path: Path
) -> None:
    root = tmp_path / "leaderboard_data"
    (root / "benchmarks").mkdir(parents=True)
    pipeline.ingest("tofueval", shared_benchmarks / "tofueval", root=root)
    path = testdata.add_run(root, "tofueval", "Sentence judge", accuracy=0.8, seed=3)
    testdata.add_run(root, "tofueval", "Sentence scorer", scores=True, accuracy=0.7, seed=4)
    labels = runs.read_labels(path)
    assert labels is not None and set(labels["unit"]) == {"sentence", "summary"}
    assert labels.loc[labels["unit"] == "summary", "rolled"].all()
    assert _assert_stored_labels_are_the_engines(root, "tofueval") == 2


def test_runs_stored_without_labels_get_the_same_labels_from_the_engine(root: Path) -> None:
    testdata.add_run(root, "demo", "Per-domain", scores=True, policy="per-domain-dev", seed=2)
    s = Store(root)
    s.refresh()
    s.ensure_labels("demo")
    with_file = _labels_table(s.cursor())
    for d in (root / "runs").iterdir():
        (d / "labels.parquet").unlink()
    old = Store(root)
    old.refresh()
    old.ensure_labels("demo")
    pd.testing.assert_frame_equal(_labels_table(old.cursor()), with_file)
    assert old.problems == {}


def test_the_committed_demo_runs_have_no_stored_labels_and_still_reproduce(
    tmp_path: Path,
) -> None:
    """leaderboard_data/runs holds runs written before labels were stored: the old-run path."""
    repo_data = Path(__file__).resolve().parents[2] / "leaderboard_data"
    root = tmp_path / "leaderboard_data"
    shutil.copytree(repo_data / "benchmarks", root / "benchmarks")
    shutil.copytree(repo_data / "runs", root / "runs")
    assert not list(root.glob("runs/*/labels.parquet"))
    s = Store(root)
    s.refresh()
    s.ensure_labels("demo")
    con = s.cursor()
    ids = list(Q.runs_frame(con, "demo")["run_id"])
    assert len(ids) == 4 and s.problems == {}
    for run_id in ids:
        rec = runs.read_record(root / "runs" / run_id)
        stored = rec.result("balanced_accuracy").value
        assert _bacc_from_labels(con, run_id, "demo", "summary", True) == pytest.approx(
            stored, abs=1e-12
        )


def test_the_board_and_the_engine_read_the_same_result_rows(root: Path) -> None:
    """explorer's DuckDB route (runs ⋈ results) and evaluator.store.export.result_rows agree."""
    testdata.add_run(root, "demo", "Per-domain", scores=True, policy="per-domain-dev", seed=2)
    engine = export.result_rows(runs.list_runs(root, benchmark="demo").runs)
    s = Store(root)
    s.refresh()
    cols = [c for c in export.RESULT_ROW_COLUMNS if c not in ("hidden", "coverage")]
    board = (
        s.cursor()
        .execute(
            "SELECT r.moderated AS hidden, r.*, x.* EXCLUDE (run_id) FROM results x "
            "JOIN runs r USING (run_id) WHERE r.benchmark = 'demo' AND NOT r.hidden"
        )
        .df()
    )
    key = ["run_id", "unit", "slice_kind", "slice_value", "metric"]
    assert len(board) == len(engine) > 0
    e = engine.sort_values(key).reset_index(drop=True)
    b = board.sort_values(key).reset_index(drop=True)
    for c in cols:
        ev, bv = e[c].to_numpy(dtype=object), b[c].to_numpy(dtype=object)
        same = [
            (x is None or x != x) and (y is None or y != y) or x == y
            for x, y in zip(ev, bv, strict=True)
        ]
        assert all(same), f"column {c} differs"

    def as_list(c: object) -> list[str]:
        return [] if c is None or c is pd.NA else [str(x) for x in c]  # type: ignore[attr-defined]

    assert [as_list(c) for c in e["coverage"]] == [as_list(c) for c in b["coverage"]]
