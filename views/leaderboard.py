"""Leaderboard: who is best on a benchmark slice, and is the lead real?"""

import streamlit as st

from evaluator.store import export
from explorer import charts, ui
from explorer import leaderboard as L
from explorer import queries as Q

PAGE = "lb"
s = ui.store()
con = s.cursor()

ui.header(
    "🏆 Leaderboard",
    "FactBoard's own runs beside published numbers, each marked with where "
    "it comes from. Every number of a run carries its 95% bootstrap CI and n.",
)

ingested = s.benchmarks()
with_runs, with_reported = ui.board_benchmarks(str(s.root), s.token())
names = sorted(
    set(ingested) | set(with_runs) | set(with_reported),
    key=lambda b: (b not in ingested, b == "demo", b),
)
if not names:
    ui.no_data(
        "No benchmark and no result yet. Run `python -m evaluator demo` for the built-in "
        "demo, or ingest a benchmark: `python -m evaluator ingest NAME --from PATH`."
    )
    st.stop()


def _bench_label(b: str) -> str:
    spec = ui.spec_of(b)
    title = spec.title if spec else b
    return title if b in ingested else f"{title} · published numbers only"


top = st.columns([2.2, 1, 1.4, 1.6, 1.4])
bench = ui.url_selectbox(
    "Benchmark",
    names,
    "benchmark",
    PAGE,
    default=ui.sticky_benchmark(names, names[0]),
    format_func=_bench_label,
    container=top[0],
)
ui.remember_benchmark(bench)
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
opts = L.options(dims, unit, None)
kind = ui.url_selectbox(
    "View", opts.slice_kinds, "slice", PAGE, container=top[2], format_func=L.slice_label
)
opts = L.options(dims, unit, kind, spec.primary_metric if spec else None)
values = opts.slice_values.get(kind, [""])
value = ""
if kind != "overall":
    value = ui.url_selectbox(
        L.slice_label(kind).replace("By ", "").capitalize(), values, "value", PAGE, container=top[3]
    )
else:
    top[3].text_input("Slice", "all samples", disabled=True)
metric_keys = [m if g is None else f"{m}@{g}" for m, g in opts.metrics]
if not metric_keys:
    ui.no_data("No metric for this view.")
    st.stop()
metric_key = ui.url_selectbox(
    "Metric",
    metric_keys,
    "metric",
    PAGE,
    container=top[4],
    format_func=lambda k: L.metric_label(*k.split("@", 1)),
)
metric, _, grader = metric_key.partition("@")
grader = grader or None

if meta.get("synthetic") or (spec is not None and spec.synthetic):
    st.warning(
        "**Synthetic demo data.** Templated text written for FactBoard so that a fresh "
        "install shows a working board; its numbers say nothing about real detectors. "
        "Ingest a real benchmark to compare models (see the Benchmarks page).",
        icon="🧪",
    )
elif bench not in ingested:
    st.info(
        f"**{_bench_label(bench)}.** These numbers are transcribed from papers; FactBoard "
        "cannot recompute or rank them. "
        + (
            f"Ingest it with `python -m evaluator ingest {bench} --from PATH` to score runs."
            if spec
            else ""
        ),
        icon="📄",
    )

b = ui.board(str(s.root), token, bench, unit, kind, value, metric, grader)
rows = b.rows

# filters ---------------------------------------------------------------------------------
f = st.columns([2, 2, 2, 1.3, 1.2])
search = ui.url_text("Search model", "q", PAGE, container=f[0], placeholder="name contains…")
kinds_present = [k for k in L.KIND_LABELS if k in set(rows["kind_code"])]
kinds = ui.url_multiselect(
    "Kind",
    kinds_present,
    "kind",
    PAGE,
    container=f[1],
    format_func=lambda k: L.KIND_LABELS.get(k, k),
    placeholder="all kinds",
)
origins_present = [o for o in L.ORIGIN_BADGES if o in set(rows["origin_code"])]
origins = ui.url_multiselect(
    "Origin",
    origins_present,
    "origin",
    PAGE,
    container=f[2],
    format_func=lambda o: L.ORIGIN_BADGES.get(o, o),
    placeholder="all origins",
    help=L.ORIGIN_HELP,
)
sort = ui.url_selectbox(
    "Sort by",
    ["value", "rank", "model", "n"],
    "sort",
    PAGE,
    container=f[3],
    format_func=lambda x: {"value": "score"}.get(x, x),
)
optional = [*L.OPTIONAL_COLUMNS, *b.other_metrics]
has_reported = bool((rows["origin_code"] == "reported").any())
default_cols = (["split", "config", "source"] if has_reported else ["threshold"]) + [
    m for m in b.other_metrics if m in ("m:accuracy", "m:roc_auc", "m:recall")
][:2]
with f[4].popover("Columns", width="stretch"):
    extra = ui.url_multiselect(
        "Extra columns",
        optional,
        "cols",
        PAGE,
        default=default_cols,
        format_func=lambda c: (
            L.metric_label(c[2:]) if c.startswith("m:") else L.COLUMN_TITLES.get(c, c)
        ),
    )

