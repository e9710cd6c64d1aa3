"""The evidence tables of the Samples page: parts with their scores, support and flags; QAGS's
questions with both answers and their F1."""

from __future__ import annotations

from evaluator.detectors.base import evidence, evidence_item
from explorer import evidence_view as EV


def _run(ev: dict | None, threshold: float | None = None, predicted: int | None = None, **kw):
    base = {"run_id": "r1", "model_name": "M", "score": 0.2, "stored": True}
    return EV.RunEvidence(evidence=ev, threshold=threshold, predicted=predicted, **{**base, **kw})


def test_parts_are_listed_in_summary_order_with_flags_below_the_threshold() -> None:
    ev = evidence(
        "sentence",
        [
            evidence_item("A.", 0.9, "Source A.", label="entail"),
            evidence_item("B.", 0.2, "Source B."),
            evidence_item("C.", None),
        ],
        "min",
    )
    t = EV.evidence_table(_run(ev, threshold=0.5, predicted=0))
    assert t["summary sentence"].tolist() == ["A.", "B.", "C."]
    assert t["score"].tolist()[:2] == [0.9, 0.2] and t["score"].isna().tolist()[2]
    assert t["best-supporting source sentence"].tolist() == ["Source A.", "Source B.", ""]
    assert t[""].tolist() == ["", "⚠", ""] and EV.flagged_rows(t) == [1]
    assert t["label"].tolist() == ["entail", "", ""]  # method detail as columns
    line = EV.describe(_run(ev, threshold=0.5))
    assert "3 summary sentences" in line and "score = min of theirs" in line
    assert "below the run's threshold 0.5000" in line


def test_without_a_threshold_the_lowest_part_of_an_inconsistent_pair_is_flagged() -> None:
    ev = evidence("claim", [evidence_item("x", 0.4, "chunk 1"), evidence_item("y", 0.1)], "max")
    assert EV.evidence_table(_run(ev, predicted=0))[""].tolist() == ["", "⚠"]
    assert EV.evidence_table(_run(ev, predicted=1))[""].tolist() == ["", ""]
    assert "best-supporting source chunk" in EV.evidence_table(_run(ev)).columns


def test_qags_questions_show_both_answers_and_f1() -> None:
    ev = evidence(
        "question",
        [
            evidence_item("Who won?", 1.0, summary_answer="Ann", source_answer="Ann"),
            evidence_item("When?", 0.0, summary_answer="May", source_answer="<unanswerable>"),
        ],
        "mean",
    )
    t = EV.evidence_table(_run(ev, threshold=0.5))
    assert list(t.columns) == ["question", "summary answer", "source answer", "F1"]
    assert t.values.tolist() == [
        ["Who won?", "Ann", "Ann", 1.0],
        ["When?", "May", "<unanswerable>", 0.0],
    ]
    assert "2 questions" in EV.describe(_run(ev)) and "threshold" not in EV.describe(_run(ev))


def test_what_is_said_when_there_is_no_table() -> None:
    assert EV.evidence_table(_run(None)).empty
    assert _run(None, stored=False).status == "this detector stored no evidence"
    assert _run(None).status == "this detector stored no evidence for this sample"
    assert _run(None, problem="bad").status == "evidence unreadable: bad"
