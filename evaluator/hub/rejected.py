"""What failed a check in the results repo, remembered by its content (<data root>/_hub/
rejected.json), so it is not downloaded again while the repo holds the same content; and what the
last pull skipped (<data root>/_hub/last-pull.json), which the doctor lists. It reads no content
itself (evaluator/hub/checks.py says what fails), so the store's doctor can read it without the
Hub's checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator.hub import layout as H
from evaluator.store import atomic

if TYPE_CHECKING:
    from evaluator.hub.remote import Remote, RemoteTables

REJECTED_FILE = "rejected.json"  # under <data root>/_hub/: what failed, by content
AGAIN = "tried again on the next pull"  # the words of a skip that is not remembered
# what is remembered when it fails (verification: a record's published reproduction outcome)
KINDS = ("runs", "benchmarks", "jobs", "reported", "verification")


def _digest(*parts: object) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]


def run_key(tabs: RemoteTables, remote: Remote, run_id: str) -> str:
    """A run's content in the repo: its row, its run.json and its shard files."""
    row = tabs.runs.get(run_id) or {}
    bench, shard = str(row.get("benchmark")), str(row.get("shard"))
    kinds = tabs.manifest.shards.get(bench, {}).get(shard, [])
    oids = [remote.files.get(H.shard_file(bench, k, shard), "") for k in kinds]
    cells = [row.get(k) for k in ("benchmark", "shard", "kinds", "hidden", "deleted")]
    return _digest(*cells, tabs.run_json(run_id), *oids)


def benchmark_key(remote: Remote, name: str) -> str:
    files = remote.under(H.BENCHMARKS).get(name, {})
    return _digest(*sorted(files.items()))


_FILE_LOCK = threading.Lock()


def _rejected_path(cache: Path) -> Path:
    return cache / REJECTED_FILE


def load_rejected(cache: Path) -> dict[str, dict[str, dict[str, str]]]:
    """{kind: {name: {"key", "why"}}} for kind in KINDS (empty when none)."""
    try:
        data = json.loads(_rejected_path(cache).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {k: {} for k in KINDS}
    out: dict[str, dict[str, dict[str, str]]] = {k: {} for k in KINDS}
    if isinstance(data, dict):
        for kind in out:
            items = data.get(kind)
            if isinstance(items, dict):
                out[kind] = {
                    str(k): {"key": str(v.get("key")), "why": str(v.get("why"))}
                    for k, v in items.items()
                    if isinstance(v, dict)
                }
    return out


def _save_rejected(cache: Path, data: dict[str, dict[str, dict[str, str]]]) -> None:
    with contextlib.suppress(OSError):
        cache.mkdir(parents=True, exist_ok=True)
        atomic.write_json(_rejected_path(cache), data, fsync=False)


def drop_rejected(
    cache: Path,
    kind: str,
    names: list[str],
    key: Callable[[str], str],
    problems: list[str],
) -> list[str]:
    """`names` without those that failed a check with the content the repo still has (listed in
    `problems` instead): what failed is not downloaded again until the repo changes it."""
    known = load_rejected(cache)[kind]
    if not known:
        return names
    out = []
    for n in names:
        seen = known.get(n)
        if seen is not None and seen["key"] == key(n):
            problems.append(seen["why"])
        else:
            out.append(n)
    return out


def remember(cache: Path, kind: str, failed: dict[str, tuple[str, str]], live: set[str]) -> None:
    """Record what failed a check (name -> (content key, why)); entries for names the repo no
    longer has are dropped."""
    with _FILE_LOCK:
        data = load_rejected(cache)
        before = json.dumps(data, sort_keys=True)
        items = {k: v for k, v in data[kind].items() if k in live}
        for name, (key, why) in failed.items():
            items[name] = {"key": key, "why": why}
        data[kind] = items
        if json.dumps(data, sort_keys=True) != before:
            _save_rejected(cache, data)


def remember_runs(
    cache: Path,
    tabs: RemoteTables,
    remote: Remote,
    tried: list[str],
    have: set[str],
    skipped: list[str],
) -> None:
    """After a pull: the runs it tried and did not write, with the line that says why (a skip
    that will be tried again, such as a shard the Hub could not serve, is not remembered)."""
    failed = {}
    for rid in tried:
        if rid in have:
            continue
        row = tabs.runs.get(rid) or {}
        shard = f"{row.get('benchmark')}/{row.get('shard')}"
        why = next((s for s in skipped if f"run {rid} " in s), None)
        if why is None:
            why = next((s for s in skipped if shard in s or str(row.get("shard")) in s), None)
        if why is None or AGAIN in why:
            continue
        if f"run {rid} " not in why:
            why = f"run {rid} skipped: {why}"
        failed[rid] = (run_key(tabs, remote, rid), why)
    remember(cache, "runs", failed, set(tabs.runs))


LAST_PULL_FILE = "last-pull.json"  # under <data root>/_hub/: what the last pull skipped
MAX_LISTED = 1000


def save_last_pull(cache: Path, head: str, skipped: list[str]) -> None:
    """What the last pull skipped (every entry that failed a check, remembered or not), for the
    doctor."""
    body = {
        "head": head,
        "skipped": skipped[:MAX_LISTED],
        "more": max(0, len(skipped) - MAX_LISTED),
    }
    with contextlib.suppress(OSError, ValueError):
        if json.loads((cache / LAST_PULL_FILE).read_text(encoding="utf-8")) == body:
            return  # a pull that found nothing new writes nothing
    with contextlib.suppress(OSError):
        cache.mkdir(parents=True, exist_ok=True)
        atomic.write_json(cache / LAST_PULL_FILE, body, fsync=False)


def rejected_problems(data_root: Path) -> list[str]:
    """What the last pull skipped from the results repo (for the doctor), one line each."""
    try:
        body = json.loads((data_root / "_hub" / LAST_PULL_FILE).read_text(encoding="utf-8"))
        lines = [str(x) for x in body.get("skipped") or []]
        more = int(body.get("more") or 0)
    except (OSError, ValueError, AttributeError, TypeError):
        data = load_rejected(data_root / "_hub")
        return [v["why"] for kind in KINDS for _, v in sorted(data[kind].items())]
    return lines + ([f"and {more:,} more"] if more else [])
