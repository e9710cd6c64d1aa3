"""Page sections too long to keep in a page: the compare page's slices and disagreements, the
submit page's result and its maintainers' panel, the samples explorer's list and sample (the
leaderboard's are in explorer.board_sections).

Streamlit glue like explorer.ui and explorer.widgets: each section reads its widgets, calls
explorer's pure functions or the engine's services, and renders. See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from evaluator.core import formatting as F
from evaluator.core.errors import FactBoardError
from evaluator.submissions import moderation, report, verification
from explorer import compare_view as V
from explorer import queries as Q
from explorer import samples as X
from explorer import submit as S
from explorer import ui

# --------------------------------------------------------------------------------------------
# charts


def chart_or_caption(ch: Any, empty: str) -> None:
    """An Altair chart, or the caption `empty` where there is none."""
    if ch is None:
        st.caption(empty)
    else:
        st.altair_chart(ch, width="stretch")


# --------------------------------------------------------------------------------------------
# compare


def comparison_slices(slices: pd.DataFrame, metric_title: str) -> None:
    """'Per slice': the difference with its CI per slice, as a chart and a table."""
    st.subheader("Per slice")
    if slices.empty:
        st.caption("This benchmark declares no slices, or none supports the metric.")
        return
    sl = V.slice_table(slices)
    chart_or_caption(V.difference_chart(sl, f"A − B ({metric_title}), 95% CI"), "Nothing to plot.")
    st.dataframe(
        sl[V.SLICE_COLUMNS],
        hide_index=True,
        width="stretch",
        column_config={
            "n": st.column_config.NumberColumn("n", format="localized"),
            "value_a": st.column_config.NumberColumn(f"A {metric_title}", format="%.3f"),
            "value_b": st.column_config.NumberColumn(f"B {metric_title}", format="%.3f"),
            "A − B": st.column_config.TextColumn("A − B"),
            "95% CI": st.column_config.TextColumn("95% CI of A − B"),
            "p": st.column_config.TextColumn("p", help="Paired bootstrap, two-sided"),
            "significant": st.column_config.TextColumn(
                "significant", help="yes when the 95% CI of A − B excludes 0"
            ),
        },
    )
    st.caption(
        "Each slice has its own paired bootstrap; with many slices, expect a few "
        "p < 0.05 by chance."
    )


def disagreements(
    dis: pd.DataFrame,
    bench: str,
    unit: str,
    page: str,
    scored_on_scores: bool,
    ranks: pd.DataFrame | None = None,
    names: tuple[str, str] = ("A", "B"),
) -> None:
    """'Where they disagree': the samples the runs label differently, each opening in the
    samples explorer (a link column, and a picker with a page link). On a correlation
    benchmark (`ranks`: compare.rank_disagreements), where the two metrics rank the samples
    most differently, and each metric's rank against the human one."""
    if ranks is not None:
        _rank_disagreements(ranks, bench, unit, page, names)
        return
    st.subheader("Where they disagree")
    if dis.empty:
        why = " (this benchmark is scored on scores, not labels)." if scored_on_scores else "."
        st.caption("No sample where the two runs' labels differ" + why)
        return
    st.markdown(V.disagreement_summary(dis))
    view = V.disagreement_table(
        dis, lambda i: ui.page_url("samples", benchmark=bench, unit=unit, sample=i), unit
    )
    _open_links(view, dis["sample_id"], bench, unit, page)


def _open_links(
    view: pd.DataFrame, ids: pd.Series, bench: str, unit: str, page: str, **config: Any
) -> None:
    """A table of samples with an 'open' link column, and a picker that opens one."""
    st.dataframe(
        view,
        hide_index=True,
        width="stretch",
        height=min(38 + 35 * len(view), 420),
        column_config={
            "open": st.column_config.LinkColumn(
                "open", display_text="🔎 open", help="Open the sample in the explorer"
            ),
            unit: st.column_config.TextColumn(width="large"),
            **config,
        },
    )
    pick = st.selectbox(
        "Open one in the explorer",
        ["", *ids.head(500)],
        format_func=lambda i: i or "—",
        key=f"{page}.open",
    )
    if pick:
        st.page_link(
            ui.PAGES["samples"],
            label=f"Open {pick} in the samples explorer",
            icon="🔎",
            query_params={"benchmark": bench, "unit": unit, "sample": pick},
        )


