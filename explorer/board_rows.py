"""The board's rows of FactBoard runs: each run's own columns (name, kind, origin, source,
threshold in words, size), made once per run and kept in the memo (`run_fields`), joined to
the view's numbers from one narrow query; what a number covers in words; each row's label.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evaluator.core.formatting import plural
from evaluator.core.vocabulary import (
    ORIGIN_BADGES,
    kind_label,
)
from evaluator.submissions import verification
from explorer import queries as Q
from explorer.board_types import BoardQuery

_CONFIG_PAIR = re.compile(r"^[a-z_]+=[^ ]")
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bBmM])(?![a-zA-Z])")


def split_note(note: str | None) -> tuple[str, str]:
    """A reported row's note -> (configuration 'key=value; ...', free text)."""
    if not note or not isinstance(note, str):
        return "", ""
    config: list[str] = []
    text: list[str] = []
    for part in note.split("; "):
        (config if _CONFIG_PAIR.match(part) and not text else text).append(part)
    return "; ".join(config), "; ".join(text)


def params_to_float(params: str | None, name: str | None = None) -> tuple[float | None, str]:
    """'7B' -> 7e9. Falls back to a size written in the model name ('Llama2-13b').
    Returns (count, where it came from: 'stated' / 'from name' / '')."""
    for text, where in ((params, "stated"), (name, "from name")):
        if not text or not isinstance(text, str):
            continue
        m = _SIZE.search(text)
        if m:
            scale = 1e9 if m.group(2).lower() == "b" else 1e6
            return float(m.group(1)) * scale, where
    return None, ""


def as_list(v: object) -> list[str] | None:
    """A list cell from DuckDB/pandas (list, ndarray, None, NA, NaN) as a list of str or None."""
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, str):
        return [c for c in v.split(";") if c]
    try:
        return [str(x) for x in v]  # type: ignore[attr-defined]
    except TypeError:
        return None


def coverage_text(
    cov: Sequence[str] | str | None, declared: Sequence[str], slice_kind: str, slice_value: str
) -> str:
    """What a number covers, in words: '8/10 domains (no billsum, shakespeare)'."""
    if slice_kind in ("domain", "dataset"):
        return slice_value
    covered = as_list(cov)
    if not covered:
        return ""
    if declared:
        missing = [d for d in declared if d not in covered]
        text = f"{len([c for c in covered if c in declared])}/{len(declared)} domains"
        return text + (f" (no {', '.join(missing)})" if missing else "")
    return f"{len(covered)} domains: {', '.join(covered)}"


def _threshold_text(policy: str | None, threshold: float | None) -> str:
    if policy in (None, "", "none"):
        return ""
    if policy == "labels":
        return "labels as given"
    if policy == "per-domain-dev":
        return "per-domain, tuned on dev"
    if threshold is None or (isinstance(threshold, float) and np.isnan(threshold)):
        return str(policy)
    where = "tuned on dev" if policy == "dev" else policy
    return f"{threshold:.4g} ({where})"


RUN_FIELDS_KEY = "board-run-fields"  # memo key (with the benchmark) of the runs' own columns


