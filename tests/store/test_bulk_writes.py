"""Many runs written at once (evaluator.store.runs.write_runs) or kept in a pack
(evaluator.store.runs.pack_runs) and written from it (materialize): the files of all the runs
are cast and redacted in one pass, and a packed text this process validated is not validated
again; a run that fails is refused alone, and the others keep their own rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluator.store import pulled, runs
from tests.support.testdata import build_demo_root

SECRET = "zq9-very-secret-value-1234567890"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_demo_root(tmp_path_factory.mktemp("bulk") / "leaderboard_data", reported=False)


def _items(source: Path) -> list[runs.BulkRun]:
    """The demo's runs as a pull hands them over: record, text, files as Arrow tables."""
    out = []
    for d in sorted((source / "runs").iterdir()):
        files = {n: pq.read_table(d / n) for n in ("predictions.parquet", "labels.parquet")}
        text = (d / "run.json").read_text(encoding="utf-8")
        out.append(runs.BulkRun(d.name, runs.validate_record_text(text, d.name), text, files))
    return out


def _spoiled(item: runs.BulkRun) -> runs.BulkRun:
    """The run with labels that are not numbers: its predictions cannot be cast."""
    t = item.files["predictions.parquet"]
    bad = t.set_column(t.schema.get_field_index("label"), "label", pa.array(["x"] * len(t)))
    return item._replace(files={**item.files, "predictions.parquet": bad})


def _rows(path: Path) -> list[dict[str, object]]:
    return pq.read_table(path).to_pylist()


def test_a_run_that_cannot_be_cast_is_refused_alone_and_the_others_keep_their_own_rows(
    source: Path, tmp_path: Path
) -> None:
    items = _items(source)
    bad = items[1].run_id
    items[1] = _spoiled(items[1])
    root = tmp_path / "leaderboard_data"
    done, failed = runs.write_runs(items, root)
    assert set(done) == {i.run_id for i in items} - {bad} and list(failed) == [bad]
    assert "label" in failed[bad] or "x" in failed[bad], failed[bad]
    for rid in done:  # the rows after the refused run's are not shifted onto another run
        for name in ("predictions.parquet", "labels.parquet"):
            assert _rows(root / "runs" / rid / name) == _rows(source / "runs" / rid / name)


def test_a_pack_holds_each_runs_own_rows_when_one_run_is_refused(
    source: Path, tmp_path: Path
) -> None:
    items = _items(source)
    bad = items[2].run_id
    items[2] = _spoiled(items[2])
    root = tmp_path / "leaderboard_data"
    done, failed = runs.pack_runs(items[::-1], root)  # any order: the pack is by run id
    assert set(done) == {i.run_id for i in items} - {bad} and list(failed) == [bad]
    (pack,) = pulled.packs(root)
    got = {rid: files for rid, _, files in pulled.pack_items(pack)}
    assert set(got) == set(done)
    for rid in done:
        for name in ("predictions.parquet", "labels.parquet"):
            want = _rows(source / "runs" / rid / name)
            assert got[rid][name].to_pylist() == want


