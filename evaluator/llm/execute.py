"""Sending many chat requests: the cache first, then bounded concurrency with retries.

- Every request is looked up in the response cache; only misses are sent.
- Misses run on a thread pool of `concurrency` workers (the SDK clients are thread-safe).
- TransientLLMError (429, 5xx, timeouts, dropped connections, truncated replies) is retried with
  exponential backoff and full jitter, up to `max_attempts` attempts in all; when the server sent
  Retry-After, the wait is at least that long, and every other worker also holds its next
  request until then (a rate limit applies to the whole batch). Both go through a Gate:
  LocalGate in this process, evaluator.distributed.limiter.RayGate across a Ray cluster (the
  ray engine sends the cache's misses from Ray tasks, evaluator.distributed.llm).
- A request that keeps failing, or fails for good (e.g. HTTP 400), becomes a failed outcome for
  its sample: the caller records it and the run says how many failed.
- LLMConfigError (no key, key refused, unknown model: every request would fail) stops everything.
- A successful reply is cached at once, so an interrupted run loses nothing it already paid for.

Token counts and the cost of the requests actually sent are tallied (a small price table per
model; unknown models have an unknown cost, never zero).
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from evaluator.core.errors import FactBoardError
from evaluator.llm.cache import ResponseCache, request_key
from evaluator.llm.clients import (
    ChatClient,
    ChatRequest,
    ChatResponse,
    LLMConfigError,
    LLMError,
    TransientLLMError,
    redact,
)

# USD per million tokens (input, output), list prices as published by the providers (checked
# 2025-06). A dated model id ("gpt-4o-2024-08-06", "claude-3-opus-20240229") takes the price of
# its family. Used for the progress bar and the run record only; override with the options
# price_in and price_out.
PRICES: dict[str, tuple[float, float]] = {
    "openai:gpt-4o": (2.50, 10.00),
    "openai:gpt-4o-mini": (0.15, 0.60),
    "openai:gpt-4-turbo": (10.00, 30.00),
    "openai:gpt-4": (30.00, 60.00),
    "openai:gpt-3.5-turbo": (0.50, 1.50),
    "openai:gpt-4.1": (2.00, 8.00),
    "openai:gpt-4.1-mini": (0.40, 1.60),
    "openai:gpt-4.1-nano": (0.10, 0.40),
    "openai:o3-mini": (1.10, 4.40),
    "anthropic:claude-3-opus": (15.00, 75.00),
    "anthropic:claude-3-sonnet": (3.00, 15.00),
    "anthropic:claude-3-haiku": (0.25, 1.25),
    "anthropic:claude-3-5-sonnet": (3.00, 15.00),
    "anthropic:claude-3-5-haiku": (0.80, 4.00),
    "anthropic:claude-3-7-sonnet": (3.00, 15.00),
    "anthropic:claude-sonnet-4": (3.00, 15.00),
    "anthropic:claude-opus-4": (15.00, 75.00),
}
_DATED = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest|-v\d+(:\d+)?)?$")


def price_of(provider: str, model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None when the model is not in the table."""
    name = f"{provider}:{model}"
    if name in PRICES:
        return PRICES[name]
    best = None
    for known in PRICES:
        fits = name.startswith(known) and _DATED.fullmatch(name[len(known) :])
        if fits and (best is None or len(known) > len(best)):
            best = known
    return PRICES[best] if best else None


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6  # attempts in all, the first included
    base: float = 1.0  # seconds; attempt n waits up to base * 2**(n-1) (full jitter)
    cap: float = 60.0
    max_retry_after: float = 600.0  # a server asking for longer than this is not waited for
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt `attempt + 1`: Retry-After (plus a little jitter so
        that waiting threads do not return at once) when the server sent one, else full-jitter
        exponential backoff."""
        if retry_after is not None and retry_after > 0:
            return retry_after + self.rng.uniform(0, min(1.0, self.base))
        return self.rng.uniform(0, min(self.cap, self.base * 2 ** (attempt - 1)))


@dataclass
class Outcome:
    response: ChatResponse | None = None
    error: str | None = None  # why the request failed for good
    cached: bool = False
    attempts: int = 0


class BatchUsage(TypedDict):
    """A batch's requests, tokens and cost (Tally.record)."""

    requests: int
    sent: int
    retries: int
    cached: int
    failed: int
    input_tokens: int
    output_tokens: int
    replies_without_usage: int
    cached_input_tokens: int
    cached_output_tokens: int
    cost_usd: float | None
    price_usd_per_mtok: list[float] | None


