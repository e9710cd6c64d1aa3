"""FactBoard's front page: who leads each benchmark, and how FactBoard's own runs stand."""

from typing import Any

import pandas as pd
import streamlit as st

from evaluator.core.vocabulary import metric_definition, metric_label
from explorer import home as F
from explorer import leaderboard as L
from explorer import queries as Q
from explorer import ui, widgets
from explorer.words import level_label, metric_words

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
def card_of(root: str, token: str, bench: str, held: bool) -> dict[str, Any]:
    """Everything one card shows, kept small so that a rerun reads it from the cache rather
    than the whole board: the default view, its caption, the card (F.card), and the subsets'
    best published numbers where the view has none. held: FactBoard holds the benchmark's
    data (its board is built, runs ranked), else its published rows alone are read."""
    spec = ui.spec_of(bench)
    dims = ui.dimensions(root, token, bench)
    primary = spec.primary_metric if spec else None
    view = F.default_view(dims, primary)
    out: dict[str, Any] = {"view": view, "card": None, "sub": None}
    rows: pd.DataFrame | None = None
    label = ""
    if view is not None:
        name, grader = L.parse_metric_key(view.metric_key)
        label = metric_words(name, grader)
        if held:
            rows = ui.board(root, token, bench, view.unit, "overall", "", name, grader).rows
        else:
            rows = ui.published_rows(root, token, bench, view.unit, name)
        out["caption"] = f"{label} · overall · {level_label(view.unit)} · {F.counts_text(rows)}"
        out["help"] = metric_definition(name)
    # the subsets' published numbers, where the card's own view has none
    if rows is None or not (rows["origin_code"] == "reported").any():
        sub = F.subset_view(dims, primary, view.unit if view else None)
        if sub is not None:
            reported = Q.reported_results(ui.store().cursor(), bench, sub.unit, sub.slice_kind)
            sub_label = metric_label(sub.metric)
            out["sub"] = sub
            out["sub_head"] = (
                f"Published numbers are per subset ({sub_label}, {level_label(sub.unit)}):"
            )
            out["sub_help"] = metric_definition(sub.metric)
            out["sub_lines"] = F.subset_lines(reported, sub, sub_label)
    if rows is not None:
        # plain text only (a rerun reads this from the cache: no frame to unpickle), the
        # lines and the table each one Markdown element, their text from data escaped
        card = F.card(rows, label, published_elsewhere=out["sub"] is not None)
        out["card"] = {
            "lines": "\n\n".join(ui.md_escape(line) for line in card.lines),
            "table": F.markdown_table(card.table, ui.md_escape) if len(card.table) else "",
            "ties": F.TIE_COLUMN in list(card.table.columns),
            "reference": ui.md_escape(card.reference) if card.reference else "",
        }
    return out


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
    c = card_of(str(s.root), token, bench, bench in ingested)
    view, card, sub = c["view"], c["card"], c["sub"]
    title = widgets.benchmark_title(bench)
    with st.container(border=True):
        st.subheader(title + (" · synthetic demo" if spec is not None and spec.synthetic else ""))
        if card is not None:
            st.caption(c["caption"], help=c["help"])
            # one element for the card's lines (each element costs the browser a render)
            if card["lines"]:
                st.markdown(card["lines"])
            if card["table"]:
                # a Markdown table wraps its cells, so no column is cropped at any width; one
                # element (a static table element renders each cell as Markdown of its own)
                st.markdown(card["table"])
                if card["ties"]:
                    st.caption(
                        f"{F.TIE_COLUMN}: whether a test on the same samples (95%) can tell a "
                        "FactBoard run apart from the best one; published numbers carry no CI "
                        "and are not tested."
                    )
            if card["reference"]:
                st.caption(card["reference"])
            leaderboard_link(
                bench,
                {"unit": view.unit, "slice": "overall", "metric": view.metric_key},
                f"Full leaderboard of {title}",
            )
        if sub is not None:
            st.markdown(ui.md_escape(c["sub_head"]), help=c["sub_help"])
            st.markdown("\n".join("- " + ui.md_escape(line) for line in c["sub_lines"]))
            leaderboard_link(
                bench,
                {"unit": sub.unit, "slice": sub.slice_kind, "metric": sub.metric},
                f"{title} by subset",
            )
        if card is None and sub is None:
            st.caption("No number yet.")
