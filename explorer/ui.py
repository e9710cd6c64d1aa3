"""Streamlit glue: the cached store, page state in the URL, cached computations, safe text.

With explorer.widgets (widgets several pages share) and explorer.sections (long page sections),
the only modules of explorer/ that import streamlit (ruff TID251). Pages call these helpers and
explorer's pure functions; they hold no logic of their own beyond layout.

Page state lives in the URL query parameters. Each stateful widget is created through one of the
`url_*` helpers below: on the first run (or when the URL changed under it: a shared link, the
browser's back button) the widget takes its value from the URL; afterwards the URL follows the
widget. Every parameter is written, whatever its value, so that a link copied from the address
bar shows the same view in another browser (a default may depend on the session, e.g. the
benchmark last chosen); only an empty search box or an empty choice whose default is empty
is left out. A URL value that names something no longer there (a deleted run, an unknown
benchmark) is reported by `missing_from_url` instead of being replaced silently.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from evaluator.benchmarks import registry
from evaluator.benchmarks.registry import BenchmarkSpec
from evaluator.core.errors import UnknownNameError
from evaluator.core.formatting import plural
from evaluator.store import layout
from explorer import compare as C
from explorer import leaderboard as L
from explorer.store import Store

T = TypeVar("T")

# the pages, once: (section, file name under views/ and URL path, title, icon), in the
# navigation's order; app.py builds the navigation from it (`navigation`), links use PAGES
NAVIGATION: tuple[tuple[str, str, str, str], ...] = (
    ("Results", "home", "Who is best", "📋"),
    ("Results", "leaderboard", "Leaderboard", "🏆"),
    ("Results", "compare", "Compare", "⚖️"),
    ("Results", "across", "Across benchmarks", "🧭"),
    ("Data", "samples", "Samples", "🔎"),
    ("Data", "benchmarks", "Benchmarks", "📚"),
    ("Data", "explanations", "Explanations", "💬"),
    ("Contribute", "submit", "Submit", "📤"),
    ("Contribute", "queue", "Queue", "⏳"),
)
PAGES: dict[str, str] = {name: f"views/{name}.py" for _, name, _, _ in NAVIGATION}


def navigation() -> dict[str, list[st.Page]]:
    """The app's pages by section (the first is the default page at /), for st.navigation."""
    out: dict[str, list[st.Page]] = {}
    for i, (section, name, title, icon) in enumerate(NAVIGATION):
        page = st.Page(PAGES[name], title=title, icon=icon, url_path=name, default=i == 0)
        out.setdefault(section, []).append(page)
    return out


# --------------------------------------------------------------------------------------------
# the store


@st.cache_resource(show_spinner=False)
def _store(root: str) -> Store:
    return Store(Path(root))


# How often a page looks at every run folder for a change made by hand (a run.json edited in
# place). What the engine changes (a run added, deleted, hidden, its reproduction recorded)
# moves the runs folder's mtime and is seen at once without that scan.
REFRESH_EVERY_S = 30.0


def store(force: bool = False) -> Store:
    """This process's store for the current data root, refreshed: a run added, deleted or
    rewritten by the engine (moderation, a reproduction's outcome) at once, a run.json edited by
    hand within REFRESH_EVERY_S seconds, or at once with force."""
    s = _store(str(layout.data_root()))
    s.refresh(0.0 if force else REFRESH_EVERY_S)
    return s


NOTICE_MARK = "ℹ️"  # the mark of the quiet line at the top of every page


def hub_notice(notice: Any) -> None:
    """The results repo's line at the top of every page (evaluator.hub.background.page_notice):
    a warning when the repo cannot be reached or refused the token; a quiet line when the board
    runs on its own data (no results repo), kept out of the page's own notices: a caption
    (an HTML element would cost every new browser tab the code of st.html and its sanitizer
    before its first page is complete)."""
    if notice is None:
        return
    if notice.level == "warning":
        st.warning(md_escape(notice.text), icon="⚠️")
        return
    st.caption(f"{NOTICE_MARK} {md_escape(notice.text)}")


