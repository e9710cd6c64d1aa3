"""evidence.parquet, a run folder's evidence: why a detector scored each pair as it did.

One row per pair with evidence (EVIDENCE_COLUMNS: sample_id, split, and the evidence of
evaluator.core.evidence.Evidence as a JSON string: {"unit", "aggregate", "items", ["note"]}),
written only when at least one pair has evidence, sorted by sample id in small row groups
(zstd), so that `read_evidence` reads one sample's rows without loading the file. Every value
is checked (`check_evidence`) when it is written and when it is read. The run folder that holds
the file is written by evaluator.store.runs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.core.errors import CorruptRunError, FactBoardError
from evaluator.core.sanitize import redact_tree, secrets_in_env
from evaluator.store.layout import EVIDENCE_FILE

EVIDENCE_SCHEMA = pa.schema(
    [("sample_id", pa.string()), ("split", pa.string()), ("evidence", pa.string())]
)
EVIDENCE_COLUMNS: tuple[str, ...] = tuple(EVIDENCE_SCHEMA.names)
EVIDENCE_ROW_GROUP = 512  # rows per row group: a sample's rows are found by its statistics


def evidence_table(evidence: pd.DataFrame) -> pa.Table | None:
    """evidence.parquet's table from sample_id, split, evidence (a dict or its JSON, None where
    a pair has none): only the pairs with evidence, each checked (`check_evidence`) and redacted,
    sorted by sample id; None when no pair has any. A bad value is a FactBoardError naming the
    sample."""
    missing = [c for c in EVIDENCE_COLUMNS if c not in evidence.columns]
    if missing:
        raise FactBoardError(f"evidence has no column(s) {', '.join(missing)}")
    secrets = secrets_in_env()
    ids: list[str] = []
    splits: list[str | None] = []
    texts: list[str] = []
    for sid, split, ev in zip(
        evidence["sample_id"], evidence["split"], evidence["evidence"], strict=True
    ):
        if ev is None or (isinstance(ev, float) and ev != ev):
            continue
        where = f"evidence of sample {sid!r}"
        if isinstance(ev, str):
            try:
                ev = json.loads(ev)
            except (json.JSONDecodeError, RecursionError) as e:
                raise FactBoardError(f"{where} is not valid JSON ({e})") from None
        problem = check_evidence(ev)
        if problem:
            raise FactBoardError(f"{where}: {problem}")
        ids.append(str(sid))
        splits.append(None if split is None else str(split))
        try:
            texts.append(json.dumps(redact_tree(ev, secrets), ensure_ascii=False, allow_nan=False))
        except ValueError as e:
            raise FactBoardError(f"{where}: {e}") from None
    if not ids:
        return None
    if len(set(ids)) != len(ids):
        dup = next(i for i, n in Counter(ids).items() if n > 1)
        raise FactBoardError(f"evidence has two rows for sample {dup!r}")
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return pa.table(
        {
            "sample_id": pa.array([ids[i] for i in order], pa.string()),
            "split": pa.array([splits[i] for i in order], pa.string()),
            "evidence": pa.array([texts[i] for i in order], pa.string()),
        },
        schema=EVIDENCE_SCHEMA,
    )


def check_evidence(ev: object) -> str | None:
    """What is wrong with one pair's evidence (evaluator.core.evidence.Evidence), or None:
    an object with a known `unit`, an `aggregate` text and `items`, each an object with a `text`
    and a numeric or null `score` (`support` text and an `extra` object optional)."""
    from evaluator.core.evidence import EVIDENCE_UNITS

    if not isinstance(ev, dict):
        return f"is {type(ev).__name__}, not an object"
    if ev.get("unit") not in EVIDENCE_UNITS:
        return f"unit {ev.get('unit')!r} is not one of {', '.join(EVIDENCE_UNITS)}"
    if not isinstance(ev.get("aggregate"), str):
        return "aggregate is missing or not text"
    items = ev.get("items")
    if not isinstance(items, list):
        return "items is missing or not a list"
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            return f"item #{i} has no text"
        score = item.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            return f"item #{i} score {score!r} is not a number"
        if item.get("support") is not None and not isinstance(item["support"], str):
            return f"item #{i} support is not text"
        if item.get("extra") is not None and not isinstance(item["extra"], dict):
            return f"item #{i} extra is not an object"
    return None


def read_evidence(run_dir: Path, sample_ids: Iterable[str] | None = None) -> pd.DataFrame | None:
    """The run's stored evidence (sample_id, split, evidence parsed into a dict), of
    `sample_ids` only when given (read through the row groups' statistics, not the whole file);
    None for a run stored without evidence. A damaged file, or a row whose evidence is not
    valid, is a CorruptRunError naming the run, the file and the sample."""
    f = run_dir / EVIDENCE_FILE
    if not f.exists():
        return None
    ids = None if sample_ids is None else sorted({str(s) for s in sample_ids})
    try:
        schema = pq.read_schema(f)
        missing = [c for c in EVIDENCE_COLUMNS if c not in schema.names]
        if missing:
            raise CorruptRunError(
                str(run_dir), f"{EVIDENCE_FILE} has no column(s) {', '.join(missing)}"
            )
        for name in EVIDENCE_COLUMNS:
            t = schema.field(name).type
            if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
                raise CorruptRunError(
                    str(run_dir), f"{EVIDENCE_FILE} column {name!r} is {t}, not text"
                )
        table = pq.read_table(
            f,
            columns=list(EVIDENCE_COLUMNS),
            filters=None if ids is None else [("sample_id", "in", ids)],
        )
    except (OSError, pa.ArrowException) as e:
        raise CorruptRunError(str(run_dir), f"{EVIDENCE_FILE} unreadable ({e})") from None
    df = table.to_pandas()
    parsed = []
    for sid, text in zip(df["sample_id"], df["evidence"], strict=True):
        where = f"{EVIDENCE_FILE}, sample {sid!r}"
        try:
            ev = json.loads(text) if text is not None else None
        except (json.JSONDecodeError, RecursionError):
            raise CorruptRunError(str(run_dir), f"{where}: evidence is not valid JSON") from None
        problem = check_evidence(ev)
        if problem:
            raise CorruptRunError(str(run_dir), f"{where}: evidence {problem}")
        parsed.append(ev)
    df["evidence"] = parsed
    return df.reset_index(drop=True)
