"""Connecting to Ray: a local Ray started for the run, the cluster this machine belongs to
(`auto`, or $RAY_ADDRESS), or a remote head (`ray://host:port` through Ray Client, `host:port`
for the head's GCS). An address that cannot be reached is a FactBoardError that names it, before
Ray is asked to connect (Ray's own failure is a long retry loop and a stack trace)."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import urlsplit

from evaluator.core.errors import FactBoardError

NAMESPACE = "factboard"
PROBE_TIMEOUT_S = 5.0
RAY_CLIENT_PORT = 10001
GCS_PORT = 6379


class ClusterError(FactBoardError):
    """Ray is missing, or the cluster cannot be reached."""


def require_ray() -> Any:
    """The ray module, or an error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ClusterError("--engine ray needs Ray: pip install -r requirements-ray.txt") from None
    return ray


def host_port(address: str) -> tuple[str, int]:
    """(host, port) of 'ray://host:port' or 'host:port' (default ports: Ray Client 10001, GCS
    6379)."""
    client = address.startswith("ray://")
    parts = urlsplit(address if "://" in address else f"gcs://{address}")
    try:
        port = parts.port
    except ValueError:
        raise ClusterError(f"Ray address {address!r} has no valid port") from None
    if not parts.hostname:
        raise ClusterError(f"Ray address {address!r} names no host (ray://host:port or host:port)")
    return parts.hostname, port or (RAY_CLIENT_PORT if client else GCS_PORT)


def public_address(address: str | None) -> str | None:
    """The address as a run records it: scheme, host and port only."""
    if address in (None, "", "auto"):
        return address or "local"
    host, port = host_port(str(address))
    return f"ray://{host}:{port}" if str(address).startswith("ray://") else f"{host}:{port}"


# The HTTP/2 client preface and an empty SETTINGS frame: Ray's head answers both its ports (GCS,
# Ray Client) with gRPC, which begins its reply with a SETTINGS frame (frame type 4)
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 4


