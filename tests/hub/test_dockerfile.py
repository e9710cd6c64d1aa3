"""The Dockerfile's HEALTHCHECK asks the port the app listens on: $PORT, which the entry script
honours (scripts/space_entrypoint.sh), not a fixed 8501."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def healthcheck_command() -> str:
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    m = re.search(r"^HEALTHCHECK .*? CMD (.+)$", text, re.M)
    assert m, "no HEALTHCHECK"
    return m.group(1).strip()


class Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        ok = self.path == "/_stcore/health"
        self.send_response(200 if ok else 404)
        self.end_headers()
        self.wfile.write(b"ok" if ok else b"")

    def log_message(self, format: str, *args: object) -> None:
        pass


def run_check(port: int) -> int:
    env = {**os.environ, "PORT": str(port)}
    cmd = healthcheck_command().replace("python ", "python3 ", 1)
    return subprocess.run(["sh", "-c", cmd], env=env, timeout=30, capture_output=True).returncode


def test_the_healthcheck_follows_the_port_the_app_listens_on() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        assert port != 8501
        assert run_check(port) == 0
    finally:
        server.shutdown()
        server.server_close()
    assert run_check(port) != 0  # nothing listens there any more


def test_the_entry_script_listens_on_port() -> None:
    script = (REPO / "scripts" / "space_entrypoint.sh").read_text()
    assert 'PORT="${PORT:-8501}"' in script and '--server.port "$PORT"' in script
    assert (
        "ENV" in (REPO / "Dockerfile").read_text()
        and "PORT=8501" in (REPO / "Dockerfile").read_text()
    )
