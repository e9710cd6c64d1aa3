"""What differs between the local root and the results repo at one head (`plan`), kind by kind,
and what a pull or a push did (`Report`). See evaluator/hub/sync.py for the rules of each kind.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.core.errors import FactBoardError
from evaluator.hub import layout as H
from evaluator.hub import mirror, rejected
from evaluator.hub import remote as R
from evaluator.hub.checks import duplicates
from evaluator.hub.client import HubClient, blob_oid
from evaluator.hub.local import Local
from evaluator.hub.remote import Remote, RemoteTables
from evaluator.store import layout, pulled, runs

DEMO = "demo"


@dataclass
class Plan:
    head: str
    pull_runs: list[str] = field(default_factory=list)
    push_runs: list[str] = field(default_factory=list)
    pull_benchmarks: list[str] = field(default_factory=list)
    push_benchmarks: list[str] = field(default_factory=list)
    pull_reported: list[str] = field(default_factory=list)
    push_reported: list[str] = field(default_factory=list)
    apply_moderation: dict[str, dict[str, str]] = field(default_factory=dict)
    push_moderation: dict[str, dict[str, str]] = field(default_factory=dict)
    pull_records: list[str] = field(default_factory=list)
    push_records: dict[str, bytes] = field(default_factory=dict)
    # records whose published copy carries a later reproduction outcome than ours
    apply_verification: list[str] = field(default_factory=list)
    pull_jobs: list[str] = field(default_factory=list)
    push_jobs: list[str] = field(default_factory=list)
    withdraw: dict[str, str] = field(default_factory=dict)  # local duplicates -> why
    tables: RemoteTables | None = None
    problems: list[str] = field(default_factory=list)  # what the repo holds that was skipped

    def outbox(self) -> int:
        return (
            len(self.push_runs)
            + len(self.push_benchmarks)
            + len(self.push_reported)
            + len(self.push_moderation)
            + len(self.push_records)
            + len(self.push_jobs)
        )

    def inbox(self) -> int:
        return (
            len(self.pull_runs)
            + len(self.pull_benchmarks)
            + len(self.pull_reported)
            + len(self.apply_moderation)
            + len(self.pull_records)
            + len(self.apply_verification)
            + len(self.pull_jobs)
            + len(self.withdraw)
        )

    def lines(self) -> list[str]:
        out = []
        for label, items in (
            ("runs to pull", self.pull_runs),
            ("runs to push", self.push_runs),
            ("benchmarks to pull", self.pull_benchmarks),
            ("benchmarks to push", self.push_benchmarks),
            ("reported tables to pull", self.pull_reported),
            ("reported tables to push", self.push_reported),
            ("moderation to apply here", sorted(self.apply_moderation)),
            ("moderation to push", sorted(self.push_moderation)),
            ("submission records to pull", self.pull_records),
            ("submission records to push", sorted(self.push_records)),
            ("reproduction outcomes to take here", self.apply_verification),
            ("jobs to pull", self.pull_jobs),
            ("jobs to push", self.push_jobs),
            ("duplicates to withdraw here", sorted(self.withdraw)),
        ):
            if items:
                shown = ", ".join(list(items)[:8]) + (" ..." if len(items) > 8 else "")
                out.append(f"{label}: {len(items)} ({shown})")
        return out


def _local_oid(path: Path) -> str | None:
    try:
        return blob_oid(path.read_bytes())
    except OSError:
        return None


def _ingested_at(data: bytes) -> str:
    try:
        return str(json.loads(data).get("ingested_at") or "")
    except (ValueError, AttributeError):
        return ""


def plan(
    client: HubClient,
    remote: Remote,
    local: Local,
    reported: bool = False,
    jobs: bool = True,
    demo: bool = False,
) -> Plan:
    """What differs between the local root and the repo at `remote.head`."""
    p = Plan(remote.head)
    tabs = p.tables = R.load_tables(client, remote, local.cache)
    p.problems = list(tabs.problems)
    _write_packed_runs_it_reads(tabs, local)
    l_runs = local.run_ids()
    deleted = _plan_moderation(p, tabs, local, l_runs)
    _plan_runs(p, tabs, remote, local, l_runs, deleted, demo)
    _plan_benchmarks(p, client, remote, local, demo)
    _plan_reported(p, remote, local, reported)
    _plan_records(p, tabs, local)
    if jobs:
        _plan_jobs(p, remote, local)
    return p


def _write_packed_runs_it_reads(tabs: RemoteTables, local: Local) -> None:
    """The comparison reads run folders only. Of the pulled runs still kept in packs
    (evaluator/store/pulled.py), those it reads are written as folders first: a run the repo
    has a moderation action for (its state here is read) and a run the repo's table does not
    list live (a candidate to publish, or to delete). The others, the repo's runs as they were
    pulled, are left to the background writer: a replica's sync does not wait on thousands of
    them. (A full disk: what cannot be read is skipped and listed.)"""
    packed = pulled.packed_runs(local.data_root)
    read = [
        rid
        for rid in packed
        if (row := tabs.runs.get(rid)) is None
        or row.get("deleted")
        or row.get("moderation") in ("hide", "show", "delete")
    ]
    if read:
        with contextlib.suppress(OSError):
            runs.materialize(local.data_root, read)


def _plan_moderation(p: Plan, tabs: RemoteTables, local: Local, l_runs: set[str]) -> set[str]:
    """The runs table carries each run's latest action; returns the runs deleted either side."""
    r_mod: dict[str, dict[str, str]] = {}
    for rid, row in tabs.runs.items():
        action, at = row.get("moderation"), row.get("moderated_at")
        if row.get("deleted"):
            action = "delete"
        if action in ("hide", "show", "delete"):
            r_mod[rid] = {"action": str(action), "at": str(at or "")}
    from evaluator.submissions import moderation

    p.push_moderation, p.apply_moderation = moderation.plan_sync(
        r_mod, local.sub_root, l_runs, lambda rid, a: _needs_apply(local, rid, a, rid in l_runs)
    )
    deleted = {rid for rid, e in r_mod.items() if e["action"] == "delete"}
    return deleted | {rid for rid, e in p.push_moderation.items() if e["action"] == "delete"}