def run_fields(
    con: Q.Con,
    benchmark: str,
    run_ids: pd.Series | Sequence[str],
    memo: MutableMapping[object, object],
) -> pd.DataFrame:
    """The board columns of each run that no slice changes (name, kind and origin with their
    labels, source, note, threshold in words, size, ...), one row per run id asked for, in
    that order. Made once per run and kept in `memo` per benchmark: a slice change computes
    them only for runs not seen yet. Valid because a run's fields change only when its
    run.json does, and the store then clears the memo (explorer.store.Store._refresh_runs);
    which runs are shown (hidden, superseded) is decided per slice by the query, not here.
    The ids are looked up in the kept ones by Arrow (no Python text per run)."""
    key = (RUN_FIELDS_KEY, benchmark)
    got = memo.get(key)
    have, kept = got if isinstance(got, tuple) else (None, None)
    ids = pa.array(run_ids, pa.string(), from_pandas=True)
    if have is None or kept is None:  # the first board of the benchmark: every run at once
        have = _make_run_fields(Q.board_run_fields(con, None, benchmark))
        kept = pa.array(have.index, pa.string(), from_pandas=True)
    at = pc.index_in(ids, value_set=kept)
    if at.null_count:  # runs not seen yet
        new = pc.unique(ids.filter(pc.is_null(at))).drop_null().to_pylist()
        made = _make_run_fields(Q.board_run_fields(con, new))
        have = made if have.empty else pd.concat([have, made])
        kept = pa.array(have.index, pa.string(), from_pandas=True)
        at = pc.index_in(ids, value_set=kept)
    memo[key] = (have, kept)  # (again: the most recently used)
    if at.null_count:  # a run gone since: a row of missing fields, as reindex makes
        return have.reindex(pd.Index(ids.to_pylist(), dtype=object)).reset_index(drop=True)
    return have.take(at.to_numpy(zero_copy_only=False)).reset_index(drop=True)


def _make_run_fields(f: pd.DataFrame | None) -> pd.DataFrame:
    if f is None or f.empty:
        cols = ["model", "kind_code", "origin_code", "source", "note", "org", "params"]
        cols += ["threshold", "version", "created", "missing", "unparsable", "kind", "origin"]
        cols += ["verified", "verified_code"]
        empty = pd.DataFrame({c: pd.Series(dtype="str") for c in cols})
        empty["missing"] = empty["unparsable"] = pd.Series(dtype=int)
        empty["params_value"] = pd.Series(dtype=float)
        empty["params_from"] = pd.Series(dtype="str")
        return empty.set_axis(pd.Index([], dtype=object), axis=0)
    f = f.set_index(pd.Index(f["run_id"].to_numpy(), dtype=object))
    origin, submission = f["origin"], f["submission"]
    value, where = sizes_of(f["model_params"].tolist(), f["model_name"].tolist())
    # has FactBoard re-run it? (evaluator.submissions.verification)
    checked, key = _distinct(verification.label_and_status, origin, f["recipe_config"], submission)
    return pd.DataFrame(
        {
            "model": f["model_name"],
            "kind_code": f["model_kind"],
            "origin_code": f["origin"],
            "source": each_distinct_text(run_source, origin, submission),
            "note": _run_notes(f["missing"], f["unparsable"]),
            "org": f["model_org"],
            "params": f["model_params"],
            "threshold": each_distinct_text(_threshold_text, f["policy"], f["threshold"]),
            "version": f["benchmark_version"],
            "created": f["created_at"],
            "missing": f["missing"].astype(int),
            "unparsable": f["unparsable"].astype(int),
            "kind": each_distinct_text(kind_label, f["model_kind"]),
            "origin": each_distinct_text(lambda o: ORIGIN_BADGES.get(o, o), origin),
            "params_value": value,
            "params_from": where,
            "verified": _texts([label for label, _ in checked], key),
            "verified_code": _texts([code for _, code in checked], key),
        },
        index=f.index,
    ).astype({c: "str" for c in _RUN_TEXT})  # one dtype, however many runs are kept


T = TypeVar("T")


def _codes(values: pd.Series) -> np.ndarray:
    """One code per distinct value, as a pure function of the value tells them apart: a
    float by its bits (0.0 and -0.0 apart), any other value by its value and type (1, 1.0
    and True apart; None, NaN and NA apart)."""
    if values.dtype == np.float64:
        return pd.factorize(values.to_numpy().view(np.int64))[0]
    codes = np.asarray(pd.factorize(values)[0], dtype=np.int64) + 1  # a missing value: 0
    if values.dtype == object:
        kinds = pd.factorize(np.array([type(v) for v in values.tolist()], dtype=object))[0]
        codes = pd.factorize(codes * (int(kinds.max(initial=0)) + 1) + kinds)[0]
    return codes


