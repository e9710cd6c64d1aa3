"""Leaderboard: who is best on a benchmark slice, and is the lead real?"""

import dataclasses
from functools import partial

import pandas as pd
import streamlit as st

from evaluator.core import formatting as F
from evaluator.core.vocabulary import lower_is_better as lower
from evaluator.core.vocabulary import metric_label, slice_definition
from evaluator.core.vocabulary import slice_label as slice_title
from explorer import board_sections, ui, widgets
from explorer import leaderboard as L
from explorer.words import level_label

PAGE = "lb"
s = ui.store()

ui.header(
    "🏆 Leaderboard",
    "FactBoard's own runs beside published numbers, each marked with where "
    "it comes from. Every number of a run carries its 95% bootstrap CI and n.",
)

ui.problems_notice(s)
ingested, names = ui.board_names_or_stop(s)


# what repeats on every visit is kept per data version (the store's token) and view


@st.cache_data(show_spinner=False, max_entries=256)
def options_of(
    root: str, token: str, bench: str, unit: str | None, kind: str | None, primary: str | None
) -> L.Options:
    """The pickers' options (L.options) for this level and view."""
    return L.options(ui.dimensions(root, token, bench), unit, kind, primary)


@st.cache_data(show_spinner=False, max_entries=64)
def paper_of(root: str, token: str, view: L.BoardQuery) -> pd.DataFrame:
    """The paper's own per-slice table of the view (L.published_table), often empty."""
    return L.published_table(ui.store().cursor(), view)


