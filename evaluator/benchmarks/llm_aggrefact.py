"""LLM-AggreFact (Tang, Laban & Durrett, EMNLP 2024, the MiniCheck paper): grounded claims.

Eleven datasets of claims written by LLMs (one of human-written claims) with a grounding document
each, labelled 1 = supported by the document, 0 = not. Released only on the Hugging Face hub
(`lytang/LLM-AggreFact`, gated: evaluation use only) as Parquet shards `data/dev-*.parquet` and
`data/test-*.parquet` with the fields `dataset`, `doc`, `claim`, `label`,
`contamination_identifier`. The loader reads those shards (or the same records as JSON lines, a
JSON list or CSV) from a path, or downloads them ("hub").

Protocol, as the authors' code evaluates (Liyan06/MiniCheck: `minicheck/minicheck.py` labels a
claim supported when its probability is > 0.5; `benchmark_evaluation_demo.ipynb` scores the test
split with those labels): each claim is checked against its document as one unit; a checker
that outputs the probability of "supported" is labelled at the fixed threshold 0.5 (no
per-dataset tuning); balanced accuracy per dataset on the test split; the benchmark's number is
the unweighted mean of the eleven per-dataset BAccs. (The paper's text could not be read here;
the protocol is taken from that code and notebook.)
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluator.benchmarks.registry import (
    BenchmarkSpec,
    LoadedBenchmark,
    SliceSpec,
    register,
    resolve_source,
)
from evaluator.benchmarks.summedits import binary_label, read_json_records, require_str
from evaluator.core.errors import IngestError
from evaluator.core.types import Sample

NAME = "llm_aggrefact"
HUB_ID = "lytang/LLM-AggreFact"
UNIT = "claim"
# the MiniCheck protocol: P(supported) >= 0.5 is "supported"
THRESHOLD = 0.5

# The eleven datasets, as the release's `dataset` field spells them, in the leaderboard's order.
DATASETS: tuple[str, ...] = (
    "AggreFact-CNN",
    "AggreFact-XSum",
    "TofuEval-MediaS",
    "TofuEval-MeetB",
    "Wice",
    "Reveal",
    "ClaimVerify",
    "FactCheck-GPT",
    "ExpertQA",
    "Lfqa",
    "RAGTruth",
)
# The leaderboard site's column headers (llm-aggrefact.github.io, src/app/data.tsx) -> dataset.
LEADERBOARD_COLUMNS: dict[str, str] = {
    "CNN": "AggreFact-CNN",
    "XSum": "AggreFact-XSum",
    "MediaS": "TofuEval-MediaS",
    "MeetB": "TofuEval-MeetB",
    "WiCE": "Wice",
    "REVEAL": "Reveal",
    "ClaimVerify": "ClaimVerify",
    "FactCheck": "FactCheck-GPT",
    "ExpertQA": "ExpertQA",
    "LFQA": "Lfqa",
    "RAGTruth": "RAGTruth",
}
_BY_KEY: dict[str, str] = {
    **{d.casefold(): d for d in DATASETS},
    **{c.casefold(): d for c, d in LEADERBOARD_COLUMNS.items()},
}
# release split names -> FactBoard splits
SPLITS: dict[str, str] = {"dev": "dev", "validation": "dev", "test": "test"}
SUFFIXES = (".parquet", ".jsonl", ".json", ".csv")
HUB_PATTERNS = ["data/*.parquet", "*.md"]


def dataset_name(raw: str) -> str | None:
    """The release's spelling of a dataset ('wice', 'WiCE', 'Wice' -> 'Wice'); None if unknown."""
    return _BY_KEY.get(raw.strip().casefold())


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


# ------------------------------------------------------------------------------------- files


def split_of_file(path: Path) -> str | None:
    """The split a release file holds, from its name ('dev-00000-of-00001.parquet' -> dev)."""
    stem = path.name.casefold()
    for name, split in SPLITS.items():
        if stem == name or stem.startswith((name + "-", name + "_", name + ".")):
            return split
    return None


def _read_parquet(path: Path) -> list[dict[str, object]]:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except Exception as e:  # truncated, not Parquet, unreadable
        raise IngestError(f"cannot read Parquet: {type(e).__name__}: {e}", file=str(path)) from None


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise IngestError(f"cannot read file: {e}", file=str(path)) from None
    except UnicodeDecodeError as e:
        raise IngestError(f"not UTF-8 text: {e}", file=str(path)) from None
    return list(csv.DictReader(io.StringIO(text, newline="")))


def read_records(path: Path) -> list[Any]:
    """The records of one release file (Parquet, JSON lines, a JSON list or CSV)."""
    suffix = path.suffix.casefold()
    if suffix == ".parquet":
        return _read_parquet(path)
    if suffix == ".csv":
        return _read_csv(path)
    if suffix in (".json", ".jsonl"):
        return read_json_records(path)[0]
    raise IngestError(
        f"unsupported file type {path.suffix!r}; expected one of {', '.join(SUFFIXES)}",
        file=str(path),
    )