def _distinct(fn: Callable[..., T], *columns: pd.Series) -> tuple[list[T], np.ndarray]:
    """fn of each distinct args of the columns (a pure fn: the runs of a board share most of
    their kinds, origins and thresholds), in order of first sight, and each row's index into
    them."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col in columns:
        c = _codes(col)
        key = pd.factorize(key * (int(c.max(initial=0)) + 1) + c)[0]
    # (factorize numbers the keys in order of first sight: first[k] is key k's first row)
    first = np.unique(key, return_index=True)[1]
    args = zip(*(col.iloc[first].tolist() for col in columns), strict=True)
    return [fn(*a) for a in args], key


def _texts(made: Sequence[str | None], key: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """A text column of each row's text (made[key]), taken from the distinct texts: no text
    is converted once per row."""
    return pd.array(list(made), dtype="str").take(key)


def each_distinct_text(
    fn: Callable[..., str | None], *columns: pd.Series
) -> pd.api.extensions.ExtensionArray:
    """[fn(*args) for args in zip(*columns)] as a text array, fn called once per distinct
    args (_distinct)."""
    return _texts(*_distinct(fn, *columns))


# a text the size pattern (_SIZE) can match holds a digit (Python's \d: Unicode decimal digits,
# all within RE2's \pN) with a b or m somewhere after it: one vectorised RE2 pass over every
# text finds those, a superset of the matches, and only they are searched by _SIZE itself
_MAY_HOLD_SIZE = r"(?s)\pN.*[bBmM]"


def sizes_of(params: Sequence[object], names: Sequence[object]) -> tuple[np.ndarray, list[str]]:
    """params_to_float of many (params, name) pairs: (the counts, NaN for none; where each
    came from). Only the pairs whose params or name may hold a size are looked at one by one
    (most names hold none: 'Synthetic model 00042')."""
    n = len(params)
    value = np.full(n, np.nan)
    where = [""] * n
    texts = [[t if isinstance(t, str) else None for t in col] for col in (params, names)]
    maybe = np.zeros(n, dtype=bool)
    for col in texts:
        try:
            hit = pc.match_substring_regex(pa.array(col, pa.string()), _MAY_HOLD_SIZE)
        except (pa.ArrowException, UnicodeError):  # a text Arrow cannot hold: look at each
            maybe[:] = True
            break
        maybe |= pc.fill_null(hit, False).to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(maybe).tolist():
        v, w = params_to_float(texts[0][i], texts[1][i])
        if v is not None:
            value[i], where[i] = v, w
    return value, where


_RUN_TEXT: tuple[str, ...] = ("model", "kind_code", "origin_code", "source", "note", "org")
_RUN_TEXT += ("params", "threshold", "version", "created", "kind", "origin", "params_from")
_RUN_TEXT += ("verified", "verified_code")


def _coverage_cells(
    coverage: pd.Series, declared: Sequence[str], q: BoardQuery
) -> tuple[np.ndarray, np.ndarray]:
    """(coverage in words, the covered domains sorted and joined by ';') per row, from the
    coverage as Q.board_slice gives it; worked out once per distinct coverage."""
    codes, uniques = pd.factorize(coverage)  # no coverage (NULL): -1, the last cell below
    words = np.empty(len(uniques) + 1, dtype=object)
    joined = np.empty(len(uniques) + 1, dtype=object)
    for i, c in enumerate([*uniques.tolist(), None]):
        covered = [d for d in c.split("\x1f") if d] if isinstance(c, str) else None
        words[i] = coverage_text(covered, declared, q.slice_kind, q.slice_value)
        joined[i] = ";".join(sorted(covered or []))
    return words[codes], joined[codes]


def run_rows(
    con: Q.Con,
    q: BoardQuery,
    declared: Sequence[str],
    memo: MutableMapping[object, object],
    sl: pd.DataFrame,
) -> pd.DataFrame:
    """One row per visible run with a number for the view: the slice's columns (sl:
    BoardSlice.results, explorer.queries.results), the run's own columns from run_fields."""
    fx = run_fields(con, q.benchmark, sl["run_id"], memo)
    coverage, coverage_set = _coverage_cells(sl["coverage"], declared, q)
    return pd.DataFrame(
        {
            "model": fx["model"],
            "kind_code": fx["kind_code"],
            "origin_code": fx["origin_code"],
            "value": sl["value"].astype(float),
            "ci_low": sl["ci_low"].astype(float),
            "ci_high": sl["ci_high"].astype(float),
            "n": sl["n"].astype("Int64"),
            "coverage": coverage,
            "coverage_set": coverage_set,
            "split": sl["split"],
            "config": "",
            "source": fx["source"],
            "note": fx["note"],
            "org": fx["org"],
            "params": fx["params"],
            "threshold": fx["threshold"],
            "run_id": sl["run_id"],
            "version": fx["version"],
            "created": fx["created"],
            "missing": fx["missing"],
            "unparsable": fx["unparsable"],
            "kind": fx["kind"],
            "origin": fx["origin"],
            "params_value": fx["params_value"].astype(float),
            "params_from": fx["params_from"],
            "verified": fx["verified"],
            "verified_code": fx["verified_code"],
        }
    )


