"""Refresh README's screenshots (docs/screenshots/*.png) from a data root, in headless Chromium.

Run: python scripts/screenshots.py --root DATA_ROOT [--out docs/screenshots] [--only NAME ...]

The data root should hold what a reader of README expects to see: the demo, the shared
benchmarks ingested (python -m evaluator ingest all --from ../shared/benchmarks) and a few
runs on them. Each page is opened in a fresh tab at 1400 x 1600, left to finish (Streamlit's
running indicator gone), and captured whole.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CHROMIUM = "/usr/bin/chromium"
HEIGHT = 1600  # the window's height: a picture in README shows the top of a long page
# file name -> (address, what the picture shows)
PAGES: dict[str, str] = {
    "front.png": "",
    "leaderboard-summedits.png": "leaderboard?benchmark=summedits",
    "leaderboard-demo.png": "leaderboard?benchmark=demo",
    "leaderboard-error-types.png": "leaderboard?benchmark=summedits&slice=edit_type",
    "samples.png": "samples?benchmark=summedits",
    "samples-tofueval.png": "samples?benchmark=tofueval&unit=sentence",
    "samples-correlation.png": "samples?benchmark=qags",
    "samples-faithbench.png": "samples?benchmark=faithbench&sample=b01-008",
    "compare.png": "compare?benchmark=summedits",
    "benchmarks.png": "benchmarks",
    "explanations.png": "explanations",
}
DONE = (
    "() => document.querySelector('h1') && "
    "!document.querySelector('[data-testid=stStatusWidget]') && "
    "!document.querySelector('[data-testid=stSkeleton]')"
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True, help="the data root to show")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    ap.add_argument("--only", nargs="*", help="file names to refresh (default: all)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from tests.support.server import running_app

    log = Path(tempfile.mkdtemp(prefix="screenshots-")) / "streamlit.log"
    env = {
        "FACTBOARD_DATA": str(args.root.resolve()),
        "FACTBOARD_CACHE": tempfile.mkdtemp(prefix="screenshots-cache-"),
        "HF_HUB_OFFLINE": "1",
    }
    if os.environ.get("FACTBOARD_HUB_REPO"):
        env["FACTBOARD_HUB_REPO"] = ""  # the pictures show the root given, not a repo's copy
    wanted = {n: u for n, u in PAGES.items() if not args.only or n in args.only}
    args.out.mkdir(parents=True, exist_ok=True)
    with running_app(env, log, start_timeout=120) as app, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        for name, url in wanted.items():
            ctx = browser.new_context(viewport={"width": 1400, "height": HEIGHT})
            page = ctx.new_page()
            page.goto(f"{app.url}/{url}")
            page.wait_for_function(DONE, timeout=180_000, polling=100)
            # a grid draws its canvas once it has been in view: show each, then the top again
            for grid in page.get_by_test_id("stDataFrame").all():
                grid.scroll_into_view_if_needed()
                page.wait_for_timeout(300)
            page.evaluate(
                "() => { for (const e of document.querySelectorAll('*')) "
                "if (e.scrollTop) e.scrollTop = 0; }"
            )
            page.wait_for_timeout(1500)
            page.screenshot(path=str(args.out / name))
            print(f"{name}: {url or '/'}")
            ctx.close()
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
