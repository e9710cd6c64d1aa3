"""The chat clients and the batch executor against fake OpenAI-compatible and Anthropic servers
on 127.0.0.1: real SDK clients over real HTTP (nothing inside the SDKs is patched)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from evaluator.core.errors import UnknownNameError
from evaluator.llm.cache import ResponseCache, request_key
from evaluator.llm.clients import (
    ChatRequest,
    ChatResponse,
    ClientIdentity,
    LLMConfigError,
    LLMError,
    TransientLLMError,
    make_client,
)
from evaluator.llm.execute import RetryPolicy, run_batch

if os.environ.get("CI"):
    import anthropic  # noqa: F401  (CI must have requirements-llm.txt)
    import openai  # noqa: F401
else:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")

from tests.support.llm_servers import FakeLLMServer, Recorded, Reply

KEY = "sk-test-NOT-A-REAL-KEY-0123456789"
KINDS = ("openai", "anthropic")


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("FACTBOARD_COMPATIBLE_API_KEY", KEY)
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "FACTBOARD_COMPATIBLE_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(params=KINDS)
def server(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    with FakeLLMServer(request.param) as s:
        yield s


def _client(s: FakeLLMServer, timeout: float = 5.0, model: str = "fake-model"):  # type: ignore[no-untyped-def]
    provider = "anthropic" if s.kind == "anthropic" else "compatible"
    return make_client(f"{provider}:{model}", {"base_url": s.url, "timeout": str(timeout)})


class Sleeps:
    """A RetryPolicy sleep that records the waits (and does not wait)."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.at: list[float] = []  # when each wait was asked for (time.monotonic)
        self._lock = threading.Lock()

    def __call__(self, seconds: float) -> None:
        with self._lock:
            self.waits.append(seconds)
            self.at.append(time.monotonic())


def _policy(sleeps: Sleeps, attempts: int = 4) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base=0.01, sleep=sleeps)


# ------------------------------------------------------------------------- one request


def test_request_shape_per_provider(server: FakeLLMServer) -> None:
    c = _client(server)
    r = c.complete(
        ChatRequest(user="Is it consistent?", system="Be strict.", temperature=0.3, max_tokens=77)
    )
    assert (r.text, r.input_tokens, r.output_tokens) == ("Yes.", 12, 3)
    sent = server.requests[-1]
    assert sent.user == "Is it consistent?" and sent.system == "Be strict."
    assert sent.json["temperature"] == 0.3
    assert sent.json["model"] == "fake-model"
    if server.kind == "anthropic":
        assert sent.json["max_tokens"] == 77
        assert sent.json["messages"] == [{"role": "user", "content": "Is it consistent?"}]
    else:
        assert sent.json["max_tokens"] == 77  # compatible servers take max_tokens
        assert sent.json["messages"][0] == {"role": "system", "content": "Be strict."}
    # the key is sent as a header (and nowhere else)
    assert any(KEY in v for v in sent.headers.values())
    assert KEY not in str(c.identity()) and KEY not in repr(c)


def test_openai_provider_uses_max_completion_tokens() -> None:
    with FakeLLMServer("openai") as s:
        c = make_client("openai:gpt-4o", {"base_url": s.url})
        c.complete(ChatRequest(user="x", max_tokens=50))
        assert s.requests[0].json["max_completion_tokens"] == 50
        assert "max_tokens" not in s.requests[0].json
        assert c.identity() == {"provider": "openai", "model": "gpt-4o"}


def test_temperature_can_be_left_out(server: FakeLLMServer) -> None:
    provider = "anthropic" if server.kind == "anthropic" else "compatible"
    c = make_client(f"{provider}:m", {"base_url": server.url, "send_temperature": "no"})
    c.complete(ChatRequest(user="x", temperature=0.7))
    assert "temperature" not in server.requests[0].json