def _rank_disagreements(
    ranks: pd.DataFrame, bench: str, unit: str, page: str, names: tuple[str, str]
) -> None:
    st.subheader(f"Where the two metrics rank {X.unit_plural(unit)} most differently")
    if ranks.empty:
        st.caption("No sample has a human score and a score from both runs.")
        return
    st.markdown(V.rank_summary(ranks, unit))
    st.caption(
        "Each metric's rank of every sample against the human rank: points on the dashed "
        "diagonal are ranked where people rank them; points above it are rated more "
        "consistent by the metric than by people."
    )
    st.altair_chart(V.rank_scatter(ranks, names[0], names[1], unit), width="content")
    view = V.rank_table(
        ranks, lambda i: ui.page_url("samples", benchmark=bench, unit=unit, sample=i), unit
    )
    rank = st.column_config.NumberColumn(format="%.0f", help=V.RANK_HELP)
    _open_links(
        view,
        ranks["sample_id"],
        bench,
        unit,
        page,
        **{
            "A − B": st.column_config.NumberColumn(format="%+.0f", help=V.RANK_HELP),
            "A's rank": rank,
            "B's rank": rank,
            "human rank": rank,
            "human score": st.column_config.NumberColumn(format="%.3f"),
        },
    )


# --------------------------------------------------------------------------------------------
# submit

MOD_DONE = "submit.mod_done"


def submission_result(res: Any, looks_like: str | None = None) -> None:
    """A submission's outcome: the scored run with its numbers and links to its board row and
    samples, every problem (and which benchmark the file looks like), or why it waits."""
    if res.ok and res.record is not None:
        rec = res.record
        st.success(f"Scored and added to the board as run `{rec.run_id}`.", icon="✅")
        with st.container(horizontal=True):
            st.page_link(
                ui.PAGES["leaderboard"],
                label="Its row on the leaderboard",
                icon="🏆",
                query_params=S.board_params(rec),
            )
            st.page_link(
                ui.PAGES["samples"],
                label="The samples it gets wrong",
                icon="🔎",
                query_params=S.samples_params(rec),
            )
        st.text(f"Model: {rec.model.name}  ·  {rec.benchmark}  ·  split {', '.join(rec.splits)}")
        st.text(f"Threshold: {report.threshold_text(rec)}")
        st.text(S.counts_text(rec))
        status = verification.record_status(rec)
        st.text(f"Verification: {verification.BADGES[status]} ({verification.STATUSES[status]})")
        st.dataframe(S.results_table(rec), hide_index=True, width="stretch")
        with st.expander("Every slice"):
            st.dataframe(S.results_table(rec, overall_only=False), hide_index=True, width="stretch")
        for w in res.warnings:
            st.info(ui.md_escape(w), icon="ℹ️")
    elif res.status == "rejected":
        st.error(S.rejected_text(len(res.problems), res.submission_id), icon="🚫")
        if looks_like:
            st.warning(ui.md_escape(looks_like), icon="🔀")
        st.code("\n".join(res.problems), language=None, wrap_lines=True)
    else:
        for w in res.warnings:
            st.warning(ui.md_escape(w), icon="⏳")