shown = rows
if search:
    shown = shown[shown["model"].str.lower().str.contains(search.lower(), regex=False)]
if kinds:
    shown = shown[shown["kind_code"].isin(kinds)]
if origins:
    shown = shown[shown["origin_code"].isin(origins)]
lower = metric in {"fpr", "fnr", "runtime_seconds"}
if sort == "rank":
    shown = shown.sort_values(["rank", "value"], ascending=[True, lower], na_position="last")
elif sort == "model":
    shown = shown.sort_values("model", key=lambda c: c.str.lower())
elif sort == "n":
    shown = shown.sort_values("n", ascending=False, na_position="last")

mlabel = L.metric_label(metric, grader)
table = L.display_table(shown, extra, mlabel)

st.caption(b.method)
if b.notes:
    st.warning("\n".join(f"- {ui.md_escape(n)}" for n in b.notes), icon="⚠️")
n_runs = int((shown["origin_code"] != "reported").sum())
st.markdown(
    f"**{len(shown)}** rows shown ({n_runs} FactBoard runs, {len(shown) - n_runs} "
    f"published) of {len(rows)} · {L.slice_label(kind)}"
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

stem = L.file_stem(bench, unit, kind, value, metric)
with st.container(horizontal=True, vertical_alignment="center"):
    # files are made when clicked (callables), from exactly this table
    st.download_button(
        "⬇️ CSV",
        lambda: export.to_csv(table),
        f"{stem}.csv",
        "text/csv",
        on_click="ignore",
        key=f"{PAGE}.csv",
    )
    st.download_button(
        "⬇️ JSON",
        lambda: export.to_json(table),
        f"{stem}.json",
        "application/json",
        on_click="ignore",
        key=f"{PAGE}.json",
    )
    st.download_button(
        "⬇️ LaTeX",
        lambda: export.to_latex(table),
        f"{stem}.tex",
        "application/x-tex",
        on_click="ignore",
        key=f"{PAGE}.tex",
    )
    st.caption("Downloads hold exactly the rows and columns shown above.")

# drill-down ------------------------------------------------------------------------------
run_rows = shown[shown["origin_code"] != "reported"]
st.subheader("Inspect a run")
if run_rows.empty:
    st.caption(
        "No FactBoard run in this view: published numbers have no per-sample predictions "
        "to inspect."
    )
else:
    pick = ui.url_selectbox(
        "Run",
        ["", *run_rows["run_id"]],
        "run",
        PAGE,
        format_func=lambda r: (
            "choose a run…"
            if not r
            else dict(zip(run_rows["run_id"], run_rows["label"], strict=True))[r]
        ),
    )
    if pick:
        r = run_rows[run_rows["run_id"] == pick].iloc[0]
        info = Q.run_row(con, pick) or {}
        c1, c2 = st.columns([3, 2])
        with c1:
            st.text(f"{r['model']}  ·  {r['kind']}  ·  {r['origin']}")
            ci = "" if r["ci_low"] != r["ci_low"] else f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
            st.text(
                f"{mlabel} = {r['value']:.3f}{ci}, n = {r['n']}  ·  threshold: "
                f"{r['threshold'] or 'n/a'}  ·  run {pick}"
            )
            for label, field in (
                ("About", "model_description"),
                ("URL", "model_url"),
                ("License", "model_license"),
            ):
                if info.get(field):
                    st.text(f"{label}: {info[field]}")
            if r["note"]:
                st.caption(ui.md_escape(r["note"]))
        with c2:
            params = {
                "benchmark": bench,
                "unit": unit,
                "wrong": pick,
                "split": str(r["split"]).split("+"),
            }
            if kind in ("domain", "dataset"):
                params["domain"] = value
            elif kind in ("edit_type", "error_type"):
                params["etype"] = value
            elif kind == "topic_type":
                params["topic"] = value
            elif kind == "dataset+topic_type" and "+" in value:
                params["domain"], params["topic"] = value.split("+", 1)
            where = f" in {value}" if value else ""
            st.page_link(
                ui.PAGES["samples"],
                label=f"Samples this run gets wrong{where}",
                icon="🔎",
                query_params=params,
            )
            st.page_link(
                ui.PAGES["compare"],
                label="Compare with another run",
                icon="⚖️",
                query_params={"benchmark": bench, "unit": unit, "a": pick},
            )

# charts ----------------------------------------------------------------------------------
st.subheader("Charts")
top_rows = shown.head(25)
slice_kinds = set(dims[dims["unit"] == unit]["slice_kind"])
# the heatmap spreads the current view's slices; for Overall, the domains
dom_kind = (
    kind
    if kind != "overall"
    else next((k for k in ("domain", "dataset", "dataset+topic_type") if k in slice_kinds), None)
)
err_kind = next((k for k in ("edit_type", "error_type") if k in slice_kinds), None)
CHARTS = ["CI forest plot", "Model × slice", "Error types", "Size vs score"]
tabs, active = ui.url_tabs(CHARTS, "chart", PAGE)
if active == CHARTS[0]:
    with tabs[0]:
        ch = charts.forest(top_rows, mlabel)
        if ch is None:
            st.caption("Nothing to plot.")
        else:
            st.altair_chart(ch, width="stretch")
            if len(shown) > len(top_rows):
                st.caption(f"The first {len(top_rows)} rows of the table.")
elif active == CHARTS[1]:
    with tabs[1]:
        if dom_kind is None:
            st.caption(f"{bench} has no per-domain numbers at this level.")
            dom_kind = None
        else:
            long = ui.slice_long(str(s.root), token, bench, unit, metric, dom_kind, top_rows)
            ch = charts.heatmap(
                long, mlabel, dom_kind.replace("_", " "), top_rows["label"].tolist()
            )
            if ch is None:
                st.caption(f"No {mlabel} per {dom_kind} for the rows shown.")
            else:
                st.altair_chart(ch, width="stretch")
elif active == CHARTS[2]:
    with tabs[2]:
        if err_kind is None:
            st.caption(f"{bench} has no per-error-type numbers at this level.")
        else:
            err_metric = metric
            head = top_rows.head(8)
            long = ui.slice_long(str(s.root), token, bench, unit, metric, err_kind, head)
            if long.empty:  # TofuEval error types hold inconsistent sentences only: recall
                err_metric = "recall"
                long = ui.slice_long(str(s.root), token, bench, unit, "recall", err_kind, head)
            ch = charts.grouped_bars(
                long, L.metric_label(err_metric), err_kind.replace("_", " "), head["label"].tolist()
            )
            if ch is None:
                st.caption("No per-error-type numbers for the rows shown.")
            else:
                st.altair_chart(ch, width="stretch")
                st.caption(
                    f"{L.metric_label(err_metric)} per {err_kind.replace('_', ' ')}, first 8 "
                    "rows of the table."
                    + (
                        " SummEdits edit-type slices hold the consistent samples plus the "
                        "inconsistent ones with that edit (paper Table 10)."
                        if err_kind == "edit_type"
                        else ""
                    )
                )
else:
    with tabs[3]:
        ch = charts.size_vs_score(shown, mlabel)
        if ch is None:
            st.caption(
                "No row states a parameter count (run metadata `model.params`, or a "
                "size such as 7B in the model name)."
            )
        else:
            st.altair_chart(ch, width="stretch")
            st.caption("Sizes as the run states them, else read from the model name (see tooltip).")

# citation ----------------------------------------------------------------------------------
citation = meta.get("citation") or (spec.citation if spec else None)
if citation:
    with st.expander("Cite this benchmark (BibTeX)"):
        st.code(citation, language="bibtex")
