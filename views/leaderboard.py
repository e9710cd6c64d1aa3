"""Leaderboard: who is best on a benchmark slice, and is the lead real?"""

import streamlit as st

from evaluator.core.vocabulary import ORIGIN_BADGES, ORIGIN_HELP, kind_label, metric_label
from evaluator.core.vocabulary import slice_label as slice_title
from explorer import leaderboard as L
from explorer import sections, ui, widgets

PAGE = "lb"
s = ui.store()

ui.header(
    "🏆 Leaderboard",
    "FactBoard's own runs beside published numbers, each marked with where "
    "it comes from. Every number of a run carries its 95% bootstrap CI and n.",
)

ingested = s.benchmarks()
names = L.benchmark_order(ingested, *ui.board_benchmarks(str(s.root), s.token()))
if not names:
    ui.no_data(
        "No benchmark and no result yet. Run `python -m evaluator demo` for the built-in "
        "demo, or ingest a benchmark: `python -m evaluator ingest NAME --from PATH`."
    )
    st.stop()


def _bench_label(b: str) -> str:
    title = widgets.benchmark_title(b)
    return title if b in ingested else f"{title} · published numbers only"


top = st.columns([2.2, 1, 1.4, 1.6, 1.4])
bench = widgets.benchmark_picker(names, PAGE, format_func=_bench_label, container=top[0])
spec = ui.spec_of(bench)
meta = s.meta.get(bench, {})
token = s.token(bench) + s.token("")
dims = ui.dimensions(str(s.root), token, bench)
opts = L.options(dims, None, None)
if not opts.units:
    ui.no_data(
        f"No run and no published number for {bench} yet. Score one with "
        f"`python -m evaluator score FILE --benchmark {bench} --model-name NAME`."
    )
    st.stop()
unit = ui.url_selectbox(
    "Level",
    opts.units,
    "unit",
    PAGE,
    container=top[1],
    format_func=lambda u: f"{u} level",
    help="TofuEval is annotated per sentence; a summary is inconsistent if any sentence is.",
)
kinds = L.options(dims, unit, None).slice_kinds
kind = ui.url_selectbox("View", kinds, "slice", PAGE, container=top[2], format_func=slice_title)
opts = L.options(dims, unit, kind, spec.primary_metric if spec else None)
value = ""
if kind != "overall":
    noun = L.slice_noun(kind).capitalize()
    values = opts.slice_values.get(kind, [""])
    value = ui.url_selectbox(noun, values, "value", PAGE, container=top[3])
else:
    top[3].text_input("Slice", "all samples", disabled=True)
keys = L.metric_keys(opts)
if not keys:
    ui.no_data("No metric for this view.")
    st.stop()
metric, grader = L.parse_metric_key(widgets.metric_picker(keys, PAGE, unit, kind, top[4]))

if meta.get("synthetic") or (spec is not None and spec.synthetic):
    st.warning(
        "**Synthetic demo data.** Templated text written for FactBoard so that a fresh "
        "install shows a working board; its numbers say nothing about real detectors. "
        "Ingest a real benchmark to compare models (see the Benchmarks page).",
        icon="🧪",
    )
elif bench not in ingested:
    how = f"Ingest it with `python -m evaluator ingest {bench} --from PATH` to score runs."
    st.info(
        f"**{_bench_label(bench)}.** These numbers are transcribed from papers; FactBoard "
        "cannot recompute or rank them. " + (how if spec else ""),
        icon="📄",
    )

view = L.BoardQuery(bench, unit, kind, value, metric, grader)
b = ui.board(str(s.root), token, bench, unit, kind, value, metric, grader)
rows = b.rows

f = st.columns([2, 2, 2, 1.3, 1.2])
search = ui.url_text("Search model", "q", PAGE, container=f[0], placeholder="name contains…")
kind_filter = ui.url_multiselect(
    "Kind",
    L.kinds_present(rows),
    "kind",
    PAGE,
    container=f[1],
    format_func=kind_label,
    placeholder="all kinds",
)
origins = ui.url_multiselect(
    "Origin",
    L.origins_present(rows),
    "origin",
    PAGE,
    container=f[2],
    format_func=lambda o: ORIGIN_BADGES.get(o, o),
    placeholder="all origins",
    help=ORIGIN_HELP,
)
sort = ui.url_selectbox(
    "Sort by", list(L.SORTS), "sort", PAGE, container=f[3], format_func=L.SORTS.__getitem__
)
with f[4].popover("Columns", width="stretch"):
    extra = ui.url_multiselect(
        "Extra columns",
        [*L.OPTIONAL_COLUMNS, *b.other_metrics],
        "cols",
        PAGE,
        default=L.default_columns(b),
        format_func=L.column_label,
    )

shown = L.filter_rows(rows, metric, search, kind_filter, origins, sort)
mlabel = metric_label(metric, grader)
table = L.display_table(shown, extra, mlabel)

st.caption(b.method)
if b.notes:
    st.warning("\n".join(f"- {ui.md_escape(n)}" for n in b.notes), icon="⚠️")
n_runs = int((shown["origin_code"] != "reported").sum())
st.markdown(
    f"**{len(shown)}** rows shown ({n_runs} FactBoard runs, {len(shown) - n_runs} "
    f"published) of {len(rows)} · {slice_title(kind)}"
    + (f": {ui.md_escape(value)}" if value else "")
)
number = st.column_config.NumberColumn(format="%.3f")
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    height=min(38 + 35 * max(len(table), 1), 640),
    column_config={
        "Rank": st.column_config.NumberColumn(help=b.method, width="small"),
        "Model": st.column_config.TextColumn(width="medium"),
        "n": st.column_config.NumberColumn(format="%d"),
        "Coverage": st.column_config.TextColumn(help="Which domains the number covers"),
        **{c: number for c in table.columns if table[c].dtype.kind == "f"},
    },
)
widgets.download_buttons(table, L.file_stem(bench, unit, kind, value, metric), PAGE)

sections.run_card(s.cursor(), shown, PAGE, view, mlabel)
at_level = set(dims[dims["unit"] == unit]["slice_kind"])
sections.board_charts(shown, PAGE, view, mlabel, at_level, (str(s.root), token))

citation = meta.get("citation") or (spec.citation if spec else None)
if citation:
    with st.expander("Cite this benchmark (BibTeX)"):
        st.code(citation, language="bibtex")
