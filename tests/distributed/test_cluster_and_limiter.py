"""The address helpers and the limiter's logic, without a cluster: what a run records of an
address, the default ports, and a limit of N slots with leases that expire."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from concurrent import futures

import pytest

from evaluator.distributed.cluster import ClusterError, host_port, probe, public_address
from evaluator.distributed.limiter import Limiter, endpoint_name


@contextlib.contextmanager
def grpc_endpoint() -> Iterator[int]:
    """A gRPC server with no services on 127.0.0.1 (Ray's head answers its ports with gRPC):
    the address check passes it as Ray would."""
    grpc = pytest.importorskip("grpc")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        server.stop(grace=None)


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


class _FakeRay:
    """What connect() asks of the ray module: init, shutdown, the nodes and this node's IP."""

    def __init__(self, node_ips: list[str]):
        import types

        self.inits: list[dict[str, object]] = []
        self.shutdowns = 0
        self._nodes = [{"Alive": True, "NodeManagerAddress": ip} for ip in node_ips]
        self.util = types.SimpleNamespace(get_node_ip_address=lambda: "10.0.0.1")

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs: object) -> None:
        self.inits.append(kwargs)

    def shutdown(self) -> None:
        self.shutdowns += 1

    def nodes(self) -> list[dict[str, object]]:
        return self._nodes


@pytest.mark.parametrize("address", [None, "auto", "127.0.0.1:PORT"])
def test_a_cluster_on_this_machine_reads_the_checkout_and_one_elsewhere_receives_it(
    address: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All nodes on this machine: one connection, the checkout on the workers' path, nothing
    packed. A node on another machine: the package travels with the job (py_modules)."""

    from pathlib import Path

    pytest.importorskip("ray")
    from evaluator.distributed import cluster

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with grpc_endpoint() as port:  # a head that answers, so that the address check passes
        if address and "PORT" in address:
            address = address.replace("PORT", str(port))
        checkout = str(Path(cluster.__file__).resolve().parent.parent.parent)

        local = _FakeRay(["10.0.0.1"])
        monkeypatch.setattr(cluster, "require_ray", lambda: local)
        cluster.connect(address)
        assert len(local.inits) == 1 and local.shutdowns == 0
        assert local.inits[0]["job_config"].code_search_path == [checkout]  # type: ignore[attr-defined]
        assert "runtime_env" not in local.inits[0]
        assert local.inits[0].get("address") == address

        spread = _FakeRay(["10.0.0.1", "10.0.0.2"])
        monkeypatch.setattr(cluster, "require_ray", lambda: spread)
        cluster.connect(address)
        assert len(spread.inits) == 2 and spread.shutdowns == 1
        assert spread.inits[1]["runtime_env"] == {"py_modules": [f"{checkout}/evaluator"]}
        assert "job_config" not in spread.inits[1]


def test_a_ray_client_address_always_receives_the_package(monkeypatch: pytest.MonkeyPatch) -> None:

    pytest.importorskip("ray")
    from evaluator.distributed import cluster

    with grpc_endpoint() as port:
        fake = _FakeRay(["10.0.0.1"])
        monkeypatch.setattr(cluster, "require_ray", lambda: fake)
        cluster.connect(f"ray://127.0.0.1:{port}")
    assert len(fake.inits) == 1 and "py_modules" in fake.inits[0]["runtime_env"]  # type: ignore[operator]


def test_a_refused_connection_says_how_to_send_ray_s_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ray connects to an explicit address without the cluster's token unless RAY_AUTH_MODE
    says so: the error names the address and says what to set; with auto it does not."""

    pytest.importorskip("ray")
    from evaluator.distributed import cluster

    class Refused(_FakeRay):
        def init(self, **kwargs: object) -> None:
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379")

    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(cluster, "require_ray", lambda: Refused(["10.0.0.1"]))
    with grpc_endpoint() as port:
        address = f"127.0.0.1:{port}"
        with pytest.raises(ClusterError, match="RAY_AUTH_MODE=token") as err:
            cluster.connect(address)
    assert f"cannot reach the Ray cluster at {address}" in str(err.value)
    with pytest.raises(ClusterError) as err:
        cluster.connect("auto")
    assert "RAY_AUTH_MODE" not in str(err.value)


def test_a_recorded_cluster_that_stopped_is_passed_over_for_a_ray_of_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without an address Ray goes to the cluster the last `ray start` recorded; one that
    stopped without `ray stop` would keep every run waiting, then failing: a run starts its own
    Ray instead. A recorded cluster that is up is left to Ray to join."""

    pytest.importorskip("ray")
    from evaluator.distributed import cluster

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"  # bound, not listening: refused
        monkeypatch.setattr(cluster, "_recorded_cluster", lambda: dead)
        fake = _FakeRay(["10.0.0.1"])
        monkeypatch.setattr(cluster, "require_ray", lambda: fake)
        cluster.connect(None)
    assert fake.inits[0]["address"] == "local"

    with grpc_endpoint() as port:
        up = f"127.0.0.1:{port}"
        monkeypatch.setattr(cluster, "_recorded_cluster", lambda: up)
        fake = _FakeRay(["10.0.0.1"])
        monkeypatch.setattr(cluster, "require_ray", lambda: fake)
        cluster.connect(None)
    assert "address" not in fake.inits[0]


def _serve_once(reply: bytes | None) -> tuple[socket.socket, threading.Thread]:
    """A listener on 127.0.0.1 that answers each connection with `reply` (None: says nothing
    and keeps the connection open), as a web server or a database on a wrong port would."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = srv.accept()
            with conn:
                conn.recv(64)
                if reply is not None:
                    conn.sendall(reply)
                else:
                    time.sleep(3)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, t


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "answered b'HTTP/1.1 "),
        (b"", "closed the connection"),
        (None, "cannot reach"),
    ],
)
def test_an_address_that_is_not_ray_fails_at_once_naming_it(reply: bytes | None, said: str) -> None:
    """--ray-address HOST:PORT at something that is not Ray: Ray itself retries for over a
    minute; the check fails within its timeout and names the address and the right ports."""
    srv, t = _serve_once(reply)
    address = f"127.0.0.1:{srv.getsockname()[1]}"
    started = time.monotonic()
    try:
        with pytest.raises(ClusterError, match=said) as err:
            probe(address, timeout=1.0)
    finally:
        srv.close()
        t.join(5)
    assert time.monotonic() - started < 10
    assert address in str(err.value)
    if reply is not None:
        assert "6379" in str(err.value) and "10001" in str(err.value)


def test_a_grpc_head_passes_the_check() -> None:
    with grpc_endpoint() as port:
        probe(f"127.0.0.1:{port}", timeout=2.0)
        probe(f"ray://127.0.0.1:{port}", timeout=2.0)


def test_the_ray_client_extra_is_installed_with_the_ray_requirements() -> None:
    """README's remote path (--ray-address ray://HOST:PORT) needs Ray Client's packages:
    requirements-ray.txt installs them (Ray says 'Ray Client requires ray[client]' otherwise)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "requirements-ray.txt").read_text()
    line = next(x for x in text.splitlines() if x.startswith("ray["))
    assert "client" in line.split("]")[0]
    pytest.importorskip("ray")
    from ray.util.client import ray as client_ray  # raises without ray[client]'s packages

    assert client_ray is not None
