"""The Samples page's view of every run without loading every run: per-sample difficulty and
per-run units from the labels files read in place, one sample's predictions and the
explanation search from the files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evaluator.store import runs
from explorer import queries as Q
from explorer.store import Store
from tests.support import testdata

# the difficulty as the page computed it before, from every run's rows loaded into the tables
_FROM_TABLES = """
SELECT l.sample_id, count(l.pred) AS n_runs,
       count(*) FILTER (WHERE l.pred IS NOT NULL AND l.pred <> l.gold) AS n_wrong
FROM labels l JOIN runs r ON r.run_id = l.run_id
WHERE r.benchmark = 'demo' AND NOT r.hidden AND l.unit = 'summary'
GROUP BY l.sample_id
"""


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = testdata.build_demo_root(tmp_path_factory.mktemp("stats") / "leaderboard_data")
    testdata.add_run(root, "demo", "Labels A", accuracy=0.8, seed=1)
    testdata.add_run(root, "demo", "Scores B", accuracy=0.7, seed=2, scores=True)
    testdata.add_run(root, "demo", "Explained C", accuracy=0.6, seed=3, explanations=True)
    # a run stored before final labels were kept: its labels are made when loaded
    old = next(p for p in (root / "runs").iterdir() if p.name.startswith("demo-always"))
    (old / "labels.parquet").unlink()
    return root


@pytest.fixture
def root(base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return testdata.own_copy(base, tmp_path, monkeypatch)


def _stats(s: Store) -> pd.DataFrame:
    f = Q.SampleFilter(benchmark="demo", unit="summary")
    page = Q.samples_page(s.cursor(), f, 10_000, 0)
    got = page[page["n_runs"].notna()][["sample_id", "n_runs", "n_wrong"]]
    return got.astype({"n_runs": int, "n_wrong": int}).sort_values("sample_id", ignore_index=True)


def _loaded(s: Store) -> set[str]:
    con = s.cursor()
    return {
        str(r[0])
        for r in con.execute(
            "SELECT DISTINCT run_id FROM labels UNION SELECT DISTINCT run_id FROM predictions"
        ).fetchall()
    }


def test_difficulty_from_the_files_equals_the_difficulty_from_every_loaded_row(
    root: Path,
) -> None:
    s = Store(root)
    s.refresh()
    s.ensure_sample_stats("demo")
    got = _stats(s)
    stored = {p.name for p in (root / "runs").iterdir() if (p / "labels.parquet").is_file()}
    assert len(stored) == 6
    # only the run without stored labels was loaded into the tables
    assert _loaded(s) == {p.name for p in (root / "runs").iterdir()} - stored
    full = Store(root)
    full.refresh()
    full.ensure_labels("demo")
    want = full.cursor().execute(_FROM_TABLES).df()
    want = want.astype({"n_runs": int, "n_wrong": int}).sort_values("sample_id", ignore_index=True)
    pd.testing.assert_frame_equal(got, want[got.columns])
    assert (got["n_runs"] == 7).any()  # the 4 demo runs and the 3 added ones
    units = Q.labelled_runs(s.cursor(), "demo")
    assert set(units["run_id"]) == set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    scored = set(units.loc[units["n_scored"] > 0, "run_id"])
    by_name = Q.runs_frame(s.cursor(), "demo").set_index("run_id")["model_name"]
    assert "Scores B" in {by_name[r] for r in scored}
    assert "Labels A" not in {by_name[r] for r in scored}


def test_a_hidden_run_stops_counting(root: Path) -> None:
    s = Store(root)
    s.refresh()
    s.ensure_sample_stats("demo")
    before = _stats(s)
    rid = Q.runs_frame(s.cursor(), "demo").query("model_name == 'Labels A'")["run_id"].iloc[0]
    runs.set_hidden(rid, True, root)
    s.refresh()
    s.ensure_sample_stats("demo")
    after = _stats(s)
    assert (after["n_runs"] == before["n_runs"] - 1).all()
    assert rid not in set(Q.labelled_runs(s.cursor(), "demo")["run_id"])


def test_one_samples_predictions_from_the_files(root: Path) -> None:
    s = Store(root)
    s.refresh()
    sid = "demo-news-05_3"
    got = s.sample_predictions("demo", sid)
    full = Store(root)
    full.refresh()
    full.ensure_labels("demo")
    want = Q.predictions_for_sample(full.cursor(), "demo", sid)
    cols = ["run_id", "unit", "score", "pred", "gold", "rolled", "explanation"]
    pd.testing.assert_frame_equal(
        got[cols].sort_values("run_id", ignore_index=True).astype(str),
        want[cols].sort_values("run_id", ignore_index=True).astype(str),
    )
    assert len(got) == 7 and got["explanation"].notna().sum() == 1
    assert s.sample_predictions("demo", "demo-news-00_3").empty  # dev: not scored


def test_explanation_search_reads_the_files(root: Path) -> None:
    s = Store(root)
    s.refresh()
    s.ensure_sample_stats("demo")
    word = "something the document does not"
    hits = s.explanation_hits("demo", word.upper())
    assert hits and all(isinstance(h, str) for h in hits)
    f = Q.SampleFilter(benchmark="demo", unit="summary", text=word, explained=hits)
    page = Q.samples_page(s.cursor(), f, 1000, 0)
    assert set(page["sample_id"]) == set(hits)
    assert Q.count_samples(s.cursor(), Q.SampleFilter("demo", "summary", text=word)) == 0
    assert s.explanation_hits("demo", "no explanation says this") == ()
    assert s.explanation_hits("demo", "  ") == ()
