"""Fake LLM servers: a real HTTP server on 127.0.0.1 (a free port) in a background thread.

`FakeLLMServer("openai")` answers POST /v1/chat/completions like the OpenAI API (and any
OpenAI-compatible server); `FakeLLMServer("anthropic")` answers POST /v1/messages like the
Anthropic Messages API. The real SDK clients talk to them over real HTTP.

A test scripts the replies: `server.script(Reply(...), Reply(...))` queues replies that are used
in order, then `server.responder` (a function request -> Reply; by default it answers "Yes.")
answers the rest. A Reply can stall (delay), drop the connection, send a truncated body, return
any status with any headers (429 + Retry-After, 500, ...). Every request is recorded.

`FakeLLMServer("openai", completions=True)` also answers POST /v1/completions (a raw text
prompt, as vLLM does); a Reply's `logprobs` (per generated step, its top (token, logprob) pairs,
the first being the token generated) is then returned as the completion's logprobs.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    text: str | None = "Yes."  # the assistant's reply (wrapped in the provider's JSON)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # a raw body instead of the provider's JSON
    delay: float = 0.0  # seconds to wait before answering (a stall)
    drop: bool = False  # close the connection without answering
    truncate: int | None = None  # send only this many bytes of the body, then close
    usage: tuple[int, int] | None = (12, 3)  # (input, output) tokens; None: no usage field
    message: str | None = None  # the error message of a non-200 reply
    # /v1/completions: per generated step, its top (token, logprob) pairs, the first generated
    logprobs: list[list[tuple[str, float]]] | None = None


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    json: dict[str, Any]
    at: float

    @property
    def user(self) -> str:
        content = self.json["messages"][-1]["content"]
        if isinstance(content, list):
            return "".join(str(b.get("text", "")) for b in content)
        return str(content)

    @property
    def system(self) -> str | None:
        if "system" in self.json:
            s = self.json["system"]
            return s if isinstance(s, str) else "".join(str(b.get("text", "")) for b in s)
        for m in self.json.get("messages", []):
            if m.get("role") == "system":
                return str(m["content"])
        return None

    @property
    def judge_tag(self) -> str | None:
        m = re.search(r"GRADE (\w+): <grade>", self.user)
        return m.group(1) if m else None


class FakeLLMServer:
    def __init__(
        self,
        kind: str = "openai",
        responder: Callable[[Recorded], Reply] | None = None,
        latency: float = 0.0,
        completions: bool = False,
    ):
        if kind not in ("openai", "anthropic"):
            raise ValueError(f"unknown fake server kind {kind!r}")
        self.kind = kind
        self.responder = responder or (lambda req: Reply())
        self.latency = latency  # added to every reply
        self.completions = completions  # also answer POST /v1/completions
        self.requests: list[Recorded] = []
        self._scripted: deque[Reply] = deque()
        self.active = 0  # requests being answered now
        self.max_active = 0  # the most answered at once
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------------ control

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL a client is given."""
        base = f"http://127.0.0.1:{self.port}"
        return base + "/v1" if self.kind == "openai" else base

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._scripted.extend(replies)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def close(self) -> None:
        self._release.set()  # stalled handlers return at once
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ protocol

    def _next(self, req: Recorded) -> Reply:
        with self._lock:
            self.requests.append(req)
            scripted = self._scripted.popleft() if self._scripted else None
        return scripted if scripted is not None else self.responder(req)

    def _body(self, req: Recorded, reply: Reply) -> bytes:
        out: dict[str, Any]
        if reply.body is not None:
            return reply.body
        model = req.json.get("model", "fake-model")
        if reply.status != 200:
            message = reply.message or f"fake error {reply.status}"
            if self.kind == "openai":
                err = {"error": {"message": message, "type": "fake"}}
            else:
                err = {"type": "error", "error": {"type": "fake", "message": message}}
            return json.dumps(err).encode()
        if self.kind == "openai" and req.path == "/v1/completions":
            steps = reply.logprobs or []
            out = {
                "id": "cmpl-fake",
                "object": "text_completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "text": reply.text or "",
                        "finish_reason": "length",
                        "logprobs": {
                            "tokens": [s[0][0] for s in steps],
                            "token_logprobs": [s[0][1] for s in steps],
                            "top_logprobs": [dict(s) for s in steps],
                            "text_offset": list(range(len(steps))),
                        },
                    }
                ],
            }
        elif self.kind == "openai":
            out = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.text},
                        "finish_reason": "stop",
                    }
                ],
            }
            if reply.usage is not None:
                out["usage"] = {
                    "prompt_tokens": reply.usage[0],
                    "completion_tokens": reply.usage[1],
                    "total_tokens": sum(reply.usage),
                }
        else:
            out = {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": reply.text or ""}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": (reply.usage or (0, 0))[0],
                    "output_tokens": (reply.usage or (0, 0))[1],
                },
            }
        return json.dumps(out).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out without a 40 ms stall

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                with server._lock:
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                try:
                    self._post()
                finally:
                    with server._lock:
                        server.active -= 1

            def _post(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    data = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    data = {"_raw": raw.decode("utf-8", "replace")}
                req = Recorded(self.path, dict(self.headers), data, time.monotonic())
                expected = "/v1/chat/completions" if server.kind == "openai" else "/v1/messages"
                raw_text = server.completions and self.path == "/v1/completions"
                if self.path != expected and not raw_text:
                    reply = Reply(status=404, body=b'{"error": {"message": "no such path"}}')
                    with server._lock:
                        server.requests.append(req)
                else:
                    reply = server._next(req)
                wait = reply.delay + server.latency
                if wait:
                    server._release.wait(wait)
                if reply.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                try:
                    self._answer(req, reply)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (its timeout)

            def _answer(self, req: Recorded, reply: Reply) -> None:
                body = server._body(req, reply)
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if reply.truncate is not None:
                    self.wfile.write(body[: reply.truncate])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.close()
                    return
                self.wfile.write(body)

        return Handler