def _plan_runs(
    p: Plan,
    tabs: RemoteTables,
    remote: Remote,
    local: Local,
    l_runs: set[str],
    deleted: set[str],
    demo: bool,
) -> None:
    live = {rid for rid, row in tabs.runs.items() if not row.get("deleted")}
    p.pull_runs = sorted(live - set(tabs.bad) - l_runs - deleted)
    p.pull_runs = rejected.drop_rejected(  # what failed a check is not downloaded again
        local.cache, "runs", p.pull_runs, lambda r: rejected.run_key(tabs, remote, r), p.problems
    )
    p.push_runs = (
        sorted(
            r
            for r in l_runs - set(tabs.runs) - deleted
            if H.safe(r) and (demo or not _is_demo_run(local, r))
        )
        if tabs.runs_readable
        else []
    )
    p.withdraw = duplicates(tabs, local.data_root, p.push_runs)
    p.push_runs = [r for r in p.push_runs if r not in p.withdraw]


def _plan_benchmarks(p: Plan, client: HubClient, remote: Remote, local: Local, demo: bool) -> None:
    """By benchmark.json; when the two differ the later `ingested_at` wins."""
    r_bench = {
        k: v
        for k, v in remote.under(H.BENCHMARKS).items()
        if layout.META_FILE in v and layout.SAMPLES_FILE in v and H.safe(k)
    }
    l_bench = local.benchmarks()
    differ = [
        n
        for n in sorted(set(r_bench) & set(l_bench))
        if _local_oid(l_bench[n] / layout.META_FILE) != r_bench[n][layout.META_FILE]
    ]
    metas = R.BLOBS.get(client, remote, [H.benchmark_file(n, layout.META_FILE) for n in differ])
    for n in differ:
        ours_at = _ingested_at((l_bench[n] / layout.META_FILE).read_bytes())
        theirs_at = _ingested_at(metas[H.benchmark_file(n, layout.META_FILE)])
        (p.push_benchmarks if ours_at > theirs_at else p.pull_benchmarks).append(n)
    p.pull_benchmarks += sorted(set(r_bench) - set(l_bench))
    p.push_benchmarks += sorted(n for n in set(l_bench) - set(r_bench) if H.safe(n))
    p.push_benchmarks = [n for n in p.push_benchmarks if demo or n != DEMO]
    p.pull_benchmarks = rejected.drop_rejected(
        local.cache,
        "benchmarks",
        p.pull_benchmarks,
        lambda n: rejected.benchmark_key(remote, n),
        p.problems,
    )


def _plan_reported(p: Plan, remote: Remote, local: Local, reported: bool) -> None:
    """Pulled when missing or different; pushed by `hub push --reported` only."""
    r_rep = {k: v for k, v in remote.flat(H.REPORTED, ".csv").items() if H.safe(k)}
    into = layout.reported_dir(local.data_root)
    for name, oid in sorted(r_rep.items()):
        if _local_oid(into / f"{name}.csv") != oid:
            p.pull_reported.append(name)
    if reported:
        src = layout.reported_dir()
        if src.is_dir():
            for f in sorted(src.glob("*.csv")):
                if r_rep.get(f.stem) != _local_oid(f) and H.safe(f.name):
                    p.push_reported.append(f.stem)
        p.pull_reported = [n for n in p.pull_reported if n not in p.push_reported]
    p.pull_reported = rejected.drop_rejected(
        local.cache, "reported", p.pull_reported, lambda n: r_rep[n], p.problems
    )


