"""Property-based tests of the prediction-file parser: whatever the bytes, it returns problems
(or predictions) and raises nothing but a validation error, and a submission of such bytes
stores nothing but its refused record."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator.core.errors import ValidationFailed
from evaluator.store import layout
from evaluator.submissions import records
from evaluator.submissions import service as submit
from evaluator.submissions import validation as V
from tests.support.submit import tree

# pieces that make the parser take its less common paths
FRAGMENTS = [
    b"sample_id",
    b"label",
    b"score",
    b"explanation",
    b",",
    b"\t",
    b";",
    b"\n",
    b"\r\n",
    b'"',
    b"{",
    b"}",
    b"[",
    b":",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\xff\xfe",
    b"PK\x03\x04",
    b"1",
    b"0",
    b"1_000",
    b"nan",
    b"inf",
    b"1e999",
    b"-0.5",
    b"yes",
    b"consistent",
    b"demo-news-00_og",
    b'{"sample_id": 1, "label": true}',
    b"\xe2\x80\x8b",
    b"\xc3",
    b"=HYPERLINK(1)",
]
arbitrary = st.one_of(
    st.binary(max_size=2000),
    st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join),
    st.lists(st.tuples(st.text(max_size=12), st.text(max_size=12)), min_size=1, max_size=20).map(
        lambda rows: ("sample_id,label\n" + "".join(f"{a},{b}\n" for a, b in rows)).encode()
    ),
)
names = st.sampled_from([None, "p.csv", "p.jsonl", "p.json", "p.txt", "P.CSV"])


@settings(max_examples=400, deadline=None)
@given(data=arbitrary, filename=names)
def test_arbitrary_bytes_give_problems_never_an_exception(
    data: bytes, filename: str | None
) -> None:
    v = V.validate_predictions(data, filename, known_ids={"demo-news-00_og", "a"})
    assert isinstance(v.problems, list) and len(v.problems) <= V.MAX_PROBLEMS + 4
    if v.ok:
        assert v.predictions is not None and not v.predictions.empty
        assert set(v.predictions["sample_id"]) <= {"demo-news-00_og", "a"}
        assert v.predictions["score"].dropna().map(lambda x: abs(x) < float("inf")).all()
    try:
        df = V.parse_predictions(data, filename)
    except ValidationFailed as e:
        assert e.args  # it says what is wrong
    else:
        assert isinstance(df, pd.DataFrame)


@pytest.fixture
def store(demo: Path) -> Path:
    return demo


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=arbitrary, filename=names)
def test_a_submission_of_arbitrary_bytes_stores_nothing(
    store: Path, data: bytes, filename: str | None
) -> None:
    before = tree(layout.data_root())
    res = submit.submit(data, filename, submit.SubmissionMeta(benchmark="demo", model_name="Fuzz"))
    assert res.status == "rejected" and res.problems
    assert tree(layout.data_root()) == before  # no run, nothing staged
    assert not records.upload_path(res.submission_id).exists()  # the bytes are not kept
    assert not (records.root_dir() / "inflight" / res.submission_id).exists()
