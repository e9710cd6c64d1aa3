"""LongSciVerify and LongEval-PubMed, the long-document sets of the LongDocFACTScore paper.

Both come from the jbshp/LongDocFACTScore release (folder layout of its `data/`):

- ``longsciverify``: 15 PubMed + 15 arXiv papers, 3 summarisation systems each, 3 expert
  annotators per domain who labelled 3 sentences of every summary 0/1 (not entailed / entailed).
  One sample per (article, system) = 90 samples; human_score = mean over the annotators of the
  mean over the annotated sentences (the authors' evaluation_scripts/run_evaluation.py).
- ``longeval_pubmed``: the LongEval PubMed subset as re-processed by the authors: 20 articles x
  2 systems (BigBird-PEGASUS, LongT5) = 40 summaries with 3 fine-grained scores each (0-100).

Documents keep their sentence boundaries: one sentence per line.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.benchmarks.registry import BenchmarkSpec, LoadedBenchmark, SliceSpec, register
from evaluator.core.errors import IngestError
from evaluator.core.types import Sample

DOMAINS: tuple[str, ...] = ("pubmed", "arxiv")
REVIEWERS: tuple[int, ...] = (1, 2, 3)
SENTENCES: tuple[str, ...] = ("1", "2", "3")


@dataclass(frozen=True)
class System:
    """One summariser of LongSciVerify: its CSV summary column and its model_<n> prefix."""

    column: str
    model: str
    name: str


# data/human_eval_results/LongSciVerify/README.md: model_1 = GenCompareSum-abs,
# model_2 = DANCERSumm, model_3 = ZONESumm; the CSV summary columns come in that order.
SYSTEMS: tuple[System, ...] = (
    System("gencomparesumabs", "model_1", "GenCompareSum-abs"),
    System("dancersum", "model_2", "DANCERSumm"),
    System("section_conditional", "model_3", "ZONESumm"),
)
LONGEVAL_SYSTEMS: dict[str, str] = {"bigbird_pegasus": "BigBird-PEGASUS", "longt5": "LongT5"}

REPO = "jbshp/LongDocFACTScore"
COMMIT = "62e441d9558eb94a8b32b5dd5f9b18b33ef3e082"

LSV_RAW = "raw_data/LongSciVerify/{domain}_test.json"
LSV_REVIEWER = "human_eval_results/LongSciVerify/{domain}_reviewer_{reviewer}.csv"
LONGEVAL_DOCS = "raw_data/LongEval/pubmed_summary_src_doc_data.json"
LONGEVAL_SCORES = "human_eval_results/LongEval/pubmed_fine_scores.json"

HUB_OPTION_HELP = (
    "Hugging Face dataset repo holding a copy of the release with the GitHub layout "
    "(data/raw_data/..., data/human_eval_results/...); the authors publish no hub copy, so "
    "`--from hub` needs this option"
)

CITATION_LDFACTS = """@inproceedings{bishop-etal-2024-longdocfactscore,
    title = "{L}ong{D}oc{FACTS}core: Evaluating the Factuality of Long Document Abstractive
             Summarisation",
    author = "Bishop, Jennifer A.  and Xie, Qianqian  and Ananiadou, Sophia",
    booktitle = "Proceedings of the 2024 Joint International Conference on Computational
                 Linguistics, Language Resources and Evaluation (LREC-COLING 2024)",
    month = may,
    year = "2024",
    address = "Torino, Italia",
    publisher = "ELRA and ICCL",
    url = "https://aclanthology.org/2024.lrec-main.941",
}"""

CITATION_LONGEVAL = """@inproceedings{krishna-etal-2023-longeval,
    title = "{L}ong{E}val: Guidelines for Human Evaluation of Faithfulness in Long-form
             Summarization",
    author = "Krishna, Kalpesh  and Bransom, Erin  and Kuehl, Bailey  and Iyyer, Mohit  and
              Dasigi, Pradeep  and Cohan, Arman  and Lo, Kyle",
    booktitle = "Proceedings of the 17th Conference of the European Chapter of the Association
                 for Computational Linguistics",
    year = "2023",
    address = "Dubrovnik, Croatia",
    publisher = "Association for Computational Linguistics",
    pages = "1650--1669",
}"""


# --------------------------------------------------------------------------------------------
# where the files are (local folder or hub copy)


def _data_root(source: str | Path) -> Path:
    """The folder holding raw_data/ and human_eval_results/ (the release's data/ or a clone)."""
    p = Path(source).expanduser()
    if not p.exists():
        raise IngestError("path does not exist", file=str(p))
    if not p.is_dir():
        raise IngestError(
            "expected the release folder (with raw_data/ and human_eval_results/), got a file",
            file=str(p),
        )
    if (p / "data" / "raw_data").is_dir() and not (p / "raw_data").is_dir():
        return p / "data"
    return p


def _local_files(root: Path, rel_paths: Sequence[str]) -> dict[str, Path]:
    files = {rel: root / rel for rel in rel_paths}
    for path in files.values():
        if not path.is_file():
            raise IngestError("file missing from the release folder", file=str(path))
    return files


def _hub_files(hub_repo: str | None, rel_paths: Sequence[str], what: str) -> dict[str, Path]:
    """Download each file (GitHub layout under data/) from a hub dataset repo."""
    if not hub_repo:
        raise IngestError(
            f"{what} has no Hugging Face hub release; give the release folder with --from PATH "
            "or a hub copy with the option hub_repo=OWNER/NAME",
            file="hub",
        )
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:  # pragma: no cover - huggingface_hub is a requirement
        raise IngestError(f"huggingface_hub is not installed ({exc})", file="hub") from exc
    files: dict[str, Path] = {}
    for rel in rel_paths:
        try:
            local = hf_hub_download(repo_id=hub_repo, filename=f"data/{rel}", repo_type="dataset")
        except Exception as exc:
            raise IngestError(
                f"could not download from the Hugging Face hub ({type(exc).__name__}: {exc}); "
                "the hub may be unreachable: give a local copy with --from PATH",
                file=f"hf://datasets/{hub_repo}/data/{rel}",
            ) from exc
        files[rel] = Path(local)
    return files


def _resolve(
    source: str | Path, rel_paths: Sequence[str], hub_repo: str | None, what: str
) -> dict[str, Path]:
    if isinstance(source, str) and source == "hub":
        return _hub_files(hub_repo, rel_paths, what)
    return _local_files(_data_root(source), rel_paths)


# --------------------------------------------------------------------------------------------
# reading


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"cannot read file ({exc})", file=str(path)) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"malformed or truncated JSON ({exc.msg}, line {exc.lineno} column {exc.colno})",
            file=str(path),
        ) from exc


