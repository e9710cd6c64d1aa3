"""The board's per-run columns made once per distinct value or by one scan of many texts
agree with the straightforward one-call-per-row versions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evaluator.submissions import verification
from explorer import board, board_rows
from explorer import ranking as R
from explorer.board_types import BoardQuery


def test_sizes_of_many_runs_agree_with_params_to_float_run_by_run() -> None:
    names = [
        "Llama2-13b-chat",
        "GPT4",
        "Model ١٣b",  # other digits than 0-9
        "Model 13\u2009B",  # a thin space between number and unit
        "v0.7b",  # after a dot: not a size
        "x13b",  # after a letter: not a size
        "7bn",  # followed by a letter: not a size
        "Mixtral 8x7B",
        "2.5 m then 7B",
        "a\x00 7B",  # holds the character the scan joins texts with
        "",
        None,
        float("nan"),
        "Synthetic model 00042",
        "Phi 3.8B",
    ]
    params = [None, "7B", "350M", "", None, "1.5b", None, "a 3 B", None, None, "13", None, None]
    params += ["", "x"]
    value, where = board_rows.sizes_of(params, names)
    one = [board_rows.params_to_float(p, n) for p, n in zip(params, names, strict=True)]
    assert where == [w for _, w in one]
    expect = np.array([np.nan if v is None else v for v, _ in one], dtype=float)
    np.testing.assert_array_equal(value, expect)
    assert where.count("stated") >= 3 and where.count("from name") >= 3
    # without the joining character the scan takes its fast path, with the same result
    v2, w2 = board_rows.sizes_of(params[:9], names[:9])
    np.testing.assert_array_equal(v2, expect[:9])
    assert w2 == where[:9]


def test_sizes_of_random_names_agree_with_params_to_float_run_by_run() -> None:
    """Names built from the characters the size pattern turns on (digits of several scripts,
    spaces of several kinds, units, letters, dots, a lone surrogate): the pass that picks the
    names to look at one by one never leaves out one that holds a size."""
    rng = np.random.default_rng(7)
    parts = ["7", "13", "0.5", "١٣", "٧", "²", " ", "\u2009", "\u00a0", "\x1f", "\n", "b", "B"]
    parts += ["m", "M", "bn", "x", "-", ".", "v", "Llama", "\ud800", ""]
    names = ["".join(rng.choice(parts, size=rng.integers(0, 6))) for _ in range(3000)]
    # with a lone surrogate (Arrow cannot hold it: every pair looked at), then without
    for some in (names[:1500], [n for n in names if "\ud800" not in n]):
        ps = [None if i % 3 else some[-i] for i in range(len(some))]
        value, where = board_rows.sizes_of(ps, some)
        one = [board_rows.params_to_float(p, n) for p, n in zip(ps, some, strict=True)]
        assert where == [w for _, w in one]
        expect = np.array([np.nan if v is None else v for v, _ in one], dtype=float)
        np.testing.assert_array_equal(value, expect)
        assert where.count("from name") > 50 and where.count("") > 50


def each_distinct(fn: Any, *columns: pd.Series) -> list[Any]:
    """Each row's fn(*args) from the distinct args' values (board_rows._distinct)."""
    made, key = board_rows._distinct(fn, *columns)
    return [made[k] for k in key.tolist()]


def test_each_distinct_calls_once_per_value_a_function_can_tell_apart() -> None:
    calls: list[tuple[object, ...]] = []

    def show(*args: object) -> str:
        calls.append(args)
        return repr(args)

    floats = pd.Series([0.0, -0.0, np.nan, 0.5, 0.5, np.nan, 0.0], dtype=float)
    mixed = pd.Series([None, np.nan, pd.NA, 1, 1.0, True, "1"], dtype=object)
    text = pd.Series(["a", "a", None, "b", "a", "b", "a"], dtype="str")
    pair = [pd.Series(["x", "y", "x", "y"]), pd.Series(["b", None, "a", "a"], dtype="str")]
    for cols in ([floats], [mixed], [text], [text, floats], [mixed, text, floats], pair):
        calls.clear()
        got = each_distinct(show, *cols)
        assert got == [show(*a) for a in zip(*(c.tolist() for c in cols), strict=True)]
        texts = board_rows.each_distinct_text(show, *cols)
        assert str(texts.dtype) == "str" and list(texts) == got
    assert len(each_distinct(show, floats)) == 7
    calls.clear()
    each_distinct(show, pd.Series(["x"] * 50, dtype="str"), floats.iloc[[3] * 50])
    assert len(calls) == 1
    # a text function that gives no text for some: missing there, as a text column has it
    none_for_b = board_rows.each_distinct_text(lambda t: None if t == "b" else t, text)
    assert none_for_b.isna().tolist() == [False, False, True, True, False, True, False]


def test_verification_labels_once_per_distinct_submission_agree() -> None:
    origin = pd.Series(["submitted", "evaluated", "submitted", "imported", "submitted"])
    config = pd.Series(['{"detector":"x"}', '{"detector":"x"}', "{}", "{}", "{}"])
    sub = pd.Series(
        [
            '{"recipe": {"a": 1}, "verification": {"status": "failed", "reason": "gone"}}',
            None,
            '{"recipe": {"a": 1}}',
            '{"source_name": "Lab"}',
            '{"recipe": {"a": 1}}',
        ],
        dtype=object,
    )
    got = each_distinct(verification.label_and_status, origin, config, sub)
    assert got == [
        verification.label_and_status(o, c, s)
        for o, c, s in zip(origin.tolist(), config.tolist(), sub.tolist(), strict=True)
    ]


def test_rank_array_is_the_ranks_of_the_significance_matrix() -> None:
    rng = np.random.default_rng(3)
    v = rng.random(40)
    lo, hi = v - rng.random(40) / 5, v + rng.random(40) / 5
    lo[3] = np.nan
    for lower in (False, True):
        got = R.rank_array(v, lo, hi, lower)
        assert got.dtype == np.int64
        assert got.tolist() == R.ranks(list(v), R.significance_matrix(v, lo, hi, lower))


def test_the_board_order_is_the_stable_sort_by_value_then_name() -> None:
    rng = np.random.default_rng(5)
    n = 300
    value = rng.choice([0.5, 0.25, np.nan, 0.0, -0.0, np.inf, 0.75], n)
    names = ["b", "a", "B", "é", "Zeta", "ä", "a b", "", "😀", "aa"]
    model = pd.Series(rng.choice(names, n), dtype=object)
    model[rng.random(n) < 0.05] = None
    rows = pd.DataFrame({"value": value, "model": model, "i": np.arange(n)})
    for lower in (False, True):
        expect = rows.sort_values(
            ["value", "model"], ascending=[lower, True], na_position="last", kind="mergesort"
        )
        assert board._order(rows, lower).tolist() == expect.index.tolist()
    # a name that is not text: sorted as before
    odd = rows.assign(model=[1.5 if i % 7 == 0 else "x" for i in range(n)])
    with_numbers = board._order(odd.assign(model=odd["model"].astype(object)), False)
    assert len(with_numbers) == n


def test_notes_say_who_covers_which_domains_and_splits() -> None:
    rows = pd.DataFrame(
        {
            "origin_code": ["submitted", "reported", "reported", "evaluated", "reported"],
            "coverage_set": ["a;b;c", "a;b", "", "a;b;c", "a;b"],
            "split": ["test", "all", "test", "dev", "all"],
            "config": ["", "suspect=yes", "", "", ""],
        }
    )
    q = BoardQuery("demo", "summary")
    notes = board._notes(rows, q, ["a", "b", "c"])
    assert notes[0] == (
        "Rows average over different domains: FactBoard runs cover 3 of 3 domains; published "
        "numbers cover 2 of 3 domains (without c). An Overall over fewer domains is not "
        "directly comparable."
    )
    assert notes[1].startswith(
        "Rows come from different splits: published numbers on split 'all'; FactBoard runs "
        "on split 'dev'; FactBoard runs and published numbers on split 'test'."
    )
    assert "suspect" in notes[2]


def test_row_labels_add_words_only_where_the_straightforward_labels_have_them() -> None:
    rows = pd.DataFrame(
        {
            "model": ["Run model", "Paper model", "Paper model", "Other", None],
            "origin_code": ["submitted", "reported", "reported", "evaluated", "submitted"],
            "config": ["", "prompt=ZS", "", None, ""],
            "run_id": ["r-1", None, None, "r-2", "r-3"],
            "source": ["FactBoard run", "P", "P", "FactBoard run", "FactBoard run"],
        }
    )
    config = rows["config"].fillna("").astype(str)
    plain = (
        rows["model"].astype(str)
        + np.where(rows["origin_code"] == "reported", " · published", "")
        + np.where(config != "", " (" + config + ")", "")
    ).tolist()
    got = board_rows.row_labels(rows)
    assert (
        got[:4]
        == plain[:4]
        == [
            "Run model",
            "Paper model · published (prompt=ZS)",
            "Paper model · published",
            "Other",
        ]
    )
    assert pd.isna(got[4]) and pd.isna(plain[4])
