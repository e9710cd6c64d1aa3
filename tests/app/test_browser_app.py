"""End to end in a real headless Chromium: `streamlit run app.py` on a demo data root.

The front page, links copied from the address bar opened in a fresh browser, the board, a
slice change, a sample opened from the board, two runs compared, the CSV download,
and a model whose name is markup shown as text. Part of the normal test command: Chromium is
/usr/bin/chromium (scripts/test.sh installs it), driven by Playwright.
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support import testdata
from tests.support.server import running_app

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@contextmanager
def _serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`streamlit run app.py` on a fresh demo data root (plus a run named with markup)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: `apt-get install -y chromium` (scripts/test.sh does it)"
        )
    root = testdata.build_demo_root(tmp_path_factory.mktemp("e2e") / "leaderboard_data")
    testdata.add_run(
        root,
        "demo",
        testdata.XSS_NAME,
        accuracy=0.85,
        explanations=True,
        kind="proprietary-llm",
        seed=9,
    )
    log = tmp_path_factory.mktemp("e2e-log") / "streamlit.log"
    with running_app({"FACTBOARD_DATA": str(root), "HF_HUB_OFFLINE": "1"}, log) as app:
        yield app.url, root


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with _serve(tmp_path_factory) as s:
        yield s


@pytest.fixture(scope="module")
def browser(server: tuple[str, Path]):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    # what a page waits for may take seconds on a loaded machine: never Playwright's 5 s
    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, tmp_path: Path):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    dialogs: list[str] = []
    p.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    p.dialogs = dialogs  # type: ignore[attr-defined]
    yield p
    p.screenshot(path=str(tmp_path / "end.png"), full_page=True)  # kept with the test's tmp
    ctx.close()


# The app is idle when its script is not running (Streamlit's own run state on the app root),
# no element of an earlier run is left stale and nothing is still loading; idle for a moment,
# so that a run an action has just asked for is seen starting, not missed.
_IDLE = """() => {
    const app = document.querySelector('[data-testid=stApp]');
    const idle = app !== null
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-stale=true]')
        && !document.querySelector('[data-testid=stSkeleton]')
        && !document.querySelector('[data-testid=stStatusWidget]');
    const now = Date.now();
    if (!idle) { window.__fbIdleSince = null; return false; }
    window.__fbIdleSince = window.__fbIdleSince || now;
    return now - window.__fbIdleSince >= 250;
}"""


def settle(p) -> None:  # type: ignore[no-untyped-def]
    """Wait until Streamlit has finished every run the last action asked for: its script
    state is 'notRunning', no stale element, no skeleton, and it stays so for 250 ms."""
    p.evaluate("() => { window.__fbIdleSince = null; }")
    p.wait_for_function(_IDLE, timeout=60_000, polling=50)


def eventually(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait for a condition (re-checked every 0.2 s) instead of a fixed sleep. A check that
    raises (an element replaced by a rerun while it was read) counts as not yet."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
            why = ""
        except Exception as e:  # read again; said if it never settles
            why = f" (last: {e!r})"
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}{why}")
        time.sleep(0.2)


def choose(p, label: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """Pick `option` (exact text, or its start) in the selectbox labelled `label`, and wait
    until the box shows it and the run it started has finished."""
    from playwright.sync_api import expect

    box = p.get_by_test_id("stSelectbox").filter(has=p.get_by_text(label, exact=True))
    wanted = re.compile(re.escape(option))
    settle(p)  # a run still drawing can replace the menu under the click
    for attempt in range(3):
        box.evaluate("e => e.scrollIntoView({block: 'center'})")  # room for the menu below it
        box.click()
        p.get_by_role("option").filter(has_text=option).first.click()
        try:
            expect(box.get_by_role("combobox")).to_have_value(wanted, timeout=20_000)
            break
        except AssertionError:
            if attempt == 2:
                raise
            p.keyboard.press("Escape")  # the click fell on a menu a rerun replaced: open it again
            settle(p)
    settle(p)


def table(p, index: int = 0) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    """Rows of the index-th dataframe, from the grid's accessible table."""
    frame = p.get_by_test_id("stDataFrame").nth(index)
    got: list[list[dict[str, str]]] = []

    def read() -> bool:
        # the grid draws its accessible table in steps: a read is kept when it is whole
        # (a header, and cells that fill rows of it) and the same twice in a row
        frame.locator("td").first.wait_for(state="attached")
        head = frame.locator("th").all_inner_texts()
        cells = frame.locator("td").all_inner_texts()
        n = len(head)
        if not n or not cells or len(cells) % n:
            return False
        rows = [dict(zip(head, cells[i : i + n], strict=True)) for i in range(0, len(cells), n)]
        same = bool(got) and got[-1] == rows
        got.append(rows)
        return same

    eventually(read, f"the table {index} to be drawn")
    return got[-1]


