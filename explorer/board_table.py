"""The leaderboard table as shown and downloaded: the reader's filters and order (`Look`,
`filter_rows`), the columns (compact by default, the rest through the picker; empty ones left
out), each row's CI drawn, the column help, the pairwise matrix as text, the link to the
samples a run gets wrong, file names and the Every Eval Ever download.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evaluator.core import formatting as F
from evaluator.core.formatting import plural
from evaluator.core.vocabulary import (
    MODEL_KIND_LABELS,
    ORIGIN_BADGES,
    ORIGIN_HELP,
    lower_is_better,
    metric_definition,
    metric_label,
    metric_names,
    slice_definition,
    slice_label,
)
from evaluator.submissions import verification
from explorer.board_types import Board

COLUMN_TITLES = {
    "rank": "Rank",
    "model": "Model",
    "kind": "Kind",
    "origin": "Origin",
    "ci_bar": "95% CI",
    "ci": "CI bounds",
    "delta": "Δ to best run",
    "delta_ci": "Δ 95% CI (paired)",
    "delta_p": "p vs best run",
    "n": "n",
    "source": "Source",
    "flag": "Check",
    "coverage": "Coverage",
    "split": "Split",
    "config": "Config",
    "note": "Note",
    "threshold": "Threshold",
    "org": "Org",
    "params": "Params",
    "run_id": "Run",
    "version": "Version",
    "created": "Created",
    "verified": "Verification",
}
# the columns a reader can show or hide (the column picker), in the order the table shows
# them; rank, model and the view's metric are always there
OPTIONAL_COLUMNS = [
    "kind",
    "ci_bar",
    "ci",
    "delta",
    "delta_ci",
    "delta_p",
    "n",
    "source",
    "origin",
    "verified",
    "coverage",
    "split",
    "config",
    "note",
    "threshold",
    "org",
    "params",
    "run_id",
    "version",
    "created",
]
# a handful by default, as the leaderboards readers know (rank, model, kind, score with its
# CI drawn, the difference to the best, n, source)
DEFAULT_COLUMNS = ["kind", "ci_bar", "delta", "n", "source"]
RUN_SOURCE = "FactBoard run"


SORTS = {"value": "score", "rank": "rank", "model": "model", "n": "n"}


@dataclass(frozen=True)
class Look:
    """How the reader filters, orders and widens the board (the row of widgets above it)."""

    search: str = ""
    kinds: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()
    sort: str = "value"
    columns: tuple[str, ...] = tuple(DEFAULT_COLUMNS)
    verified: tuple[str, ...] = ()  # verification statuses (evaluator.submissions.verification)
    rows: str = "all"  # which rows (ROW_SETS): FactBoard's runs, published numbers or both


FIRST_ROWS = 100  # rows a board draws until the reader asks for all (first_rows)


def first_rows(shown: pd.DataFrame, every: bool) -> pd.DataFrame:
    """The rows the table draws: all of them when `every`, else the first FIRST_ROWS in the
    table's order. A board of thousands of runs would otherwise send every row (each with its
    drawn CI) to the browser on every view; the downloads, the run card and the charts keep
    every row."""
    return shown if every else shown.head(FIRST_ROWS)


def count_line(shown: pd.DataFrame, rows: pd.DataFrame, drawn: int | None = None) -> str:
    """'**5** rows shown (4 FactBoard runs, 1 published number) of 9' (markdown); when only
    the first `drawn` rows are drawn (first_rows), 'The first **100** of **2,000** rows
    (...) of 9,000'."""
    n_runs = int((shown["origin_code"] != "reported").sum())
    published = plural(len(shown) - n_runs, "published number")
    kinds = f"({plural(n_runs, 'FactBoard run')}, {published})"
    if drawn is not None and drawn < len(shown):
        of = "" if len(shown) == len(rows) else f" of {F.count(len(rows))}"
        return f"The first **{F.count(drawn)}** of **{F.count(len(shown))}** rows {kinds}{of}"
    head = plural(len(shown), "row").split(" ", 1)
    return f"**{head[0]}** {head[1]} shown {kinds} of {F.count(len(rows))}"