@pytest.mark.parametrize(
    "reply,error",
    [
        (Reply(status=429, headers={"Retry-After": "7"}), TransientLLMError),
        (Reply(status=500), TransientLLMError),
        (Reply(status=503), TransientLLMError),
        (Reply(drop=True), TransientLLMError),
        (Reply(truncate=25), TransientLLMError),  # the body stops mid-JSON
        (Reply(body=b'{"id": "x", "choi'), TransientLLMError),  # a 200 with a truncated body
        (Reply(status=400), LLMError),
        (Reply(status=401), LLMConfigError),
        (Reply(status=404), LLMConfigError),
    ],
)
def test_failures_are_classified(server: FakeLLMServer, reply: Reply, error: type) -> None:
    server.script(reply)
    with pytest.raises(error) as info:
        _client(server).complete(ChatRequest(user="x"))
    assert type(info.value) is error
    if reply.status == 429:
        assert info.value.retry_after == 7.0  # type: ignore[attr-defined]


def test_a_stalled_server_times_out(server: FakeLLMServer) -> None:
    server.script(Reply(delay=5))
    with pytest.raises(TransientLLMError, match="no reply within"):
        _client(server, timeout=0.3).complete(ChatRequest(user="x"))


def test_errors_never_carry_the_key(server: FakeLLMServer) -> None:
    server.script(Reply(status=401, message=f"Incorrect API key provided: {KEY}"))
    with pytest.raises(LLMConfigError) as info:
        _client(server).complete(ChatRequest(user="x"))
    assert KEY not in str(info.value) and "[redacted]" in str(info.value)


def test_configuration_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UnknownNameError, match="anthropic, compatible, openai"):
        make_client("bedrock:claude")
    with pytest.raises(LLMError, match="PROVIDER:MODEL"):
        make_client("gpt-4o")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        make_client("openai:gpt-4o")
    with pytest.raises(LLMConfigError, match="FACTBOARD_COMPATIBLE_BASE_URL"):
        make_client("compatible:llama3")
    with pytest.raises(LLMConfigError, match="not an http"):
        make_client("compatible:llama3", {"base_url": "ftp://x"})
    with pytest.raises(LLMError, match="unknown client option 'temprature'"):
        make_client("compatible:llama3", {"base_url": "http://x", "temprature": "1"})
    # a model name may hold colons (Ollama tags)
    c = make_client("compatible:llama3:8b", {"base_url": "http://127.0.0.1:9/v1"})
    assert c.model == "llama3:8b"


def test_compatible_base_url_from_env_and_no_key_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACTBOARD_COMPATIBLE_API_KEY")
    with FakeLLMServer("openai") as s:
        monkeypatch.setenv("FACTBOARD_COMPATIBLE_BASE_URL", s.url)
        c = make_client("compatible:local-model")
        assert c.complete(ChatRequest(user="x")).text == "Yes."
        assert c.identity()["base_url"] == s.url


# ------------------------------------------------------------------------- retries


def test_retry_after_is_honoured(server: FakeLLMServer) -> None:
    server.script(Reply(status=429, headers={"Retry-After": "2"}))
    sleeps = Sleeps()
    outs, tally = run_batch(
        _client(server), [ChatRequest(user="x")], cache=None, retry=_policy(sleeps)
    )
    assert outs[0].response is not None and outs[0].attempts == 2
    assert len(sleeps.waits) == 1 and 2.0 <= sleeps.waits[0] <= 2.02
    assert (tally.sent, tally.retries, tally.failed) == (2, 1, 0)


def test_retry_after_holds_every_worker() -> None:
    with FakeLLMServer("openai") as s:
        s.script(Reply(status=429, headers={"Retry-After": "3"}))
        sleeps = Sleeps()
        reqs = [ChatRequest(user=f"q{i}") for i in range(6)]
        outs, _ = run_batch(_client(s), reqs, cache=None, concurrency=1, retry=_policy(sleeps))
        assert all(o.response is not None for o in outs) and s.count == 7
        # the told request waits >= 3 s; the later requests are held too (the recorded sleep
        # does not pass time, so each of them waits out what is left of the 3 s: its wait
        # plus the time since the first is the 3 s, however slow the machine)
        assert sleeps.waits[0] >= 3.0
        assert len(sleeps.waits) == 6
        for w, t in zip(sleeps.waits[1:], sleeps.at[1:], strict=True):
            assert 0 < w <= 3.02 and 2.95 <= w + (t - sleeps.at[0]) <= 3.05


