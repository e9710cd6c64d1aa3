"""FaithBench loader on the real release: counts, labels under each pooling (computed here from
the JSON, independently of the loader), the released detectors' numbers, span offsets, and bad
input."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from evaluator.benchmarks import faithbench, registry
from evaluator.benchmarks.registry import LoadedBenchmark
from evaluator.core.errors import FactBoardError, IngestError
from evaluator.ingest import pipeline
from evaluator.store import ingested, runs

SUMMARIZERS = {
    "mistralai/Mistral-7B-Instruct-v0.3",
    "microsoft/Phi-3-mini-4k-instruct",
    "Anthropic/claude-3-5-sonnet-20240620",
    "cohere/command-r-08-2024",
    "Qwen/Qwen2.5-7B-Instruct",
    "meta-llama/Meta-Llama-3.1-8B-Instruct",
    "meta-llama/Meta-Llama-3.1-70B-Instruct",
    "google/gemini-1.5-flash-001",
    "openai/GPT-3.5-Turbo",
    "openai/gpt-4o",
}

# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def release(shared_benchmarks: Path) -> Path:
    return shared_benchmarks / "faithbench"


@pytest.fixture(scope="module")
def raw(release: Path) -> dict[str, dict[str, Any]]:
    """The release's samples as its JSON has them, by the loader's id (b<batch>-<sample_id>)."""
    out = {}
    for path in sorted((release / "data_for_release").glob("batch_*.json")):
        batch = int(path.stem.split("_")[1])
        for rec in json.loads(path.read_text(encoding="utf-8"))["samples"]:
            out[f"b{batch:02d}-{rec['sample_id']:03d}"] = rec
    return out


@pytest.fixture(scope="module")
def loaded(release: Path) -> LoadedBenchmark:
    return faithbench.load(release)


@pytest.fixture(scope="module")
def stored(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release ingested into a fresh data root (released runs scored)."""
    root = tmp_path_factory.mktemp("faithbench") / "leaderboard_data"
    pipeline.ingest("faithbench", release, root=root)
    return root


# an independent reading of the upstream binarisation (scripts/binarize.py)
RANK = {"Benign": 1, "Questionable": 2, "Unwanted": 3, "Unwanted.Intrinsic": 3}
RANK["Unwanted.Extrinsic"] = 3
NAMES = {1: "benign", 2: "questionable", 3: "unwanted"}


def upstream_label(rec: dict[str, Any], pooling: str, hallucinated: set[str]) -> int:
    distinct = {lab for a in rec["annotations"] for lab in a["label"]}
    if not distinct:
        return 1
    ranks = [RANK[lab] for lab in distinct]
    if pooling == "worst":
        pooled = max(ranks)
    elif pooling == "best":
        pooled = min(ranks)
    else:  # upstream: max(set(labels), key=labels.count) over the distinct labels' ranks
        counts = Counter(ranks)
        top = max(counts.values())
        pooled = min(r for r, c in counts.items() if c == top)
    return 0 if NAMES[pooled] in hallucinated else 1


# ----------------------------------------------------------------------------- the release


def test_spec_is_registered() -> None:
    spec = registry.get("faithbench")
    assert spec.task == "detection+explanation"
    assert spec.primary_metric == "balanced_accuracy"
    assert spec.splits == ("test",)
    assert [s.kind for s in spec.slices] == ["summarizer", "error_type"]
    assert spec.fixed_threshold == 0.5
    assert set(spec.loader_options) == {"pooling", "hallucinated"}
    card = " ".join(spec.caveats)
    assert "Selection bias" in card and "towards chance" in card
    assert "FaithBench.csv (800 rows)" in card and "750" in card
    assert "CC BY-NC-SA 4.0" in spec.license