@dataclass
class Tally:
    """Counts over one batch (thread-safe updates through add_*)."""

    provider: str
    model: str
    price: tuple[float, float] | None
    total: int = 0
    done: int = 0
    sent: int = 0  # HTTP requests made, retries included
    retries: int = 0
    cached: int = 0
    failed: int = 0
    input_tokens: int = 0  # of replies received in this batch (not cached ones)
    output_tokens: int = 0
    tokens_unknown: int = 0  # replies that carried no usage
    cached_input_tokens: int = 0
    cached_output_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def cost(self) -> float | None:
        """USD for the replies received in this batch; None when the price or a count is
        unknown."""
        if self.price is None or self.tokens_unknown:
            return None
        return (self.input_tokens * self.price[0] + self.output_tokens * self.price[1]) / 1e6

    def record(self) -> BatchUsage:
        cost = self.cost
        return {
            "requests": self.total,
            "sent": self.sent,
            "retries": self.retries,
            "cached": self.cached,
            "failed": self.failed,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "replies_without_usage": self.tokens_unknown,
            "cached_input_tokens": self.cached_input_tokens,
            "cached_output_tokens": self.cached_output_tokens,
            "cost_usd": round(cost, 6) if cost is not None else None,
            "price_usd_per_mtok": list(self.price) if self.price else None,
        }

    def postfix(self) -> str:
        cost = self.cost
        money = f"${cost:.4f}" if cost is not None else "cost unknown"
        return (
            f"in={self.input_tokens:,} out={self.output_tokens:,} tok, {money}, "
            f"cached={self.cached}, failed={self.failed}"
        )


Progress = Callable[[Tally], None]


class Gate(Protocol):
    """What every request passes through besides the thread pool: a concurrency limit and a
    shared pause (a server's Retry-After holds every sender, not only the one that was told).
    LocalGate holds them for this process; evaluator.distributed.limiter.RayGate for a whole Ray
    cluster, so that a per-provider limit is one limit however many workers send."""

    def hold(self) -> float:
        """Seconds to wait before sending (0 when no pause is on)."""
        ...

    def pause(self, seconds: float) -> None:
        """Hold every sender for `seconds` from now."""
        ...

    def acquire(self) -> None:
        """Take a slot (blocks while the limit is reached)."""
        ...

    def release(self) -> None: ...


class LocalGate:
    """The gate of one process: the thread pool bounds concurrency; the pause is shared by its
    threads."""

    def __init__(self) -> None:
        self._until = 0.0
        self._lock = threading.Lock()

    def hold(self) -> float:
        with self._lock:
            return self._until - time.monotonic()

    def pause(self, seconds: float) -> None:
        with self._lock:
            self._until = max(self._until, time.monotonic() + seconds)

    def acquire(self) -> None:
        return None

    def release(self) -> None:
        return None


def _given_up(err: TransientLLMError, attempt: int, retry: RetryPolicy) -> Outcome | None:
    """The outcome of a request that is not retried after a transient error: its attempts are
    spent, or the server asks for a longer wait than the policy allows; None: retry."""
    if attempt >= retry.max_attempts:
        return Outcome(
            error=f"gave up after {attempt} attempts: {redact(str(err))}",
            attempts=attempt,
        )
    if err.retry_after is not None and err.retry_after > retry.max_retry_after:
        return Outcome(
            error=(
                f"server asked to retry after {err.retry_after:.0f} s (more than "
                f"{retry.max_retry_after:.0f} s): {redact(str(err))}"
            ),
            attempts=attempt,
        )
    return None


def _count_tokens(tally: Tally, resp: ChatResponse) -> None:
    with tally._lock:
        if resp.input_tokens is None or resp.output_tokens is None:
            tally.tokens_unknown += 1
        tally.input_tokens += resp.input_tokens or 0
        tally.output_tokens += resp.output_tokens or 0


