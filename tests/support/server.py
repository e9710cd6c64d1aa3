"""`streamlit run app.py` as a real server, for the browser tests, the soak test and bench/."""

from __future__ import annotations

import os
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
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
                break
            except OSError:
                tail = log.read_text(errors="replace")[-2000:]
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited: {tail}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start: {tail}") from None
                time.sleep(0.2)
        yield App(url, port, proc, log)
    finally:
        stop(proc)