def test_counts_in_source_md(loaded: LoadedBenchmark, raw: dict[str, dict[str, Any]]) -> None:
    samples = loaded.samples
    assert len(samples) == len(raw) == 750
    assert {s.sample_id for s in samples} == set(raw)
    by_llm = Counter(s.attributes["summarizer"] for s in samples)
    assert set(by_llm) == SUMMARIZERS and set(by_llm.values()) == {75}
    assert len({s.attributes["batch"] for s in samples}) == 15
    annotations = [a for s in samples for a in faithbench.annotations_of(s.attributes)]
    assert len(annotations) == 2189
    assert sum(bool(a["note"]) for a in annotations) == 1978
    labels = Counter(lab for a in annotations for lab in a["label"])
    assert labels == {
        "Unwanted": 1098,
        "Unwanted.Intrinsic": 732,
        "Benign": 676,
        "Questionable": 450,
        "Unwanted.Extrinsic": 306,
    }
    # 75 source texts, each summarized by all ten LLMs: one document id each
    docs = Counter(s.doc_id for s in samples)
    assert len(docs) == 75 and set(docs.values()) == {10}
    for s in samples:
        assert s.document == raw[s.sample_id]["source"]
        assert s.summary == raw[s.sample_id]["summary"]


def test_default_labels_are_upstream_worst_pooling(
    loaded: LoadedBenchmark, raw: dict[str, dict[str, Any]]
) -> None:
    labels = {s.sample_id: s.label for s in loaded.samples}
    assert Counter(labels.values()) == {1: 239, 0: 511}
    mine = {k: upstream_label(r, "worst", {"questionable", "unwanted"}) for k, r in raw.items()}
    assert labels == mine
    pooled = Counter(s.attributes["pooled_class"] for s in loaded.samples)
    assert pooled == {"consistent": 175, "benign": 64, "questionable": 72, "unwanted": 439}
    assert {s.attributes["labelling"] for s in loaded.samples} == {
        "worst pooling; inconsistent: questionable + unwanted"
    }


@pytest.mark.parametrize(
    ("pooling", "hallucinated"),
    [
        ("best", "questionable,unwanted"),
        ("majority", "questionable,unwanted"),
        ("worst", "unwanted"),
        ("worst", "benign,questionable,unwanted"),
        ("majority", "Unwanted + Questionable"),
    ],
)
def test_other_poolings(
    release: Path, raw: dict[str, dict[str, Any]], pooling: str, hallucinated: str
) -> None:
    got = faithbench.load(release, pooling=pooling, hallucinated=hallucinated)
    classes = {c.strip().lower() for c in hallucinated.replace("+", ",").split(",")}
    mine = {k: upstream_label(r, pooling, classes) for k, r in raw.items()}
    assert {s.sample_id: s.label for s in got.samples} == mine
    assert any(f"pooling={pooling}" in n for n in got.notes)
    named = "worst pooling; inconsistent: questionable + unwanted"
    assert (
        {s.attributes["labelling"] for s in got.samples}
        == {faithbench.labelling(pooling, faithbench.hallucinated_option(hallucinated))}
        != {named}
    )
    assert any("not comparable" in n for n in got.notes)
    for run in got.released_runs:
        assert run.config.extra["pooling"] == pooling
        assert set(run.config.extra["hallucinated_classes"]) == classes


def test_pooling_strategies_differ(release: Path) -> None:
    """The choice matters: each strategy gives its own count of inconsistent summaries."""
    counts = {
        p: sum(s.label == 0 for s in faithbench.load(release, pooling=p).samples)
        for p in ("worst", "majority", "best")
    }
    assert counts["worst"] == 511
    assert counts["best"] < counts["majority"] <= counts["worst"]


def test_majority_pools_over_distinct_labels() -> None:
    """Upstream's quirk: "Unwanted" and "Unwanted.Intrinsic" are two votes; ties go to the
    least severe class; the number of annotations with a label does not count."""
    f = faithbench.pooled_class
    assert f(["Benign", "Benign", "Benign", "Unwanted", "Unwanted.Intrinsic"], "majority") == (
        "unwanted"
    )
    assert f(["Benign", "Questionable"], "majority") == "benign"
    assert f(["Questionable", "Unwanted"], "worst") == "unwanted"
    assert f(["Questionable", "Unwanted"], "best") == "questionable"
    assert f([], "worst") is None