def _read_csv(path: Path, required: Sequence[str]) -> list[dict[str, str]]:
    """Rows of a UTF-8 (BOM optional) CSV, after checking that the required columns exist."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            missing = [c for c in required if c not in header]
            if missing:
                raise IngestError(
                    f"missing column(s) {missing}; the header has {header}",
                    file=str(path),
                    record="header",
                    field=missing[0],
                )
            rows = []
            for i, row in enumerate(reader, start=1):
                if None in row or any(v is None for v in row.values()):
                    more = "more" if None in row else "fewer"
                    raise IngestError(
                        f"row has {more} cells than the header's {len(header)}",
                        file=str(path),
                        record=i,
                    )
                rows.append(row)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise IngestError(f"cannot read CSV ({exc})", file=str(path)) from exc
    if not rows:
        raise IngestError("no data rows", file=str(path))
    return rows


def _sentence_label(value: str, file: Path, record: str, field: str) -> float | None:
    """A 0/1 sentence label; an empty cell (pandas NaN) is None."""
    v = value.strip()
    if v == "" or v.lower() == "nan":
        return None
    try:
        x = float(v)
    except ValueError:
        x = math.nan
    if x not in (0.0, 1.0):
        raise IngestError(
            f"sentence label {value!r} is not 0 or 1", file=str(file), record=record, field=field
        )
    return x


def _document(sentences: Any, file: Path, record: str) -> str:
    """One sentence per line (newlines inside a sentence become spaces; edges stripped)."""
    if (
        not isinstance(sentences, list)
        or not sentences
        or not all(isinstance(s, str) for s in sentences)
    ):
        raise IngestError(
            "article_text is not a non-empty list of strings",
            file=str(file),
            record=record,
            field="article_text",
        )
    return "\n".join(" ".join(s.split("\n")).strip() for s in sentences)


# --------------------------------------------------------------------------------------------
# LongSciVerify


def _raw_articles(path: Path) -> dict[str, str]:
    """article_id -> document, from a Cohan et al.-format JSON list."""
    data = _read_json(path)
    if not isinstance(data, list):
        raise IngestError("expected a JSON list of articles", file=str(path))
    articles: dict[str, str] = {}
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("article_id"), str):
            raise IngestError(
                "article without a string article_id", file=str(path), record=i, field="article_id"
            )
        aid = item["article_id"]
        if aid in articles:
            raise IngestError(
                f"article_id {aid!r} appears twice", file=str(path), record=i, field="article_id"
            )
        articles[aid] = _document(item.get("article_text"), path, f"{i} ({aid})")
    return articles


def match_article_id(raw_id: str, article_ids: Sequence[str]) -> list[str]:
    """The raw-data article ids a reviewer-CSV id stands for, by the authors' rule.

    evaluation_scripts/run_evaluation.py (load_raw_data) takes the article whose id equals the
    CSV id stripped of whitespace (which removes the stray spaces and \\xa0) or contains it
    (which repairs the dropped zeros: "1007.107" -> "1007.1070", "806.4325" -> "0806.4325").
    Every candidate is returned so that the caller can insist on exactly one.
    """
    key = raw_id.strip()
    if not key:
        return []
    return [a for a in article_ids if a == key or key in a]


def _reviewer_required() -> list[str]:
    cols = ["id", *(s.column for s in SYSTEMS)]
    cols += [f"{s.model}_sent_{n}_factuality" for s in SYSTEMS for n in SENTENCES]
    return cols


@dataclass
class _ReviewerRow:
    article_id: str
    raw_id: str
    summaries: dict[str, str]
    labels: dict[str, list[float | None]]  # system column -> labels of sentences 1..3


def _reviewer_rows(path: Path, article_ids: Sequence[str]) -> list[_ReviewerRow]:
    rows = _read_csv(path, _reviewer_required())
    out: list[_ReviewerRow] = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows, start=1):
        raw_id = row["id"]
        record = f"{i} (id {raw_id!r})"
        found = match_article_id(raw_id, article_ids)
        if len(found) != 1:
            problem = "matches no article" if not found else f"is ambiguous: matches {found}"
            raise IngestError(
                f"reviewer id {problem} of the raw data", file=str(path), record=record, field="id"
            )
        aid = found[0]
        if aid in seen:
            raise IngestError(
                f"article {aid!r} already annotated in row {seen[aid]}",
                file=str(path),
                record=record,
                field="id",
            )
        seen[aid] = i
        summaries: dict[str, str] = {}
        labels: dict[str, list[float | None]] = {}
        for s in SYSTEMS:
            text = row[s.column]
            if not text.strip():
                raise IngestError("empty summary", file=str(path), record=record, field=s.column)
            summaries[s.column] = text
            labels[s.column] = [
                _sentence_label(
                    row[f"{s.model}_sent_{n}_factuality"],
                    path,
                    record,
                    f"{s.model}_sent_{n}_factuality",
                )
                for n in SENTENCES
            ]
            if all(x is None for x in labels[s.column]):
                raise IngestError(
                    "no sentence of this summary is labelled",
                    file=str(path),
                    record=record,
                    field=f"{s.model}_sent_1_factuality",
                )
        out.append(_ReviewerRow(aid, raw_id, summaries, labels))
    return out


def _check_same_rows(first: list[_ReviewerRow], other: list[_ReviewerRow], path: Path) -> None:
    """Every reviewer annotated the same articles, in the same order, with the same summaries."""
    if len(other) != len(first):
        raise IngestError(f"{len(other)} rows where reviewer 1 has {len(first)}", file=str(path))
    for i, (a, b) in enumerate(zip(first, other, strict=True), start=1):
        record = f"{i} (id {b.raw_id!r})"
        if a.article_id != b.article_id:
            raise IngestError(
                f"article {b.article_id!r} where reviewer 1 has {a.article_id!r}",
                file=str(path),
                record=record,
                field="id",
            )
        for s in SYSTEMS:
            if a.summaries[s.column] != b.summaries[s.column]:
                raise IngestError(
                    "summary differs from reviewer 1's",
                    file=str(path),
                    record=record,
                    field=s.column,
                )


def summary_score(labels: Sequence[float | None]) -> float:
    """One annotator's score of a summary: mean of its labelled sentences (NaN ones left out)."""
    vals = [x for x in labels if x is not None]
    return sum(vals) / len(vals)