def moderation_panel() -> None:
    """Maintainers hide, show or delete submitted runs, behind FACTBOARD_ADMIN_TOKEN."""
    if not moderation.moderation_enabled():
        st.caption("Moderation is off: set FACTBOARD_ADMIN_TOKEN where the app runs to enable it.")
        return
    token = st.text_input("Maintainer token", type="password", key="submit.admin_token")
    if not token:
        return
    try:
        moderation.check_admin_token(token)
    except moderation.ModerationError as e:
        st.error(ui.md_escape(e))
        return
    if MOD_DONE in st.session_state:
        st.success(st.session_state.pop(MOD_DONE), icon="✅")
    subs = moderation.submitted_runs()
    if not subs:
        st.caption("No submitted run.")
        return
    st.dataframe(
        [
            {
                "run_id": r.run_id,
                "model": r.model.name,
                "benchmark": r.benchmark,
                "created": r.created_at,
                "hidden": r.hidden,
            }
            for r in subs
        ],
        hide_index=True,
        width="stretch",
    )
    m1, m2 = st.columns([3, 2])
    pick = m1.selectbox("Run", [r.run_id for r in subs], key="submit.mod_run")
    action = m2.radio(
        "Action", ["hide", "show", "delete"], horizontal=True, key="submit.mod_action"
    )
    sure = action != "delete" or st.checkbox(
        "Delete this run and its files for good", key="submit.mod_sure"
    )
    if st.button("Apply", disabled=not sure, key="submit.mod_apply"):
        try:
            changed = moderation.moderate(action, pick, token)
        except FactBoardError as e:
            st.error(ui.md_escape(e))
        else:
            st.session_state[MOD_DONE] = f"{action}: {', '.join(changed)}"
            ui.store(force=True)  # the board shows the change on the next run
            st.rerun()


# --------------------------------------------------------------------------------------------
# samples


def wrong_filters(runs: pd.DataFrame, page: str, cols: Any) -> tuple[str | None, bool]:
    """'Samples this run gets wrong' and 'samples most runs get wrong', in cols[0] and cols[1];
    off (with a word why) when no run has labels on these samples (runs: X.run_choices)."""
    if runs.empty:
        cols[0].caption(
            "No run has labels on these samples yet, so the 'gets it wrong' filters are off."
        )
        return None, False
    labels = dict(zip(runs["run_id"], runs["label"], strict=True))
    wrong_by = ui.url_selectbox(
        "Samples this run gets wrong",
        ["", *runs["run_id"]],
        "wrong",
        page,
        container=cols[0],
        format_func=lambda r: labels[r] if r else "— any —",
    )
    most_wrong = ui.url_toggle(
        "Samples most runs get wrong",
        "hard",
        page,
        container=cols[1],
        help="More than half of the runs (at least 2) on this benchmark "
        "version predict the wrong label; sorted hardest first.",
    )
    return wrong_by or None, most_wrong


def metric_run_picker(
    runs: pd.DataFrame, page: str, container: Any, far_container: Any = None
) -> tuple[str | None, bool]:
    """For correlation benchmarks: the metric run whose disagreement with people orders the
    list (URL parameter 'run'; runs: X.score_runs), and whether the list keeps only the wide
    gaps (URL parameter 'far': what 'the samples this run gets wrong' means on scores)."""
    if runs.empty:
        container.caption("No run has scores on these samples yet.")
        return None, False
    labels = dict(zip(runs["run_id"], runs["label"], strict=True))
    run = ui.url_selectbox(
        "Where does this metric disagree with people?",
        ["", *runs["run_id"]],
        "run",
        page,
        container=container,
        format_func=lambda r: labels[r] if r else "— pick a metric run —",
        help=X.DISAGREEMENT_HELP,
    )
    if not run:
        return None, False
    far = ui.url_toggle(
        f"Only where it is far from people (≥ {X.WIDE_GAP} points)",
        "far",
        page,
        container=far_container,
        help=f"Keep the samples whose rank by this metric is at least {X.WIDE_GAP} percentile "
        "points from their rank by the human score: the ones it gets wrong.",
    )
    return run, far


def disagreement_rows(
    con: Q.Con, f: Q.SampleFilter, total: int, run_id: str, splits: list[str]
) -> pd.DataFrame:
    """The filtered samples ordered by the gap between the run's rank and the human rank."""
    listed = Q.samples_page(con, f, max(total, 1), 0)
    human = Q.scored_samples(con, f.benchmark, f.unit, splits)[["sample_id", "human_score"]]
    preds = Q.run_predictions(con, [run_id])
    return X.disagreement(listed.merge(human, on="sample_id"), preds)