def test_spans_select_their_text(loaded: LoadedBenchmark, raw: dict[str, dict[str, Any]]) -> None:
    n = 0
    for s in loaded.samples:
        spans = faithbench.annotations_of(s.attributes)
        assert len(spans) == len(raw[s.sample_id]["annotations"])
        for a, r in zip(spans, raw[s.sample_id]["annotations"], strict=True):
            assert s.summary[a["start"] : a["end"]] == a["span"] == r["summary_span"]
            assert (a["start"], a["end"]) == (r["summary_start"], r["summary_end"])
            assert a["annotator"] == r["annotator_name"]
            n += 1
    assert n == 2189
    # a known one: the first sample of batch 1
    first = faithbench.annotations_of(
        next(s for s in loaded.samples if s.sample_id == "b01-000").attributes
    )
    assert first[0]["span"] == "production" and (first[0]["start"], first[0]["end"]) == (78, 88)


def test_error_types_and_reference_explanations(
    loaded: LoadedBenchmark, raw: dict[str, dict[str, Any]]
) -> None:
    for s in loaded.samples:
        rec = raw[s.sample_id]
        assert set(s.error_types) == {lab for a in rec["annotations"] for lab in a["label"]}
        if not rec["annotations"]:
            assert s.reference_explanation is None
            continue
        ref = s.reference_explanation or ""
        for a in rec["annotations"]:
            assert f'"{a["summary_span"]}"' in ref and a["annotator_name"] in ref
            if a["note"].strip():
                assert a["note"].strip() in ref
    # every inconsistent summary has a reference for the judge protocols (EvalV4)
    assert all(s.reference_explanation for s in loaded.samples if s.label == 0)


def test_released_runs_match_the_json(
    loaded: LoadedBenchmark, raw: dict[str, dict[str, Any]]
) -> None:
    assert [r.model.name for r in loaded.released_runs] == [d.name for d in faithbench.RELEASED]
    in_selection = {r.model.name for r in loaded.released_runs if r.config.extra["in_selection"]}
    assert in_selection == {"HHEM-2.1-Open", "TrueTeacher", "TRUE NLI", "GPT-3.5-Turbo", "GPT-4o"}
    for run, det in zip(loaded.released_runs, faithbench.RELEASED, strict=True):
        p = run.predictions.set_index("sample_id")
        for sid, rec in raw.items():
            v = rec["metadata"][det.key]
            if det.scored:
                assert p.at[sid, "score"] == v
            elif v is None:
                assert sid not in p.index
            else:
                assert p.at[sid, "label"] == v
        if det.key in faithbench.SELECTION:
            assert "Part of the sample selection" in run.note
            assert "whose disagreement chose FaithBench's samples" in str(run.model.description)
        else:
            assert "Not part of FaithBench's sample selection" in str(run.model.description)
        assert run.config.extra["note"] == run.note


def _independent(raw: dict[str, dict[str, Any]], key: str) -> tuple[float, float | None, int]:
    """Balanced accuracy (inconsistent = 0) of one released detector, from the JSON alone, with
    the default labels; the HHEM scores labelled consistent at >= 0.5; AUROC for scores."""
    ids = [k for k, r in raw.items() if r["metadata"][key] is not None]
    y = np.array([upstream_label(raw[k], "worst", {"questionable", "unwanted"}) for k in ids])
    v = np.array([float(raw[k]["metadata"][key]) for k in ids])
    scored = key.startswith("hhem")
    pred = (v >= 0.5).astype(int) if scored else v.astype(int)
    auc = float(roc_auc_score(y, v)) if scored else None
    return float(balanced_accuracy_score(y, pred)), auc, len(ids)


