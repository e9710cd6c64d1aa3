"""`streamlit run app.py` and the container's entry point as real servers, for the browser tests,
the soak test and bench/."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(proc: subprocess.Popen[bytes] | subprocess.Popen[str] | None) -> None:
    """Terminate a child process, killing it if it does not exit within 20 s."""
    if proc is None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


@dataclass
class App:
    url: str  # http://127.0.0.1:<port>
    port: int
    proc: subprocess.Popen[bytes]
    log: Path


@contextmanager
def running_app(env: Mapping[str, str], log: Path, start_timeout: float = 60.0) -> Iterator[App]:
    """The app on a free port with `env` added to this process's environment; yields once
    Streamlit's /_stcore/health answers (RuntimeError with the log's tail if it exits or never
    answers), and stops it afterwards."""
    port = free_port()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(REPO / "app.py"),
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=REPO,
            env={**os.environ, **env},
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, log, start_timeout)
        yield App(url, port, proc, log)
    finally:
        stop(proc)


def wait_healthy(
    url: str, proc: subprocess.Popen[bytes], log: Path, limit: float, every: float = 0.2
) -> None:
    """Until the server at `url` answers Streamlit's /_stcore/health; RuntimeError with the
    log's tail if its process exits first or `limit` seconds pass."""
    deadline = time.monotonic() + limit
    while True:
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            return
        except OSError:
            tail = log.read_text(errors="replace")[-3000:]
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited: {tail}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {tail}") from None
            time.sleep(every)


@contextmanager
def running_entrypoint(
    env: Mapping[str, str], log: Path, start_timeout: float
) -> Iterator[subprocess.Popen[bytes]]:
    """The container's entry point (scripts/space_entrypoint.sh) with exactly `env` (its
    $PORT among it), in a session of its own; yields once its server answers its health check
    (wait_healthy), and stops the whole session afterwards (the server and any worker)."""
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            ["bash", str(REPO / "scripts" / "space_entrypoint.sh")],
            cwd=REPO,
            env=dict(env),
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_healthy(f"http://127.0.0.1:{env['PORT']}", proc, log, start_timeout, every=0.1)
        yield proc
    finally:
        stop_session(proc)


def stop_session(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a child started in a session of its own, with every process of that session
    (killed if they do not exit within 20 s)."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(20)
