"""Connecting to Ray: a local Ray started for the run, the cluster this machine belongs to
(`auto`, or $RAY_ADDRESS), or a remote head (`ray://host:port` through Ray Client, `host:port`
for the head's GCS). An address that cannot be reached is a FactBoardError that names it, before
Ray is asked to connect (Ray's own failure is a long retry loop and a stack trace)."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path
from typing import Any
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


def probe(address: str, timeout: float = PROBE_TIMEOUT_S) -> None:
    """Raise ClusterError naming `address` unless a TCP connection to it opens."""
    host, port = host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as e:
        raise ClusterError(
            f"cannot reach the Ray cluster at {address} ({host}:{port}: "
            f"{e.strerror or type(e).__name__}); start one with `ray start --head` on that "
            "machine, or check --ray-address / $RAY_ADDRESS"
        ) from None


def connect(address: str | None) -> Any:
    """Make sure this process is connected to Ray; returns the ray module.

    Already connected (a notebook or a test that called ray.init): that connection is used.
    address None: $RAY_ADDRESS when set, else a Ray started on this machine for the process.
    "auto": the cluster
    `ray start` left on this machine, or $RAY_ADDRESS. Anything else is probed first. A remote
    cluster receives the evaluator package with the job (runtime_env py_modules): its nodes need
    the same third-party packages (requirements-detectors.txt, requirements-llm.txt), not this
    checkout."""
    if address is None and os.environ.get("RAY_ADDRESS"):
        address = os.environ["RAY_ADDRESS"]
    if address and address != "auto":
        probe(address)
    ray = require_ray()
    if ray.is_initialized():
        return ray
    kwargs: dict[str, Any] = {"namespace": NAMESPACE, "logging_level": logging.WARNING}
    if address is None:
        kwargs["include_dashboard"] = False
    else:
        import evaluator

        kwargs["address"] = address
        kwargs["runtime_env"] = {"py_modules": [str(Path(evaluator.__file__).parent)]}
    try:
        ray.init(**kwargs)
    except ConnectionError as e:
        where = address
        if address == "auto" and os.environ.get("RAY_ADDRESS"):
            where = f"auto (RAY_ADDRESS={os.environ['RAY_ADDRESS']})"
        raise ClusterError(
            f"cannot reach the Ray cluster at {where}: {str(e).splitlines()[0] if str(e) else e}"
            "; start one with `ray start --head`, or give --ray-address"
        ) from None
    return ray


def cluster_summary() -> dict[str, Any]:
    """CPUs, GPUs and nodes of the connected cluster (for the run's record)."""
    import ray

    res = ray.cluster_resources()
    return {
        "nodes": len([n for n in ray.nodes() if n.get("Alive")]),
        "cpus": float(res.get("CPU", 0.0)),
        "gpus": float(res.get("GPU", 0.0)),
    }