@st.cache_data(show_spinner=False, max_entries=64)
def table_of(
    root: str, token: str, view: L.BoardQuery, look: L.Look, mlabel: str, every: bool
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The board as shown (L.display_table) and as the grid gets it (L.screen_table: the
    screen's table and its columns made text), for this view and look (its row set too):
    every row, or the first ones (L.first_rows)."""
    metrics = any(c.startswith("m:") for c in look.columns)
    b = ui.board(root, token, *dataclasses.astuple(view), metrics=metrics)
    shown = L.filter_rows(L.rows_of(b.rows, look.rows), view.metric, look)
    table = L.display_table(L.first_rows(shown, every), look.columns, mlabel, board=b)
    return table, *L.screen_table(table)


def _bench_label(b: str) -> str:
    title = widgets.benchmark_title(b)
    return title if b in ingested else f"{title} · published numbers only"


top = st.columns([2.2, 1, 1.4, 1.6, 1.4])
bench = widgets.benchmark_picker(names, PAGE, format_func=_bench_label, container=top[0])
spec = ui.spec_of(bench)
meta = s.meta.get(bench, {})
token = s.token(bench) + s.token("")
dims = ui.dimensions(str(s.root), token, bench)
root = str(s.root)
opts = options_of(root, token, bench, None, None, None)
if not opts.units:
    ui.no_data(
        f"No run and no published number for {widgets.benchmark_title(bench)} yet: "
        "submit predictions on the Submit page to put the first one here."
    )
    st.stop()
unit = ui.url_selectbox(
    "Level",
    opts.units,
    "unit",
    PAGE,
    container=top[1],
    format_func=level_label,
    help="TofuEval is annotated per sentence; a summary is inconsistent if any sentence is.",
)
kinds = options_of(root, token, bench, unit, None, None).slice_kinds
kind = ui.url_selectbox(
    "View",
    kinds,
    "slice",
    PAGE,
    container=top[2],
    format_func=slice_title,
    help=" ".join(f"{slice_title(k)}: {slice_definition(k)}" for k in kinds),
)
opts = options_of(root, token, bench, unit, kind, spec.primary_metric if spec else None)
value = ""
if kind != "overall":
    noun = L.slice_noun(kind).capitalize()
    values = opts.slice_values.get(kind, [""])
    value = ui.url_selectbox(
        noun,
        values,
        "value",
        PAGE,
        default=L.default_slice_value(dims, unit, kind, values),
        container=top[3],
    )
keys = L.metric_keys(opts)
if not keys:
    ui.no_data("No metric for this view.")
    st.stop()
metric, grader = L.parse_metric_key(widgets.metric_picker(keys, PAGE, unit, kind, top[4]))

board_sections.board_banner(
    bench, spec, meta, _bench_label(bench) if bench not in ingested else None
)
view = L.BoardQuery(bench, unit, kind, value, metric, grader)
b = ui.board(root, token, bench, unit, kind, value, metric, grader)
rows = b.rows

narrowed = any(ui.url_value(k) for k in ("q", "kind", "origin", "verified"))
narrowed = narrowed or ui.url_value("rows") in set(L.ROW_SETS) - {"all"}
look = board_sections.board_filters(b, PAGE, narrowed)
shown = L.filter_rows(L.rows_of(rows, look.rows), metric, look)
mlabel = metric_label(metric, grader)

st.caption(b.method)
if b.notes:
    st.warning("\n".join(f"- {ui.md_escape(n)}" for n in b.notes), icon="⚠️")
count = st.empty()
every = board_sections.every_row(len(shown), PAGE)
table, screen, as_text = table_of(root, token, view, look, mlabel, every)
count.markdown(
    L.count_line(shown, rows, len(table))
    + f" · {slice_title(kind)}"
    + (f": {ui.md_escape(value)}" if value else "")
)
board_sections.board_table(
    table, L.column_help(table, metric, grader, kind, value, b.method), (screen, as_text)
)
board_sections.board_downloads(
    partial(L.display_table, shown, look.columns, mlabel, board=b, download=True),
    L.file_stem(bench, unit, kind, value, metric),
    PAGE,
    L.eee_download(shown, s.root, bench if bench in ingested else None),
)

paper = paper_of(root, token, view)
if not paper.empty:
    with st.expander(
        f"The paper's own table: {mlabel} per dataset × topic type (it gives no Overall)",
        expanded=bool((rows["origin_code"] == "reported").sum() == 0),
    ):
        shown_paper, text_cols = L.screen_table(paper)
        st.dataframe(
            shown_paper,
            hide_index=True,
            width="stretch",
            column_config={
                **{
                    c: st.column_config.NumberColumn(format=f"%.{F.DECIMALS}f")
                    for c in paper.columns[2:]
                },
                **{c: st.column_config.TextColumn(alignment="right") for c in text_cols},
            },
        )


@st.fragment
def pairwise(b: L.Board, rows: pd.DataFrame, lower_better: bool) -> None:
    """The matrix, made and drawn when opened (a second grid costs the browser a render even
    folded away), in a fragment: opening it reruns this alone."""
    box = st.expander(
        f"Pairwise significance of the {len(b.pairwise)} best runs (paired bootstrap)",
        key=f"{PAGE}.pairs",
        on_change="rerun",
    )
    if box.open:
        in_pairs = rows[rows["run_id"].isin(b.pairwise.index)]
        labels = dict(zip(in_pairs["run_id"].tolist(), in_pairs["label"].tolist(), strict=True))
        pairs = L.pairwise_table(b, labels, lower_better)
        with box:
            st.caption(
                "Row against column: ▲ the row's run is significantly better (95%), ▼ worse, "
                "≈ not distinguishable; the number is the two-sided paired-bootstrap p-value "
                "on the same samples."
            )
            st.dataframe(pairs, width="stretch")


if not b.pairwise.empty:
    pairwise(b, rows, lower(metric))

board_sections.run_card(s.cursor(), shown, PAGE, view, mlabel)
at_level = set(dims[dims["unit"] == unit]["slice_kind"])
board_sections.board_charts(shown, PAGE, view, mlabel, at_level, (str(s.root), token))


@st.fragment
def cite(citation: str) -> None:
    """The BibTeX, drawn when opened (a code block costs the browser ~0.5 s to load), in a
    fragment: opening it reruns this alone."""
    box = st.expander("Cite this benchmark (BibTeX)", key=f"{PAGE}.cite", on_change="rerun")
    if box.open:
        with box:
            st.code(citation, language="bibtex")


citation = meta.get("citation") or (spec.citation if spec else None)
if citation:
    cite(citation)
