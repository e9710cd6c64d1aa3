"""A persistent cache of LLM replies: one JSON file per request under <data root>/.cache/llm/.

The key is the sha256 of the client's identity (provider, model, and for OpenAI-compatible
servers the base URL) and the request (system and user text, temperature, max_tokens, repeat
index), so a rerun, or a run resumed after an interruption, makes no request it has already made.
Only successful replies are stored; a failed request is asked again next time.

Concurrency: a file is written to a temporary name and renamed into place (atomic on POSIX), so
any number of threads and processes can read and write the cache at once; two writers of the same
key write the same reply, and the last rename wins. Files hold the reply and its token counts,
never an API key: keys are not part of a request, and what is written goes through the one
redaction (evaluator.core.sanitize), so a server that echoes its key does not get it cached.
Replies are capped at evaluator.llm.clients.MAX_REPLY_CHARS.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from evaluator.core.sanitize import redact_tree
from evaluator.llm.clients import ChatRequest, ChatResponse, ClientIdentity
from evaluator.store import atomic, layout

CACHE_ENV = "FACTBOARD_LLM_CACHE"
FORMAT = 1


def default_dir(root: Path | None = None) -> Path:
    """$FACTBOARD_LLM_CACHE, else <data root>/.cache/llm (ignored by git)."""
    env = os.environ.get(CACHE_ENV)
    if env and root is None:
        return Path(env).expanduser().resolve()
    return (root or layout.data_root()) / ".cache" / "llm"


def request_key(identity: ClientIdentity, request: ChatRequest) -> str:
    body = {"format": FORMAT, "client": identity, "request": request.key_fields()}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResponse | None:
        p = self._path(key)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None  # a damaged entry is a miss; the next reply overwrites it
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        try:
            return ChatResponse.from_json(data.get("response") or {})
        except (ValueError, TypeError, AttributeError):
            return None

    def put(self, key: str, identity: ClientIdentity, response: ChatResponse) -> None:
        p = self._path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        payload = redact_tree({"key": key, "client": identity, "response": response.to_json()})
        atomic.write_json(p, payload, indent=None, fsync=False)

    def __len__(self) -> int:
        if not self.directory.is_dir():
            return 0
        return sum(1 for _ in self.directory.glob("*/*.json"))
