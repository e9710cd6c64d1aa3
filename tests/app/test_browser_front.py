"""The front page in a real headless Chromium: every card's table fits its card.

The cards' tables were interactive grids that cropped their last columns ("Tied with the
leader", "Source") at a common window width; they are static tables (one Markdown table a
card) that wrap their cells now. Checked at a laptop's and a narrow window's width, with
screenshots under tmp_path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer import home as F
from tests.support import testdata
from tests.support.server import running_app

CHROMIUM = "/usr/bin/chromium"
TABLES = "[data-testid=stMarkdownContainer] table"  # the cards' tables
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium`")
    base = tmp_path_factory.mktemp("front-browser")
    root = testdata.build_demo_root(base / "leaderboard_data")
    testdata.add_run(root, "demo", "A detector with a rather long name, v2", accuracy=0.9, seed=8)
    env = {
        "FACTBOARD_DATA": str(root),
        "FACTBOARD_CACHE": str(base / "cache"),
        "HF_HUB_OFFLINE": "1",
    }
    with running_app(env, base / "streamlit.log") as app:
        yield app.url


@pytest.mark.parametrize("width", [1280, 760])
def test_front_page_cards_show_every_column_uncropped(url: str, width: int, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        # a tall window: Streamlit scrolls inside its own container, so a screenshot shows the
        # window, not the page
        p = browser.new_page(viewport={"width": width, "height": 4000})
        p.set_default_timeout(90_000)
        p.goto(url)
        p.locator(TABLES).first.wait_for()
        p.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')")
        p.wait_for_timeout(500)
        p.screenshot(path=str(tmp_path / f"front-{width}.png"))
        tables = p.evaluate(
            """(sel) => [...document.querySelectorAll(sel)].map(t => {
                const box = t.getBoundingClientRect();
                const card = t.closest('[data-testid=stVerticalBlockBorderWrapper]') || t;
                const cbox = card.getBoundingClientRect();
                return {
                    heads: [...t.querySelectorAll('th')].map(h => h.innerText.trim()),
                    overflow: t.scrollWidth - t.clientWidth,
                    outside: Math.max(0, box.right - cbox.right),
                    clipped: [...t.querySelectorAll('td, th')]
                        .filter(c => c.scrollWidth > c.clientWidth + 1)
                        .map(c => c.innerText),
                };
            })""",
            TABLES,
        )
        browser.close()
    assert tables, "no card table on the front page"
    with_runs = [t for t in tables if F.TIE_COLUMN in t["heads"]]
    assert with_runs, "the demo card names the ties with the best run"
    for t in tables:
        assert t["heads"][-1] == "Source", t["heads"]
        assert t["overflow"] <= 1 and t["outside"] <= 1, t
        assert not t["clipped"], t["clipped"]
