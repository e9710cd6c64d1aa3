"""Quotas and rate limits for submissions on a public board (README, "Running a public space
safely").

Two scopes, each with a number of submissions per rolling day and a total of upload bytes kept:

- per submitter: the Hugging Face user when the Space has OAuth ("hf:<user>"), else a stable
  client key (`submitter_key`); a submission without a submitter key is only held to the
  benchmark's limits;
- per benchmark: every submitter together.

Configured by environment variables (a non-negative integer; 0 switches that limit off):

  FACTBOARD_QUOTA_PER_DAY              submissions per submitter per day (default 20)
  FACTBOARD_QUOTA_BYTES                upload bytes kept per submitter (default 500 MB)
  FACTBOARD_QUOTA_BENCHMARK_PER_DAY    submissions per benchmark per day (default 200)
  FACTBOARD_QUOTA_BENCHMARK_BYTES      upload bytes kept per benchmark (default 5 GB)

Every received file counts towards the day (a refused one too, except one refused by a quota:
probing the limit does not extend it); bytes count while the upload is kept (accepted and
scored submissions; refused files are deleted). Maintainers are exempt. The check runs in
`service.receive` under the submissions lock, before the bytes are saved, so two parallel
submissions cannot both take the last place.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from evaluator.core.errors import FactBoardError

DAY = timedelta(days=1)
ENV_DEFAULTS: dict[str, int] = {
    "FACTBOARD_QUOTA_PER_DAY": 20,
    "FACTBOARD_QUOTA_BYTES": 500_000_000,
    "FACTBOARD_QUOTA_BENCHMARK_PER_DAY": 200,
    "FACTBOARD_QUOTA_BENCHMARK_BYTES": 5_000_000_000,
}
_KEPT = ("received", "accepted", "scored")


@dataclass(frozen=True)
class Quotas:
    per_day: int
    bytes: int
    benchmark_per_day: int
    benchmark_bytes: int


def _env_int(name: str) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return ENV_DEFAULTS[name]
    try:
        value = int(raw)
    except ValueError:
        raise FactBoardError(f"{name}={raw!r} is not a whole number (0 = no limit)") from None
    if value < 0:
        raise FactBoardError(f"{name}={raw!r} must be 0 (no limit) or more")
    return value


def configured() -> Quotas:
    """The limits from the environment (read on each call)."""
    return Quotas(
        per_day=_env_int("FACTBOARD_QUOTA_PER_DAY"),
        bytes=_env_int("FACTBOARD_QUOTA_BYTES"),
        benchmark_per_day=_env_int("FACTBOARD_QUOTA_BENCHMARK_PER_DAY"),
        benchmark_bytes=_env_int("FACTBOARD_QUOTA_BENCHMARK_BYTES"),
    )


def trusted_proxies(environ: dict[str, str] | None = None) -> int:
    """How many proxies in front of the app append to X-Forwarded-For: $FACTBOARD_TRUSTED_PROXIES,
    else 1 on a Hugging Face Space (it sets SPACE_ID; its proxy appends the address it saw), else
    0 (the app is reached directly: the header is the client's own words)."""
    env = os.environ if environ is None else environ
    raw = env.get("FACTBOARD_TRUSTED_PROXIES", "").strip()
    if raw:
        try:
            return max(0, int(raw))
        except ValueError:
            raise FactBoardError(
                f"FACTBOARD_TRUSTED_PROXIES={raw!r} is not a whole number"
            ) from None
    return 1 if env.get("SPACE_ID") else 0


def client_address(forwarded: str | None, peer: str | None, proxies: int) -> str | None:
    """The client's address as the last trusted proxy saw it. Each proxy appends the address
    it received the request from to X-Forwarded-For, so the entries a client writes come first
    and the one the nearest of `proxies` trusted proxies appended is the `proxies`-th from the
    right; that is the only one a client cannot choose. With no trusted proxy, or no header,
    the connection's own peer address."""
    hops = [h.strip() for h in (forwarded or "").split(",") if h.strip()]
    if proxies <= 0 or not hops:
        return peer.strip() if peer and peer.strip() else None
    return hops[-proxies] if len(hops) >= proxies else hops[0]


def submitter_key(hf_user: str | None = None, client_id: str | None = None) -> str | None:
    """The key a submitter's quota is kept under: "hf:<user>" when signed in with Hugging Face,
    else "client:<digest>" of a stable client id (e.g. a cookie the page sets), else None."""
    if hf_user and hf_user.strip():
        return f"hf:{hf_user.strip().lower()}"
    if client_id and client_id.strip():
        return "client:" + hashlib.sha256(client_id.strip().encode()).hexdigest()[:24]
    return None


def _records(root: Path) -> list[dict[str, object]]:
    """The submission records as read (a corrupt one's fields are narrowed where they are used)."""
    d = root / "records"
    out: list[dict[str, object]] = []
    for f in d.glob("*.json") if d.is_dir() else []:
        try:
            rec = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue  # a corrupt record is for doctor to report, not to block submissions
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _when(rec: dict[str, object]) -> datetime | None:
    try:
        t = datetime.fromisoformat(str(rec.get("created_at")))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _mb(n: int) -> str:
    return f"{n / 1_000_000:,.0f} MB"


def check(
    root: Path,
    submitter: str | None,
    benchmark: str,
    size: int,
    exclude: str | None = None,
    now: datetime | None = None,
    quotas: Quotas | None = None,
) -> str | None:
    """Why a new upload of `size` bytes would go over a limit (a message for the submitter), or
    None. `exclude`: the id of the submission being checked (its own record)."""
    q = quotas or configured()
    now = now or datetime.now(UTC)
    mine_day = bench_day = mine_bytes = bench_bytes = 0
    for rec in _records(root):
        if rec.get("id") == exclude or rec.get("quota_refused"):
            continue
        meta = rec.get("meta")
        same_bench = isinstance(meta, dict) and meta.get("benchmark") == benchmark
        mine = submitter is not None and rec.get("submitter") == submitter
        if not (mine or same_bench):
            continue
        t = _when(rec)
        recent = t is not None and now - t < DAY
        stored = rec.get("size")
        kept = stored if rec.get("status") in _KEPT and isinstance(stored, int) else 0
        if mine:
            mine_day += recent
            mine_bytes += kept
        if same_bench:
            bench_day += recent
            bench_bytes += kept
    if submitter is not None:
        if q.per_day and mine_day >= q.per_day:
            return (
                f"submission limit reached: {q.per_day} submissions per day per submitter; "
                "try again tomorrow, or ask a maintainer"
            )
        if q.bytes and mine_bytes + size > q.bytes:
            return (
                f"storage limit reached: your kept uploads take {_mb(mine_bytes)} and this file "
                f"{_mb(size)}, over the {_mb(q.bytes)} per submitter; ask a maintainer to remove "
                "older submissions"
            )
    if q.benchmark_per_day and bench_day >= q.benchmark_per_day:
        return (
            f"submission limit reached for {benchmark}: {q.benchmark_per_day} submissions per "
            "day; try again tomorrow"
        )
    if q.benchmark_bytes and bench_bytes + size > q.benchmark_bytes:
        return (
            f"storage limit reached for {benchmark}: its kept uploads take {_mb(bench_bytes)}, "
            f"the limit is {_mb(q.benchmark_bytes)}; ask a maintainer"
        )
    return None