def column_label(column: str) -> str:
    """A column's title in the picker: 'm:fpr' -> 'FPR', 'run_id' -> 'Run'."""
    if column.startswith("m:"):
        return metric_label(column[2:])
    return COLUMN_TITLES.get(column, column)


def column_titles(board: Board | None, metric_title: str) -> dict[str, str]:
    """Column key -> title for this board: a published-only board's rank is a rank by value,
    and its differences are to the top number, not to a run."""
    names = {**COLUMN_TITLES, "value": metric_title}
    if board is not None and board.rank_by == "value":
        names["rank"] = "Rank (by value)"
        names["delta"] = "Δ to top"
    return names


def kinds_present(rows: pd.DataFrame) -> list[str]:
    """The model kinds among the rows, in the vocabulary's order."""
    have = set(rows["kind_code"].dropna().unique().tolist())
    return [k for k in MODEL_KIND_LABELS if k in have]


def origins_present(rows: pd.DataFrame) -> list[str]:
    have = set(rows["origin_code"].dropna().unique().tolist())
    return [o for o in ORIGIN_BADGES if o in have]


def verified_present(rows: pd.DataFrame) -> list[str]:
    """The verification statuses among the rows, in the vocabulary's order."""
    have = set(rows["verified_code"].dropna().unique().tolist())
    return [v for v in verification.STATUSES if v in have]


def filter_rows(rows: pd.DataFrame, metric: str, look: Look | None = None) -> pd.DataFrame:
    """The board rows the reader asked for: name contains the search (case-insensitive), of
    the chosen kinds, origins and verification statuses, ordered by score (the board's
    order), rank, model name or n."""
    look = look or Look()
    search, kinds, origins, sort = look.search, look.kinds, look.origins, look.sort
    shown = rows
    if search:
        shown = shown[shown["model"].str.lower().str.contains(search.lower(), regex=False)]
    if kinds:
        shown = shown[shown["kind_code"].isin(kinds)]
    if origins:
        shown = shown[shown["origin_code"].isin(origins)]
    if look.verified:
        shown = shown[shown["verified_code"].isin(look.verified)]
    if sort == "rank":
        lower = lower_is_better(metric)
        shown = shown.sort_values(["rank", "value"], ascending=[True, lower], na_position="last")
    elif sort == "model":
        shown = shown.sort_values("model", key=lambda c: c.str.lower())
    elif sort == "n":
        shown = shown.sort_values("n", ascending=False, na_position="last")
    return shown


CI_WIDTH, CI_HEIGHT, CI_PAD = 160, 22, 7  # the drawn CI, in SVG pixels
CI_COLOR, CI_POINT, PUBLISHED_POINT = "%236f9fd8", "%2317365d", "%238c8c8c"  # (%23: '#')


def _ci_svg(lo: int, v: int, hi: int, has_ci: bool) -> str:
    """One row's drawing as a data URI: the CI as a bar and the value as a dot, or a
    published number as a hollow dot. Kept short (every row sends one to the
    browser) and written as it is: in a data URI only '#' and '%' need escaping."""
    y = CI_HEIGHT // 2
    mark = (
        f"<path d='M{lo} {y}H{hi}' stroke='{CI_COLOR}' stroke-width='7'/>"
        f"<circle cx='{v}' cy='{y}' r='2.5' fill='{CI_POINT}'/>"
        if has_ci
        else f"<circle cx='{v}' cy='{y}' r='3.5' fill='none' stroke='{PUBLISHED_POINT}'/>"
    )
    return (
        "data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg' "
        f"width='{CI_WIDTH}' height='{CI_HEIGHT}'>"
        f"{mark}</svg>"
    )


