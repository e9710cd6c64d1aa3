"""The leaderboard's table in a real headless Chromium, as a visitor meets it: a handful of
columns with the CI drawn in each row, more columns through the picker (kept in the link), and
a board of published numbers only ranked by value with a plot of values. Screenshots go to
pytest's temporary folder."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_browser_app import ARGS, CHROMIUM, settle, table
from tests.support import testdata
from tests.support.server import running_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium`")
    root = testdata.build_demo_root(tmp_path_factory.mktemp("lb-e2e") / "leaderboard_data")
    log = tmp_path_factory.mktemp("lb-e2e-log") / "streamlit.log"
    env = {
        "FACTBOARD_DATA": str(root),
        "FACTBOARD_CACHE": str(tmp_path_factory.mktemp("lb-e2e-cache")),
        "HF_HUB_OFFLINE": "1",
    }
    with running_app(env, log) as app:
        yield app.url


@pytest.fixture(scope="module")
def browser(server: str):  # type: ignore[no-untyped-def]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, tmp_path: Path):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    yield p
    p.screenshot(path=str(tmp_path / "last.png"))
    ctx.close()


def _open(p, url: str) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    p.goto(url)
    expect(p.get_by_role("heading", name="Leaderboard")).to_be_visible(timeout=90_000)
    settle(p)


def test_a_compact_table_with_the_ci_drawn_and_a_column_picker(
    server: str,
    page,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    from playwright.sync_api import expect

    p = page
    _open(p, f"{server}/leaderboard?benchmark=demo")
    rows = table(p)
    assert list(rows[0]) == ["Rank", "Model", "Kind", "BAcc", "95% CI", "Δ to best run", "n"]
    assert rows[0]["Δ to best run"] == "0.000"
    assert all(r["Δ to best run"][0] in "0−" for r in rows)
    grid = p.get_by_test_id("stDataFrame").first
    grid.scroll_into_view_if_needed()
    grid.screenshot(path=str(tmp_path / "compact-table.png"))
    # the drawn CI is an image in the grid: the canvas has drawn pixels in that column
    # (a text bar would be a string in the accessible table)
    assert all(r["95% CI"] == "" or r["95% CI"].startswith("data:image") for r in rows)
    # more columns through the picker; the link keeps them
    p.get_by_text("Search, filter, sort and columns").click()
    settle(p)  # opened, the row of filters is drawn (a rerun)
    p.get_by_test_id("stPopover").get_by_role("button").click()
    box = p.get_by_test_id("stMultiSelect").filter(has=p.get_by_text("Columns shown"))
    box.locator("input").click()
    p.get_by_role("option").filter(has_text="Coverage").first.click()
    # the choice is taken (its chip drawn) before the list is closed: on a busy machine a
    # close that comes first loses it
    expect(box.get_by_text("Coverage", exact=True)).to_be_visible(timeout=30_000)
    p.keyboard.press("Escape")
    settle(p)
    expect(p).to_have_url(re.compile(r"[?&]cols=coverage(&|$)"), timeout=30_000)
    link = p.url
    p.goto("about:blank")
    _open(p, link)
    rows = table(p)
    assert rows[0]["Coverage"] == "3/3 domains"
    assert list(rows[0])[-1] == "Coverage"  # after the default ones


def test_published_numbers_only_are_ranked_by_value(server: str, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    p = page
    _open(p, f"{server}/leaderboard?benchmark=llm_aggrefact")
    rows = table(p)
    assert list(rows[0])[:2] == ["Rank (by value)", "Model"]
    assert rows[0]["Rank (by value)"] == "1" and "95% CI" not in rows[0]
    expect(p.get_by_text("not significance").first).to_be_visible()
    # the charts are folded away until the reader opens them; then the link keeps them open
    expect(p.get_by_role("tab", name="Values plot")).to_have_count(0)
    p.get_by_text("Charts: Values plot", exact=False).click()
    settle(p)
    tab = p.get_by_role("tab", name="Values plot")
    expect(tab).to_be_visible()
    assert "chart=Values" in p.url
    tab.scroll_into_view_if_needed()
    p.screenshot(path=str(tmp_path / "published-only.png"), full_page=True)
    expect(p.get_by_role("tab", name="CI forest plot")).to_have_count(0)
