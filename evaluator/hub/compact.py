"""`python -m evaluator hub compact`: merge each benchmark's shards into one, and drop the rows of
deleted runs from them.

Killed at any point, it loses no row: (1) the merged shards, the runs table pointing at them and
the manifest naming them go in one commit made on the head they were computed from (a push in
between: 412, computed again); until that commit the old shards are the current ones. (2) Only
then a second commit removes the shards the manifest no longer names. A compaction killed
between the two leaves unnamed shards, which no reader reads and the next compaction removes.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from evaluator.core.formatting import plural
from evaluator.hub import layout as H
from evaluator.hub import remote as R
from evaluator.hub import tables as T
from evaluator.hub.client import HubClient, HubError, StaleHead


@dataclass
class CompactReport:
    merged: dict[str, int] = field(default_factory=dict)  # benchmark -> shards merged
    dropped_runs: int = 0  # deleted runs whose rows left the shards
    removed_files: int = 0
    head: str = ""

    def summary(self) -> str:
        if not self.merged and not self.removed_files:
            return "nothing to compact"
        parts = [f"{b}: {plural(n, 'shard')} into 1" for b, n in sorted(self.merged.items())]
        parts.append(f"rows of {plural(self.dropped_runs, 'deleted run')} dropped")
        parts.append(f"{plural(self.removed_files, 'replaced file')} removed")
        return "; ".join(parts)


def compact(
    client: HubClient, min_shards: int = 2, log: Callable[[str], None] | None = None
) -> CompactReport:
    """Merge the shards of every benchmark with at least `min_shards` shards or with rows of
    deleted runs; then remove the shards no longer named."""
    say = log or (lambda m: None)
    rep = CompactReport()
    for _ in range(R.MAX_RACES):
        remote = R.snapshot(client)
        tabs = R.load_tables(client, remote)
        if not tabs.runs_readable:
            raise HubError(f"{H.RUNS_TABLE} cannot be read: not compacting ({tabs.problems})")
        adds, merged, dropped = _merged(client, remote, tabs, min_shards, say)
        if not adds:
            break
        try:
            rep.head = client.commit(adds, message="FactBoard: compact shards", parent=remote.head)
        except StaleHead:
            time.sleep(0.02 + secrets.randbelow(80) / 1000)
            continue
        rep.merged, rep.dropped_runs = merged, dropped
        say(f"merged: {', '.join(f'{b} ({n})' for b, n in sorted(merged.items()))}")
        break
    else:
        raise HubError("could not compact: the results repo kept moving")
    for _ in range(R.MAX_RACES):
        remote = R.snapshot(client)
        tabs = R.load_tables(client, remote)
        current = tabs.manifest.files()
        old = sorted(p for p in remote.files if p.startswith(f"{H.SHARDS}/") and p not in current)
        if not old:
            break
        try:
            rep.head = client.commit(
                {}, deletes=old, message="FactBoard: remove replaced shards", parent=remote.head
            )
        except StaleHead:
            time.sleep(0.02 + secrets.randbelow(80) / 1000)
            continue
        rep.removed_files = len(old)
        say(f"removed {plural(len(old), 'replaced shard file')}")
        break
    return rep


def _merged(
    client: HubClient,
    remote: R.Remote,
    tabs: R.RemoteTables,
    min_shards: int,
    say: Callable[[str], None],
) -> tuple[dict[str, bytes | Any], dict[str, int], int]:
    rows = tabs.runs
    updates: dict[str, T.RunRow] = {}
    manifest = T.Manifest(H.LAYOUT_VERSION, {b: dict(s) for b, s in tabs.manifest.shards.items()})
    adds: dict[str, bytes | Any] = {}
    merged: dict[str, int] = {}
    dropped = 0
    for bench, shards in sorted(tabs.manifest.shards.items()):
        in_these = [r for r in rows.values() if r.get("shard") in shards]
        dead = [r for r in in_these if r.get("deleted")]
        keep = {str(r["run_id"]) for r in in_these if not r.get("deleted")}
        if len(shards) < min_shards and not dead:
            continue
        sid = T.new_shard_id()
        kinds_out: list[str] = []
        for kind in H.SHARD_KINDS:
            paths = [H.shard_file(bench, kind, s) for s, ks in sorted(shards.items()) if kind in ks]
            if not paths:
                continue
            blobs = R.fetch_all(client, remote.head, paths)
            parts = []
            for p in paths:
                t = T.read_table(blobs[p], T.shard_schema(kind), p)
                parts.append(t.filter(pc.is_in(t["run_id"], pa.array(sorted(keep)))))
            table = pa.concat_tables(parts) if parts else T.shard_schema(kind).empty_table()
            if len(table) or kind == "predictions":
                size = 512 if kind == "evidence" else None
                adds[H.shard_file(bench, kind, sid)] = T.parquet_bytes(table, size)
                kinds_out.append(kind)
        for r in in_these:
            updates[str(r["run_id"])] = {"shard": sid if not r.get("deleted") else None}
        if keep:
            manifest.shards[bench] = {sid: kinds_out}
        else:
            manifest.shards.pop(bench, None)
            for p in [p for p in adds if p.startswith(f"{H.SHARDS}/{bench}/")]:
                del adds[p]
        merged[bench] = len(shards)
        dropped += len(dead)
        say(
            f"{bench}: {plural(len(shards), 'shard')}, {plural(len(keep), 'run')} kept, "
            f"{len(dead):,} deleted"
        )
    if not merged:
        return {}, {}, 0
    adds[H.RUNS_TABLE] = T.parquet_bytes(T.update_runs(tabs.runs_table, updates, []))
    adds[H.MANIFEST] = manifest.to_bytes()
    return adds, merged, dropped
