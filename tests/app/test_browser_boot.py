"""The container's first minute in a real headless Chromium: the entry script as the Dockerfile
runs it (a fresh $FACTBOARD_DATA under the user's home, no results repo, another $PORT), the
healthcheck on that port, the published numbers on the board (a published-only leaderboard, the
cross-benchmark table with dashes, not None) and the first page's notice."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_browser_app import ARGS, CHROMIUM, settle, table
from tests.hub.test_dockerfile import healthcheck_command
from tests.support.server import free_port, running_entrypoint

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def container(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium` (scripts/test.sh)")
    home = tmp_path_factory.mktemp("container") / "home" / "user"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FACTBOARD_", "HF_"))}
    env.update(
        HOME=str(home),
        PORT=str(port),
        FACTBOARD_ADDRESS="127.0.0.1",
        FACTBOARD_DATA=str(home / "data" / "leaderboard_data"),
        FACTBOARD_SUBMISSIONS=str(home / "data" / "submissions"),
        FACTBOARD_CACHE=str(home / ".cache" / "factboard"),
        HF_HUB_OFFLINE="1",
    )
    log = home.parent / "entry.log"
    home.mkdir(parents=True)
    with running_entrypoint(env, log, start_timeout=180):
        yield f"http://127.0.0.1:{port}", port, Path(env["FACTBOARD_DATA"])


@pytest.fixture(scope="module")
def browser(container):  # type: ignore[no-untyped-def]
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
    p.screenshot(path=str(tmp_path / "page.png"), full_page=True)
    ctx.close()


def test_the_healthcheck_asks_the_port_the_container_serves(container) -> None:  # type: ignore[no-untyped-def]
    _, port, root = container
    cmd = healthcheck_command().replace("python ", "python3 ", 1)
    env = {**os.environ, "PORT": str(port)}
    assert subprocess.run(["sh", "-c", cmd], env=env, timeout=30).returncode == 0
    assert not (root / "reported").exists()  # the published numbers come from the image


def test_a_fresh_container_shows_the_published_numbers_and_says_it_has_no_results_repo(
    container, page
) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    url = container[0]
    p = page
    p.goto(f"{url}/leaderboard?benchmark=summedits")
    expect(p.get_by_role("heading", name="Leaderboard")).to_be_visible(timeout=90_000)
    settle(p)
    expect(p.get_by_text("not connected to a results repo", exact=False)).to_be_visible()
    body = p.locator("body").inner_text()
    assert "not on this board" not in body
    models = {r["Model"] for r in table(p)}
    assert {"GPT4", "Human Perf."} & models, models

    p.goto(f"{url}/across?min=1")
    expect(p.get_by_role("heading", name="Across benchmarks")).to_be_visible(timeout=60_000)
    settle(p)
    expect(p.get_by_text("not connected to a results repo", exact=False)).to_be_visible()
    rows = table(p)
    assert len(rows) >= 10  # the grid renders the rows in view
    cells = [v for r in rows for k, v in r.items() if "·" in k and not k.endswith("source")]
    assert cells and "None" not in cells and "—" in cells
