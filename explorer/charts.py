"""Altair charts for the pages. Text (model names, types) is drawn by Vega as text, never as HTML.

Each function takes a tidy DataFrame and returns an altair Chart, or None when there is nothing to
draw (the page then says why).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from evaluator.core import formatting as F

ORIGIN_COLORS = {
    "reported": "#8c8c8c",
    "submitted": "#1f77b4",
    "evaluated": "#2ca02c",
    "reproduced": "#9467bd",
    "released": "#ff7f0e",
    "imported": "#17becf",
}
TYPE_ORDER = ["correct", "partially_correct", "incorrect", "unrelated", "no_explanation"]
TYPE_COLORS = ["#2ca02c", "#a6d96a", "#d62728", "#ff9896", "#bdbdbd"]


# where a row comes from, in a reader's words (legends and tooltips never show internal codes)
ORIGIN_WORDS = {
    "reported": "published number",
    "submitted": "submitted run",
    "evaluated": "FactBoard run",
    "reproduced": "reproduced run",
    "released": "released outputs",
    "imported": "imported run",
}


def origin_words(codes: pd.Series) -> pd.Series:
    return codes.astype(str).map(lambda c: ORIGIN_WORDS.get(c, c))


def _origin_scale() -> alt.Scale:
    return alt.Scale(
        domain=[ORIGIN_WORDS[o] for o in ORIGIN_COLORS], range=list(ORIGIN_COLORS.values())
    )


def _height(n: int, per: int = 28, minimum: int = 180) -> int:
    return max(minimum, per * n + 50)


def heatmap(
    long: pd.DataFrame, metric_title: str, slice_title: str, order: list[str]
) -> alt.Chart | None:
    """model x slice value, coloured by the metric, with the value written in each cell."""
    if long.empty:
        return None
    long = long.assign(**{"from": origin_words(long["origin"])})
    models = [m for m in order if m in set(long["label"])]
    values = sorted(long["slice_value"].unique(), key=str)
    base = alt.Chart(long).encode(
        x=alt.X(
            "slice_value:N",
            title=slice_title,
            sort=values,
            axis=alt.Axis(labelAngle=-30, labelLimit=160),
        ),
        y=alt.Y("label:N", title=None, sort=models, axis=alt.Axis(labelLimit=260)),
    )
    rect = base.mark_rect().encode(
        color=alt.Color("value:Q", title=metric_title, scale=alt.Scale(scheme="blues")),
        tooltip=[
            alt.Tooltip("label:N", title="model"),
            alt.Tooltip("slice_value:N", title=slice_title),
            alt.Tooltip("value:Q", title=metric_title, format=".3f"),
            alt.Tooltip("from:N", title="from"),
        ],
    )
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("value:Q", format=".3f"),
        color=alt.condition("datum.value > 0.75", alt.value("white"), alt.value("#222")),
    )
    return (rect + text).properties(height=_height(len(models)), width="container")


def ci_domain(rows: pd.DataFrame, pad: float = 0.04) -> list[float] | None:
    """The x range that holds every row's value and CI, a little wider than the data (pages
    of one forest plot share it): the axis starts where the data does, not at a round 0.5."""
    cols = [rows[c].astype(float) for c in ("value", "ci_low", "ci_high") if c in rows]
    if not cols:
        return None
    v = pd.concat(cols).dropna()
    if v.empty:
        return None
    lo, hi = float(v.min()), float(v.max())
    span = (hi - lo) or max(abs(hi) * 0.1, 0.01)
    return [lo - pad * span, hi + pad * span]


def forest(
    rows: pd.DataFrame, metric_title: str, x_domain: list[float] | None = None
) -> alt.Chart | None:
    """Point and 95% CI per row, sorted as the board; x_domain: a fixed x range (pages of
    one plot share it). Rows without a CI (published numbers) are dots alone; with no CI on
    any row the chart is a plot of the values, and its axis says so."""
    d = rows[rows["value"].notna()].copy()
    if d.empty:
        return None
    d["from"] = origin_words(d["origin_code"])
    any_ci = bool((d["ci_low"].notna() & d["ci_high"].notna()).any())
    order = d["label"].tolist()
    dom = x_domain or ci_domain(d)
    scale = alt.Scale(domain=dom, zero=False, nice=False) if dom else alt.Scale(zero=False)
    title = f"{metric_title} (dot) with its 95% CI (bar)" if any_ci else metric_title
    tips = [
        alt.Tooltip("label:N", title="model"),
        alt.Tooltip("value:Q", title=metric_title, format=".3f"),
    ]
    if any_ci:
        tips += [
            alt.Tooltip("ci_low:Q", title="95% CI low", format=".3f"),
            alt.Tooltip("ci_high:Q", title="95% CI high", format=".3f"),
        ]
    tips += [alt.Tooltip("n:Q"), alt.Tooltip("rank:Q"), alt.Tooltip("from:N", title="from")]
    base = alt.Chart(d).encode(
        y=alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=260)),
        color=alt.Color("from:N", title="from", scale=_origin_scale()),
        tooltip=tips,
    )
    point = base.mark_point(filled=True, size=60).encode(
        x=alt.X("value:Q", title=title, scale=scale),
        shape=alt.Shape("from:N", legend=None),
    )
    if not any_ci:
        return point.properties(height=_height(len(d)), width="container")
    rule = (
        base.transform_filter("isValid(datum.ci_low)")
        .mark_rule(strokeWidth=2)
        .encode(x=alt.X("ci_low:Q", title=title, scale=scale), x2="ci_high:Q")
    )
    return (rule + point).properties(height=_height(len(d)), width="container")


def value_domain(values: pd.Series, pad: float = 0.1) -> list[float] | None:
    """The x range of a bar chart of metric values: from 0 when 0 is near (within the spread
    of the values), else from a little below the smallest value, so that differences of a few
    points are not flattened against a long bar from 0. None: let Vega choose."""
    v = pd.to_numeric(values, errors="coerce").dropna()
    if v.empty:
        return None
    lo, hi = float(v.min()), float(v.max())
    spread = max(hi - lo, 0.02)
    if lo <= 0 or lo <= spread:
        return [min(0.0, lo), hi + pad * spread]
    return [max(0.0, lo - pad * 2 * spread), hi + pad * spread]


def grouped_bars(
    long: pd.DataFrame, metric_title: str, slice_title: str, order: list[str]
) -> alt.Chart | None:
    """One row of bars per slice value (error type), one bar per model, labels in full; the
    x axis starts near the smallest value (value_domain) rather than at 0, and says so."""
    if long.empty:
        return None
    models = [m for m in order if m in set(long["label"])]
    dom = value_domain(long["value"])
    zero = dom is not None and dom[0] <= 0
    x_title = metric_title if zero or dom is None else f"{metric_title} (axis not from 0)"
    scale = alt.Scale(domain=dom, zero=zero, nice=False) if dom else alt.Scale()
    n_rows = len(models) * long["slice_value"].nunique()
    return (
        alt.Chart(long)
        .mark_bar(clip=True)
        .encode(
            y=alt.Y(
                "slice_value:N",
                title=slice_title,
                axis=alt.Axis(labelLimit=0, labelFontSize=12, labelPadding=6),
            ),
            yOffset=alt.YOffset("label:N", sort=models),
            x=alt.X("value:Q", title=x_title, scale=scale),
            color=alt.Color(
                "label:N",
                title="model",
                sort=models,
                legend=alt.Legend(labelLimit=0, orient="bottom", columns=2),
            ),
            tooltip=[
                alt.Tooltip("label:N", title="model"),
                alt.Tooltip("slice_value:N", title=slice_title),
                alt.Tooltip("value:Q", title=metric_title, format=".3f"),
            ],
        )
        .properties(height=_height(n_rows, per=22, minimum=240), width="container")
    )


def size_vs_score(rows: pd.DataFrame, metric_title: str) -> alt.Chart | None:
    d = rows[rows["params_value"].notna() & rows["value"].notna()].copy()
    if d.empty:
        return None
    d["size_b"] = d["params_value"].astype(float) / 1e9
    d["from"] = origin_words(d["origin_code"])
    return (
        alt.Chart(d)
        .mark_circle(size=90, opacity=0.8)
        .encode(
            x=alt.X(
                "size_b:Q", title="parameters (billions, log scale)", scale=alt.Scale(type="log")
            ),
            y=alt.Y("value:Q", title=metric_title, scale=alt.Scale(zero=False)),
            color=alt.Color("kind:N", title="kind"),
            shape=alt.Shape("from:N", title="from"),
            tooltip=[
                alt.Tooltip("label:N", title="model"),
                alt.Tooltip("size_b:Q", title="params (B)", format=".3g"),
                alt.Tooltip("params_from:N", title="size"),
                alt.Tooltip("value:Q", title=metric_title, format=".3f"),
            ],
        )
        .properties(height=360, width="container")
    )


def explanation_types(dist: pd.DataFrame) -> alt.Chart | None:
    """Share of each explanation type per model (as in SummEdits Figure 2, computed from the
    annotations on the board); types named in words ('no explanation')."""
    if dist.empty:
        return None
    types = [t for t in TYPE_ORDER if t in set(dist["explanation_type"])]
    types += sorted(set(dist["explanation_type"]) - set(types))
    words = [str(t).replace("_", " ") for t in types]
    colors = TYPE_COLORS[: len(types)] + ["#636363"] * max(0, len(types) - len(TYPE_COLORS))
    d = dist.copy()
    d["order"] = d["explanation_type"].map({t: i for i, t in enumerate(types)})
    d["type"] = d["explanation_type"].map(dict(zip(types, words, strict=True)))
    models = (
        d[d["explanation_type"] == "correct"]
        .sort_values("share", ascending=False)["model"]
        .tolist()
    )
    models += [m for m in d["model"].unique() if m not in models]
    return (
        alt.Chart(d)
        .mark_bar()
        .encode(
            y=alt.Y("model:N", sort=models, title=None, axis=alt.Axis(labelLimit=220)),
            x=alt.X(
                "share:Q",
                title="share of explanations",
                axis=alt.Axis(format="%"),
                stack="normalize",
            ),
            color=alt.Color(
                "type:N",
                title="explanation type",
                sort=words,
                scale=alt.Scale(domain=words, range=colors),
                legend=alt.Legend(orient="bottom"),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("model:N"),
                alt.Tooltip("type:N", title="type"),
                alt.Tooltip("n:Q", title="explanations", format=","),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
        .properties(height=_height(len(models)), width="container")
    )


def balance(by: pd.DataFrame) -> alt.Chart | None:
    """Consistent / inconsistent counts per domain (stacked)."""
    if by.empty:
        return None
    long = by.melt(
        id_vars=["domain"],
        value_vars=["consistent", "inconsistent"],
        var_name="label",
        value_name="n",
    )
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y("domain:N", title=None, sort="-x"),
            x=alt.X("n:Q", title="samples", stack="zero"),
            color=alt.Color(
                "label:N",
                scale=alt.Scale(
                    domain=["consistent", "inconsistent"], range=["#2ca02c", "#d62728"]
                ),
                legend=alt.Legend(orient="bottom", title=None),
            ),
            tooltip=["domain:N", "label:N", "n:Q"],
        )
        .properties(height=_height(by["domain"].nunique(), per=34), width="container")
    )


def counts_bar(counts: pd.DataFrame, what: str) -> alt.Chart | None:
    """Horizontal bars of (name, n)."""
    if counts.empty:
        return None
    return (
        alt.Chart(counts)
        .mark_bar(color="#4c78a8")
        .encode(
            y=alt.Y("name:N", sort="-x", title=None, axis=alt.Axis(labelLimit=0)),
            x=alt.X("n:Q", title=what),
            tooltip=[alt.Tooltip("name:N", title="type"), alt.Tooltip("n:Q")],
        )
        .properties(height=_height(len(counts)), width="container")
    )


SIGNIFICANT = "difference significant (95%)"
NOT_SIGNIFICANT = "not significant"


def differences(sl: pd.DataFrame, title: str) -> alt.Chart | None:
    """A - B per slice with its paired-bootstrap 95% CI (red where the CI leaves out 0, said
    in words in the legend), and a zero line; p-values written by the formatter."""
    if sl.empty:
        return None
    d = sl.copy()
    d["p"] = [F.p_value(p, missing="—") for p in d["p_value"]]
    sig = (d["ci_low"] > 0) | (d["ci_high"] < 0)
    d["significance"] = [SIGNIFICANT if s else NOT_SIGNIFICANT for s in sig]
    order = d["slice"].tolist()
    base = alt.Chart(d).encode(
        y=alt.Y("slice:N", sort=order, title=None, axis=alt.Axis(labelLimit=280)),
        color=alt.Color(
            "significance:N",
            title=None,
            scale=alt.Scale(domain=[SIGNIFICANT, NOT_SIGNIFICANT], range=["#d62728", "#7f7f7f"]),
            legend=alt.Legend(orient="bottom"),
        ),
        tooltip=[
            alt.Tooltip("slice:N"),
            alt.Tooltip("n:Q"),
            alt.Tooltip("difference:Q", title=title, format="+.3f"),
            alt.Tooltip("ci_low:Q", title="95% CI low", format="+.3f"),
            alt.Tooltip("ci_high:Q", title="95% CI high", format="+.3f"),
            alt.Tooltip("p:N", title="p"),
        ],
    )
    rule = base.mark_rule(strokeWidth=2).encode(x=alt.X("ci_low:Q", title=title), x2="ci_high:Q")
    point = base.mark_point(filled=True, size=60).encode(x="difference:Q")
    zero = (
        alt.Chart(pd.DataFrame({"x": [0.0]}))
        .mark_rule(strokeDash=[4, 4], color="#444")
        .encode(x="x:Q")
    )
    return (zero + rule + point).properties(height=_height(len(d)), width="container")
