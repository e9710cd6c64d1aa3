"""Leaderboard rows from stored runs and published results, exported as CSV, JSON or LaTeX.

`result_rows` is the one route from run records to result rows (run metadata + per-slice
results); the board (explorer/) parses the same run.json files with DuckDB, against a structure
derived from the same models (see docs/ARCHITECTURE.md, "Data contracts")."""

from __future__ import annotations

import io
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from evaluator.core import formatting as F
from evaluator.core.types import RunRecord, SliceResult
from evaluator.core.vocabulary import kind_label, lower_is_better, metric_label
from evaluator.store import layout, runs

EXPORT_COLUMNS = [
    "model",
    "kind",
    "origin",
    "benchmark",
    "split",
    "unit",
    "slice_kind",
    "slice_value",
    "metric",
    "grader",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "coverage",
    "source",
    "note",
    "run_id",
    "verification",  # has FactBoard re-run it (evaluator.submissions.verification); "" published
]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


# the run metadata each result row carries: column -> the RunRecord attribute path
RUN_ROW_FIELDS: dict[str, str] = {
    "run_id": "run_id",
    "benchmark": "benchmark",
    "benchmark_version": "benchmark_version",
    "model_name": "model.name",
    "model_kind": "model.kind",
    "model_org": "model.org",
    "model_params": "model.params",
    "origin": "origin",
    "policy": "threshold.policy",
    "threshold": "threshold.threshold",
    "created_at": "created_at",
    "hidden": "hidden",
    "supersedes": "supersedes",
}
RESULT_ROW_COLUMNS: list[str] = [*RUN_ROW_FIELDS, *SliceResult.model_fields]


