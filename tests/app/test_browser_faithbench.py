"""In a real headless Chromium: a FaithBench sample whose annotators marked overlapping spans.
The summary is shown with each span highlighted (the shared part covered by both, each span
numbered where it ends), the detectors' verdicts beside it, and each annotator's label and note
in the table below."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluator.ingest import pipeline
from tests.app.test_browser_app import ARGS, CHROMIUM, settle, table
from tests.support import testdata
from tests.support.server import running_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

OVERLAP = "b01-008"  # forrest: " production budget" (75-93); Renyi Qu: "production" (76-86)


@pytest.fixture(scope="module")
def server(shared_benchmarks: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium`")
    root = testdata.build_demo_root(tmp_path_factory.mktemp("fb-e2e") / "leaderboard_data")
    pipeline.ingest("faithbench", shared_benchmarks / "faithbench", root=root)
    log = tmp_path_factory.mktemp("fb-e2e-log") / "streamlit.log"
    with running_app({"FACTBOARD_DATA": str(root), "HF_HUB_OFFLINE": "1"}, log) as app:
        yield app.url


def _record(release: Path) -> dict[str, Any]:
    path = release / "data_for_release" / "batch_1.json"
    samples = json.loads(path.read_text(encoding="utf-8"))["samples"]
    return next(r for r in samples if r["sample_id"] == 8)


def test_overlapping_spans_with_labels_notes_and_verdicts(
    server: str, shared_benchmarks: Path, tmp_path: Path
) -> None:
    release = shared_benchmarks / "faithbench"
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ctx = b.new_context(viewport={"width": 1500, "height": 1100})
        p = ctx.new_page()
        p.set_default_timeout(60_000)
        p.goto(f"{server}/samples?benchmark=faithbench&sample={OVERLAP}")
        settle(p)
        expect(p.get_by_role("heading", name=f"Sample {OVERLAP}")).to_be_visible()
        expect(p.get_by_text("Annotated spans (2 annotations, 2 overlapping)")).to_be_visible()
        box = p.locator(".fb-spans")
        box.scroll_into_view_if_needed()
        expect(box).to_be_visible()
        # the visible summary is the summary, whole, with [1] and [2] where the spans end
        rec = _record(release)
        summary = rec["summary"]
        shown = box.inner_text()
        assert shown == summary[:86] + "[2]" + summary[86:93] + "[1]" + summary[93:]
        marks = box.locator("mark.fb-span")
        assert marks.all_inner_texts() == [" ", "production", " budget"]
        assert [m.get_attribute("data-spans") for m in marks.all()] == ["1", "1 2", "1"]
        # the part both annotators marked: unwanted red, underlined once more
        both = marks.nth(1)
        assert both.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(251, 213, 213)"
        assert "inset" in both.evaluate("e => getComputedStyle(e).boxShadow")
        assert "forrest" in (both.get_attribute("title") or "")
        assert "Renyi Qu" in (both.get_attribute("title") or "")
        # the detectors' verdicts beside the summary
        frames = p.get_by_test_id("stDataFrame")
        heads = [f.locator("th").all_inner_texts() for f in frames.all()]
        vi = next(i for i, h in enumerate(heads) if "verdict" in h)
        si = next(i for i, h in enumerate(heads) if "annotator" in h)
        verdicts = table(p, vi)
        assert len(verdicts) == 8
        assert {r["model"] for r in verdicts} >= {"GPT-4o", "HHEM-2.1-Open", "TRUE NLI"}
        vbox = frames.nth(vi).bounding_box()
        sbox = box.bounding_box()
        assert vbox is not None and sbox is not None
        assert vbox["x"] > sbox["x"] + sbox["width"] - 5  # beside the highlighted summary
        # each annotator's span, label and note
        spans = table(p, si)
        assert [r["annotator"] for r in spans] == ["forrest", "Renyi Qu"]
        assert [r["label"] for r in spans] == ["Unwanted.Intrinsic"] * 2
        notes = {a["annotator_name"]: a["note"].strip() for a in rec["annotations"]}
        assert [r["note"] for r in spans] == [notes["forrest"], notes["Renyi Qu"]]
        box.screenshot(path=str(tmp_path / "faithbench-spans.png"))
        p.screenshot(path=str(tmp_path / "faithbench-sample.png"), full_page=True)
        ctx.close()
        b.close()
