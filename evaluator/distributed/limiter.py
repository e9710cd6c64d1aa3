"""One concurrency limit and one Retry-After pause per LLM endpoint for a whole Ray cluster: a
named, detached actor (`factboard-llm-limit:<endpoint>` in the `factboard` namespace) that every
worker's requests pass through (RayGate, the distributed evaluator.llm.execute.Gate).

The limit is the `--concurrency` of the run that started last (two runs against one endpoint at
once share it). A slot is a lease: a worker killed while it holds one does not hold it forever;
the lease ends after `lease_s` seconds (longer than any single request with the clients'
timeouts) and the slot is free again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Mapping
from typing import Any, TypedDict

from evaluator.distributed.cluster import NAMESPACE

LEASE_S = 900.0


class LimiterStats(TypedDict):
    """What a limiter reports: its limit, leases held now, the most held at once, granted."""

    limit: int
    active: int
    peak: int
    granted: int


class Limiter:
    """The actor's class (made remote in `limiter`): at most `limit` slots out at once."""

    def __init__(self, limit: int, lease_s: float = LEASE_S):
        import asyncio

        self.limit = limit
        self.lease_s = lease_s
        self.leases: dict[int, float] = {}  # token -> expiry (time.time())
        self.next_token = 0
        self.until = 0.0  # the pause, as time.time()
        self.peak = 0
        self.granted = 0
        self.changed = asyncio.Event()

    def _expire(self) -> None:
        now = time.time()
        for t in [t for t, exp in self.leases.items() if exp <= now]:
            del self.leases[t]

    async def acquire(self) -> int:
        import asyncio

        while True:
            self._expire()
            if len(self.leases) < self.limit:
                break
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=1.0)
        self.next_token += 1
        self.leases[self.next_token] = time.time() + self.lease_s
        self.peak = max(self.peak, len(self.leases))
        self.granted += 1
        return self.next_token

    async def release(self, token: int) -> None:
        self.leases.pop(token, None)
        self.changed.set()

    async def hold(self) -> float:
        return self.until - time.time()

    async def pause(self, seconds: float) -> None:
        self.until = max(self.until, time.time() + seconds)

    async def set_limit(self, limit: int) -> None:
        self.limit = limit
        self.changed.set()

    async def stats(self) -> LimiterStats:
        self._expire()
        return {
            "limit": self.limit,
            "active": len(self.leases),
            "peak": self.peak,
            "granted": self.granted,
        }


def endpoint_name(identity: Mapping[str, Any]) -> str:
    """The limiter's name for a client identity (provider, model, base URL)."""
    text = json.dumps(dict(identity), sort_keys=True)
    return f"factboard-llm-limit:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def limiter(identity: Mapping[str, Any], limit: int) -> Any:
    """The cluster's limiter actor for this endpoint (created on first use, then shared by every
    driver and worker on the cluster), set to `limit`."""
    import ray

    remote: Any = ray.remote  # typed for functions; an actor class takes max_concurrency too
    cls = remote(num_cpus=0, max_concurrency=10_000, max_restarts=-1)(Limiter)
    handle = cls.options(
        name=endpoint_name(identity),
        namespace=NAMESPACE,
        lifetime="detached",
        get_if_exists=True,
    ).remote(limit)
    ray.get(handle.set_limit.remote(limit))
    return handle


class RayGate:
    """evaluator.llm.execute.Gate over the cluster's limiter actor (one slot per request in
    flight; the token of each thread's slot is kept per thread)."""

    def __init__(self, handle: Any):
        import threading

        self.handle = handle
        self._local = threading.local()

    def hold(self) -> float:
        import ray

        return float(ray.get(self.handle.hold.remote()))

    def pause(self, seconds: float) -> None:
        import ray

        ray.get(self.handle.pause.remote(seconds))

    def acquire(self) -> None:
        import ray

        self._local.token = ray.get(self.handle.acquire.remote())

    def release(self) -> None:
        token = getattr(self._local, "token", None)
        if token is not None:
            self._local.token = None
            self.handle.release.remote(token)