def ci_images(rows: pd.DataFrame) -> list[str | None]:
    """Each row's 95% CI drawn on the scale shared by the table (a small forest plot, one
    image per row: the interval as a bar, the value as a dot; a published number without a
    CI as a hollow dot at its value); None for a row without a number. A few distinct
    drawings however many rows (positions are whole pixels)."""
    v = rows["value"].to_numpy(dtype=float, na_value=np.nan)
    lo = rows["ci_low"].to_numpy(dtype=float, na_value=np.nan)
    hi = rows["ci_high"].to_numpy(dtype=float, na_value=np.nan)
    has_v = np.isfinite(v)
    has_ci = has_v & np.isfinite(lo) & np.isfinite(hi)
    out: list[str | None] = [None] * len(rows)
    if not has_v.any():
        return out
    a = float(np.nanmin(np.r_[v[has_v], lo[has_ci]]))
    b = float(np.nanmax(np.r_[v[has_v], hi[has_ci]]))
    span = (b - a) or 1.0

    def px(x: np.ndarray) -> np.ndarray:
        t = (np.where(np.isfinite(x), x, a) - a) / span
        return np.rint(CI_PAD + t * (CI_WIDTH - 2 * CI_PAD)).astype(int)

    p_lo, p_v, p_hi = px(lo), px(v), px(hi)
    made: dict[tuple[int, int, int, bool], str] = {}
    for i in np.flatnonzero(has_v).tolist():
        key = (int(p_lo[i]), int(p_v[i]), int(p_hi[i]), bool(has_ci[i]))
        if key not in made:
            made[key] = _ci_svg(*key)
        out[i] = made[key]
    return out


def suspect_reason(config: object, note: object) -> str:
    """Why a published number is flagged: the note of a row marked suspect=yes, else ''."""
    if not isinstance(config, str) or "suspect=yes" not in config:
        return ""
    return str(note) if isinstance(note, str) and note else "flagged by the transcriber"


def _flags(rows: pd.DataFrame) -> np.ndarray:
    """'⚠ suspect: <why>' on the published numbers flagged suspect, '' elsewhere."""
    config, note = rows["config"].to_numpy(dtype=object), rows["note"].to_numpy(dtype=object)
    marked = [isinstance(c, str) and "suspect=yes" in c for c in config.tolist()]
    flagged = np.flatnonzero(np.asarray(marked, dtype=bool))
    flags = np.full(len(rows), "", dtype=object)
    flags[flagged] = [f"⚠ suspect: {suspect_reason(config[i], note[i])}" for i in flagged]
    return flags


def _each_distinct(values: np.ndarray, write: Callable[[float], str]) -> list[str]:
    """write(x) for each value, computed once per distinct value (a board of a thousand
    runs has a few hundred distinct differences)."""
    made: dict[float, str] = {}
    out = []
    for x in values.tolist():
        if x not in made:
            made[x] = write(x)
        out.append(made[x])
    return out


def _empty(col: pd.Series) -> bool:
    """Nothing to read in the column: every cell missing or blank."""
    if col.dtype.kind in "fiub" or str(col.dtype) in ("Int64", "Float64"):
        return bool(col.isna().all())
    return bool(col.map(lambda x: x is None or x != x or str(x).strip() == "").all())