def problems_notice(s: Store) -> None:
    """A compact notice when files in the data folder could not be read (their runs are left
    off the board), with the details folded away for maintainers."""
    problems = dict(s.problems)
    if not problems:
        return
    n = len(problems)
    with st.expander(
        f"⚠️ {plural(n, 'file')} in the data folder could not be read; what "
        f"{'it holds is' if n == 1 else 'they hold is'} left off the board",
        expanded=False,
    ):
        st.dataframe(
            pd.DataFrame(
                {"folder": list(problems), "problem": list(problems.values())}
            ).sort_values("folder"),
            hide_index=True,
            width="stretch",
        )
        st.caption("For maintainers: fix or remove these folders; the board picks them up.")


def submitter_key() -> str | None:
    """Whose quota an upload from this browser counts against: the Hugging Face user when the
    Space signs visitors in (OAuth), else the client's address as the Space's proxy saw it (the
    X-Forwarded-For entry the trusted proxy appended, never one the client wrote itself:
    quotas.client_address)."""
    from evaluator.submissions import quotas

    def text(v: object) -> str | None:  # outside a browser session these may not be strings
        return v.strip() or None if isinstance(v, str) else None

    user = None
    try:
        if st.user.is_logged_in is True:
            user = text(st.user.get("preferred_username")) or text(st.user.get("email"))
    except (AttributeError, KeyError, st.errors.StreamlitAPIException):
        user = None  # no sign-in configured
    client = quotas.client_address(
        text(st.context.headers.get("X-Forwarded-For")),
        text(st.context.ip_address),
        quotas.trusted_proxies(),
    )
    return quotas.submitter_key(user, client)


def spec_of(name: str) -> BenchmarkSpec | None:
    try:
        return registry.get(name)
    except UnknownNameError:
        return None


# --------------------------------------------------------------------------------------------
# URL state

_SEEN = "_url_seen"


def _url_values(name: str) -> tuple[str, ...]:
    return tuple(st.query_params.get_all(name))


def _adopt_url(
    name: str,
    key: str,
    value_from_url: Callable[[tuple[str, ...]], Any],
    valid: Callable[[Any], bool],
    default: Any,
) -> None:
    """Put the URL's value into the widget state when the URL is new to this session."""
    seen: dict[str, tuple[str, ...]] = st.session_state.setdefault(_SEEN, {})
    url = _url_values(name)
    if key not in st.session_state or seen.get(name) != url:
        v = value_from_url(url) if url else default
        st.session_state[key] = v if valid(v) else default
        seen[name] = url
    elif not valid(st.session_state[key]):
        st.session_state[key] = default


def _write_url(name: str, value: Any, default: Any) -> None:
    """Write the widget's value to the URL, always (never left out because it equals the
    default). Empty values are left out unless the default is not empty: an emptied
    multiselect whose default has items is written as one blank value."""
    seen: dict[str, tuple[str, ...]] = st.session_state.setdefault(_SEEN, {})
    empty = value is None or value == "" or (isinstance(value, list | tuple) and not value)
    default_empty = (
        default is None or default == "" or (isinstance(default, list | tuple) and not default)
    )
    if empty and default_empty:
        if name in st.query_params:
            del st.query_params[name]
    elif empty:
        if list(_url_values(name)) != [""]:
            st.query_params[name] = ""
    elif isinstance(value, list | tuple):
        if list(_url_values(name)) != [str(v) for v in value]:
            st.query_params[name] = [str(v) for v in value]
    elif st.query_params.get(name) != str(value):
        st.query_params[name] = str(value)
    seen[name] = _url_values(name)


def missing_from_url(name: str, options: Sequence[Any]) -> str | None:
    """The URL's value of `name` when it names none of `options` (a run or benchmark that no
    longer exists), else None; pages say so instead of showing another silently."""
    url = [v for v in _url_values(name) if v]
    if not url:
        return None
    texts = {str(o) for o in options}
    return None if url[0] in texts else url[0]


def url_selectbox(
    label: str,
    options: Sequence[T],
    name: str,
    page: str,
    default: T | None = None,
    format_func: Callable[[T], str] = str,
    container: Any = None,
    **kw: Any,
) -> T:
    """A selectbox whose value is the URL parameter `name` (an option's str())."""
    return _url_choice(
        "selectbox", label, options, name, page, default, format_func, container, **kw
    )


