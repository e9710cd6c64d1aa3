"""TofuEval (Tang et al., NAACL 2024): topic-focused dialogue summaries annotated per sentence.

Reads the amazon-science/tofueval release folder:
  factual_consistency/{dataset}_factual_eval_{split}.csv  one row per summary sentence
  topic_category/{dataset}_topic_category.json           topic -> "main" | "marginal"
  document_ids_dev_test_split.json                       {split: {dataset: [doc ids]}}
and emits one sentence-unit sample per annotated sentence plus one summary-unit sample per summary
(label 0 when any of its sentences is inconsistent, as in the paper §3.4).

The release carries document ids only. Documents are joined from MediaSum (`news_dialogue.json`)
and MeetingBank (HF `lytang/MeetingBank-transcript`) when the `mediasum` / `meetingbank` options
point at them; otherwise `document` is None.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.benchmarks.registry import (
    BenchmarkSpec,
    LoadedBenchmark,
    SliceSpec,
    register,
    resolve_source,
)
from evaluator.core.errors import IngestError
from evaluator.core.types import CONSISTENT, INCONSISTENT, Sample

NAME = "tofueval"
DATASETS: tuple[str, ...] = ("mediasum", "meetingbank")
SPLITS: tuple[str, ...] = ("dev", "test")
COLUMNS: tuple[str, ...] = (
    "doc_id",
    "annotation_id",
    "topic",
    "model_name",
    "sent_idx",
    "summ_sent",
    "sent_label",
    "exp",
    "type",
)
REQUIRED_VALUES: tuple[str, ...] = ("doc_id", "topic", "model_name", "sent_idx", "summ_sent")
LABELS: dict[str, int] = {"yes": CONSISTENT, "no": INCONSISTENT}
TOPIC_TYPES: tuple[str, ...] = ("main", "marginal")
ERROR_TYPES: tuple[str, ...] = (
    "Extrinsic Information",
    "Nuanced Meaning Shift",
    "Reasoning Error",
    "Mis-Referencing",
    "Tense/Modality Error",
    "Stating Opinion as Fact",
    "Contradiction",
)
SPLIT_FILE = "document_ids_dev_test_split.json"
REPO = "github.com/amazon-science/tofueval"
COMMIT = "ade0f385448e0ad25936091ffbb3df73fa62aeee"
MEETINGBANK_HUB_ID = "lytang/MeetingBank-transcript"
MEETINGBANK_HUB_FILE = "test.csv"
DOCUMENT_SUFFIXES: tuple[str, ...] = (".json", ".jsonl", ".csv", ".parquet")
DOCUMENT_COLUMNS: tuple[str, ...] = ("meeting_id", "doc_id", "id", "source", "speaker", "utt")
ID_COLUMNS: tuple[str, ...] = ("meeting_id", "doc_id", "id")


@dataclass(frozen=True)
class SentenceRow:
    """One validated row of a factual_consistency CSV."""

    dataset: str
    split: str
    line: int
    doc_id: str
    annotation_id: str
    topic: str
    model_name: str
    sent_idx: int
    sentence: str
    label: int
    explanation: str | None
    error_types: tuple[str, ...]

    @property
    def summary_key(self) -> tuple[str, str, str]:
        return (self.doc_id, self.topic, self.model_name)


def annotation_file(root: Path, dataset: str, split: str) -> Path:
    """Where the release keeps the sentence annotations of one dataset and split."""
    return root / "factual_consistency" / f"{dataset}_factual_eval_{split}.csv"


def summary_id_of(dataset: str, split: str, doc_id: str, topic: str, model_name: str) -> str:
    """The stable id of a summary (also the sample_id of its summary-unit row)."""
    return f"{dataset}:{split}:{doc_id}:{topic}:{model_name}"


# --------------------------------------------------------------------------- release files


def _release_root(source: str | Path) -> Path:
    if str(source) == "hub":
        raise IngestError(
            "TofuEval has no Hugging Face hub release (the annotations are on GitHub, "
            f"{REPO} at commit {COMMIT}); clone it and give its folder with --from PATH",
            file="hub",
        )
    root = resolve_source(source)
    if not root.is_dir():
        raise IngestError(
            "expected the TofuEval release folder (factual_consistency/, topic_category/, "
            f"{SPLIT_FILE}), got a file",
            file=str(root),
        )
    return root


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise IngestError("file is missing from the TofuEval folder", file=str(path))
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise IngestError(f"malformed JSON: {e}", file=str(path)) from None


def read_split_ids(root: Path) -> dict[tuple[str, str], list[str]]:
    """(split, dataset) -> doc ids from document_ids_dev_test_split.json."""
    path = root / SPLIT_FILE
    data = _read_json(path)
    out: dict[tuple[str, str], list[str]] = {}
    for split in SPLITS:
        for dataset in DATASETS:
            ids = data.get(split, {}).get(dataset) if isinstance(data, dict) else None
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise IngestError(
                    "expected a list of document ids", file=str(path), field=f"{split}.{dataset}"
                )
            out[(split, dataset)] = ids
    return out


def read_topic_categories(root: Path, dataset: str) -> dict[str, str]:
    """topic -> "main" | "marginal" for one dataset."""
    path = root / "topic_category" / f"{dataset}_topic_category.json"
    data = _read_json(path)
    if not isinstance(data, dict):
        raise IngestError("expected a JSON object topic -> category", file=str(path))
    for topic, category in data.items():
        if category not in TOPIC_TYPES:
            raise IngestError(
                f"category {category!r} is not one of {TOPIC_TYPES}", file=str(path), field=topic
            )
    return dict(data)


def _parse_error_types(value: str, path: Path, line: int) -> tuple[str, ...]:
    out: list[str] = []
    for part in value.split(","):
        name = part.strip()
        if not name:
            continue
        if name not in ERROR_TYPES:
            raise IngestError(
                f"unknown error type {name!r}; known: {', '.join(ERROR_TYPES)}",
                file=str(path),
                record=f"line {line}",
                field="type",
            )
        if name not in out:
            out.append(name)
    return tuple(out)


def _parse_row(
    values: dict[str, str], dataset: str, split: str, path: Path, line: int
) -> SentenceRow:
    for column in REQUIRED_VALUES:
        if not values[column].strip():
            raise IngestError("empty value", file=str(path), record=f"line {line}", field=column)
    label = LABELS.get(values["sent_label"].strip().lower())
    if label is None:
        raise IngestError(
            f"sent_label {values['sent_label']!r} is not 'yes' or 'no'",
            file=str(path),
            record=f"line {line}",
            field="sent_label",
        )
    try:
        sent_idx = int(values["sent_idx"])
    except ValueError:
        sent_idx = 0
    if sent_idx < 1:
        raise IngestError(
            f"sent_idx {values['sent_idx']!r} is not a positive integer",
            file=str(path),
            record=f"line {line}",
            field="sent_idx",
        )
    explanation = values["exp"].strip() or None
    return SentenceRow(
        dataset=dataset,
        split=split,
        line=line,
        doc_id=values["doc_id"],
        annotation_id=values["annotation_id"],
        topic=values["topic"],
        model_name=values["model_name"],
        sent_idx=sent_idx,
        sentence=values["summ_sent"],
        label=label,
        explanation=explanation,
        error_types=_parse_error_types(values["type"], path, line),
    )


def _csv_records(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(first physical line of the record, fields); a truncated quoted field raises IngestError."""
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.reader(f, strict=True)
            start = 1
            for fields in reader:
                yield start, fields
                start = reader.line_num + 1
    except csv.Error as e:
        raise IngestError(f"malformed CSV: {e}", file=str(path), record=f"line {start}") from None
    except UnicodeDecodeError as e:
        raise IngestError(f"not UTF-8 text: {e}", file=str(path)) from None


