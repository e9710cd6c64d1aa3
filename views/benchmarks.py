"""Benchmark cards: what each benchmark measures, how it is built, and how to cite it."""

import streamlit as st

from evaluator.benchmarks import registry
from evaluator.core import formatting as fmt
from evaluator.core.vocabulary import metric_definition
from explorer import benchmarks as cards
from explorer import charts, ui, widgets

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
        "samples": st.column_config.TextColumn(
            help="Samples FactBoard holds (— when it has not read the benchmark's data)"
        ),
        "levels": st.column_config.TextColumn(
            help="What a label judges: a whole summary, one sentence of it, or one claim"
        ),
        "domains": st.column_config.TextColumn(
            help="Domains in the data FactBoard holds, of those the benchmark publishes"
        ),
        "main metric": st.column_config.TextColumn(
            help="The number each leaderboard opens on (its definition is on the card below)"
        ),
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
    st.caption(cards.tags(sp), help=metric_definition(sp.primary_metric))
    if sp.synthetic:
        st.warning("Synthetic: written for FactBoard's demo, not a real benchmark.", icon="🧪")
    st.markdown(ui.md_escape(sp.description))
    if meta is None:
        st.info(
            "FactBoard does not hold this benchmark's data yet, so its samples cannot be "
            "browsed and no detector can be scored on it here; the numbers its papers "
            "publish are on its leaderboard. Its release is named under Source below.",
            icon="📥",
        )
        with st.expander("For maintainers: adding its data"):
            st.markdown("Download the release named under Source, then, PATH being its folder:")
            st.code(f"python -m evaluator ingest {bench} --from PATH", language="bash")
            if sp.hub_id:
                st.markdown("or straight from the Hugging Face Hub:")
                st.code(f"python -m evaluator ingest {bench} --from hub", language="bash")

    left, right = st.columns([3, 2])
    with left:
        st.markdown(
            "**Size and balance** per domain (samples in each split; consistent and "
            "inconsistent counted over all splits)"
        )
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
            st.caption("Known once FactBoard holds the data.")
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
            when = str(meta.get("ingested_at") or "").replace("T", " ")[:16]
            st.caption(f"Data version {str(meta.get('version'))[:8]} · read on {when} UTC")
    with c2:
        st.markdown("**Citation**")
        st.code(sp.citation, language="bibtex")
    if sp.caveats:
        st.markdown("**Caveats**")
        for cv in sp.caveats:
            st.markdown(f"- {ui.md_escape(cv)}")
    if meta and meta.get("notes"):
        with st.expander(f"How the release was read ({fmt.plural(len(meta['notes']), 'note')})"):
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