def _domain_samples(domain: str, files: dict[str, Path], notes: list[str]) -> list[Sample]:
    raw_path = files[LSV_RAW.format(domain=domain)]
    articles = _raw_articles(raw_path)
    ids = list(articles)
    per_reviewer: list[list[_ReviewerRow]] = []
    for r in REVIEWERS:
        path = files[LSV_REVIEWER.format(domain=domain, reviewer=r)]
        rows = _reviewer_rows(path, ids)
        if per_reviewer:
            _check_same_rows(per_reviewer[0], rows, path)
        per_reviewer.append(rows)
    first = per_reviewer[0]
    repaired = [
        f"{row.raw_id!r}->{row.article_id!r}" for row in first if row.raw_id != row.article_id
    ]
    if repaired:
        notes.append(
            f"{domain}: reviewer ids matched to raw article ids by strip/substring, as "
            f"the authors' script does: {', '.join(repaired)}"
        )
    unannotated = sorted(set(ids) - {row.article_id for row in first})
    if unannotated:
        notes.append(f"{domain}: raw articles without annotations (not samples): {unannotated}")
    samples = []
    for i, row in enumerate(first):
        for s in SYSTEMS:
            labels = [rows[i].labels[s.column] for rows in per_reviewer]
            scores = [summary_score(lab) for lab in labels]
            n_nan = sum(x is None for lab in labels for x in lab)
            if n_nan:
                notes.append(
                    f"{domain}: {row.article_id} {s.name}: {n_nan} of {3 * len(labels)} "
                    "sentence labels are empty (NaN); scores average the others"
                )
            samples.append(
                Sample(
                    benchmark="longsciverify",
                    sample_id=f"{domain}:{row.article_id}:{s.column}",
                    split="test",
                    unit="summary",
                    domain=domain,
                    doc_id=row.article_id,
                    document=articles[row.article_id],
                    summary=row.summaries[s.column],
                    human_score=sum(scores) / len(scores),
                    attributes={
                        "system": s.name,
                        "system_column": s.column,
                        "model": s.model,
                        "annotator_scores": json.dumps(scores),
                        "sentence_labels": json.dumps(
                            [[None if x is None else int(x) for x in lab] for lab in labels]
                        ),
                    },
                )
            )
    return samples


