"""Widgets more than one page uses, each written once: the benchmark picker, the download
buttons, the metric picker that says when a view lacks the metric, and one sample in full.

Streamlit glue like explorer.ui (which keeps the store, URL state and cached computations);
the logic they show lives in explorer's pure modules. See docs/ARCHITECTURE.md ("Pages").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from evaluator.store import export
from explorer import home, textdiff, ui
from explorer import leaderboard as L
from explorer import queries as Q
from explorer import samples as X


def benchmark_title(name: str) -> str:
    """The registered benchmark's title, or its published-numbers title when it is not
    registered (never a raw id)."""
    spec = ui.spec_of(name)
    return spec.title if spec else home.published_title(name)


def benchmark_picker(
    names: Sequence[str],
    page: str,
    label: str = "Benchmark",
    default: str | None = None,
    format_func: Callable[[str], str] = benchmark_title,
    container: Any = None,
    in_url: bool = True,
    preferred: Sequence[str] = (),
) -> str:
    """The benchmark selectbox (key '<page>.benchmark', URL parameter 'benchmark' unless
    in_url=False). It opens on the benchmark last chosen on any page of the session (else
    `default`, else the first) and remembers the choice for the other pages; `preferred`
    narrows the benchmarks it opens on (e.g. the ingested ones) when any is given."""
    opts = list(names)
    pool = [n for n in preferred if n in opts] or opts
    start = ui.sticky_benchmark(pool, default if default in pool else pool[0])
    if in_url:
        gone = ui.missing_from_url("benchmark", opts)
        if gone:
            st.warning(
                f"This link names the benchmark “{ui.md_escape(gone[:80])}”, which is not on "
                "this board; pick one below.",
                icon="🔗",
            )
        bench = ui.url_selectbox(
            label,
            opts,
            "benchmark",
            page,
            default=start,
            format_func=format_func,
            container=container,
        )
    else:
        bench = (container or st).selectbox(
            label,
            opts,
            index=opts.index(start) if start in opts else 0,
            format_func=format_func,
            key=f"{page}.benchmark",
        )
    ui.remember_benchmark(bench)
    return str(bench)


def metric_picker(
    keys: Sequence[str], page: str, unit: str, kind: str, container: Any = None
) -> str:
    """The metric selectbox ('metric' or 'metric@grader', URL parameter 'metric'). When the
    metric shown before (or named by the link) is not reported in this view, the picker falls
    back to the first metric and the page says so instead of switching silently; the reader's
    metric comes back by itself in the next view that reports it (FRANK's partial correlation
    is not lost by a look at the per-error-type view)."""
    key, pref_key, fb_key = f"{page}.metric", f"{page}.metric_pref", f"{page}.metric_fallback"
    wanted = ui.url_value("metric") or st.session_state.get(key)
    pref = st.session_state.get(pref_key)
    if pref and pref in keys and wanted != pref and wanted == st.session_state.get(fb_key):
        ui.set_url_value("metric", pref)  # the fallback was never the reader's choice
        wanted = pref
    chosen = ui.url_selectbox(
        "Metric", keys, "metric", page, container=container, format_func=L.metric_key_label
    )
    notice = L.metric_notice(wanted, keys, chosen, unit, kind)
    if notice:
        st.warning(ui.md_escape(notice), icon="↪️")
        st.session_state[pref_key] = pref or wanted
        st.session_state[fb_key] = chosen
    elif chosen != st.session_state.get(fb_key):
        st.session_state.pop(pref_key, None)
        st.session_state.pop(fb_key, None)
    return chosen


def download_buttons(
    table: Callable[[], pd.DataFrame],
    stem: str,
    page: str,
    eee: Callable[[], bytes] | None = None,
) -> None:
    """CSV, JSON and LaTeX of exactly the table `table()` makes, made when clicked (keys
    '<page>.csv' ...; the table too, so a page load does not build it); with `eee`, also the
    Every Eval Ever records of what is shown (a zip in the datastore's layout, key
    '<page>.eee')."""
    formats = (
        ("CSV", "csv", "text/csv", export.to_csv),
        ("JSON", "json", "application/json", export.to_json),
        ("LaTeX", "tex", "application/x-tex", export.to_latex),
    )
    with st.container(horizontal=True, vertical_alignment="center"):
        for title, ext, mime, write in formats:
            st.download_button(
                f"⬇️ {title}",
                partial(_written, write, table),
                f"{stem}.{ext}",
                mime,
                on_click="ignore",
                key=f"{page}.{ext}",
            )
        if eee is not None:
            st.download_button(
                "⬇️ Every Eval Ever",
                eee,
                f"{stem}-eee.zip",
                "application/zip",
                on_click="ignore",
                key=f"{page}.eee",
                help="Each run shown as an Every Eval Ever record with its per-sample file, and "
                "the benchmark's published numbers as aggregate records (schema 0.3.0).",
            )
        st.caption(
            "CSV and JSON hold exactly the rows and columns shown above; LaTeX, the rows with "
            "the columns a paper needs (rank, model, kind, value, 95% CI, n, source)."
        )


def _written(write: Callable[[pd.DataFrame], str], table: Callable[[], pd.DataFrame]) -> str:
    """A download's data, made when it is clicked: the table, then the file."""
    return write(table())


