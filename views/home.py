"""FactBoard's front page: who leads each benchmark, and how FactBoard's own runs stand."""

import pandas as pd
import streamlit as st

from evaluator.core.vocabulary import metric_definition, metric_label
from explorer import front as F
from explorer import leaderboard as L
from explorer import ui, widgets
from explorer.words import level_label

s = ui.store()

ui.header(
    "📋 FactBoard",
    "Factual-consistency detectors for summarization. For each benchmark: who leads the "
    "board, published numbers and FactBoard's runs together, with the source of each; then "
    "the best FactBoard runs with their 95% bootstrap CIs, and which of them a paired test on "
    "the same samples cannot tell apart. Published numbers carry no CI.",
)
ui.problems_notice(s)
ingested, names = ui.board_names_or_stop(s)
if len(names) > 1 and "demo" in names:
    names = [n for n in names if n != "demo"] + ["demo"]
# benchmarks FactBoard has ingested first, then those with published numbers only
names = [n for n in names if n in ingested] + [n for n in names if n not in ingested]


@st.cache_data(show_spinner=False, max_entries=64)
def subset_rows(
    root: str, token: str, bench: str, unit: str, kind: str, name: str, values: tuple[str, ...]
) -> list[tuple[str, pd.DataFrame]]:
    """Each subset's published rows, best first (L.published_rows on that slice)."""
    con = ui.store().cursor()
    return [(v, L.published_rows(con, L.BoardQuery(bench, unit, kind, v, name))) for v in values]


def leaderboard_link(bench: str, params: dict[str, str], label: str) -> None:
    st.page_link(
        ui.PAGES["leaderboard"],
        label=label,
        icon="🏆",
        query_params={"benchmark": bench, **params},
    )


first_published_only = True
for bench in names:
    spec = ui.spec_of(bench)
    if bench not in ingested and first_published_only:
        first_published_only = False
        st.subheader("Published numbers only")
        st.caption(
            "Benchmarks FactBoard has not ingested: the numbers published in papers and on "
            "leaderboards, best first, without CIs (papers give no per-sample predictions)."
        )
    token = s.token(bench) + s.token("")
    dims = ui.dimensions(str(s.root), token, bench)
    primary = spec.primary_metric if spec else None
    view = F.default_view(dims, primary)
    title = widgets.benchmark_title(bench)
    with st.container(border=True):
        st.subheader(title + (" · synthetic demo" if spec is not None and spec.synthetic else ""))
        rows: pd.DataFrame | None = None
        if view is not None:
            name, grader = L.parse_metric_key(view.metric_key)
            label = metric_label(name, grader)
            if bench in ingested:
                b = ui.board(str(s.root), token, bench, view.unit, "overall", "", name, grader)
                rows = b.rows
            else:
                rows = ui.published_rows(str(s.root), token, bench, view.unit, name)
            st.caption(
                f"{label} · overall · {level_label(view.unit)} · {F.counts_text(rows)}",
                help=metric_definition(name),
            )
        # the subsets' published numbers, where the card's own view has none
        sub = (
            F.subset_view(dims, primary, view.unit if view else None)
            if rows is None or not (rows["origin_code"] == "reported").any()
            else None
        )
        published_elsewhere = sub is not None
        if rows is not None:
            card = F.card(rows, label, published_elsewhere)
            for line in card.lines:
                st.markdown(ui.md_escape(line))
            if len(card.table):
                # a static table wraps its cells, so no column is cropped at any width; its
                # cells are Markdown, so the names from data are escaped
                st.table(card.table.map(ui.md_escape), hide_index=True, border="horizontal")
                if F.TIE_COLUMN in card.table.columns:
                    st.caption(
                        f"{F.TIE_COLUMN}: whether a test on the same samples (95%) can tell a "
                        "FactBoard run apart from the best one; published numbers carry no CI "
                        "and are not tested."
                    )
            if card.reference:
                st.caption(ui.md_escape(card.reference))
            leaderboard_link(
                bench,
                {"unit": view.unit, "slice": "overall", "metric": view.metric_key} if view else {},
                f"Full leaderboard of {title}",
            )
        if published_elsewhere and sub is not None:
            sub_label = metric_label(sub.metric)
            st.markdown(
                ui.md_escape(
                    f"Published numbers are per subset ({sub_label}, {level_label(sub.unit)}):"
                ),
                help=metric_definition(sub.metric),
            )
            for line in F.subset_lines(
                subset_rows(
                    str(s.root), token, bench, sub.unit, sub.slice_kind, sub.metric, sub.values
                ),
                sub,
                sub_label,
            ):
                st.markdown("- " + ui.md_escape(line))
            leaderboard_link(
                bench,
                {"unit": sub.unit, "slice": sub.slice_kind, "metric": sub.metric},
                f"{title} by subset",
            )
        if rows is None and sub is None:
            st.caption("No number yet.")
