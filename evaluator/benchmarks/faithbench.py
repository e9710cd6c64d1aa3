"""FaithBench (Bao et al., NAACL 2025): span-annotated hallucinations in summaries by 10 LLMs.

750 summaries (75 by each of 10 recent LLMs) of 75 short source texts, picked where popular
detectors disagree, annotated by experts at the span level with a taxonomy (Unwanted intrinsic /
extrinsic, Benign, Questionable) and, on most annotations, a free-text note. The release carries
the per-sample outputs of eight detectors; they are returned as released runs.

Sample labels follow the upstream binarisation (scripts/binarize.py at the release commit): a
sample's annotation labels are pooled by severity (Benign 1 < Questionable 2 < Unwanted 3) and the
sample is inconsistent when the pooled class is one of the "hallucinated classes". Both choices
are loader options and are recorded with the benchmark version they produce.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from evaluator.benchmarks.registry import (
    BenchmarkSpec,
    LoadedBenchmark,
    ReleasedRun,
    SliceSpec,
    register,
)
from evaluator.core.errors import IngestError
from evaluator.core.types import ModelInfo, RunConfig, Sample

NAME = "faithbench"
REPO = "vectara/FaithBench"
COMMIT = "cf89797d82812c23b5d5e5c121f1d9b8983bbbce"
BATCH_GLOB = "batch_*.json"
DATA_FOLDER = "data_for_release"

# the annotation labels of the release (faithbench_schema.FaithBenchLabel)
LABELS: tuple[str, ...] = (
    "Unwanted",
    "Unwanted.Intrinsic",
    "Unwanted.Extrinsic",
    "Questionable",
    "Benign",
)
# severity classes of the upstream pooling, least severe first
CLASSES: tuple[str, ...] = ("benign", "questionable", "unwanted")
SEVERITY: dict[str, int] = {
    "Benign": 1,
    "Questionable": 2,
    "Unwanted": 3,
    "Unwanted.Intrinsic": 3,
    "Unwanted.Extrinsic": 3,
}
POOLINGS: tuple[str, ...] = ("worst", "best", "majority")
DEFAULT_POOLING = "worst"
DEFAULT_HALLUCINATED: tuple[str, ...] = ("questionable", "unwanted")

# the five detectors whose disagreement chose the samples (paper section 3)
SELECTION: frozenset[str] = frozenset(
    {"hhem-2.1", "trueteacher", "true_nli", "gpt-3.5-turbo", "gpt_4o"}
)


@dataclass(frozen=True)
class ReleasedDetector:
    key: str  # the metadata field
    name: str
    kind: str
    scored: bool  # True: a score in [0, 1] (higher = consistent); False: a 0/1 label
    description: str
    org: str | None = None


RELEASED: tuple[ReleasedDetector, ...] = (
    ReleasedDetector(
        "hhemv1",
        "HHEM-1.0-Open",
        "non-llm",
        True,
        "Vectara's first Hughes Hallucination Evaluation Model (a cross-encoder); probability "
        "that the summary is consistent",
        "Vectara",
    ),
    ReleasedDetector(
        "hhem-2.1",
        "HHEM-2.1-Open",
        "non-llm",
        True,
        "Vectara's HHEM-2.1-Open (flan-t5-base classifier); probability that the summary is "
        "consistent",
        "Vectara",
    ),
    ReleasedDetector(
        "hhem-2.1-english",
        "HHEM-2.1-English",
        "non-llm",
        True,
        "Vectara's commercial English HHEM-2.1; probability that the summary is consistent",
        "Vectara",
    ),
    ReleasedDetector(
        "trueteacher",
        "TrueTeacher",
        "non-llm",
        False,
        "T5-11B trained on LLM-annotated summaries (Gekhman et al., 2023); 1 = consistent",
        "Google",
    ),
    ReleasedDetector(
        "true_nli",
        "TRUE NLI",
        "non-llm",
        False,
        "T5-11B NLI model of the TRUE benchmark (Honovich et al., 2022); 1 = consistent",
        "Google",
    ),
    ReleasedDetector(
        "gpt-3.5-turbo",
        "GPT-3.5-Turbo",
        "proprietary-llm",
        False,
        "GPT-3.5-Turbo as a zero-shot judge (FaithBench's prompt); 1 = consistent",
        "OpenAI",
    ),
    ReleasedDetector(
        "gpt-4-turbo",
        "GPT-4-Turbo",
        "proprietary-llm",
        False,
        "GPT-4-Turbo as a zero-shot judge (FaithBench's prompt); 1 = consistent",
        "OpenAI",
    ),
    ReleasedDetector(
        "gpt_4o",
        "GPT-4o",
        "proprietary-llm",
        False,
        "GPT-4o as a zero-shot judge (FaithBench's prompt); 1 = consistent",
        "OpenAI",
    ),
)

THRESHOLD = 0.5  # HHEM's authors label a score >= 0.5 consistent

CITATION = """@inproceedings{bao-etal-2025-faithbench,
    title = "{F}aith{B}ench: A Diverse Hallucination Benchmark for Summarization by Modern
             {LLM}s",
    author = "Bao, Forrest Sheng  and Li, Miaoran  and Qu, Renyi  and Luo, Ge  and Wan, Erana
              and Tang, Yujia  and Fan, Weisi  and Tamber, Manveer Singh  and Kazi, Suleman
              and Sourabh, Vivek  and Qi, Mike  and Tu, Ruixuan  and Xu, Chenyu
              and Gonzales, Matthew  and Mendelevitch, Ofer  and Ahmad, Amin",
    booktitle = "Proceedings of the 2025 Conference of the Nations of the Americas Chapter of
                 the Association for Computational Linguistics: Human Language Technologies
                 (Volume 2: Short Papers)",
    year = "2025",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2025.naacl-short.38/",
}"""


# --------------------------------------------------------------------------------------------
# options


def pooling_option(value: str | None) -> str:
    v = (value or DEFAULT_POOLING).strip().lower()
    if v not in POOLINGS:
        raise IngestError(f"pooling {value!r} is not one of {', '.join(POOLINGS)}", field="pooling")
    return v


def hallucinated_option(value: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """The classes counted inconsistent, e.g. "questionable,unwanted" (any order, any case)."""
    if value is None:
        return DEFAULT_HALLUCINATED
    parts = value if isinstance(value, tuple) else tuple(re.split(r"[,+\s]+", value))
    chosen = {p.strip().lower() for p in parts if p.strip()}
    unknown = sorted(chosen - set(CLASSES))
    if unknown or not chosen:
        raise IngestError(
            f"hallucinated classes {value!r}: give some of {', '.join(CLASSES)}, comma-separated",
            field="hallucinated",
        )
    return tuple(c for c in CLASSES if c in chosen)


def pooled_class(labels: list[str] | tuple[str, ...], pooling: str) -> str | None:
    """The severity class of a sample's annotation labels (None: no annotation), as the upstream
    script pools them: over the *set* of distinct labels (so "Unwanted" and
    "Unwanted.Intrinsic" are two votes for unwanted under majority); a majority tie goes to the
    least severe class (Python's set of small ints iterates in ascending order)."""
    distinct = set(labels)
    if not distinct:
        return None
    sev = [SEVERITY[x] for x in distinct]
    if pooling == "worst":
        s = max(sev)
    elif pooling == "best":
        s = min(sev)
    else:
        s = max(sorted(set(sev)), key=sev.count)
    return CLASSES[s - 1]


def labelling(pooling: str, hallucinated: tuple[str, ...]) -> str:
    """How the sample labels were made, in words (kept on every sample and released run)."""
    return f"{pooling} pooling; inconsistent: {' + '.join(hallucinated)}"


def binary_label(
    labels: list[str] | tuple[str, ...], pooling: str, hallucinated: tuple[str, ...]
) -> int:
    pooled = pooled_class(labels, pooling)
    return 0 if pooled is not None and pooled in hallucinated else 1


# --------------------------------------------------------------------------------------------
# files


def batch_files(source: str | Path) -> list[Path]:
    """The release's batch_N.json files (in a folder, its data_for_release/, or one file)."""
    root = Path(source).expanduser()
    if not root.exists():
        raise IngestError("path does not exist", file=str(root))
    if root.is_file():
        return [root]
    if (root / DATA_FOLDER).is_dir():
        root = root / DATA_FOLDER
    files = sorted(root.glob(BATCH_GLOB), key=lambda p: (_batch_number(p) or 0, p.name))
    if not files:
        raise IngestError(f"no {BATCH_GLOB} in this folder (nor in {DATA_FOLDER}/)", file=str(root))
    return files


def _batch_number(path: Path) -> int | None:
    m = re.fullmatch(r"batch_(\d+)\.json", path.name)
    return int(m.group(1)) if m else None


def _read_batch(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read file ({exc})", file=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"malformed or truncated JSON ({exc.msg}, line {exc.lineno} column {exc.colno})",
            file=str(path),
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise IngestError('expected {"samples": [...]}', file=str(path), field="samples")
    return data["samples"]


# --------------------------------------------------------------------------------------------
# records


class Annotation(TypedDict):
    """One annotator's span of a summary, as a sample stores it (attributes.annotations)."""

    annot_id: int
    annotator: str
    label: list[str]  # FaithBench's labels, e.g. ["Unwanted", "Unwanted.Intrinsic"]
    note: str
    start: int  # offsets into the summary
    end: int
    span: str
    source_span: str | None


def _str(
    rec: Mapping[str, object], key: str, path: Path, record: str, *, empty: bool = False
) -> str:
    v = rec.get(key)
    if not isinstance(v, str) or (not empty and not v.strip()):
        raise IngestError("missing or empty text", file=str(path), record=record, field=key)
    return v


def _int(rec: Mapping[str, object], key: str, path: Path, record: str) -> int:
    v = rec.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise IngestError(f"{v!r} is not an integer", file=str(path), record=record, field=key)
    return v


def _annotation(a: object, summary: str, path: Path, record: str) -> Annotation:
    if not isinstance(a, dict):
        raise IngestError("annotation is not a JSON object", file=str(path), record=record)
    where = f"{record}, annotation {a.get('annot_id')!r}"
    labels = a.get("label")
    if not isinstance(labels, list):  # an empty list (3 annotations) adds no label
        raise IngestError("no label list", file=str(path), record=where, field="label")
    for lab in labels:
        if lab not in SEVERITY:
            raise IngestError(
                f"label {lab!r} not one of {', '.join(LABELS)}",
                file=str(path),
                record=where,
                field="label",
            )
    start, end = _int(a, "summary_start", path, where), _int(a, "summary_end", path, where)
    span = _str(a, "summary_span", path, where, empty=True)
    if not 0 <= start <= end <= len(summary) or summary[start:end] != span:
        raise IngestError(
            f"offsets {start}:{end} do not select summary_span {span[:40]!r} in the summary",
            file=str(path),
            record=where,
            field="summary_start",
        )
    note = a.get("note")
    source_span = a.get("source_span")
    return {
        "annot_id": _int(a, "annot_id", path, where),
        "annotator": _str(a, "annotator_name", path, where),
        "label": [str(x) for x in labels],
        "note": note.strip() if isinstance(note, str) else "",
        "start": start,
        "end": end,
        "span": span,
        "source_span": source_span if isinstance(source_span, str) else None,
    }


def label_text(labels: list[str]) -> str:
    """The most specific labels of an annotation: ["Unwanted", "Unwanted.Intrinsic"] ->
    "Unwanted.Intrinsic"."""
    specific = [x for x in labels if not any(y != x and y.startswith(x + ".") for y in labels)]
    return ", ".join(specific) or "no label"


def reference_explanation(annotations: list[Annotation]) -> str | None:
    """The annotators' explanations, one per annotation: the span, its label, and the note
    (an annotation without a note still says which span is wrong and how)."""
    lines = []
    for a in annotations:
        line = f'"{a["span"]}" ({label_text(a["label"])}, {a["annotator"]})'
        if a["note"]:
            line += f": {a['note']}"
        lines.append(line)
    return "\n".join(lines) or None


@dataclass
class _Row:
    sample_id: str
    sample: Sample
    metadata: dict[str, object]  # the release's metadata object of the sample, as read


def _detector_value(
    meta: Mapping[str, object], det: ReleasedDetector, path: Path, record: str
) -> float | None:
    v = meta.get(det.key)
    if v is None:
        if det.key not in meta:
            raise IngestError(
                "detector output missing", file=str(path), record=record, field=det.key
            )
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise IngestError(f"{v!r} is not a number", file=str(path), record=record, field=det.key)
    if det.scored and not 0.0 <= v <= 1.0:
        raise IngestError(f"{v!r} outside [0, 1]", file=str(path), record=record, field=det.key)
    if not det.scored and v not in (0, 1):
        raise IngestError(f"{v!r} is not 0 or 1", file=str(path), record=record, field=det.key)
    return float(v)


def _sample(
    rec: Any, batch: int, path: Path, index: int, pooling: str, hallucinated: tuple[str, ...]
) -> _Row:
    record = f"sample #{index}"
    if not isinstance(rec, dict):
        raise IngestError("sample is not a JSON object", file=str(path), record=record)
    sid = _int(rec, "sample_id", path, record)
    record = f"sample_id {sid}"
    source = _str(rec, "source", path, record)
    summary = _str(rec, "summary", path, record)
    raw = rec.get("annotations") or []
    if not isinstance(raw, list):
        raise IngestError("annotations is not a list", file=str(path), record=record)
    annotations = [_annotation(a, summary, path, record) for a in raw]
    meta = rec.get("metadata")
    if not isinstance(meta, dict):
        raise IngestError("no metadata object", file=str(path), record=record, field="metadata")
    summarizer = _str(meta, "summarizer", path, record)
    labels = [x for a in annotations for x in a["label"]]
    pooled = pooled_class(labels, pooling)
    sample_id = f"b{batch:02d}-{sid:03d}"
    attributes = {
        "summarizer": summarizer,
        "batch": str(batch),
        "raw_sample_id": str(meta.get("raw_sample_id", "")),
        "pooled_class": pooled or "consistent",
        "labelling": labelling(pooling, hallucinated),
        "annotations": json.dumps(annotations, ensure_ascii=False),
    }
    sample = Sample(
        benchmark=NAME,
        sample_id=sample_id,
        split="test",
        unit="summary",
        summary=summary,
        doc_id=hashlib.sha256(source.encode("utf-8")).hexdigest()[:12],
        document=source,
        label=binary_label(labels, pooling, hallucinated),
        error_types=tuple(x for x in LABELS if x in set(labels)),
        reference_explanation=reference_explanation(annotations),
        attributes=attributes,
    )
    return _Row(sample_id, sample, meta)


def annotations_of(attributes: Mapping[str, object] | str | None) -> list[dict[str, Any]]:
    """The span annotations a FaithBench sample stores in its attributes (empty if none): the
    JSON objects as stored (written as `Annotation`s; a reader checks the fields it uses)."""
    attrs: Any = attributes
    if isinstance(attrs, str):
        try:
            attrs = json.loads(attrs or "{}")
        except ValueError:
            return []
    raw = attrs.get("annotations") if isinstance(attrs, dict) else None
    if not raw:
        return []
    try:
        out = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return []
    return [a for a in out if isinstance(a, dict)] if isinstance(out, list) else []


# --------------------------------------------------------------------------------------------
# released runs


def _released_runs(
    rows: list[_Row], files: list[Path], pooling: str, hallucinated: tuple[str, ...]
) -> list[ReleasedRun]:
    ids = [r.sample_id for r in rows]
    runs = []
    for det in RELEASED:
        values = [_detector_value(r.metadata, det, files[0], r.sample_id) for r in rows]
        arr = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
        labels = pd.array(
            [pd.NA if v is None or det.scored else int(v) for v in values], dtype="Int8"
        )
        predictions = pd.DataFrame(
            {
                "sample_id": ids,
                "score": arr if det.scored else np.full(len(ids), math.nan),
                "label": labels,
                "explanation": pd.Series([None] * len(ids), dtype=object),
                "raw_output": [json.dumps(r.metadata.get(det.key)) for r in rows],
            }
        )
        # a null in the release is no output: the sample counts as missing, not unparsable
        predictions = predictions[~np.isnan(arr)].reset_index(drop=True)
        missing = int(np.isnan(arr).sum())
        note = (
            "FaithBench's released per-sample output (metadata."
            + det.key
            + "), recomputed here; "
            + (
                f"a score in [0, 1], labelled consistent at >= {THRESHOLD:g} as HHEM's authors do."
                if det.scored
                else "a 0/1 verdict, 1 = consistent."
            )
        )
        if det.key in SELECTION:
            note += (
                " Part of the sample selection: FaithBench kept the summaries on which this "
                "detector and four others disagree, which pushes its accuracy towards chance by "
                "construction."
            )
        if missing:
            note += f" {missing} of {len(ids)} samples have no value (null) and count as missing."
        about = det.description + (
            ". One of the five detectors whose disagreement chose FaithBench's samples: its "
            "accuracy here is pushed towards chance by construction."
            if det.key in SELECTION
            else ". Not part of FaithBench's sample selection."
        )
        runs.append(
            ReleasedRun(
                model=ModelInfo(
                    name=det.name,
                    kind=det.kind,  # type: ignore[arg-type]
                    org=det.org,
                    description=about,
                ),
                predictions=predictions,
                config=RunConfig(
                    detector=det.name,
                    extra={
                        "source": "FaithBench released outputs",
                        "field": f"metadata.{det.key}",
                        "in_selection": det.key in SELECTION,
                        "pooling": pooling,
                        "hallucinated_classes": list(hallucinated),
                        "note": note,
                    },
                ),
                threshold_policy="none" if det.scored else "labels",
                note=note,
            )
        )
    return runs


# --------------------------------------------------------------------------------------------
# loader


def load(
    source: str | Path, pooling: str | None = None, hallucinated: str | None = None
) -> LoadedBenchmark:
    """750 FaithBench summaries (one test split) and the eight released detectors' runs."""
    if str(source) == "hub":
        raise IngestError(
            "FaithBench has no Hugging Face hub release; give the GitHub release folder (with "
            f"{DATA_FOLDER}/{BATCH_GLOB}) with --from PATH",
            file="hub",
        )
    how = pooling_option(pooling)
    classes = hallucinated_option(hallucinated)
    files = batch_files(source)
    rows: list[_Row] = []
    seen: dict[str, Path] = {}
    for path in files:
        batch = _batch_number(path)
        if batch is None:
            raise IngestError("expected a file named batch_N.json", file=str(path))
        for i, rec in enumerate(_read_batch(path)):
            row = _sample(rec, batch, path, i, how, classes)
            if row.sample_id in seen:
                raise IngestError(
                    f"sample {row.sample_id} appears twice", file=str(path), record=row.sample_id
                )
            seen[row.sample_id] = path
            rows.append(row)
    if not rows:
        raise IngestError("the release holds no samples", file=str(source))
    samples = [r.sample for r in rows]
    n_inc = sum(s.label == 0 for s in samples)
    pooled = Counter(s.attributes["pooled_class"] for s in samples)
    notes = [
        f"{len(files)} batch files, {len(samples)} samples, "
        f"{sum(len(annotations_of(s.attributes)) for s in samples)} annotations",
        f"labels: pooling={how}, hallucinated classes={'+'.join(classes)} "
        f"({n_inc} inconsistent, {len(samples) - n_inc} consistent; pooled classes: "
        + ", ".join(f"{k} {pooled[k]}" for k in ("consistent", *CLASSES) if pooled[k])
        + ")",
    ]
    if (how, classes) != (DEFAULT_POOLING, DEFAULT_HALLUCINATED):
        notes.append(
            "labels differ from the upstream configuration (worst pooling, questionable + "
            "unwanted inconsistent): numbers are not comparable with runs on that version"
        )
    return LoadedBenchmark(
        samples=samples,
        released_runs=_released_runs(rows, files, how, classes),
        notes=notes,
        sources=[str(p) for p in files],
    )


CAVEATS: tuple[str, ...] = (
    "Selection bias: the 750 summaries were kept because five detectors disagree on them "
    "(HHEM-2.1-Open, TrueTeacher, TRUE NLI, GPT-3.5-Turbo and GPT-4o as judges), so those "
    "detectors' accuracy here is pushed towards chance by construction (the paper reports "
    "'near 50%' for most). HHEM-1.0-Open, HHEM-2.1-English, GPT-4-Turbo and any new detector "
    "were not part of the selection and are not handicapped the same way: compare them with "
    "the five with care.",
    "Labels follow the upstream binarisation (scripts/binarize.py): annotation labels pooled "
    "by severity (Benign < Questionable < Unwanted) with 'worst' pooling; Questionable and "
    "Unwanted count as inconsistent, Benign as consistent (239 consistent, 511 inconsistent). "
    "The options pooling=worst|best|majority and hallucinated=CLASSES change the labels and "
    "make another benchmark version; the ingest notes record the choice.",
    "Upstream 'majority' pooling takes the most frequent severity over the *set* of distinct "
    "labels of a sample, not over its annotations (Unwanted and Unwanted.Intrinsic are two "
    "votes; a tie goes to the least severe class). It is reproduced as is.",
    "FaithBench.csv (800 rows) does not match the JSON release (750 samples in 15 batches, no "
    "batch 13): the JSON, the annotated release, is what is ingested.",
    "The released detectors' numbers are recomputed here from the release's metadata, not "
    "transcribed from the paper. The HHEM scores are labelled consistent at >= 0.5 (HHEM's "
    "own threshold; AUROC beside it needs no threshold); TRUE NLI has no output on 2 samples.",
    "The reference explanation of a sample joins its annotations: the span, its label, the "
    "annotator's pseudonym and note (1,978 of 2,189 annotations have a note). Annotators "
    "overlap: one span is often annotated by several of them.",
    "One test split, no dev split: score-only runs are labelled at the 0.5 threshold (or give "
    "a fixed threshold).",
    "Sample ids are b<batch>-<sample_id within the batch>; the summarizer is a slice, the 75 "
    "source texts are documents (each summarized by all ten LLMs).",
)


SPEC = register(
    BenchmarkSpec(
        release_folder="faithbench",
        release_files=f"{DATA_FOLDER}/{BATCH_GLOB}",
        name=NAME,
        title="FaithBench",
        task="detection+explanation",
        units=("summary",),
        splits=("test",),
        slices=(
            SliceSpec("summarizer", "attributes.summarizer"),
            SliceSpec("error_type", "error_types", multi=True, with_consistent=True),
        ),
        primary_metric="balanced_accuracy",
        license="CC BY-NC-SA 4.0 (vectara/FaithBench LICENSE); not redistributed here",
        citation=CITATION,
        source=f"github.com/{REPO} @ {COMMIT} ({DATA_FOLDER}/batch_{{1..16}}.json, no batch 13)",
        description=(
            "750 summaries by 10 recent LLMs (75 each: Claude-3.5-Sonnet, GPT-4o, GPT-3.5-Turbo, "
            "Gemini-1.5-Flash, Llama-3.1-8B/70B, Qwen2.5-7B, Mistral-7B, Phi-3-mini, "
            "Command-R) of 75 short source texts, chosen where popular detectors disagree, with "
            "2,189 expert span annotations (Unwanted intrinsic / extrinsic, Benign, "
            "Questionable) and the annotators' notes as reference explanations. Labels by default: "
            "worst pooling, Questionable + Unwanted = inconsistent (239 consistent, 511 "
            "inconsistent). Ships the per-sample outputs of eight detectors (HHEM-1.0, "
            "HHEM-2.1-Open, HHEM-2.1-English, TrueTeacher, TRUE NLI, GPT-3.5-Turbo, "
            "GPT-4-Turbo and GPT-4o as judges). Metric: balanced accuracy."
        ),
        loader=load,
        fixed_threshold=THRESHOLD,
        caveats=CAVEATS,
        loader_options={
            "pooling": "how a sample's annotation labels are pooled: worst (default, upstream), "
            "best or majority (upstream's, over the set of distinct labels)",
            "hallucinated": "the pooled classes counted inconsistent, comma-separated among "
            "benign, questionable, unwanted (default: questionable,unwanted)",
        },
    )
)
