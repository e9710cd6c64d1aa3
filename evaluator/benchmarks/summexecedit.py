"""SummExecEdit (Thorat, Laban, Wu, 2024): executable edits of SummEdits seed summaries.

2,121 inconsistent summaries made by GPT4-Turbo or Claude3-Opus replacing one substring of a seed
summary (with a reference explanation of the inconsistency), plus the 2,120 consistent edits of
SummEdits: 4,241 rows over the ten SummEdits domains. Released only on the Hugging Face hub as one
JSON file; its format is the one stated on the dataset card (shared/benchmarks/summexecedit/
SCHEMA.md). The loader reads that file from a path (JSON list or JSON lines) or downloads it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from evaluator.benchmarks.registry import (
    BenchmarkSpec,
    LoadedBenchmark,
    SliceSpec,
    register,
    resolve_source,
)
from evaluator.benchmarks.summedits import (
    DOMAINS,
    binary_label,
    hub_file,
    optional_str,
    read_json_records,
    record_name,
    require_str,
)
from evaluator.core.errors import IngestError
from evaluator.core.types import Sample

NAME = "summexecedit"
HUB_ID = "Salesforce/summexecedit"
HUB_FILENAME = "defies_summedits_final_all_combined.json"

# edit_type -> label: "summedits" rows are the consistent SummEdits edits, "summexecedit" rows
# the new inconsistent executable edits (paper §4: 2,121 inconsistent + 2,120 consistent ones).
EDIT_TYPE_LABEL: dict[str, int] = {"summedits": 1, "summexecedit": 0}

# Paper Table 6: rows per domain and the share of inconsistent ones (in %).
PAPER_TABLE6: dict[str, tuple[int, float]] = {
    "scitldr": (307, 58.31),
    "news": (567, 47.8),
    "podcast": (344, 58.72),
    "billsum": (608, 44.9),
    "samsum": (450, 51.11),
    "shakespeare": (511, 41.3),
    "qmsumm": (334, 50.3),
    "ectsum": (416, 47.12),
    "sales_email": (368, 57.1),
    "sales_call": (336, 53.87),
}
PAPER_TOTAL = 4241
PAPER_INCONSISTENT = 2121

# Spellings of the ten domains other than the SummEdits file names (as in the paper's Table 6).
_DOMAIN_ALIASES: dict[str, str] = {
    "qmsum": "qmsumm",
    "bill_sum": "billsum",
    "sam_sum": "samsum",
    "ect_sum": "ectsum",
    "sci_tldr": "scitldr",
    "salescall": "sales_call",
    "salesemail": "sales_email",
    "shakespeare_plays": "shakespeare",
    "shkspr": "shakespeare",
    "podcasts": "podcast",
}


def normalise_domain(raw: str) -> str | None:
    """The SummEdits domain for a spelling such as 'Sales Email' or 'QMSum'; None if unknown."""
    key = raw.strip().lower().replace(" ", "_").replace("-", "_")
    key = _DOMAIN_ALIASES.get(key, key)
    return key if key in DOMAINS else None


def _to_sample(rec: Any, index: int, *, file: Path) -> Sample:
    record = record_name(index, rec, id_key="sample_id")
    if not isinstance(rec, dict):
        raise IngestError(
            f"expected a JSON object, found {type(rec).__name__}", file=str(file), record=record
        )
    sample_id = require_str(rec, "sample_id", file=file, record=record)
    edit_type = require_str(rec, "edit_type", file=file, record=record).strip().lower()
    if edit_type not in EDIT_TYPE_LABEL:
        raise IngestError(
            f"edit_type must be one of {sorted(EDIT_TYPE_LABEL)}, found {rec['edit_type']!r:.40}",
            file=str(file),
            record=record,
            field="edit_type",
        )
    label = EDIT_TYPE_LABEL[edit_type]
    if "label" in rec and binary_label(rec["label"], file=file, record=record) != label:
        raise IngestError(
            f"label {rec['label']!r} contradicts edit_type {edit_type!r} (which means label "
            f"{label})",
            file=str(file),
            record=record,
            field="label",
        )
    raw_domain = require_str(rec, "domain", file=file, record=record)
    domain = normalise_domain(raw_domain)
    if domain is None:
        raise IngestError(
            f"unknown domain {raw_domain!r}; known: {', '.join(DOMAINS)}",
            file=str(file),
            record=record,
            field="domain",
        )
    attributes = {"edit_type": edit_type}
    model = optional_str(rec, "model", file=file, record=record)
    if model and model.strip():
        # The edit model made the inconsistent rows; consistent rows are SummEdits edits.
        attributes["edit_model" if label == 0 else "model"] = model.strip()
    for key in ("original_text", "replace_text"):
        value = optional_str(rec, key, file=file, record=record)
        if value is not None:
            attributes[key] = value
    if raw_domain != domain:
        attributes["source_domain"] = raw_domain
    explanation = optional_str(rec, "explanation", file=file, record=record)
    return Sample(
        benchmark=NAME,
        sample_id=sample_id,
        split="test",
        unit="summary",
        summary=require_str(rec, "edited_summary", file=file, record=record),
        domain=domain,
        doc_id=require_str(rec, "doc_id", file=file, record=record),
        document=require_str(rec, "doc", file=file, record=record),
        seed_summary=require_str(rec, "original_summary", file=file, record=record),
        label=label,
        reference_explanation=explanation if explanation and explanation.strip() else None,
        attributes=attributes,
    )


def parse_file(path: Path) -> LoadedBenchmark:
    """All records of one SummExecEdit release file, as canonical samples."""
    records, fmt = read_json_records(path)
    if not records:
        raise IngestError("the file holds no records", file=str(path))
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(records):
        s = _to_sample(rec, i, file=path)
        if s.sample_id in seen:
            raise IngestError(
                f"duplicate sample_id {s.sample_id!r}: also record #{seen[s.sample_id]}",
                file=str(path),
                record=record_name(i, rec, id_key="sample_id"),
                field="sample_id",
            )
        seen[s.sample_id] = i
        samples.append(s)
    return LoadedBenchmark(samples=samples, notes=_notes(samples, path, fmt), sources=[str(path)])


def _notes(samples: list[Sample], path: Path, fmt: str) -> list[str]:
    n_inc = sum(s.label == 0 for s in samples)
    notes = [
        (
            f"{path.name}: {len(samples)} rows read as {fmt}; {n_inc} inconsistent, "
            f"{len(samples) - n_inc} consistent"
        )
    ]
    if (len(samples), n_inc) != (PAPER_TOTAL, PAPER_INCONSISTENT):
        notes.append(
            f"the paper reports {PAPER_TOTAL} rows ({PAPER_INCONSISTENT} inconsistent); this "
            f"file has {len(samples)} ({n_inc})"
        )
    per_domain = Counter(s.domain for s in samples)
    missing = [d for d in DOMAINS if d not in per_domain]
    if missing:
        notes.append(f"domains absent ({len(missing)} of {len(DOMAINS)}): {', '.join(missing)}")
    return notes


def _file_in(folder: Path) -> Path:
    """The release file in a folder: its hub name, else the only .json/.jsonl file there."""
    named = folder / HUB_FILENAME
    if named.is_file():
        return named
    candidates = sorted([*folder.glob("*.json"), *folder.glob("*.jsonl")])
    if len(candidates) == 1:
        return candidates[0]
    found = ", ".join(p.name for p in candidates) or "none"
    raise IngestError(
        f"expected {HUB_FILENAME} (or exactly one .json/.jsonl file) in this folder; found: "
        f"{found}",
        file=str(folder),
    )


def load(source: str | Path, *, revision: str | None = None) -> LoadedBenchmark:
    """SummExecEdit from its release file (or a folder holding it), or "hub"."""
    if str(source) == "hub":
        loaded = parse_file(hub_file(HUB_ID, HUB_FILENAME, revision=revision))
        loaded.sources = [
            f"hf://datasets/{HUB_ID}/{HUB_FILENAME}" + (f"@{revision}" if revision else "")
        ]
        return loaded
    path = resolve_source(source)
    return parse_file(_file_in(path) if path.is_dir() else path)


CITATION = """@article{thorat2024summexecedit,
    title = {{SummExecEdit}: A Factual Consistency Benchmark in Summarization
             with Executable Edits},
    author = {Thorat, Onkar and Laban, Philippe and Wu, Chien-Sheng},
    journal = {arXiv preprint arXiv:2412.13378},
    year = {2024},
    url = {https://arxiv.org/abs/2412.13378}
}"""

SPEC = register(
    BenchmarkSpec(
        release_folder="summexecedit",
        release_files="*.json*",  # the rows live on the hub when no file is there
        name=NAME,
        title="SummExecEdit",
        task="detection+explanation",
        units=("summary",),
        splits=("test",),
        slices=(
            SliceSpec("domain", "domain"),
            SliceSpec("edit_model", "attributes.edit_model", with_consistent=True),
        ),
        primary_metric="detection_accuracy",
        license="CC-BY-4.0 (Hugging Face dataset card); documents keep their upstream licenses",
        citation=CITATION,
        source=f"Hugging Face dataset {HUB_ID}, {HUB_FILENAME} (4,241 rows); no GitHub release",
        description=(
            "Executable edits: GPT4-Turbo or Claude3-Opus replaces one substring of a SummEdits "
            "seed summary to make it inconsistent and explains why (date, number and antonym "
            "edits removed). 2,121 inconsistent + 2,120 consistent SummEdits edits, 10 domains. "
            "Metrics: DA (detection accuracy on all rows), DS (share of inconsistent rows "
            "detected), ES (LLM-judge grade of the explanation, EvalV4), JS (mean of DS x ES)."
        ),
        loader=load,
        overall="pooled",
        domains=DOMAINS,
        hub_id=HUB_ID,
        caveats=(
            (
                "No rows are on these machines: the file is only on the Hugging Face hub. The "
                "loader follows the dataset card's field list and is tested on records written in "
                "that shape; the first real ingest should be checked against the paper (4,241 "
                "rows, 2,121 inconsistent; per-domain counts in its Table 6)."
            ),
            (
                "The label is derived from edit_type: 'summedits' = consistent SummEdits edit (1), "
                "'summexecedit' = new inconsistent executable edit (0)."
            ),
            (
                "attributes.edit_model is set on inconsistent rows only (the model that made the "
                "edit); the edit_model slice adds every consistent row, as SummEdits does per edit "
                "type."
            ),
            (
                "A single test split: the release has no dev split, so score-only detectors need a "
                "fixed threshold or one tuned elsewhere."
            ),
        ),
        loader_options={
            "revision": "Hugging Face revision (commit) to download with --from hub; default: main",
        },
    )
)
