"""Every Eval Ever import: records from FactBoard and from other harnesses become runs or
published numbers; whatever does not validate or does not match a benchmark is refused with its
reason, and nothing of the import is stored."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evaluator.benchmarks import registry
from evaluator.cli.main import main
from evaluator.interop import eee
from evaluator.interop.export import export_runs, run_ids
from evaluator.interop.importer import ImportRefused, import_eee
from evaluator.store import export as store_export
from evaluator.store import ingested, runs
from explorer import leaderboard as L
from explorer import queries as Q
from explorer.store import Store
from tests.support.testdata import build_demo_root, without_runs


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A demo data root and the EEE export of its runs."""
    root = build_demo_root(tmp_path_factory.mktemp("base") / "data", reported=False)
    out = tmp_path_factory.mktemp("eee")
    export_runs(run_ids(root=root), out, root)
    return root, out


@pytest.fixture
def root(base: tuple[Path, Path], tmp_path: Path) -> Path:
    """A fresh copy of the demo root without the exported runs (nothing imported yet)."""
    dst = tmp_path / "data"
    shutil.copytree(base[0], dst)
    return without_runs(dst)


@pytest.fixture
def full_root(base: tuple[Path, Path], tmp_path: Path) -> Path:
    """A fresh copy of the demo root with its runs."""
    dst = tmp_path / "full"
    shutil.copytree(base[0], dst)
    return dst


def _records(base: tuple[Path, Path]) -> list[Path]:
    return sorted(base[1].rglob("*.json"))


def _copy(record: Path, dst: Path) -> Path:
    """A record and its samples file, copied into dst; returns the record's new path."""
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(record, dst / record.name)
    samples = record.with_name(record.stem + eee.SAMPLES_SUFFIX)
    shutil.copy(samples, dst / samples.name)
    return dst / record.name