def load_longsciverify(source: str | Path, hub_repo: str | None = None) -> LoadedBenchmark:
    """90 LongSciVerify samples (15 articles x 3 systems x 2 domains) from the release folder."""
    rel = [LSV_RAW.format(domain=d) for d in DOMAINS]
    rel += [LSV_REVIEWER.format(domain=d, reviewer=r) for d in DOMAINS for r in REVIEWERS]
    files = _resolve(source, rel, hub_repo, "LongSciVerify")
    notes: list[str] = []
    samples = [s for d in DOMAINS for s in _domain_samples(d, files, notes)]
    return LoadedBenchmark(samples=samples, notes=notes, sources=[str(files[r]) for r in rel])


# --------------------------------------------------------------------------------------------
# LongEval PubMed

_STORY = re.compile(r"article_(\d+)_([a-z0-9_]+)")
_SUMMARY_TOKENS = ("<pad>", "<S>", "</S>")


def clean_longeval_summary(text: str) -> str:
    """The authors' clean_sent on a summary: drop <pad>, <S>, </S>; "<unk>" stays (model output)."""
    for tok in _SUMMARY_TOKENS:
        text = text.replace(tok, "")
    return text.strip()


def _longeval_docs(path: Path) -> dict[str, dict[str, str]]:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise IngestError("expected a JSON object keyed article_<i>_<system>", file=str(path))
    for key, item in data.items():
        for f in ("source_doc", "summary"):
            if not isinstance(item, dict) or not isinstance(item.get(f), str):
                raise IngestError(
                    "missing or non-string value", file=str(path), record=key, field=f
                )
    return data