def test_free_text_of_many_runs_is_redacted_in_one_pass_as_write_run_redacts_it(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_API_TOKEN", SECRET)
    items = _items(source)
    t = items[1].files["predictions.parquet"]
    said: list[str | None] = [None] * len(t)
    said[3] = f"see {SECRET} and sk-abcdefghijklmnopqrstuvwx1234"
    col = t.schema.get_field_index("explanation")
    t = t.set_column(col, "explanation", pa.array(said, pa.string()))
    items[1] = items[1]._replace(files={**items[1].files, "predictions.parquet": t})
    root = tmp_path / "leaderboard_data"
    runs.write_runs(items, root)
    shown = [
        x
        for i in items
        for x in pq.read_table(root / "runs" / i.run_id / "predictions.parquet")["explanation"]
        .drop_null()
        .to_pylist()
    ]
    assert len(shown) == 1 and SECRET not in shown[0] and "sk-abc" not in shown[0], shown


def test_packed_texts_are_written_without_a_second_validation_unless_changed_on_disk(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What this process packed is written as is; a pack whose text changed since (another
    writer, a damaged disk) is validated as it is read, and its broken run refused."""
    items = _items(source)
    root = tmp_path / "leaderboard_data"
    done, _ = runs.pack_runs(items, root)
    (pack,) = pulled.packs(root)
    changed = sorted(done)[0]
    t = pq.read_table(pack / pulled.PACK_RUNS)
    texts = t["run_json"].to_pylist()
    at = t["run_id"].to_pylist().index(changed)
    texts[at] = texts[at].replace('"benchmark": "demo"', '"benchmark": ""', 1)
    assert texts[at] != t["run_json"][at].as_py()
    t = t.set_column(t.schema.get_field_index("run_json"), "run_json", pa.array(texts))
    pq.write_table(t, pack / pulled.PACK_RUNS)
    validated: list[str] = []
    real = runs.validate_record_text

    def counted(text: str, run_dir: Path | str) -> object:
        validated.append(str(run_dir))
        return real(text, run_dir)

    monkeypatch.setattr(runs, "validate_record_text", counted)
    assert runs.materialize(root) == len(done) - 1
    assert validated == [changed]
    assert {p.name for p in (root / "runs").iterdir()} == set(done) - {changed}
    assert not pulled.packs(root)  # the changed run refused: the pack is done with


def test_a_pack_of_another_process_is_validated_as_it_is_written(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = _items(source)
    root = tmp_path / "leaderboard_data"
    done, _ = runs.pack_runs(items, root)
    monkeypatch.setattr(pulled, "_PROVEN", set())  # what a new process knows
    validated: list[str] = []
    real = runs.validate_record_text

    def counted(text: str, run_dir: Path | str) -> object:
        validated.append(str(run_dir))
        return real(text, run_dir)

    monkeypatch.setattr(runs, "validate_record_text", counted)
    assert runs.materialize(root) == len(done)
    assert sorted(validated) == sorted(done)


def test_a_text_is_taken_for_clean_only_where_neither_a_secret_nor_a_key_word_is_in_it() -> None:
    """The one-pass search (RE2) against the plain one: never clean where a secret is in the
    text or a key word in its lowercase (a Kelvin sign lowercases to k)."""
    secret = "a.b*c(d)[e]{f}+g?h|i^j$k\\l-0123456789"
    texts = [
        "plain text",
        "a Bearer token",
        "xsK-1",
        "the \u212aey",  # KELVIN SIGN
        "AUTHORIZATION",
        "hf_x",
        f"said {secret} here",
        "a.bXc(d)[e]{f}+g?h|i^j$k\\l-0123456789",  # the secret's characters, read as a regex
        "\u0130",
        None,
    ]
    words = ("sk-", "hf_", "bearer", "key", "authorization")
    want = [
        t is not None and secret not in t and not any(w in t.lower() for w in words) for t in texts
    ]
    assert pulled.clean_texts(texts, [secret]) == want
    assert want == [True, False, False, False, False, False, False, True, True, False]


def test_a_text_given_without_its_record_is_validated_unless_this_process_validated_it(
    source: Path, tmp_path: Path
) -> None:
    items = _items(source)
    broken = str(items[0].text).replace('"benchmark": "demo"', '"benchmark": ""', 1)
    bare = [i._replace(record=None) for i in items]
    bare[0] = bare[0]._replace(text=broken)
    done, failed = runs.write_runs(bare, tmp_path / "a")
    assert list(failed) == [items[0].run_id] and "benchmark" in failed[items[0].run_id]
    done, failed = runs.pack_runs(bare, tmp_path / "b")
    assert list(failed) == [items[0].run_id] and len(done) == len(items) - 1