def run_source(origin: str, submission: object) -> str:
    """'FactBoard run', or for an imported run the source its Every Eval Ever record names."""
    if origin != "imported" or not isinstance(submission, str):
        return "FactBoard run"
    try:
        sub = json.loads(submission)
    except ValueError:
        sub = None
    if not isinstance(sub, dict):
        return "FactBoard run"
    who = sub.get("source_name") or sub.get("source_organization_name") or "a record"
    return f"{who} (via Every Eval Ever)"


def _run_notes(missing: pd.Series, unparsable: pd.Series) -> pd.api.extensions.ExtensionArray:
    """Each run's note on its samples without a usable prediction, worked out once per
    distinct pair of counts (most runs share one: none)."""
    return each_distinct_text(
        _run_note, missing.fillna(0).astype(int), unparsable.fillna(0).astype(int)
    )


def _run_note(missing: int, unparsable: int) -> str:
    parts = []
    if missing:
        parts.append(f"{plural(missing, 'sample')} without a prediction")
    if unparsable:
        parts.append(f"{plural(unparsable, 'unusable prediction')}")
    return "; ".join(parts)


def row_labels(rows: pd.DataFrame) -> list[str]:
    """A unique, readable label per board row (model, plus what tells same-named rows apart)."""
    config = rows["config"].fillna("").astype(str)
    rep = (rows["origin_code"] == "reported").to_numpy()
    has_config = (config != "").to_numpy()
    # most rows are runs, labelled by their model's name alone: only the others get words
    base: list[Any] = rows["model"].astype(str).tolist()
    configs = config.tolist()
    for i in np.flatnonzero(rep | has_config).tolist():
        b = base[i]
        if isinstance(b, str):  # (a missing name stays missing)
            b += " · published" if rep[i] else ""
            base[i] = b + (f" ({configs[i]})" if has_config[i] else "")
    if not pd.Series(base, dtype=object).duplicated().any():
        return base
    run_ids = rows["run_id"].tolist()
    sources = rows["source"].astype(str).tolist()
    total: dict[str, int] = {}
    for b in base:
        total[b] = total.get(b, 0) + 1
    out: list[str] = []
    taken: set[str] = set()
    for b, rid, src in zip(base, run_ids, sources, strict=True):
        if total[b] > 1:
            tag = str(rid)[-6:] if isinstance(rid, str) else src
            b = f"{b} [{tag}]"
            k = 2
            while b in taken:
                b = f"{b.rsplit(' #', 1)[0]} #{k}"
                k += 1
        taken.add(b)
        out.append(b)
    return out
