"""What the pages show, computed without Streamlit: the board's filters and links, the metric
notice, the comparison's verdict and tables, the sample facts, the benchmark card's text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluator.benchmarks import registry
from evaluator.core import vocabulary as V
from evaluator.jobs.queue import Job
from explorer import benchmarks as cards
from explorer import compare_view as CV
from explorer import explanations
from explorer import leaderboard as L
from explorer import queue as jobs
from explorer import samples as X


def _rows() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": ["beta", "Alpha", "gamma-7B", "Paper model"],
            "kind_code": ["open-llm", "baseline", "non-llm", "open-llm"],
            "origin_code": ["submitted", "evaluated", "evaluated", "reported"],
            "value": [0.9, 0.5, 0.7, 0.8],
            "rank": pd.array([1, 3, 2, pd.NA], dtype="Int64"),
            "n": pd.array([100, 300, 200, pd.NA], dtype="Int64"),
        }
    )


def test_filter_rows_searches_filters_and_orders() -> None:
    rows = _rows()
    assert L.filter_rows(rows, "balanced_accuracy").equals(rows)  # the board's own order
    look = L.Look(search="A")  # case-insensitive, plain text
    assert list(L.filter_rows(rows, "balanced_accuracy", look)["model"]) == [
        "beta",
        "Alpha",
        "gamma-7B",
        "Paper model",
    ]
    look = L.Look(search="7b")
    assert list(L.filter_rows(rows, "balanced_accuracy", look)["model"]) == ["gamma-7B"]
    look = L.Look(search=".")  # not a regular expression
    assert L.filter_rows(rows, "balanced_accuracy", look).empty
    look = L.Look(kinds=("open-llm",), origins=("reported",))
    assert list(L.filter_rows(rows, "balanced_accuracy", look)["model"]) == ["Paper model"]
    by = {s: list(L.filter_rows(rows, "fpr", L.Look(sort=s))["model"]) for s in L.SORTS}
    assert by["model"] == ["Alpha", "beta", "gamma-7B", "Paper model"]
    assert by["n"] == ["Alpha", "gamma-7B", "beta", "Paper model"]  # largest first, NA last
    assert by["rank"] == ["beta", "gamma-7B", "Alpha", "Paper model"]
    # within one rank, the better value first: lower for FPR, higher for BAcc
    tied = rows.assign(rank=pd.array([1, 1, 1, pd.NA], dtype="Int64"))
    fpr = L.filter_rows(tied, "fpr", L.Look(sort="rank"))
    bacc = L.filter_rows(tied, "balanced_accuracy", L.Look(sort="rank"))
    assert list(fpr["model"][:3]) == ["Alpha", "gamma-7B", "beta"]
    assert list(bacc["model"][:3]) == ["beta", "gamma-7B", "Alpha"]


def test_kinds_origins_and_columns_come_from_the_vocabulary() -> None:
    rows = _rows()
    assert L.kinds_present(rows) == ["non-llm", "open-llm", "baseline"]  # vocabulary order
    assert L.origins_present(rows) == ["reported", "submitted", "evaluated"]
    assert L.column_label("m:fpr") == V.metric_label("fpr") == "FPR"
    assert L.column_label("m:partial_spearman") == "Partial ρ"
    assert L.column_label("run_id") == "Run"
    # a handful of columns by default; the others in the picker, in the table's order
    assert L.DEFAULT_COLUMNS == ["kind", "ci_bar", "delta", "n", "source"]
    assert all(c in L.OPTIONAL_COLUMNS for c in L.DEFAULT_COLUMNS)
    assert L.count_line(rows.head(3), rows) == (
        "**3** rows shown (3 FactBoard runs, 0 published numbers) of 4"
    )
    assert L.count_line(rows.head(1), rows) == (
        "**1** row shown (1 FactBoard run, 0 published numbers) of 4"
    )


def test_benchmark_order_and_metric_keys() -> None:
    order = L.benchmark_order(["demo", "summedits"], ["demo"], ["tofueval", "frank"])
    assert order == ["summedits", "demo", "frank", "tofueval"]
    opts = L.Options(["summary"], ["overall"], {"overall": [""]}, [])
    assert L.metric_keys(opts) == []
    opts = L.Options(
        ["summary"], ["overall"], {"overall": [""]}, [("joint_score", "gpt-4"), ("fpr", None)]
    )
    keys = L.metric_keys(opts)
    assert keys == ["joint_score@gpt-4", "fpr"]
    assert [L.parse_metric_key(k) for k in keys] == [("joint_score", "gpt-4"), ("fpr", None)]
    assert L.metric_key_label(keys[0]) == "JS (gpt-4)"
    assert L.slice_noun("dataset+topic_type") == "dataset × topic type"
    assert L.slice_noun("edit_type") == "edit type"


def test_a_metric_missing_from_the_new_view_is_said() -> None:
    keys = ["cohen_kappa"]
    note = L.metric_notice("fpr", keys, "cohen_kappa", "sentence", "dataset")
    assert note == (
        "FPR is not reported in the view 'By dataset' (sentence level); showing Cohen κ instead."
    )
    assert L.metric_notice("cohen_kappa", keys, "cohen_kappa", "sentence", "dataset") is None
    assert L.metric_notice(None, keys, "cohen_kappa", "sentence", "dataset") is None
    graded = L.metric_notice("joint_score@gpt-4", ["fpr"], "fpr", "summary", "overall")
    assert graded is not None and graded.startswith("JS (gpt-4) is not reported")


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("overall", "", {}),
        ("domain", "news", {"domain": "news"}),
        ("dataset", "mediasum", {"domain": "mediasum"}),
        ("edit_type", "antonym_swap", {"etype": "antonym_swap"}),
        ("error_type", "entity", {"etype": "entity"}),
        ("topic_type", "main", {"topic": "main"}),
        (
            "dataset+topic_type",
            "meetingbank+marginal",
            {"domain": "meetingbank", "topic": "marginal"},
        ),
        ("n_edit_types", "2", {}),
    ],
)
def test_samples_link_narrows_to_the_slice(kind: str, value: str, expected: dict) -> None:
    params = L.samples_link("demo", "summary", kind, value, "run-1", "dev+test")
    base = {"benchmark": "demo", "unit": "summary", "wrong": "run-1", "split": ["dev", "test"]}
    assert params == {**base, **expected}


def test_chart_kinds() -> None:
    assert L.chart_kinds({"overall", "domain", "edit_type"}, "overall") == ("domain", "edit_type")
    assert L.chart_kinds({"overall", "dataset+topic_type"}, "overall") == (
        "dataset+topic_type",
        None,
    )
    assert L.chart_kinds({"overall", "edit_type"}, "edit_type") == ("edit_type", "edit_type")
    assert L.chart_kinds({"overall"}, "overall") == (None, None)


def test_compare_verdict_and_tables() -> None:
    assert CV.better("fpr") == "lower" and CV.better("runtime_seconds") == "lower"
    assert CV.better("balanced_accuracy") == "higher"
    assert CV.significant(0.01, 0.2) and CV.significant(-0.3, -0.01)
    assert not CV.significant(-0.01, 0.2)
    assert "excludes 0" in CV.verdict(0.01, 0.2, 1200) and "1,200 samples" in CV.verdict(
        0.01, 0.2, 1200
    )
    assert "contains 0" in CV.verdict(-0.01, 0.2, 10)
    assert CV.version_note("Demo", "v1", "v1") is None
    assert "(v1 and v2)" in (CV.version_note("Demo", "v1", "v2") or "")
    slices = pd.DataFrame(
        {
            "slice_kind": ["domain", "edit_type"],
            "slice_value": ["news", "antonym_swap"],
            "n": [10, 20],
            "value_a": [0.5, 0.6],
            "value_b": [0.4, 0.6],
            "difference": [0.1, 0.0],
            "ci_low": [0.05, -0.1],
            "ci_high": [0.2, 0.1],
            "p_value": [0.01, 0.9],
        }
    )
    sl = CV.slice_table(slices)
    assert list(sl["slice"]) == ["domain: news", "edit type: antonym_swap"]
    assert list(sl["significant"]) == ["yes", "no"]
    assert list(sl[CV.SLICE_COLUMNS].columns) == CV.SLICE_COLUMNS
    dis = pd.DataFrame(
        {
            "sample_id": ["s1", "s2", "s3"],
            "domain": ["news"] * 3,
            "label": [1, 0, 0],
            "pred_a": [1, 1, 0],
            "pred_b": [0, 0, 1],
            "right": ["A", "B", "A"],
            "summary": ["x", "y", "z"],
        }
    )
    t = CV.disagreement_table(dis, lambda i: f"./samples?sample={i}")
    assert list(t["open"]) == [f"./samples?sample=s{i}" for i in (1, 2, 3)]
    assert list(t["summary"]) == ["x", "y", "z"]
    # one word per level: sentences are headed "sentence", as on the Samples page
    sent = CV.disagreement_table(dis, lambda i: i, "sentence")
    assert "summary" not in sent.columns and list(sent["sentence"]) == ["x", "y", "z"]
    assert list(t["A says"]) == ["✓ consistent", "✓ consistent", "✗ inconsistent"]
    assert CV.disagreement_summary(dis) == (
        "**3** samples get different labels: A is right on 2, B on 1."
    )


def test_sample_facts_and_run_labels() -> None:
    smp = {
        "split": "test",
        "domain": "news",
        "unit": "summary",
        "label": 0,
        "error_types": ["entity", "number"],
        "human_score": np.nan,
        "attributes": '{"annotator": "a1", "empty": "", "sentences": [1]}',
    }
    facts = X.sample_facts(smp)
    assert facts == (
        "split: test   ·   domain: news   ·   level: summary   ·   gold: ✗ inconsistent   ·   "
        "error types: entity, number   ·   annotator: a1"
    )
    assert "human score: 0.250" in X.sample_facts({**smp, "human_score": 0.25})
    runs = pd.DataFrame(
        {"model_name": ["M"], "origin": ["submitted"], "run_id": ["demo-m-20240101-abcdef"]}
    )
    assert X.run_labels(runs) == ["M · 📤 submitted · abcdef"]
    assert X.unit_plural("summary") == "summaries" and X.unit_plural("sentence") == "sentences"


def test_card_text_and_graded_table() -> None:
    spec = registry.get("demo")
    tags = cards.tags(spec)
    assert "Main metric: Balanced accuracy" in tags
    assert tags.startswith("Task: detection (consistent or not) · Judged at: summary level · ")
    assert "Splits: dev (for tuning), test (for scoring)" in tags
    ov = cards.overview([spec, registry.get("frank")], {})
    # plain words, never partial_pearson nor the short label "Partial r"
    assert list(ov["main metric"]) == [
        "Balanced accuracy",
        "Partial Pearson correlation (system partialled out)",
    ]
    assert list(ov["samples"]) == ["—", "—"]
    assert list(cards.overview([spec], {"demo": {"stats": {"n_samples": 1234}}})["samples"]) == [
        "1,234"
    ]
    meta = {
        "stats": {
            "n_samples": 1234,
            "domains_present": ["news"],
            "domains_missing": ["science"],
            "documents_included": False,
        }
    }
    note = cards.size_note(meta, spec)
    assert note.startswith("1,234 samples")
    assert "(absent from this release: science)" in note
    assert note.endswith("; source documents are not redistributed.")
    graded = pd.DataFrame(
        {
            "benchmark": ["b", "b", "a"],
            "model_name": ["m1", "m2", "m3"],
            "judge": [None, "gpt", None],
            "protocol": ["human", "v1", "human"],
            "n": [10, 10, 5],
            "n_graded": [10, 9, 5],
            "mean_grade": [0.2, 0.8, 0.5],
        }
    )
    g = explanations.graded_table(graded)
    assert list(g.columns) == ["benchmark", "model", "grader", "n", "graded", "mean grade"]
    assert list(g["model"]) == ["m3", "m2", "m1"]
    assert list(g["grader"]) == ["human", "gpt / v1", "human"]


def test_job_rows_show_the_error_of_a_failed_job() -> None:
    msgs = [{"at": "t1", "text": "started"}, {"at": "t2", "text": "half way"}]
    running = Job("j1", "judge", {}, status="running", attempts=1, progress=0.5, messages=msgs)
    failed = Job("j2", "detector_run", {}, status="failed", attempts=3, error="boom", messages=msgs)
    rows = jobs.job_rows([running, failed])
    assert [r["message"] for r in rows] == ["half way", "boom"]
    assert rows[0]["attempts"] == f"1/{running.max_attempts}" and rows[0]["progress"] == 0.5
    assert jobs.message_rows(running) == [
        {"at": "t2", "message": "half way"},
        {"at": "t1", "message": "started"},
    ]
