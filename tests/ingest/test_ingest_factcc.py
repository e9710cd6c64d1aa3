"""FactCC explanation study (SummEdits paper §3.5, Figure 2): fidelity and bad inputs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from evaluator.benchmarks import factcc_explanations as fe
from evaluator.benchmarks.registry import LoadedBenchmark
from evaluator.core.errors import IngestError
from evaluator.core.types import GRADE_COLUMNS, PREDICTION_COLUMNS

# Per-model annotation counts printed by the repo notebook that draws Figure 2
# (salesforce/factualNLG, FactCC_Explanation_Annotation.ipynb, "Printing Figure 2 from the paper").
FIGURE2_COUNTS = {
    "dav003": {"unrelated": 234, "correct": 66, "incorrect": 28, "partially_correct": 2,
               "no_explanation": 1},
    "ada001": {"no_explanation": 215, "unrelated": 7, "incorrect": 3},
    "bab001": {"no_explanation": 98, "unrelated": 83, "incorrect": 2, "partially_correct": 1},
    "claudev13": {"correct": 298, "unrelated": 200, "incorrect": 40, "partially_correct": 36},
    "dav002": {"unrelated": 262, "incorrect": 36, "correct": 29, "no_explanation": 25,
               "partially_correct": 4},
    "vicuna-13b": {"unrelated": 44, "incorrect": 35, "correct": 16, "partially_correct": 8},
    "gpt4": {"correct": 288, "unrelated": 181, "partially_correct": 20, "incorrect": 12},
    "cgpt": {"unrelated": 268, "correct": 168, "incorrect": 55, "partially_correct": 34,
             "no_explanation": 2},
    "bard": {"correct": 222, "unrelated": 198, "incorrect": 47, "partially_correct": 18},
    "cohere-cmd-xl": {"no_explanation": 19, "unrelated": 6},
    "dav001": {"unrelated": 95, "incorrect": 24, "no_explanation": 6, "partially_correct": 3},
    "cur001": {"unrelated": 55, "incorrect": 13, "no_explanation": 9, "correct": 1},
    "mpt-7b-chat": {"incorrect": 18, "correct": 5, "unrelated": 3},
    "dolly-v2-12b": {"unrelated": 4, "incorrect": 2},
    "llama-13b": {"unrelated": 10, "no_explanation": 7, "incorrect": 3},
    "alpaca-13b": {"unrelated": 35, "no_explanation": 24, "incorrect": 10, "correct": 5},
}  # fmt: skip
OPEN = {"vicuna-13b", "alpaca-13b", "mpt-7b-chat", "llama-13b", "dolly-v2-12b"}


@pytest.fixture(scope="module")
def loaded(shared_benchmarks: Path) -> LoadedBenchmark:
    return fe.load(shared_benchmarks / "summedits")


def _runs_by_release_id(lb: LoadedBenchmark) -> dict:
    return {r.config.extra["release_model_id"]: r for r in lb.released_runs}


def test_spec() -> None:
    spec = fe.SPEC
    assert spec.name == "factcc_explanations"
    assert spec.title == "FactCC explanation study (SummEdits §3.5)"
    assert spec.task == "explanation-grading"
    assert spec.primary_metric == "explanation_score"
    assert spec.splits == ("test",) and spec.units == ("summary",)
    assert spec.domains == ("factcc",) and spec.hub_id is None
    assert "group_by" in spec.loader_options


def test_items_and_explanations(loaded: LoadedBenchmark) -> None:
    items = {s.doc_id for s in loaded.samples}
    assert len(items) == 125
    # A sample is an item under one prompt: 737 of the 125 x 6 pairs have an annotated explanation.
    assert len(loaded.samples) == 737
    assert len({s.sample_id for s in loaded.samples}) == 737
    assert Counter(s.attributes["prompt"] for s in loaded.samples) == {
        "fewshot-cot-prompt1": 125,
        "fewshot-gwe-prompt1": 124,
        "fewshot-gwe-prompt3": 124,
        "fewshot-gwe-prompt2": 123,
        "fewshot-cot-prompt2": 121,
        "fewshot-cot-prompt3": 120,
    }
    for s in loaded.samples:
        # §3.5: "each known inconsistent (document, summary) sample in FactCC"
        assert (s.label, s.domain, s.split, s.unit) == (0, "factcc", "test", "summary")
        assert s.document and s.summary
        assert s.sample_id == f"{s.doc_id}:{s.attributes['prompt']}"
        assert s.attributes["item_id"] == s.doc_id
    assert len({s.document for s in loaded.samples}) == 125
    assert len(loaded.released_runs) == 16
    assert sum(len(r.predictions) for r in loaded.released_runs) == 3643  # paper: "more than 3,600"
    assert any("3643 annotated explanations by 16 models" in n for n in loaded.notes)


def test_annotation_distribution_matches_figure2(loaded: LoadedBenchmark) -> None:
    runs = _runs_by_release_id(loaded)
    assert set(runs) == set(FIGURE2_COUNTS)
    for model, counts in FIGURE2_COUNTS.items():
        assert dict(Counter(runs[model].grades["rationale"])) == counts, model
    total = Counter(t for r in loaded.released_runs for t in r.grades["rationale"])
    assert total == {
        "unrelated": 1685,
        "correct": 1098,
        "no_explanation": 406,
        "incorrect": 328,
        "partially_correct": 126,
    }


def test_claims_of_section_3_5(loaded: LoadedBenchmark) -> None:
    runs = _runs_by_release_id(loaded)
    correct = {m: (r.grades["rationale"] == "correct").mean() * 100 for m, r in runs.items()}
    # "nine of the sixteen models providing correct explanations less than 10% of the time"
    assert sum(v < 10 for v in correct.values()) == 9
    # "only three models - Bard, Claude V1.3, and GPT4 - ... more than 50% of the time": GPT-4 and
    # Claude V1.3 do; Bard is at 45.8% in the released file (and in the repo's Figure 2 counts).
    assert correct["gpt4"] == pytest.approx(57.5, abs=0.05)
    assert correct["claudev13"] == pytest.approx(51.9, abs=0.05)
    assert correct["bard"] == pytest.approx(45.8, abs=0.05)
    # "MPT-7B-Chat and Dav003 ... roughly the same proportion of correct explanations (21 vs. 24%)":
    # the file gives 19.2% and 19.9%; roughly the same, but not the stated numbers.
    assert correct["mpt-7b-chat"] == pytest.approx(19.2, abs=0.05)
    assert correct["dav003"] == pytest.approx(19.9, abs=0.05)
    # "GPT3.5-turbo ... generates almost half as many correct explanations" as Claude V1.3.
    assert correct["cgpt"] / correct["claudev13"] == pytest.approx(0.61, abs=0.01)


def test_run_frames_follow_the_contracts(loaded: LoadedBenchmark) -> None:
    ids = {s.sample_id for s in loaded.samples}
    for run in loaded.released_runs:
        p, g = run.predictions, run.grades
        assert list(p.columns) == list(PREDICTION_COLUMNS)
        assert list(g.columns) == list(GRADE_COLUMNS)
        assert len(p) == len(g) == run.config.extra["n_explanations"]
        assert set(p["sample_id"]) <= ids and (p["sample_id"] == g["sample_id"]).all()
        assert p["sample_id"].is_unique  # the scorer refuses duplicate sample_ids
        assert p["score"].isna().all() and (p["label"] == 0).all()
        assert (g["judge"] == "human").all() and (g["protocol"] == "human").all()
        expected = g["rationale"].map(fe.ANNOTATION_GRADES)
        assert (g["grade"] == expected).all() and set(g["grade"]) <= {0.0, 0.5, 1.0}
        raw = [json.loads(x) for x in p["raw_output"]]
        assert [r["explanation"] for r in raw] == list(p["explanation"])
        assert [
            f"{i.split(':')[0]}:{r['prompt']}" for i, r in zip(p["sample_id"], raw, strict=True)
        ] == list(p["sample_id"])
        assert {r["prompt"] for r in raw} == set(run.config.extra["prompts"])
        assert [json.loads(x)["reason_idx"] for x in g["raw_output"]] == [
            r["reason_idx"] for r in raw
        ]
        assert run.threshold_policy == "labels"
        assert run.config.prompt_id is None


def test_models(loaded: LoadedBenchmark) -> None:
    runs = _runs_by_release_id(loaded)
    for model_id, run in runs.items():
        expected = "open-llm" if model_id in OPEN else "proprietary-llm"
        assert run.model.kind == expected, model_id
    names = {m: r.model.name for m, r in runs.items()}
    assert names["gpt4"] == "GPT-4" and names["cgpt"] == "ChatGPT"
    assert names["claudev13"] == "Claude V1.3" and names["bard"] == "Bard"
    assert len(set(names.values())) == 16


def test_explanation_share_per_model(loaded: LoadedBenchmark) -> None:
    """Mean grade (correct 1, partially correct 0.5, else 0) per model, the board's number."""
    share = {
        r.config.extra["release_model_id"]: r.grades["grade"].mean() for r in loaded.released_runs
    }
    assert share["gpt4"] == pytest.approx((288 + 0.5 * 20) / 501)
    assert share["ada001"] == 0.0
    assert max(share, key=share.__getitem__) == "gpt4"


