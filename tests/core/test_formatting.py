"""The one number formatter: every page and export writes numbers through it."""

import math

import numpy as np
import pytest

from evaluator.core import formatting as F


@pytest.mark.parametrize(
    ("v", "want"),
    [(0.76, "0.760"), (0.5624, "0.562"), (1, "1.000"), (None, "—"), (math.nan, "—"),
     (math.inf, "—"), ("0.7", "—"), (np.float32(0.25), "0.250"), (1e308, "1" + "0" * 308 + ".000")],
)
def test_number_has_fixed_decimals_and_one_missing_mark(v, want):
    assert F.number(v) == want


def test_ci_and_value_ci():
    assert F.ci(0.579, 0.6651) == "[0.579, 0.665]"
    assert F.ci(None, 0.6) == ""
    assert F.value_ci(0.712, 0.69, 0.734) == "0.712 [0.690, 0.734]"
    assert F.value_ci(0.712, math.nan, math.nan) == "0.712"
    assert F.value_ci(None, 0.1, 0.2) == "—"


def test_signed_uses_a_true_minus_and_no_signed_zero():
    assert F.signed(0.0123) == "+0.012"
    assert F.signed(-0.0041) == "−0.004"
    assert F.signed(-0.0001) == "0.000"
    assert F.signed_ci(-0.01, 0.02) == "[−0.010, +0.020]"


@pytest.mark.parametrize(
    ("p", "want"),
    [(0.0, "< 0.001"), (0.0004, "< 0.001"), (0.001, "0.001"), (0.0123, "0.01"),
     (0.00999, "0.010"), (0.34, "0.34"), (1.0, "1.00"), (math.nan, ""), (None, "")],
)
def test_p_value_is_never_zero(p, want):
    assert F.p_value(p) == want


def test_percent_count_plural():
    assert [F.percent(x) for x in (0, 0.003, 0.5749)] == ["0.0%", "0.3%", "57.5%"]
    assert F.count(1479) == "1,479"
    assert F.count(None) == "—"
    assert F.plural(1, "row") == "1 row"
    assert F.plural(2, "row") == "2 rows"
    assert F.plural(1479, "summary", "summaries") == "1,479 summaries"
