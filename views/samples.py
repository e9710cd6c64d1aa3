"""Samples explorer: filter, page through, and open one sample with every run's prediction."""

import streamlit as st

from explorer import queries as Q
from explorer import samples as X
from explorer import sections, ui, widgets

PAGE = "ex"
s = ui.store()
con = s.cursor()

ui.header(
    "🔎 Samples",
    "Browse a benchmark's samples, find the ones a model gets wrong, and "
    "read every run's verdict and explanation on one sample.",
)

names = s.benchmarks()
if not names:
    ui.no_data(
        "No benchmark is ingested yet. Run `python -m evaluator demo`, or ingest one: "
        "`python -m evaluator ingest NAME --from PATH`."
    )
    st.stop()

c = st.columns([2, 1, 1.4, 2.2, 1.4])
bench = widgets.benchmark_picker(names, PAGE, container=c[0])
s.ensure_labels(bench)
units = Q.sample_units(con, bench)
unit = ui.url_selectbox(
    "Level",
    units,
    "unit",
    PAGE,
    container=c[1],
    format_func=X.unit_plural,
)
facets = Q.sample_facets(con, bench, unit)
splits = ui.url_multiselect(
    "Split", facets["splits"], "split", PAGE, container=c[2], placeholder="all splits"
)
domains = ui.url_multiselect(
    "Domain", facets["domains"], "domain", PAGE, container=c[3], placeholder="all domains"
)
gold = ui.url_selectbox("Gold label", list(X.LABEL_FILTER), "label", PAGE, container=c[4])

c = st.columns([2.4, 1.6, 3])
etypes = []
if facets["error_types"]:
    etypes = ui.url_multiselect(
        "Error / edit type",
        facets["error_types"],
        "etype",
        PAGE,
        container=c[0],
        placeholder="any type",
    )
topics = []
if facets["topic_types"]:
    topics = ui.url_multiselect(
        "Topic type", facets["topic_types"], "topic", PAGE, container=c[1], placeholder="any topic"
    )
text = ui.url_text(
    "Search text",
    "q",
    PAGE,
    container=c[2],
    placeholder="in document, summary, reference or model explanations",
)

c = st.columns([3, 2, 1.3])
wrong_by, most_wrong = sections.wrong_filters(X.run_choices(con, bench, unit), PAGE, c)
sort = ui.url_selectbox(
    "Order",
    list(Q.SORTS),
    "sort",
    PAGE,
    container=c[2],
    format_func=X.SORT_LABELS.__getitem__,
    help="With 'samples most runs get wrong' on, sample-id order becomes hardest first.",
)
if most_wrong and sort == "id":
    sort = "most_wrong"

f = Q.SampleFilter(
    benchmark=bench,
    unit=unit,
    version=s.version(bench),
    splits=tuple(splits),
    domains=tuple(domains),
    label=X.LABEL_FILTER[gold],
    error_types=tuple(etypes),
    topic_types=tuple(topics),
    text=text,
    wrong_by=wrong_by,
    most_wrong=0.5 if most_wrong else None,
    sort=sort,
)
total = Q.count_samples(con, f)
pages = X.num_pages(total)

head = st.columns([4, 3])
head[0].markdown(f"**{total:,}** matching {X.unit_plural(unit)} · page size {X.PAGE_SIZE}")
with head[1]:
    page_no = ui.url_page_number("page", PAGE, pages, reset_token=f)
page = Q.samples_page(con, f, X.PAGE_SIZE, (page_no - 1) * X.PAGE_SIZE)
table = X.page_table(page)

table_key = f"{PAGE}.table.{hash((f, page_no))}"
current, smp = sections.open_sample(con, bench, table, PAGE, table_key)
tabs, view = ui.url_tabs(
    ["Results", "Sample"], "view", PAGE, default="Sample" if smp is not None else "Results"
)
if view == "Results":
    with tabs[0]:
        sections.sample_results(table, PAGE, table_key)
    st.stop()

with tabs[1]:
    if smp is None:
        st.caption(
            "Click a row of the results, or pick a sample below them, to see its "
            "document, its edit, and every run's prediction."
        )
    else:
        widgets.sample_detail(con, smp, str(current), bench, unit, units)
