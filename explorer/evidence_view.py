"""What each run's detector said about one sample, beside its score (the Samples page): the
evidence a detector stored (evaluator.store.evidence_file.read_evidence, one sample's rows
only) turned into tables. Pure functions, no streamlit (explorer.sections renders them).

- sentence / claim / chunk / snippet: one row per part of the summary, in summary order, with
  its score, the source text that supports it best, and whether it is flagged: below the run's
  threshold (the pair's score is made from these, e.g. their minimum), or, when the run has no
  single threshold, the lowest part of a pair the run labelled inconsistent;
- question (QAGS): the question, the answer from the summary, the answer from the source, and
  their token F1.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from evaluator.core.errors import CorruptRunError
from evaluator.core.evidence import Evidence, EvidenceItem
from evaluator.store import evidence_file, layout
from explorer import queries as Q

PART_UNITS = ("sentence", "claim", "chunk", "snippet")
UNIT_LABELS = {
    "sentence": "summary sentence",
    "claim": "claim",
    "chunk": "summary chunk",
    "snippet": "summary sentence",
    "question": "question",
}
SUPPORT_LABELS = {
    "sentence": "best-supporting source sentence",
    "claim": "best-supporting source chunk",
    "chunk": "best-supporting source chunk",
    "snippet": "retrieved source snippet",
}
NO_EVIDENCE = "this detector stored no evidence"
FLAG = "⚠"


@dataclass(frozen=True)
class RunEvidence:
    """One run's evidence on one sample. evidence None: the run stored none (`stored` says
    whether the run has an evidence file at all); problem: the file could not be read."""

    run_id: str
    model_name: str
    score: float | None
    predicted: int | None  # the run's final label for the sample (0 = inconsistent)
    threshold: float | None
    evidence: Evidence | None  # as read_evidence checked it
    stored: bool
    problem: str | None = None

    @property
    def status(self) -> str:
        """What to say when there is no table: why."""
        if self.problem:
            return f"evidence unreadable: {self.problem}"
        if not self.stored:
            return NO_EVIDENCE
        return f"{NO_EVIDENCE} for this sample"


def _number(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def evidence_for_sample(
    con: Q.Con, root: Path, preds: pd.DataFrame, sample_id: str
) -> list[RunEvidence]:
    """Every run in `preds` (the visible runs' predictions for the sample, as
    Store.sample_predictions gives them), with the evidence it stored for the sample (read from
    the run folder: only this sample's rows)."""
    if preds.empty:
        return []
    preds = preds[~preds["rolled"].fillna(False).astype(bool)] if "rolled" in preds else preds
    ids = list(dict.fromkeys(str(r) for r in preds["run_id"]))
    th = Q.run_thresholds(con, ids).set_index("run_id") if ids else pd.DataFrame()
    out = []
    for _, row in preds.drop_duplicates("run_id").iterrows():
        rid = str(row["run_id"])
        threshold = _number(th.loc[rid, "threshold"]) if rid in th.index else None
        pred = _number(row.get("pred"))
        folder = layout.run_dir(rid, root)
        ev: Evidence | None = None
        problem = None
        stored = (folder / layout.EVIDENCE_FILE).is_file()
        if stored:
            try:
                got = evidence_file.read_evidence(folder, [sample_id])
            except CorruptRunError as e:
                problem = e.problem
            else:
                if got is not None and len(got):
                    ev = got["evidence"].iloc[0]
        out.append(
            RunEvidence(
                run_id=rid,
                model_name=str(row["model_name"]),
                score=_number(row.get("score")),
                predicted=None if pred is None else int(pred),
                threshold=threshold,
                evidence=ev,
                stored=stored,
                problem=problem,
            )
        )
    return out


def flags(items: list[EvidenceItem], threshold: float | None, predicted: int | None) -> list[bool]:
    """Which parts are flagged: below the threshold; without one, the lowest part of a pair
    labelled inconsistent (none of a consistent one)."""
    scores = [_number(i.get("score")) for i in items]
    if threshold is not None:
        return [s is not None and s < threshold for s in scores]
    defined = [s for s in scores if s is not None]
    if predicted != 0 or not defined:
        return [False] * len(items)
    low = min(defined)
    return [s == low for s in scores]


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (str, int, float, bool)):
        return v
    return json.dumps(v, ensure_ascii=False)


def evidence_table(r: RunEvidence) -> pd.DataFrame:
    """The run's evidence on the sample as one table (see the module's docstring for the
    columns of each unit); empty when it stored none."""
    ev = r.evidence
    if not ev:
        return pd.DataFrame()
    items = list(ev.get("items") or [])
    unit = str(ev.get("unit"))
    if unit == "question":
        return pd.DataFrame(
            {
                "question": [i.get("text") for i in items],
                "summary answer": [(i.get("extra") or {}).get("summary_answer") for i in items],
                "source answer": [(i.get("extra") or {}).get("source_answer") for i in items],
                "F1": [_number(i.get("score")) for i in items],
            }
        )
    flagged = flags(items, r.threshold, r.predicted)
    table = pd.DataFrame(
        {
            "": [FLAG if f else "" for f in flagged],
            "#": list(range(1, len(items) + 1)),
            UNIT_LABELS.get(unit, unit): [i.get("text") for i in items],
            "score": [_number(i.get("score")) for i in items],
            SUPPORT_LABELS.get(unit, "support"): [i.get("support") or "" for i in items],
        }
    )
    keys = list(dict.fromkeys(k for i in items for k in (i.get("extra") or {})))
    for k in keys:
        table[k.replace("_", " ")] = [_cell((i.get("extra") or {}).get(k)) for i in items]
    return table


def flagged_rows(table: pd.DataFrame) -> list[int]:
    """Positions of the flagged rows of an evidence_table (to highlight them)."""
    if "" not in table.columns:
        return []
    return [i for i, v in enumerate(table[""]) if v == FLAG]


def describe(r: RunEvidence) -> str:
    """One line above the table: what the parts are, how they make the score, the flag rule."""
    ev = r.evidence
    unit = str(ev.get("unit", "")) if ev else ""
    n = len(ev.get("items") or []) if ev else 0
    what = UNIT_LABELS.get(unit, unit)
    aggregate = ev.get("aggregate") if ev else None
    parts = [f"{n} {what}{'' if n == 1 else 's'}", f"score = {aggregate} of theirs"]
    if r.score is not None:
        parts.append(f"this sample's score {r.score:.4f}")
    if unit != "question":
        if r.threshold is not None:
            parts.append(f"{FLAG} below the run's threshold {r.threshold:.4f}")
        elif r.predicted == 0:
            parts.append(f"{FLAG} the lowest part of a pair labelled inconsistent")
    if ev and ev.get("note"):
        parts.append(str(ev.get("note")))
    return " · ".join(parts)