def display_table(
    rows: pd.DataFrame,
    columns: Sequence[str],
    metric_title: str,
    *,
    board: Board | None = None,
    download: bool = False,
) -> pd.DataFrame:
    """The board as shown: rank, model and the view's metric, then the chosen `columns`
    (OPTIONAL_COLUMNS and other metrics 'm:<name>') in the table's order, a Check column
    when a published number is flagged; a chosen column with nothing to read on these rows
    is left out (and a Source that says 'FactBoard run' on every row). download: the same
    table for the files: the drawn CI becomes its bounds as numbers (CI low, CI high), the
    paired CI of the difference its bounds, differences and p-values stay numbers. Only the
    columns shown are read or written (a board of a thousand runs has some thirty)."""
    chosen = set(columns)
    order = ["rank", "model", *[c for c in ("kind",) if c in chosen], "value"]
    order += [c for c in OPTIONAL_COLUMNS if c in chosen and c != "kind"]
    order += [c for c in columns if c.startswith("m:") and c in rows.columns]
    flags = _flags(rows)
    if flags.any():
        at = order.index("source") + 1 if "source" in order else len(order)
        order.insert(at, "flag")
    nan = np.full(len(rows), np.nan)

    def num(c: str) -> np.ndarray:
        return rows[c].to_numpy(dtype=float, na_value=np.nan) if c in rows.columns else nan

    lo, hi = num("ci_low"), num("ci_high")
    d_lo, d_hi = num("delta_low"), num("delta_high")
    has_ci = bool((np.isfinite(lo) & np.isfinite(hi)).any())
    names = column_titles(board, metric_title)
    by_value = board is not None and board.rank_by == "value"
    out: dict[str, object] = {}
    for c in order:
        if c == "rank" and by_value and "value_rank" in rows.columns:
            out[c] = rows["value_rank"].array
        elif c in ("rank", "model", "value"):
            out[c] = rows[c].array  # (the rank keeps its missing values: Int64)
        elif c == "ci_bar" or c == "ci":
            if not has_ci:
                continue
            if download:  # the bounds as numbers, once, after the value
                out["ci_low"], out["ci_high"] = lo, hi
                names.update({"ci_low": "CI low", "ci_high": "CI high"})
            elif c == "ci_bar":
                out[c] = ci_images(rows)
            else:
                out[c] = [F.ci(a, b) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
        elif c == "delta_ci":
            if not np.isfinite(d_lo).any():
                continue
            if download:
                out["delta_low"], out["delta_high"] = d_lo, d_hi
                names.update({"delta_low": "Δ CI low (paired)", "delta_high": "Δ CI high (paired)"})
            else:
                out[c] = [
                    F.signed_ci(a, b) for a, b in zip(d_lo.tolist(), d_hi.tolist(), strict=True)
                ]
        elif c in ("delta", "delta_p"):
            v = num(c)
            if not np.isfinite(v).any():
                continue
            if download:
                out[c] = v
            elif c == "delta":
                out[c] = _each_distinct(v, lambda x: F.signed(x, missing=""))
            else:
                out[c] = _each_distinct(v, F.p_value)
        elif c == "flag":
            out[c] = flags
        elif c == "source":
            src = rows["source"]
            if not (src.fillna(RUN_SOURCE) == RUN_SOURCE).all():
                out[c] = src.to_numpy()
        elif c in rows.columns and not _empty(rows[c]):
            out[c] = rows[c].array
    names.update({c: metric_label(c[2:]) for c in out if c.startswith("m:")})
    table = pd.DataFrame(out, index=pd.RangeIndex(len(rows)))
    return table.rename(columns=names)


def column_help(
    table: pd.DataFrame, metric: str, grader: str | None, kind: str, value: str, method: str
) -> dict[str, str]:
    """The hover text of each column of display_table's table: what a metric measures (from
    the vocabulary), what the slice is, how ranks and differences are made."""
    m_def = metric_definition(metric)
    where = slice_label(kind) + (f": {value}" if value else "")
    s_def = slice_definition(kind)
    out = {
        metric_label(metric, grader): f"{m_def} Here: {where}. {s_def}".strip(),
        "Rank": method,
        "Rank (by value)": method,
        "Kind": "What the model is: a non-LLM checker, an open or proprietary LLM, people, "
        "or a simple baseline.",
        "95% CI": "The 95% bootstrap confidence interval (bar) around the number (dot), on "
        "one scale for the whole table; a hollow dot is a published number without a CI. "
        "The bounds are in the CI bounds column and the downloads.",
        "CI bounds": "The 95% bootstrap confidence interval of the number.",
        "Δ to best run": "This row's number minus the best FactBoard run's.",
        "Δ to top": "This row's number minus the top number of the table.",
        "Δ 95% CI (paired)": "95% CI of the difference to the best run by a paired bootstrap "
        "on the same samples (runs with complete per-sample predictions).",
        "p vs best run": "Two-sided paired-bootstrap p-value of the difference to the best run.",
        "n": "How many samples the number is computed on.",
        "Source": "Where the number comes from: a FactBoard run, or the paper or leaderboard "
        "that published it.",
        "Check": "Published numbers that contradict the paper's own other numbers, with the "
        "reason.",
        "Coverage": f"Which part of the benchmark the number covers. {slice_definition(kind)}",
        "Origin": ORIGIN_HELP,
        "Verification": verification.HELP,
        "Threshold": "How scores were turned into consistent / inconsistent labels.",
    }
    for c in table.columns:
        name = metric_key_of_label(str(c))
        if name and c not in out:
            out[str(c)] = metric_definition(name)
    return {c: out[c] for c in table.columns if c in out}


def metric_key_of_label(label: str) -> str | None:
    """The vocabulary name of a metric column title ('FPR' -> 'fpr'), None for other columns."""
    for name in metric_names():
        if metric_label(name) == label:
            return name
    return None


def screen_table(table: pd.DataFrame, decimals: int = 3) -> tuple[pd.DataFrame, list[str]]:
    """The table for the screen: a number column with missing values (a paper's rank, CI, n
    or AUROC) is written through evaluator.core.formatting, with its "—" where nothing is
    given (a grid shows "None" for a missing number); whole columns stay numbers (they sort
    as numbers). Returns the table and the columns made text (to align right)."""
    out = table.copy()
    made = []
    for c in table.columns:
        col = table[c]
        if col.dtype.kind not in "iuf" and str(col.dtype) not in ("Int64", "Float64"):
            continue
        missing = col.isna().to_numpy()
        if not missing.any():
            continue
        integer = col.dtype.kind in "iu" or str(col.dtype) == "Int64"
        vals = col.to_numpy(dtype=float, na_value=np.nan)
        out[c] = [F.count(v) if integer else F.number(v, decimals) for v in vals]
        made.append(str(c))
    return out, made


def pairwise_table(board: Board, labels: dict[str, str], lower: bool) -> pd.DataFrame:
    """The paired-test matrix of the best runs as shown: cell (row, column) reads '▲ p' when
    the row's run is significantly better (95%), '▼ p' when worse, '≈ p' when tied."""
    m = board.pairwise
    if m.empty:
        return pd.DataFrame()
    vals = board.pairwise_values
    sign = -1.0 if lower else 1.0
    out = {}
    for col in m.columns:
        cells = []
        for row in m.index:
            if row == col:
                cells.append("—")
                continue
            p = float(m.at[row, col])  # type: ignore[arg-type]
            better = sign * (vals[row] - vals[col]) > 0
            mark = "≈" if not p < 0.05 else ("▲" if better else "▼")
            cells.append(f"{mark} {F.p_value(p, missing='—')}")
        out[labels.get(col, col)] = cells
    return pd.DataFrame(out, index=[labels.get(r, r) for r in m.index])


ROW_SETS = {"all": "all rows", "runs": "FactBoard runs", "published": "published numbers"}


def rows_of(rows: pd.DataFrame, which: str) -> pd.DataFrame:
    """'runs' keeps FactBoard's runs, 'published' the papers' numbers, 'all' both."""
    if which == "runs":
        return rows[rows["origin_code"] != "reported"]
    if which == "published":
        return rows[rows["origin_code"] == "reported"]
    return rows


def file_stem(benchmark: str, unit: str, kind: str, value: str, metric: str) -> str:
    """A download file name from the view (characters outside [A-Za-z0-9._-] become '_')."""
    raw = "-".join(p for p in ("factboard", benchmark, unit, kind, value, metric) if p)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)[:120]