def test_released_runs_on_the_board(stored: Path, raw: dict[str, dict[str, Any]]) -> None:
    meta = ingested.load_meta("faithbench", stored)
    assert meta["stats"]["n_samples"] == 750
    assert any("pooling=worst" in n for n in meta["notes"])
    listed = {r.model.name: r for r in runs.list_runs(stored, benchmark="faithbench").runs}
    assert set(listed) == {d.name for d in faithbench.RELEASED}
    for det in faithbench.RELEASED:
        rec = listed[det.name]
        assert rec.origin == "released"
        bacc, auc, n = _independent(raw, det.key)
        overall = {s.metric: s for s in rec.results if s.slice_kind == "overall"}
        assert overall["balanced_accuracy"].value == pytest.approx(bacc, abs=1e-12)
        assert overall["balanced_accuracy"].n == n
        lo, hi = overall["balanced_accuracy"].ci_low, overall["balanced_accuracy"].ci_high
        assert lo is not None and hi is not None and lo < bacc < hi
        if det.scored:
            assert rec.threshold.policy == "fixed" and rec.threshold.threshold == 0.5
            assert overall["roc_auc"].value == pytest.approx(auc, abs=1e-12)
        else:
            assert rec.threshold.policy == "labels" and "roc_auc" not in overall
    # TRUE NLI: the two null verdicts are missing predictions, not guesses
    assert listed["TRUE NLI"].counts.missing == 2
    # the paper's finding, recomputed: every released detector is near chance
    for rec in listed.values():
        point = next(
            s.value
            for s in rec.results
            if s.slice_kind == "overall" and s.metric == "balanced_accuracy"
        )
        assert point is not None and 0.4 < point < 0.6


def test_reingest_is_a_no_op(stored: Path, release: Path) -> None:
    rep = pipeline.ingest("faithbench", release, root=stored)
    assert not rep.changed


# ----------------------------------------------------------------------------- bad input


@pytest.fixture
def copy(release: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "faithbench"
    (dst / "data_for_release").mkdir(parents=True)
    for name in ("batch_1.json", "batch_2.json"):
        shutil.copy(release / "data_for_release" / name, dst / "data_for_release" / name)
    for p in dst.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data["samples"])
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_subset_of_batches_loads(copy: Path) -> None:
    got = faithbench.load(copy)
    assert len(got.samples) == 100
    assert {s.sample_id[:3] for s in got.samples} == {"b01", "b02"}
    # the folder itself or one batch file
    assert len(faithbench.load(copy / "data_for_release").samples) == 100
    assert len(faithbench.load(copy / "data_for_release" / "batch_2.json").samples) == 50


def test_span_offsets_that_do_not_select_the_span(copy: Path) -> None:
    def shift(samples: list[dict[str, Any]]) -> None:
        samples[0]["annotations"][0]["summary_start"] += 1

    _edit(copy / "data_for_release" / "batch_1.json", shift)
    with pytest.raises(IngestError, match="do not select summary_span") as e:
        faithbench.load(copy)
    assert "batch_1.json" in str(e.value)


def test_unknown_label(copy: Path) -> None:
    def bad(samples: list[dict[str, Any]]) -> None:
        samples[0]["annotations"][0]["label"] = ["Unwanted.Other"]

    _edit(copy / "data_for_release" / "batch_1.json", bad)
    with pytest.raises(IngestError, match="'Unwanted.Other' not one of"):
        faithbench.load(copy)


def test_bad_detector_output(copy: Path) -> None:
    def bad(samples: list[dict[str, Any]]) -> None:
        samples[3]["metadata"]["gpt_4o"] = 0.7

    _edit(copy / "data_for_release" / "batch_2.json", bad)
    with pytest.raises(IngestError, match="is not 0 or 1"):
        faithbench.load(copy)


def test_truncated_batch(copy: Path) -> None:
    p = copy / "data_for_release" / "batch_2.json"
    p.write_text(p.read_text(encoding="utf-8")[:5000], encoding="utf-8")
    with pytest.raises(IngestError, match="malformed or truncated JSON"):
        faithbench.load(copy)