def release_files(folder: Path) -> list[Path]:
    """The data files of a release folder: the hub layout's `data/` shards, else every data
    file in the folder (not the leaderboard snapshots kept beside a release)."""
    data = folder / "data"
    base = data if data.is_dir() else folder
    files = sorted(p for p in base.iterdir() if p.is_file() and p.suffix.casefold() in SUFFIXES)
    files = [p for p in files if "leaderboard" not in p.name.casefold()]
    if not files:
        raise IngestError(
            "no LLM-AggreFact data file here (expected data/dev-*.parquet and "
            f"data/test-*.parquet, or dev/test files ending in {', '.join(SUFFIXES)})",
            file=str(folder),
        )
    return files


# ------------------------------------------------------------------------------------ records


def _record_name(index: int) -> str:
    return f"#{index}"


def _to_sample(rec: Any, index: int, split: str | None, *, file: Path) -> Sample:
    record = _record_name(index)
    if not isinstance(rec, Mapping):
        raise IngestError(
            f"expected a record with fields, found {type(rec).__name__}",
            file=str(file),
            record=record,
        )
    raw_split = rec.get("split")
    if raw_split is not None and str(raw_split).strip():
        mapped = SPLITS.get(str(raw_split).strip().casefold())
        if mapped is None:
            raise IngestError(
                f"unknown split {raw_split!r:.40}; known: {', '.join(SPLITS)}",
                file=str(file),
                record=record,
                field="split",
            )
        split = mapped
    if split is None:
        raise IngestError(
            "cannot tell the split: name the file dev-*/test-* (as the hub release does) or "
            "give each record a 'split' field",
            file=str(file),
            record=record,
        )
    raw_ds = require_str(rec, "dataset", file=file, record=record)
    dataset = dataset_name(raw_ds)
    if dataset is None:
        raise IngestError(
            f"unknown dataset {raw_ds!r:.60}; known: {', '.join(DATASETS)}",
            file=str(file),
            record=record,
            field="dataset",
        )
    doc = require_str(rec, "doc", file=file, record=record)
    claim = require_str(rec, "claim", file=file, record=record)
    if "label" not in rec:
        raise IngestError("required field is missing", file=str(file), record=record, field="label")
    label = binary_label(rec["label"], file=file, record=record)
    attributes: dict[str, str] = {}
    ident = rec.get("contamination_identifier")
    if ident is not None:
        if not isinstance(ident, str):
            raise IngestError(
                f"expected a string, found {type(ident).__name__}",
                file=str(file),
                record=record,
                field="contamination_identifier",
            )
        if ident.strip():
            attributes["contamination_identifier"] = ident.strip()
    if raw_ds != dataset:
        attributes["source_dataset"] = raw_ds
    return Sample(
        benchmark=NAME,
        # the release has no ids: one from the content, stable under re-ordering
        sample_id=f"{dataset}-{split}-{_digest(doc, claim)[:16]}",
        split=split,
        unit=UNIT,
        summary=claim,
        domain=dataset,
        doc_id=f"doc-{_digest(doc)[:16]}",
        document=doc,
        label=label,
        attributes=attributes,
    )


def parse_files(files: Iterable[Path]) -> LoadedBenchmark:
    """Every record of the given release files, as canonical claim samples."""
    samples: list[Sample] = []
    sources: list[str] = []
    per_file: list[str] = []
    seen: Counter[str] = Counter()
    repeats = 0
    for path in files:
        records = read_records(path)
        if not records:
            raise IngestError("the file holds no records", file=str(path))
        split = split_of_file(path)
        for i, rec in enumerate(records):
            s = _to_sample(rec, i, split, file=path)
            seen[s.sample_id] += 1
            if seen[s.sample_id] > 1:  # the same claim on the same document, listed again
                s = replace(s, sample_id=f"{s.sample_id}-{seen[s.sample_id]}")
                repeats += 1
            samples.append(s)
        sources.append(str(path))
        per_file.append(f"{path.name}: {len(records)} records")
    notes = [*per_file, *_notes(samples)]
    if repeats:
        notes.append(f"{repeats} repeated (document, claim) pairs kept with a -N id suffix")
    return LoadedBenchmark(samples=samples, notes=notes, sources=sources)


def _notes(samples: list[Sample]) -> list[str]:
    notes = []
    for split in ("dev", "test"):
        rows = [s for s in samples if s.split == split]
        if not rows:
            notes.append(f"no {split} records")
            continue
        per = Counter(s.domain for s in rows)
        missing = [d for d in DATASETS if d not in per]
        n_unsup = sum(s.label == 0 for s in rows)
        notes.append(
            f"{split}: {len(rows)} claims ({n_unsup} unsupported) over {len(per)} datasets"
            + (f"; absent: {', '.join(missing)}" if missing else "")
        )
    return notes


def _hub_folder(revision: str | None) -> Path:
    """Download the release's Parquet shards; any failure becomes an IngestError."""
    where = f"hf://datasets/{HUB_ID}" + (f"@{revision}" if revision else "")
    try:
        import huggingface_hub

        local = huggingface_hub.snapshot_download(
            repo_id=HUB_ID,
            repo_type="dataset",
            revision=revision,
            allow_patterns=HUB_PATTERNS,
        )
    except Exception as e:  # offline, gated without a token, 404, package missing
        raise IngestError(
            f"could not download from the Hugging Face hub ({type(e).__name__}: {e}). "
            "The dataset is gated: accept its terms on the hub and set HF_TOKEN; or give a "
            "local copy of its data/ folder with --from PATH.",
            file=where,
        ) from None
    return Path(local)


