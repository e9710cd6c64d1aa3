"""Samples explorer: filter the list, and read one sample beside it (its edit, its document and
every run's prediction), stepping through the list with Previous / Next (keys k / j). For
correlation benchmarks, the list can be ordered by where a metric departs from people."""

import streamlit as st

from evaluator.core import formatting as F
from explorer import queries as Q
from explorer import samples as X
from explorer import sections, ui, widgets
from explorer.words import level_label

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
spec = ui.spec_of(bench)
correlation = spec is not None and spec.task == "correlation"
if correlation:
    # a link to 'the samples this run gets wrong' on a benchmark scored on scores opens where
    # that run's ranking departs most from people's
    moved = X.wrong_as_gap({k: st.query_params[k] for k in st.query_params})
    if moved is not None:
        del st.query_params["wrong"]
        st.query_params["run"] = moved["run"]
        st.query_params["far"] = moved["far"]
s.ensure_sample_stats(bench)  # what every run says, without loading every run's rows
units = Q.sample_units(con, bench)
unit = ui.url_selectbox("Level", units, "unit", PAGE, container=c[1], format_func=level_label)
facets = Q.sample_facets(con, bench, unit)
splits = ui.url_multiselect(
    "Split",
    facets["splits"],
    "split",
    PAGE,
    default=X.default_splits(facets["splits"]),
    container=c[2],
    placeholder="all splits",
    help="Runs predict the test split; dev samples have no predictions.",
)
domains = ui.url_multiselect(
    "Domain", facets["domains"], "domain", PAGE, container=c[3], placeholder="all domains"
)
gold = "any"
if not correlation:
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
metric_run, far = None, False
wrong_by, most_wrong, sort = None, False, "id"
if correlation:
    metric_run, far = sections.metric_run_picker(X.score_runs(con, bench), PAGE, c[0], c[1])
else:
    wrong_by, most_wrong = sections.wrong_filters(X.run_choices(con, bench, unit), PAGE, c)
    sort = ui.url_selectbox(
        "Order",
        X.sort_options(most_wrong),
        "sort",
        PAGE,
        container=c[2],
        format_func=X.SORT_LABELS.__getitem__,
        help="With 'samples most runs get wrong' on, the list is hardest first (or by domain).",
    )

if wrong_by:
    s.ensure_labels(bench, [wrong_by], predictions=False)
if metric_run:
    s.ensure_labels(bench, [metric_run])
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
    explained=s.explanation_hits(bench, text),
    wrong_by=wrong_by,
    most_wrong=0.5 if most_wrong else None,
    sort=sort,
)
total = Q.count_samples(con, f)
gaps = None
if metric_run:
    gaps = sections.disagreement_rows(con, f, total, metric_run, facets["splits"])
    if far:
        gaps = X.wide_gaps(gaps)
        st.caption(
            X.WRONG_ON_SCORES.format(
                title=spec.title if spec else bench, units=X.unit_plural(unit), gap=X.WIDE_GAP
            )
        )
    total = len(gaps)
pages = X.num_pages(total)
if most_wrong and total:
    st.caption(X.wrong_breakdown(Q.samples_page(con, f, min(total, 20_000), 0), unit))
asked, why = X.page_request(ui.url_value("page"), pages)
if asked is not None:
    st.query_params["page"] = str(asked)
    st.info(why, icon="🔗")

left, right = st.columns([5, 7], gap="medium")
with left:
    head = st.columns([3, 4], vertical_alignment="center")
    what = (unit if total == 1 else X.unit_plural(unit)) + (
        ", widest gap first" if gaps is not None else ""
    )
    head[0].markdown(f"**{F.count(total)}** matching {what}")
    with head[1]:
        page_no = ui.url_page_number("page", PAGE, pages, reset_token=(f, metric_run, far))
    start = (page_no - 1) * X.PAGE_SIZE
    if gaps is not None:
        table = X.disagreement_table(gaps.iloc[start : start + X.PAGE_SIZE], unit)
    else:
        table = X.page_table(Q.samples_page(con, f, X.PAGE_SIZE, start), unit)
    # one list widget per open sample: the list selects the open row afresh after each step
    table_key = f"{PAGE}.table.{hash((f, metric_run, far, page_no, ui.url_value('sample')))}"
    current, smp = sections.open_sample(con, bench, table, PAGE, table_key)
    sections.sample_results(table, PAGE, table_key, unit, current)
    sections.sample_pager(list(table["sample"]), current, page_no, pages, PAGE)

with right:
    if smp is None:
        st.caption(
            "Click a row of the list, or press Next (j), to read a sample here: its document, "
            "its edit, and every run's prediction."
        )
    else:
        preds = widgets.sample_detail(con, smp, str(current), bench, unit, units)
        sections.sample_spans(smp, preds)
        sections.sample_evidence(con, s.root, preds, str(current))
