"""The leaderboard page's sections: the banner over the board, the row of filters, the table
with its drawn CIs and column help, the run card, and the chart tabs (drawn when opened).

Streamlit glue like explorer.ui, explorer.widgets and explorer.sections: each section reads its
widgets, calls explorer's pure functions, and renders. See docs/ARCHITECTURE.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core import formatting as F
from evaluator.core.formatting import plural
from evaluator.core.vocabulary import ORIGIN_BADGES, ORIGIN_HELP, kind_label, metric_label
from evaluator.submissions import verification
from explorer import board_table as BT
from explorer import charts, ui, widgets
from explorer import leaderboard as L
from explorer import queries as Q
from explorer.sections import chart_or_caption

CHARTS = ["CI forest plot", "Model × slice", "Error types", "Size vs score"]
CHARTS_TITLE = "Charts: "  # the expander's title, then the charts' names
VALUES_PLOT = "Values plot"  # the first tab where no row has a CI (published numbers only)
HEATMAP_ROWS = 60  # rows of the table on the model × slice heatmap (the first, in its order)
SLICE_COLUMNS = ["label", "origin_code", "run_id", "model", "source", "config", "rep_key"]


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
            _ingest_command(bench)


@st.fragment
def _ingest_command(bench: str) -> None:
    """The maintainers' ingest command, drawn when opened (a code block loads a syntax
    highlighter worth over a second of the browser's main thread on a loaded machine), in a
    fragment: opening it reruns this alone."""
    box = st.expander("For maintainers: adding its data", key="lb.ingest", on_change="rerun")
    if box.open:
        with box:
            st.code(f"python -m evaluator ingest {bench} --from PATH", language="bash")


FILTERS_TITLE = "Search, filter, sort and columns; runs or published numbers"


def board_filters(board: L.Board, page: str, narrowed: bool) -> L.Look:
    """The row of filters above the board, folded away (on a phone the table comes first)
    and drawn only when open (its widgets cost the browser a good part of the page's render);
    open at first when the link filters the rows (narrowed). Folded, the look is read from
    the URL, where the widgets keep it, and the URL keeps what they write (the sort and the
    columns, defaults included), so a copied link shows the same view either way."""
    key = f"{page}.filters"
    # the expander's first state, fixed for the session (its identity follows `expanded`:
    # a value that changed with the filters would fold it away under the reader's hands)
    first = bool(st.session_state.setdefault(f"{key}.first", narrowed))
    box = st.expander(FILTERS_TITLE, expanded=first, icon="🔍", key=key, on_change="rerun")
    if box.open:
        with box:
            return _filter_widgets(board, page)
    return _look_from_url(board)


def _look_from_url(board: L.Board) -> L.Look:
    """The look the folded widgets hold: each URL value the widget would take (an unknown
    one dropped, the default where none), written back as the widget writes it."""
    rows = board.rows

    def chosen(name: str, options: list[str], default: list[str]) -> list[str]:
        url = st.query_params.get_all(name)
        value = [v for v in url if v in options] if url else default
        if value:
            if url != value:
                st.query_params[name] = value
        elif default:  # emptied where the default is not empty: one blank value
            if url != [""]:
                st.query_params[name] = ""
        elif name in st.query_params:
            del st.query_params[name]
        return value

    search = (ui.url_value("q") or "")[:200].strip()
    ui.set_url_value("q", search)
    kinds = chosen("kind", L.kinds_present(rows), [])
    origins = chosen("origin", L.origins_present(rows), [])
    verified = chosen("verified", L.verified_present(rows), [])
    sort = _one_from_url("sort", list(L.SORTS))
    which = _one_from_url("rows", list(L.ROW_SETS))
    cols = [*L.OPTIONAL_COLUMNS, *board.other_metrics]
    columns = chosen("cols", cols, [c for c in L.DEFAULT_COLUMNS if c in cols])
    return L.Look(
        search, tuple(kinds), tuple(origins), sort, tuple(columns), tuple(verified), which
    )


def _one_from_url(name: str, options: list[str]) -> str:
    """The URL's choice among `options` (the first where it names none), written back."""
    value = next((v for v in st.query_params.get_all(name)[:1] if v in options), options[0])
    ui.set_url_value(name, value)
    return value


def _filter_widgets(board: L.Board, page: str) -> L.Look:
    """Search, kind, origin, verification, order and extra columns, in one row above the
    board, and which rows (runs, published numbers or both) below them."""
    rows = board.rows
    f = st.columns([2, 1.6, 1.6, 1.6, 1.3, 1.2])
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
    verified = ui.url_multiselect(
        "Verification",
        L.verified_present(rows),
        "verified",
        page,
        container=f[3],
        format_func=lambda v: verification.BADGES.get(v, v),
        placeholder="any",
        help=verification.HELP,
    )
    sort = ui.url_selectbox(
        "Sort by", list(L.SORTS), "sort", page, container=f[4], format_func=L.SORTS.__getitem__
    )
    with f[5].popover("Columns", width="stretch"):
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
    which = ui.url_radio(
        "Show",
        list(L.ROW_SETS),
        "rows",
        page,
        format_func=L.ROW_SETS.__getitem__,
        horizontal=True,
    )
    return L.Look(
        search, tuple(kinds), tuple(origins), sort, tuple(columns), tuple(verified), which
    )


def every_row(total: int, page: str) -> bool:
    """Whether the table draws all its rows: a board of more than FIRST_ROWS rows
    (explorer.board_table) draws the first ones until the reader turns this on (kept in the
    link as `all=1`, so a shared link shows what its sender saw)."""
    first = BT.FIRST_ROWS
    if total <= first:
        return True
    return ui.url_toggle(
        f"Show all {F.count(total)} rows",
        "all",
        page,
        help=f"The table draws its first {first} rows in the order chosen; the filters' "
        "search finds any model, and the downloads hold every row.",
    )


DOWNLOADS_TITLE = "Download this table: CSV, JSON, LaTeX, Every Eval Ever"


@st.fragment
def board_downloads(
    table: Callable[[], pd.DataFrame],
    stem: str,
    page: str,
    eee: Callable[[], bytes] | None,
) -> None:
    """The table's downloads (widgets.download_buttons), drawn when opened (four buttons
    cost the browser their code and a render on every first view), in a fragment: opening
    it reruns this alone."""
    box = st.expander(DOWNLOADS_TITLE, icon="⬇️", key=f"{page}.downloads", on_change="rerun")
    if box.open:
        with box:
            widgets.download_buttons(table, stem, page, eee=eee)


def board_table(
    table: pd.DataFrame,
    helps: dict[str, str],
    screened: tuple[pd.DataFrame, list[str]] | None = None,
) -> None:
    """The board as shown (L.display_table): the CI drawn in its row, numbers in the
    formatter's decimals, "—" where a number is not given (a paper's rank, CI or n;
    L.screen_table, or `screened`, its result made before), a hover definition on every
    column (L.column_help)."""
    shown, text = screened if screened is not None else L.screen_table(table)
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


RUN_CARD_TITLE = "Inspect a run: its details, the samples it gets wrong, a comparison"


def run_card(
    con: Q.Con, shown: pd.DataFrame, page: str, view: L.BoardQuery, metric_title: str
) -> None:
    """'Inspect a run', folded away and drawn only when open (its picker of every run costs
    the browser a widget's code and a long list on the first view); open at first when the
    link names a run. Folded, the link names none (a copied link opens the page as it is)."""
    key = f"{page}.runcard"
    # the first state, fixed for the session (as the filters': a state that followed the
    # URL would change the expander's identity when a run is picked, and the next click
    # that folds it would be lost)
    first = bool(st.session_state.setdefault(f"{key}.first", bool(ui.url_value("run"))))
    box = st.expander(RUN_CARD_TITLE, expanded=first, icon="🔎", key=key, on_change="rerun")
    if not box.open:
        ui.set_url_value("run", None)
        return
    with box:
        _run_card(con, shown, page, view, metric_title)


def _run_card(
    con: Q.Con, shown: pd.DataFrame, page: str, view: L.BoardQuery, metric_title: str
) -> None:
    """The chosen run's number, model facts and links to its wrong samples and to the
    compare page."""
    run_rows = shown[shown["origin_code"] != "reported"]
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
        if r.get("verified"):
            st.text(f"Verification: {r['verified']}")
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
            chart_or_caption(
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
    chart_or_caption(ch, f"No {metric_title} per {what} for the rows shown.")
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
    chart_or_caption(ch, "No per-error-type numbers for the rows shown.")
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
