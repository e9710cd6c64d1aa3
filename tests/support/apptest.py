"""Opening a page of the app in AppTest, through app.py's navigation, with URL state."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")  # absolute: AppTest resolves relative paths against the caller's file


def open_app_page(
    page: str, params: dict[str, str | list[str]] | None = None, timeout: float = 120
) -> AppTest:
    """Run app.py switched to `page` (e.g. "views/samples.py") with these query parameters;
    fails the test on any exception the page raised."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.switch_page(page)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception[0].message if at.exception else ""
    return at
