"""AppTest and pure checks: the samples explorer on odd links (a page that is not a number, or
one of 4,301 digits), long sample ids that must leave the gold and wrong columns in view, and a
sample's attributes in plain words."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from explorer import samples as X
from tests.support import testdata
from tests.support.apptest import open_app_page

PAGE = "views/samples.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return testdata.build_demo_root(tmp_path_factory.mktemp("exlinks") / "leaderboard_data")


@pytest.fixture
def data(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FACTBOARD_DATA", str(root))
    return root


@pytest.mark.parametrize(
    ("page", "shown", "says"),
    [
        ("²", "1", "not a page number"),
        ("9" * 4301, None, "4,301-digit"),
        ("0", "1", "page 0"),
        ("99999", None, "but the list has"),
        ("-3", "1", "not a page number"),
    ],
)
def test_a_page_that_is_no_page_is_clamped_and_said(
    data: Path, page: str, shown: str | None, says: str
) -> None:
    at = open_app_page(PAGE, {"benchmark": "demo", "page": page})  # fails on any exception
    assert any(says in i.value for i in at.info), [i.value for i in at.info]
    last = str(X.num_pages(int(at.markdown[0].value.split("**")[1].replace(",", ""))))
    assert at.query_params["page"] == (shown or last)
    assert len(at.dataframe[0].value) > 0


def test_a_page_of_the_list_says_nothing(data: Path) -> None:
    at = open_app_page(PAGE, {"benchmark": "demo", "page": "2"})
    assert not at.info and at.query_params["page"] == "2"


def test_page_request() -> None:
    assert X.page_request(None, 5) == (None, None)
    assert X.page_request("3", 5) == (None, None)
    assert X.page_request("６", 5)[0] == 1  # a full-width digit is not a page number
    assert X.page_request("7", 5)[0] == 5


TOFU_ID = "mediasum:dev:CNN-104129:Buyouts for General Motors employees:Model-Extra:1"


def test_long_ids_are_shortened_in_the_list_and_kept_whole_underneath() -> None:
    page = pd.DataFrame(
        {
            "sample_id": [TOFU_ID, "short:1"],
            "split": ["dev", "dev"],
            "domain": ["mediasum", "mediasum"],
            "label": [0, 1],
            "error_types": [[], []],
            "summary": ["a", "b"],
            "n_wrong": [3, 0],
            "n_runs": [4, 4],
            "topic_type": ["main", "marginal"],
        }
    )
    t = X.page_table(page, "sentence")
    assert list(t["sample"]) == [TOFU_ID, "short:1"]  # the full id opens the sample
    short = t["sample id"].iloc[0]
    assert len(short) <= X.SHORT_ID and "…" in short
    assert short.startswith("CNN-104129:Buyouts") and short.endswith("Model-Extra:1")
    assert t["sample id"].iloc[1] == "short:1"
    assert X.id_width(t["sample id"]) <= 300


def test_attributes_read_as_plain_words() -> None:
    smp = {
        "attributes": json.dumps(
            {
                "annotation_id": "6",
                "sent_idx": "1",
                "summarizer": "Model-Extra",
                "topic": "Buyouts",
                "topic_type": "main",
            }
        )
    }
    facts = dict(X.attributes_text(smp))
    assert "annotation_id" not in facts and "sent_idx" not in facts
    assert facts["sentence"] == "1 of its summary"
    assert facts["summarizer"] == "Model-Extra" and facts["topic type"] == "main topic"
    assert all("_" not in k for k in facts)


def test_what_the_samples_most_runs_get_wrong_are() -> None:
    rows = pd.DataFrame(
        {
            "label": [0, 0, 0, 1],
            "error_types": [["Contradiction"], ["Contradiction", "Nuanced"], [], []],
        }
    )
    text = X.wrong_breakdown(rows, "sentence")
    assert text.startswith("Of these 4 sentences, 3 are inconsistent")
    assert "Contradiction 2, Nuanced 1" in text and "1 is consistent" in text
    one = X.wrong_breakdown(rows.iloc[:1], "sentence")
    assert one.startswith("Of these 1 sentence, 1 is inconsistent") and "0 are consistent" in one


def test_the_hardest_list_says_why_in_one_line(data: Path) -> None:
    """'Which samples do most runs get wrong, and why': the list and a line on what they are."""
    at = open_app_page(PAGE, {"benchmark": "demo", "hard": "1"})
    said = [c.value for c in at.caption if c.value.startswith("Of these")]
    assert said and "inconsistent" in said[0]


def test_no_match_reads_as_a_plural(data: Path) -> None:
    at = open_app_page(PAGE, {"benchmark": "demo", "q": "zzzz-no-such-text"})
    assert at.markdown[0].value == "**0** matching summaries"