def _plan_records(p: Plan, tabs: RemoteTables, local: Local) -> None:
    """Terminal submission records, and published reproduction outcomes later than ours."""
    l_rec = local.records()
    rec_dir = local.sub_root / "records"
    if tabs.records_readable:
        from evaluator.submissions import verification

        for sid, data in l_rec.items():
            theirs = tabs.records.get(sid, "")
            if theirs.encode() == data or not H.safe(sid):
                continue
            if theirs and verification.newer(theirs, data):  # a later reproduction, published
                p.apply_verification.append(sid)
            else:
                p.push_records[sid] = data
        # a record new here may carry an outcome that its run, as first published, lacks
        p.apply_verification += [
            sid
            for sid, theirs in sorted(tabs.records.items())
            if sid not in l_rec and H.safe(sid) and verification.newer(theirs, "{}")
        ]
    p.apply_verification = rejected.drop_rejected(
        local.cache,
        "verification",
        p.apply_verification,
        lambda sid: blob_oid(tabs.records[sid].encode()),
        p.problems,
    )
    for rid in p.withdraw:  # its record is published once it says why it was withdrawn
        with contextlib.suppress(FactBoardError, OSError):
            sub = runs.read_record(layout.run_dir(rid, local.data_root)).submission or {}
            p.push_records.pop(str(sub.get("submission_id")), None)
    p.pull_records = sorted(
        sid for sid in tabs.records if sid not in l_rec and not (rec_dir / f"{sid}.json").exists()
    )


def _plan_jobs(p: Plan, remote: Remote, local: Local) -> None:
    r_jobs = {k: v for k, v in remote.flat(H.QUEUE, ".json").items() if H.safe(k)}
    l_jobs = local.jobs()
    p.push_jobs = sorted(j for j in set(l_jobs) - set(r_jobs) if H.safe(j))
    # a local job file holds its state in its content, so equal oids mean equal states
    p.pull_jobs = sorted(
        j for j, oid in r_jobs.items() if j not in l_jobs or _local_oid(l_jobs[j][1]) != oid
    )
    p.pull_jobs = rejected.drop_rejected(
        local.cache, "jobs", p.pull_jobs, lambda j: r_jobs[j], p.problems
    )
    mirrors = {j: l_jobs[j] for j in p.pull_jobs if j in l_jobs}
    changed = mirror.maintainer_changes(local.sub_root, r_jobs, mirrors)
    p.push_jobs = sorted({*p.push_jobs, *changed})
    p.pull_jobs = [j for j in p.pull_jobs if j not in changed]


def _is_demo_run(local: Local, run_id: str) -> bool:
    """The built-in demo's baseline runs are made on every machine (`python -m evaluator demo`):
    they are not published (other runs on the demo benchmark are)."""
    from evaluator.ingest.demo import BASELINES

    try:
        data = json.loads((layout.run_dir(run_id, local.data_root) / runs.RUN_FILE).read_bytes())
    except (OSError, ValueError):
        return True
    if not isinstance(data, dict):
        return True
    name = (data.get("model") or {}).get("name")
    return data.get("benchmark") == DEMO and name in {m.name for m, _ in BASELINES}


def _needs_apply(local: Local, run_id: str, action: str, present: bool) -> bool:
    if action == "delete":
        return present
    if not present:
        return False
    try:
        rec = runs.read_record(layout.run_dir(run_id, local.data_root))
    except Exception:
        return False
    return rec.hidden != (action == "hide")


@dataclass
class Report:
    head: str
    pulled: dict[str, int] = field(default_factory=dict)
    pushed: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # what the repo holds that failed a check
    shards: dict[str, int] = field(default_factory=dict)  # benchmark -> shards after a push

    def summary(self) -> str:
        from evaluator.core.formatting import plural

        parts = []
        for key, n in {**self.pulled, **self.pushed}.items():
            if n:
                base, pushed = key.removesuffix(" pushed"), key.endswith(" pushed")
                one = base[:-1] if base.endswith("s") else base
                parts.append(plural(n, one, base) + (" pushed" if pushed else ""))
        if self.skipped:
            parts.append(f"{plural(len(self.skipped), 'entry', 'entries')} skipped")
        return ", ".join(parts) if parts else "nothing to do"
