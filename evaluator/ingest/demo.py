"""The built-in demo: a small synthetic benchmark in SummEdits format, and baseline runs on it.

Everything here is made up for FactBoard (templated documents about invented towns, companies and
studies) so that a fresh install shows a working board before any real benchmark is ingested. It
is labelled synthetic everywhere it appears. `python -m evaluator demo` rebuilds it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from evaluator import scorer
from evaluator.benchmarks import registry
from evaluator.core.scoring import ScoreOptions
from evaluator.core.types import ModelInfo, RunConfig
from evaluator.ingest import pipeline
from evaluator.store import ingested, layout, runs

DEMO_SOURCE = layout.REPO_ROOT / "leaderboard_data" / "demo"
DOMAINS = ("news", "meeting", "science")
DOCS_PER_DOMAIN = 14
DEV_DOCS = 4  # the first documents of each domain form the dev ("evaluation") split

TOWNS = [
    "Alderbrook",
    "Westmere",
    "Kettleby",
    "Pinecrest",
    "Harrowgate",
    "Millbourne",
    "Oakhurst",
    "Rivenford",
    "Stonebridge",
    "Ashcombe",
    "Larkspur",
    "Dunmore",
    "Fernhill",
    "Greyhaven",
    "Bramwell",
    "Elmstead",
]
PEOPLE = [
    "Maria Okafor",
    "James Lindqvist",
    "Priya Raman",
    "Tomas Herrera",
    "Aiko Tanaka",
    "Daniel Brooks",
    "Fatima Haddad",
    "Lena Fischer",
    "Samuel Osei",
    "Chloe Martin",
    "Ravi Kapoor",
    "Nora Whitfield",
    "Omar Suleiman",
    "Eva Novak",
    "Lucas Moreau",
]
PROJECTS = [
    "a new public library",
    "a riverside cycle path",
    "a community health clinic",
    "a solar farm",
    "a youth sports centre",
    "a flood barrier",
    "a bus depot",
    "a primary school extension",
]
COMPANIES = [
    "Brightwell Foods",
    "Corvane Logistics",
    "Helix Outdoor",
    "Nimbus Software",
    "Quarry Lane Textiles",
    "Tidewater Energy",
    "Larch & Finch",
    "Orbital Paints",
]
TOPICS = [
    "sleep quality",
    "reading speed",
    "seedling growth",
    "battery lifetime",
    "bridge vibration",
    "bee foraging",
    "coffee extraction",
    "soil moisture",
]
METHODS = ["a randomised trial", "a field survey", "a laboratory study", "a simulation study"]


def _news(r: random.Random) -> dict[str, object]:
    town, mayor, project = r.choice(TOWNS), r.choice(PEOPLE), r.choice(PROJECTS)
    amount, jobs, year = r.randint(3, 90), r.choice([40, 60, 120, 250, 300]), r.randint(2027, 2031)
    yes = r.randint(6, 9)
    no = r.randint(1, 4)
    other_town = r.choice([t for t in TOWNS if t != town])
    doc = (
        f"The {town} town council on Tuesday approved a {amount} million dollar plan to build "
        f"{project}. The vote was {yes} to {no}. Mayor {mayor} said the project would create "
        f"about {jobs} local jobs and should open in {year}. Opponents argued that the money "
        f"should go to road repairs, but the majority said the plan had been reviewed twice. "
        f"Construction is expected to start next spring."
    )
    seed = (
        f"{town}'s council approved a {amount} million dollar plan for {project}, which the "
        f"mayor says will create about {jobs} jobs and open in {year}."
    )
    return {
        "doc": doc,
        "seed": seed,
        "paraphrases": [
            f"By a vote of {yes} to {no}, the {town} council backed {amount} million dollars for "
            f"{project}, expected to open in {year}.",
            f"Mayor {mayor} said the {project.split(' ', 1)[1]} approved by the {town} council "
            f"would bring about {jobs} jobs.",
        ],
        "edits": {
            "entity_modification": seed.replace(town, other_town, 1),
            "antonym_swap": seed.replace("approved", "rejected", 1),
            "hallucinated_fact_insertion": seed[:-1] + ", after a public referendum.",
            "negation_insertion_removal": seed.replace("will create", "will not create", 1),
        },
    }


def _meeting(r: random.Random) -> dict[str, object]:
    company, lead, other = r.choice(COMPANIES), r.choice(PEOPLE), r.choice(PEOPLE)
    pct, week = r.randint(4, 30), r.randint(2, 9)
    while other == lead:
        other = r.choice(PEOPLE)
    doc = (
        f"{lead}: Thanks for joining. The headline is that {company} sales grew {pct} percent "
        f"this quarter, mostly from the new online store.\n"
        f"{other}: That's good news. Are we still on track to launch the loyalty programme?\n"
        f"{lead}: We are. The launch is planned for week {week}, and support will be staffed "
        f"from day one.\n{other}: Then I'll send the customer email next Monday.\n"
        f"{lead}: Great, let's keep the budget unchanged for now."
    )
    seed = (
        f"{lead} reported that {company} sales grew {pct} percent this quarter and that the "
        f"loyalty programme will launch in week {week}."
    )
    return {
        "doc": doc,
        "seed": seed,
        "paraphrases": [
            f"The team heard that quarterly sales at {company} rose {pct} percent, driven by the "
            f"online store.",
            f"The loyalty programme is set for week {week}, and {other} will email customers "
            f"next Monday.",
        ],
        "edits": {
            "entity_modification": seed.replace(f"{pct} percent", f"{pct + 7} percent", 1),
            "antonym_swap": seed.replace("grew", "fell", 1),
            "hallucinated_fact_insertion": seed[:-1] + ", and the budget will be doubled.",
            "negation_insertion_removal": seed.replace("will launch", "will not launch", 1),
        },
    }


def _science(r: random.Random) -> dict[str, object]:
    topic, method, author = r.choice(TOPICS), r.choice(METHODS), r.choice(PEOPLE)
    n, effect = r.randint(40, 900), r.randint(5, 35)
    doc = (
        f"We report {method} of {topic} with {n} participants or units, led by {author}. "
        f"The intervention improved {topic} by {effect} percent compared with the control "
        f"condition. The effect was consistent across the two sites. We did not observe any "
        f"adverse outcomes. Limitations include the short follow-up period of six weeks."
    )
    seed = (
        f"{method.capitalize()} of {n} units found that the intervention improved {topic} "
        f"by {effect} percent, with no adverse outcomes."
    )
    return {
        "doc": doc,
        "seed": seed,
        "paraphrases": [
            f"In {method} led by {author}, {topic} was {effect} percent better than under the "
            f"control condition.",
            f"The study of {topic} found a {effect} percent improvement that held at both sites.",
        ],
        "edits": {
            "entity_modification": seed.replace(f"{n} units", f"{n * 3} units", 1),
            "antonym_swap": seed.replace("improved", "worsened", 1),
            "hallucinated_fact_insertion": seed[:-1] + " over a two-year follow-up.",
            "negation_insertion_removal": seed.replace("found that", "found no evidence that", 1),
        },
    }


MAKERS = {"news": _news, "meeting": _meeting, "science": _science}


def release_records(seed: int = 20261122) -> dict[str, list[dict[str, object]]]:
    """The demo release: one SummEdits-format record list per domain (deterministic)."""
    out: dict[str, list[dict[str, object]]] = {}
    for domain in DOMAINS:
        r = random.Random(f"{seed}-{domain}")
        recs: list[dict[str, object]] = []
        for d in range(DOCS_PER_DOMAIN):
            item = MAKERS[domain](r)
            base = f"demo-{domain}-{d:02d}"
            split = "evaluation" if d < DEV_DOCS else "test"
            seed_summary = str(item["seed"])
            recs.append(
                {
                    "id": f"{base}_og",
                    "doc": item["doc"],
                    "summary": seed_summary,
                    "label": 1,
                    "original_summary": seed_summary,
                    "edit_types": [],
                    "split": split,
                }
            )
            k = 0
            for para in cast(list[str], item["paraphrases"]):
                recs.append(
                    {
                        "id": f"{base}_{k}",
                        "doc": item["doc"],
                        "summary": para,
                        "label": 1,
                        "original_summary": seed_summary,
                        "edit_types": [],
                        "split": split,
                    }
                )
                k += 1
            for etype, text in cast(dict[str, str], item["edits"]).items():
                recs.append(
                    {
                        "id": f"{base}_{k}",
                        "doc": item["doc"],
                        "summary": text,
                        "label": 0,
                        "original_summary": seed_summary,
                        "edit_types": [etype],
                        "split": split,
                    }
                )
                k += 1
        out[domain] = recs
    return out


def write_release(folder: Path = DEMO_SOURCE) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for domain, recs in release_records().items():
        f = folder / f"demo_{domain}.json"
        f.write_text(json.dumps(recs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(f)
    return written


# --------------------------------------------------------------------------------------------
# baseline runs


BASELINES = [
    (
        ModelInfo(
            name="Always consistent",
            kind="baseline",
            description="Predicts every summary consistent.",
        ),
        "constant",
    ),
    (
        ModelInfo(
            name="Random guess (seed 0)", kind="baseline", description="A fair coin per summary."
        ),
        "random",
    ),
    (
        ModelInfo(
            name="Summary-token precision",
            kind="non-llm",
            description="Share of the summary's word tokens found in the document; "
            "threshold tuned on dev.",
        ),
        "lexical-overlap",
    ),
    (
        ModelInfo(
            name="Novel numbers & names",
            kind="non-llm",
            description="Flags summaries whose numbers or capitalised words are absent "
            "from the document.",
        ),
        "novel-entities",
    ),
]


def baseline_predictions(kind: str, samples: pd.DataFrame) -> pd.DataFrame:
    from evaluator.detectors import get_detector

    ids = samples["sample_id"].tolist()
    if kind == "constant":
        return pd.DataFrame({"sample_id": ids, "label": 1})
    if kind == "random":
        rng = np.random.default_rng(0)
        return pd.DataFrame({"sample_id": ids, "label": rng.integers(0, 2, len(ids))})
    det = get_detector(kind)()
    scores = det.score(samples["document"].tolist(), samples["summary"].tolist())
    return pd.DataFrame({"sample_id": ids, "score": scores})


def build_demo(
    force: bool = False, root: Path | None = None, source: Path = DEMO_SOURCE
) -> Iterator[str]:
    """Ingest the demo release and write its baseline runs (skipped when present, unless force)."""
    rep = pipeline.ingest("demo", source, root=root)
    yield f"demo benchmark: {rep.n_samples} samples, version {rep.version}"
    spec = registry.get("demo")
    samples = ingested.load_samples("demo", root)
    existing = runs.list_runs(root, benchmark="demo", include_hidden=True).runs
    for model, kind in BASELINES:
        old = [r for r in existing if r.model.name == model.name]
        if old and not force and all(r.benchmark_version == rep.version for r in old):
            yield f"  {model.name}: present"
            continue
        for r in old:
            runs.delete_run(r.run_id, root)
        preds = baseline_predictions(kind, samples)
        cfg = RunConfig(detector=kind)
        path = scorer.score_to_run(
            spec, rep.version, samples, preds, model, "evaluated", cfg, ScoreOptions(), None, root
        )
        yield f"  {model.name}: {path.name}"
