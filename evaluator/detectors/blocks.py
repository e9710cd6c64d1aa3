"""Blocks of samples: the unit both engines score and checkpoint.

A detector run cuts its samples into blocks of `block_size` (samples of one document kept
together, so the detector's per-document deduplication works inside a block) and scores each
block with one detector call (`score_with_evidence` when the detector has it, else `score`),
whose length-sorted batching then happens inside the block.
The local engine scores the blocks one after the other, the Ray engine on its actors; the blocks
are the same, so the scores are the same (a row's score can depend on which rows share its padded
batch, in the last bit on the CPU).

A finished block is written to a checkpoint folder (one Parquet file per block: sample ids,
scores, each pair's evidence as JSON text (null where none), and the detector's statistics and
description in the file's metadata, written to a
temporary name and renamed). A run started again with the same detector, checkpoint, options,
benchmark version, samples and block size scores only the blocks that are missing; the folder is
removed once the run is written. Pure pandas and pyarrow: no Ray here.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluator.detectors.batching import Progress
from evaluator.store import atomic, layout

if TYPE_CHECKING:
    from evaluator.detectors.base import Description, StatsRecord

META_KEY = b"factboard.block"


def checkpoint_root(root: Path | None = None) -> Path:
    """<data root>/.cache/blocks (ignored by git, like the LLM cache)."""
    return (root or layout.data_root()) / ".cache" / "blocks"


def run_key(fields: Mapping[str, Any], sample_ids: Sequence[str]) -> str:
    """The checkpoint folder name: a hash of what determines the scores."""
    h = hashlib.sha256()
    h.update(json.dumps(dict(fields), sort_keys=True, default=str).encode("utf-8"))
    for sid in sample_ids:
        h.update(b"\0" + str(sid).encode("utf-8"))
    return h.hexdigest()[:24]


def plan(
    sample_ids: Sequence[str],
    documents: Sequence[str],
    summaries: Sequence[str],
    block_size: int,
) -> pd.DataFrame:
    """Columns block, pos (row in the input), sample_id, document, summary: the rows grouped by
    document in order of first appearance (input order within a document), cut every
    `block_size` rows."""
    first: dict[str, int] = {}
    key = [first.setdefault(d, i) for i, d in enumerate(documents)]
    order = sorted(range(len(documents)), key=lambda i: (key[i], i))
    return pd.DataFrame(
        {
            "block": [j // block_size for j in range(len(order))],
            "pos": order,
            "sample_id": [str(sample_ids[i]) for i in order],
            "document": [documents[i] for i in order],
            "summary": [summaries[i] for i in order],
        }
    )


class BlockMeta(TypedDict):
    """What a block records of the detector that scored it (in its checkpoint's metadata)."""

    stats: StatsRecord | None
    describe: Description  # the rest of its describe(), as JSON reads it back
    versions: dict[str, str]  # the model libraries loaded where it scored


@dataclass
class BlockResult:
    block: int
    sample_ids: list[str]
    scores: list[float]
    meta: BlockMeta
    # per pair, the detector's evidence as JSON text (evidence_json), None where it gave none
    evidence: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.evidence:
            self.evidence = [None] * len(self.sample_ids)
        if len(self.evidence) != len(self.sample_ids):
            raise ValueError(
                f"block {self.block}: {len(self.evidence)} evidence rows for "
                f"{len(self.sample_ids)} pairs"
            )


def evidence_json(ev: Mapping[str, object] | None) -> str | None:
    """One pair's evidence as the text a block carries and a checkpoint stores (the same bytes
    whichever engine made it); None stays None."""
    if ev is None:
        return None
    return json.dumps(ev, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class BlockStore:
    """The checkpoint folder of one run: block-NNNNN.parquet per finished block."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def _path(self, block: int) -> Path:
        return self.directory / f"block-{block:05d}.parquet"

    def load(self, block: int, sample_ids: Sequence[str]) -> BlockResult | None:
        """The block's checkpoint, or None when there is none or it does not hold exactly
        these samples (a damaged or foreign file is rescored)."""
        p = self._path(block)
        if not p.is_file():
            return None
        try:
            table = pq.read_table(p)
            meta = json.loads((table.schema.metadata or {}).get(META_KEY, b"{}"))
        except (OSError, ValueError, pa.ArrowException):
            return None
        ids = [str(v) for v in table.column("sample_id").to_pylist()]
        if ids != [str(s) for s in sample_ids] or "evidence" not in table.column_names:
            return None
        scores = [
            float("nan") if v is None else float(v) for v in table.column("score").to_pylist()
        ]
        evidence = [None if v is None else str(v) for v in table.column("evidence").to_pylist()]
        return BlockResult(block, ids, scores, meta, evidence)

    def save(self, result: BlockResult) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        table = pa.table(
            {
                "sample_id": pa.array(result.sample_ids, pa.string()),
                "score": pa.array(result.scores, pa.float64()),
                "evidence": pa.array(result.evidence, pa.string()),
            }
        ).replace_schema_metadata({META_KEY: json.dumps(result.meta, default=str).encode()})
        p = self._path(result.block)
        with atomic.replacing(p) as tmp:
            pq.write_table(table, tmp)

    def clear(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def by_block(frame: pd.DataFrame) -> list[tuple[int, pd.DataFrame]]:
    """(block, its rows) in block order."""
    return [(int(cast(Any, b)), g) for b, g in frame.groupby("block", sort=True)]


def score_block(det: Any, block: int, rows: pd.DataFrame) -> BlockResult:
    """One detector call on one block, with that call's statistics and, from a detector that
    has `score_with_evidence`, each pair's evidence (the same function runs in this process for
    the local engine and in each actor for the Ray engine)."""
    if hasattr(det, "reset_stats"):
        det.reset_stats()
    # a detector that keeps results across calls (SummaC's NLI pair cache) starts each block
    # afresh: a block's scores must not depend on which blocks its worker scored before
    memo = getattr(det, "_cache", None)
    if isinstance(memo, dict):
        memo.clear()
    docs, sums = rows["document"].tolist(), rows["summary"].tolist()
    evidence: list[Any]
    if callable(getattr(det, "score_with_evidence", None)):
        scores, evidence = det.score_with_evidence(docs, sums)
    else:
        scores = det.score(docs, sums)
        evidence = [None] * len(scores)
    if len(scores) != len(rows) or len(evidence) != len(rows):
        from evaluator.detectors.base import DetectorError

        raise DetectorError(
            f"detector returned {len(scores)} scores and {len(evidence)} evidence rows for "
            f"{len(rows)} pairs"
        )
    from evaluator.detectors.build import library_versions

    info: Description = det.describe() if hasattr(det, "describe") else {}
    stats = info.pop("stats", None)
    meta: BlockMeta = {"stats": stats, "describe": _jsonable(info), "versions": library_versions()}
    out = [float("nan") if v is None else float(v) for v in scores]
    ids = rows["sample_id"].astype(str).tolist()
    texts = []
    for sid, e in zip(ids, evidence, strict=True):
        try:
            texts.append(evidence_json(e))
        except (TypeError, ValueError) as err:
            from evaluator.detectors.base import DetectorError

            raise DetectorError(f"evidence of sample {sid!r} is not JSON ({err})") from None
    return BlockResult(block, ids, out, meta, texts)


def _jsonable(d: Description) -> Description:
    """The description as JSON reads it back (what is not JSON becomes its text)."""
    return cast("Description", json.loads(json.dumps(dict(d), default=str)))


def merge_stats(parts: Iterable[StatsRecord | None]) -> StatsRecord | None:
    """One statistics record (evaluator.detectors.base.Stats.as_dict) from the blocks': counts
    and seconds added up (seconds: detector time summed over workers), limits and notes joined."""
    given = [p for p in parts if p]
    if not given:
        return None

    def total(count: Callable[[StatsRecord], int | None]) -> int:
        return sum(int(count(p) or 0) for p in given)

    limits: dict[str, int] = {}
    notes: list[str] = []
    for p in given:
        limits.update(p.get("max_input_tokens") or {})
        notes.extend(n for n in p.get("notes") or [] if n not in notes)
    seconds = sum(float(p.get("seconds") or 0.0) for p in given)
    model_inputs = total(lambda p: p.get("model_inputs"))
    return {
        "samples": total(lambda p: p.get("samples")),
        "model_inputs": model_inputs,
        "inputs_truncated": total(lambda p: p.get("inputs_truncated")),
        "samples_truncated": total(lambda p: p.get("samples_truncated")),
        "max_input_tokens": limits,
        "undefined_scores": total(lambda p: p.get("undefined_scores")),
        "seconds": round(seconds, 3),
        "inputs_per_second": round(model_inputs / seconds, 2) if seconds > 0 else None,
        "notes": notes,
    }


def pair_progress(total: int, done: int, desc: str, enabled: bool) -> Progress:
    """The run's bar: pairs scored, pairs/s and ETA (tqdm on stderr), the same for both
    engines; checkpointed pairs count as done from the start."""
    return Progress(total, desc, enabled, unit="pair", initial=done)