def send_all(
    client: ChatClient,
    requests: Sequence[ChatRequest],
    todo: Sequence[int],
    *,
    concurrency: int,
    retry: RetryPolicy,
    tally: Tally,
    on_done: Callable[[int, Outcome], None],
    gate: Gate | None = None,
    cache: ResponseCache | None = None,
    keys: Sequence[str] | None = None,
) -> None:
    """Send requests[i] for each i in `todo` on a pool of `concurrency` threads, with retries,
    through `gate`; `on_done(i, outcome)` as each one ends (in this thread). With `cache`, a
    reply is cached as soon as it arrives. LLMConfigError stops everything and is raised."""
    gate = gate or LocalGate()
    ident = client.identity()
    stop = threading.Event()

    def one(i: int) -> Outcome:
        req = requests[i]
        attempt = 0
        backed_off = False  # this request has just waited out its own backoff
        while True:
            if stop.is_set():
                return Outcome(error="cancelled", attempts=attempt)
            if not backed_off:
                hold = gate.hold()
                if hold > 0:
                    retry.sleep(hold)
            backed_off = False
            attempt += 1
            with tally._lock:
                tally.sent += 1
            gate.acquire()
            try:
                resp = client.complete(req)
            except LLMConfigError:
                raise
            except TransientLLMError as exc:
                transient: TransientLLMError | None = exc
            except LLMError as e:
                return Outcome(error=redact(str(e)), attempts=attempt)
            else:
                transient = None
            finally:
                gate.release()
            if transient is not None:
                err = transient
                given_up = _given_up(err, attempt, retry)
                if given_up is not None:
                    return given_up
                with tally._lock:
                    tally.retries += 1
                wait = retry.delay(attempt, err.retry_after)
                if err.retry_after is not None:
                    gate.pause(err.retry_after)
                retry.sleep(wait)
                backed_off = True
                continue
            if cache is not None and keys is not None:
                cache.put(keys[i], ident, resp)
            _count_tokens(tally, resp)
            return Outcome(response=resp, attempts=attempt)

    if not todo:
        return
    with ThreadPoolExecutor(max_workers=min(concurrency, len(todo))) as pool:
        pending: dict[Future[Outcome], int] = {}
        it = iter(todo)
        # keep at most 2x concurrency in flight so an interrupt stops promptly
        for i in it:
            pending[pool.submit(one, i)] = i
            if len(pending) >= 2 * concurrency:
                break
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    i = pending.pop(fut)
                    on_done(i, fut.result())
                    nxt = next(it, None)
                    if nxt is not None:
                        pending[pool.submit(one, nxt)] = nxt
        except BaseException:
            stop.set()
            for fut in pending:
                fut.cancel()
            raise


def run_batch(
    client: ChatClient,
    requests: Sequence[ChatRequest],
    *,
    cache: ResponseCache | None,
    concurrency: int = 8,
    retry: RetryPolicy | None = None,
    price: tuple[float, float] | None = None,
    progress: bool = False,
    desc: str = "LLM",
    on_progress: Progress | None = None,
    engine: Any = None,
    client_spec: tuple[str, Mapping[str, str]] | None = None,
) -> tuple[list[Outcome], Tally]:
    """One Outcome per request, in order, and the batch's tally.

    engine: an evaluator.runner.Engine; with `ray`, the requests the cache does not answer are
    sent from Ray tasks (evaluator.distributed.llm), each building its client from
    `client_spec` (the "provider:model" and client options), with `concurrency` requests in
    flight across the whole cluster. The cache is read and written here, in the driver."""
    if concurrency < 1:
        raise FactBoardError(f"concurrency must be at least 1, got {concurrency}")
    on_ray = engine is not None and getattr(engine, "is_ray", False)
    if on_ray and client_spec is None:
        raise FactBoardError("the ray engine needs the client's provider:model and options")
    retry = retry or RetryPolicy()
    ident = client.identity()
    tally = Tally(client.provider, client.model, price, total=len(requests))
    outcomes: list[Outcome | None] = [None] * len(requests)
    keys = [request_key(ident, r) for r in requests]

    from tqdm import tqdm

    bar = tqdm(total=len(requests), desc=desc, unit="req", disable=not progress, leave=True)

    def tick(n: int = 1) -> None:
        with tally._lock:
            tally.done += n
        bar.update(n)
        bar.set_postfix_str(tally.postfix(), refresh=False)
        if on_progress is not None:
            on_progress(tally)

    todo: list[int] = []
    if cache is not None:
        hits = 0
        for i, k in enumerate(keys):
            hit = cache.get(k)
            if hit is None:
                todo.append(i)
                continue
            outcomes[i] = Outcome(response=hit, cached=True)
            hits += 1
            tally.cached += 1
            tally.cached_input_tokens += hit.input_tokens or 0
            tally.cached_output_tokens += hit.output_tokens or 0
        if hits:
            tick(hits)
    else:
        todo = list(range(len(requests)))

    def done(i: int, out: Outcome) -> None:
        outcomes[i] = out
        if out.error is not None:
            with tally._lock:
                tally.failed += 1
        tick()

    try:
        if on_ray and todo:
            assert client_spec is not None
            engine.send_llm(  # the engine knows where its workers are (evaluator.runner)
                client_spec,
                requests,
                todo,
                concurrency=concurrency,
                retry=retry,
                tally=tally,
                on_done=done,
                cache=cache,
                keys=keys,
            )
        else:
            send_all(
                client,
                requests,
                todo,
                concurrency=concurrency,
                retry=retry,
                tally=tally,
                on_done=done,
                cache=cache,
                keys=keys,
            )
    finally:
        bar.close()
    return [o if o is not None else Outcome(error="not run") for o in outcomes], tally