def probe(address: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Raise ClusterError naming `address` unless it is a Ray head, within `timeout` seconds:
    a TCP connection must open and the other end must speak gRPC (HTTP/2), as Ray's GCS and Ray
    Client ports do. Ray itself would retry for a minute or more against a port that answers
    something else (a web server, a database), then fail with a stack trace. With Ray's TLS
    (RAY_USE_TLS=1) only the connection is checked."""
    host, port = host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout) as conn:
            if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
                return
            conn.settimeout(timeout)
            conn.sendall(_H2_PREFACE)
            head = _read_exactly(conn, 9)
    except OSError as e:
        raise ClusterError(
            f"cannot reach the Ray cluster at {address} ({host}:{port}: "
            f"{e.strerror or type(e).__name__}); start one with `ray start --head` on that "
            "machine, or check --ray-address / $RAY_ADDRESS"
        ) from None
    if len(head) < 9 or head[3] != _H2_SETTINGS:
        what = "closed the connection" if not head else f"answered {head[:9]!r}"
        raise ClusterError(
            f"{address} ({host}:{port}) is not a Ray cluster: it {what} where Ray's gRPC "
            f"handshake was expected. Check the port: the head's GCS listens on {GCS_PORT} "
            f"(host:port), Ray Client on {RAY_CLIENT_PORT} (ray://host:port)"
        )


def _read_exactly(conn: socket.socket, n: int) -> bytes:
    """Up to n bytes (fewer when the other end closes first); socket.timeout propagates."""
    out = b""
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            break
        out += chunk
    return out


def connect(address: str | None) -> Any:
    """Make sure this process is connected to Ray; returns the ray module.

    Already connected (a notebook or a test that called ray.init): that connection is used.
    address None: $RAY_ADDRESS when set, else Ray's own choice: the cluster `ray start` left on
    this machine when there is one (a run then pays no start of Ray), else a Ray started on this
    machine for the process. "auto": the cluster `ray start` left on this machine, or
    $RAY_ADDRESS. Anything else is probed first.

    Where the evaluator package comes from on the workers: a cluster whose nodes are all this
    machine imports it from this checkout (its folder is put on the workers' path); a Ray
    Client address (ray://) or a cluster with nodes on other machines receives it with the job
    (runtime_env py_modules, packed and unpacked for each job): their nodes need the same
    third-party packages (requirements-detectors.txt, requirements-llm.txt), not this
    checkout."""
    if address is None and os.environ.get("RAY_ADDRESS"):
        address = os.environ["RAY_ADDRESS"]
    if address and address != "auto":
        probe(address)
    ray = require_ray()
    if ray.is_initialized():
        return ray
    # ray.init's keyword arguments: names, a logging level, a JobConfig, a runtime env
    kwargs: dict[str, object] = {"namespace": NAMESPACE, "logging_level": logging.WARNING}
    if address is None:
        kwargs["include_dashboard"] = False
        recorded = _recorded_cluster()
        if recorded:
            try:
                probe(recorded, timeout=2.0)
            except ClusterError:
                # Ray would wait for a cluster that stopped without `ray stop`, then fail
                logging.getLogger(__name__).warning(
                    "the Ray cluster `ray start` recorded on this machine (%s) is not running; "
                    "starting a Ray for this run",
                    recorded,
                )
                kwargs["address"] = "local"
    else:
        kwargs["address"] = address
    if address is None or not address.startswith("ray://"):
        from ray.job_config import JobConfig

        kwargs["job_config"] = JobConfig(code_search_path=[_checkout()])
        _init(ray, address, kwargs)
        if _single_machine(ray):
            return ray
        ray.shutdown()  # nodes elsewhere cannot read this checkout: ship it with the job
        del kwargs["job_config"]
    kwargs["runtime_env"] = {"py_modules": [str(Path(_checkout()) / "evaluator")]}
    _init(ray, address, kwargs)
    return ray


def _recorded_cluster() -> str | None:
    """The address of the cluster the last `ray start` on this machine recorded (where Ray
    connects when given no address), None where there is none."""
    try:
        from ray._private.services import find_bootstrap_address

        found = find_bootstrap_address(None)
    except Exception:  # Ray's own bookkeeping: without it, Ray decides as it always does
        return None
    return str(found) if found else None


def _checkout() -> str:
    """The folder that holds the evaluator package."""
    import evaluator

    return str(Path(evaluator.__file__).resolve().parent.parent)


def _single_machine(ray: Any) -> bool:
    """Whether every live node of the connected cluster is this machine."""
    here = ray.util.get_node_ip_address()
    return all(n.get("NodeManagerAddress") == here for n in ray.nodes() if n.get("Alive"))


def _init(ray: Any, address: str | None, kwargs: dict[str, object]) -> None:
    try:
        ray.init(**kwargs)
    except ConnectionError as e:
        where = address
        if address == "auto" and os.environ.get("RAY_ADDRESS"):
            where = f"auto (RAY_ADDRESS={os.environ['RAY_ADDRESS']})"
        hint = "; start one with `ray start --head`, or give --ray-address"
        if address not in (None, "auto") and not os.environ.get("RAY_AUTH_MODE"):
            # Ray connects to an explicit address without its token unless told to
            hint += (
                "; a cluster with Ray's token authentication (the default of `ray start`) "
                "also needs RAY_AUTH_MODE=token here (the token from ~/.ray/auth_token or "
                "RAY_AUTH_TOKEN)"
            )
        raise ClusterError(
            f"cannot reach the Ray cluster at {where}: "
            f"{str(e).splitlines()[0] if str(e) else e}{hint}"
        ) from None


class ClusterSummary(TypedDict):
    """The connected cluster's size, as a run records it."""

    nodes: int
    cpus: float
    gpus: float


def cluster_summary() -> ClusterSummary:
    """CPUs, GPUs and nodes of the connected cluster (for the run's record)."""
    import ray

    res = ray.cluster_resources()
    return {
        "nodes": len([n for n in ray.nodes() if n.get("Alive")]),
        "cpus": float(res.get("CPU", 0.0)),
        "gpus": float(res.get("GPU", 0.0)),
    }
