"""Benchmark cards: what each benchmark measures, how it is built, and how to cite it."""

import streamlit as st

from evaluator.benchmarks import registry
from explorer import cards, charts, ui, widgets

PAGE = "bm"
s = ui.store()

ui.header(
    "📚 Benchmarks",
    "What each benchmark measures, its size and balance per domain, "
    "error types, license, citation and caveats.",
)

specs = list(registry.specs())
ov = cards.overview(specs, s.meta)
st.dataframe(
    ov.drop(columns=["name"]),
    hide_index=True,
    width="stretch",
    column_config={
        "samples": st.column_config.TextColumn(help="Samples ingested here (— not ingested)"),
        "license": st.column_config.TextColumn(width="large"),
    },
)

names = [sp.name for sp in specs]
ingested = set(s.benchmarks())
by_name = {sp.name: sp for sp in specs}
bench = widgets.benchmark_picker(
    names,
    PAGE,
    "Benchmark card",
    format_func=lambda n: by_name[n].title + ("" if n in ingested else " (not ingested)"),
    preferred=[n for n in names if n in ingested],
)
sp = by_name[bench]
meta = s.meta.get(bench)

with st.container(border=True):
    st.subheader(sp.title)
    st.caption(cards.tags(sp))
    if sp.synthetic:
        st.warning("Synthetic: written for FactBoard's demo, not a real benchmark.", icon="🧪")
    st.markdown(ui.md_escape(sp.description))
    if meta is None:
        st.info(
            f"Not ingested here. Download its release (see Source below) and ingest it with "
            f"`python -m evaluator ingest {bench} --from PATH`, PATH being the release folder.",
            icon="📥",
        )

    left, right = st.columns([3, 2])
    with left:
        st.markdown("**Size and balance** per domain (samples per split; labels over all splits)")
        if meta:
            bal = cards.balance_table(meta)
            st.dataframe(
                bal,
                hide_index=True,
                width="stretch",
                height=38 + 35 * len(bal),
                column_config={"% consistent": st.column_config.NumberColumn(format="%.1f")},
            )
            st.caption(cards.size_note(meta, sp))
        else:
            st.caption("Known once ingested.")
    with right:
        if meta:
            split = "test" if "test" in sp.splits else None
            ch = charts.balance(cards.domain_balance(meta, split))
            if ch is not None:
                st.markdown(f"**Labels per domain**{' (test split)' if split else ''}")
                st.altair_chart(ch, width="stretch")
    if meta:
        et = cards.error_type_counts(meta)
        if not et.empty:
            st.markdown(
                "**Error / edit types** (samples carrying each, all domains and splits; one "
                "sample may carry several)"
            )
            ch = charts.counts_bar(et, "samples")
            if ch is not None:
                st.altair_chart(ch, width="stretch")

    c1, c2 = st.columns(2)
    with c1:
        st.markdown("**License**")
        st.text(sp.license)
        st.markdown("**Source**")
        st.text(sp.source + (f"\nHugging Face: {sp.hub_id}" if sp.hub_id else ""))
        if meta:
            st.caption(f"Version {meta.get('version')} · ingested {meta.get('ingested_at')}")
    with c2:
        st.markdown("**Citation**")
        st.code(sp.citation, language="bibtex")
    if sp.caveats:
        st.markdown("**Caveats**")
        for cv in sp.caveats:
            st.markdown(f"- {ui.md_escape(cv)}")
    if meta and meta.get("notes"):
        with st.expander(f"Ingest notes ({len(meta['notes'])})"):
            for n in meta["notes"]:
                st.text(f"• {n}")
    st.page_link(
        ui.PAGES["leaderboard"], label="Leaderboard", icon="🏆", query_params={"benchmark": bench}
    )
    if meta:
        st.page_link(
            ui.PAGES["samples"],
            label="Browse its samples",
            icon="🔎",
            query_params={"benchmark": bench},
        )
