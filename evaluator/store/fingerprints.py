"""What a stored run scored, as digests: the near-duplicate checks of submissions and imports
compare them (`scored_fingerprints`, `fingerprints_of`, `scored_like`), and a submitted file's
predictions are hashed to spot the same file sent again (`predictions_hash`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from evaluator.core.errors import FactBoardError
from evaluator.core.types import RunRecord
from evaluator.store.runs import find_run, list_runs, read_labels

SCORE_DECIMALS = 6  # scores are compared rounded to this many decimals (near-duplicates)


def fingerprints_of(rec: RunRecord, root: Path | None = None) -> dict[str, str]:
    """A stored run's scored fingerprints: as its submission recorded them, else from its
    labels.parquet ({} for a run stored without labels or unreadable)."""
    sub = rec.submission or {}
    if "labels_sha" in sub or "scores_sha" in sub:
        return {k: str(sub[k]) for k in ("labels_sha", "scores_sha") if k in sub}
    try:
        return scored_fingerprints(read_labels(find_run(rec.run_id, root)))
    except FactBoardError:
        return {}


def scored_like(
    mine: dict[str, str],
    benchmark: str,
    version: str,
    root: Path | None = None,
    exclude: str | None = None,
) -> RunRecord | None:
    """The first stored run of `benchmark` at `version` (hidden and superseded runs included)
    that scored exactly what `mine` (scored_fingerprints) did; None when none did."""
    if not mine:
        return None
    listing = list_runs(root, benchmark=benchmark, include_hidden=True, include_superseded=True)
    for r in listing.runs:
        if r.run_id == exclude or r.benchmark_version != version:
            continue
        theirs = fingerprints_of(r, root)
        if any(theirs.get(k) == v for k, v in mine.items()):
            return r
    return None


def scored_fingerprints(labels: pd.DataFrame | None) -> dict[str, str]:
    """What a run scored, as digests (near-duplicate detection): `labels_sha` over the final
    labels of the scored split (sample id and label; present when any label is), `scores_sha`
    over the scores rounded to SCORE_DECIMALS (present when any score is). Two runs with one
    equal digest scored the same thing, whatever else (explanations, a constant score column,
    the order of rows, the file format) differs. labels: LABEL_COLUMNS (labels.parquet)."""
    if labels is None or labels.empty or "sample_id" not in labels:
        return {}
    rows = labels[~labels["rolled"].fillna(False).astype(bool)] if "rolled" in labels else labels
    rows = rows.sort_values("sample_id", kind="mergesort")
    ids = rows["sample_id"].astype(str).tolist()
    out: dict[str, str] = {}

    def digest(values: list[object]) -> str:
        body = json.dumps([ids, values], separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(body.encode()).hexdigest()[:24]

    lab = pd.to_numeric(rows["final_label"], errors="coerce")
    if lab.notna().any():
        out["labels_sha"] = digest([None if pd.isna(v) else int(v) for v in lab])
    if "score" in rows:
        sc = pd.to_numeric(rows["score"], errors="coerce")
        finite = sc.where(sc.abs() < float("inf"))
        if finite.notna().any():
            out["scores_sha"] = digest(
                [None if pd.isna(v) else round(float(v), SCORE_DECIMALS) for v in finite]
            )
    return out


def predictions_hash(predictions: pd.DataFrame) -> str:
    """A stable digest of a run's predictions (to spot a re-submitted identical file)."""
    cols = [c for c in ("sample_id", "score", "label", "explanation") if c in predictions]
    body = predictions[cols].sort_values("sample_id").to_json(orient="values", double_precision=15)
    return hashlib.sha256(body.encode()).hexdigest()[:16]