def url_radio(
    label: str,
    options: Sequence[T],
    name: str,
    page: str,
    default: T | None = None,
    format_func: Callable[[T], str] = str,
    container: Any = None,
    **kw: Any,
) -> T:
    """Radio buttons whose value is the URL parameter `name` (an option's str())."""
    return _url_choice("radio", label, options, name, page, default, format_func, container, **kw)


def _url_choice(
    widget: str,
    label: str,
    options: Sequence[T],
    name: str,
    page: str,
    default: T | None,
    format_func: Callable[[T], str],
    container: Any,
    **kw: Any,
) -> T:
    """One choice among options, kept in the URL parameter `name` (an option's str())."""
    opts = list(options)
    if not opts:
        raise ValueError(f"no options for {name}")
    by_text = {str(o): o for o in opts}
    dflt = default if default in opts else opts[0]
    key = f"{page}.{name}"
    _adopt_url(name, key, lambda u: by_text.get(u[0]), lambda v: v in opts, dflt)
    make = getattr(container or st, widget)
    value = make(label, opts, key=key, format_func=format_func, **kw)
    _write_url(name, str(value), str(dflt))
    return value  # type: ignore[no-any-return]


def url_multiselect(
    label: str,
    options: Sequence[str],
    name: str,
    page: str,
    default: Sequence[str] = (),
    container: Any = None,
    format_func: Callable[[str], str] = str,
    **kw: Any,
) -> list[str]:
    opts = list(options)
    key = f"{page}.{name}"
    dflt = [d for d in default if d in opts]
    _adopt_url(
        name,
        key,
        lambda u: [v for v in u if v in opts],
        lambda v: isinstance(v, list) and all(x in opts for x in v),
        dflt,
    )
    value = (container or st).multiselect(label, opts, key=key, format_func=format_func, **kw)
    _write_url(name, list(value), dflt)
    return list(value)


def url_text(label: str, name: str, page: str, container: Any = None, **kw: Any) -> str:
    key = f"{page}.{name}"
    _adopt_url(name, key, lambda u: u[0][:200], lambda v: isinstance(v, str), "")
    value = (container or st).text_input(label, key=key, max_chars=200, **kw)
    _write_url(name, value.strip(), "")
    return str(value).strip()


def url_toggle(label: str, name: str, page: str, container: Any = None, **kw: Any) -> bool:
    key = f"{page}.{name}"
    _adopt_url(
        name,
        key,
        lambda u: u[0] in ("1", "true", "yes"),
        lambda v: isinstance(v, bool),
        False,
    )
    value = bool((container or st).toggle(label, key=key, **kw))
    _write_url(name, "1" if value else "0", "")
    return value


def url_page_number(
    name: str, page: str, num_pages: int, reset_token: object, container: Any = None
) -> int:
    """st.pagination bound to the URL parameter `name` (1-based).

    st.pagination always has a default, so instead of writing its session state (which
    Streamlit warns about) a new widget instance starts at the wanted page whenever the URL
    changes under it or the filters change (`reset_token`: back to page 1).
    """
    seen: dict[str, tuple[str, ...]] = st.session_state.setdefault(_SEEN, {})
    state_key = f"{page}.{name}._state"
    url = _url_values(name)
    state = st.session_state.get(state_key)
    if state is None or seen.get(name) != url:
        start = int(url[0]) if url and url[0].isdigit() else 1
        state = (state[0] + 1 if state else 0, reset_token, start)
    elif state[1] != reset_token:
        state = (state[0] + 1, reset_token, 1)
    st.session_state[state_key] = state
    pages = max(1, num_pages)
    start = min(max(1, state[2]), pages)
    value = int((container or st).pagination(pages, default=start, key=f"{page}.{name}.{state[0]}"))
    _write_url(name, str(value), "1")
    return value


def url_tabs(
    labels: Sequence[str], name: str, page: str, default: str | None = None
) -> tuple[list[Any], str]:
    """Tabs whose active tab is the URL parameter `name`; only the active tab's content needs
    to be computed (returns the tab containers and the active label)."""
    opts = list(labels)
    dflt = default if default in opts else opts[0]
    key = f"{page}.{name}"
    _adopt_url(name, key, lambda u: u[0], lambda v: v in opts, dflt)
    tabs = st.tabs(opts, key=key, on_change="rerun")
    active = str(st.session_state.get(key) or dflt)
    _write_url(name, active, dflt)
    return list(tabs), active


