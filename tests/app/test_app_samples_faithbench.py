"""AppTest on the real FaithBench release: the Samples page shows each annotator's span, label
and note (overlapping spans included) with the detectors' verdicts beside them; the eight
released detectors are ranked with CIs and paired tests, compared, and seen across benchmarks."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from evaluator.benchmarks import faithbench
from evaluator.core import formatting as F
from evaluator.ingest import pipeline
from evaluator.store import runs
from tests.support import testdata
from tests.support.apptest import open_app_page

OVERLAP = "b01-008"  # two annotators: " production budget" (75-93) and "production" (76-86)
QUIET = "b01-001"  # no annotation


@pytest.fixture(scope="module")
def release(shared_benchmarks: Path) -> Path:
    return shared_benchmarks / "faithbench"


@pytest.fixture(scope="module")
def root(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = testdata.build_demo_root(tmp_path_factory.mktemp("fb") / "leaderboard_data")
    pipeline.ingest("faithbench", release, root=r)
    return r


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


def raw_sample(release: Path, sample_id: str) -> dict[str, Any]:
    batch, sid = sample_id[1:].split("-")
    path = release / "data_for_release" / f"batch_{int(batch)}.json"
    recs = json.loads(path.read_text(encoding="utf-8"))["samples"]
    return next(r for r in recs if r["sample_id"] == int(sid))


def run_id(root: Path, name: str) -> str:
    return next(
        r.run_id for r in runs.list_runs(root, benchmark="faithbench").runs if r.model.name == name
    )


def test_a_sample_shows_each_annotators_span_and_note(data: Path, release: Path) -> None:
    rec = raw_sample(release, OVERLAP)
    at = open_app_page("views/samples.py", {"benchmark": "faithbench", "sample": OVERLAP})
    assert not at.exception
    heads = [m.value for m in at.markdown]
    assert "**Annotated spans** (2 annotations, 2 overlapping)" in heads
    spans = next(d.value for d in at.dataframe if "annotator" in d.value.columns)
    ordered = sorted(rec["annotations"], key=lambda a: (a["summary_start"], -a["summary_end"]))
    assert spans["span"].tolist() == [a["summary_span"] for a in ordered]
    assert spans["annotator"].tolist() == [a["annotator_name"] for a in ordered]
    assert spans["note"].tolist() == [a["note"].strip() for a in ordered]
    assert spans["label"].tolist() == ["Unwanted.Intrinsic", "Unwanted.Intrinsic"]
    assert spans["characters"].tolist() == ["75–93", "76–86"]
    # the summary with both spans highlighted: the inner part is covered by both
    html = "".join(h.proto.body for h in at.get("html"))
    assert '<mark class="fb-span" data-spans="1 2"' in html
    assert '>production</mark><span class="fb-mark"' in html
    assert "[1]" in html and "[2]" in html
    # the verdicts beside them: every released detector, as the release has it
    verdicts = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert set(verdicts["model"]) == {d.name for d in faithbench.RELEASED}
    gold = 0  # Unwanted: inconsistent
    for det in faithbench.RELEASED:
        v = rec["metadata"][det.key]
        consistent = v >= 0.5 if det.scored else v == 1
        row = verdicts[verdicts["model"] == det.name].iloc[0]
        assert row["verdict"] == ("✓ consistent" if consistent else "✗ inconsistent")
        assert row["correct"] == ("✓" if int(consistent) == gold else "✗ wrong")
    # the annotations stay out of the facts line; the notes are the reference explanation
    facts = " ".join(t.value for t in at.text)
    assert "annotations" not in facts and "annot_id" not in facts
    assert f"summarizer: {rec['metadata']['summarizer']}" in facts
    assert "pooled annotation class: unwanted" in facts
    assert "gold label from: worst pooling; inconsistent: questionable + unwanted" in facts
    # the released outputs carry no evidence: said once, not once per run
    captions = [c.value for c in at.caption]
    assert "No run here stored evidence (8 runs)." in captions
    assert not any("Why each run scored it so" in m.value for m in at.markdown)


def test_a_sample_without_annotations_has_no_span_view(data: Path) -> None:
    at = open_app_page("views/samples.py", {"benchmark": "faithbench", "sample": QUIET})
    assert not at.exception
    assert not any("Annotated spans" in m.value for m in at.markdown)


def test_the_released_detectors_are_ranked_with_cis_and_paired_tests(data: Path) -> None:
    cols = ["kind", "ci", "delta", "delta_p", "n", "origin"]  # the CI as text, the origin, p
    at = open_app_page("views/leaderboard.py", {"benchmark": "faithbench", "cols": cols})
    assert not at.exception
    t = at.dataframe[0].value
    assert set(t["Model"]) == {d.name for d in faithbench.RELEASED}
    assert t["BAcc"].is_monotonic_decreasing
    recs = {r.model.name: r for r in runs.list_runs(data, benchmark="faithbench").runs}
    for _, row in t.iterrows():
        res = recs[row["Model"]].result("balanced_accuracy")
        assert row["BAcc"] == pytest.approx(res.value)
        assert row["CI bounds"] == F.ci(res.ci_low, res.ci_high)
    assert (t["Origin"] == "📦 released").all()
    assert t["p vs best run"].iloc[1] != ""
    # the paired bootstrap needs every sample predicted: TRUE NLI (no output on 2 samples) is
    # compared by its CI, the seven complete runs pairwise
    assert any("Pairwise significance" in e.label for e in at.expander)
    at.session_state["lb.pairs"] = True  # opened: the matrix is drawn
    at.run()
    exp = next(e for e in at.expander if "Pairwise significance" in e.label)
    matrix = exp.dataframe[0].value
    assert set(matrix.index) == {d.name for d in faithbench.RELEASED} - {"TRUE NLI"}
    assert matrix.shape == (7, 7)
    # a run's details say whether it was part of the selection
    at = open_app_page(
        "views/leaderboard.py", {"benchmark": "faithbench", "run": run_id(data, "GPT-4o")}
    )
    about = " ".join(x.value for x in at.text)
    assert "whose disagreement chose FaithBench's samples" in about
    at = open_app_page(
        "views/leaderboard.py", {"benchmark": "faithbench", "run": run_id(data, "GPT-4-Turbo")}
    )
    assert "Not part of FaithBench's sample selection" in " ".join(x.value for x in at.text)


def test_compare_two_released_detectors(data: Path) -> None:
    a, b = run_id(data, "GPT-4-Turbo"), run_id(data, "GPT-3.5-Turbo")
    at = open_app_page("views/compare.py", {"benchmark": "faithbench", "a": a, "b": b})
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    ra = runs.find_run(a, data)
    rb = runs.find_run(b, data)
    va = runs.read_record(ra).result("balanced_accuracy").value
    vb = runs.read_record(rb).result("balanced_accuracy").value
    assert va is not None and vb is not None
    assert metrics["A: BAcc"] == F.number(va) and metrics["B: BAcc"] == F.number(vb)
    assert metrics["A − B"] == F.signed(va - vb)
    assert metrics["p-value (paired bootstrap)"]


def test_across_includes_faithbench(data: Path) -> None:
    at = open_app_page("views/across.py", {"min": "1"})
    assert not at.exception
    t = at.dataframe[0].value.set_index("Model")
    assert t.loc["HHEM-2.1-Open", "FaithBench · source"] == "run"
    bacc = runs.list_runs(data, benchmark="faithbench").runs
    want = next(r for r in bacc if r.model.name == "HHEM-2.1-Open").result("balanced_accuracy")
    assert t.loc["HHEM-2.1-Open", "FaithBench · BAcc"] == F.number(want.value)


# ----------------------------------------------------------------------------- the span view


def test_overlapping_spans_are_cut_at_every_boundary() -> None:
    from explorer import textdiff as T

    spans = [T.Span(2, 8, 1, "benign", "a"), T.Span(5, 12, 2, "unwanted", "b")]
    assert T.span_segments(14, spans) == [
        (0, 2, ()),
        (2, 5, (0,)),
        (5, 8, (0, 1)),
        (8, 12, (1,)),
        (12, 14, ()),
    ]
    # one span inside another, and one of no characters: the text is whole, in order
    nested = [T.Span(0, 10, 1, "unwanted", "x"), T.Span(3, 4, 2, "benign", "y")]
    nested.append(T.Span(6, 6, 3, "other", "z"))
    segs = T.span_segments(10, nested)
    assert [(a, b) for a, b, _ in segs] == [(0, 3), (3, 4), (4, 6), (6, 10)]
    assert segs[1][2] == (0, 1)


def test_span_html_escapes_the_text_and_numbers_each_span() -> None:
    from explorer import textdiff as T

    text = 'It is <b>bold</b> & "quoted" **markdown**'
    spans = [
        T.Span(6, 17, 1, "questionable", "<script>alert(1)</script> · Ada"),
        T.Span(10, 27, 2, "unwanted", "Unwanted · Bob"),
    ]
    out = T.spans_html(text, spans)
    assert "<b>" not in out and "<script>" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out  # the title, escaped once
    # the visible text is the summary, whole, with [n] where span n ends
    shown = html.unescape(re.sub(r"<[^>]+>", "", out))
    assert shown == text[:17] + "[1]" + text[17:27] + "[2]" + text[27:]
    # where both cover the text: the most severe tone, underlined once more
    both = out.split('data-spans="1 2"')[1].split("</mark>")[0]
    assert T.SPAN_TONES["unwanted"] in both and "box-shadow:inset 0 -2px" in both
    assert html.unescape(re.sub(r"<[^>]+>", "", both.split(">", 1)[1])) == text[10:17]
    assert "**markdown**" in out  # shown as written, not rendered


def test_span_rows_and_tones() -> None:
    from explorer import samples as X

    annotations = [
        {"start": 0, "end": 4, "span": "=cmd", "label": [], "annotator": "Ada", "note": ""},
        {
            "start": 2,
            "end": 9,
            "span": "d| and x",
            "label": ["Unwanted", "Unwanted.Extrinsic"],
            "annotator": "Bob",
            "note": "not in the source",
        },
    ]
    rows = X.span_rows(annotations)
    assert rows["#"].tolist() == [1, 2]
    assert rows["label"].tolist() == ["no label", "Unwanted.Extrinsic"]
    assert rows["note"].tolist() == ["—", "not in the source"]
    assert rows["span"].iloc[0] != "=cmd" and rows["span"].iloc[0].endswith("=cmd")  # inert
    assert [X.span_tone(a["label"]) for a in annotations] == ["other", "unwanted"]
    assert X.span_tone(["Benign", "Questionable"]) == "questionable"
    assert X.overlapping(annotations) == 2
    assert X.overlapping(annotations[:1]) == 0
    smp = {"attributes": json.dumps({"annotations": json.dumps(annotations[::-1])})}
    assert [a["annotator"] for a in X.span_annotations(smp)] == ["Ada", "Bob"]
    assert X.span_annotations({"attributes": "{}"}) == []
    assert X.span_annotations({"attributes": "not json"}) == []


def test_hardest_samples_follow_the_released_verdicts(data: Path, release: Path) -> None:
    """'Samples most runs get wrong': more than half of the eight detectors wrong, counted here
    from the JSON (HHEM scores at 0.5, default labels)."""
    wrong: dict[str, tuple[int, int]] = {}
    for path in sorted((release / "data_for_release").glob("batch_*.json")):
        batch = int(path.stem.split("_")[1])
        for rec in json.loads(path.read_text(encoding="utf-8"))["samples"]:
            labels = {lab for a in rec["annotations"] for lab in a["label"]}
            gold = 0 if labels - {"Benign"} else 1  # worst pooling: anything above Benign
            n = w = 0
            for det in faithbench.RELEASED:
                v = rec["metadata"][det.key]
                if v is None:
                    continue
                pred = int(v >= 0.5) if det.scored else int(v)
                n, w = n + 1, w + int(pred != gold)
            wrong[f"b{batch:02d}-{rec['sample_id']:03d}"] = (w, n)
    hard = {k for k, (w, n) in wrong.items() if n >= 2 and w > n / 2}
    at = open_app_page("views/samples.py", {"benchmark": "faithbench", "hard": "1"})
    assert not at.exception
    assert any(m.value == f"**{F.count(len(hard))}** matching summaries" for m in at.markdown)
    listed = at.dataframe[0].value
    assert set(listed["sample"]) <= hard
    for sid, cell in zip(listed["sample"], listed["wrong"], strict=True):
        assert cell == f"{wrong[sid][0]}/{wrong[sid][1]}"
