"""The address helpers and the limiter's logic, without a cluster: what a run records of an
address, the default ports, and a limit of N slots with leases that expire."""

from __future__ import annotations

import asyncio

import pytest

from evaluator.distributed.cluster import ClusterError, host_port, probe, public_address
from evaluator.distributed.limiter import Limiter, endpoint_name


def test_addresses_are_recorded_without_credentials() -> None:
    assert public_address(None) == "local"
    assert public_address("auto") == "auto"
    assert public_address("ray://user:secret@head.example:10001") == "ray://head.example:10001"
    assert public_address("10.0.0.5:6379") == "10.0.0.5:6379"
    assert host_port("ray://head") == ("head", 10001)
    assert host_port("head") == ("head", 6379)
    with pytest.raises(ClusterError, match="no valid port"):
        host_port("ray://head:notaport")


def test_probe_names_the_address() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ClusterError, match=f"cannot reach the Ray cluster at 127.0.0.1:{port}"):
        probe(f"127.0.0.1:{port}", timeout=1.0)


def test_the_limiter_grants_at_most_its_limit_and_frees_expired_leases() -> None:
    async def scenario() -> dict[str, int]:
        lim = Limiter(2, lease_s=0.3)
        a = await lim.acquire()
        await lim.acquire()
        third = asyncio.create_task(lim.acquire())
        await asyncio.sleep(0.1)
        assert not third.done()  # the limit holds
        await lim.release(a)
        await asyncio.wait_for(third, 1.0)
        fourth = asyncio.create_task(lim.acquire())  # nobody releases: a lease expires
        await asyncio.wait_for(fourth, 2.5)
        await lim.pause(5.0)
        assert 4.0 < await lim.hold() <= 5.0
        return await lim.stats()

    stats = asyncio.run(scenario())
    assert stats["peak"] == 2 and stats["granted"] == 4 and stats["limit"] == 2


def test_one_limiter_per_endpoint() -> None:
    a = endpoint_name({"provider": "compatible", "model": "m", "base_url": "http://a/v1"})
    b = endpoint_name({"provider": "compatible", "model": "m", "base_url": "http://b/v1"})
    assert a != b and a.startswith("factboard-llm-limit:")
    assert a == endpoint_name({"model": "m", "provider": "compatible", "base_url": "http://a/v1"})
