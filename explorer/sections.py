"""Page sections too long to keep in a page: the leaderboard's run card and chart tabs, the
submit page's result and its maintainers' panel.

Streamlit glue like explorer.ui and explorer.widgets: each section reads its widgets, calls
explorer's pure functions or the engine's services, and renders. See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core import formatting as F
from evaluator.core.errors import FactBoardError
from evaluator.core.formatting import plural
from evaluator.core.vocabulary import ORIGIN_BADGES, ORIGIN_HELP, kind_label, metric_label
from evaluator.submissions import moderation, report
from explorer import charts, ui
from explorer import compare_view as V
from explorer import leaderboard as L
from explorer import queries as Q
from explorer import samples as X
from explorer import submit as S

CHARTS = ["CI forest plot", "Model × slice", "Error types", "Size vs score"]
CHARTS_TITLE = "Charts: "  # the expander's title, then the charts' names
VALUES_PLOT = "Values plot"  # the first tab where no row has a CI (published numbers only)
HEATMAP_ROWS = 60  # rows of the table on the model × slice heatmap (the first, in its order)
SLICE_COLUMNS = ["label", "origin_code", "run_id", "model", "source", "config", "rep_key"]


# --------------------------------------------------------------------------------------------
# leaderboard


def board_banner(
    bench: str, spec: BenchmarkSpec | None, meta: dict[str, Any], published_only: str | None
) -> None:
    """What the numbers are: synthetic demo data, or published numbers only (published_only:
    the benchmark's label when it is not ingested)."""
    if meta.get("synthetic") or (spec is not None and spec.synthetic):
        st.warning(
            "**Synthetic demo data.** Templated text written for FactBoard so that a fresh "
            "install shows a working board; its numbers say nothing about real detectors. "
            "Ingest a real benchmark to compare models (see the Benchmarks page).",
            icon="🧪",
        )
    elif published_only:
        how = (
            " FactBoard does not hold this benchmark's data yet, so no detector is scored on "
            "it here."
        )
        st.info(
            f"**{ui.md_escape(published_only)}.** These numbers are transcribed from papers "
            "and leaderboards; without per-sample predictions FactBoard cannot recompute them "
            "or test whether one is significantly ahead." + (how if spec else ""),
            icon="📄",
        )
        if spec is not None:
            with st.expander("For maintainers: adding its data"):
                st.code(f"python -m evaluator ingest {bench} --from PATH", language="bash")


def board_filters(board: L.Board, page: str) -> L.Look:
    """Search, kind, origin, order and extra columns, in one row above the board."""
    rows = board.rows
    f = st.columns([2, 2, 2, 1.3, 1.2])
    search = ui.url_text("Search model", "q", page, container=f[0], placeholder="name contains…")
    kinds = ui.url_multiselect(
        "Kind",
        L.kinds_present(rows),
        "kind",
        page,
        container=f[1],
        format_func=kind_label,
        placeholder="all kinds",
    )
    origins = ui.url_multiselect(
        "Origin",
        L.origins_present(rows),
        "origin",
        page,
        container=f[2],
        format_func=lambda o: ORIGIN_BADGES.get(o, o),
        placeholder="all origins",
        help=ORIGIN_HELP,
    )
    sort = ui.url_selectbox(
        "Sort by", list(L.SORTS), "sort", page, container=f[3], format_func=L.SORTS.__getitem__
    )
    with f[4].popover("Columns", width="stretch"):
        columns = ui.url_multiselect(
            "Columns shown",
            [*L.OPTIONAL_COLUMNS, *board.other_metrics],
            "cols",
            page,
            default=L.DEFAULT_COLUMNS,
            format_func=L.column_label,
            help="Rank, model and the score are always shown. A column with nothing to "
            "show for the rows in view is left out. The link keeps your choice.",
        )
    return L.Look(search, tuple(kinds), tuple(origins), sort, tuple(columns))


def board_table(table: pd.DataFrame, helps: dict[str, str]) -> None:
    """The board as shown (L.display_table): the CI drawn in its row, numbers in the
    formatter's decimals, "—" where a number is not given (a paper's rank, CI or n;
    L.screen_table), a hover definition on every column (L.column_help)."""
    shown, text = L.screen_table(table)
    number = st.column_config.NumberColumn(format=f"%.{F.DECIMALS}f")
    config: dict[str, Any] = {
        c: number for c in shown.columns if shown[c].dtype.kind == "f" and c not in text
    }
    config.update({c: st.column_config.TextColumn(alignment="right") for c in text})
    config.update(
        {
            "Model": st.column_config.TextColumn(width="medium"),
            "95% CI": st.column_config.ImageColumn(width="medium"),
            "n": st.column_config.Column(alignment="right"),
            "Check": st.column_config.TextColumn(width="small"),
            **{
                c: st.column_config.TextColumn(alignment="right")
                for c in ("Δ to best run", "Δ to top", "p vs best run", "CI bounds")
            },
        }
    )
    for c in ("Rank", "Rank (by value)"):
        if c in shown.columns:
            config[c] = st.column_config.Column(width="small", alignment="right")
    for c, h in helps.items():  # the hover definition, on whatever column type is set
        base = config.get(c) or st.column_config.Column()
        config[c] = {**base, "help": h}
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        height=min(38 + 35 * max(len(table), 1), 640),
        column_config=config,
    )