def open_sample(
    con: Q.Con, bench: str, table: pd.DataFrame, page: str, table_key: str
) -> tuple[str | None, X.SampleRow | None]:
    """The open sample (URL parameter 'sample'), set by a click on a row of the list, by the
    picker below it, or by Previous / Next; a link to a sample the benchmark lacks is said and
    dropped."""
    edge = st.session_state.pop(f"{page}._edge", None)
    if edge and len(table):
        ui.set_url_value("sample", str(table["sample"].iloc[0 if edge == "first" else -1]))
    rows = (st.session_state.get(table_key) or {}).get("selection", {}).get("rows", [])
    clicked = table["sample"].iloc[rows[0]] if rows and rows[0] < len(table) else None
    # a click is a change of the selection; the row the list selects for the open sample (or
    # a stale one after Previous / Next) is not
    seen = (table_key, tuple(rows))
    if st.session_state.get(f"{page}._rows") != seen:
        st.session_state[f"{page}._rows"] = seen
        shown = st.session_state.get(f"{page}._shown")  # what sample_results selected
        if clicked and seen != shown and clicked != ui.url_value("sample"):
            ui.set_url_value("sample", clicked)
    current = ui.url_value("sample")
    raw = Q.sample(con, bench, current) if current else None
    smp = X.sample_row(raw) if raw is not None else None
    if current and smp is None:
        ui.set_url_value("sample", None)
        st.warning(
            "The sample in the link is not in this benchmark (the link may predate a re-ingest).",
            icon="⚠️",
        )
        current = None
    return current, smp


def sample_results(
    table: pd.DataFrame,
    page: str,
    table_key: str,
    unit: str = "summary",
    current: str | None = None,
) -> None:
    """A page of samples, one selectable row each (the open one selected), full ids, and a
    picker that opens one."""
    ids = list(table["sample"])
    selected = [ids.index(current)] if current in ids else []
    st.session_state[f"{page}._shown"] = (table_key, tuple(selected))
    # what a reader scans first: which sample, its gold label, how many runs get it wrong (or
    # the gap), the text and its error types; where it comes from last
    first = ["sample id", "gold", "wrong", "gap", unit, "error types"]
    order = [c for c in first if c in table.columns]
    order += [c for c in table.columns if c not in order and c != "sample"]
    st.dataframe(
        table,
        column_order=order,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": selected, "columns": []}},
        key=table_key,
        height=38 + 35 * max(len(table), 1),
        column_config={
            "sample id": st.column_config.TextColumn(
                "sample",
                width=X.id_width(table["sample id"]),
                help="Long ids are shortened in the middle (…); the full id is in the picker "
                "below and above the open sample.",
            ),
            unit: st.column_config.TextColumn(unit, width="medium"),
            "wrong": st.column_config.TextColumn(
                "wrong",
                help="Runs (this benchmark version) that get it wrong / runs with a label",
            ),
            "gap": st.column_config.NumberColumn("gap", help=X.DISAGREEMENT_HELP, format="%+.0f"),
            "human score": st.column_config.NumberColumn(format="%.3f"),
            "metric score": st.column_config.NumberColumn(format="%.4g"),
        },
    )
    texts = dict(zip(table["sample"], table[unit], strict=True))
    pick_key = f"{page}.pick.{table_key}"
    st.selectbox(
        "Open a sample (or click a row)",
        ["", *table["sample"]],
        key=pick_key,
        on_change=_open_picked,
        args=(pick_key,),
        format_func=lambda i: f"{i} · {str(texts[i])[:90]}" if i else "—",
    )


def _open_picked(key: str) -> None:
    picked = st.session_state.get(key)
    if picked:
        ui.set_url_value("sample", picked)