def test_bad_options_and_sources(copy: Path, tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="pooling 'mean'"):
        faithbench.load(copy, pooling="mean")
    with pytest.raises(IngestError, match="hallucinated classes"):
        faithbench.load(copy, hallucinated="wrong")
    with pytest.raises(IngestError, match="no batch_"):
        faithbench.load(tmp_path)
    with pytest.raises(IngestError, match="does not exist"):
        faithbench.load(tmp_path / "nowhere")
    with pytest.raises(IngestError, match="no Hugging Face hub release"):
        faithbench.load("hub")
    with pytest.raises(FactBoardError, match="unknown option 'pool'"):
        pipeline.ingest("faithbench", copy, {"pool": "best"}, root=tmp_path / "data")


# ----------------------------------------------------------------------------- explanations


def raw_note(release: Path, batch: int, sample_id: int) -> str:
    path = release / "data_for_release" / f"batch_{batch}.json"
    rec = next(
        r
        for r in json.loads(path.read_text(encoding="utf-8"))["samples"]
        if r["sample_id"] == sample_id
    )
    return str(rec["annotations"][0]["note"]).strip()


def test_an_llm_detectors_explanations_are_judged_against_the_notes(
    copy: Path, tmp_data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EvalV4 grades a FaithBench explanation against the annotators' notes; EvalV1 sees the
    source text and the summary."""
    pytest.importorskip("openai")
    from evaluator.llm.execute import RetryPolicy
    from evaluator.llm.judges import judge_run
    from evaluator.llm.runner import run_llm
    from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

    monkeypatch.setenv("FACTBOARD_COMPATIBLE_API_KEY", "sk-test-FAITH-5555555555")
    monkeypatch.delenv("FACTBOARD_LLM_CACHE", raising=False)
    no_wait = RetryPolicy(max_attempts=2, base=0.0, sleep=lambda s: None)
    pipeline.ingest("faithbench", copy, root=tmp_data_root)
    samples = ingested.load_samples("faithbench", tmp_data_root).set_index("sample_id")

    def detector(req: Recorded) -> Reply:
        return Reply(
            text='{"consistent": "no", "explanation": "The budget is not a production one."}'
        )

    with FakeLLMServer("openai", responder=detector) as s:
        (path,) = run_llm(
            "compatible:det",
            "faithbench",
            prompt_id="summexecedit-de-v1",
            options={"base_url": s.url},
            root=tmp_data_root,
            retry=no_wait,
            limit=6,
        )
    preds = runs.read_predictions(path)
    flagged = [i for i in preds["sample_id"] if samples.at[i, "label"] == 0]
    assert flagged, "the first samples include inconsistent ones"

    seen: dict[str, list[str]] = {"EvalV4": [], "EvalV1": []}

    def judge(req: Recorded) -> Reply:
        tag = req.judge_tag
        for name in ("REFERENCE EXPLANATION", "DOCUMENT"):
            if f"<<<{name} {tag}>>>" in req.user:
                seen["EvalV4" if name.startswith("REF") else "EvalV1"].append(req.user)
        return Reply(text=f"Compared.\nGRADE {tag}: 1")

    with FakeLLMServer("openai", responder=judge) as j:
        path = judge_run(
            path.name,
            "compatible:judge",
            "EvalV4",
            options={"base_url": j.url},
            root=tmp_data_root,
            retry=no_wait,
        )
        path = judge_run(
            path.name,
            "compatible:judge",
            "EvalV1",
            options={"base_url": j.url},
            root=tmp_data_root,
            retry=no_wait,
        )
    assert len(seen["EvalV4"]) == len(seen["EvalV1"]) == len(flagged)
    notes = [str(samples.at[i, "reference_explanation"]) for i in flagged]
    for note in notes:  # each flagged sample's notes reach the judge as its reference
        assert any(note in u for u in seen["EvalV4"])
    assert flagged[0] == "b01-000"
    assert raw_note(copy, 1, 0) in notes[0]
    for i in flagged:
        assert any(str(samples.at[i, "document"]) in u for u in seen["EvalV1"])
    grades = runs.read_grades(path)
    assert grades is not None and set(grades["protocol"]) == {"EvalV4", "EvalV1"}
    rec = runs.read_record(path)
    assert {r.grader for r in rec.results if r.metric == "explanation_score"} == {
        "compatible:judge/EvalV4",
        "compatible:judge/EvalV1",
    }