def url_value(name: str) -> str | None:
    """A URL parameter that no widget owns (the selected sample)."""
    v = st.query_params.get(name)
    return str(v) if v else None


def set_url_value(name: str, value: str | None) -> None:
    if value:
        if st.query_params.get(name) != value:
            st.query_params[name] = value
    elif name in st.query_params:
        del st.query_params[name]


def sticky_benchmark(options: Sequence[str], default: str | None = None) -> str | None:
    """The benchmark last chosen on any page of this session (when the URL names none)."""
    v = st.session_state.get("_benchmark")
    if v in options:
        return str(v)
    return default if default in options else (options[0] if options else None)


def remember_benchmark(name: str) -> None:
    st.session_state["_benchmark"] = name


def page_url(page: str, **params: Any) -> str:
    """A relative link to another page with its state, e.g. for a dataframe LinkColumn."""
    q = {k: v for k, v in params.items() if v not in (None, "", [], ())}
    return f"./{page}" + (f"?{urlencode(q, doseq=True)}" if q else "")


def absolute_url(page: str, **params: Any) -> str:
    """The full link to a page with its state, from the address the browser used."""
    rel = page_url(page, **params)[2:]
    base = ""
    try:
        url = st.context.url or ""
    except Exception:  # outside a browser session (AppTest)
        url = ""
    if url:
        from urllib.parse import urlsplit

        u = urlsplit(url)
        path = u.path.rstrip("/")
        last = path.rsplit("/", 1)[-1] if path else ""
        if last in PAGES:
            path = path[: -len(last)].rstrip("/")
        base = f"{u.scheme}://{u.netloc}{path}/"
    return (base or "/") + rel


# --------------------------------------------------------------------------------------------
# cached computations (keyed on the store's token: a new or changed run invalidates them)


def board(
    root: str,
    token: str,
    benchmark: str,
    unit: str,
    slice_kind: str,
    slice_value: str,
    metric: str,
    grader: str | None,
    resamples: int = 1000,
    *,
    metrics: bool = False,
) -> L.Board:
    """The view's board (L.build_board), built once per data version (token) and view and
    shared by every session; each call gets its own copy of the board's frames and lists
    (pandas' copy on write: a caller that changes its copy leaves the kept board as it was),
    not a copy of every cell. The runs' other metrics are columns whose values are read only
    for a caller that shows one (metrics=True)."""
    view = (root, token, benchmark, unit, slice_kind, slice_value, metric, grader, resamples)
    b = _board(*view)
    rows = _board_with_metrics(*view) if metrics else b.rows
    return dataclasses.replace(
        b,
        rows=rows.copy(deep=False),
        notes=list(b.notes),
        paired_runs=list(b.paired_runs),
        other_metrics=list(b.other_metrics),
        pairwise=b.pairwise.copy(deep=False),
        pairwise_values=dict(b.pairwise_values),
    )


# kept as the object itself, not pickled: st.cache_data would pickle a board of thousands of
# runs when it is made and unpickle it on every view that reads it (at 10,000 runs some 20 ms
# a view); read-only to its callers, which get it through `board`. Fewer than the pickled
# boards were: a kept board takes more memory than its pickle (at 10,000 runs 7 MB, not 5)
@st.cache_resource(show_spinner="Ranking…", max_entries=64)
def _board(
    root: str,
    token: str,
    benchmark: str,
    unit: str,
    slice_kind: str,
    slice_value: str,
    metric: str,
    grader: str | None,
    resamples: int,
) -> L.Board:
    s = _store(root)
    q = L.BoardQuery(benchmark, unit, slice_kind, slice_value, metric, grader)
    dims = dimensions(root, token, benchmark)
    return L.build_board(
        s.cursor(),
        q,
        spec_of(benchmark),
        s.version(benchmark),
        resamples,
        memo=s.memo,
        ensure=lambda ids: s.ensure_labels(benchmark, ids, predictions=False),
        labels=lambda ids, frame, scores: s.label_vectors(benchmark, unit, frame, ids, scores),
        run_metrics=L.run_metrics(dims, unit, slice_kind, slice_value),
    )