def _attr(obj: object, path: str) -> object:
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def result_rows(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per (run, result): the run's metadata (RUN_ROW_FIELDS) beside every field of
    the result (SliceResult). The one route from run records to board rows."""
    rows = []
    for rec in records:
        meta = {col: _attr(rec, path) for col, path in RUN_ROW_FIELDS.items()}
        for r in rec.results:
            rows.append({**meta, **r.model_dump()})
    return pd.DataFrame(rows, columns=RESULT_ROW_COLUMNS)


def run_rows(root: Path | None = None, benchmark: str | None = None) -> pd.DataFrame:
    """One export row per (visible run, result)."""
    recs = runs.list_runs(root, benchmark=benchmark).runs
    from evaluator.submissions.verification import record_status

    rows = result_rows(recs)
    notes = {rec.run_id: _run_note(rec) for rec in recs}
    status = {rec.run_id: record_status(rec) for rec in recs}
    rolled = {(rec.run_id, "summary") for rec in recs if rolled_up(rec)}
    out = pd.DataFrame(
        {
            "model": rows["model_name"],
            "kind": rows["model_kind"],
            "origin": rows["origin"],
            "benchmark": rows["benchmark"],
            "split": rows["split"],
            "unit": rows["unit"],
            "slice_kind": rows["slice_kind"],
            "slice_value": rows["slice_value"],
            "metric": rows["metric"],
            "grader": rows["grader"],
            "value": rows["value"],
            "ci_low": rows["ci_low"],
            "ci_high": rows["ci_high"],
            "n": rows["n"],
            "coverage": [";".join(c or []) for c in rows["coverage"]],
            "source": [f"FactBoard run {r}" for r in rows["run_id"]],
            "note": [
                notes[r] + (ROLLED_UP_NOTE if (r, u) in rolled else "")
                for r, u in zip(rows["run_id"], rows["unit"], strict=True)
            ],
            "run_id": rows["run_id"],
            "verification": [status[r] for r in rows["run_id"]],
        },
        columns=EXPORT_COLUMNS,
    )
    return out


ROLLED_UP_NOTE = (
    "; summary level rolled up from this run's sentence labels (a summary is inconsistent if "
    "any sentence is), not a separately tuned summary-level threshold as in the papers"
)


def rolled_up(rec: RunRecord) -> bool:
    """Whether the run's summary-level numbers come from its sentence predictions (TofuEval:
    a run predicts sentences, and its summaries' labels roll up)."""
    units = {r.unit for r in rec.results}
    return {"sentence", "summary"} <= units


def _run_note(rec: RunRecord) -> str:
    """The run's configuration in the reported CSVs' key=value style."""
    t = rec.threshold
    parts = [f"threshold={t.policy}" + (f":{t.threshold:.6g}" if t.threshold is not None else "")]
    if rec.config.prompt_id:
        parts.append(f"prompt={rec.config.prompt_id}")
    if rec.config.detector:
        parts.append(f"detector={rec.config.detector}")
    return "; ".join(parts)


def reported_rows(root: Path | None = None, benchmark: str | None = None) -> pd.DataFrame:
    """Published numbers, marked origin 'reported': the tables the board shows
    (layout.reported_files: the shipped ones plus the data root's own)."""
    frames = []
    for f in layout.reported_files(root):
        df = pd.read_csv(
            f,
            dtype={"slice_value": str, "coverage": str, "note": str},
            keep_default_na=False,
            na_values={"value": [""], "n": [""]},
        )
        df["origin"] = "reported"
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=EXPORT_COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    if benchmark:
        out = out[out["benchmark"] == benchmark]
    for c in EXPORT_COLUMNS:
        if c not in out:
            out[c] = None
    return out[EXPORT_COLUMNS]


# a signed number, alone or followed by one plain parenthesised note ("-0.5 (tuned on dev)"):
# no operator, reference or call a spreadsheet could run
_SIGNED_NUMBER = re.compile(
    r"[+-](?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?%?(?: +\([^()=+\-*/^&|!@\"'<>;:\t\r\n]*\))?"
)


def is_formula(value: str) -> bool:
    """Whether a spreadsheet would read the text as a formula: it starts with = + - @, a tab
    or a carriage return, except a signed number (with at most a plain note in brackets)."""
    if not value.startswith(_FORMULA_START):
        return False
    return not (value[0] in "+-" and _SIGNED_NUMBER.fullmatch(value))


def neutralise_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """Text cells that a spreadsheet would run as a formula get a leading apostrophe; numbers,
    negative ones included, are left as they are."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object or pd.api.types.is_string_dtype(out[c]):
            out[c] = out[c].map(lambda v: "'" + v if isinstance(v, str) and is_formula(v) else v)
    return out


def to_csv(df: pd.DataFrame) -> str:
    return neutralise_formulas(df).to_csv(index=False)


def to_json(df: pd.DataFrame) -> str:
    return (
        json.dumps(
            json.loads(df.to_json(orient="records", double_precision=6)),
            indent=1,
            ensure_ascii=False,
        )
        + "\n"
    )


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
# characters a reader's text may hold, as ASCII LaTeX (pdflatex reads no Unicode symbol)
_LATEX_MACROS = {
    "Δ": r"$\Delta$",
    "δ": r"$\delta$",
    "—": "---",
    "–": "--",
    "−": "$-$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "≈": r"$\approx$",
    "…": r"\ldots{}",
    "‘": "`",
    "’": "'",
    "“": "``",
    "”": "''",
    "κ": r"$\kappa$",
    "τ": r"$\tau$",
    "ρ": r"$\rho$",
    "α": r"$\alpha$",
    " ": " ",  # no-break space
}

MISSING = "---"  # a missing value in a LaTeX table (an em dash, in ASCII)


def latex_escape(text: str) -> str:
    """Text as ASCII LaTeX: the special characters escaped, the symbols a table may hold (Δ, —,
    ±, ×, Greek letters) as macros, accented letters folded to their base letter, and anything
    else (emoji, pictographs) left out."""
    out = []
    for ch in str(text):
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in _LATEX_MACROS:
            out.append(_LATEX_MACROS[ch])
        elif ch.isascii():
            out.append(ch if ch.isprintable() else " ")
        else:
            base = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append("".join(_LATEX_SPECIAL.get(c, c) for c in base if c.isprintable()))
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _missing(v: object) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and v != v  # NaN


def whole_numbers(values: Iterable[object]) -> bool:
    """Whether a numeric column holds only whole numbers (counts such as n)."""
    return all(float(v).is_integer() for v in values if not _missing(v))  # type: ignore[arg-type]


# the columns of a table for a paper, in order: what each is called in the frames FactBoard
# exports (the CLI's rows, a page's table as shown), by its name folded to letters and digits
LATEX_COLUMNS = ("rank", "model", "kind", "value", "ci", "n", "source")
_ROLE_NAMES = {
    "rank": "rank",
    "model": "model",
    "kind": "kind",
    "value": "value",
    "cilow": "ci_low",
    "cilo": "ci_low",
    "cihigh": "ci_high",
    "cihi": "ci_high",
    "95ci": "ci",
    "ci": "ci",
    "n": "n",
    "source": "source",
}
# the long export's columns that say which number a row is (kept when they vary)
_IDENTITY = ("benchmark", "split", "unit", "slice_kind", "slice_value", "metric", "grader")
_TITLES = {
    "rank": "Rank",
    "model": "Model",
    "kind": "Kind",
    "ci": r"95\% CI",
    "n": "$n$",
    "source": "Source",
    "benchmark": "Benchmark",
    "split": "Split",
    "unit": "Level",
    "slice_kind": "Slice kind",
    "slice_value": "Slice",
    "metric": "Metric",
    "grader": "Judge",
}


def _fold(name: object) -> str:
    return re.sub(r"[^a-z0-9]+", "", str(name).casefold())


def _numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def latex_roles(df: pd.DataFrame) -> dict[str, str]:
    """Which column of the frame is each part of a paper's table (LATEX_COLUMNS and the
    identity columns): by name; the value is the column named 'value', else the first numeric
    column no other part claims (a page names it after its metric: 'BAcc')."""
    roles: dict[str, str] = {}
    for c in df.columns:
        role = _ROLE_NAMES.get(_fold(c)) or (str(c) if str(c) in _IDENTITY else None)
        if role and role not in roles:
            roles[role] = str(c)
    if "value" not in roles:
        claimed = set(roles.values())
        for c in df.columns:
            name = str(c)
            if name in claimed or name.startswith(("Δ", "delta", "p ")) or not _numeric(df[c]):
                continue
            roles["value"] = name
            break
    return roles


def to_latex(df: pd.DataFrame, columns: Sequence[str] | None = None) -> str:
    r"""A table for a paper: a booktabs tabular in ASCII (pdflatex, with \usepackage{booktabs}).

    Columns: `columns` (names of the frame) when given; else the short set LATEX_COLUMNS (rank,
    model, kind, value, the 95% CI as [lo, hi], n, source) as far as the frame has them, after
    the columns that say which number a row is when they vary (metric, slice, ...); a frame with
    none of them is written whole. Numbers through evaluator.core.formatting (values with fixed
    decimals, counts as integers), text escaped (latex_escape: no emoji, Δ as $\Delta$), a
    missing value as '---'."""
    roles = latex_roles(df)
    cells: list[tuple[str, str, list[str]]] = []  # (title, alignment, cells)
    if columns is None and not ({"model", "value"} <= roles.keys()):
        columns = [str(c) for c in df.columns]
    if columns is not None:
        for c in columns:
            col = df[c]
            num = _numeric(col)
            whole = num and whole_numbers(col)
            cells.append((latex_escape(c), "r" if num else "l", _cells(col, num, whole)))
        return _tabular(cells)
    for role in _IDENTITY:
        name = roles.get(role)
        if name is not None and df[name].nunique(dropna=False) > 1:
            text = df[name].map(lambda v: "" if _missing(v) else str(v))
            cells.append((_TITLES[role], "l", [latex_escape(v) for v in text]))
    value_title = roles["value"]
    if value_title == "value":  # the export's long rows: the metric's name when there is one
        one = "metric" in roles and df[roles["metric"]].nunique() == 1
        value_title = metric_label(str(df[roles["metric"]].iloc[0])) if one else "Value"
    for role in LATEX_COLUMNS:
        if role == "ci":
            lo, hi = roles.get("ci_low"), roles.get("ci_high")
            if lo is not None and hi is not None:
                ci = [F.ci(a, b, missing=MISSING) for a, b in zip(df[lo], df[hi], strict=True)]
                cells.append((_TITLES["ci"], "c", ci))
            elif "ci" in roles and not _numeric(df[roles["ci"]]):
                cells.append((_TITLES["ci"], "c", _cells(df[roles["ci"]], False, False)))
            continue
        found = roles.get(role)
        if found is None:
            continue
        col = df[found]
        if role == "value":
            values = [F.number(v, missing=MISSING) for v in col]
            cells.append((latex_escape(value_title), "r", values))
        elif role in ("rank", "n"):
            cells.append((_TITLES[role], "r", [_integer(v) for v in col]))
        elif role == "kind":
            labels = [kind_label(str(v)) if not _missing(v) else "" for v in col]
            cells.append((_TITLES[role], "l", [latex_escape(v) or MISSING for v in labels]))
        else:
            cells.append((_TITLES[role], "l", _cells(col, False, False)))
    return _tabular(cells)


def _integer(v: object) -> str:
    """A rank or a count: '3', '1,479'; '---' when missing (a published row has no rank)."""
    if isinstance(v, str):
        v = pd.to_numeric(v.replace(",", ""), errors="coerce")
    return F.count(v, missing=MISSING)


def _cells(col: pd.Series, numeric: bool, whole: bool) -> list[str]:
    out = []
    for v in col:
        if _missing(v) or (isinstance(v, str) and not v.strip()):
            out.append(MISSING)
        elif numeric and not isinstance(v, bool):
            out.append(F.count(v) if whole else F.number(v))
        else:
            out.append(latex_escape(str(v)) or MISSING)
    return out


def _tabular(cells: list[tuple[str, str, list[str]]]) -> str:
    buf = io.StringIO()
    buf.write("\\begin{tabular}{" + "".join(a for _, a, _ in cells) + "}\n\\toprule\n")
    buf.write(" & ".join(t for t, _, _ in cells) + " \\\\\n\\midrule\n")
    n = len(cells[0][2]) if cells else 0
    for i in range(n):
        buf.write(" & ".join(c[i] for _, _, c in cells) + " \\\\\n")
    buf.write("\\bottomrule\n\\end{tabular}\n")
    return buf.getvalue()


def _paper_order(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of a paper's table: grouped by what the number is (benchmark, split, level,
    slice, metric), best first within a group (lower-is-better metrics ascending); the order
    of values, not of significance."""
    key = ["benchmark", "split", "unit", "slice_kind", "slice_value", "metric", "grader"]
    sign = df["metric"].map(lambda m: 1.0 if lower_is_better(str(m)) else -1.0)
    out = df.assign(_order=df["value"] * sign, **{k: df[k].fillna("") for k in key})
    return out.sort_values([*key, "_order", "model"], na_position="last", kind="stable").drop(
        columns="_order"
    )


def export_results(
    fmt: str,
    benchmark: str | None = None,
    metric: str | None = None,
    slice_kind: str = "overall",
    root: Path | None = None,
) -> str:
    df = pd.concat([run_rows(root, benchmark), reported_rows(root, benchmark)], ignore_index=True)
    for c in ("value", "ci_low", "ci_high"):
        df[c] = pd.to_numeric(df[c]).astype(float)
    df["n"] = pd.to_numeric(df["n"]).round().astype("Int64")  # a count, even beside missing ones
    if metric:
        df = df[df["metric"] == metric]
    if slice_kind != "all":
        df = df[df["slice_kind"] == slice_kind]
    if fmt == "csv":
        return to_csv(df)
    if fmt == "json":
        return to_json(df)
    if fmt == "latex":
        return to_latex(_paper_order(df))
    raise ValueError(f"unknown export format {fmt!r}; known: csv, json, latex")
