"""In a real headless Chromium: the samples list and the detail side by side. Pick a sample
from the list, step to the next one with the keyboard, copy the address, open it in a fresh
browser context: the same sample is shown, selected in the same list."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator.store import ingested
from tests.app.test_browser_app import ARGS, CHROMIUM, _serve, settle, table

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with _serve(tmp_path_factory) as s:
        yield s


def test_a_sample_link_restores_the_sample(server: tuple[str, Path], tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, _root = server
    expect.set_options(timeout=60_000)  # a cold first run of the page takes seconds
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ctx = b.new_context(viewport={"width": 1400, "height": 1000})
        p = ctx.new_page()
        p.set_default_timeout(60_000)
        p.goto(f"{url}/samples")
        settle(p)
        expect(p.get_by_text("matching summaries")).to_be_visible()
        listed = table(p)
        samples = ingested.load_samples("demo", _root)
        test_ids = set(samples.loc[samples["split"] == "test", "sample_id"])
        assert listed and {r["sample"] for r in listed} <= test_ids  # the split runs predict
        ids = [r["sample"] for r in listed]
        assert all(not i.endswith("…") for i in ids)
        # pick the third sample of the list by clicking its row
        frame = p.get_by_test_id("stDataFrame").first
        box = frame.bounding_box()
        assert box is not None
        p.mouse.click(box["x"] + 16, box["y"] + 35 * 3 + 18)  # its row marker (header, 2 rows)
        settle(p)
        expect(p.get_by_role("heading", name=f"Sample {ids[2]}")).to_be_visible()
        # the next one with the keyboard (j), then the list and the detail side by side
        p.locator("body").press("j")
        settle(p)
        expect(p.get_by_role("heading", name=f"Sample {ids[3]}")).to_be_visible()
        assert f"sample={ids[3]}" in p.url
        detail = p.get_by_role("heading", name=f"Sample {ids[3]}").bounding_box()
        assert detail is not None and detail["x"] > box["x"] + box["width"] - 5  # beside the list
        p.screenshot(path=str(tmp_path / "samples-list-detail.png"), full_page=False)
        link = p.url
        ctx.close()
        # a fresh context (no session, no cookies): the same sample, the same list
        fresh = b.new_context(viewport={"width": 1400, "height": 1000})
        q = fresh.new_page()
        q.set_default_timeout(60_000)
        q.goto(link)
        settle(q)
        expect(q.get_by_role("heading", name=f"Sample {ids[3]}")).to_be_visible()
        assert [r["sample"] for r in table(q)] == ids
        q.get_by_role("button", name="← Previous").click()
        settle(q)
        expect(q.get_by_role("heading", name=f"Sample {ids[2]}")).to_be_visible()
        fresh.close()
        b.close()
