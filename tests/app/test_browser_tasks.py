"""What a new visitor comes to do, each in one page and without README, in a real headless
Chromium against a board with SummEdits, TofuEval and FRANK ingested from ../shared and runs on
them (the container's fresh root is tests/app/test_browser_boot.py):

1. who is best on SummEdits news, and is the lead significant;
2. which TofuEval sentences most runs get wrong, and why;
3. where two FRANK metrics disagree;
4. today's LLM-AggreFact leaders, and one model across every benchmark;
5. submit a scores-only file;
6. a LaTeX table of the view for a paper.

Screenshots of each task's page go to pytest's temporary folder."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluator.ingest import pipeline
from evaluator.store import ingested
from tests.app.test_browser_app import ARGS, CHROMIUM, choose, settle, table
from tests.support import testdata
from tests.support.server import running_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _frank_metric(root: Path, name: str, noise: float, seed: int) -> None:
    s = ingested.load_samples("frank", root)
    s = s[s["human_score"].notna()]
    rng = np.random.default_rng(seed)
    score = s["human_score"].to_numpy(float) + rng.normal(0, noise, len(s))
    testdata.add_metric_run(root, "frank", name, score, s)


@pytest.fixture(scope="module")
def server(
    shared_benchmarks: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium`")
    root = testdata.build_demo_root(tmp_path_factory.mktemp("tasks") / "leaderboard_data")
    for name in ("summedits", "tofueval", "frank"):
        pipeline.ingest(name, shared_benchmarks / name, root=root)
    testdata.add_run(root, "summedits", "Strong checker", accuracy=0.82, seed=1, scores=True)
    testdata.add_run(root, "summedits", "Weak checker", accuracy=0.62, seed=2)
    for i, acc in enumerate((0.7, 0.66, 0.6)):
        testdata.add_run(root, "tofueval", f"Sentence checker {i + 1}", accuracy=acc, seed=10 + i)
    _frank_metric(root, "Metric Alpha", 0.3, 0)
    _frank_metric(root, "Metric Beta", 0.6, 1)
    log = tmp_path_factory.mktemp("tasks-log") / "streamlit.log"
    env = {
        "FACTBOARD_DATA": str(root),
        "FACTBOARD_SUBMISSIONS": str(root.parent / "submissions"),
        "FACTBOARD_CACHE": str(tmp_path_factory.mktemp("tasks-cache")),
        "HF_HUB_OFFLINE": "1",
    }
    with running_app(env, log) as app:
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
def page(browser, tmp_path: Path):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1200}, accept_downloads=True)
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    yield p
    p.screenshot(path=str(tmp_path / "task.png"), full_page=True)
    ctx.close()


def _open(p, url: str, heading: str) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    p.goto(url)
    expect(p.get_by_role("heading", name=heading).first).to_be_visible(timeout=90_000)
    settle(p)


def test_1_who_is_best_on_summedits_news_and_is_the_lead_significant(server, page) -> None:  # type: ignore[no-untyped-def]
    url, _ = server
    p = page
    _open(p, f"{url}/leaderboard?benchmark=summedits", "Leaderboard")
    choose(p, "View", "By domain")
    choose(p, "Domain", "news")
    assert "value=news" in p.url
    rows = table(p)  # the rows in view: the top of the board, published numbers among them
    assert any(r["Model"] == "GPT-4" for r in rows)
    # the lead between the two runs: the same view, narrowed to their names
    _open(p, p.url + "&q=checker", "Leaderboard")
    runs = table(p)
    assert [r["Model"] for r in runs] == ["Strong checker", "Weak checker"]
    # the lead over the weak run is significant: it ranks below, and the difference to the
    # best run is there to read
    assert runs[1]["Rank"] not in ("", runs[0]["Rank"])
    assert runs[1]["Δ to best run"].startswith("−")


def test_2_which_tofueval_sentences_most_runs_get_wrong_and_why(server, page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    url, _ = server
    p = page
    _open(p, f"{url}/samples?benchmark=tofueval&unit=sentence", "Samples")
    p.get_by_text("Samples most runs get wrong").click()
    settle(p)
    assert "hard=" in p.url
    expect(p.get_by_text(re.compile(r"missed errors?|false alarms?")).first).to_be_visible()
    rows = table(p)
    assert rows, "the hardest sentences are listed"
    # why: the first one opened shows its gold label, error types and each run's verdict
    frame = p.get_by_test_id("stDataFrame").first
    box = frame.bounding_box()
    assert box is not None
    p.mouse.click(box["x"] + 16, box["y"] + 35 + 18)  # the first row's marker (under the header)
    settle(p)
    assert "sample=" in p.url
    preds = table(p, -1)  # each run's verdict on the open sentence
    assert {"Sentence checker 1", "Sentence checker 2"} <= {r.get("model") for r in preds}


def test_3_where_two_frank_metrics_disagree(server, page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    url, root = server
    p = page
    _open(p, f"{url}/compare?benchmark=frank", "Compare")
    choose(p, "Run A", "Metric Alpha")
    choose(p, "Run B", "Metric Beta")
    expect(p.get_by_text(re.compile("rank summaries most differently", re.I)).first).to_be_visible()
    assert table(p, -1), "the summaries the two metrics rank furthest apart are listed"


def test_4_llm_aggrefact_leaders_and_one_model_across_every_benchmark(server, page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    url, _ = server
    p = page
    _open(p, f"{url}/leaderboard?benchmark=llm_aggrefact", "Leaderboard")
    rows = table(p)
    assert rows[0]["Rank (by value)"] == "1"
    leader = rows[0]["Model"]
    assert leader
    _open(p, f"{url}/across", "Across benchmarks")
    choose(p, "Model", "GPT-4")
    expect(p.get_by_text("One model across every benchmark").first).to_be_visible()
    text = p.locator("body").inner_text()
    assert "None" not in re.findall(r"\bNone\b", text)


def test_5_submit_a_scores_only_file(server, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    url, root = server
    p = page
    _open(p, f"{url}/submit?benchmark=demo", "Submit")
    s = ingested.load_samples("demo", root)
    rng = np.random.default_rng(3)
    scores = s["label"].to_numpy(float) + rng.normal(0, 0.4, len(s))
    f = tmp_path / "scores.csv"
    pd.DataFrame({"sample_id": s["sample_id"], "score": scores.round(4)}).to_csv(f, index=False)
    p.get_by_label("Model name").fill("Scores only model")
    p.locator("input[type=file]").set_input_files(str(f))
    settle(p)
    p.get_by_role("button", name="Submit").click()
    settle(p)
    expect(p.get_by_text("Scored and added to the board").first).to_be_visible()
    body = p.locator("body").inner_text()
    assert "threshold" in body.lower()  # how its scores became labels, in words
    assert "Scores only model" in body
    # its results with their 95% CIs, in the board's form
    frames = p.get_by_test_id("stDataFrame")
    results = next(
        rows for i in range(frames.count()) if (rows := table(p, i)) and "95% CI" in rows[0]
    )
    assert re.fullmatch(r"\[0\.\d{3}, [01]\.\d{3}\]", results[0]["95% CI"])


def test_6_a_latex_table_of_this_view_for_a_paper(server, page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url, _ = server
    p = page
    _open(p, f"{url}/leaderboard?benchmark=summedits", "Leaderboard")
    # the downloads are folded under a title that names LaTeX; a click opens them
    p.get_by_text("Download this table", exact=False).click()
    button = p.get_by_role("button", name=re.compile("LaTeX"))
    button.scroll_into_view_if_needed()
    with p.expect_download() as dl:
        button.click()
    path = tmp_path / dl.value.suggested_filename
    dl.value.save_as(path)
    tex = path.read_text(encoding="ascii")  # ASCII only
    assert "\\toprule" in tex and "\\bottomrule" in tex
    assert "Strong checker" in tex and "GPT-4" in tex
    assert re.search(r"\[0\.\d{3}, [01]\.\d{3}\]", tex)
