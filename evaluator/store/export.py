"""Leaderboard rows from stored runs and published results, exported as CSV, JSON or LaTeX.

`result_rows` is the one route from run records to result rows (run metadata + per-slice
results); the board (explorer/) parses the same run.json files with DuckDB, against a structure
derived from the same models (see docs/ARCHITECTURE.md, "Data contracts")."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from evaluator.core.types import RunRecord, SliceResult
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
    rows = result_rows(recs)
    notes = {rec.run_id: _run_note(rec) for rec in recs}
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
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


MISSING = "—"


def _missing(v: object) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and v != v  # NaN


def _needs_decimals(v: float, most: int = 4) -> int | None:
    """The fewest decimals (up to `most`) that write v exactly; None when more are needed."""
    for k in range(most + 1):
        if abs(round(v, k) - v) < 1e-9:
            return k
    return None


def whole_numbers(values: Iterable[object]) -> bool:
    """Whether a numeric column holds only whole numbers (counts such as n)."""
    return all(float(v).is_integer() for v in values if not _missing(v))  # type: ignore[arg-type]


def format_number(v: float, whole: bool = False) -> str:
    """A number as printed: whole numbers as integers; a value with at most 4 decimals keeps
    exactly its digits (a published 54.53 % is 0.5453, a printed 0.34 stays 0.34); a computed
    value with more is rounded to 3 decimals."""
    if whole:
        return str(int(round(v)))
    k = _needs_decimals(v)
    return f"{v:.{max(k, 1)}f}" if k is not None else f"{v:.3f}"


def to_latex(df: pd.DataFrame) -> str:
    """A booktabs tabular of the frame, text escaped, missing values as "—", numbers as printed
    (format_number: counts as integers, published values with their own digits)."""
    cols = list(df.columns)
    numeric = {
        c: pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
        for c in cols
    }
    whole = {c: whole_numbers(df[c]) for c in cols if numeric[c]}
    buf = io.StringIO()
    buf.write("\\begin{tabular}{" + "".join("r" if numeric[c] else "l" for c in cols))
    buf.write("}\n\\toprule\n")
    buf.write(" & ".join(latex_escape(str(c)) for c in cols) + " \\\\\n\\midrule\n")
    for row in df.itertuples(index=False):
        cells = []
        for c, v in zip(cols, row, strict=True):
            if _missing(v):
                cells.append(MISSING)
            elif numeric[c] and not isinstance(v, bool):
                cells.append(format_number(float(v), whole[c]))
            else:
                cells.append(latex_escape(str(v)))
        buf.write(" & ".join(cells) + " \\\\\n")
    buf.write("\\bottomrule\n\\end{tabular}\n")
    return buf.getvalue()


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
        return to_latex(df.drop(columns=["source", "note", "run_id", "coverage"]))
    raise ValueError(f"unknown export format {fmt!r}; known: csv, json, latex")
