"""One chat-client interface for every LLM provider (docs/ARCHITECTURE.md).

A provider is a factory registered by name; its SDK is imported only when a client is built.

  openai      the OpenAI API (openai SDK); key from $OPENAI_API_KEY; base URL from the option
              base_url or $OPENAI_BASE_URL (the SDK's own variable), else api.openai.com
  anthropic   the Anthropic Messages API (anthropic SDK); key from $ANTHROPIC_API_KEY; base URL
              from the option base_url or $ANTHROPIC_BASE_URL
  compatible  any OpenAI-compatible server (vLLM, Ollama, TGI, llama.cpp, LM Studio, ...) by base
              URL: the option base_url or $FACTBOARD_COMPATIBLE_BASE_URL (required); key from
              $FACTBOARD_COMPATIBLE_API_KEY (optional: local servers usually take none)

API keys come from environment variables only. They are never part of a cache key, a run, a log
line or an error message: errors from the SDKs are passed through `redact` before they travel,
and what is written (runs, the cache) through the same redaction (evaluator.core.sanitize), so a
server that echoes its key cannot get it stored. A reply is cut at MAX_REPLY_CHARS characters
(its finish_reason then says "capped").
The SDKs' own retries are switched off (max_retries=0): retrying, with backoff and Retry-After,
is done once for every provider in evaluator.llm.execute.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, Protocol, TypedDict
from urllib.parse import urlsplit, urlunsplit

from evaluator.core import sanitize
from evaluator.core.errors import FactBoardError
from evaluator.core.registry import Registry
from evaluator.core.sanitize import REDACTED

KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "compatible": "FACTBOARD_COMPATIBLE_API_KEY",
}
COMPATIBLE_BASE_URL_ENV = "FACTBOARD_COMPATIBLE_BASE_URL"
DEFAULT_TIMEOUT = 120.0  # seconds per request
DEFAULT_MAX_TOKENS = 1024
# a reply longer than this is cut (and its finish_reason says so): a server that answers with
# megabytes cannot fill the cache, a run or a page; the prediction-file limit for raw outputs
MAX_REPLY_CHARS = 100_000

# what a client accepts as options (CLI --option KEY=VALUE); the runner and judges add their own
CLIENT_OPTIONS: dict[str, str] = {
    "base_url": "API base URL (openai, anthropic: optional; compatible: required unless "
    f"${COMPATIBLE_BASE_URL_ENV} is set)",
    "timeout": f"seconds to wait for one reply (default {DEFAULT_TIMEOUT:g})",
    "send_temperature": "yes (default) or no: leave the temperature out of the request, for "
    "models that refuse one",
}


# --------------------------------------------------------------------------------------------
# errors


class LLMError(FactBoardError):
    """A request that failed for good (bad request, refused, bad configuration)."""


class LLMConfigError(LLMError):
    """A client that cannot be built or used at all (no key, bad URL, key refused, unknown
    model): the whole run stops, since every request would fail the same way."""


class TransientLLMError(LLMError):
    """A failure worth retrying: 429, 5xx, timeout, dropped connection, a truncated reply.

    retry_after: seconds the server asked us to wait (Retry-After), when it said."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ):
        self.status = status
        self.retry_after = retry_after
        super().__init__(message)


def redact(text: str) -> str:
    """text with every API key from the environment and anything shaped like a key removed
    (the one redaction, evaluator.core.sanitize.redact; the provider keys are at least as
    short as 4 characters here, since an error message is the likeliest place to echo one)."""
    out = str(text)
    for env in KEY_ENV.values():
        secret = os.environ.get(env)
        if secret and len(secret) >= 4:
            out = out.replace(secret, REDACTED)
    return sanitize.redact(out)


def public_url(url: str | None) -> str | None:
    """A base URL fit to store: no user:password, no query string, no fragment."""
    if not url:
        return None
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from Retry-After (seconds or an HTTP date) or retry-after-ms."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            v = float(ms) / 1000.0
            if v >= 0:
                return v
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        v = float(raw)
        return v if v >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


# --------------------------------------------------------------------------------------------
# the interface


class RequestKey(TypedDict):
    """What identifies a request in the response cache's key."""

    system: str | None
    user: str
    temperature: float | None
    max_tokens: int
    repeat: int