def _longeval_scores(path: Path) -> list[tuple[str, list[float]]]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise IngestError("expected a JSON list of {story, score}", file=str(path))
    out = []
    seen = set()
    for i, item in enumerate(data):
        story = item.get("story") if isinstance(item, dict) else None
        if not isinstance(story, str):
            raise IngestError(
                "entry without a string story", file=str(path), record=i, field="story"
            )
        record = f"{i} ({story})"
        if story in seen:
            raise IngestError("story scored twice", file=str(path), record=record, field="story")
        seen.add(story)
        score = item.get("score")
        ok = (
            isinstance(score, list)
            and len(score) == 3
            and all(
                isinstance(x, int | float) and not isinstance(x, bool) and 0 <= x <= 100
                for x in score
            )
        )
        if not ok:
            raise IngestError(
                f"score {score!r} is not 3 numbers in 0..100",
                file=str(path),
                record=record,
                field="score",
            )
        out.append((story, [float(x) for x in score]))
    return out


def load_longeval_pubmed(source: str | Path, hub_repo: str | None = None) -> LoadedBenchmark:
    """The 40 scored LongEval PubMed summaries, joined with their source documents."""
    rel = [LONGEVAL_DOCS, LONGEVAL_SCORES]
    files = _resolve(source, rel, hub_repo, "LongEval-PubMed")
    docs = _longeval_docs(files[LONGEVAL_DOCS])
    scored = _longeval_scores(files[LONGEVAL_SCORES])
    score_path = files[LONGEVAL_SCORES]
    samples = []
    for i, (story, scores) in enumerate(scored):
        m = _STORY.fullmatch(story)
        if m is None or m.group(2) not in LONGEVAL_SYSTEMS:
            raise IngestError(
                f"story {story!r} is not article_<i>_<system> with a system in "
                f"{sorted(LONGEVAL_SYSTEMS)}",
                file=str(score_path),
                record=i,
                field="story",
            )
        if story not in docs:
            raise IngestError(
                f"story {story!r} has no source document and summary in "
                f"{files[LONGEVAL_DOCS].name}",
                file=str(score_path),
                record=i,
                field="story",
            )
        item = docs[story]
        samples.append(
            Sample(
                benchmark="longeval_pubmed",
                sample_id=story,
                split="test",
                unit="summary",
                domain="pubmed",
                doc_id=f"article_{m.group(1)}",
                document=item["source_doc"].replace("<br />", "\n"),
                summary=clean_longeval_summary(item["summary"]),
                human_score=sum(scores) / len(scores),
                attributes={
                    "system": LONGEVAL_SYSTEMS[m.group(2)],
                    "annotator_scores": json.dumps(scores),
                },
            )
        )
    unscored = sorted(k for k in docs if k not in {s for s, _ in scored})
    notes = [
        f"{len(unscored)} summaries of the document file carry no human score and are not "
        f"samples ({sum(k.endswith('_human') for k in unscored)} of them are the human "
        "reference abstracts, '*_human')"
    ]
    return LoadedBenchmark(samples=samples, notes=notes, sources=[str(files[r]) for r in rel])


# --------------------------------------------------------------------------------------------
# registration