@st.cache_resource(show_spinner=False, max_entries=16)
def _board_with_metrics(
    root: str,
    token: str,
    benchmark: str,
    unit: str,
    slice_kind: str,
    slice_value: str,
    metric: str,
    grader: str | None,
    resamples: int,
) -> pd.DataFrame:
    """The kept board's rows with its runs' other metrics read (L.with_other_values), kept
    as _board is, for a view that shows a column of one."""
    b = _board(root, token, benchmark, unit, slice_kind, slice_value, metric, grader, resamples)
    q = L.BoardQuery(benchmark, unit, slice_kind, slice_value, metric, grader)
    return L.with_other_values(_store(root).cursor(), q, b.rows)


@st.cache_data(show_spinner=False, max_entries=64)
def published_rows(root: str, token: str, benchmark: str, unit: str, metric: str) -> pd.DataFrame:
    """A published-only benchmark's overall rows, best first (L.published_rows)."""
    q = L.BoardQuery(benchmark, unit, "overall", "", metric, None)
    return L.published_rows(_store(root).cursor(), q)


@st.cache_data(show_spinner=False, max_entries=4)
def _all_dimensions(root: str, token: str) -> pd.DataFrame:
    return _store(root).result_dimensions()


@st.cache_data(show_spinner=False, max_entries=64)
def dimensions(root: str, token: str, benchmark: str) -> pd.DataFrame:
    """Every (unit, slice, metric) with a number on the benchmark (Q.result_dimensions), cut
    from one pass over every benchmark's results (the front page asks for each)."""
    s = _store(root)
    every = _all_dimensions(root, s.token())
    one = every[every["benchmark"] == benchmark].drop(columns="benchmark")
    return one.reset_index(drop=True)


@st.cache_data(show_spinner=False, max_entries=16)
def board_benchmarks(root: str, token: str) -> tuple[list[str], list[str]]:
    """(benchmarks with runs, benchmarks with published numbers)."""
    from explorer import queries as Q

    con = _store(root).cursor()
    return Q.run_benchmarks(con), Q.reported_benchmarks(con)


@st.cache_data(show_spinner=False, max_entries=128)
def slice_long(
    root: str, token: str, benchmark: str, unit: str, metric: str, kind: str, rows: pd.DataFrame
) -> pd.DataFrame:
    q = L.BoardQuery(benchmark, unit, "overall", "", metric, None)
    return L.slice_long(_store(root).cursor(), q, kind, rows)


@st.cache_data(show_spinner="Comparing… (paired bootstrap)", max_entries=64)
def comparison(
    root: str, token: str, benchmark: str, unit: str, run_a: str, run_b: str, metric: str
) -> C.Comparison:
    s = _store(root)
    s.ensure_labels(benchmark, [run_a, run_b])
    spec = registry.get(benchmark)
    return C.compare_runs(s.cursor(), spec, unit, run_a, run_b, metric)


# --------------------------------------------------------------------------------------------
# safe text

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~<$&:])")


def md_escape(text: object) -> str:
    """Text safe to put inside st.markdown: markdown, HTML and LaTeX markers are escaped."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def text_box(text: str | None, empty: str = "(empty)") -> None:
    """Untrusted multi-line text (a document, an explanation) as escaped HTML, wrapped."""
    body = html.escape(text if text else empty, quote=True)
    st.html(
        '<div style="white-space:pre-wrap;font-size:0.95rem;line-height:1.55;'
        "padding:0.5rem 0.75rem;border-left:3px solid rgba(49,51,63,0.25);max-height:28rem;"
        f'overflow-y:auto">{body}</div>'
    )


def no_data(message: str) -> None:
    st.info(message, icon="ℹ️")


def board_names_or_stop(s: Store) -> tuple[list[str], list[str]]:
    """(ingested benchmarks, every benchmark with something to show, in board order); with
    nothing at all, says how to get started and stops the page."""
    ingested = s.benchmarks()
    names = L.benchmark_order(ingested, *board_benchmarks(str(s.root), s.token()))
    if not names:
        no_data(
            "No benchmark and no result yet. Run `python -m evaluator demo` for the built-in "
            "demo, or ingest a benchmark: `python -m evaluator ingest NAME --from PATH`."
        )
        st.stop()
    return ingested, names


def header(title: str, caption: str) -> None:
    st.title(title)
    st.caption(caption)
