"""QAGS human judgements (Wang, Cho & Lewis, ACL 2020): CNN/DM and XSum summaries, 3 MTurk votes
per summary sentence.

Reads data/mturk_cnndm.jsonl and data/mturk_xsum.jsonl of W4ngatang/qags (one article with its
summary sentences and their responses per line). One summary-unit sample per line. The human score
is the paper's (§5.1): the majority vote of each sentence (yes = 1), averaged over the sentences.
The label (1 when every sentence is consistent by majority) lets detectors be scored here too.
The raw votes stay in the attributes so agreement can be recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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

NAME = "qags"
DATASETS: tuple[str, ...] = ("cnndm", "xsum")
FILES: dict[str, str] = {"cnndm": "mturk_cnndm.jsonl", "xsum": "mturk_xsum.jsonl"}
RESPONSES: dict[str, int] = {"yes": 1, "no": 0}
REPO = "github.com/W4ngatang/qags"
COMMIT = "47798e9b63344e2d3fb4df2def6edc18e9402d30"


@dataclass(frozen=True)
class AnnotatedSentence:
    """One summary sentence with its crowd responses as (worker id, 1 = yes / 0 = no)."""

    text: str
    responses: tuple[tuple[str, int], ...]

    @property
    def yes_votes(self) -> int:
        return sum(vote for _, vote in self.responses)

    @property
    def majority(self) -> int:
        """1 when more workers said yes than no (ties are rejected at parse time)."""
        return int(2 * self.yes_votes > len(self.responses))


def _release_files(source: str | Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """(dataset, file) pairs to read and notes on the datasets that are absent."""
    if str(source) == "hub":
        raise IngestError(
            "QAGS has no Hugging Face hub release (the annotations are on GitHub, "
            f"{REPO} at commit {COMMIT}, data/); give the folder or a .jsonl file with --from PATH",
            file="hub",
        )
    path = resolve_source(source)
    if path.is_file():
        dataset = next((d for d, name in FILES.items() if name == path.name), None)
        if dataset is None:
            raise IngestError(
                f"expected {' or '.join(FILES.values())} (the QAGS release file names)",
                file=str(path),
            )
        others = [d for d in DATASETS if d != dataset]
        return [(dataset, path)], [f"only {path.name} was given: {', '.join(others)} absent"]
    missing = [str(path / FILES[d]) for d in DATASETS if not (path / FILES[d]).is_file()]
    if missing:
        raise IngestError("file is missing from the QAGS folder", file=missing[0])
    return [(d, path / FILES[d]) for d in DATASETS], []


def _field(obj: Mapping[str, object], key: str, kind: type, file: Path, where: str) -> Any:
    value = obj.get(key)
    if value is None:
        raise IngestError("missing field", file=str(file), record=where, field=key)
    if not isinstance(value, kind):
        raise IngestError(
            f"expected a {kind.__name__}, got {type(value).__name__}",
            file=str(file),
            record=where,
            field=key,
        )
    if not value:
        raise IngestError("empty value", file=str(file), record=where, field=key)
    return value


def _parse_response(response: Any, file: Path, where: str) -> tuple[str, int]:
    if not isinstance(response, dict):
        raise IngestError("expected an object", file=str(file), record=where, field="responses")
    worker = response.get("worker_id")
    if worker is None or isinstance(worker, (dict, list)):
        raise IngestError("missing worker id", file=str(file), record=where, field="worker_id")
    raw = response.get("response")
    vote = RESPONSES.get(raw.strip().lower()) if isinstance(raw, str) else None
    if vote is None:
        raise IngestError(
            f"response {raw!r} is not 'yes' or 'no'", file=str(file), record=where, field="response"
        )
    return str(worker), vote


def _parse_sentence(obj: Any, file: Path, where: str) -> AnnotatedSentence:
    if not isinstance(obj, dict):
        raise IngestError(
            "expected an object", file=str(file), record=where, field="summary_sentences"
        )
    text = _field(obj, "sentence", str, file, where)
    responses = tuple(
        _parse_response(r, file, where) for r in _field(obj, "responses", list, file, where)
    )
    workers = [w for w, _ in responses]
    if len(set(workers)) != len(workers):
        raise IngestError(
            f"a worker answered the same sentence twice ({workers})",
            file=str(file),
            record=where,
            field="worker_id",
        )
    sentence = AnnotatedSentence(text=text, responses=responses)
    if 2 * sentence.yes_votes == len(responses):
        raise IngestError(
            f"tied vote ({sentence.yes_votes} yes of {len(responses)}): no majority",
            file=str(file),
            record=where,
            field="responses",
        )
    return sentence


def _sample(dataset: str, index: int, article: str, sentences: list[AnnotatedSentence]) -> Sample:
    majorities = [s.majority for s in sentences]
    sample_id = f"{dataset}-{index}"
    return Sample(
        benchmark=NAME,
        sample_id=sample_id,
        split="test",
        unit="summary",
        summary=" ".join(s.text for s in sentences),
        domain=dataset,
        summary_id=sample_id,
        doc_id=sample_id,
        document=article,
        label=CONSISTENT if all(majorities) else INCONSISTENT,
        human_score=sum(majorities) / len(majorities),
        attributes={
            "n_sentences": str(len(sentences)),
            "sentences": json.dumps([s.text for s in sentences], ensure_ascii=False),
            "sentence_votes": json.dumps([s.yes_votes for s in sentences]),
            "sentence_majority": json.dumps(majorities),
            # per sentence: [[worker id, 1 = yes / 0 = no], ...] (for agreement statistics)
            "responses": json.dumps([[list(r) for r in s.responses] for s in sentences]),
        },
    )


def read_file(dataset: str, file: Path) -> list[Sample]:
    """One sample per non-empty line; sample_id is f"{dataset}-{0-based line index}"."""
    try:
        lines = file.read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise IngestError(f"not UTF-8 text: {e}", file=str(file)) from None
    samples: list[Sample] = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        where = f"line {index + 1}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise IngestError(
                f"malformed or truncated JSON: {e.msg}", file=str(file), record=where
            ) from None
        if not isinstance(obj, dict):
            raise IngestError("expected a JSON object", file=str(file), record=where)
        article = _field(obj, "article", str, file, where)
        sentences = [
            _parse_sentence(s, file, where)
            for s in _field(obj, "summary_sentences", list, file, where)
        ]
        samples.append(_sample(dataset, index, article, sentences))
    if not samples:
        raise IngestError("no record in the file", file=str(file))
    return samples


def load(source: str | Path) -> LoadedBenchmark:
    """The QAGS samples of the release folder (or of one of its two .jsonl files)."""
    files, notes = _release_files(source)
    samples: list[Sample] = []
    for dataset, file in files:
        samples.extend(read_file(dataset, file))
    return LoadedBenchmark(samples=samples, notes=notes, sources=[str(f) for _, f in files])


CITATION = """@inproceedings{wang-etal-2020-asking,
    title = "Asking and Answering Questions to Evaluate the Factual Consistency of Summaries",
    author = "Wang, Alex  and Cho, Kyunghyun  and Lewis, Mike",
    editor = "Jurafsky, Dan  and Chai, Joyce  and Schluter, Natalie  and Tetreault, Joel",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational
      Linguistics",
    month = jul,
    year = "2020",
    address = "Online",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/2020.acl-main.450",
    doi = "10.18653/v1/2020.acl-main.450",
    pages = "5008--5020",
}"""

SPEC = register(
    BenchmarkSpec(
        release_folder="qags",
        name=NAME,
        title="QAGS human judgements (CNN/DM, XSum)",
        task="correlation",
        units=("summary",),
        splits=("test",),
        slices=(SliceSpec("dataset", "domain"),),
        primary_metric="pearson",
        license=(
            "No license: the W4ngatang/qags repository has no LICENSE for its code or data, so "
            "terms of use are unspecified (the README asks for a citation). Articles come from "
            "CNN/DailyMail and XSum (BBC)."
        ),
        citation=CITATION,
        source=f"{REPO} at commit {COMMIT}: data/mturk_cnndm.jsonl, data/mturk_xsum.jsonl",
        description=(
            "235 CNN/DM summaries (Bottom-Up Summarization, 3-4 sentences) and 239 XSum summaries "
            "(BART, 1 sentence), each sentence judged consistent or not by 3 MTurk workers. The "
            "human score of a summary is the mean over its sentences of the majority vote; a "
            "metric is scored by its summary-level Pearson correlation with it, per dataset "
            "(paper Table 1)."
        ),
        loader=load,
        overall="pooled",
        domains=DATASETS,
        hub_id=None,
        caveats=(
            "The paper reports correlations per dataset (Table 1: QAGS 54.53 on CNN/DM, 17.49 on "
            "XSum); the pooled overall correlation over both is not a paper number.",
            "For annotation (and QAGS) the paper prepended the XSum summary to its article; the "
            "released XSum articles do not contain it (0 of 239), and FactBoard uses the article "
            "as released.",
            "The source has no document or summary ids: samples are named by dataset and 0-based "
            "line index (cnndm-0 ... xsum-238).",
            "Articles are lower-cased and tokenized in places, as released.",
            "The label (1 when every sentence is consistent by majority vote: 113/235 CNN/DM, "
            "116/239 XSum) is FactBoard's derivation for detection; the paper uses the score.",
            "No per-summary metric outputs are released, so Table 1 cannot be recomputed from "
            "the release.",
        ),
    )
)
