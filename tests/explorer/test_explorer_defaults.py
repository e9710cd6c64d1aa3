"""What a view opens on when the link does not say."""

from __future__ import annotations

import pandas as pd

from explorer import leaderboard as L


def _dims(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["source", "unit", "slice_kind", "slice_value"])


def test_a_domain_view_opens_on_a_domain_that_runs_have() -> None:
    """SummEdits "By domain" opened on billsum, a domain only the paper reports (the ingested
    release lacks it), so the reader met a board without a single FactBoard run."""
    dims = _dims(
        [
            ("reported", "summary", "domain", "billsum"),
            ("reported", "summary", "domain", "news"),
            ("run", "summary", "domain", "news"),
            ("run", "summary", "domain", "podcast"),
            ("run", "sentence", "domain", "billsum"),
        ]
    )
    values = ["billsum", "news", "podcast"]
    assert L.default_slice_value(dims, "summary", "domain", values) == "news"


def test_without_runs_the_first_value_and_without_values_none() -> None:
    dims = _dims([("reported", "summary", "domain", "billsum")])
    assert L.default_slice_value(dims, "summary", "domain", ["billsum", "news"]) == "billsum"
    assert L.default_slice_value(dims, "summary", "domain", []) == ""
