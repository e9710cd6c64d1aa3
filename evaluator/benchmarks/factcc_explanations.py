"""The FactCC explanation study of the SummEdits paper (Laban et al., 2023, §3.5 and Figure 2).

125 FactCC (document, summary) items known to be inconsistent; for each, the explanations that
16 LLMs gave when they (rightly) called the summary inconsistent, under up to six few-shot prompts,
each hand-annotated as correct, partially correct, incorrect, unrelated or no explanation: 3,643
explanations in all. A model answered each item once per prompt, so by default a sample is an item
under one prompt (737 of them) and each model is one released run (Figure 2 pools its prompts),
with the human annotation as its grades (the five-way type kept as the rationale).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator.benchmarks.registry import (
    BenchmarkSpec,
    LoadedBenchmark,
    ReleasedRun,
    register,
    resolve_source,
)
from evaluator.benchmarks.summedits import (
    binary_label,
    read_json_records,
    record_name,
    require_str,
)
from evaluator.core.errors import IngestError
from evaluator.core.types import (
    GRADE_COLUMNS,
    PREDICTION_COLUMNS,
    ModelInfo,
    ModelKind,
    RunConfig,
    Sample,
)

NAME = "factcc_explanations"
FILENAME = "factcc_explanation_annotation.json"
DOMAIN = "factcc"
REPO_PATH = "data/factcc/factcc_explanation_annotation.json"

# The five annotation types (paper §3.5, Appendix B) and the grade each counts as.
ANNOTATION_GRADES: dict[str, float] = {
    "correct": 1.0,
    "partially_correct": 0.5,
    "incorrect": 0.0,
    "unrelated": 0.0,
    "no_explanation": 0.0,
}
GROUPINGS = ("model", "model+prompt")


@dataclass(frozen=True)
class _Model:
    name: str
    kind: ModelKind
    org: str
    api_name: str | None = None
    params: str | None = None


# Release model id -> how the board names it (names as in the paper's Table 1 / Figure 2).
MODELS: dict[str, _Model] = {
    "gpt4": _Model("GPT-4", "proprietary-llm", "OpenAI", "gpt-4"),
    "cgpt": _Model("ChatGPT", "proprietary-llm", "OpenAI", "gpt-3.5-turbo"),
    "claudev13": _Model("Claude V1.3", "proprietary-llm", "Anthropic", "claude-v1.3"),
    "bard": _Model("Bard", "proprietary-llm", "Google", "Bard web interface, Apr-May 2023"),
    "cohere-cmd-xl": _Model("Cohere-CMD-XL", "proprietary-llm", "Cohere", "command-xlarge"),
    "dav001": _Model("Dav001", "proprietary-llm", "OpenAI", "text-davinci-001"),
    "dav002": _Model("Dav002", "proprietary-llm", "OpenAI", "text-davinci-002"),
    "dav003": _Model("Dav003", "proprietary-llm", "OpenAI", "text-davinci-003"),
    "ada001": _Model("Ada001", "proprietary-llm", "OpenAI", "text-ada-001"),
    "bab001": _Model("Bab001", "proprietary-llm", "OpenAI", "text-babbage-001"),
    "cur001": _Model("Cur001", "proprietary-llm", "OpenAI", "text-curie-001"),
    "vicuna-13b": _Model("Vicuna-13B", "open-llm", "LMSYS", None, "13B"),
    "alpaca-13b": _Model("Alpaca-13B", "open-llm", "Stanford", None, "13B"),
    "mpt-7b-chat": _Model("MPT-7B-Chat", "open-llm", "MosaicML", None, "7B"),
    "llama-13b": _Model("LLaMa-13B", "open-llm", "Meta", None, "13B"),
    "dolly-v2-12b": _Model("Dolly-v2-12B", "open-llm", "Databricks", None, "12B"),
}


@dataclass(frozen=True)
class _Item:
    item_id: str
    document: str
    summary: str


@dataclass(frozen=True)
class _Explanation:
    item_id: str
    model: str
    prompt: str
    prediction: int
    explanation: str
    annotation: str
    reason_idx: int
    raw: dict[str, object]  # the release's entry as read (kept as the run's raw output)


def _explanation(entry: Any, *, item_id: str, file: Path, record: str) -> _Explanation:
    if not isinstance(entry, dict):
        raise IngestError(
            f"expected a JSON object, found {type(entry).__name__}", file=str(file), record=record
        )
    model = require_str(entry, "model", file=file, record=record)
    if model not in MODELS:
        raise IngestError(
            f"unknown model {model!r}; known: {', '.join(MODELS)} (add it to MODELS)",
            file=str(file),
            record=record,
            field="model",
        )
    annotation = require_str(entry, "annotation", file=file, record=record)
    if annotation not in ANNOTATION_GRADES:
        raise IngestError(
            f"annotation must be one of {', '.join(ANNOTATION_GRADES)}, found {annotation!r:.40}",
            file=str(file),
            record=record,
            field="annotation",
        )
    if "prediction" not in entry:
        raise IngestError(
            "required field is missing", file=str(file), record=record, field="prediction"
        )
    reason_idx = entry.get("reason_idx")
    if isinstance(reason_idx, bool) or not isinstance(reason_idx, int):
        raise IngestError(
            f"expected an integer, found {reason_idx!r:.40}",
            file=str(file),
            record=record,
            field="reason_idx",
        )
    return _Explanation(
        item_id=item_id,
        model=model,
        prompt=require_str(entry, "prompt", file=file, record=record),
        prediction=binary_label(entry["prediction"], file=file, record=record, field="prediction"),
        explanation=require_str(entry, "explanation", file=file, record=record, allow_empty=True),
        annotation=annotation,
        reason_idx=reason_idx,
        raw=entry,
    )


def _item(rec: Any, index: int, *, file: Path) -> tuple[_Item, list[_Explanation]]:
    record = record_name(index, rec)
    if not isinstance(rec, dict):
        raise IngestError(
            f"expected a JSON object, found {type(rec).__name__}", file=str(file), record=record
        )
    item_id = require_str(rec, "id", file=file, record=record)
    entries = rec.get("samples")
    if not isinstance(entries, list):
        raise IngestError(
            "required list of annotated explanations is missing or not a list",
            file=str(file),
            record=record,
            field="samples",
        )
    item = _Item(
        item_id=item_id,
        document=require_str(rec, "doc", file=file, record=record),
        summary=require_str(rec, "summary", file=file, record=record),
    )
    explanations = [
        _explanation(e, item_id=item_id, file=file, record=f"{record}, samples[{j}]")
        for j, e in enumerate(entries)
    ]
    return item, explanations


def _check_unique(explanations: list[_Explanation], *, file: Path) -> None:
    """One explanation per (item, model, prompt) and per (item, reason_idx), as released."""
    seen: set[tuple[str, ...]] = set()
    for e in explanations:
        for key, field in (
            ((e.item_id, e.model, e.prompt), "prompt"),
            ((e.item_id, str(e.reason_idx)), "reason_idx"),
        ):
            if key in seen:
                raise IngestError(
                    f"two annotated explanations for {' / '.join(key)}",
                    file=str(file),
                    record=f"item {e.item_id!r}",
                    field=field,
                )
            seen.add(key)


def sample_id_of(item_id: str, prompt: str, group_by: str) -> str:
    """'<item id>:<prompt>' when a sample is an item under one prompt, else the item id."""
    return f"{item_id}:{prompt}" if group_by == "model" else item_id


def _samples(items: list[_Item], explanations: list[_Explanation], group_by: str) -> list[Sample]:
    """One sample per (item, prompt) that has an annotated explanation, or one per item."""
    prompts: dict[str, list[str]] = defaultdict(list)
    for e in explanations:
        if e.prompt not in prompts[e.item_id]:
            prompts[e.item_id].append(e.prompt)
    samples = []
    for it in items:
        for prompt in sorted(prompts[it.item_id]) if group_by == "model" else [None]:
            attributes = {"item_id": it.item_id}
            if prompt is not None:
                attributes["prompt"] = prompt
            samples.append(
                Sample(
                    benchmark=NAME,
                    sample_id=sample_id_of(it.item_id, prompt or "", group_by),
                    split="test",
                    unit="summary",
                    summary=it.summary,
                    domain=DOMAIN,
                    doc_id=it.item_id,
                    document=it.document,
                    label=0,  # every item is a known-inconsistent FactCC summary (paper §3.5)
                    attributes=attributes,
                )
            )
    return samples


def _frames(rows: list[_Explanation], group_by: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    ids = [sample_id_of(e.item_id, e.prompt, group_by) for e in rows]
    predictions = pd.DataFrame(
        {
            "sample_id": ids,
            "score": [math.nan] * len(rows),
            "label": pd.array([e.prediction for e in rows], dtype="Int8"),
            "explanation": [e.explanation for e in rows],
            "raw_output": [json.dumps(e.raw, ensure_ascii=False, sort_keys=True) for e in rows],
        },
        columns=list(PREDICTION_COLUMNS),
    )
    grades = pd.DataFrame(
        {
            "sample_id": ids,
            "judge": ["human"] * len(rows),
            "protocol": ["human"] * len(rows),
            "grade": [ANNOTATION_GRADES[e.annotation] for e in rows],
            "rationale": [e.annotation for e in rows],
            "raw_output": [
                json.dumps(
                    {
                        "annotation": e.annotation,
                        "model": e.model,
                        "prompt": e.prompt,
                        "reason_idx": e.reason_idx,
                    },
                    sort_keys=True,
                )
                for e in rows
            ],
        },
        columns=list(GRADE_COLUMNS),
    )
    return predictions, grades


def _run(model_id: str, rows: list[_Explanation], prompt: str | None, group_by: str) -> ReleasedRun:
    m = MODELS[model_id]
    predictions, grades = _frames(rows, group_by)
    prompts = sorted({e.prompt for e in rows})
    n_items = len({e.item_id for e in rows})
    return ReleasedRun(
        model=ModelInfo(
            name=m.name,
            kind=m.kind,
            org=m.org,
            params=m.params,
            description=f"release id {model_id!r}"
            + (f"; API model {m.api_name}" if m.api_name else ""),
        ),
        predictions=predictions,
        grades=grades,
        config=RunConfig(
            llm=m.api_name or model_id,
            prompt_id=prompt,
            extra={
                "release_model_id": model_id,
                "prompts": prompts,
                "n_explanations": len(rows),
                "n_items": n_items,
                "source_file": REPO_PATH,
            },
        ),
        threshold_policy="labels",
        note=(
            f"{len(rows)} explanations of {n_items} FactCC items (prompts: {', '.join(prompts)}), "
            "hand-annotated for SummEdits §3.5"
        ),
    )


def parse_file(path: Path, group_by: str = "model") -> LoadedBenchmark:
    """The items as samples and the annotated explanations as released runs.

    group_by "model": a sample is an item under one prompt ('<item id>:<prompt>'), one run per
    model (Figure 2's pooling). "model+prompt": a sample is an item, one run per model and prompt.
    Either way a run has at most one row per sample_id.
    """
    if group_by not in GROUPINGS:
        raise IngestError(f"group_by must be one of {', '.join(GROUPINGS)}, found {group_by!r}")
    records, fmt = read_json_records(path)
    if not records:
        raise IngestError("the file holds no records", file=str(path))
    items: list[_Item] = []
    explanations: list[_Explanation] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(records):
        item, rows = _item(rec, i, file=path)
        if item.item_id in seen:
            raise IngestError(
                f"duplicate id {item.item_id!r}: also record #{seen[item.item_id]}",
                file=str(path),
                record=record_name(i, rec),
                field="id",
            )
        seen[item.item_id] = i
        items.append(item)
        explanations.extend(rows)
    _check_unique(explanations, file=path)
    groups: dict[tuple[str, str | None], list[_Explanation]] = defaultdict(list)
    for e in explanations:
        groups[(e.model, e.prompt if group_by == "model+prompt" else None)].append(e)
    order = list(MODELS)
    runs = [
        _run(model_id, rows, prompt, group_by)
        for (model_id, prompt), rows in sorted(
            groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1] or "")
        )
    ]
    samples = _samples(items, explanations, group_by)
    unit = "(item, prompt) pairs" if group_by == "model" else "items"
    notes = [
        (
            f"{path.name}: {len(items)} FactCC items ({fmt}), {len(explanations)} annotated "
            f"explanations by {len({e.model for e in explanations})} models"
        ),
        (
            f"{len(samples)} samples = {unit} with at least one annotated explanation; "
            f"{len(runs)} released runs (one per {group_by})"
        ),
    ]
    return LoadedBenchmark(samples=samples, released_runs=runs, notes=notes, sources=[str(path)])


def load(source: str | Path, *, group_by: str = "model") -> LoadedBenchmark:
    """The study from factcc_explanation_annotation.json (or a folder holding it)."""
    if str(source) == "hub":
        raise IngestError(
            f"{NAME} has no Hugging Face release; give the GitHub file ({REPO_PATH} in "
            "salesforce/factualNLG) or a folder holding it with --from PATH"
        )
    path = resolve_source(source, default_file=FILENAME)
    if path.is_dir():
        raise IngestError(f"no {FILENAME} in this folder", file=str(path))
    return parse_file(path, group_by=group_by)


CITATION = """@article{laban2023llms,
    title = {{LLMs} as Factual Reasoners: Insights from Existing Benchmarks and Beyond},
    author = {Laban, Philippe and Kry{\\'s}ci{\\'n}ski, Wojciech and Agarwal, Divyansh and
              Fabbri, Alexander R. and Xiong, Caiming and Joty, Shafiq and Wu, Chien-Sheng},
    journal = {arXiv preprint arXiv:2305.14540},
    year = {2023},
    url = {https://arxiv.org/abs/2305.14540}
}"""

SPEC = register(
    BenchmarkSpec(
        release_folder="summedits",
        name=NAME,
        title="FactCC explanation study (SummEdits §3.5)",
        task="explanation-grading",
        units=("summary",),
        splits=("test",),
        slices=(),
        primary_metric="explanation_score",
        license=(
            "Apache-2.0 (GitHub repo salesforce/factualNLG); the FactCC news documents keep "
            "their upstream terms"
        ),
        citation=CITATION,
        source=(
            "github.com/salesforce/factualNLG @ 0da1dfa62c783218d26208c1796d3a2605bec745, "
            f"{REPO_PATH}"
        ),
        description=(
            "125 FactCC summaries known to be inconsistent, and 3,643 explanations that 16 LLMs "
            "gave when calling them inconsistent (few-shot CoT and 'generate with evidence' "
            "prompts, 3 each), each hand-annotated as correct, partially correct, incorrect, "
            "unrelated or no explanation (Cohen's kappa 0.72). A sample is an item under one "
            "prompt; one released run per model, graded 1 / 0.5 / 0 for correct / partially "
            "correct / the rest, with the five-way type as the rationale (paper Figure 2)."
        ),
        loader=load,
        overall="pooled",
        domains=(DOMAIN,),
        hub_id=None,
        caveats=(
            (
                "Only explanations of 'inconsistent' predictions were annotated (prediction is 0 "
                "in all 3,643): a share is over the explanations a model gave, not over the 125 "
                "items, and small models gave few (Dolly-v2-12B: 6, LLaMa-13B: 20)."
            ),
            (
                "A model answered each item once per prompt (up to 6), so a sample is an item "
                "under one prompt (sample_id '<item id>:<prompt>', doc_id the item): 737 samples "
                "over the 125 items. A model's run pools its prompts, as Figure 2 does."
            ),
            (
                "Paper text vs released file: the text says Bard explains correctly more than 50% "
                "of the time and MPT-7B-Chat vs Dav003 21% vs 24%; the file (and the repo "
                "notebook that draws Figure 2 from it) gives 45.8%, 19.2% and 19.9%. GPT-4 "
                "(57.5%), Claude V1.3 (51.9%) and '9 of 16 models under 10%' hold."
            ),
            (
                "Cohen's kappa (0.72 on about 200 doubly annotated explanations) cannot be "
                "recomputed: the second annotations are not released."
            ),
        ),
        loader_options={
            "group_by": "'model' (default: samples are (item, prompt) pairs, one run per model, "
            "as Figure 2) or 'model+prompt' (samples are the 125 items, one run per model and "
            "prompt: 72 runs)",
        },
    )
)
