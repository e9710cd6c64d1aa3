"""One model across benchmarks: each benchmark's primary metric on Overall, with its source."""

import pandas as pd
import streamlit as st

from evaluator.core.formatting import plural
from evaluator.core.vocabulary import metric_label
from explorer import across as A
from explorer import queries as Q
from explorer import ui, widgets
from explorer.store import Store

PAGE = "across"
s = ui.store()

ui.header(
    "🧭 Across benchmarks",
    "Each model's number on every benchmark at once: the benchmark's primary metric on "
    "Overall, at the level its leaderboard opens on. Names are folded across papers and "
    "leaderboards (GPT4 / GPT-4, HHEM-2.1 / HHEM-2.1-open). A cell is the model's best "
    "FactBoard run there, else its best published number; its source says which: a run, a "
    "paper, or a leaderboard snapshot. Metrics differ between benchmarks: compare within a "
    "column.",
)
ui.problems_notice(s)
ui.board_names_or_stop(s)


@st.cache_data(show_spinner=False, max_entries=16)
def numbers(root: str, token: str, _s: Store) -> pd.DataFrame:
    """The Overall numbers of every run and published row (run.json results, no predictions)."""
    return Q.overall_numbers(_s.cursor())


@st.cache_data(show_spinner=False, max_entries=64)
def table(root: str, token: str, chosen: tuple[str, ...], min_n: int, search: str) -> A.Across:
    return A.build(rows, primary, titles, list(chosen) or None, min_n, search)


rows = numbers(str(s.root), s.token(), s)
benches = sorted(set(rows["benchmark"]), key=lambda b: widgets.benchmark_title(b).casefold())
if not benches:
    ui.no_data("No Overall number yet: ingest a benchmark and score a run.")
    st.stop()
primary = {b: (spec.primary_metric if (spec := ui.spec_of(b)) else None) for b in benches}
titles = {b: widgets.benchmark_title(b) for b in benches}

c = st.columns([3, 1, 2])
chosen = ui.url_multiselect(
    "Benchmarks (none chosen: all)",
    benches,
    "benchmarks",
    PAGE,
    container=c[0],
    format_func=lambda b: titles[b],
)
min_n = ui.url_selectbox(
    "On at least", [1, 2, 3, 4, 5], "min", PAGE, default=2, container=c[1],
    format_func=lambda n: f"{n} benchmark{'s' if n > 1 else ''}",
)  # fmt: skip
search = ui.url_text("Model name contains", "q", PAGE, container=c[2])

view = table(str(s.root), s.token(), tuple(chosen), int(min_n), search)
if view.table.empty:
    ui.no_data(
        "No model has a number on that many of these benchmarks"
        + (f" with '{search}' in its name" if search else "")
        + ". Lower 'On at least', or choose other benchmarks."
    )
    st.stop()

n_runs = int((view.cells["source_kind"] == "run").sum())
st.caption(
    f"{plural(len(view.table), 'model')} × {plural(len(view.columns), 'benchmark')}; "
    f"{plural(n_runs, 'cell')} from FactBoard runs, the others published. 'run ×3': the best of "
    "three runs; '—': no number for that model there."
)
config = {col.header: st.column_config.TextColumn(col.header) for col in view.columns}
config["Model"] = st.column_config.TextColumn(width="medium")
st.dataframe(view.table, hide_index=True, width="stretch", column_config=config)

st.markdown("**Each benchmark's leaderboard** (Overall, the metric and level shown here)")
links = st.columns(3)
for i, col in enumerate(view.columns):
    links[i % 3].page_link(
        ui.PAGES["leaderboard"],
        label=f"{col.title}: {metric_label(col.metric)}, {col.unit} level",
        icon="🏆",
        query_params={
            "benchmark": col.benchmark,
            "unit": col.unit,
            "slice": "overall",
            "metric": col.metric,
        },
    )

st.subheader("One model across every benchmark")
models = view.table["Model"].tolist()
model = ui.url_selectbox("Model", models, "model", PAGE)
st.dataframe(A.model_cells(view, model), hide_index=True, width="stretch")
