"""FRANK (Pagnoni et al., NAACL 2021): summary-level factuality judgements on CNN/DM and XSum.

2,246 (article, system) pairs from 9 summarizers, each with a human Factuality score (share of
summary sentences without a factual error) and per-category error shares from FRANK's typology.
The release also carries the per-sample outputs of the baseline metrics the paper evaluated;
they are returned as released runs.

Documents and summaries come from the official data/benchmark_data.json when the folder has it,
else from frank_articles_summaries_reconstructed.jsonl (rebuilt from the per-article files of an
older commit; see SOURCE.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

ANNOTATIONS = "human_annotations.json"
METRIC_OUTPUTS = "baseline_factuality_metrics_outputs.json"
BENCHMARK_DATA = "benchmark_data.json"
RECONSTRUCTED = "frank_articles_summaries_reconstructed.jsonl"
TEST_SPLIT = "test_split.txt"
VALID_SPLIT = "validation_split.txt"

REPO = "artidoro/frank"
COMMIT = "80a88fb12cc0bfc17ff6ee2c5ebb0c4f4dd8a5f4"

SPLITS: dict[str, str] = {"valid": "dev", "test": "test"}
DATASETS: tuple[str, ...] = ("cnndm", "bbc")

# FRANK's typology (paper section 2): category column -> readable name. For a category column,
# 1 means no sentence of the summary has that error, 0 means every sentence has it.
ERROR_CATEGORIES: dict[str, str] = {
    "RelE": "Predicate",
    "EntE": "Entity",
    "CircE": "Circumstance",
    "OutE": "Out of article",
    "GramE": "Grammatical",
    "CorefE": "Coreference",
    "LinkE": "Discourse link",
    "Other": "Other",
}


@dataclass(frozen=True)
class ReleasedMetric:
    column: str
    name: str
    kind: str
    description: str


# Every output in the release is higher = more consistent: each has a positive Pearson with
# Factuality over the 2,246 summaries (tests/test_ingest_frank.py checks the sign). FactCC is
# the share of summary sentences FactCC labels CORRECT; DAE ("Dep Entail") the entailment
# probability of the dependency arcs; QAGS and FEQA the share of answers that agree.
RELEASED_METRICS: tuple[ReleasedMetric, ...] = (
    ReleasedMetric(
        "Rouge 1",
        "ROUGE-1 (vs reference)",
        "non-llm",
        "ROUGE-1 F1 of the summary against the reference summary",
    ),
    ReleasedMetric(
        "Rouge 2",
        "ROUGE-2 (vs reference)",
        "non-llm",
        "ROUGE-2 F1 of the summary against the reference summary",
    ),
    ReleasedMetric(
        "Rouge L",
        "ROUGE-L (vs reference)",
        "non-llm",
        "ROUGE-L F1 of the summary against the reference summary",
    ),
    ReleasedMetric(
        "Bleu",
        "BLEU (vs reference)",
        "non-llm",
        "BLEU (0-100) of the summary against the reference summary",
    ),
    ReleasedMetric(
        "Meteor",
        "METEOR (vs reference)",
        "non-llm",
        "METEOR of the summary against the reference summary",
    ),
    ReleasedMetric(
        "BertScore P Art",
        "BERTScore-P (vs article)",
        "non-llm",
        "BERTScore precision of the summary against the article",
    ),
    ReleasedMetric(
        "BertScore R Art",
        "BERTScore-R (vs article)",
        "non-llm",
        "BERTScore recall of the summary against the article",
    ),
    ReleasedMetric(
        "BertScore F1 Art",
        "BERTScore-F1 (vs article)",
        "non-llm",
        "BERTScore F1 of the summary against the article",
    ),
    ReleasedMetric(
        "FactCC",
        "FactCC",
        "non-llm",
        "Share of summary sentences the FactCC classifier labels CORRECT",
    ),
    ReleasedMetric(
        "FEQA",
        "FEQA",
        "non-llm",
        "QA-based faithfulness (Durmus et al., 2020): answer F1 from the article",
    ),
    ReleasedMetric(
        "Dep Entail", "DAE", "non-llm", "Dependency Arc Entailment (Goyal & Durrett, 2020)"
    ),
    ReleasedMetric(
        "QAGS", "QAGS", "non-llm", "QA-based consistency (Wang et al., 2020): answer agreement"
    ),
)

HUB_OPTION_HELP = (
    "Hugging Face dataset repo holding a copy of the GitHub release's data/ folder "
    "(human_annotations.json, baseline_factuality_metrics_outputs.json, benchmark_data.json); "
    "the authors publish no hub copy, so `--from hub` needs this option"
)

CITATION = """@inproceedings{pagnoni-etal-2021-understanding,
    title = "Understanding Factuality in Abstractive Summarization with {FRANK}: A Benchmark
             for Factuality Metrics",
    author = "Pagnoni, Artidoro  and Balachandran, Vidhisha  and Tsvetkov, Yulia",
    booktitle = "Proceedings of the 2021 Conference of the North American Chapter of the
                 Association for Computational Linguistics: Human Language Technologies",
    month = jun,
    year = "2021",
    address = "Online",
    publisher = "Association for Computational Linguistics",
    url = "https://www.aclweb.org/anthology/2021.naacl-main.383",
    doi = "10.18653/v1/2021.naacl-main.383",
    pages = "4812--4829",
}"""

Key = tuple[str, str]  # (hash, model_name)


# --------------------------------------------------------------------------------------------
# files


@dataclass
class _Files:
    annotations: Path
    outputs: Path
    documents: Path  # benchmark_data.json or the reconstructed JSONL
    test_split: Path | None = None
    valid_split: Path | None = None

    @property
    def reconstructed(self) -> bool:
        return self.documents.name != BENCHMARK_DATA

    def all(self) -> list[Path]:
        extra = [p for p in (self.test_split, self.valid_split) if p is not None]
        return [self.annotations, self.outputs, self.documents, *extra]


def _local_files(source: str | Path) -> _Files:
    root = Path(source).expanduser()
    if not root.exists():
        raise IngestError("path does not exist", file=str(root))
    if not root.is_dir():
        raise IngestError(
            f"expected the release folder (with {ANNOTATIONS}), got a file", file=str(root)
        )
    if not (root / ANNOTATIONS).exists() and (root / "data" / ANNOTATIONS).exists():
        root = root / "data"
    for name in (ANNOTATIONS, METRIC_OUTPUTS):
        if not (root / name).is_file():
            raise IngestError("file missing from the release folder", file=str(root / name))
    docs = root / BENCHMARK_DATA
    if not docs.is_file():
        docs = root / RECONSTRUCTED
    if not docs.is_file():
        raise IngestError(
            f"no documents: neither {BENCHMARK_DATA} nor {RECONSTRUCTED} is here", file=str(root)
        )
    optional = [root / n if (root / n).is_file() else None for n in (TEST_SPLIT, VALID_SPLIT)]
    return _Files(root / ANNOTATIONS, root / METRIC_OUTPUTS, docs, *optional)


def _hub_files(hub_repo: str | None) -> _Files:
    if not hub_repo:
        raise IngestError(
            "FRANK has no Hugging Face hub release; give the release folder with --from PATH "
            "or a hub copy with the option hub_repo=OWNER/NAME",
            file="hub",
        )
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:  # pragma: no cover - huggingface_hub is a requirement
        raise IngestError(f"huggingface_hub is not installed ({exc})", file="hub") from exc
    paths = []
    for name in (ANNOTATIONS, METRIC_OUTPUTS, BENCHMARK_DATA):
        try:
            local = hf_hub_download(repo_id=hub_repo, filename=f"data/{name}", repo_type="dataset")
        except Exception as exc:
            raise IngestError(
                f"could not download from the Hugging Face hub ({type(exc).__name__}: {exc}); "
                "the hub may be unreachable: give a local copy with --from PATH",
                file=f"hf://datasets/{hub_repo}/data/{name}",
            ) from exc
        paths.append(Path(local))
    return _Files(*paths)


# --------------------------------------------------------------------------------------------
# parsing helpers


def _read_json_list(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read file ({exc})", file=str(path)) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"malformed or truncated JSON ({exc.msg}, line {exc.lineno} column {exc.colno})",
            file=str(path),
        ) from exc
    if not isinstance(data, list):
        raise IngestError("expected a JSON list of records", file=str(path))
    return data


def _key(rec: Any, path: Path, i: int) -> Key:
    if not isinstance(rec, dict):
        raise IngestError("record is not a JSON object", file=str(path), record=i)
    for f in ("hash", "model_name"):
        if not isinstance(rec.get(f), str) or not rec[f]:
            raise IngestError("missing or empty", file=str(path), record=i, field=f)
    return rec["hash"], rec["model_name"]


def _number(
    value: Any,
    path: Path,
    record: str,
    field: str,
    *,
    allow_missing: bool,
    lo: float | None = None,
    hi: float | None = None,
) -> float:
    """A finite number (NaN when missing and allowed); bool and strings are rejected."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        if allow_missing:
            return math.nan
        raise IngestError("missing value (null/NaN)", file=str(path), record=record, field=field)
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isinf(value):
        raise IngestError(f"{value!r} is not a number", file=str(path), record=record, field=field)
    x = float(value)
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise IngestError(
            f"{value!r} outside [{lo}, {hi}]", file=str(path), record=record, field=field
        )
    return x


