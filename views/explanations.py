"""Explanations: how good are the models' explanations, and how good are the judges?"""

import streamlit as st

from evaluator.core import formatting as F
from evaluator.core.vocabulary import ORIGIN_BADGES
from explorer import charts, ui, widgets
from explorer import explanations as E
from explorer import queries as Q

PAGE = "xp"
s = ui.store()
s.ensure_all_grades()
con = s.cursor()

ui.header(
    "💬 Explanations",
    "Runs whose explanations were graded, by people or by an LLM "
    "judge: what kind of explanation each model gives, and how far judges agree with "
    "people.",
)

graded = Q.graded_runs(con)
st.subheader("Explanation types per model")
dist = E.type_distribution(con)
if dist.empty:
    ui.no_data(
        "No run has human-labelled explanations yet. The FactCC explanation study of the "
        "SummEdits paper (Figure 2) provides them: `python -m evaluator ingest "
        "factcc_explanations --from ../shared/benchmarks/summedits`."
    )
else:
    benches = sorted(dist["benchmark"].unique())
    bench = widgets.benchmark_picker(benches, PAGE)
    d = dist[dist["benchmark"] == bench]
    st.caption(
        "Human annotation of each explanation a model gave when it (rightly) flagged a "
        "summary as inconsistent: correct, partially correct, incorrect, unrelated, or no "
        "explanation (the study of the SummEdits paper, §3.5). The shares are computed from "
        "the released annotations; sorted by the share of correct ones."
    )
    ch = charts.explanation_types(d)
    if ch is not None:
        st.altair_chart(ch, width="stretch")
    checks = E.paper_comparison(d)
    if checks:
        st.markdown("**What the released annotations show, beside what the paper says**")
        st.markdown("\n".join(f"- {ui.md_escape(c.text)}" for c in checks))
        if not all(c.agrees for c in checks):
            st.caption(
                "Where the two differ, the numbers on this page are the data's: the paper's "
                "Figure 2 and its text group the models' failures otherwise."
            )
    tbl = E.type_table(d)
    shares = [c for c in tbl.columns if c not in ("model", "run_id", "explanations")]
    tbl[shares] = tbl[shares].map(F.percent)  # one decimal everywhere: '57.5%', '0.0%'
    pct = {
        c: st.column_config.TextColumn(c, help=f"Share of the model's explanations: {c}")
        for c in shares
    }
    st.dataframe(
        tbl.drop(columns=["run_id"]),
        hide_index=True,
        width="stretch",
        column_config=pct,
        height=38 + 35 * len(tbl),
    )

st.subheader("Mean grade per run and grader")
if graded.empty:
    st.caption("No graded run yet.")
else:
    g = E.graded_table(graded)
    st.dataframe(
        g,
        hide_index=True,
        width="stretch",
        height=min(38 + 35 * len(g), 600),
        column_config={"mean grade": st.column_config.NumberColumn(format="%.3f")},
    )
    st.caption(
        "Grades: entirely correct 1, partially correct 0.5, not correct 0 (unparsable "
        "grades are counted, not scored)."
    )

st.subheader("Judges against human grades")
with st.expander("What the judge protocols EvalV1–EvalV4 are", expanded=True):
    st.markdown(E.PROTOCOL_INTRO)
    st.dataframe(E.protocols_table(), hide_index=True, width="stretch")
judges = Q.judge_runs(con)
if judges.empty:
    st.info(E.JUDGE_HELP, icon="⚖️")
else:
    agree = E.judge_agreement(con)
    if agree.empty:
        st.caption(
            "Judges have graded explanations that no person graded, so there is nothing "
            "to compare yet."
        )
        st.dataframe(judges, hide_index=True, width="stretch")
    else:
        st.dataframe(
            E.agreement_table(agree),
            hide_index=True,
            width="stretch",
            column_config={
                c: st.column_config.NumberColumn(format="%.3f")
                for c in E.AGREEMENT_COLUMNS.values()
            },
        )
        st.caption(
            "Pearson r and Cohen's κ on the grades (1 / 0.5 / 0); BAcc: balanced accuracy of "
            "the three grades as classes, with the human grade as gold."
        )

grids = E.judge_grid(Q.reported_judges(con))
if grids:
    st.markdown(
        "**Published judge agreement** (SummExecEdit paper, Table 4): each judge × protocol"
    )
    st.caption(
        f"{ORIGIN_BADGES['reported']}: transcribed from the paper, not recomputed. The paper "
        "does not say which correlation it reports."
    )
    for col, (label, grid) in zip(st.columns(len(grids)), grids.items(), strict=True):
        col.markdown(f"*{label}* with human grades")
        col.dataframe(
            grid,
            hide_index=True,
            width="stretch",
            column_config={p: st.column_config.NumberColumn(format="%.3f") for p in E.PROTOCOLS},
        )