def test_one_run_per_model_and_prompt(shared_benchmarks: Path) -> None:
    lb = fe.load(shared_benchmarks / "summedits" / fe.FILENAME, group_by="model+prompt")
    assert len(lb.samples) == 125 and {s.sample_id for s in lb.samples} == {
        s.doc_id for s in lb.samples
    }
    assert len(lb.released_runs) == 72
    assert sum(len(r.predictions) for r in lb.released_runs) == 3643
    for run in lb.released_runs:
        assert run.predictions["sample_id"].is_unique
        assert run.config.prompt_id in run.config.extra["prompts"]
    keys = {(r.config.extra["release_model_id"], r.config.prompt_id) for r in lb.released_runs}
    assert len(keys) == 72


def test_released_runs_score_with_the_pipeline(loaded: LoadedBenchmark) -> None:
    """The scorer takes each run as is: explanation shares per model equal Figure 2's."""
    from evaluator.core.scoring import ScoreOptions, score

    samples = pd.DataFrame([s.to_row() for s in loaded.samples])
    runs = _runs_by_release_id(loaded)
    for model in ("gpt4", "dolly-v2-12b"):
        run = runs[model]
        scored = score(fe.SPEC, samples, run.predictions, ScoreOptions(resamples=50), run.grades)
        shares = {
            r.slice_value: r.value
            for r in scored.results
            if r.metric == "explanation_share" and r.slice_kind == "explanation_type"
        }
        n = sum(FIGURE2_COUNTS[model].values())
        assert shares == pytest.approx({k: v / n for k, v in FIGURE2_COUNTS[model].items()})


