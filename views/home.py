"""FactBoard's front page: who is best on each benchmark, and is the lead real?"""

import streamlit as st

from evaluator.core.vocabulary import metric_label
from explorer import front as F
from explorer import leaderboard as L
from explorer import ui, widgets
from explorer.words import level_label

s = ui.store()

ui.header(
    "📋 FactBoard",
    "Factual-consistency detectors for summarization, scored on the same samples. For each "
    "benchmark, the best FactBoard runs with their 95% bootstrap CIs and which of them the "
    "board cannot tell apart from the leader (paired test on the same samples).",
)
ui.problems_notice(s)
ingested, names = ui.board_names_or_stop(s)
if len(names) > 1 and "demo" in names:
    names = [n for n in names if n != "demo"] + ["demo"]
cards = [n for n in names if n in ingested]
published_only = [n for n in names if n not in ingested]


def leaderboard_link(bench: str, view: F.DefaultView, label: str) -> None:
    st.page_link(
        ui.PAGES["leaderboard"],
        label=label,
        icon="🏆",
        query_params={
            "benchmark": bench,
            "unit": view.unit,
            "slice": "overall",
            "metric": view.metric_key,
        },
    )


cols = st.columns(2)
for i, bench in enumerate(cards):
    spec = ui.spec_of(bench)
    token = s.token(bench) + s.token("")
    view = F.default_view(
        ui.dimensions(str(s.root), token, bench), spec.primary_metric if spec else None
    )
    with cols[i % 2].container(border=True):
        title = widgets.benchmark_title(bench)
        st.subheader(title + (" · synthetic demo" if spec is not None and spec.synthetic else ""))
        if view is None:
            st.caption("No number yet.")
            continue
        metric, grader = L.parse_metric_key(view.metric_key)
        b = ui.board(str(s.root), token, bench, view.unit, "overall", "", metric, grader)
        table = F.leaders(b.rows)
        n_runs = int((b.rows["origin_code"] != "reported").sum())
        st.caption(
            f"{metric_label(metric, grader)} · overall · {level_label(view.unit)} · "
            f"{n_runs} FactBoard run(s), {len(b.rows) - n_runs} published"
        )
        st.markdown(ui.md_escape(F.tie_line(table, n_runs)))
        st.dataframe(
            table,
            hide_index=True,
            width="stretch",
            column_config={"Model": st.column_config.TextColumn(width="medium")},
        )
        leaderboard_link(bench, view, f"Full leaderboard of {title}")

if published_only:
    st.subheader("Published numbers only")
    st.caption(
        "Benchmarks FactBoard has not ingested: the papers' numbers, best first, without "
        "CIs (papers give no per-sample predictions)."
    )
    grid = st.columns(3)
    for i, bench in enumerate(published_only):
        token = s.token(bench) + s.token("")
        view = F.default_view(ui.dimensions(str(s.root), token, bench), None)
        if view is None:
            continue
        metric, grader = L.parse_metric_key(view.metric_key)
        rows = ui.published_rows(str(s.root), token, bench, view.unit, metric)
        with grid[i % 3]:
            leaderboard_link(bench, view, widgets.benchmark_title(bench))
            st.caption(ui.md_escape(F.best_line(rows, metric_label(metric, grader))))