def read_annotations(path: Path, dataset: str, split: str) -> tuple[list[SentenceRow], list[str]]:
    """The validated rows of one annotation CSV, exact duplicate rows dropped (and noted)."""
    if not path.is_file():
        raise IngestError("file is missing from the TofuEval folder", file=str(path))
    records = _csv_records(path)
    first = next(records, None)
    if first is None:
        raise IngestError("empty file (no header)", file=str(path), record="line 1")
    header = [h.strip() for h in first[1]]
    for column in COLUMNS:
        if column not in header:
            raise IngestError(
                f"missing column {column!r} (header: {', '.join(header)})",
                file=str(path),
                record="line 1",
                field=column,
            )
    index = {column: header.index(column) for column in COLUMNS}
    rows: list[SentenceRow] = []
    notes: list[str] = []
    seen: dict[tuple[str, str, str, int], tuple[int, tuple[str, ...]]] = {}
    for line, fields in records:
        if not any(f.strip() for f in fields):
            continue
        if len(fields) != len(header):
            raise IngestError(
                f"{len(fields)} fields where the header has {len(header)}",
                file=str(path),
                record=f"line {line}",
            )
        row = _parse_row({c: fields[i] for c, i in index.items()}, dataset, split, path, line)
        key = (*row.summary_key, row.sent_idx)
        if key in seen:
            first_line, first_fields = seen[key]
            if first_fields != tuple(fields):
                raise IngestError(
                    f"id collision: sentence {row.sent_idx} of summary {row.summary_key} is also "
                    f"on line {first_line} with different content",
                    file=str(path),
                    record=f"line {line}",
                    field="sent_idx",
                )
            notes.append(
                f"{path.name} line {line} exactly repeats line {first_line} (doc {row.doc_id!r}, "
                f"topic {row.topic!r}, {row.model_name}, sentence {row.sent_idx}); dropped"
            )
            continue
        seen[key] = (line, tuple(fields))
        rows.append(row)
    return rows, notes


