"""The one way FactBoard writes a number for a reader: metric values, confidence intervals,
differences, p-values, percentages, counts and plural nouns. Pages, the CLI and every export
(CSV text columns, LaTeX, Markdown) call these, so a number reads the same wherever it appears.

Pure functions of their arguments; a missing or non-finite value is written as `MISSING` ("—"),
never as "None", "nan" or "inf".
"""

from __future__ import annotations

import math

MISSING = "—"
DECIMALS = 3  # metric values, CIs and differences: always three decimals
P_FLOOR = 0.001  # p-values below this are written "< 0.001"


def finite(v: object) -> bool:
    """True for a real, finite number (bools, None, NaN, inf and text are not)."""
    if v is None or isinstance(v, bool | str | bytes):
        return False
    try:
        return math.isfinite(float(v))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return False


def number(v: object, decimals: int = DECIMALS, missing: str = MISSING) -> str:
    """A metric value: '0.760' (fixed decimals, so a column lines up)."""
    return f"{float(v):.{decimals}f}" if finite(v) else missing  # type: ignore[arg-type]


def signed(v: object, decimals: int = DECIMALS, missing: str = MISSING) -> str:
    """A difference: '+0.012', '−0.004' (a true minus sign), '0.000'."""
    if not finite(v):
        return missing
    x = round(float(v), decimals)  # type: ignore[arg-type]
    if x == 0:
        return f"{0:.{decimals}f}"
    return f"{'+' if x > 0 else '−'}{abs(x):.{decimals}f}"


def ci(low: object, high: object, decimals: int = DECIMALS, missing: str = "") -> str:
    """A 95% confidence interval: '[0.579, 0.665]'; `missing` when either bound is missing."""
    if not (finite(low) and finite(high)):
        return missing
    return f"[{float(low):.{decimals}f}, {float(high):.{decimals}f}]"  # type: ignore[arg-type]


def signed_ci(low: object, high: object, decimals: int = DECIMALS, missing: str = "") -> str:
    """A difference's confidence interval: '[+0.010, +0.034]'."""
    if not (finite(low) and finite(high)):
        return missing
    return f"[{signed(low, decimals)}, {signed(high, decimals)}]"


def value_ci(value: object, low: object, high: object, decimals: int = DECIMALS) -> str:
    """'0.712 [0.690, 0.734]', or '0.712' when the number has no CI (published numbers)."""
    if not finite(value):
        return MISSING
    bounds = ci(low, high, decimals)
    return f"{number(value, decimals)} {bounds}" if bounds else number(value, decimals)


def p_value(p: object, missing: str = "") -> str:
    """A p-value as a reader expects it: '0.34', '0.012', '< 0.001' (never '0' or '1e-03').
    Two decimals from 0.01 up, three below; a bootstrap's p of 0 is '< 0.001'."""
    if not finite(p):
        return missing
    x = min(max(float(p), 0.0), 1.0)  # type: ignore[arg-type]
    if x < P_FLOOR:
        return f"< {P_FLOOR:g}"
    if x < 0.01:
        return f"{x:.3f}"
    return f"{x:.2f}"


def percent(share: object, decimals: int = 1, missing: str = MISSING) -> str:
    """A share in [0, 1] as a percentage with fixed decimals: '0.0%', '0.3%', '57.5%'."""
    if not finite(share):
        return missing
    return f"{100 * float(share):.{decimals}f}%"  # type: ignore[arg-type]


def count(n: object, missing: str = MISSING) -> str:
    """A count with thousands separators: '1,479'."""
    if not finite(n):
        return missing
    return f"{int(float(n)):,}"  # type: ignore[arg-type]


def plural(n: int, noun: str, many: str | None = None) -> str:
    """'1 row', '2 rows', '1,479 summaries' (pass `many` for an irregular plural)."""
    word = noun if n == 1 else (many if many is not None else f"{noun}s")
    return f"{n:,} {word}"