# --------------------------------------------------------------------------------------------
# human annotations


@dataclass
class _Judgement:
    key: Key
    dataset: str
    split: str
    factuality: float
    categories: dict[str, float]


def _annotations(path: Path) -> list[_Judgement]:
    out: list[_Judgement] = []
    seen: dict[Key, int] = {}
    for i, rec in enumerate(_read_json_list(path)):
        key = _key(rec, path, i)
        record = f"{i} ({key[0]}:{key[1]})"
        if key in seen:
            raise IngestError(
                f"(hash, model_name) already in record {seen[key]}",
                file=str(path),
                record=record,
                field="hash",
            )
        seen[key] = i
        dataset, split = rec.get("dataset"), rec.get("split")
        if dataset not in DATASETS:
            raise IngestError(
                f"dataset {dataset!r} not in {list(DATASETS)}",
                file=str(path),
                record=record,
                field="dataset",
            )
        if split not in SPLITS:
            raise IngestError(
                f"split {split!r} not in {list(SPLITS)}",
                file=str(path),
                record=record,
                field="split",
            )
        fact = _number(
            rec.get("Factuality"), path, record, "Factuality", allow_missing=False, lo=0.0, hi=1.0
        )
        cats = {
            c: _number(rec.get(c), path, record, c, allow_missing=False, lo=0.0, hi=1.0)
            for c in ERROR_CATEGORIES
        }
        out.append(_Judgement(key, dataset, split, fact, cats))
    if not out:
        raise IngestError("no records", file=str(path))
    return out


