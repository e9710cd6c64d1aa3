"""The summary diff: insertions and deletions found, every piece of text escaped."""

from __future__ import annotations

import html
import re

from hypothesis import given
from hypothesis import strategies as st

from explorer import textdiff
from explorer.ui import md_escape


def test_an_edit_is_one_deletion_and_one_insertion() -> None:
    seed = "The council approved a 62 million dollar plan."
    edited = "The council rejected a 62 million dollar plan."
    ops = textdiff.diff_ops(seed, edited)
    assert [(o.kind, o.text) for o in ops if o.kind != "equal"] == [
        ("delete", "approved"),
        ("insert", "rejected"),
    ]
    out = textdiff.diff_html(seed, edited)
    assert re.search(r"<del[^>]*>approved</del>", out)
    assert re.search(r"<ins[^>]*>rejected</ins>", out)
    assert textdiff.diff_counts(seed, edited) == (1, 1)


def test_markup_in_summaries_is_escaped() -> None:
    seed = "Safe text <b>bold</b> & more."
    edited = "Safe text <script>alert(1)</script> & more **x**."
    out = textdiff.diff_html(seed, edited)
    assert "<script>" not in out and "<b>" not in out
    without_deleted = re.sub(r"<del[^>]*>.*?</del>", "", out)
    shown = html.unescape(re.sub(r"</?(ins|div)[^>]*>", "", without_deleted))
    assert shown == edited  # the edited summary, character for character, as text
    # the only tags are the ones the diff writes
    assert set(re.findall(r"<(/?\w+)", out)) <= {"div", "/div", "ins", "/ins", "del", "/del"}
    plain = textdiff.plain_html("<img src=x onerror=alert(1)>")
    assert "<img" not in plain and "&lt;img" in plain


@given(st.text(max_size=80), st.text(max_size=80))
def test_diff_reconstructs_both_texts(seed: str, edited: str) -> None:
    ops = textdiff.diff_ops(seed, edited)
    assert "".join(o.text for o in ops if o.kind != "insert") == seed
    assert "".join(o.text for o in ops if o.kind != "delete") == edited
    out = textdiff.diff_html(seed, edited)
    # strip our own tags: what is left is the escaped text of the ops
    inner = re.sub(r"</?(ins|del|div)[^>]*>", "", out)
    assert html.unescape(inner) == "".join(o.text for o in ops)
    assert "<" not in inner


@given(st.text(max_size=60))
def test_tokens_round_trip(text: str) -> None:
    assert "".join(textdiff.tokens(text)) == text


def test_markdown_escape() -> None:
    s = md_escape("**bold** _it_ [x](y) $a$ <b> `c` # h")
    for raw in ("**", "_it_", "[x]", "$a$", "<b>", "`c`"):
        assert raw not in s
    assert s.replace("\\", "") == "**bold** _it_ [x](y) $a$ <b> `c` # h"