def run_card(
    con: Q.Con, shown: pd.DataFrame, page: str, view: L.BoardQuery, metric_title: str
) -> None:
    """'Inspect a run': the chosen run's number, model facts and links to its wrong samples
    and to the compare page."""
    run_rows = shown[shown["origin_code"] != "reported"]
    st.subheader("Inspect a run")
    if run_rows.empty:
        st.caption(
            "No FactBoard run in this view: published numbers have no per-sample predictions "
            "to inspect."
        )
        return
    ids = run_rows["run_id"].tolist()
    labels = dict(zip(ids, run_rows["label"].tolist(), strict=True))
    gone = ui.missing_from_url("run", ids)
    if gone:
        st.warning(
            f"The run {ui.md_escape(gone[:120])} named by this link is not in this view "
            "(deleted, hidden, or left out by the filters above).",
            icon="🔗",
        )
    pick = ui.url_selectbox(
        "Run",
        ["", *ids],
        "run",
        page,
        format_func=lambda r: labels[r] if r else "choose a run…",
    )
    if not pick:
        return
    r = run_rows[run_rows["run_id"] == pick].iloc[0]
    info = Q.run_row(con, pick) or {}
    c1, c2 = st.columns([3, 2])
    with c1:
        st.text(f"{r['model']}  ·  {r['kind']}  ·  {r['origin']}")
        st.text(
            f"{metric_title} = {F.value_ci(r['value'], r['ci_low'], r['ci_high'])}, "
            f"n = {F.count(r['n'])}  ·  threshold: {r['threshold'] or 'none'}"
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
        v = view.slice_value
        st.page_link(
            ui.PAGES["samples"],
            label=f"Samples this run gets wrong{f' in {v}' if v else ''}",
            icon="🔎",
            query_params=L.samples_link(
                view.benchmark, view.unit, view.slice_kind, v, pick, str(r["split"])
            ),
        )
        st.page_link(
            ui.PAGES["compare"],
            label="Compare with another run",
            icon="⚖️",
            query_params={"benchmark": view.benchmark, "unit": view.unit, "a": pick},
        )


def board_charts(
    shown: pd.DataFrame,
    page: str,
    view: L.BoardQuery,
    metric_title: str,
    kinds: set[str],
    cache: tuple[str, str],
) -> None:
    """The chart tabs, folded away until the reader opens them (the page is complete without
    them; a link with a chart in it opens them); only the open tab is computed. kinds: the
    slice kinds with numbers at this level; cache: (store root, token) for ui.slice_long."""
    any_ci = bool((shown["ci_low"].notna() & shown["ci_high"].notna()).any())
    labels = CHARTS if any_ci else [VALUES_PLOT, *CHARTS[1:]]
    box = st.expander(
        CHARTS_TITLE + " · ".join(labels),
        expanded=bool(ui.url_value("chart")),
        icon="📊",
        key=f"{page}.charts",
        on_change="rerun",
    )
    if not box.open:
        for name in ("chart", "fpage"):  # a copied link opens the page as it is: folded
            ui.set_url_value(name, None)
        return
    root, token = cache
    unit = view.unit
    spread, err_kind = L.chart_kinds(kinds, view.slice_kind)
    with box:
        tabs, active = ui.url_tabs(labels, "chart", page)
    with tabs[labels.index(active)]:
        ch: Any = None
        if active == labels[0]:
            _forest(shown, page, view, metric_title)
        elif active == CHARTS[1]:
            if spread is None:
                st.caption(f"This benchmark has no per-domain numbers at the {unit} level.")
                return
            _heatmap(shown, (root, token), view, metric_title, spread)
        elif active == CHARTS[2]:
            if err_kind is None:
                st.caption(f"This benchmark has no per-error-type numbers at the {unit} level.")
                return
            _error_types(root, token, view, shown.head(8), err_kind)
        else:
            ch = charts.size_vs_score(shown, metric_title)
            _chart(
                ch,
                "No row states a model size (in the run's details, or as a size such as 7B "
                "in the model name).",
            )
            if ch is not None:
                st.caption(
                    "Sizes as the run states them, else read from the model name (see tooltip)."
                )


FOREST_ROWS = 25  # rows per page of the forest plot
FOREST_COLUMNS = ["label", "value", "ci_low", "ci_high", "n", "rank", "origin_code"]


def _heatmap(
    shown: pd.DataFrame,
    cache: tuple[str, str],
    view: L.BoardQuery,
    metric_title: str,
    spread: str,
) -> None:
    """Model × slice: every row of the table (the first HEATMAP_ROWS of a longer one, said),
    and the rows that have no number per slice named, with why."""
    root, token = cache
    top = shown.head(HEATMAP_ROWS)
    cols = [c for c in SLICE_COLUMNS if c in top.columns]
    long = ui.slice_long(root, token, view.benchmark, view.unit, view.metric, spread, top[cols])
    what = L.slice_noun(spread)
    ch = charts.heatmap(long, metric_title, what, top["label"].tolist())
    _chart(ch, f"No {metric_title} per {what} for the rows shown.")
    notes = []
    if len(shown) > len(top):
        notes.append(
            f"The first {F.count(len(top))} of the {plural(len(shown), 'row')}, in the "
            "table's order; narrow the table with the search and filters to see others."
        )
    have = set(long["label"]) if not long.empty else set()
    lacking = [str(x) for x in top["label"] if x not in have]
    if lacking and ch is not None:
        notes.append(
            f"Not on the heatmap ({plural(len(lacking), 'row')}): "
            + ", ".join(lacking[:12])
            + (", …" if len(lacking) > 12 else "")
            + f": no {metric_title} per {what} was published or stored for them."
        )
    for n in notes:
        st.caption(ui.md_escape(n))


def _forest(shown: pd.DataFrame, page: str, view: L.BoardQuery, metric_title: str) -> None:
    """The CI forest plot of every row of the table, FOREST_ROWS per page (URL parameter
    'fpage'), on one x scale for all pages so that pages compare; where no row has a CI (a
    board of published numbers), a plot of the values."""
    plotted = shown[shown["value"].notna()]
    pages = max(1, -(-len(plotted) // FOREST_ROWS))
    at = 1
    if pages > 1:
        at = ui.url_page_number("fpage", page, pages, reset_token=(view, len(plotted)))
    part = plotted.iloc[(at - 1) * FOREST_ROWS : at * FOREST_ROWS]
    # the columns the plot reads, alone: the chart's data is not the board's forty columns
    part = part[[c for c in FOREST_COLUMNS if c in part.columns]]
    ch = charts.forest(part, metric_title, x_domain=charts.ci_domain(plotted))
    if ch is None:
        st.caption("Nothing to plot.")
    else:  # at most FOREST_ROWS rows of our own making: the spec without Altair's validation
        st.vega_lite_chart(ch.to_dict(validate=False), width="stretch")
        if plotted["ci_low"].isna().any():
            st.caption(
                "Dots without a bar are published numbers: they carry no CI here, "
                "and their order is not significance."
                if plotted["ci_low"].notna().any()
                else "Published numbers carry no CI here: each dot is a number as published, "
                "and their order is not significance."
            )
    if ch is not None and pages > 1:
        first = (at - 1) * FOREST_ROWS + 1
        st.caption(
            f"Rows {first}–{first + len(part) - 1} of the {len(plotted)} rows with a number, "
            "in the table's order; the pages share one scale."
        )


def _chart(ch: Any, empty: str) -> None:
    if ch is None:
        st.caption(empty)
    else:
        st.altair_chart(ch, width="stretch")


def _error_types(
    root: str, token: str, view: L.BoardQuery, head: pd.DataFrame, err_kind: str
) -> None:
    bench, unit, metric = view.benchmark, view.unit, view.metric
    long = ui.slice_long(root, token, bench, unit, metric, err_kind, head)
    if long.empty:  # TofuEval error types hold inconsistent sentences only: recall
        metric = "recall"
        long = ui.slice_long(root, token, bench, unit, metric, err_kind, head)
    what = L.slice_noun(err_kind)
    title = metric_label(metric)
    ch = charts.grouped_bars(long, title, what, head["label"].tolist())
    _chart(ch, "No per-error-type numbers for the rows shown.")
    if ch is not None:
        st.caption(
            f"{title} per {what}, first 8 rows of the table"
            + (
                f", over the whole benchmark, not {L.slice_noun(view.slice_kind)} "
                f"“{view.slice_value}” alone: runs store {what} numbers for all of it."
                if view.slice_kind not in ("overall", err_kind)
                else "."
            )
            + (
                " SummEdits edit-type slices hold the consistent samples plus the "
                "inconsistent ones with that edit (paper Table 10)."
                if err_kind == "edit_type"
                else ""
            )
        )


# --------------------------------------------------------------------------------------------
# compare


def comparison_slices(slices: pd.DataFrame, metric_title: str) -> None:
    """'Per slice': the difference with its CI per slice, as a chart and a table."""
    st.subheader("Per slice")
    if slices.empty:
        st.caption("This benchmark declares no slices, or none supports the metric.")
        return
    sl = V.slice_table(slices)
    _chart(V.difference_chart(sl, f"A − B ({metric_title}), 95% CI"), "Nothing to plot.")
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
) -> tuple[str | None, dict[str, Any] | None]:
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
    smp = Q.sample(con, bench, current) if current else None
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
    from evaluator.core import formatting as F
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


def sample_spans(smp: dict[str, Any], preds: pd.DataFrame) -> None:
    """The open sample's annotated spans (FaithBench): the summary with each annotator's span
    highlighted, the detectors' verdicts beside it, and every span's label, annotator and note
    below (all as text). Nothing for a sample without span annotations."""
    from evaluator.core import formatting as F
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