def check_split(rows: list[SentenceRow], expected: list[str], path: Path, split_file: Path) -> None:
    """Every document of the CSV is listed under its split, and every listed document has rows."""
    listed = set(expected)
    for row in rows:
        if row.doc_id not in listed:
            raise IngestError(
                f"document {row.doc_id!r} is not listed under {row.split}.{row.dataset} "
                f"in {split_file.name}",
                file=str(path),
                record=f"line {row.line}",
                field="doc_id",
            )
    present = {row.doc_id for row in rows}
    missing = [d for d in expected if d not in present]
    if missing:
        raise IngestError(
            f"{len(missing)} document(s) listed in {split_file.name} have no annotated sentence "
            f"in this file: {', '.join(missing[:5])} (truncated file?)",
            file=str(path),
            field="doc_id",
        )


# --------------------------------------------------------------------------- samples


def _sentence_sample(row: SentenceRow, topic_type: str, document: str | None) -> Sample:
    summary_id = summary_id_of(row.dataset, row.split, *row.summary_key)
    return Sample(
        benchmark=NAME,
        sample_id=f"{summary_id}:{row.sent_idx}",
        split=row.split,
        unit="sentence",
        summary=row.sentence,
        domain=row.dataset,
        summary_id=summary_id,
        doc_id=row.doc_id,
        document=document,
        label=row.label,
        error_types=row.error_types,
        reference_explanation=row.explanation,
        attributes={
            "topic": row.topic,
            "topic_type": topic_type,
            "summarizer": row.model_name,
            "sent_idx": str(row.sent_idx),
            "annotation_id": row.annotation_id,
        },
    )


def _summary_sample(sentences: list[SentenceRow], topic_type: str, document: str | None) -> Sample:
    sentences = sorted(sentences, key=lambda r: r.sent_idx)
    first = sentences[0]
    summary_id = summary_id_of(first.dataset, first.split, *first.summary_key)
    error_types: list[str] = []
    for row in sentences:
        error_types.extend(t for t in row.error_types if t not in error_types)
    explanations = [
        f"Sentence {row.sent_idx}: {row.explanation}" for row in sentences if row.explanation
    ]
    consistent = all(row.label == CONSISTENT for row in sentences)
    return Sample(
        benchmark=NAME,
        sample_id=summary_id,
        split=first.split,
        unit="summary",
        summary=" ".join(row.sentence for row in sentences),
        domain=first.dataset,
        summary_id=summary_id,
        doc_id=first.doc_id,
        document=document,
        label=CONSISTENT if consistent else INCONSISTENT,
        error_types=tuple(error_types),
        reference_explanation="\n\n".join(explanations) or None,
        attributes={
            "topic": first.topic,
            "topic_type": topic_type,
            "summarizer": first.model_name,
            "annotation_id": first.annotation_id,
            "n_sentences": str(len(sentences)),
        },
    )