def samples_link(
    benchmark: str, unit: str, kind: str, value: str, run_id: str, split: str
) -> dict[str, str | list[str]]:
    """The samples explorer's query parameters for 'samples this run gets wrong' in the view's
    slice (domain, error/edit type or topic type; other slices open the whole split)."""
    params: dict[str, str | list[str]] = {
        "benchmark": benchmark,
        "unit": unit,
        "wrong": run_id,
        "split": str(split).split("+"),
    }
    if kind in ("domain", "dataset"):
        params["domain"] = value
    elif kind in ("edit_type", "error_type"):
        params["etype"] = value
    elif kind == "topic_type":
        params["topic"] = value
    elif kind == "dataset+topic_type" and "+" in value:
        params["domain"], params["topic"] = value.split("+", 1)
    return params


def eee_download(
    rows: pd.DataFrame, root: Path, benchmark: str | None
) -> Callable[[], bytes] | None:
    """What the board's Every Eval Ever button downloads: the runs among `rows` and the
    benchmark's published numbers, built when clicked (None when there is nothing to export).
    The run ids are listed when clicked too: the page asks on every rerun, for every row."""
    run_ids = rows.get("run_id", pd.Series(dtype=object))
    if benchmark is None and not run_ids.fillna("").astype(bool).any():
        return None

    def build() -> bytes:
        from evaluator.interop.export import eee_zip

        ids = [str(r) for r in run_ids.dropna() if r]
        return eee_zip(ids, root, reported_benchmark=benchmark)

    return build
