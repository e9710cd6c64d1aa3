"""A corrupt run folder never takes the read side down (issue 13 items 1 and 2).

Each test copies a demo run folder under a new run id, breaks one file the way a disk, a
hand edit or a hostile writer would, and checks that the run is listed in Store.problems,
left off the board, and that the other runs still load and rank."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.benchmarks import registry
from explorer import leaderboard as L
from explorer import queries as Q
from explorer.store import Store
from tests.support import testdata

COPY = "demo-corrupt-copy-000000"


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("demo") / "leaderboard_data")
    testdata.add_run(r, "demo", "Stored labels", accuracy=0.8, seed=3)  # has labels.parquet
    return r


@pytest.fixture
def root(demo_root: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "leaderboard_data"
    shutil.copytree(demo_root, dst)
    return dst


def _copy_run(root: Path, part: str = "stored-labels") -> Path:
    src = next(p for p in (root / "runs").iterdir() if part in p.name)
    dst = root / "runs" / COPY
    shutil.copytree(src, dst)
    rec = json.loads((dst / "run.json").read_text(encoding="utf-8"))
    rec["run_id"] = COPY
    (dst / "run.json").write_text(json.dumps(rec), encoding="utf-8")
    return dst


def _board(s: Store) -> L.Board:
    s.ensure_labels("demo")
    q = L.BoardQuery("demo", "summary")
    return L.build_board(s.cursor(), q, registry.get("demo"), s.version("demo"), 200)


def _assert_left_off(s: Store, why: str) -> None:
    assert why in s.problems[COPY], s.problems
    b = _board(s)
    assert COPY not in set(b.rows["run_id"].dropna())
    assert COPY not in set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    assert len(b.paired_runs) >= 2  # the others still rank by the paired test


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_a_truncated_predictions_file(root: Path) -> None:
    d = _copy_run(root)
    _truncate(d / "predictions.parquet")
    s = Store(root)
    s.refresh()
    _assert_left_off(s, "predictions.parquet is unreadable (truncated")


def test_scores_written_as_strings(root: Path) -> None:
    d = _copy_run(root)
    t = pq.read_table(d / "predictions.parquet")
    i = t.schema.get_field_index("score")
    t = t.set_column(i, "score", pa.array(["abc"] * len(t), pa.string()))
    pq.write_table(t, d / "predictions.parquet")
    s = Store(root)
    s.refresh()
    s.ensure_labels("demo")  # found when the rows are read, with the reader's reason
    _assert_left_off(s, "unreadable: Conversion Error")


def test_a_truncated_labels_file(root: Path) -> None:
    d = _copy_run(root)
    _truncate(d / "labels.parquet")
    s = Store(root)
    s.refresh()
    _assert_left_off(s, "labels.parquet is unreadable")


def test_a_file_that_fails_only_when_read_leaves_the_board(root: Path) -> None:
    """Footer fine, rows not: the store finds out when it loads the rows (ensure_labels)."""
    d = _copy_run(root)
    s = Store(root)
    s.refresh()
    assert COPY in set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    data = bytearray((d / "predictions.parquet").read_bytes())
    data[4:-8] = bytes(len(data) - 12)  # everything zeroed but Parquet's magic bytes
    (d / "predictions.parquet").write_bytes(bytes(data))
    s.ensure_labels("demo")  # no refresh in between: the rows are read now
    assert COPY in s.problems and "unreadable" in s.problems[COPY]
    assert COPY not in set(Q.runs_frame(s.cursor(), "demo")["run_id"])
    assert len(_board(s).paired_runs) >= 2


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda r: r["results"][0].update(value="abc"), "results.0.value"),
        (lambda r: r["model"].update(name="x" * 5000), "model.name"),
        (lambda r: r.update(origin="made-up"), "origin"),
    ],
)
def test_the_app_rejects_what_the_engine_rejects(root: Path, edit, why: str) -> None:  # type: ignore[no-untyped-def]
    d = _copy_run(root)
    rec = json.loads((d / "run.json").read_text(encoding="utf-8"))
    edit(rec)
    (d / "run.json").write_text(json.dumps(rec), encoding="utf-8")
    s = Store(root)
    s.refresh()
    assert why in s.problems[COPY], s.problems
    assert COPY not in set(Q.runs_frame(s.cursor(), "demo")["run_id"])


def test_a_fixed_folder_comes_back(root: Path) -> None:
    d = _copy_run(root)
    good = (d / "predictions.parquet").read_bytes()
    _truncate(d / "predictions.parquet")
    s = Store(root)
    s.refresh()
    assert COPY in s.problems
    s.refresh()  # unchanged: not read again, still listed
    assert COPY in s.problems
    (d / "predictions.parquet").write_bytes(good)
    s.refresh()
    assert COPY not in s.problems
    assert COPY in set(_board(s).rows["run_id"].dropna())
