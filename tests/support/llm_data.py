"""Small benchmarks for the LLM tests, written in their real release formats (SummExecEdit's
hub JSON, the FactCC explanation study's JSON) and ingested with the real loaders, or, for
TofuEval (whose documents are not redistributed), written as canonical samples with documents."""

from __future__ import annotations

import json
from pathlib import Path

from evaluator.benchmarks import registry
from evaluator.core.types import Sample
from evaluator.ingest import pipeline
from evaluator.store import layout

SUMMEXECEDIT_ROWS = [
    # (sample_id, label, domain, seed summary, edited summary, reference explanation)
    (
        "se-1",
        0,
        "news",
        "The council approved the library budget on Monday.",
        "The council rejected the library budget on Monday.",
        "The document says the council approved the budget, but the summary says it rejected it.",
    ),
    (
        "se-2",
        0,
        "podcast",
        "The host interviewed a marine biologist about coral reefs.",
        "The host interviewed a marine biologist about kelp forests.",
        "The document is about coral reefs, but the summary says kelp forests.",
    ),
    (
        "se-3",
        0,
        "news",
        "The mayor opened the bridge after two years of work.",
        "The governor opened the bridge after two years of work.",
        "The document says the mayor opened the bridge, not the governor.",
    ),
    (
        "se-4",
        0,
        "samsum",
        "Anna will bring the cake to the party.",
        "Anna will bake the cake for the party.",
        "The document says Anna will bring the cake, not that she will bake it.",
    ),
    ("se-5", 1, "news", "The museum reopened in May.", "The museum reopened in May.", None),
    (
        "se-6",
        1,
        "podcast",
        "The guest wrote two novels.",
        "The guest has written two novels.",
        None,
    ),
]


def write_summexecedit(path: Path) -> Path:
    recs = []
    for sid, label, domain, seed, edited, expl in SUMMEXECEDIT_ROWS:
        recs.append(
            {
                "sample_id": sid,
                "doc_id": f"doc-{sid}",
                "doc": f"Document for {sid}. {seed} Nothing else happened.",
                "original_summary": seed,
                "original_text": seed.split()[1],
                "replace_text": edited.split()[1],
                "edited_summary": edited,
                "explanation": expl,
                "domain": domain,
                "model": "GPT4-Turbo" if label == 0 else "",
                "edit_type": "summexecedit" if label == 0 else "summedits",
            }
        )
    path.write_text(json.dumps(recs), encoding="utf-8")
    return path


def ingest_summexecedit(tmp: Path, root: Path) -> None:
    f = write_summexecedit(tmp / "summexecedit.json")
    pipeline.ingest("summexecedit", f, root=root)


FACTCC_ITEMS = [
    ("item-1", "The firm hired 40 workers in May.", "The firm fired 40 workers in May."),
    ("item-2", "Rain closed the stadium on Sunday.", "Snow closed the stadium on Sunday."),
    ("item-3", "The bill passed with 60 votes.", "The bill failed with 60 votes."),
]
# (model, prompt, explanation, human annotation) per item
FACTCC_EXPLANATIONS = {
    "item-1": [
        ("gpt4", "fewshot-cot-prompt1", "The document says hired, not fired. [good]", "correct"),
        ("cgpt", "fewshot-cot-prompt1", "It gets the month wrong. [bad]", "incorrect"),
        (
            "cgpt",
            "fewshot-gwe-prompt1",
            "Hired vs fired, and the count. [half]",
            "partially_correct",
        ),
    ],
    "item-2": [
        ("gpt4", "fewshot-cot-prompt1", "Rain, not snow, closed it. [good]", "correct"),
        ("cgpt", "fewshot-cot-prompt1", "", "no_explanation"),
    ],
    "item-3": [
        ("gpt4", "fewshot-cot-prompt1", "The bill passed. [good]", "correct"),
        ("cgpt", "fewshot-cot-prompt1", "The vote count differs. [bad]", "unrelated"),
        (
            "gpt4",
            "fewshot-gwe-prompt1",
            "Passed vs failed, wrong count. [half]",
            "partially_correct",
        ),
    ],
}


def write_factcc(path: Path) -> Path:
    recs = []
    idx = 0
    for item_id, doc, summary in FACTCC_ITEMS:
        samples = []
        for model, prompt, expl, ann in FACTCC_EXPLANATIONS[item_id]:
            samples.append(
                {
                    "reason_idx": idx,
                    "prediction": 0,
                    "model": model,
                    "prompt": prompt,
                    "annotation": ann,
                    "explanation": expl,
                }
            )
            idx += 1
        recs.append({"id": item_id, "doc": doc, "summary": summary, "samples": samples})
    path.write_text(json.dumps(recs), encoding="utf-8")
    return path


def ingest_factcc(tmp: Path, root: Path) -> None:
    pipeline.ingest("factcc_explanations", write_factcc(tmp / "factcc.json"), root=root)


# TofuEval: two summaries of two sentences each per split; documents present except on one
TOFU_SENTENCES = [
    # (split, summary id, sentence idx, sentence, label, with document)
    ("test", "s1", 0, "The host asked about the budget.", 1, True),
    ("test", "s1", 1, "The guest said taxes would fall.", 0, True),
    ("test", "s2", 0, "The meeting approved the plan.", 1, True),
    ("test", "s2", 1, "Everyone voted in favour.", 1, True),
    ("test", "s3", 0, "The senator resigned.", 0, False),
    ("dev", "d1", 0, "The panel discussed schools.", 1, True),
]


def write_tofueval(root: Path) -> None:
    """Canonical TofuEval samples (sentence + summary units) written as an ingested benchmark."""
    spec = registry.get("tofueval")
    samples: list[Sample] = []
    by_summary: dict[str, list[tuple]] = {}
    for row in TOFU_SENTENCES:
        by_summary.setdefault(row[1], []).append(row)
    for sid, rows in by_summary.items():
        split = rows[0][0]
        doc = f"Transcript {sid}: the host and the guest talk." if rows[0][5] else None
        attrs = {"topic": "budget", "topic_type": "main", "summarizer": "fake"}
        for split_, _, idx, sent, label, _ in rows:
            samples.append(
                Sample(
                    benchmark="tofueval",
                    sample_id=f"{sid}:{idx}",
                    split=split_,
                    unit="sentence",
                    summary=sent,
                    domain="mediasum",
                    summary_id=sid,
                    doc_id=f"doc-{sid}",
                    document=doc,
                    label=label,
                    reference_explanation=None if label else f"Sentence {idx} is wrong.",
                    attributes={**attrs, "sent_idx": str(idx)},
                )
            )
        samples.append(
            Sample(
                benchmark="tofueval",
                sample_id=sid,
                split=split,
                unit="summary",
                summary=" ".join(r[3] for r in rows),
                domain="mediasum",
                summary_id=sid,
                doc_id=f"doc-{sid}",
                document=doc,
                label=min(r[4] for r in rows),
                attributes=attrs,
            )
        )
    table = pipeline.samples_table(spec, samples)
    d = layout.benchmark_dir("tofueval", root)
    d.mkdir(parents=True, exist_ok=True)
    import pyarrow.parquet as pq

    pq.write_table(table, d / layout.SAMPLES_FILE)
    meta = {**spec.card(), "version": pipeline.version_of(table)}
    (d / layout.META_FILE).write_text(json.dumps(meta), encoding="utf-8")
