"""In a real headless Chromium, the analysis pages as a visitor meets them on a board with a
detection and a correlation benchmark: a benchmark changed on Compare while two runs are chosen
(no stale-link error), where two QAGS metrics rank summaries most differently, 'samples this run
gets wrong' from a QAGS run, and a page number in a link that is no page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from evaluator.ingest import pipeline
from evaluator.store import ingested
from tests.app.test_browser_app import ARGS, CHROMIUM, choose, settle, table
from tests.support import testdata
from tests.support.server import running_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(
    shared_benchmarks: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium`")
    root = testdata.build_demo_root(tmp_path_factory.mktemp("pages") / "leaderboard_data")
    pipeline.ingest("qags", shared_benchmarks / "qags", root=root)
    s = ingested.load_samples("qags", root)
    rng = np.random.default_rng(0)
    human = s["human_score"].to_numpy(float)
    testdata.add_metric_run(root, "qags", "Metric Alpha", human + rng.normal(0, 0.3, len(s)), s)
    testdata.add_metric_run(root, "qags", "Metric Beta", human + rng.normal(0, 0.3, len(s)), s)
    log = tmp_path_factory.mktemp("pages-log") / "streamlit.log"
    with running_app({"FACTBOARD_DATA": str(root), "HF_HUB_OFFLINE": "1"}, log) as app:
        yield app.url, root


@pytest.fixture(scope="module")
def browser(server: tuple[str, Path]):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1400})
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    yield p
    ctx.close()


def test_compare_a_benchmark_change_and_two_qags_metrics(
    server: tuple[str, Path],
    page,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect

    url, _root = server
    p = page
    p.goto(f"{url}/compare?benchmark=demo")
    settle(p)
    choose(p, "Run A", "Random guess (seed 0)")
    choose(p, "Run B", "Always consistent")
    expect(p.get_by_text("McNemar (exact)")).to_be_visible()
    # the reader switches the benchmark: the demo runs are dropped, no stale-link error
    choose(p, "Benchmark", "QAGS")
    p.wait_for_url(re.compile(r"benchmark=qags"))
    expect(p.get_by_text("Where the two metrics rank summaries most differently")).to_be_visible()
    assert p.get_by_text("This link compares", exact=False).count() == 0
    assert p.get_by_test_id("stException").count() == 0
    assert "a=demo-" not in p.url and "b=demo-" not in p.url
    ranked = table(p, -1)
    assert ranked and {"A's rank", "B's rank", "human rank"} <= set(ranked[0])
    gaps = [abs(int(r["A − B"].replace("−", "-").replace("+", ""))) for r in ranked]
    assert gaps == sorted(gaps, reverse=True)
    p.screenshot(path=str(tmp_path / "compare-qags.png"), full_page=True)


def test_samples_a_qags_run_gets_wrong_and_a_page_that_is_no_page(
    server: tuple[str, Path],
    page,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect

    url, root = server
    p = page
    rid = next(d.name for d in (root / "runs").iterdir() if "metric-alpha" in d.name)
    p.goto(f"{url}/samples?benchmark=qags&unit=summary&wrong={rid}")
    settle(p)
    expect(p.get_by_text("runs give scores, not labels", exact=False)).to_be_visible()
    head = p.get_by_text(re.compile(r"matching summar")).first.inner_text()
    assert 0 < int(head.split()[0].replace(",", "")) < 474
    assert "wrong=" not in p.url and f"run={rid}" in p.url
    p.screenshot(path=str(tmp_path / "samples-qags-wrong.png"), full_page=True)
    p.goto(f"{url}/samples?benchmark=demo&page=%C2%B2")  # page=²
    settle(p)
    expect(p.get_by_text("is not a page number", exact=False)).to_be_visible()
    assert p.get_by_test_id("stException").count() == 0
    expect(p.get_by_text("matching summaries")).to_be_visible()