@pytest.mark.parametrize(
    "first",
    [
        [Reply(status=500), Reply(status=502)],
        [Reply(delay=3)],
        [Reply(drop=True)],
        [Reply(truncate=30)],
        [Reply(body=b"<html>gateway</html>")],
    ],
    ids=["5xx", "stall", "drop", "truncated", "not-json"],
)
def test_transient_failures_are_retried(server: FakeLLMServer, first: list[Reply]) -> None:
    server.script(*first, Reply(text="No. Wrong."))
    sleeps = Sleeps()
    outs, tally = run_batch(
        _client(server, timeout=0.4), [ChatRequest(user="x")], cache=None, retry=_policy(sleeps)
    )
    assert outs[0].response is not None and outs[0].response.text == "No. Wrong."
    assert server.count == len(first) + 1 and tally.retries == len(first)
    assert len(sleeps.waits) == len(first)


def test_a_request_that_keeps_failing_is_recorded_as_failed(server: FakeLLMServer) -> None:
    server.responder = lambda req: Reply(status=500) if "bad" in req.user else Reply()
    sleeps = Sleeps()
    reqs = [ChatRequest(user=u) for u in ("good 1", "bad", "good 2")]
    outs, tally = run_batch(_client(server), reqs, cache=None, retry=_policy(sleeps, attempts=3))
    assert [o.response is not None for o in outs] == [True, False, True]
    assert "gave up after 3 attempts" in str(outs[1].error) and "HTTP 500" in str(outs[1].error)
    assert tally.failed == 1 and server.count == 5


def test_a_bad_request_fails_at_once_and_a_refused_key_stops_the_batch(
    server: FakeLLMServer,
) -> None:
    server.script(Reply(status=400))
    outs, _ = run_batch(
        _client(server), [ChatRequest(user="x")], cache=None, retry=_policy(Sleeps())
    )
    assert outs[0].error and "HTTP 400" in outs[0].error and server.count == 1
    server.responder = lambda req: Reply(status=401, message=f"bad key {KEY}")
    with pytest.raises(LLMConfigError) as info:
        run_batch(
            _client(server),
            [ChatRequest(user=str(i)) for i in range(20)],
            cache=None,
            concurrency=2,
            retry=_policy(Sleeps()),
        )
    assert KEY not in str(info.value)
    assert server.count < 21  # stopped early, not 20 refused requests


def test_a_retry_after_longer_than_the_limit_is_not_waited_for(server: FakeLLMServer) -> None:
    server.script(Reply(status=429, headers={"Retry-After": "3600"}))
    sleeps = Sleeps()
    pol = RetryPolicy(max_attempts=5, base=0.01, max_retry_after=60, sleep=sleeps)
    outs, _ = run_batch(_client(server), [ChatRequest(user="x")], cache=None, retry=pol)
    assert outs[0].error and "3600" in outs[0].error and not sleeps.waits


# ------------------------------------------------------------------------- concurrency, cache


def test_concurrency_is_bounded() -> None:
    with FakeLLMServer("openai", latency=0.1) as s:
        reqs = [ChatRequest(user=f"q{i}") for i in range(8)]
        outs, _ = run_batch(_client(s), reqs, cache=None, concurrency=4)
        assert all(o.response is not None for o in outs)
        assert 2 <= s.max_active <= 4
        s.max_active = 0
        run_batch(_client(s), reqs, cache=None, concurrency=1)
        assert s.max_active == 1


