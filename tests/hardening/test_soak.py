"""Soak: the app under 20 concurrent sessions while a worker writes runs; bounded in time, and no
session may see an error.

The app runs as it does in production (`streamlit run app.py`, one server process, its sessions
on their own threads); each session is a client of Streamlit's own websocket protocol (what the
browser speaks: a rerun request, then the page's elements until the run finishes), so 20
sessions cost no browser. A session fails on any exception or error element the page sends. The
worker is a real `python -m evaluator worker` process writing runs meanwhile. The soak is a
fixed amount of work, bounded by timeouts (HANG_S) rather than timed (house rule 14).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from evaluator.jobs import queue
from evaluator.store import layout, runs
from tests.support.server import running_app, stop
from tests.support.submit import start_worker

SESSIONS = 20
PAGES = ("", "samples", "queue", "benchmarks", "compare")  # "": the default page (the board)
RERUNS = 2
# a bound, not a speed target (bench/ measures speed): the soak is a fixed amount of work (20
# sessions, 2 runs each; about 20 s here) and a hung session fails the test after this long
HANG_S = 120.0


async def _session(url: str, page: str, i: int) -> list[str]:
    """One browser session: open a page and rerun it (the board changes meanwhile); the
    problems it was shown."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    problems: list[str] = []
    async with websockets.connect(
        url,
        subprotocols=["streamlit"],
        max_size=None,
        open_timeout=HANG_S,  # type: ignore[list-item]
    ) as ws:
        for _ in range(RERUNS):
            back = BackMsg()
            back.rerun_script.query_string = ""
            back.rerun_script.page_name = page
            await ws.send(back.SerializeToString())
            elements = 0
            while True:
                raw = await asyncio.wait_for(ws.recv(), HANG_S)
                msg = ForwardMsg()
                msg.ParseFromString(raw if isinstance(raw, bytes) else raw.encode())
                kind = msg.WhichOneof("type")
                if kind == "page_not_found":
                    problems.append(f"session {i}: page {page!r} not found")
                if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                    el = msg.delta.new_element
                    elements += 1
                    if el.WhichOneof("type") == "exception":
                        problems.append(f"session {i} ({page}): {el.exception.message}")
                    if el.WhichOneof("type") == "alert" and el.alert.format == 1:  # ERROR
                        problems.append(f"session {i} ({page}): error shown: {el.alert.body}")
                if kind == "script_finished":
                    break
            if elements == 0:
                problems.append(f"session {i} ({page}): the page showed nothing")
    return problems


async def _all_sessions(url: str) -> list[str]:
    found = await asyncio.wait_for(
        asyncio.gather(*(_session(url, PAGES[i % len(PAGES)], i) for i in range(SESSIONS))),
        HANG_S,
    )
    return [p for f in found for p in f]


@pytest.mark.slow
def test_twenty_sessions_while_a_worker_writes_runs(demo: Path, tmp_path: Path) -> None:
    source = sorted(p.name for p in layout.runs_dir().iterdir())[0]
    for n in range(6):
        queue.enqueue("slow", {"dir": str(tmp_path), "model": f"Soak {n}", "write_first": True})
    (tmp_path / "gate").touch()  # the slow jobs write their run and finish at once
    log = tmp_path / "streamlit.log"
    worker = None
    with running_app({"HF_HUB_OFFLINE": "1"}, log) as app:
        try:
            worker = start_worker("tests.support.submit:register_slow")
            problems = asyncio.run(_all_sessions(f"ws://127.0.0.1:{app.port}/_stcore/stream"))
            assert problems == [], "\n".join(problems)
            deadline = time.monotonic() + 30
            while queue.counts()["done"] < 6 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert queue.counts() == {"pending": 0, "running": 0, "done": 6, "failed": 0}
            assert len([r for r in runs.list_runs().runs if r.model.name.startswith("Soak ")]) == 6
            assert source in {p.name for p in layout.runs_dir().iterdir()}
            assert "Traceback" not in log.read_text()
        finally:
            stop(worker)
