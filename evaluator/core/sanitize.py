"""What every writer applies before a byte reaches the store: one redaction of secrets and one
strict JSON form (docs/ARCHITECTURE.md, house rule 5).

- `redact(text)`: removes every secret FactBoard reads from the environment (the LLM providers'
  API keys, and the value of any variable named *_TOKEN, *_KEY, *_SECRET or *_PASSWORD, such as
  FACTBOARD_ADMIN_TOKEN or HF_TOKEN) and anything shaped like an API key. An LLM server that
  echoes its key therefore never gets it into the LLM cache, predictions.parquet, run.json or a
  page. Applied by evaluator.store.runs.write_run and evaluator.llm.cache, and to error messages
  by evaluator.llm.clients.
- `dumps_strict(obj)`: JSON with no bare NaN or Infinity (strict parsers reject them): a
  non-finite float is written as null. Used by every JSON file the engine writes (run.json, job
  files, submission records, cache entries).

- `control_char(text)`: the first control or invisible character in a text (C0/C1 controls
  such as ESC and BEL, bidi overrides such as U+202E, zero-width characters such as U+200B, line
  and paragraph separators): a name shown on the board or printed to a terminal may carry none.

Pure functions; the environment is read on each call (a key set after import still counts).
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
from typing import Any

REDACTED = "[redacted]"
# the providers' key variables (evaluator.llm.clients.KEY_ENV) and other secrets by name
SECRET_ENV_NAMES: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "FACTBOARD_COMPATIBLE_API_KEY",
    "FACTBOARD_ADMIN_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
)
_SECRET_SUFFIXES = ("_TOKEN", "_KEY", "_SECRET", "_PASSWORD")
MIN_SECRET_CHARS = 8  # shorter values ("1", "yes") would redact ordinary text
_KEY_PATTERNS = (
    (re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}"), REDACTED),  # OpenAI / Anthropic style keys
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), REDACTED),  # Hugging Face tokens
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{6,}"), r"\1" + REDACTED),
    (
        re.compile(
            r"(?i)((?:api[_-]?key|x-api-key|authorization)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"
        ),
        r"\1" + REDACTED,
    ),
)


def secrets_in_env(environ: dict[str, str] | None = None) -> list[str]:
    """The secret values set in the environment, longest first (a key that contains another is
    removed whole)."""
    env = os.environ if environ is None else environ
    found = {
        v
        for k, v in env.items()
        if (k in SECRET_ENV_NAMES or k.upper().endswith(_SECRET_SUFFIXES))
        and v
        and len(v.strip()) >= MIN_SECRET_CHARS
    }
    return sorted((v.strip() for v in found), key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """text without any secret of the environment and without anything shaped like a key."""
    out = str(text)
    for secret in secrets_in_env() if secrets is None else secrets:
        if secret in out:
            out = out.replace(secret, REDACTED)
    for pattern, repl in _KEY_PATTERNS:
        out = pattern.sub(repl, out)
    return out


def redact_tree(obj: Any, secrets: list[str] | None = None) -> Any:
    """Every string of a JSON-like tree (dicts, lists, strings, numbers) redacted; keys too."""
    secrets = secrets_in_env() if secrets is None else secrets
    if isinstance(obj, str):
        return redact(obj, secrets)
    if isinstance(obj, dict):
        return {redact_tree(k, secrets): redact_tree(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_tree(v, secrets) for v in obj]
    return obj


def finite_tree(obj: Any) -> Any:
    """A JSON-like tree with every NaN or infinite float replaced by None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite_tree(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite_tree(v) for v in obj]
    return obj


def dumps_strict(obj: Any, **kwargs: Any) -> str:
    """json.dumps that never writes NaN or Infinity (non-finite floats become null)."""
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(finite_tree(obj), allow_nan=False, **kwargs)


# Unicode categories that never belong in a shown name: controls (Cc), format characters (Cf:
# bidi overrides, zero-width spaces and joiners, BOM), surrogates, private use, unassigned,
# line and paragraph separators
CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def control_char(text: str, allowed: str = "") -> tuple[int, str] | None:
    """(index, character) of the first control or invisible character in `text` that is not
    in `allowed` (a description may allow "\n\t"); None when there is none."""
    for i, ch in enumerate(text):
        if ch not in allowed and unicodedata.category(ch) in CONTROL_CATEGORIES:
            return i, ch
    return None