# --------------------------------------------------------------------------- bad inputs


def _item(item_id: str = "100") -> dict:
    return {
        "id": item_id,
        "doc": "The mayor opened the bridge on Monday.",
        "summary": "The mayor closed the bridge on Monday.",
        "samples": [
            {
                "model": "gpt4",
                "prompt": "fewshot-cot-prompt1",
                "prediction": 0,
                "explanation": "No. The document says the bridge was opened, not closed.",
                "annotation": "correct",
                "reason_idx": 0,
            },
            {
                "model": "dolly-v2-12b",
                "prompt": "fewshot-gwe-prompt1",
                "prediction": 0,
                "explanation": "No.",
                "annotation": "no_explanation",
                "reason_idx": 1,
            },
        ],
    }


def _write(tmp_path: Path, items: list) -> Path:
    path = tmp_path / fe.FILENAME
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def test_hand_made_file(tmp_path: Path) -> None:
    lb = fe.load(_write(tmp_path, [_item("100"), _item("101")]).parent)
    assert [s.sample_id for s in lb.samples] == [
        "100:fewshot-cot-prompt1",
        "100:fewshot-gwe-prompt1",
        "101:fewshot-cot-prompt1",
        "101:fewshot-gwe-prompt1",
    ]
    assert [r.model.name for r in lb.released_runs] == ["GPT-4", "Dolly-v2-12B"]
    gpt4 = lb.released_runs[0]
    assert list(gpt4.grades["grade"]) == [1.0, 1.0]
    dolly = lb.released_runs[1]
    assert list(dolly.grades["rationale"]) == ["no_explanation"] * 2
    assert list(dolly.grades["grade"]) == [0.0, 0.0]
    assert dolly.model.params == "12B" and dolly.model.kind == "open-llm"
    assert isinstance(gpt4.predictions, pd.DataFrame)


@pytest.mark.parametrize(
    ("change", "record", "field"),
    [
        (lambda it: it["samples"][1].update(annotation="wrong"), "#0 (id '100'), samples[1]",
         "annotation"),
        (lambda it: it["samples"][0].update(model="gpt5"), "#0 (id '100'), samples[0]", "model"),
        (lambda it: it["samples"][0].update(prediction=3), "#0 (id '100'), samples[0]",
         "prediction"),
        (lambda it: it["samples"][0].pop("prompt"), "#0 (id '100'), samples[0]", "prompt"),
        (lambda it: it["samples"][0].update(reason_idx="x"), "#0 (id '100'), samples[0]",
         "reason_idx"),
        (lambda it: it.pop("samples"), "#0 (id '100')", "samples"),
        (lambda it: it.update(document=it.pop("doc")), "#0 (id '100')", "doc"),
        (lambda it: it["samples"][1].update(prompt="fewshot-cot-prompt1", model="gpt4"),
         "item '100'", "prompt"),
        (lambda it: it["samples"][1].update(reason_idx=0), "item '100'", "reason_idx"),
    ],
)  # fmt: skip
def test_bad_items(tmp_path: Path, change, record: str, field: str) -> None:
    item = _item()
    change(item)
    path = _write(tmp_path, [item])
    with pytest.raises(IngestError) as err:
        fe.load(path)
    assert (err.value.file, str(err.value.record), err.value.field) == (str(path), record, field)


def test_duplicate_item_and_truncation(tmp_path: Path) -> None:
    path = _write(tmp_path, [_item("7"), _item("7")])
    with pytest.raises(IngestError) as err:
        fe.load(path)
    assert (str(err.value.record), err.value.field) == ("#1 (id '7')", "id")
    path.write_text(json.dumps([_item()])[:-25], encoding="utf-8")
    with pytest.raises(IngestError) as err:
        fe.load(path)
    assert "truncated" in str(err.value)


def test_no_hub_and_bad_options(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no Hugging Face release"):
        fe.load("hub")
    with pytest.raises(IngestError, match="group_by"):
        fe.load(_write(tmp_path, [_item()]), group_by="prompt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(IngestError, match=fe.FILENAME):
        fe.load(tmp_path / "empty")