class ResponseJSON(TypedDict):
    """A reply as the response cache stores it."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    finish_reason: str | None
    model: str | None


class ClientIdentity(TypedDict):
    """What identifies the answering model (cache key; stored in runs): never a key."""

    provider: str
    model: str
    base_url: NotRequired[str | None]  # a compatible server's, or the public one in a run


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion: a user message (and optionally a system message)."""

    user: str
    system: str | None = None
    temperature: float | None = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    # distinguishes repeated identical requests (--repeats): part of the cache key, not sent
    repeat: int = 0

    def key_fields(self) -> RequestKey:
        return {
            "system": self.system,
            "user": self.user,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "repeat": self.repeat,
        }


@dataclass(frozen=True)
class ChatResponse:
    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str | None = None
    model: str | None = None  # the model the server says answered

    def __post_init__(self) -> None:
        if isinstance(self.text, str) and len(self.text) > MAX_REPLY_CHARS:
            object.__setattr__(self, "text", self.text[:MAX_REPLY_CHARS])
            object.__setattr__(self, "finish_reason", "capped")

    def to_json(self) -> ResponseJSON:
        return {
            "text": self.text,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "finish_reason": self.finish_reason,
            "model": self.model,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ChatResponse:
        if not isinstance(d.get("text"), str):
            raise ValueError("cached response has no text")
        return cls(
            text=d["text"],
            input_tokens=d.get("input_tokens"),
            output_tokens=d.get("output_tokens"),
            finish_reason=d.get("finish_reason"),
            model=d.get("model"),
        )


class ChatClient(Protocol):
    provider: str
    model: str

    def identity(self) -> ClientIdentity:
        """What identifies the answering model (cache key; stored in runs): never a key."""
        ...

    def complete(self, request: ChatRequest) -> ChatResponse:
        """One reply. Raises TransientLLMError (retry), LLMConfigError (stop the run) or
        LLMError (this request failed for good)."""
        ...


# --------------------------------------------------------------------------------------------
# registry

Factory = Callable[[str, Mapping[str, str]], ChatClient]
PROVIDERS: Registry[Factory] = Registry("LLM provider")  # filled below in this module


def register_provider(name: str) -> Callable[[Factory], Factory]:
    return PROVIDERS.register(name)


def provider_names() -> list[str]:
    return PROVIDERS.names()


def split_provider_model(spec: str) -> tuple[str, str]:
    """'openai:gpt-4o' -> ('openai', 'gpt-4o'); the model may itself hold colons
    ('compatible:llama3:8b')."""
    provider, sep, model = str(spec).partition(":")
    provider, model = provider.strip(), model.strip()
    if not sep or not provider or not model:
        raise LLMError(
            f"{spec!r} is not PROVIDER:MODEL (e.g. openai:gpt-4o, "
            "anthropic:claude-3-opus-20240229, compatible:llama3); providers: "
            f"{', '.join(provider_names())}"
        )
    PROVIDERS.get(provider)  # UnknownNameError naming the providers
    return provider, model


def make_client(spec: str, options: Mapping[str, str] | None = None) -> ChatClient:
    """A client for 'provider:model'. Options: see CLIENT_OPTIONS (others are refused here)."""
    provider, model = split_provider_model(spec)
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(CLIENT_OPTIONS))
    if unknown:
        raise LLMError(
            f"unknown client option {unknown[0]!r}; known: {', '.join(sorted(CLIENT_OPTIONS))}"
        )
    return PROVIDERS.get(provider)(model, opts)


def _timeout(options: Mapping[str, str]) -> float:
    raw = options.get("timeout")
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        t = float(raw)
    except ValueError:
        raise LLMError(f"option timeout={raw!r} is not a number of seconds") from None
    if not (t > 0):
        raise LLMError(f"option timeout={raw!r} must be positive")
    return t


def _send_temperature(options: Mapping[str, str]) -> bool:
    raw = str(options.get("send_temperature", "yes")).strip().lower()
    if raw in ("yes", "true", "1"):
        return True
    if raw in ("no", "false", "0"):
        return False
    raise LLMError(f"option send_temperature={raw!r} must be yes or no")


def _key(provider: str, required: bool) -> str | None:
    env = KEY_ENV[provider]
    key = os.environ.get(env, "").strip()
    if not key:
        if required:
            raise LLMConfigError(
                f"provider {provider!r} needs an API key in ${env} (keys are read from the "
                "environment only)"
            )
        return None
    return key