def _topic_type(row: SentenceRow, categories: dict[str, str], path: Path) -> str:
    topic_type = categories.get(row.topic)
    if topic_type is None:
        raise IngestError(
            f"topic {row.topic!r} is missing from topic_category/{row.dataset}_topic_category.json",
            file=str(path),
            record=f"line {row.line}",
            field="topic",
        )
    return topic_type


def build_samples(
    rows: list[SentenceRow],
    categories: dict[str, str],
    documents: dict[str, str] | None,
    path: Path,
) -> tuple[list[Sample], list[str]]:
    """Sentence samples in file order, then one summary sample per summary (first-seen order)."""
    samples: list[Sample] = []
    summaries: dict[tuple[str, str, str], list[SentenceRow]] = {}
    for row in rows:
        document = documents.get(row.doc_id) if documents is not None else None
        samples.append(_sentence_sample(row, _topic_type(row, categories, path), document))
        summaries.setdefault(row.summary_key, []).append(row)
    notes: list[str] = []
    for key, sentences in summaries.items():
        document = documents.get(key[0]) if documents is not None else None
        samples.append(_summary_sample(sentences, categories[key[1]], document))
        indexes = sorted(r.sent_idx for r in sentences)
        if indexes != list(range(1, len(indexes) + 1)):
            summary_id = summary_id_of(sentences[0].dataset, sentences[0].split, *key)
            notes.append(
                f"{path.name}: summary {summary_id} has sentences {indexes} only (not 1..n); "
                "its text joins the annotated ones"
            )
    return samples, notes


# --------------------------------------------------------------------------- documents


def iter_json_values(path: Path, chunk_size: int = 1 << 20) -> Iterator[tuple[int, Any]]:
    """(line, value) for each top-level value of a JSON array or a JSON Lines file, streamed.

    MediaSum's news_dialogue.json is several GB, so it is decoded one object at a time.
    """
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8") as f:
        buf, pos, line, eof = "", 0, 1, False
        in_array: bool | None = None
        closed = False

        def more() -> None:
            nonlocal buf, pos, eof
            extra = f.read(max(chunk_size, len(buf)))
            eof = not extra
            buf = buf[pos:] + extra
            pos = 0

        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n\ufeff,":
                if buf[pos] == "\n":
                    line += 1
                pos += 1
            if pos >= len(buf):
                if eof:
                    break
                more()
                continue
            char = buf[pos]
            if closed:
                raise IngestError(
                    "data after the closing ']'", file=str(path), record=f"line {line}"
                )
            if in_array is None:
                in_array = char == "["
                if in_array:
                    pos += 1
                    continue
            if in_array and char == "]":
                closed = True
                pos += 1
                continue
            try:
                value, end = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError as e:
                if eof:
                    raise IngestError(
                        f"malformed or truncated JSON: {e.msg}",
                        file=str(path),
                        record=f"line {line}",
                    ) from None
                more()
                continue
            yield line, value
            line += buf.count("\n", pos, end)
            pos = end
        if in_array and not closed:
            raise IngestError(
                "truncated JSON array (no closing ']')", file=str(path), record=f"line {line}"
            )


def _check_table_columns(names: list[str], path: Path) -> None:
    """A CSV/Parquet document table needs an id column and a `source` column."""
    if not any(c in names for c in ID_COLUMNS):
        raise IngestError(
            f"no document id column (one of {', '.join(ID_COLUMNS)}; columns: {', '.join(names)})",
            file=str(path),
            record="header",
            field="meeting_id",
        )
    if "source" not in names:
        raise IngestError(
            f"no transcript column (columns: {', '.join(names)})",
            file=str(path),
            record="header",
            field="source",
        )