def error_types(categories: dict[str, float]) -> tuple[str, ...]:
    """Readable names of the categories some sentence has (column value below 1)."""
    return tuple(name for code, name in ERROR_CATEGORIES.items() if categories[code] < 1.0)


def _check_split_lists(judgements: list[_Judgement], files: _Files) -> None:
    """The split field agrees with test_split.txt / validation_split.txt when they are there."""
    for split, path in (("test", files.test_split), ("valid", files.valid_split)):
        if path is None:
            continue
        hashes = set(path.read_text(encoding="utf-8").split())
        for j in judgements:
            if (j.key[0] in hashes) != (j.split == split):
                raise IngestError(
                    f"split {j.split!r} disagrees with {path.name} for article {j.key[0]}",
                    file=str(files.annotations),
                    record=f"{j.key[0]}:{j.key[1]}",
                    field="split",
                )


# --------------------------------------------------------------------------------------------
# documents and summaries


def _text(value: Any, path: Path, record: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise IngestError("missing or empty text", file=str(path), record=record, field=field)
    return value


def _benchmark_data(path: Path) -> dict[Key, tuple[str, str]]:
    """(hash, model_name) -> (article, summary) from the official benchmark_data.json."""
    out: dict[Key, tuple[str, str]] = {}
    for i, rec in enumerate(_read_json_list(path)):
        key = _key(rec, path, i)
        record = f"{i} ({key[0]}:{key[1]})"
        if key in out:
            raise IngestError(
                "(hash, model_name) appears twice", file=str(path), record=record, field="hash"
            )
        out[key] = (
            _text(rec.get("article"), path, record, "article"),
            _text(rec.get("summary"), path, record, "summary"),
        )
    return out


def _reconstructed(path: Path) -> tuple[dict[Key, tuple[str, str]], dict[str, str]]:
    """(hash, model_name) -> (article, summary), and hash -> dataset, from the JSONL."""
    out: dict[Key, tuple[str, str]] = {}
    datasets: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read file ({exc})", file=str(path)) from exc
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = f"line {n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(f"malformed JSON ({exc.msg})", file=str(path), record=record) from exc
        if not isinstance(rec, dict) or not isinstance(rec.get("hash"), str):
            raise IngestError(
                "record without a string hash", file=str(path), record=record, field="hash"
            )
        h = rec["hash"]
        if h in datasets:
            raise IngestError(
                f"article {h} appears twice", file=str(path), record=record, field="hash"
            )
        datasets[h] = str(rec.get("dataset"))
        article = _text(rec.get("article"), path, record, "article")
        summaries = rec.get("summaries")
        if not isinstance(summaries, dict):
            raise IngestError(
                "summaries is not an object", file=str(path), record=record, field="summaries"
            )
        for model, summary in summaries.items():
            out[(h, model)] = (article, _text(summary, path, f"{record} ({model})", "summaries"))
    return out, datasets


def _documents(files: _Files, judgements: list[_Judgement]) -> dict[Key, tuple[str, str]]:
    if not files.reconstructed:
        docs = _benchmark_data(files.documents)
    else:
        docs, datasets = _reconstructed(files.documents)
        for j in judgements:
            if j.key[0] in datasets and datasets[j.key[0]] != j.dataset:
                raise IngestError(
                    f"dataset {datasets[j.key[0]]!r} where {files.annotations.name} has "
                    f"{j.dataset!r}",
                    file=str(files.documents),
                    record=j.key[0],
                    field="dataset",
                )
    for j in judgements:
        if j.key not in docs:
            raise IngestError(
                "no article and summary for this annotated (hash, model_name)",
                file=str(files.documents),
                record=f"{j.key[0]}:{j.key[1]}",
                field="summaries",
            )
    return docs


# --------------------------------------------------------------------------------------------
# released metric outputs


def _metric_outputs(path: Path, keys: set[Key]) -> dict[Key, dict[str, float | None]]:
    """Per annotated summary, each released metric's value as the release gives it (a JSON
    number, or null): the raw values a released run keeps as its raw output."""
    out: dict[Key, dict[str, float | None]] = {}
    for i, rec in enumerate(_read_json_list(path)):
        key = _key(rec, path, i)
        record = f"{i} ({key[0]}:{key[1]})"
        if key in out:
            raise IngestError(
                "(hash, model_name) appears twice", file=str(path), record=record, field="hash"
            )
        if key not in keys:
            raise IngestError(
                "(hash, model_name) has no human annotation",
                file=str(path),
                record=record,
                field="hash",
            )
        for m in RELEASED_METRICS:
            if m.column not in rec:
                raise IngestError(
                    "metric column missing", file=str(path), record=record, field=m.column
                )
            _number(rec[m.column], path, record, m.column, allow_missing=True)
        out[key] = {m.column: rec[m.column] for m in RELEASED_METRICS}
    missing = keys - set(out)
    if missing:
        h, model = sorted(missing)[0]
        raise IngestError(
            f"{len(missing)} annotated summaries have no metric outputs, e.g. {h}:{model}",
            file=str(path),
        )
    return out


def _released_runs(
    outputs: dict[Key, dict[str, float | None]], order: list[Key]
) -> list[ReleasedRun]:
    runs = []
    ids = [f"{h}:{m}" for h, m in order]
    for metric in RELEASED_METRICS:
        raw = [outputs[k][metric.column] for k in order]
        scores = np.array([math.nan if v is None else float(v) for v in raw], dtype=np.float64)
        n_missing = int(np.isnan(scores).sum())
        predictions = pd.DataFrame(
            {
                "sample_id": ids,
                "score": scores,
                "label": pd.array([pd.NA] * len(ids), dtype="Int8"),
                "explanation": pd.Series([None] * len(ids), dtype=object),
                "raw_output": [json.dumps(v) for v in raw],
            }
        )
        note = "FRANK's released per-sample output; higher = more consistent."
        if n_missing:
            note += (
                f" {n_missing} of {len(ids)} summaries have no value (null in the release)"
                " and count as missing."
            )
        runs.append(
            ReleasedRun(
                model=ModelInfo(
                    name=metric.name,
                    kind=metric.kind,  # type: ignore[arg-type]
                    description=metric.description,
                ),
                predictions=predictions,
                config=RunConfig(
                    detector=metric.name,
                    extra={"source": "FRANK released outputs", "column": metric.column},
                ),
                threshold_policy="none",
                note=note,
            )
        )
    return runs


# --------------------------------------------------------------------------------------------
# loader


def load(source: str | Path, hub_repo: str | None = None) -> LoadedBenchmark:
    """2,246 FRANK samples (split valid -> dev, test -> test) and the 12 released metric runs."""
    is_hub = isinstance(source, str) and source == "hub"
    files = _hub_files(hub_repo) if is_hub else _local_files(source)
    judgements = _annotations(files.annotations)
    _check_split_lists(judgements, files)
    docs = _documents(files, judgements)
    outputs = _metric_outputs(files.outputs, {j.key for j in judgements})
    samples = []
    for j in judgements:
        article, summary = docs[j.key]
        samples.append(
            Sample(
                benchmark="frank",
                sample_id=f"{j.key[0]}:{j.key[1]}",
                split=SPLITS[j.split],
                unit="summary",
                domain=j.dataset,
                doc_id=j.key[0],
                document=article,
                summary=summary,
                label=1 if j.factuality == 1.0 else 0,
                human_score=j.factuality,
                error_types=error_types(j.categories),
                attributes={
                    "system": j.key[1],
                    "error_category_scores": json.dumps(j.categories, sort_keys=True),
                },
            )
        )
    notes = [
        f"documents and summaries from {files.documents.name}"
        + (
            " (reconstructed from the per-article files of commit 6308064; not verified "
            "byte-for-byte against benchmark_data.json)"
            if files.reconstructed
            else ""
        ),
    ]
    return LoadedBenchmark(
        samples=samples,
        released_runs=_released_runs(outputs, [j.key for j in judgements]),
        notes=notes,
        sources=[str(p) for p in files.all()],
    )


CAVEATS: tuple[str, ...] = (
    "Domain 'bbc' is FRANK's name for XSum (BBC articles); 'cnndm' is CNN/DailyMail.",
    "FRANK's own protocol is the partial Pearson/Spearman correlation with the summarization "
    "system as control variable (evaluate.py): the board's primary metric is partial_pearson; a "
    "plain pooled Pearson is much higher for metrics that merely rank systems (FactCC, all "
    "data: 0.60 plain vs 0.20 partial).",
    "FRANK's evaluate.py computes the partial Spearman as Spearman of the residuals (residualise, "
    "then rank); ranking first and then residualising gives other values (FactCC, all data: "
    "0.30 vs 0.20).",
    "FRANK's 'valid' split is FactBoard's dev (149 articles, 671 summaries); test has 350 "
    "articles, 1,575 summaries. The paper's tables use all 2,246.",
    "Without data/benchmark_data.json (over the snapshot's size limit) documents and summaries "
    "are rebuilt from an older commit's per-article files: not verified byte for byte; CNN/DM "
    "summaries are lower-cased and tokenized.",
    "label = 1 only for Factuality == 1.0 (no annotated error in any sentence): 810 of 2,246 "
    "summaries; this matches 'no error category below 1' exactly.",
    "BERTScore outputs were corrected by the authors on 2021-07-20 and differ slightly from the "
    "first paper PDF. DAE has no output for 83 summaries and FEQA for 4.",
)


SPEC = register(
    BenchmarkSpec(
        release_folder="frank",
        name="frank",
        title="FRANK",
        task="correlation",
        units=("summary",),
        splits=("dev", "test"),
        slices=(
            SliceSpec("dataset", "domain"),
            SliceSpec("system", "attributes.system"),
            SliceSpec("error_type", "error_types", multi=True, with_consistent=True),
        ),
        primary_metric="partial_pearson",
        correlation_control="attributes.system",
        license="MIT (artidoro/frank); articles from CNN/DailyMail and XSum (BBC)",
        citation=CITATION,
        source=f"github.com/{REPO} @ {COMMIT} (data/human_annotations.json, "
        "data/baseline_factuality_metrics_outputs.json); documents from "
        "data/benchmark_data.json or rebuilt from data/articles-wmetrics-reference-json "
        "@ 6308064",
        description=(
            "2,246 summaries of 499 CNN/DM and XSum articles by 9 summarizers (CNN/DM: bart, "
            "bert_sum, bus, pgn, s2s; XSum: BERTS2S, PtGen, TConvS2S, TranS2S), each sentence "
            "annotated with FRANK's error typology. human_score = Factuality (share of sentences "
            "without error); label = 1 only when no sentence has an error. Error types: Predicate "
            "(RelE), Entity (EntE), Circumstance (CircE), Out of article (OutE), Grammatical "
            "(GramE), Coreference (CorefE), Discourse link (LinkE), Other. Ships the per-sample "
            "outputs of 12 baseline metrics."
        ),
        loader=load,
        domains=DATASETS,
        caveats=CAVEATS,
        loader_options={"hub_repo": HUB_OPTION_HELP},
    )
)
