"""SummExecEdit loader, on records written in the release's published shape (no rows exist here)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evaluator.benchmarks import summexecedit
from evaluator.core.errors import IngestError
from tests.support.fake_hub import FakeHub

FILENAME = "defies_summedits_final_all_combined.json"
DOMAIN_SPELLINGS = [
    "news",
    "podcast",
    "billsum",
    "samsum",
    "shakespeare",
    "scitldr",
    "qmsumm",
    "ectsum",
    "sales_email",
    "sales_call",
    "Sales Email",  # Table 6 spelling
    "QMSum",
]


def _records() -> list[dict]:
    """A dozen records across domains, both labels, every field of the dataset card."""
    rows = []
    for i, domain in enumerate(DOMAIN_SPELLINGS):
        inconsistent = i % 2 == 0
        seed = f"The team shipped release {i} on Friday after review."
        rows.append(
            {
                "sample_id": f"s{i:03d}",
                "doc_id": f"d{i // 2:03d}",
                "doc": f"Document {i}: the team shipped release {i} on Friday after a review.",
                "original_summary": seed,
                "original_text": "after review" if inconsistent else None,
                "replace_text": "without any review" if inconsistent else None,
                "edited_summary": (
                    seed.replace("after review", "without any review") if inconsistent else seed
                ),
                "explanation": (
                    "The document says the release followed a review." if inconsistent else ""
                ),
                "domain": domain,
                "model": ("GPT4-Turbo" if i % 4 == 0 else "Claude3-Opus") if inconsistent else "",
                "edit_type": "summexecedit" if inconsistent else "summedits",
            }
        )
    return rows


def _write(path: Path, records: list, jsonl: bool = False) -> Path:
    if jsonl:
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return path


def test_spec() -> None:
    spec = summexecedit.SPEC
    assert spec.name == "summexecedit"
    assert spec.task == "detection+explanation"
    assert spec.hub_id == "Salesforce/summexecedit"
    assert spec.splits == ("test",) and spec.units == ("summary",)
    assert spec.primary_metric == "detection_accuracy"
    assert len(spec.domains) == 10
    assert spec.slice("domain").field == "domain"
    assert spec.slice("edit_model").field == "attributes.edit_model"
    assert "2412.13378" in spec.citation
    assert summexecedit.HUB_FILENAME == FILENAME
    # Table 6 sums to the paper's totals.
    assert sum(n for n, _ in summexecedit.PAPER_TABLE6.values()) == summexecedit.PAPER_TOTAL
    inconsistent = sum(n * p / 100 for n, p in summexecedit.PAPER_TABLE6.values())
    assert inconsistent == pytest.approx(summexecedit.PAPER_INCONSISTENT, abs=3)


def test_mapping_of_every_field(tmp_path: Path) -> None:
    rows = _records()
    rows[1]["explanation"] = float("nan")  # as pandas writes a missing value
    lb = summexecedit.load(_write(tmp_path / FILENAME, rows))
    assert len(lb.samples) == 12
    by_id = {s.sample_id: s for s in lb.samples}
    s = by_id["s000"]
    assert s.benchmark == "summexecedit" and s.split == "test" and s.unit == "summary"
    assert (s.label, s.domain, s.doc_id) == (0, "news", "d000")
    assert s.document.startswith("Document 0:")
    assert s.summary == "The team shipped release 0 on Friday without any review."
    assert s.seed_summary == "The team shipped release 0 on Friday after review."
    assert s.reference_explanation == "The document says the release followed a review."
    assert s.error_types == ()
    assert s.attributes == {
        "edit_type": "summexecedit",
        "edit_model": "GPT4-Turbo",
        "original_text": "after review",
        "replace_text": "without any review",
    }
    c = by_id["s001"]
    assert (c.label, c.domain, c.summary, c.reference_explanation) == (
        1,
        "podcast",
        c.seed_summary,
        None,
    )
    assert c.attributes == {"edit_type": "summedits"}  # no edit model on consistent rows
    assert by_id["s002"].attributes["edit_model"] == "Claude3-Opus"
    assert by_id["s010"].domain == "sales_email"
    assert by_id["s010"].attributes["source_domain"] == "Sales Email"
    assert by_id["s011"].domain == "qmsumm"
    assert Counter(s.label for s in lb.samples) == {0: 6, 1: 6}
    assert any("12 rows read as JSON list; 6 inconsistent, 6 consistent" in n for n in lb.notes)
    assert any("paper reports 4241" in n for n in lb.notes)
    assert all(isinstance(v, str) for s in lb.samples for v in s.attributes.values())


def test_json_lines_and_folders(tmp_path: Path) -> None:
    as_list = summexecedit.load(_write(tmp_path / FILENAME, _records()))
    lines_dir = tmp_path / "lines"
    lines_dir.mkdir()
    as_lines = summexecedit.load(_write(lines_dir / "summexecedit.jsonl", _records(), jsonl=True))
    assert as_lines.samples == as_list.samples
    assert any("as JSON lines" in n for n in as_lines.notes)
    assert summexecedit.load(lines_dir).samples == as_list.samples  # the only .jsonl there
    assert summexecedit.load(tmp_path).samples == as_list.samples  # the hub file name wins


def test_a_label_field_must_agree_with_edit_type(tmp_path: Path) -> None:
    rows = _records()
    for r in rows:
        r["label"] = 0 if r["edit_type"] == "summexecedit" else 1
    assert len(summexecedit.load(_write(tmp_path / FILENAME, rows)).samples) == 12
    rows[3]["label"] = 0
    with pytest.raises(IngestError) as err:
        summexecedit.load(_write(tmp_path / FILENAME, rows))
    assert (err.value.field, str(err.value.record)) == ("label", "#3 (id 's003')")


def test_hub(tmp_path: Path, hub: FakeHub) -> None:
    hub_copy = _write(tmp_path / FILENAME, _records())
    hub.create("Salesforce/summexecedit")
    hub.put("Salesforce/summexecedit", {FILENAME: hub_copy.read_bytes()})
    lb = summexecedit.load("hub")
    assert hub.count("GET", f"/datasets/Salesforce/summexecedit/resolve/main/{FILENAME}") == 1
    assert len(lb.samples) == 12
    assert lb.sources == [f"hf://datasets/Salesforce/summexecedit/{FILENAME}"]


def test_hub_unreachable(no_hub: str) -> None:
    with pytest.raises(IngestError) as err:
        summexecedit.load("hub")
    assert "hub could not be reached" in str(err.value) and "--from PATH" in str(err.value)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r.pop("edited_summary"), "edited_summary"),
        (lambda r: r.update(summary=r.pop("edited_summary")), "edited_summary"),  # renamed
        (lambda r: r.pop("doc"), "doc"),
        (lambda r: r.pop("doc_id"), "doc_id"),
        (lambda r: r.pop("original_summary"), "original_summary"),
        (lambda r: r.update(edit_type="paraphrase"), "edit_type"),
        (lambda r: r.pop("edit_type"), "edit_type"),
        (lambda r: r.update(domain="cooking"), "domain"),
        (lambda r: r.update(sample_id=None), "sample_id"),
        (lambda r: r.update(explanation=["a", "b"]), "explanation"),
        (lambda r: r.update(label=2), "label"),
    ],
)
def test_malformed_records(tmp_path: Path, change, field) -> None:
    rows = _records()
    change(rows[4])
    path = _write(tmp_path / FILENAME, rows)
    with pytest.raises(IngestError) as err:
        summexecedit.load(path)
    e = err.value
    assert (e.file, e.field) == (str(path), field)
    assert str(e.record).startswith("#4")


def test_duplicate_sample_id(tmp_path: Path) -> None:
    rows = _records()
    rows[7]["sample_id"] = "s002"
    with pytest.raises(IngestError) as err:
        summexecedit.load(_write(tmp_path / FILENAME, rows))
    assert (err.value.field, str(err.value.record)) == ("sample_id", "#7 (id 's002')")
    assert "record #2" in str(err.value)


def test_truncated_files(tmp_path: Path) -> None:
    text = json.dumps(_records())
    path = tmp_path / FILENAME
    path.write_text(text[:-40], encoding="utf-8")
    with pytest.raises(IngestError) as err:
        summexecedit.load(path)
    assert "truncated" in str(err.value) and err.value.file == str(path)
    lines = "".join(json.dumps(r) + "\n" for r in _records())
    path.write_text(lines[:-30], encoding="utf-8")
    with pytest.raises(IngestError) as err:
        summexecedit.load(path)
    assert str(err.value.record) == "line 12"


def test_not_a_record(tmp_path: Path) -> None:
    rows = _records()
    rows[5] = "s005"
    with pytest.raises(IngestError) as err:
        summexecedit.load(_write(tmp_path / FILENAME, rows))
    assert str(err.value.record) == "#5" and "JSON object" in str(err.value)


def test_ambiguous_folder(tmp_path: Path) -> None:
    _write(tmp_path / "a.json", _records())
    _write(tmp_path / "b.json", _records())
    with pytest.raises(IngestError) as err:
        summexecedit.load(tmp_path)
    assert FILENAME in str(err.value) and "a.json, b.json" in str(err.value)