def test_board_slice_sample_compare_and_csv(server: tuple[str, Path], page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    url, root = server
    p = page
    # 1. the board
    p.goto(f"{url}/leaderboard")
    # the first page of a fresh server imports everything: wait for it like a user would
    expect(p.get_by_role("heading", name="Leaderboard")).to_be_visible(timeout=60_000)
    settle(p)
    expect(p.get_by_text("Synthetic demo data.")).to_be_visible()
    rows = table(p)
    assert {r["Model"] for r in rows} >= {
        "Always consistent",
        "Random guess (seed 0)",
        "Summary-token precision",
        "Novel numbers & names",
    }
    assert list(rows[0]) == ["Rank", "Model", "Kind", "BAcc", "95% CI", "Δ to best run", "n"]
    # 2. a slice: by domain, news
    choose(p, "View", "By domain")
    choose(p, "Domain", "news")
    expect(p.get_by_text("By domain: news")).to_be_visible()
    assert "slice=domain" in p.url and "value=news" in p.url
    rows = table(p)
    assert len(rows) == 5
    # 3. a sample from it: the samples the random baseline gets wrong in news (the run
    # card is folded away until opened)
    p.get_by_text("Inspect a run", exact=False).click()
    settle(p)
    choose(p, "Run", "Random guess (seed 0)")
    p.get_by_text("Samples this run gets wrong in news").click()
    expect(p.get_by_role("heading", name="Samples")).to_be_visible()
    settle(p)
    assert "/samples" in p.url and "wrong=" in p.url and "domain=news" in p.url
    expect(p.get_by_text("matching summaries")).to_be_visible()
    listed = table(p)
    # the list's first columns (the grid draws the ones in view): every sample is from news
    assert listed and all(r["sample"].startswith("demo-news-") for r in listed)
    target = listed[0]["sample"]
    choose(p, "Open a sample (or click a row)", target)
    expect(p.get_by_role("heading", name=f"Sample {target}")).to_be_visible()
    assert f"sample={target}" in p.url
    preds = table(p, -1)
    rand = next(r for r in preds if r["model"] == "Random guess (seed 0)")
    assert rand["correct"] == "✗ wrong"  # the filter promised a sample it gets wrong
    if "_og" not in target and not target.endswith(("_0", "_1")):
        expect(p.locator("ins, del").first).to_be_attached()  # the edit, highlighted (waits)
    # the permalink opens the same sample in a fresh page
    link = p.get_by_test_id("stCode").last.inner_text().strip()
    p.goto(link if link.startswith("http") else url + link)
    expect(p.get_by_role("heading", name=f"Sample {target}")).to_be_visible()
    # 4. compare two runs, through the navigation
    p.goto(url)
    settle(p)
    p.get_by_text("Results", exact=True).click()
    p.get_by_role("menuitem").filter(has_text="Compare").click()
    expect(p.get_by_role("heading", name="Compare two runs")).to_be_visible()
    settle(p)
    choose(p, "Run A", "Random guess (seed 0)")
    choose(p, "Run B", "Always consistent")
    expect(p.get_by_text("McNemar (exact)")).to_be_visible()
    expect(p.get_by_test_id("stMetric").filter(has_text="A − B")).to_be_visible()
    assert "a=" in p.url and "b=" in p.url
    dis = table(p, 1)
    assert len(dis) > 0 and {r["right"] for r in dis} <= {"A", "B"}
    # 5. the CSV download is the table shown
    p.goto(f"{url}/leaderboard?slice=domain&value=news&kind=baseline")
    settle(p)
    shown = table(p)
    assert {r["Kind"] for r in shown} == {"baseline"}
    p.get_by_text("Download this table", exact=False).click()  # folded until opened
    with p.expect_download() as dl:
        p.get_by_role("button", name="⬇️ CSV").click()
    path = dl.value.path()
    got = list(csv.DictReader(io.StringIO(Path(path).read_text(encoding="utf-8"))))
    assert [r["Model"] for r in got] == [r["Model"] for r in shown]
    # the download has the columns shown, the drawn CI as its bounds (numbers)
    expected = [x for c in shown[0] for x in (["CI low", "CI high"] if c == "95% CI" else [c])]
    assert list(got[0]) == expected
    assert all(float(r["CI low"]) <= float(r["BAcc"]) <= float(r["CI high"]) for r in got)
    assert dl.value.suggested_filename == "factboard-demo-summary-domain-news-balanced_accuracy.csv"
    assert p.dialogs == []  # type: ignore[attr-defined]


def test_markup_in_names_and_explanations_is_text(server: tuple[str, Path], page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    url, root = server
    p = page
    rid = next(d.name for d in (root / "runs").iterdir() if "script" in d.name)
    p.goto(f"{url}/leaderboard?run={rid}")
    settle(p)
    # the name, character for character, as text (st.text), in the table and the run card
    card = p.get_by_test_id("stText").filter(has_text=testdata.XSS_NAME)
    expect(card).to_be_visible()
    assert card.inner_text().startswith(testdata.XSS_NAME)
    assert any(r["Model"] == testdata.XSS_NAME for r in table(p))
    assert p.locator("script", has_text="alert(1)").count() == 0
    assert p.locator("strong", has_text="bold").count() == 0
    assert p.locator("a[href='http://x']").count() == 0
    # its explanations, on a sample, are text too
    p.goto(f"{url}/samples?sample=demo-news-05_3")
    settle(p)
    preds = table(p, -1)
    mine = next(r for r in preds if r["model"] == testdata.XSS_NAME)
    assert "<b>" in mine["explanation"] and "**not bold**" in mine["explanation"]
    assert p.locator("b", has_text="3").count() == 0
    p.wait_for_timeout(500)
    assert p.dialogs == []  # type: ignore[attr-defined]


def test_a_deep_link_opened_first_on_a_fresh_server_keeps_the_app(
    tmp_path_factory: pytest.TempPathFactory,
    browser,  # type: ignore[no-untyped-def]
) -> None:
    """The first request a new server gets is a shared link to a page: it must open inside the
    app's navigation (top menu, page config), with the linked state, not as a bare script."""
    with _serve(tmp_path_factory) as (url, _root):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        p = ctx.new_page()
        p.set_default_timeout(60_000)
        p.goto(f"{url}/samples?benchmark=demo&sample=demo-news-05_3")
        settle(p)
        p.get_by_text("Sample demo-news-05_3").first.wait_for()
        assert p.title() == "FactBoard" or "FactBoard" in p.title()
        for menu in ("Results", "Data", "Contribute"):
            assert p.get_by_text(menu, exact=True).first.is_visible()
        assert p.locator("[data-testid=stSidebarNav]").count() == 0
        shot = tmp_path_factory.mktemp("deep-link") / "deep-link-cold.png"
        p.screenshot(path=str(shot), full_page=True)
        ctx.close()


def _fresh(browser, link: str):  # type: ignore[no-untyped-def]
    """The link opened in a new browser context: no cookies, no session, nothing remembered."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = ctx.new_page()
    p.set_default_timeout(60_000)
    p.goto(link)
    settle(p)
    return ctx, p


def _selected(p, label: str) -> str:  # type: ignore[no-untyped-def]
    box = p.get_by_test_id("stSelectbox").filter(has=p.get_by_text(label, exact=True))
    return str(box.locator("input").first.get_attribute("aria-label") or box.inner_text())


def test_links_copied_from_the_address_bar_restore_the_view(
    server: tuple[str, Path],
    browser,  # type: ignore[no-untyped-def]
    page,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    """Issue items 1-4 as a user does them: the front page at /, its link into a
    leaderboard, /leaderboard itself, a view changed by hand, then page.url opened in a fresh
    context shows the same view; the same for Compare; a link to a deleted run says so."""
    from playwright.sync_api import expect

    url, root = server
    p = page
    # the front page is the default page, at /
    p.goto(url)
    settle(p)
    expect(p.get_by_role("heading", name="FactBoard")).to_be_visible(timeout=60_000)
    expect(p.get_by_text("Published numbers only", exact=True)).to_be_visible()
    body = p.locator("body").inner_text()
    assert "rank19" not in body and "aggrefact_sota" not in body
    p.screenshot(path=str(tmp_path / "front.png"), full_page=True)
    # its link opens the demo's leaderboard at /leaderboard with the view in the URL
    p.get_by_text("Full leaderboard of", exact=False).first.click()
    expect(p.get_by_role("heading", name="Leaderboard")).to_be_visible()
    settle(p)
    assert "/leaderboard?" in p.url and "benchmark=demo" in p.url
    # change the view by hand, copy the address, open it in a fresh browser
    choose(p, "View", "By domain")
    choose(p, "Domain", "news")
    choose(p, "Metric", "FPR")
    # the address bar holds the view once the run has written it (not at a fixed delay)
    p.wait_for_url(re.compile(r"(?=.*benchmark=demo)(?=.*slice=domain)(?=.*metric=fpr)"))
    link = p.url
    expect(p.get_by_text("By domain: news")).to_be_visible()
    want = table(p)
    ctx, q = _fresh(browser, link)
    expect(q.get_by_text("By domain: news")).to_be_visible()
    eventually(lambda: table(q) == want, "the fresh page's table to match the copied view")
    q.screenshot(path=str(tmp_path / "leaderboard-fresh.png"), full_page=True)
    ctx.close()
    # a published-only benchmark: "—" where the paper gives nothing, never "None"
    p.goto(f"{url}/leaderboard?benchmark=summedits")
    settle(p)
    rows = table(p)
    assert rows and rows[0]["Rank (by value)"] == "1"
    assert all("None" not in r.values() and "nan" not in r.values() for r in rows)
    assert not any("None" in v for r in rows for v in r.values())
    p.screenshot(path=str(tmp_path / "leaderboard-published.png"), full_page=True)
    # Compare: the copied link shows the same two runs and numbers
    p.goto(f"{url}/compare")
    settle(p)
    choose(p, "Run A", "Random guess (seed 0)")
    choose(p, "Run B", "Always consistent")
    rand = next(d.name for d in (root / "runs").iterdir() if "random-guess" in d.name)
    always = next(d.name for d in (root / "runs").iterdir() if "always-consistent" in d.name)
    p.wait_for_url(re.compile(rf"(?=.*a={re.escape(rand)})(?=.*b={re.escape(always)})"))
    expect(p.get_by_text("McNemar (exact)")).to_be_visible()
    metrics = p.get_by_test_id("stMetric")
    expect(metrics).to_have_count(4)
    numbers = metrics.all_inner_texts()
    ctx, q = _fresh(browser, p.url)
    expect(q.get_by_text("McNemar (exact)")).to_be_visible()
    metrics_q = q.get_by_test_id("stMetric")
    eventually(lambda: metrics_q.all_inner_texts() == numbers, "the same numbers from the link")
    ctx.close()
    # a shared link to a run that was deleted since: said so, no stand-in
    gone = p.url.replace("a=demo-", "a=demo-deleted-")
    ctx, q = _fresh(browser, gone)
    expect(q.get_by_text("no longer on", exact=False)).to_be_visible()
    assert q.get_by_test_id("stMetric").count() == 0
    q.screenshot(path=str(tmp_path / "compare-deleted.png"), full_page=True)
    ctx.close()
