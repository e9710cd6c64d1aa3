"""LLM requests on Ray: the requests the response cache does not answer are cut into small
chunks, each sent by a Ray task that builds its own client (from "provider:model" and the client
options: API keys come from the environment of the worker that sends, never through Ray) and
sends with evaluator.llm.execute.send_all, the same retries as a local run, through the cluster's
limiter (evaluator.distributed.limiter): `concurrency` requests in flight for the whole cluster,
and a Retry-After pause that holds every worker. `workers` chunks run at once.

The driver caches each reply as its chunk comes back, so a run interrupted as a whole resends
only the chunks that had not come back; a task whose worker dies is run again by Ray
(`max_retries`), and its requests counted once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evaluator.llm.cache import ResponseCache
from evaluator.llm.clients import ChatRequest
from evaluator.llm.execute import Outcome, RetryPolicy, Tally

CHUNK = 16  # requests per task: what an interruption can lose, at most, per worker
TASK_RETRIES = 4
TALLY_COUNTS = ("sent", "retries", "input_tokens", "output_tokens", "tokens_unknown")


def send_chunk(
    client_spec: tuple[str, Mapping[str, str]],
    requests: list[ChatRequest],
    concurrency: int,
    retry: RetryPolicy,
    limiter: Any,
) -> tuple[list[Outcome], dict[str, int]]:
    """Runs in a Ray task: the chunk's outcomes in order and the tally's counts."""
    from evaluator.distributed.limiter import RayGate
    from evaluator.llm.clients import make_client
    from evaluator.llm.execute import send_all

    client = make_client(client_spec[0], dict(client_spec[1]))
    tally = Tally(client.provider, client.model, None, total=len(requests))
    out: list[Outcome | None] = [None] * len(requests)

    def done(i: int, o: Outcome) -> None:
        out[i] = o

    send_all(
        client,
        requests,
        list(range(len(requests))),
        concurrency=concurrency,
        retry=retry,
        tally=tally,
        on_done=done,
        gate=RayGate(limiter),
    )
    counts = {k: int(getattr(tally, k)) for k in TALLY_COUNTS}
    return [o if o is not None else Outcome(error="not run") for o in out], counts


def send_on_ray(
    client_spec: tuple[str, Mapping[str, str]],
    requests: Sequence[ChatRequest],
    todo: Sequence[int],
    *,
    engine: Any,
    concurrency: int,
    retry: RetryPolicy,
    tally: Tally,
    on_done: Callable[[int, Outcome], None],
    cache: ResponseCache | None,
    keys: Sequence[str],
) -> None:
    """Send requests[i] for i in `todo` from Ray tasks; `on_done(i, outcome)` in the driver as
    each chunk comes back (its replies cached first)."""
    from evaluator.distributed.cluster import connect
    from evaluator.distributed.limiter import limiter
    from evaluator.llm.clients import LLMConfigError, make_client

    ray = connect(engine.address)
    ident = make_client(client_spec[0], dict(client_spec[1])).identity()
    gate = limiter(ident, concurrency)
    task = ray.remote(num_cpus=0.5, max_retries=TASK_RETRIES)(send_chunk)
    chunks = [list(todo[k : k + CHUNK]) for k in range(0, len(todo), CHUNK)]
    per_task = max(1, -(-concurrency // engine.workers))  # threads per task: ceil
    spec = (client_spec[0], dict(client_spec[1]))
    pending: dict[Any, list[int]] = {}
    it = iter(chunks)

    def submit() -> None:
        nxt = next(it, None)
        if nxt is not None:
            ref = task.remote(spec, [requests[i] for i in nxt], per_task, retry, gate)
            pending[ref] = nxt

    for _ in range(engine.workers):
        submit()
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                idx = pending.pop(ref)
                try:
                    outs, counts = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    cause = e.as_instanceof_cause()
                    if isinstance(cause, LLMConfigError):
                        raise LLMConfigError(str(cause).splitlines()[-1]) from None
                    raise
                with tally._lock:
                    for k, v in counts.items():
                        setattr(tally, k, getattr(tally, k) + v)
                for i, o in zip(idx, outs, strict=True):
                    if cache is not None and o.response is not None:
                        cache.put(keys[i], ident, o.response)
                    on_done(i, o)
                submit()
    except BaseException:
        for ref in pending:
            ray.cancel(ref)
        raise
