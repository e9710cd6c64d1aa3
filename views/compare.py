"""Compare two runs on the same samples: is the difference real, and where does it come from?"""

import streamlit as st

from evaluator.core import formatting as F
from evaluator.core.vocabulary import metric_label
from explorer import compare as C
from explorer import compare_view as V
from explorer import queries as Q
from explorer import samples as X
from explorer import sections, ui, widgets
from explorer.words import level_label

PAGE = "cmp"
s = ui.store()
con = s.cursor()

ui.header(
    "⚖️ Compare two runs",
    "A paired bootstrap of the metric difference on the samples both "
    "runs scored, McNemar's test on correctness, the difference per slice, and the samples "
    "where they disagree.",
)

names = [b for b in s.benchmarks() if len(Q.runs_frame(con, b)) >= 1]
if not names:
    ui.no_data("No run to compare yet. The demo has four: `python -m evaluator demo`.")
    st.stop()
c = st.columns([2, 1, 2])
linked = ui.url_value("benchmark")
bench = widgets.benchmark_picker(names, PAGE, container=c[0])
if linked and linked != bench:
    # the reader picked another benchmark (a followed link opens on its own): the runs chosen
    # for the previous one are dropped, not reported as a stale link
    for k in ("a", "b"):
        ui.set_url_value(k, None)
        st.session_state.pop(f"{PAGE}.{k}", None)
spec = ui.spec_of(bench)
if spec is None:
    st.error(f"{bench} is not a registered benchmark.")
    st.stop()
runs = Q.runs_frame(con, bench)
if len(runs) < 2:
    ui.no_data(f"{spec.title} has a single run; score another to compare.")
    st.stop()
dims = ui.dimensions(str(s.root), s.token(bench) + s.token(""), bench)
units = sorted(set(dims[dims["source"] == "run"]["unit"]), key=lambda u: (u != "summary", u))
unit = ui.url_selectbox(
    "Level", units or ["summary"], "unit", PAGE, container=c[1], format_func=level_label
)
metrics = C.comparable_metrics(spec)
metric = ui.url_selectbox(
    "Metric",
    metrics,
    "metric",
    PAGE,
    container=c[2],
    default=spec.primary_metric if spec.primary_metric in metrics else None,
    format_func=metric_label,
)

labels = dict(zip(runs["run_id"], X.run_labels(runs), strict=True))
ids = list(labels)
gone = [g for g in (ui.missing_from_url("a", ids), ui.missing_from_url("b", ids)) if g]
if gone:
    st.error(
        "This link compares "
        + " and ".join(f"run **{ui.md_escape(g[:120])}**" for g in gone)
        + f", which {'is' if len(gone) == 1 else 'are'} no longer on {spec.title} (deleted, "
        "hidden or never here). No other run is put in its place.",
        icon="🔗",
    )
    st.page_link(
        ui.PAGES["compare"],
        label=f"Compare two other runs of {spec.title}",
        icon="⚖️",
        query_params={"benchmark": bench},
    )
    st.stop()
pair = st.columns(2)
run_a = ui.url_selectbox(
    "Run A", ids, "a", PAGE, default=ids[-1], container=pair[0], format_func=labels.__getitem__
)
run_b = ui.url_selectbox(
    "Run B",
    ids,
    "b",
    PAGE,
    default=next(i for i in reversed(ids) if i != run_a),
    container=pair[1],
    format_func=labels.__getitem__,
)
if run_a == run_b:
    st.info("Pick two different runs.")
    st.stop()

versions = runs.set_index("run_id")["benchmark_version"]
note = V.version_note(spec.title, versions[run_a], versions[run_b])
if note:
    st.warning(note, icon="⚠️")

res = ui.comparison(str(s.root), s.token(bench), bench, unit, run_a, run_b, metric)
mlabel = metric_label(metric)
for note in res.notes:
    st.caption(note)
if res.diff is None:
    st.stop()

m = st.columns(4)
m[0].metric(f"A: {mlabel}", F.number(res.value_a))
m[1].metric(f"B: {mlabel}", F.number(res.value_b))
m[2].metric(
    "A − B",
    F.signed(res.diff.difference),
    help=f"Paired bootstrap over {F.plural(res.n, 'sample')}, "
    f"{F.plural(res.diff.resamples, 'resample')} ({V.better(metric)} is better)",
)
m[3].metric(
    "p-value (paired bootstrap)",
    F.p_value(res.diff.p_value, missing=F.MISSING),
    help="Twice the smaller share of resamples on either side of 0.",
)
st.markdown(V.verdict(res.diff.ci_low, res.diff.ci_high, res.n))
if res.mcnemar is not None:
    mc = res.mcnemar
    p = F.p_value(mc.p_value, missing=F.MISSING)
    st.markdown(
        f"**McNemar (exact)** on correctness: A right and B wrong on **{F.count(mc.a_only)}** "
        f"{'sample' if mc.a_only == 1 else 'samples'}, B right and A wrong on "
        f"**{F.count(mc.b_only)}**; p {p if p.startswith('<') else '= ' + p}."
    )

sections.comparison_slices(res.slices, mlabel)
sections.disagreements(
    res.disagreements,
    bench,
    unit,
    PAGE,
    spec.task == "correlation",
    ranks=res.rank_gaps,
    names=(labels[run_a], labels[run_b]),
)