def _table_records(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, record) for every row of a JSON/JSONL/CSV/Parquet document file."""
    suffix = path.suffix.lower()
    if suffix in (".json", ".jsonl"):
        for line, value in iter_json_values(path):
            yield f"line {line}", value
    elif suffix == ".csv":
        import pandas as pd

        try:
            header = list(pd.read_csv(path, dtype=str, nrows=0).columns)
            _check_table_columns(header, path)
            frame = pd.read_csv(
                path, dtype=str, keep_default_na=False, usecols=lambda c: c in DOCUMENT_COLUMNS
            )
        except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as e:
            raise IngestError(f"malformed CSV: {e}", file=str(path)) from None
        for i, record in enumerate(frame.to_dict("records"), start=1):
            yield f"row {i}", record
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(path).names
        except Exception as e:  # pyarrow raises several unrelated types for a bad file
            raise IngestError(f"unreadable Parquet file: {e}", file=str(path)) from None
        _check_table_columns(names, path)
        try:
            table = pq.read_table(path, columns=[c for c in names if c in DOCUMENT_COLUMNS])
        except Exception as e:
            raise IngestError(f"unreadable Parquet file: {e}", file=str(path)) from None
        for i, record in enumerate(table.to_pylist(), start=1):
            yield f"row {i}", record
    else:
        raise IngestError(
            f"unsupported document file type (use {', '.join(DOCUMENT_SUFFIXES)})", file=str(path)
        )


def _document_of(record: Any, path: Path, where: str) -> tuple[str, str]:
    """(doc id, transcript): a MediaSum dialogue (id, speaker, utt) or a (…id, source) row."""
    if not isinstance(record, dict):
        raise IngestError("expected an object/row", file=str(path), record=where)
    if "utt" in record or "speaker" in record:
        speakers, utts = record.get("speaker"), record.get("utt")
        if not isinstance(speakers, list) or not isinstance(utts, list):
            field = "utt" if isinstance(speakers, list) else "speaker"
            raise IngestError("expected a list", file=str(path), record=where, field=field)
        if len(speakers) != len(utts):
            raise IngestError(
                f"{len(speakers)} speakers for {len(utts)} utterances",
                file=str(path),
                record=where,
                field="utt",
            )
        doc_id = record.get("id")
        if not isinstance(doc_id, str) or not doc_id:
            raise IngestError("missing dialogue id", file=str(path), record=where, field="id")
        # the TofuEval README's recipe: one "speaker: utterance" line per turn, stripped
        text = "\n".join(f"{s}: {u}" for s, u in zip(speakers, utts, strict=True)).strip()
        return doc_id, text
    id_column = next((c for c in ID_COLUMNS if c in record), None)
    if id_column is None:
        raise IngestError(
            f"no document id column (one of {', '.join(ID_COLUMNS)})",
            file=str(path),
            record=where,
            field="meeting_id",
        )
    if "source" not in record:
        raise IngestError("no transcript column", file=str(path), record=where, field="source")
    doc_id, text = record[id_column], record["source"]
    if not isinstance(text, str):
        raise IngestError("transcript is not text", file=str(path), record=where, field="source")
    return str(doc_id), text


def _document_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(
        p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in DOCUMENT_SUFFIXES
    )
    if not files:
        raise IngestError(
            f"no document file ({', '.join(DOCUMENT_SUFFIXES)}) in the folder", file=str(path)
        )
    return files


def read_documents(path: Path, wanted: set[str], option: str) -> dict[str, str]:
    """doc id -> transcript for the wanted ids; every wanted id must be found."""
    found: dict[str, str] = {}
    for file in _document_files(path):
        for where, record in _table_records(file):
            doc_id, text = _document_of(record, file, where)
            if doc_id not in wanted:
                continue
            if doc_id in found and found[doc_id] != text:
                raise IngestError(
                    f"document {doc_id!r} appears twice with different text",
                    file=str(file),
                    record=where,
                    field="source",
                )
            found[doc_id] = text
    missing = sorted(wanted - set(found))
    if missing:
        raise IngestError(
            f"{len(missing)} of the {len(wanted)} TofuEval documents are not in the `{option}` "
            f"source: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}",
            file=str(path),
            field="meeting_id" if option == "meetingbank" else "id",
        )
    return found


def hub_download(repo_id: str, filename: str) -> Path:
    """A file of a Hugging Face dataset repo; a failure becomes an IngestError."""
    try:
        import huggingface_hub

        return Path(
            huggingface_hub.hf_hub_download(repo_id=repo_id, filename=filename, repo_type="dataset")
        )
    except Exception as e:  # offline, unknown repo, HTTP errors: all mean "not reachable"
        raise IngestError(
            f"could not reach the Hugging Face hub for {repo_id}/{filename} ({type(e).__name__}: "
            f"{e}); give a local path instead (--from PATH, or the option's PATH)",
            file=f"hf://datasets/{repo_id}/{filename}",
        ) from None


def _documents_source(dataset: str, value: str | Path) -> Path:
    if str(value) == "hub":
        if dataset != "meetingbank":
            raise IngestError(
                "MediaSum is not on the Hugging Face hub; download news_dialogue.json from "
                "github.com/zcgzcgzcg1/MediaSum and give its path",
                file="hub",
                field="mediasum",
            )
        return hub_download(MEETINGBANK_HUB_ID, MEETINGBANK_HUB_FILE)
    return resolve_source(value)


# --------------------------------------------------------------------------- loader


def load(
    source: str | Path,
    mediasum: str | Path | None = None,
    meetingbank: str | Path | None = None,
) -> LoadedBenchmark:
    """All TofuEval sentence and summary samples from the release folder `source`."""
    root = _release_root(source)
    split_ids = read_split_ids(root)
    options = {"mediasum": mediasum, "meetingbank": meetingbank}
    samples: list[Sample] = []
    notes: list[str] = []
    sources: list[str] = [str(root / SPLIT_FILE)]
    for dataset in DATASETS:
        categories = read_topic_categories(root, dataset)
        sources.append(str(root / "topic_category" / f"{dataset}_topic_category.json"))
        per_split: list[tuple[Path, list[SentenceRow]]] = []
        for split in SPLITS:
            path = annotation_file(root, dataset, split)
            rows, row_notes = read_annotations(path, dataset, split)
            check_split(rows, split_ids[(split, dataset)], path, root / SPLIT_FILE)
            per_split.append((path, rows))
            notes.extend(row_notes)
            sources.append(str(path))
        documents = None
        option = options[dataset]
        if option is not None:
            doc_path = _documents_source(dataset, option)
            wanted = {row.doc_id for _, rows in per_split for row in rows}
            documents = read_documents(doc_path, wanted, dataset)
            sources.append(str(doc_path))
            notes.append(f"{dataset}: {len(documents)} documents joined from {doc_path}")
        else:
            notes.append(
                f"{dataset}: documents not joined (TofuEval does not redistribute them; give the "
                f"`{dataset}` option), so `document` is empty"
            )
        for path, rows in per_split:
            built, build_notes = build_samples(rows, categories, documents, path)
            samples.extend(built)
            notes.extend(build_notes)
    return LoadedBenchmark(samples=samples, notes=notes, sources=sources)


CITATION = """@inproceedings{tang-etal-2024-tofueval,
    title = "{T}ofu{E}val: Evaluating Hallucinations of {LLM}s on Topic-Focused Dialogue
      Summarization",
    author = "Tang, Liyan  and Shalyminov, Igor  and Wong, Amy  and Burnsky, Jon  and
      Vincent, Jake  and Yang, Yu{'}an  and Singh, Siffi  and Feng, Song  and Song, Hwanjun  and
      Su, Hang  and Sun, Lijia  and Zhang, Yi  and Mansour, Saab  and McKeown, Kathleen",
    editor = "Duh, Kevin  and Gomez, Helena  and Bethard, Steven",
    booktitle = "Proceedings of the 2024 Conference of the North American Chapter of the Association
      for Computational Linguistics: Human Language Technologies (Volume 1: Long Papers)",
    month = jun,
    year = "2024",
    address = "Mexico City, Mexico",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2024.naacl-long.251",
    doi = "10.18653/v1/2024.naacl-long.251",
    pages = "4455--4480",
}"""

# where FactBoard runs and the paper's Table 3 stand together: they score different summaries
PAPER_POPULATION = (
    "FactBoard runs on TofuEval are scored on all 6 summarizers of the release, Model-Extra "
    "included (1,777 summaries, 4,946 sentences; test: 534 summaries, 1,510 sentences); the "
    "paper's Table 3 numbers are on its 5 summarizers (1,479 summaries; test: 444 summaries, "
    "1,208 sentences). Beside each other they are close but not the same population; the "
    "'Summarizer' view scores each summarizer alone."
)

SPEC = register(
    BenchmarkSpec(
        release_folder="tofueval",
        name=NAME,
        title="TofuEval",
        task="detection",
        units=("sentence", "summary"),
        splits=SPLITS,
        slices=(
            SliceSpec("dataset", "domain"),
            SliceSpec("topic_type", "attributes.topic_type"),
            SliceSpec("dataset+topic_type", ("domain", "attributes.topic_type")),
            SliceSpec("error_type", "error_types", multi=True, single_only=True),
            SliceSpec("summarizer", "attributes.summarizer"),
        ),
        primary_metric="balanced_accuracy",
        license=(
            "Annotations: MIT No Attribution (MIT-0), Amazon.com; the README asks that the "
            "benchmark not be used to train NLP models. Documents are not redistributed: MediaSum "
            "is for research purposes only; MeetingBank transcripts are Creative Commons "
            "(CC BY-NC-SA 4.0 on the lytang/MeetingBank-transcript card)."
        ),
        citation=CITATION,
        source=(
            f"{REPO} at commit {COMMIT}: factual_consistency/*.csv, topic_category/*.json, "
            f"{SPLIT_FILE}"
        ),
        description=(
            "Topic-focused summaries of MediaSum interviews and MeetingBank city-council meetings "
            "written by LLMs, each sentence labelled consistent/inconsistent by expert linguists "
            "with an explanation and error types for inconsistent ones. Scored per sentence and "
            "per summary (a summary is inconsistent if any sentence is), by dataset and by "
            "main/marginal topic (paper Table 3, test split)."
        ),
        loader=load,
        overall="pooled",
        domains=DATASETS,
        hub_id=None,
        caveats=(
            "TofuEval ships document ids only: without the mediasum/meetingbank options the "
            "`document` column is empty and no detector can be run.",
            "The release has a 6th anonymized summarizer, Model-Extra, that the paper does not "
            "describe: 1,777 summaries / 4,946 sentences. Without it the release has the paper's "
            "1,479 summaries but 3,965 sentences (paper: 3,966).",
            PAPER_POPULATION,
            "One exact duplicate row in meetingbank_factual_eval_dev.csv (LongBeachCC_10172017_17-"
            "0944, 'Incident on Blue Line train', Model-Extra, sentence 1) is dropped: MeetingBank "
            "dev has 1,623 sentences (1,333 consistent / 290 not), not the raw 1,624 / 1,334.",
            "Summarizer names are anonymized and the model order is shuffled across topics, so "
            "model_A..model_E do not name one LLM each; only Model-Extra is a fixed system.",
            "4 summaries have gaps in sent_idx (sentences absent from the annotation files); "
            "their summary text joins the annotated sentences only.",
            "Paper Table 2 (error rate of the 5 paper summarizers): main-topic rates are "
            "reproduced exactly (sentence 17.5% / 14.4%, summary 37.2% / 30.4% for MediaSum / "
            "MeetingBank); marginal-topic rates are higher in the release (sentence 34.8% / "
            "36.4%, summary 51.6% / 51.3% vs the paper's 27.8 / 27.8 and 46.0 / 43.6). The paper "
            "does not say why; its topic categories were post-processed (marginal and irrelevant "
            "merged) after annotation.",
        ),
        loader_options={
            "mediasum": (
                "MediaSum transcripts for the MediaSum samples: news_dialogue.json from "
                "github.com/zcgzcgzcg1/MediaSum (a JSON list of {id, speaker, utt, ...}, read as "
                "a stream), or a JSON/JSONL/CSV/Parquet file or folder with doc_id + source "
                "columns (e.g. the mediasum_{dev,test}_doc.csv the TofuEval README writes)."
            ),
            "meetingbank": (
                "MeetingBank transcripts for the MeetingBank samples: a JSON/JSONL/CSV/Parquet "
                "file or folder with meeting_id + source columns (HF lytang/MeetingBank-transcript"
                ", test split), or 'hub' to download its test.csv."
            ),
        },
    )
)
