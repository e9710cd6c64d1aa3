"""The local side of a sync: what this replica's data root and submissions root hold (run
folders, benchmarks, terminal submission records as they may be published, the file queue's
jobs), and where it keeps what it read of the repo (<data root>/_hub/)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evaluator.hub import layout as H
from evaluator.store import layout, pulled, runs
from evaluator.submissions.records import TERMINAL


@dataclass
class Local:
    data_root: Path
    sub_root: Path

    @property
    def cache(self) -> Path:
        """What this replica keeps of the repo: the last tree listing and the tables."""
        return self.data_root / "_hub"

    @classmethod
    def of(cls, data_root: Path | None = None, sub_root: Path | None = None) -> Local:
        return cls(data_root or layout.data_root(), sub_root or layout.submissions_root())

    def run_ids(self) -> set[str]:
        """The runs this replica holds: its run folders, and the pulled runs still kept in
        packs (evaluator/store/pulled.py) until they are written as folders."""
        packed = set(pulled.packed_runs(self.data_root))
        d = layout.runs_dir(self.data_root)
        if not d.is_dir():
            return packed
        return packed | {
            p.name
            for p in d.iterdir()
            if (p / runs.RUN_FILE).is_file() and (p / runs.PREDICTIONS_FILE).is_file()
        }

    def benchmarks(self) -> dict[str, Path]:
        d = layout.benchmarks_dir(self.data_root)
        if not d.is_dir():
            return {}
        return {
            p.name: p
            for p in d.iterdir()
            if (p / layout.META_FILE).is_file() and (p / layout.SAMPLES_FILE).is_file()
        }

    def records(self) -> dict[str, bytes]:
        """submission id -> the record as published (terminal records, no private fields)."""
        d = self.sub_root / "records"
        out: dict[str, bytes] = {}
        if not d.is_dir():
            return out
        for f in sorted(d.glob("*.json")):
            try:
                rec = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if not isinstance(rec, dict) or rec.get("status") not in TERMINAL:
                continue
            out[f.stem] = public_record(rec)
        return out

    def jobs(self) -> dict[str, tuple[str, Path]]:
        """job id -> (state, file) in the local file queue."""
        from evaluator.jobs import queue  # the file queue: only when its jobs are read

        out: dict[str, tuple[str, Path]] = {}
        q = queue.queue_dir(self.sub_root)
        for state in queue.STATES:
            d = q / state
            if d.is_dir():
                for f in d.glob("*.json"):
                    out[f.stem] = (state, f)
        return out


def public_record(rec: Mapping[str, object]) -> bytes:
    """A submission record as it may be published: without the contact e-mail."""
    clean = {k: v for k, v in rec.items() if k not in H.PRIVATE_RECORD_FIELDS}
    meta = clean.get("meta")
    if isinstance(meta, dict):
        clean["meta"] = {k: v for k, v in meta.items() if k not in H.PRIVATE_RECORD_FIELDS}
    return (json.dumps(clean, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()