def load(source: str | Path, *, revision: str | None = None) -> LoadedBenchmark:
    """LLM-AggreFact from a release folder, one data file, or "hub"."""
    if str(source) == "hub":
        folder = _hub_folder(revision)
        loaded = parse_files(release_files(folder))
        loaded.sources = [
            f"hf://datasets/{HUB_ID}/{Path(s).relative_to(folder).as_posix()}"
            + (f"@{revision}" if revision else "")
            for s in loaded.sources
        ]
        return loaded
    path = resolve_source(source)
    return parse_files(release_files(path) if path.is_dir() else [path])


CITATION = """@inproceedings{tang-etal-2024-minicheck,
    title = {{MiniCheck}: Efficient Fact-Checking of {LLM}s on Grounding Documents},
    author = {Tang, Liyan and Laban, Philippe and Durrett, Greg},
    booktitle = {Proceedings of the 2024 Conference on Empirical Methods in Natural Language
                 Processing},
    year = {2024},
    url = {https://arxiv.org/abs/2404.10774}
}"""

THRESHOLD_PROTOCOL = (
    "The MiniCheck authors' protocol: a checker that outputs the probability that the claim is "
    "supported is labelled at the fixed threshold 0.5, the same on every dataset (their "
    "benchmark_evaluation_demo.ipynb: 'pred_label converts the raw probability into 1/0 using "
    "the threshold 0.5'); no threshold is tuned per dataset. FactBoard's default ('auto') does "
    "that for scores in [0, 1] (a probability of exactly 0.5 counts as supported here, as "
    "unsupported in the authors' code, which tests > 0.5); scores outside [0, 1] are not "
    "probabilities and need a threshold given with the run (a fixed one, or 'dev' / "
    "'per-domain-dev', tuned on the dev split and labelled as such). LLMs answer supported / "
    "unsupported and are scored on those labels."
)

SPEC = register(
    BenchmarkSpec(
        release_folder="llm_aggrefact",
        release_files="data/*.parquet",  # ../shared holds only leaderboard snapshots
        name=NAME,
        title="LLM-AggreFact",
        task="detection",
        units=(UNIT,),
        splits=("dev", "test"),
        slices=(SliceSpec("dataset", "domain"),),
        primary_metric="balanced_accuracy",
        license=(
            "CC-BY-ND-4.0 (Hugging Face dataset card; gated: for use as an evaluation benchmark "
            "only, not for pre-training or fine-tuning). Documents keep their upstream licenses."
        ),
        citation=CITATION,
        source=(
            f"Hugging Face dataset {HUB_ID}, data/dev-*.parquet (30,420 rows) and "
            "data/test-*.parquet (29,320 rows) per its card; no GitHub copy of the data "
            "(Liyan06/MiniCheck holds code only)"
        ),
        description=(
            "Fact-checking claims against grounding documents: 11 datasets of claims made by "
            "recent LLMs (WiCE: human-written) from summarization (AggreFact-CNN/XSum, TofuEval "
            "MediaSum and MeetingBank), retrieve-then-generate QA (ClaimVerify, ExpertQA, LFQA, "
            "RAGTruth) and post-hoc grounding (WiCE, REVEAL, FactCheck-GPT). Unit: one claim "
            "(usually one sentence) with its document. Metric: balanced accuracy per dataset on "
            "the test split; Overall = the unweighted mean of the per-dataset BAccs (the "
            f"leaderboard's Avg). Threshold: {THRESHOLD_PROTOCOL}"
        ),
        loader=load,
        overall="mean_over_domains",
        domains=DATASETS,
        hub_id=HUB_ID,
        fixed_threshold=THRESHOLD,
        caveats=(
            (
                "No rows are on these machines: the data is only on the Hugging Face hub "
                "(gated), which cannot be reached here. The loader follows the dataset card's "
                "fields (dataset, doc, claim, label with 1 = supported, "
                "contamination_identifier; dev and test splits) and is tested on records "
                "written in that schema, in the hub's Parquet layout and through a fake hub. The "
                "first real ingest should be checked against the card's sizes (dev 30,420, test "
                "29,320 rows)."
            ),
            (
                "The release has no sample ids: each claim's id is <dataset>-<split>-<hash of "
                "document and claim>; doc_id hashes the document, so a document's claims are "
                "scored together."
            ),
            (
                "The published numbers (leaderboard snapshots of 2024-10 and 2025-09) are on the "
                "test split; the board shows them beside runs with their source and date."
            ),
            (
                "A detector sees each claim as the text to check (unit 'claim'); detectors that "
                "split a summary into sentences or chunks do the same to a claim as their "
                "authors do, and record it in the run."
            ),
        ),
        loader_options={
            "revision": "Hugging Face revision (commit) to download with --from hub; default: main",
        },
    )
)