def test_cache_makes_a_rerun_send_nothing(server: FakeLLMServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    server.responder = lambda req: Reply(text=f"answer to {req.user}", usage=(100, 20))
    reqs = [ChatRequest(user=f"q{i}") for i in range(6)]
    outs, tally = run_batch(_client(server), reqs, cache=cache, price=(1.0, 2.0))
    assert server.count == 6 and tally.cached == 0
    assert tally.input_tokens == 600 and tally.cost == pytest.approx((600 + 2 * 120) / 1e6)
    outs2, tally2 = run_batch(_client(server), reqs, cache=cache, price=(1.0, 2.0))
    assert server.count == 6 and tally2.cached == 6 and tally2.sent == 0
    assert [o.response.text for o in outs2] == [o.response.text for o in outs]  # type: ignore[union-attr]
    assert tally2.cost == 0.0 and tally2.cached_input_tokens == 600
    # another temperature, another repeat index or another model is another request
    run_batch(_client(server), [ChatRequest(user="q0", temperature=0.5)], cache=cache)
    run_batch(_client(server), [ChatRequest(user="q0", repeat=1)], cache=cache)
    run_batch(_client(server, model="other"), [ChatRequest(user="q0")], cache=cache)
    assert server.count == 9
    # the cache holds replies, never the key
    for f in (tmp_path / "cache").rglob("*.json"):
        assert KEY not in f.read_text()


def test_failed_requests_are_not_cached_and_are_sent_again(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path / "cache")
    server.script(Reply(status=500), Reply(status=500))
    reqs = [ChatRequest(user="a"), ChatRequest(user="b")]
    pol = RetryPolicy(max_attempts=1, sleep=Sleeps())
    outs, tally = run_batch(_client(server), reqs, cache=cache, concurrency=1, retry=pol)
    assert tally.failed == 2
    outs, tally = run_batch(_client(server), reqs, cache=cache, retry=pol)
    assert tally.failed == 0 and tally.sent == 2 and server.count == 4
    run_batch(_client(server), reqs, cache=cache, retry=pol)
    assert server.count == 4


@pytest.mark.parametrize("server", ["openai"], indirect=True)  # Messages always reports usage
def test_unknown_usage_makes_cost_unknown_not_zero(server: FakeLLMServer) -> None:
    server.responder = lambda req: Reply(usage=None)
    _, tally = run_batch(_client(server), [ChatRequest(user="x")], cache=None, price=(1.0, 1.0))
    assert tally.cost is None and tally.tokens_unknown == 1
    _, tally = run_batch(_client(server), [ChatRequest(user="y")], cache=None, price=None)
    assert tally.cost is None and "cost unknown" in tally.postfix()


def test_cache_is_safe_under_concurrent_writers(tmp_path: Path) -> None:
    from evaluator.llm.clients import ChatResponse

    cache = ResponseCache(tmp_path / "c")
    ident = {"provider": "compatible", "model": "m"}
    keys = [request_key(ident, ChatRequest(user=f"q{i % 5}")) for i in range(200)]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            cache.put(keys[i], ident, ChatResponse(text=f"r{i % 5}"))
            got = cache.get(keys[i])
            assert got is not None and got.text == f"r{i % 5}"
        except BaseException as e:  # collected and re-raised below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) == 5
    assert not list((tmp_path / "c").rglob("*.tmp"))
    # a damaged entry is a miss, not an error
    p = next((tmp_path / "c").rglob("*.json"))
    p.write_text("{not json")
    assert cache.get(p.stem) is None


def _echo(req: Recorded) -> Reply:
    return Reply(text=req.user.upper())


def test_outcomes_keep_request_order(server: FakeLLMServer) -> None:
    server.responder = _echo
    reqs = [ChatRequest(user=f"q{i}") for i in range(30)]
    outs, _ = run_batch(_client(server), reqs, cache=None, concurrency=8)
    assert [o.response.text for o in outs] == [f"Q{i}" for i in range(30)]  # type: ignore[union-attr]


def test_a_cache_key_and_entry_keep_their_stored_form(tmp_path: Path) -> None:
    # the response cache outlives the code: a key computed, and an entry written, today must be
    # the same bytes as those of the cache already on disk
    ident: ClientIdentity = {
        "provider": "compatible",
        "model": "m-1",
        "base_url": "http://127.0.0.1:9/v1",
    }
    request = ChatRequest(user="Is it consistent?", system="You judge.", repeat=2)
    key = request_key(ident, request)
    assert key == "b7f2f435542e97000ae59758e42a0d5761cb74886449e0c47da6e1dd1ba4e2d5"
    cache = ResponseCache(tmp_path)
    reply = ChatResponse("Yes.", 12, 3, "stop", "m-1")
    cache.put(key, ident, reply)
    assert (tmp_path / key[:2] / f"{key}.json").read_bytes() == (
        b'{"key": "b7f2f435542e97000ae59758e42a0d5761cb74886449e0c47da6e1dd1ba4e2d5", '
        b'"client": {"provider": "compatible", "model": "m-1", "base_url": '
        b'"http://127.0.0.1:9/v1"}, "response": {"text": "Yes.", "input_tokens": 12, '
        b'"output_tokens": 3, "finish_reason": "stop", "model": "m-1"}}'
    )
    assert cache.get(key) == reply
