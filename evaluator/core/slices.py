"""A benchmark's slices over a frame of samples: for overall and every slice its spec declares,
the boolean mask of the rows in it, and the control variable partial correlations partial out.
The scorer, the board and the compare page take their slices from here.

Also what the scorer reads of a benchmark (`ScoringSpec`): evaluator.benchmarks.registry's
BenchmarkSpec has it, and the core needs nothing more of the benchmarks package."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import pandas as pd

from evaluator.core.errors import ScoringError
from evaluator.core.vocabulary import Task


@dataclass(frozen=True)
class SliceSpec:
    """A dimension the board can break a metric down by.

    field: a sample column ("domain", "error_types", ...) or "attributes.<key>"; a tuple of them
    makes a composite slice whose kind is the fields' kinds joined by "+" and whose values are
    joined the same way (e.g. kind "dataset+topic_type", value "mediasum+main").
    multi: the field holds a list (a sample belongs to every value in it).
    with_consistent: the slice also contains every consistent sample (SummEdits Table 10: BAcc
        per edit type over the consistent samples plus the inconsistent ones with that type).
    single_only: only samples whose list has exactly one value (TofuEval per-error-type recall).
    """

    kind: str
    field: str | tuple[str, ...]
    multi: bool = False
    with_consistent: bool = False
    single_only: bool = False

    @property
    def fields(self) -> tuple[str, ...]:
        return self.field if isinstance(self.field, tuple) else (self.field,)


class ScoringSpec(Protocol):
    """What the scorer reads of a benchmark (evaluator.benchmarks.registry.BenchmarkSpec)."""

    @property
    def name(self) -> str: ...
    @property
    def task(self) -> Task: ...
    @property
    def units(self) -> tuple[str, ...]: ...
    @property
    def splits(self) -> tuple[str, ...]: ...
    @property
    def slices(self) -> tuple[SliceSpec, ...]: ...
    @property
    def overall(self) -> Literal["pooled", "mean_over_domains"]: ...
    @property
    def correlation_control(self) -> str | None: ...
    @property
    def fixed_threshold(self) -> float | None: ...


def _field_values(frame: pd.DataFrame, name: str, attrs: list[dict[str, str]]) -> list[object]:
    if name.startswith("attributes."):
        key = name.split(".", 1)[1]
        return [a.get(key) for a in attrs]
    if name not in frame.columns:
        raise ScoringError(f"slice field {name!r} is not a sample column")
    return frame[name].tolist()


def slice_masks(
    spec: ScoringSpec, frame: pd.DataFrame, kinds: list[str] | None = None
) -> list[tuple[str, str, np.ndarray]]:
    """(slice kind, slice value, boolean mask over frame rows) for overall and every slice."""
    n = len(frame)
    out: list[tuple[str, str, np.ndarray]] = [("overall", "", np.ones(n, dtype=bool))]
    labels = frame["label"].to_numpy() if "label" in frame else np.full(n, np.nan)
    consistent = labels == 1
    for kind, value, members, with_consistent in slice_members(spec, frame, kinds):
        out.append((kind, value, members | consistent if with_consistent else members))
    return out


def slice_members(
    spec: ScoringSpec, frame: pd.DataFrame, kinds: list[str] | None = None
) -> list[tuple[str, str, np.ndarray, bool]]:
    """(slice kind, slice value, the rows whose fields hold the value, whether the slice also
    holds every consistent sample) for every slice the spec declares, values sorted: the masks
    of `slice_masks` before the consistent samples are added."""
    n = len(frame)
    attrs = [
        json.loads(a) if isinstance(a, str) and a else {}
        for a in frame.get("attributes", pd.Series([""] * n)).tolist()
    ]
    out: list[tuple[str, str, np.ndarray, bool]] = []
    for s in spec.slices:
        if kinds is not None and s.kind not in kinds:
            continue
        out.extend((s.kind, v, m, s.with_consistent) for v, m in _one_slice(s, frame, attrs))
    return out


def _one_slice(
    s: SliceSpec, frame: pd.DataFrame, attrs: list[dict[str, str]]
) -> list[tuple[str, np.ndarray]]:
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
    for value in sorted(members):
        mask = np.zeros(n, dtype=bool)
        mask[members[value]] = True
        result.append((value, mask))
    return result


def correlation_control(spec: ScoringSpec, frame: pd.DataFrame) -> np.ndarray | None:
    """The control variable partial correlations partial out (FRANK: the summarizing system),
    one string per row of `frame`; None when the benchmark declares none."""
    if not spec.correlation_control:
        return None
    vals = _field_values(frame, spec.correlation_control, _attrs(frame))
    return np.asarray([str(v) for v in vals])


def _attrs(f: pd.DataFrame) -> list[dict[str, str]]:
    return [json.loads(a) if isinstance(a, str) and a else {} for a in f["attributes"]]