_LSV_CAVEATS = (
    "Tiny: 90 summaries (45 per domain), 3 systems; Kendall's tau on 45 items has a wide CI.",
    "Only 3 sampled sentences of each summary were annotated (entailed or not), so the human "
    "score is the share of those 3 sentences judged entailed, not of the whole summary.",
    "Annotators saw each sampled sentence with the 2 most similar source snippets, not the "
    "whole paper.",
    "Two arXiv summaries (quant-ph9808055 DANCERSumm, 0806.4325 ZONESumm) have only 2 "
    "labelled sentences (sentence 3 is empty in all 3 reviewer files); their score averages "
    "the 2. The authors' run_evaluation.py sums the 3 columns and would give NaN there.",
    "Paper Table 2 prints the inter-annotator alpha as ArXiv 0.76 / PubMed 0.54, but its text "
    "says arXiv agreement is the lower one; recomputed from the released labels (sentence "
    "level, nominal, the authors' IAA notebook) it is arXiv 0.54 / PubMed 0.76: the table's "
    "column headers are swapped. The average, 0.65, agrees.",
    "Reviewer-CSV ids carry stray whitespace/\\xa0 and dropped zeros (1007.107, 806.4325); "
    "they are matched to the raw article ids by the authors' strip/substring rule.",
    "Documents are the article_text sentences, one per line (the authors join them with "
    "spaces); newlines inside 26 PubMed sentences became spaces.",
)

_LONGEVAL_CAVEATS = (
    "Tiny: 40 summaries (20 PubMed articles x 2 systems); 3 non-expert annotators.",
    "human_score is the mean of the 3 annotators' scores on LongEval's 0-100 scale (the share "
    "of summary units judged supported), kept as released.",
    "The 20 human reference abstracts ('article_<i>_human') carry no score and are not samples.",
    "The documents are the authors' re-processing of LongEval's PubMed files; '<br />' "
    "sentence separators became newlines. '<pad>' was removed from summaries (as the authors' "
    "clean_abstract does); '<unk>' tokens of the model outputs remain.",
    "Not part of the LongDocFACTScore paper's own data: originally Krishna et al. (2023), "
    "redistributed under Apache-2.0.",
)

SPEC = register(
    BenchmarkSpec(
        release_folder="longsciverify",
        name="longsciverify",
        title="LongSciVerify (LongDocFACTScore)",
        task="correlation",
        units=("summary",),
        splits=("test",),
        slices=(SliceSpec("dataset", "domain"), SliceSpec("system", "attributes.system")),
        primary_metric="kendall_tau",
        license="MIT (jbshp/LongDocFACTScore); source papers from the PubMed/arXiv summarization "
        "datasets (Cohan et al., 2018)",
        citation=CITATION_LDFACTS,
        source=f"github.com/{REPO} @ {COMMIT}, data/raw_data/LongSciVerify and "
        "data/human_eval_results/LongSciVerify",
        description=(
            "Long scientific papers (15 PubMed, 15 arXiv) summarised by 3 long-document systems "
            "(GenCompareSum-abs, DANCERSumm, ZONESumm). 3 expert annotators per domain labelled "
            "3 sampled sentences of each summary as entailed or not. A metric is scored by "
            "Kendall's tau with the mean human factuality per summary (paper Table 3)."
        ),
        loader=load_longsciverify,
        domains=DOMAINS,
        caveats=_LSV_CAVEATS,
        loader_options={"hub_repo": HUB_OPTION_HELP},
    )
)

LONGEVAL_SPEC = register(
    BenchmarkSpec(
        release_folder="longsciverify",
        name="longeval_pubmed",
        title="LongEval PubMed (as used by LongDocFACTScore)",
        task="correlation",
        units=("summary",),
        splits=("test",),
        slices=(SliceSpec("system", "attributes.system"),),
        primary_metric="kendall_tau",
        license="Apache-2.0 (LongEval data, per NOTICE.txt of jbshp/LongDocFACTScore, itself MIT)",
        citation=CITATION_LONGEVAL + "\n\n" + CITATION_LDFACTS,
        source=f"github.com/{REPO} @ {COMMIT}, data/raw_data/LongEval and "
        "data/human_eval_results/LongEval (from martiansideofthemoon/longeval-summarization)",
        description=(
            "PubMed papers summarised by BigBird-PEGASUS and LongT5, with LongEval's fine-grained "
            "faithfulness scores (3 annotators, 0-100). A metric is scored by Kendall's tau with "
            "the mean score per summary (LongDocFACTScore paper Table 4)."
        ),
        loader=load_longeval_pubmed,
        domains=("pubmed",),
        caveats=_LONGEVAL_CAVEATS,
        loader_options={"hub_repo": HUB_OPTION_HELP},
    )
)
