"""A benchmark's slices over a frame of samples: for overall and every slice its spec declares,
the boolean mask of the rows in it, and the control variable partial correlations partial out.
The scorer, the board and the compare page take their slices from here."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from evaluator.benchmarks.registry import BenchmarkSpec, SliceSpec
from evaluator.core.errors import ScoringError


def _field_values(frame: pd.DataFrame, name: str, attrs: list[dict[str, str]]) -> list[object]:
    if name.startswith("attributes."):
        key = name.split(".", 1)[1]
        return [a.get(key) for a in attrs]
    if name not in frame.columns:
        raise ScoringError(f"slice field {name!r} is not a sample column")
    return frame[name].tolist()


def slice_masks(
    spec: BenchmarkSpec, frame: pd.DataFrame, kinds: list[str] | None = None
) -> list[tuple[str, str, np.ndarray]]:
    """(slice kind, slice value, boolean mask over frame rows) for overall and every slice."""
    n = len(frame)
    out: list[tuple[str, str, np.ndarray]] = [("overall", "", np.ones(n, dtype=bool))]
    attrs = [
        json.loads(a) if isinstance(a, str) and a else {}
        for a in frame.get("attributes", pd.Series([""] * n)).tolist()
    ]
    labels = frame["label"].to_numpy() if "label" in frame else np.full(n, np.nan)
    for s in spec.slices:
        if kinds is not None and s.kind not in kinds:
            continue
        out.extend(_one_slice(s, frame, attrs, labels))
    return out


def _one_slice(
    s: SliceSpec, frame: pd.DataFrame, attrs: list[dict[str, str]], labels: np.ndarray
) -> list[tuple[str, str, np.ndarray]]:
    cols = [_field_values(frame, f, attrs) for f in s.fields]
    n = len(frame)
    members: dict[str, list[int]] = {}
    for i in range(n):
        parts = [c[i] for c in cols]
        if s.multi:
            raw = parts[0]
            vals: list[object] = (
                list(raw) if raw is not None and not isinstance(raw, str) else []  # type: ignore[call-overload]
            )
            if s.single_only and len(vals) != 1:
                continue
            keys = [str(v) for v in dict.fromkeys(vals)]
        else:
            if any(p is None or (isinstance(p, float) and np.isnan(p)) for p in parts):
                continue
            keys = ["+".join(str(p) for p in parts)]
        for k in keys:
            members.setdefault(k, []).append(i)
    result = []
    consistent = labels == 1
    for value in sorted(members):
        mask = np.zeros(n, dtype=bool)
        mask[members[value]] = True
        if s.with_consistent:
            mask |= consistent
        result.append((s.kind, value, mask))
    return result


def correlation_control(spec: BenchmarkSpec, frame: pd.DataFrame) -> np.ndarray | None:
    """The control variable partial correlations partial out (FRANK: the summarizing system),
    one string per row of `frame`; None when the benchmark declares none."""
    if not spec.correlation_control:
        return None
    vals = _field_values(frame, spec.correlation_control, _attrs(frame))
    return np.asarray([str(v) for v in vals])


def _attrs(f: pd.DataFrame) -> list[dict[str, str]]:
    return [json.loads(a) if isinstance(a, str) and a else {} for a in f["attributes"]]
