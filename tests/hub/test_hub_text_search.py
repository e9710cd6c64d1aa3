"""The search of the runs table's run.json texts for a submission's fingerprints (duplicates
across replicas): every needle in one pass, each matched as plain text, never as a pattern."""

from __future__ import annotations

from types import SimpleNamespace

import pyarrow as pa

from evaluator.hub.checks import _rows_containing


def test_needles_match_as_plain_text_in_one_pass() -> None:
    texts = {
        "r1": '{"submission": {"file_sha256": "0123456789abcdef0123"}}',
        "r2": '{"note": "a.c(d)*[x] and é 日本 as written"}',
        "r3": '{"note": "abc(d) matches only a pattern"}',
        "r4": '{"file_sha256": "0123456789ABCDEF0123"}',  # another case: another needle
        "r5": None,
    }
    table = pa.table({"run_id": list(texts), "run_json": list(texts.values())})
    tabs = SimpleNamespace(runs_table=table)
    needles = {"0123456789abcdef0123", "a.c(d)*[x] and é 日本"}
    assert _rows_containing(tabs, needles) == {"r1", "r2"}  # type: ignore[arg-type]
    assert _rows_containing(tabs, {"zzzzzzzzzzzzzzzzzz"}) == set()  # type: ignore[arg-type]
    assert _rows_containing(tabs, set()) == set()  # type: ignore[arg-type]