def _edit(record: Path, fn: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(record.read_text())
    fn(data)
    record.write_text(json.dumps(data))


def _edit_lines(record: Path, fn: Callable[[list[dict[str, Any]]], None]) -> None:
    """Change the samples file, keeping the record's checksum and row count true to it."""
    samples = record.with_name(record.stem + eee.SAMPLES_SUFFIX)
    lines = [json.loads(x) for x in samples.read_text().splitlines()]
    fn(lines)
    body = "".join(json.dumps(x) + "\n" for x in lines).encode()
    samples.write_bytes(body)

    def fix(d: dict[str, Any]) -> None:
        d["detailed_evaluation_results"]["checksum"] = hashlib.sha256(body).hexdigest()
        d["detailed_evaluation_results"]["total_rows"] = len(lines)

    _edit(record, fix)


def _stored(root: Path) -> tuple[list[str], list[str], list[str]]:
    """What is on disk: run folders, reported files, staging leftovers."""

    def ls(d: Path) -> list[str]:
        return sorted(p.name for p in d.iterdir()) if d.is_dir() else []

    return ls(root / "runs"), ls(root / "reported"), ls(root / "_staging")


def _refused(path: Path, root: Path, match: str, **kw: Any) -> ImportRefused:
    before = _stored(root)
    with pytest.raises(ImportRefused, match=match) as e:
        import_eee(path, root=root, **kw)
    assert "nothing was imported" in str(e.value)
    assert _stored(root) == before
    return e.value


# ------------------------------------------------------------------------------------------
# refusals


def test_a_record_for_an_unknown_benchmark_is_refused(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    rec = _copy(_records(base)[0], tmp_path / "r")
    _edit(rec, lambda d: d["eval_library"]["additional_details"].update(factboard_benchmark="xsum"))
    _refused(rec, root, r"unknown benchmark 'xsum'; known: .*demo")
    foreign = tmp_path / "gsm8k.json"
    foreign.write_text(json.dumps(_foreign_record("GSM8K", [("accuracy", 0.8, {})])))
    _refused(foreign, root, r"unknown benchmark 'GSM8K'; known: .*pass --benchmark")


def test_a_record_for_a_benchmark_not_ingested_here_is_refused(root: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "qags.json"
    foreign.write_text(json.dumps(_foreign_record("QAGS", [("pearson_r", 0.5, {})])))
    _refused(foreign, root, r"benchmark 'qags' is not ingested")


def test_sample_ids_that_are_not_the_benchmarks_are_refused(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    rec = _copy(_records(base)[0], tmp_path / "r")

    def rename(lines: list[dict[str, Any]]) -> None:
        lines[3]["sample_id"] = "demo-nowhere-99_0"
        lines[4]["sample_id"] = "demo-nowhere-99_1"

    _edit_lines(rec, rename)
    err = _refused(rec, root, r"2 sample id\(s\) are not in benchmark demo")
    assert "'demo-nowhere-99_0', 'demo-nowhere-99_1'" in str(err)


def test_samples_whose_text_or_gold_answer_differ_are_refused(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    rec = _copy(_records(base)[0], tmp_path / "r")

    def other_version(lines: list[dict[str, Any]]) -> None:
        x = lines[0]
        x["input"]["reference"] = [
            "inconsistent" if x["input"]["reference"] == ["consistent"] else "consistent"
        ]
        x["sample_hash"] = eee.sample_hash(x["input"]["raw"], x["input"]["reference"])

    _edit_lines(rec, other_version)
    _refused(rec, root, r"1 sample\(s\) differ from demo version .*another version")


def test_two_predictions_for_one_sample_are_refused(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    rec = _copy(_records(base)[0], tmp_path / "r")
    _edit_lines(rec, lambda lines: lines.append(lines[0]))
    _refused(rec, root, r"1 sample id\(s\) have two predictions")


def test_schema_violations_are_refused_with_where_they_are(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    rec = _copy(_records(base)[0], tmp_path / "a")
    _edit(rec, lambda d: d["model_info"].pop("id"))
    _refused(rec, root, r"does not validate .*\n.*at model_info: 'id' is a required property")

    rec = _copy(_records(base)[0], tmp_path / "b")
    _edit_lines(rec, lambda lines: lines[2]["evaluation"].update(is_correct="yes"))
    _refused(rec, root, r"line 3 of the samples file .*\n.*at evaluation/is_correct: 'yes'")

    bad = tmp_path / "c" / "x.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    _refused(bad, root, r"the record is not JSON")
    bad.write_text("[" * 100_000 + "]" * 100_000)
    _refused(bad, root, r"the record is not JSON")
    rec = _copy(_records(base)[0], tmp_path / "d")
    rec.write_text(rec.read_text().replace('"score": ', '"score": NaN, "x": ', 1))
    _refused(rec, root, r"the record is not JSON \(NaN is not a JSON number")


def test_a_record_of_50_mb_is_refused_unread(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    rec = _copy(_records(base)[0], tmp_path / "r")
    _edit(rec, lambda d: d["eval_library"]["additional_details"].update(pad="x" * 50_000_000))
    assert rec.stat().st_size > 50_000_000
    _refused(rec, root, r"the record is 47\.7 MiB, over the 16 MiB limit; refused unread")
    # a samples file over its own limit too (a sparse file: only its size is looked at)
    rec = _copy(_records(base)[1], tmp_path / "s")
    with open(rec.with_name(rec.stem + eee.SAMPLES_SUFFIX), "r+b") as fh:
        fh.truncate(eee.MAX_SAMPLES_BYTES + 1)
    _refused(rec, root, r"the samples file .* over the 256 MiB limit")


def test_a_samples_file_that_is_missing_or_altered_is_refused(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    rec = _copy(_records(base)[0], tmp_path / "a")
    rec.with_name(rec.stem + eee.SAMPLES_SUFFIX).unlink()
    _refused(rec, root, r"its samples file .*_samples\.jsonl .* is not beside it")
    rec = _copy(_records(base)[0], tmp_path / "b")
    samples = rec.with_name(rec.stem + eee.SAMPLES_SUFFIX)
    samples.write_text(samples.read_text().replace('"fb_label": "1"', '"fb_label": "0"', 1))
    _refused(rec, root, r"does not match the record's checksum")


def test_a_samples_file_over_the_line_limit_is_refused(
    base: tuple[Path, Path], root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(eee, "MAX_LINES", 100)
    _refused(_records(base)[0], root, r"has 294 lines, over the 100 limit")


def test_one_bad_record_in_a_folder_stores_nothing_and_every_reason_is_given(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "batch"
    recs = _records(base)
    for r in recs:
        _copy(r, folder / r.parent.name)
    bad = folder / recs[2].parent.name / recs[2].name
    _edit(bad, lambda d: d.update(schema_version=3))
    other = folder / recs[0].parent.name / recs[0].name
    _edit(other, lambda d: d["eval_library"]["additional_details"].update(factboard_benchmark="x"))
    err = _refused(folder, root, r"2 record\(s\) refused")
    assert len(err.reasons) == 2
    assert any("schema_version: 3 is not of type 'string'" in r for r in err.reasons)
    assert any("unknown benchmark 'x'" in r for r in err.reasons)


def test_a_failure_while_storing_removes_what_the_import_stored(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "batch"
    _copy(_records(base)[0], folder / "a")
    # a record from another harness with dev samples only: nothing of the test split to score
    samples = ingested.load_samples("demo", root)
    dev = samples[samples["split"] == "dev"]["sample_id"].tolist()[:10]
    _foreign_pair(folder / "z", "demo", [(sid, "consistent", True) for sid in dev])
    _refused(folder, root, r"no prediction for any summary of split\(s\) test of demo")


def test_a_record_is_imported_once(base: tuple[Path, Path], root: Path, tmp_path: Path) -> None:
    rec = _records(base)[0]
    assert len(import_eee(rec, root=root)) == 1
    _refused(rec, root, r"is already imported as run demo-")


def test_cli_import_eee(
    base: tuple[Path, Path], root: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    assert main(["import-eee", str(_records(base)[0])]) == 0
    out = capsys.readouterr().out
    assert "demo run (294 rows) -> " in out and "numbers of the record reproduced" in out
    assert main(["import-eee", str(_records(base)[0])]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 1 record(s) refused; nothing was imported")
    assert main(["import-eee", str(root / "nowhere")]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    # published numbers go where the board reads them: <data root>/reported
    rec = root / "acme.json"
    rec.write_text(json.dumps(_foreign_record("demo", [("accuracy", 0.7, {})])))
    assert main(["import-eee", str(rec)]) == 0
    assert "demo published numbers (1 rows)" in capsys.readouterr().out
    assert [p.name.startswith("eee-demo-") for p in (root / "reported").iterdir()] == [True]


# ------------------------------------------------------------------------------------------
# aggregate-only records -> published numbers; records from other harnesses


def _foreign_record(dataset: str, results: list[tuple[str, float, dict[str, str]]]) -> dict:
    """A minimal record as another harness writes it (aggregates only)."""
    return {
        "schema_version": "0.3.0",
        "evaluation_id": f"{dataset}/acme/Acme-7B/1732400000",
        "retrieved_timestamp": "1732400000",
        "source_metadata": {
            "source_name": "Acme leaderboard",
            "source_type": "documentation",
            "source_organization_name": "Acme Labs",
            "evaluator_relationship": "first_party",
        },
        "model_info": {
            "name": "Acme-7B",
            "id": "acme/Acme-7B",
            "developer": "Acme Labs",
            "additional_details": {
                "deployment_type": "externally_managed",
                "model_availability": "closed_weights",
            },
        },
        "eval_library": {"name": "helm", "version": "unknown"},
        "evaluation_results": [
            {
                "evaluation_name": f"{dataset} {metric}",
                "source_data": {"dataset_name": dataset, "source_type": "other"},
                "metric_config": {
                    "metric_id": metric,
                    "lower_is_better": False,
                    "additional_details": details,
                },
                "score_details": {
                    "score": value,
                    "uncertainty": {
                        "num_samples": 210,
                        "confidence_interval": {"lower": value - 0.05, "upper": value + 0.05},
                    },
                },
            }
            for metric, value, details in results
        ],
    }


def _foreign_pair(folder: Path, dataset: str, answers: list[tuple[str, str, bool]]) -> Path:
    """A record with per-sample lines from another harness: (sample id, answer, is_correct)."""
    uid = eee.record_uuid(str(folder))
    rel = eee.record_path(dataset, "acme", "Acme-7B", uid)
    record = _foreign_record(dataset, [("accuracy", 0.7, {})])
    lines = [
        {
            "schema_version": "0.3.0",
            "evaluation_id": record["evaluation_id"],
            "model_id": "acme/Acme-7B",
            "evaluation_name": dataset,
            "sample_id": sid,
            "interaction_type": "single_turn",
            "input": {"raw": "Is the summary consistent with the document?", "reference": []},
            "output": {"raw": [f"Answer: {answer}"]},
            "answer_attribution": [
                {
                    "turn_idx": 0,
                    "source": "output.raw",
                    "extracted_value": answer,
                    "extraction_method": "regex",
                    "is_terminal": True,
                }
            ],
            "evaluation": {"score": float(ok), "is_correct": ok},
        }
        for sid, answer, ok in answers
    ]
    body = "".join(json.dumps(x) + "\n" for x in lines).encode()
    record["detailed_evaluation_results"] = {
        "format": "jsonl",
        "file_path": eee.samples_path(rel),
        "hash_algorithm": "sha256",
        "checksum": hashlib.sha256(body).hexdigest(),
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uid}.json"
    path.write_text(json.dumps(record))
    (folder / f"{uid}{eee.SAMPLES_SUFFIX}").write_bytes(body)
    return path


def test_an_aggregate_only_record_becomes_published_numbers_on_the_board(
    root: Path, tmp_path: Path
) -> None:
    rec = tmp_path / "acme.json"
    record = _foreign_record(
        "demo",
        [
            ("balanced_accuracy", 0.71, {}),
            ("false_positive_rate", 0.2, {"slice_kind": "domain", "slice_value": "news"}),
        ],
    )
    rec.write_text(json.dumps(record))
    [item] = import_eee(rec, root=root)
    assert item.kind == "reported" and item.rows == 2 and item.path is not None
    assert item.path.parent == root / "reported" and item.path.suffix == ".csv"
    rows = store_export.reported_rows(root, "demo")
    assert rows["model"].tolist() == ["Acme-7B", "Acme-7B"]
    assert rows["kind"].tolist() == ["proprietary-llm"] * 2
    assert rows["metric"].tolist() == ["balanced_accuracy", "fpr"]
    assert rows["value"].tolist() == [0.71, 0.2]
    assert rows["n"].tolist() == [210, 210]
    assert rows["split"].tolist() == ["test", "test"]
    assert rows["slice_value"].tolist() == ["", "news"]
    assert set(rows["source"]) == {"Acme leaderboard (Every Eval Ever record)"}
    assert (
        rows["note"]
        .iloc[0]
        .startswith("eee_id=demo/acme/Acme-7B/1732400000; relationship=first_party; imported from")
    )
    # the board reads it beside the runs, as a published number with its source
    store = Store(root)
    store.refresh()
    assert "reported" not in store.problems
    shown = Q.reported_results(store.cursor(), "demo", "summary", "overall")
    assert shown[["model", "metric", "value", "source"]].values.tolist() == [
        ["Acme-7B", "balanced_accuracy", 0.71, "Acme leaderboard (Every Eval Ever record)"]
    ]
    _refused(rec, root, r"is already imported \(eee-demo-")


def test_an_aggregate_only_factboard_record_keeps_its_slices(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    rec = _copy(_records(base)[0], tmp_path / "r")
    _edit(rec, lambda d: d.pop("detailed_evaluation_results"))
    data = json.loads(rec.read_text())
    [item] = import_eee(rec, root=root)
    assert item.kind == "reported"
    original = runs.read_record(
        runs.find_run(data["source_metadata"]["additional_details"]["factboard_run_id"], base[0])
    )
    rows = pd.read_csv(item.path, keep_default_na=False)
    assert len(rows) == len(original.results)
    for row, r in zip(rows.itertuples(), original.results, strict=True):
        assert (row.split, row.unit, row.slice_kind, str(row.slice_value), row.metric) == (
            r.split,
            r.unit,
            r.slice_kind,
            r.slice_value,
            r.metric,
        )
        assert row.value == r.value and row.n == r.n
        assert row.kind == original.model.kind and row.model == original.model.name


def test_an_aggregate_record_with_a_metric_factboard_does_not_know_is_refused(
    root: Path, tmp_path: Path
) -> None:
    rec = tmp_path / "acme.json"
    rec.write_text(json.dumps(_foreign_record("demo", [("exact_match", 0.5, {})])))
    _refused(rec, root, r"metric 'exact_match' is not one FactBoard knows")


def test_per_sample_lines_from_another_harness_become_a_run_scored_here(
    root: Path, tmp_path: Path
) -> None:
    samples = ingested.load_samples("demo", root)
    test = samples[samples["split"] == "test"]
    answers = []
    for i, (sid, gold) in enumerate(zip(test["sample_id"], test["label"], strict=True)):
        if i % 3 == 0:  # no readable answer: the label comes from is_correct
            answers.append((sid, "unclear", i % 2 == 0))
        else:
            answers.append((sid, ["No", "Yes"][int(gold)] if i % 5 else "consistent", True))
    rec = _foreign_pair(tmp_path / "acme", "demo", answers)
    [item] = import_eee(rec, root=root)
    assert item.kind == "run" and item.path is not None and item.rows == len(test)
    run = runs.read_record(item.path)
    assert run.origin == "imported" and run.model.name == "Acme-7B"
    assert run.model.kind == "proprietary-llm" and run.threshold.policy == "labels"
    assert run.submission is not None
    assert run.submission["source_organization_name"] == "Acme Labs"
    assert run.submission["evaluator_relationship"] == "first_party"
    preds = runs.read_predictions(item.path).set_index("sample_id")
    gold = test.set_index("sample_id")["label"]
    for i, (sid, answer, ok) in enumerate(answers):
        want = int(gold[sid]) if ok else 1 - int(gold[sid])
        if answer == "consistent":
            want = 1
        assert preds.loc[sid, "label"] == want, (i, sid, answer)
    assert run.counts.predicted == len(test) and run.counts.missing == 0


def test_the_board_shows_an_imported_run_with_its_badge_and_source(
    full_root: Path, tmp_path: Path
) -> None:
    root = full_root
    samples = ingested.load_samples("demo", root)
    test = samples[samples["split"] == "test"]
    answers = [
        (sid, ["no", "yes"][int(g)], True)
        for sid, g in zip(test["sample_id"], test["label"], strict=True)
    ]
    [item] = import_eee(_foreign_pair(tmp_path / "acme", "demo", answers), root=root)
    assert item.path is not None
    store = Store(root)
    store.refresh()
    board = L.build_board(
        store.cursor(), L.BoardQuery("demo", "summary"), registry.get("demo"), store.version("demo")
    )
    rows = board.rows.set_index("run_id")
    mine = rows.loc[item.path.name]
    assert mine["origin"] == "📥 imported"
    assert mine["source"] == "Acme leaderboard (via Every Eval Ever)"
    assert mine["value"] == 1.0  # every answer right
    others = rows.drop(index=item.path.name)
    assert len(others) == 4 and set(others["source"]) == {"FactBoard run"}


# ------------------------------------------------------------------------------------------
# an import follows the submission rules


def test_reimporting_factboard_s_own_export_is_refused_by_name(
    base: tuple[Path, Path], full_root: Path
) -> None:
    """The demo's export imported back beside the runs it came from added identical runs
    under the same names; an import is held to the submission rules."""
    e = _refused(_records(base)[0], full_root, "already has a run on demo")
    assert "same benchmark version" in str(e)


def test_the_same_predictions_under_a_new_id_and_name_are_refused_as_a_duplicate(
    base: tuple[Path, Path], root: Path, tmp_path: Path
) -> None:
    first = _records(base)[0]
    assert len(import_eee(first, root=root)) == 1
    again = _copy(first, tmp_path / "again")

    def rename(d: dict[str, Any]) -> None:
        d["evaluation_id"] = d["evaluation_id"] + "-second"
        model = json.loads(d["eval_library"]["additional_details"]["factboard_model"])
        model["name"] = "Renamed copy"
        d["eval_library"]["additional_details"]["factboard_model"] = json.dumps(model)

    _edit(again, rename)
    _edit_lines(
        again, lambda lines: [x.update(evaluation_id=x["evaluation_id"] + "-second") for x in lines]
    )
    _refused(again, root, "scores exactly as run demo-")


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("Acme\u202e7B", "control or invisible character"),
        ("Acme\u200b-7B", "control or invisible character"),
        ("\x1b[31mAcme-7B\x07", "control or invisible character"),
        ("Acme-7B\nSecond line", "control or invisible character"),
        ("Acme <img src=x>", "characters not allowed"),
    ],
)
def test_names_with_hidden_characters_or_markup_are_refused(
    root: Path, tmp_path: Path, name: str, says: str
) -> None:
    rec = tmp_path / "acme.json"
    record = _foreign_record("demo", [("balanced_accuracy", 0.71, {})])
    record["model_info"]["name"] = name
    rec.write_text(json.dumps(record))
    _refused(rec, root, says)


def test_a_lookalike_of_a_name_on_the_board_is_refused(full_root: Path, tmp_path: Path) -> None:
    on_board = runs.list_runs(full_root, benchmark="demo").runs[0].model.name
    assert "o" in on_board.lower() or "a" in on_board.lower()
    fake = on_board.replace("o", "\u043e").replace("a", "\u0430")  # Cyrillic о, а
    assert fake != on_board
    rec = tmp_path / "acme.json"
    record = _foreign_record("demo", [("balanced_accuracy", 0.71, {})])
    record["model_info"]["name"] = fake
    rec.write_text(json.dumps(record))
    _refused(rec, full_root, "only looks like")


@pytest.mark.parametrize(
    ("score", "extra", "says"),
    [
        (1e300, {"max_score": 1}, r"outside \[0, 1\]"),
        (-5.0, {}, r"outside \[0, 1\]"),
        (0.9, {"max_score": 0.5}, r"outside \[0, 0.5\]"),
    ],
)
def test_aggregate_scores_outside_the_metric_s_range_are_refused(
    root: Path, tmp_path: Path, score: float, extra: dict[str, Any], says: str
) -> None:
    rec = tmp_path / "acme.json"
    record = _foreign_record("demo", [("balanced_accuracy", 0.7, {})])
    r = record["evaluation_results"][0]
    r["metric_config"].update(extra)
    r["score_details"]["score"] = score
    r["score_details"]["uncertainty"].pop("confidence_interval")
    rec.write_text(json.dumps(record))
    _refused(rec, root, says)


def test_a_score_range_left_open_with_nulls_is_the_metric_s_own(root: Path, tmp_path: Path) -> None:
    # the schema lets min_score and max_score be null ("not provided")
    rec = tmp_path / "acme.json"
    record = _foreign_record("demo", [("balanced_accuracy", 0.7, {})])
    record["evaluation_results"][0]["metric_config"].update(
        score_type="continuous", min_score=None, max_score=None
    )
    rec.write_text(json.dumps(record))
    [item] = import_eee(rec, root=root)
    assert item.kind == "reported" and item.rows == 1
    record["evaluation_id"] += "-high"
    record["evaluation_results"][0]["score_details"]["score"] = 1.5
    record["evaluation_results"][0]["score_details"]["uncertainty"].pop("confidence_interval")
    rec.write_text(json.dumps(record))
    _refused(rec, root, r"outside \[0, 1\]")


@pytest.mark.parametrize("n", [-7, 10**20, 1.5])
def test_an_impossible_sample_count_is_refused(root: Path, tmp_path: Path, n: object) -> None:
    rec = tmp_path / "acme.json"
    record = _foreign_record("demo", [("balanced_accuracy", 0.7, {})])
    record["evaluation_results"][0]["score_details"]["uncertainty"]["num_samples"] = n
    rec.write_text(json.dumps(record))
    with pytest.raises(ImportRefused) as e:
        import_eee(rec, root=root)
    assert "num_samples" in str(e.value) or "evaluation_results" in str(e.value)
    assert not (root / "reported").exists() or not list((root / "reported").glob("eee-*"))


def test_the_same_aggregate_numbers_under_a_new_evaluation_id_are_refused(
    root: Path, tmp_path: Path
) -> None:
    record = _foreign_record("demo", [("balanced_accuracy", 0.71, {})])
    (tmp_path / "a.json").write_text(json.dumps(record))
    import_eee(tmp_path / "a.json", root=root)
    record["evaluation_id"] += "-again"
    (tmp_path / "b.json").write_text(json.dumps(record))
    _refused(tmp_path / "b.json", root, "numbers are already imported")