# --------------------------------------------------------------------------------------------
# one sample in full


def sample_detail(
    con: Q.Con, smp: X.SampleRow, sample_id: str, bench: str, unit: str, units: Sequence[str]
) -> pd.DataFrame:
    """The open sample: facts, permalink, summary edit, document, sentences, predictions.
    Returns every visible run's prediction for it (read once, from the runs' files)."""
    st.subheader(f"Sample {ui.md_escape(sample_id)}")
    st.text(X.sample_facts(smp))
    st.caption("Permalink to this sample:")
    st.code(ui.absolute_url("samples", benchmark=bench, unit=unit, sample=sample_id), language=None)

    left, right = st.columns([3, 2])
    with left:
        _summary(smp)
    with right:
        doc = smp.get("document")
        if doc:
            with st.expander(f"Document ({len(doc):,} characters)", expanded=len(doc) < 1500):
                ui.text_box(doc)
        else:
            st.info(
                "**Document not redistributed.** This benchmark's release does not include its "
                "source documents (e.g. TofuEval's MediaSum / MeetingBank transcripts); ingest "
                "with the loader's document option to join them.",
                icon="📄",
            )
    _sentences(con, smp, sample_id, bench, unit, units)
    preds = ui.store().sample_predictions(bench, sample_id)  # the runs' files, read in place
    _predictions(con, smp, sample_id, bench, preds)
    return preds


def _summary(smp: X.SampleRow) -> None:
    seed = smp.get("seed_summary")
    if seed and seed != smp["summary"]:
        ins, dels = textdiff.diff_counts(seed, smp["summary"])
        st.markdown(
            f"**Summary**, edited from its seed summary: "
            f"<span style='background:#d3f5d3'>&nbsp;+{ins} words&nbsp;</span> "
            f"<span style='background:#fbd5d5'>&nbsp;−{dels} words&nbsp;</span>",
            unsafe_allow_html=True,
        )
        st.html(textdiff.diff_html(seed, smp["summary"]))
        with st.expander("Seed summary (unedited)"):
            ui.text_box(seed)
    else:
        st.markdown("**Summary**" + (" (the seed summary itself)" if seed else ""))
        st.html(textdiff.plain_html(smp["summary"]))
    if smp.get("reference_explanation"):
        st.markdown("**Reference explanation** (human)")
        ui.text_box(smp["reference_explanation"])


def _sentences(
    con: Q.Con, smp: X.SampleRow, sample_id: str, bench: str, unit: str, units: Sequence[str]
) -> None:
    summary_id = smp.get("summary_id")
    if unit == "summary" and "sentence" in units:
        sent = Q.sentences_of(con, bench, sample_id)
        if not sent.empty:
            st.markdown(
                "**Sentences** (annotated one by one; the summary is inconsistent if any "
                "sentence is)"
            )
            st.dataframe(X.sentences_table(sent), hide_index=True, width="stretch")
    elif unit == "sentence" and summary_id:
        sent = Q.sentences_of(con, bench, summary_id)
        st.markdown("**The summary this sentence belongs to** (▶ marks this sentence)")
        st.dataframe(X.sentences_table(sent, sample_id), hide_index=True, width="stretch")


def _predictions(
    con: Q.Con, smp: X.SampleRow, sample_id: str, bench: str, preds: pd.DataFrame
) -> None:
    st.markdown("**Every run's prediction**")
    grades = Q.grades_for_sample(con, bench, sample_id)
    if preds.empty:
        st.caption(
            "No run has a prediction for this sample"
            + (
                " (runs score the test split unless told otherwise)."
                if smp["split"] == "dev"
                else "."
            )
        )
        return
    wrong, n = X.wrong_share(preds)
    if n:
        st.caption(f"{wrong} of {n} runs with a label get it wrong.")
    table, as_text = L.screen_table(X.predictions_table(preds, grades), decimals=4)  # "—", not None
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={
            "score": st.column_config.TextColumn()
            if "score" in as_text
            else st.column_config.NumberColumn(format="%.4f"),
            "explanation": st.column_config.TextColumn(width="large"),
            "grades": st.column_config.TextColumn(width="medium"),
        },
    )