def _check_url(url: str, what: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMConfigError(f"{what} {public_url(url)!r} is not an http(s) URL")
    return url


# --------------------------------------------------------------------------------------------
# OpenAI and OpenAI-compatible servers


def _status_error(provider: str, status: int, message: str, headers: Any) -> LLMError:
    msg = f"{provider} HTTP {status}: {redact(message)[:500]}"
    if status in (408, 409, 425, 429) or status >= 500:
        return TransientLLMError(msg, status=status, retry_after=parse_retry_after(headers))
    if status in (401, 403, 404):
        # a key refused, or a model or URL that does not exist: every request would fail
        return LLMConfigError(msg)
    return LLMError(msg)


@dataclass
class OpenAIChatClient:
    """The openai SDK, for the OpenAI API ("openai") or any compatible server ("compatible")."""

    provider: str
    model: str
    base_url: str | None
    timeout: float
    send_temperature: bool = True
    _api_key: str | None = field(default=None, repr=False)
    _client: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import openai

        self._client = openai.OpenAI(
            api_key=self._api_key or "no-key",
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
        )
        self.base_url = str(self._client.base_url)

    def identity(self) -> ClientIdentity:
        ident: ClientIdentity = {"provider": self.provider, "model": self.model}
        if self.provider == "compatible":  # the same model name on two servers may differ
            ident["base_url"] = public_url(self.base_url)
        return ident

    def complete(self, request: ChatRequest) -> ChatResponse:

        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": request.user})
        # the SDK's keyword arguments, as its create() takes them
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        # the OpenAI API renamed max_tokens; compatible servers still take the old name
        if self.provider == "openai":
            kwargs["max_completion_tokens"] = request.max_tokens
        else:
            kwargs["max_tokens"] = request.max_tokens
        if self.send_temperature and request.temperature is not None:
            kwargs["temperature"] = request.temperature
        with self._errors():
            resp = self._client.chat.completions.create(**kwargs)
        return _openai_response(self.provider, resp)

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """The openai SDK's failures as FactBoard's: timeouts, connection failures and malformed
        replies are transient (retried), HTTP statuses mapped by _status_error; no key shown."""
        import openai

        try:
            yield
        except openai.APITimeoutError:
            raise TransientLLMError(
                f"{self.provider}: no reply within {self.timeout:g} s"
            ) from None
        except openai.APIConnectionError as e:
            raise TransientLLMError(
                f"{self.provider}: connection failed ({redact(_cause(e))})"
            ) from None
        except openai.APIStatusError as e:
            raise _status_error(
                self.provider, e.status_code, _body_message(e), e.response.headers
            ) from None
        except openai.APIResponseValidationError as e:
            raise TransientLLMError(
                f"{self.provider}: malformed reply ({redact(str(e))[:200]})"
            ) from None
        except (json.JSONDecodeError, ValueError) as e:
            raise TransientLLMError(
                f"{self.provider}: unreadable reply body ({redact(str(e))[:200]})"
            ) from None

    def complete_logprobs(
        self, prompt: str, *, max_tokens: int, top_logprobs: int
    ) -> CompletionLogprobs:
        """A raw text completion (POST /completions: the prompt is sent as is, no chat template
        applied) at temperature 0, with the `top_logprobs` likeliest tokens of every generated
        step: a CompletionLogprobs (text, steps of (token, logprob), finish_reason). For
        detectors that read next-token probabilities from a served model (vLLM)."""

        with self._errors():
            resp = self._client.completions.create(
                model=self.model,
                prompt=prompt,
                max_tokens=max_tokens,
                temperature=0.0,
                logprobs=top_logprobs,
            )
        choices = getattr(resp, "choices", None)
        if not choices:
            raise TransientLLMError(f"{self.provider}: reply without choices")
        lp = getattr(choices[0], "logprobs", None)
        tops = getattr(lp, "top_logprobs", None) or []
        steps = tuple(
            tuple((str(t), float(v)) for t, v in (step or {}).items() if v is not None)
            for step in tops
        )
        return CompletionLogprobs(
            str(getattr(choices[0], "text", "") or ""),
            steps,
            getattr(choices[0], "finish_reason", None),
        )


@dataclass(frozen=True)
class CompletionLogprobs:
    text: str
    steps: tuple[tuple[tuple[str, float], ...], ...]  # per generated step: (token, logprob)
    finish_reason: str | None = None


def _openai_response(provider: str, resp: Any) -> ChatResponse:
    choices = getattr(resp, "choices", None)
    if not choices:
        raise TransientLLMError(f"{provider}: reply without choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    text = getattr(message, "content", None) or ""
    usage = getattr(resp, "usage", None)
    return ChatResponse(
        text=str(text),
        input_tokens=getattr(usage, "prompt_tokens", None),
        output_tokens=getattr(usage, "completion_tokens", None),
        finish_reason=getattr(choice, "finish_reason", None),
        model=getattr(resp, "model", None),
    )


def _cause(e: BaseException) -> str:
    c = e.__cause__ or e.__context__
    return f"{type(c).__name__}: {c}" if c is not None else str(e)


def _body_message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(e, "message", "") or e)


@register_provider("openai")
def _openai(model: str, options: Mapping[str, str]) -> ChatClient:
    key = _key("openai", required=True)
    url = options.get("base_url") or os.environ.get("OPENAI_BASE_URL") or None
    if url:
        _check_url(url, "base_url")
    return OpenAIChatClient(
        "openai", model, url, _timeout(options), _send_temperature(options), _api_key=key
    )


@register_provider("compatible")
def _compatible(model: str, options: Mapping[str, str]) -> ChatClient:
    url = options.get("base_url") or os.environ.get(COMPATIBLE_BASE_URL_ENV)
    if not url:
        raise LLMConfigError(
            "provider 'compatible' needs the server's base URL: --option base_url=URL "
            f"(e.g. http://localhost:8000/v1 for vLLM, http://localhost:11434/v1 for Ollama) or "
            f"${COMPATIBLE_BASE_URL_ENV}"
        )
    _check_url(url, "base_url")
    return OpenAIChatClient(
        "compatible",
        model,
        url,
        _timeout(options),
        _send_temperature(options),
        _api_key=_key("compatible", required=False),
    )


# --------------------------------------------------------------------------------------------
# Anthropic


@dataclass
class AnthropicChatClient:
    provider: str
    model: str
    base_url: str | None
    timeout: float
    send_temperature: bool = True
    _api_key: str | None = field(default=None, repr=False)
    _client: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import anthropic

        self._client = anthropic.Anthropic(
            api_key=self._api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
        )
        self.base_url = str(self._client.base_url)

    def identity(self) -> ClientIdentity:
        return {"provider": self.provider, "model": self.model}

    def complete(self, request: ChatRequest) -> ChatResponse:
        import anthropic

        # the SDK's keyword arguments, as its create() takes them
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": "user", "content": request.user}],
        }
        if request.system:
            kwargs["system"] = request.system
        if self.send_temperature and request.temperature is not None:
            # not a named argument of the current SDK; the Messages API takes it in the body
            kwargs["extra_body"] = {"temperature": request.temperature}
        try:
            resp = self._client.messages.create(**kwargs)
        except anthropic.APITimeoutError:
            raise TransientLLMError(f"anthropic: no reply within {self.timeout:g} s") from None
        except anthropic.APIConnectionError as e:
            raise TransientLLMError(f"anthropic: connection failed ({redact(_cause(e))})") from None
        except anthropic.APIStatusError as e:
            raise _status_error(
                "anthropic", e.status_code, _body_message(e), e.response.headers
            ) from None
        except anthropic.APIResponseValidationError as e:
            raise TransientLLMError(
                f"anthropic: malformed reply ({redact(str(e))[:200]})"
            ) from None
        except (json.JSONDecodeError, ValueError) as e:
            raise TransientLLMError(
                f"anthropic: unreadable reply body ({redact(str(e))[:200]})"
            ) from None
        blocks = getattr(resp, "content", None)
        if not isinstance(blocks, list):
            raise TransientLLMError("anthropic: reply without content")
        text = "".join(
            str(getattr(b, "text", "")) for b in blocks if getattr(b, "type", None) == "text"
        )
        usage = getattr(resp, "usage", None)
        return ChatResponse(
            text=text,
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
            finish_reason=getattr(resp, "stop_reason", None),
            model=getattr(resp, "model", None),
        )


@register_provider("anthropic")
def _anthropic(model: str, options: Mapping[str, str]) -> ChatClient:
    key = _key("anthropic", required=True)
    url = options.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or None
    if url:
        _check_url(url, "base_url")
    return AnthropicChatClient(
        "anthropic", model, url, _timeout(options), _send_temperature(options), _api_key=key
    )