def sample_pager(ids: list[str], current: str | None, page_no: int, pages: int, page: str) -> None:
    """Previous / Next buttons (keys k / j) through the list, turning the page at its ends."""
    _, turn_back = X.step(ids, current, -1)
    _, turn_on = X.step(ids, current, 1)
    c = st.columns(2)
    c[0].button(
        "← Previous",
        key=f"{page}.prev",
        shortcut="k",
        on_click=_step,
        args=(ids, current, -1, page_no, page),
        disabled=turn_back < 0 and page_no <= 1,
        width="stretch",
        help="The previous sample of the list (key k)",
    )
    c[1].button(
        "Next →",
        key=f"{page}.next",
        shortcut="j",
        on_click=_step,
        args=(ids, current, 1, page_no, page),
        disabled=turn_on > 0 and page_no >= pages,
        width="stretch",
        help="The next sample of the list (key j)",
    )


def _step(ids: list[str], current: str | None, delta: int, page_no: int, page: str) -> None:
    target, turn = X.step(ids, current, delta)
    if target:
        ui.set_url_value("sample", target)
        return
    st.query_params["page"] = str(page_no + turn)
    st.session_state[f"{page}._edge"] = "first" if turn > 0 else "last"


def sample_evidence(con: Any, root: Any, preds: pd.DataFrame, sample_id: str) -> None:
    """Beside the open sample: each run's evidence on it (explorer.evidence_view; `preds`: the
    runs' predictions for the sample, as sample_detail read them), flagged parts highlighted; a
    run that stored none says so."""
    from explorer import evidence_view as EV

    found = EV.evidence_for_sample(con, root, preds, sample_id)
    if not found:
        return
    if not any(r.stored or r.problem for r in found):
        # released outputs and baselines: one line, not one per run
        st.caption(f"No run here stored evidence ({F.plural(len(found), 'run')}).")
        return
    st.markdown("**Why each run scored it so** (the evidence its detector stored)")
    quiet = []
    for r in found:
        if r.evidence is None:
            quiet.append(f"{ui.md_escape(r.model_name)}: {r.status}")
            continue
        with st.expander(r.model_name, expanded=True):
            st.caption(EV.describe(r))
            table = EV.evidence_table(r)
            hot = set(EV.flagged_rows(table))

            def paint(row: pd.Series, hot: set[int] = hot) -> list[str]:
                color = "background-color: #fbd5d5" if row.name in hot else ""
                return [color] * len(row)

            st.dataframe(
                table.style.apply(paint, axis=1),
                hide_index=True,
                width="stretch",
                column_config={
                    "score": st.column_config.NumberColumn(format="%.4f"),
                    "F1": st.column_config.NumberColumn(format="%.3f"),
                },
            )
    if quiet:
        st.caption("  \n".join(quiet))


def sample_spans(smp: X.SampleRow, preds: pd.DataFrame) -> None:
    """The open sample's annotated spans (FaithBench): the summary with each annotator's span
    highlighted, the detectors' verdicts beside it, and every span's label, annotator and note
    below (all as text). Nothing for a sample without span annotations."""
    from explorer import textdiff

    found = X.span_annotations(smp)
    if not found:
        return
    shared = X.overlapping(found)
    st.markdown(
        f"**Annotated spans** ({F.plural(len(found), 'annotation')}"
        + (f", {F.count(shared)} overlapping" if shared else "")
        + ")"
    )
    left, right = st.columns([3, 2])
    with left:
        st.html(textdiff.spans_html(str(smp["summary"]), X.highlight_spans(found)))
        st.caption(X.SPAN_LEGEND)
    with right:
        st.markdown("**The detectors' verdicts**")
        verdicts = X.verdicts_table(preds)
        if verdicts.empty:
            st.caption("No run has a prediction for this sample.")
        else:
            st.dataframe(verdicts, hide_index=True, width="stretch")
    st.dataframe(
        X.span_rows(found),
        hide_index=True,
        width="stretch",
        column_config={
            "#": st.column_config.NumberColumn("#", width="small"),
            "note": st.column_config.TextColumn("note", width="large"),
        },
    )
