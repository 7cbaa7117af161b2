"""The OpenAI-compatible backend against a real HTTP server on 127.0.0.1 (cruxtui.testing.fake_openai):
chat, completions, streaming, every fault, and the messages a user sees."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path

import pytest

from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.models import (
    ModelError,
    ModelSpec,
    RetryPolicy,
    SamplingParams,
    generate_one,
    make_backend,
)
from cruxtui.core.models.endpoints import open_backend
from cruxtui.core.models.openai_compat import (
    OpenAICompatBackend,
    normalize_base_url,
    parse_retry_after,
)
from cruxtui.core.models.prompts import build_prompt
from cruxtui.core.scoring.answers import extract
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI, FakeRequest, Fault, constant
from tests.conftest import CRUXEVAL_JSONL

SAMPLE = Sample("sample_0", "def f(x):\n    return x * 2", "21", "42")
ANSWER = "[ANSWER]\nassert f(21) == 42\n[/ANSWER]"
FAST = RetryPolicy(attempts=4, base_delay=0.01, max_delay=2.0)
KEY = "sk-test-0123456789-secret"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(constant(ANSWER), chunk_chars=4) as srv:
        yield srv


def backend(
    srv: FakeOpenAI,
    api: str = "chat",
    *,
    timeout: float = 5.0,
    model: str = "fake-model",
    key: str | None = None,
    retry: RetryPolicy = FAST,
    hook=None,
) -> OpenAICompatBackend:
    spec = ModelSpec("openai", model, srv.url, api)
    b = make_backend(spec, api_key=key, timeout=timeout, retry=retry, on_retry=hook)
    assert isinstance(b, OpenAICompatBackend)
    return b


def prompt_for(api: str):
    return build_prompt(SAMPLE, "output", "direct", "chat" if api == "chat" else "completion")


# ------------------------------------------------------------------------------ the happy path


@pytest.mark.parametrize("api", ["chat", "completions"])
async def test_complete_returns_n_completions_with_usage(server: FakeOpenAI, api: str) -> None:
    b = backend(server, api)
    params = SamplingParams(temperature=0.7, top_p=0.9, max_tokens=64, n=3, seed=11)
    results = await b.complete(prompt_for(api), params)
    await b.aclose()
    assert len(results) == 3
    for c in results:
        # the server applied the prompt's stop sequence, as a real one does
        assert c.text == "[ANSWER]\nassert f(21) == 42\n"
        assert c.finish_reason == "stop"
        assert c.tokens_in and c.tokens_in > 50 and c.tokens_out == 7
        assert c.latency > 0
        assert extract(c.text, "output").answer == "42"
    body = server.log.requests[0].body
    assert body["model"] == "fake-model"
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["n"], body["seed"]) == (
        0.7,
        0.9,
        64,
        3,
        11,
    )
    assert body["stop"] == list(prompt_for(api).stop)
    if api == "chat":
        assert body["messages"] == prompt_for(api).messages and "prompt" not in body
    else:
        assert body["prompt"] == prompt_for(api).text and "messages" not in body


@pytest.mark.parametrize("api", ["chat", "completions"])
async def test_stream_yields_chunks_and_stats(server: FakeOpenAI, api: str) -> None:
    b = backend(server, api)
    stream = b.stream(prompt_for(api), SamplingParams(n=1))
    chunks = [c.text async for c in stream]
    await b.aclose()
    assert len(chunks) > 3  # really streamed, in pieces
    assert "".join(chunks) == "[ANSWER]\nassert f(21) == 42\n"
    assert stream.stats.finish_reason == "stop"
    assert stream.stats.tokens_out == 7 and stream.stats.tokens_in
    body = server.log.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_generate_one_streams_to_the_callback(server: FakeOpenAI) -> None:
    b = backend(server)
    seen: list[str] = []
    completion = await generate_one(b, prompt_for("chat"), SamplingParams(), seen.append)
    await b.aclose()
    assert "".join(seen) == completion.text == "[ANSWER]\nassert f(21) == 42\n"
    assert completion.finish_reason == "stop" and completion.tokens_out == 7


async def test_params_stop_overrides_the_prompts_and_max_tokens_cuts(server: FakeOpenAI) -> None:
    b = backend(server)
    [c] = await b.complete(prompt_for("chat"), SamplingParams(stop=("==",)))
    assert c.text == "[ANSWER]\nassert f(21) " and server.log.requests[-1].body["stop"] == ["=="]
    [c] = await b.complete(prompt_for("chat"), SamplingParams(max_tokens=2, stop=()))
    assert c.finish_reason == "length" and len(c.text) == 8
    assert "stop" not in server.log.requests[-1].body
    await b.aclose()


async def test_a_server_that_ignores_n_is_asked_again_one_by_one_with_distinct_seeds() -> None:
    """llama.cpp answers one choice whatever n says: the backend asks for each of the rest on
    its own, with seed + k, so no two generations are one sample repeated."""
    with FakeOpenAI(constant(ANSWER), max_choices=1) as srv:
        b = backend(srv)
        results = await b.complete(prompt_for("chat"), SamplingParams(n=3, seed=7))
        await b.aclose()
    assert len(results) == 3 and all(c.text.startswith("[ANSWER]") for c in results)
    assert [r.body["n"] for r in srv.log.requests] == [3, 1, 1]
    assert [r.body["seed"] for r in srv.log.requests] == [7, 8, 9]
    assert [c.seed for c in results] == [7, 8, 9]
    assert results[0].obtained == "choice 0 of a request for n=3"
    assert all("fewer choices" in c.obtained for c in results[1:])


async def test_a_server_that_honours_n_is_asked_once_and_extra_choices_are_dropped() -> None:
    with FakeOpenAI(constant(ANSWER)) as srv:
        b = backend(srv)
        results = await b.complete(prompt_for("chat"), SamplingParams(n=2, seed=3))
        await b.aclose()
    assert [r.body["n"] for r in srv.log.requests] == [2]
    assert [c.obtained for c in results] == [
        "choice 0 of a request for n=2",
        "choice 1 of a request for n=2",
    ]
    assert [c.seed for c in results] == [3, 3]


async def test_newer_openai_models_get_max_completion_tokens() -> None:
    refusal = (
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead."
    )
    with FakeOpenAI(constant(ANSWER), refuse={"max_tokens": refusal}) as srv:
        b = backend(srv)
        for _ in range(2):
            [c] = await b.complete(prompt_for("chat"), SamplingParams(max_tokens=77))
            assert c.text.startswith("[ANSWER]")
        await b.aclose()
    # learnt once, then sent the right way
    assert [r.body["max_completion_tokens"] for r in srv.log.requests] == [77, 77]
    assert "max_tokens" not in srv.log.requests[-1].body


async def test_a_server_refusing_stream_options_still_streams() -> None:
    with FakeOpenAI(
        constant(ANSWER), refuse={"stream_options": "Unknown field 'stream_options'"}
    ) as srv:
        b = backend(srv)
        completion = await generate_one(b, prompt_for("chat"), SamplingParams())
        await b.aclose()
    assert completion.text == "[ANSWER]\nassert f(21) == 42\n" and completion.tokens_out is None


async def test_other_bad_requests_are_reported_not_retried() -> None:
    with FakeOpenAI(constant(ANSWER), refuse={"top_p": "top_p must be <= 1"}) as srv:
        b = backend(srv)
        with pytest.raises(ModelError) as info:
            await b.complete(prompt_for("chat"), SamplingParams())
        await b.aclose()
    assert info.value.kind == "bad_request" and not info.value.fatal
    assert str(info.value) == f"{srv.url} refused the request (HTTP 400: top_p must be <= 1)"


async def test_list_models(server: FakeOpenAI) -> None:
    server.models.append("other-model")
    b = backend(server)
    assert await b.list_models() == ["fake-model", "other-model"]
    await b.aclose()


# ------------------------------------------------------------------------------ faults


async def test_429_honours_retry_after(server: FakeOpenAI) -> None:
    retries: list[tuple[str, int, float]] = []
    b = backend(server, hook=lambda e, n, wait: retries.append((e.kind, n, wait)))
    server.add_faults(Fault("rate_limit", retry_after=0.4))
    start = time.monotonic()
    [c] = await b.complete(prompt_for("chat"), SamplingParams())
    elapsed = time.monotonic() - start
    await b.aclose()
    assert c.text.startswith("[ANSWER]")
    assert retries == [("rate_limited", 1, 0.4)]
    assert elapsed >= 0.4  # waited as told, not the 0.01 s backoff
    assert b.retries == 1 and server.request_count == 2


async def test_rate_limited_every_time_says_so(server: FakeOpenAI) -> None:
    server.fault_for = lambda n: Fault("rate_limit", retry_after=0.02)
    b = backend(server, retry=RetryPolicy(attempts=3, base_delay=0.01))
    with pytest.raises(ModelError) as info:
        await generate_one(b, prompt_for("chat"), SamplingParams())
    await b.aclose()
    assert info.value.kind == "rate_limited" and not info.value.fatal
    assert str(info.value) == (
        f"{server.url} is rate limiting requests (HTTP 429: Rate limit reached, slow down.) "
        "(gave up after 3 attempts)"
    )
    assert server.request_count == 3


async def test_500_then_success_and_exponential_backoff(server: FakeOpenAI) -> None:
    waits: list[float] = []
    policy = RetryPolicy(attempts=5, base_delay=0.05, jitter=0.0)
    b = backend(server, retry=policy, hook=lambda e, n, w: waits.append(w))
    server.add_faults(
        Fault("server_error"), Fault("server_error", status=503), Fault("server_error", status=502)
    )
    [c] = await b.complete(prompt_for("chat"), SamplingParams())
    await b.aclose()
    assert c.text.startswith("[ANSWER]")
    assert waits == [0.05, 0.1, 0.2]


async def test_persistent_500_gives_up_with_a_clear_message(server: FakeOpenAI) -> None:
    server.fault_for = lambda n: Fault("server_error")
    b = backend(server, retry=RetryPolicy(attempts=3, base_delay=0.01))
    with pytest.raises(ModelError) as info:
        await b.complete(prompt_for("chat"), SamplingParams())
    await b.aclose()
    err = info.value
    assert err.kind == "server" and not err.fatal
    assert str(err) == (
        f"server error HTTP 500 from {server.url}: The server had an error processing your "
        "request. (gave up after 3 attempts)"
    )
    assert server.request_count == 3


async def test_slower_than_the_timeout_is_retried_then_reported(server: FakeOpenAI) -> None:
    b = backend(server, timeout=0.3)
    server.add_faults(Fault("slow", delay=1.0))
    [c] = await b.complete(prompt_for("chat"), SamplingParams())
    assert c.text.startswith("[ANSWER]") and b.retries == 1

    server.fault_for = lambda n: Fault("slow", delay=1.0)
    b.retry = RetryPolicy(attempts=2, base_delay=0.01)
    start = time.monotonic()
    with pytest.raises(ModelError) as info:
        await generate_one(b, prompt_for("chat"), SamplingParams())
    await b.aclose()
    assert info.value.kind == "timeout"
    assert f"no answer from {server.url} within 0.3 s" in str(info.value)
    assert time.monotonic() - start < 2 * 1.0  # each attempt gave up at the timeout, not later


async def test_stream_cut_midway_is_restarted(server: FakeOpenAI) -> None:
    server.add_faults(Fault("cut", after_chars=10))
    b = backend(server)
    shown: list[str] = []
    restarts: list[str] = []

    def on_restart(reason: str) -> None:
        restarts.append(reason)
        shown.clear()  # what a display does: drop the partial text

    completion = await generate_one(
        b, prompt_for("chat"), SamplingParams(), shown.append, on_restart=on_restart
    )
    await b.aclose()
    assert completion.text == "".join(shown) == "[ANSWER]\nassert f(21) == 42\n"
    assert len(restarts) == 1 and "broke off after 10 characters" in restarts[0]
    assert server.log.faults == ["cut"]


async def test_a_stream_that_just_ends_early_is_noticed(server: FakeOpenAI) -> None:
    """No broken framing, no [DONE], no finish_reason: the client sees a normal end of body."""
    server.add_faults(Fault("cut", after_chars=12, clean=True))
    b = backend(server)
    restarts: list[str] = []
    completion = await generate_one(
        b, prompt_for("chat"), SamplingParams(), on_restart=restarts.append
    )
    await b.aclose()
    assert completion.text == "[ANSWER]\nassert f(21) == 42\n"
    assert len(restarts) == 1 and "ended after 12 characters without finishing" in restarts[0]


async def test_an_error_event_mid_stream_is_shown_and_restarted(server: FakeOpenAI) -> None:
    server.add_faults(Fault("cut", after_chars=8, error="engine died: CUDA error"))
    b = backend(server)
    restarts: list[str] = []
    completion = await generate_one(
        b, prompt_for("chat"), SamplingParams(), on_restart=restarts.append
    )
    await b.aclose()
    assert completion.text == "[ANSWER]\nassert f(21) == 42\n"
    assert restarts == [
        f"the stream from {server.url} broke off after 8 characters (engine died: CUDA error)"
    ]


async def test_stream_cut_every_time_fails_with_its_reason(server: FakeOpenAI) -> None:
    server.fault_for = lambda n: Fault("cut", after_chars=5)
    b = backend(server, retry=RetryPolicy(attempts=2, base_delay=0.01))
    with pytest.raises(ModelError) as info:
        await generate_one(b, prompt_for("chat"), SamplingParams())
    await b.aclose()
    assert info.value.kind == "stream_cut" and "broke off" in str(info.value)


async def test_a_non_streamed_body_cut_short_is_retried(server: FakeOpenAI) -> None:
    server.add_faults(Fault("cut"), Fault("drop"))
    b = backend(server)
    [c] = await b.complete(prompt_for("chat"), SamplingParams())
    await b.aclose()
    assert c.text.startswith("[ANSWER]") and b.retries == 2


async def test_wrong_key_is_fatal_and_never_shown() -> None:
    with FakeOpenAI(constant(ANSWER), api_key=KEY) as srv:
        good = backend(srv, key=KEY)
        assert (await good.complete(prompt_for("chat"), SamplingParams()))[0].text
        await good.aclose()
        bad = backend(srv, key="sk-wrong-key-987")
        with pytest.raises(ModelError) as info:
            await bad.complete(prompt_for("chat"), SamplingParams())
        await bad.aclose()
    err = info.value
    assert err.kind == "auth" and err.fatal
    assert "rejected the API key (HTTP 401" in str(err)
    assert "sk-wrong-key-987" not in str(err) and "sk-wrong-key-987" not in repr(bad)
    assert srv.request_count == 1  # a wrong key is not retried


async def test_unknown_model_names_what_the_server_has(server: FakeOpenAI) -> None:
    b = backend(server, model="gpt-7")
    with pytest.raises(ModelError) as info:
        await b.complete(prompt_for("chat"), SamplingParams())
    await b.aclose()
    assert info.value.kind == "unknown_model" and info.value.fatal
    assert str(info.value) == f"unknown model 'gpt-7' at {server.url}; it serves: fake-model"


async def test_wrong_base_url_path_says_so(server: FakeOpenAI) -> None:
    spec = ModelSpec("openai", "fake-model", server.url.removesuffix("/v1") + "/api", "chat")
    b = make_backend(spec, retry=FAST)
    with pytest.raises(ModelError) as info:
        await b.complete(prompt_for("chat"), SamplingParams())
    await b.aclose()
    assert "is the base URL right?" in str(info.value)


async def test_dead_endpoint_is_fatal_with_a_clear_message() -> None:
    with FakeOpenAI() as srv:
        url = srv.url
    b = make_backend(
        ModelSpec("openai", "fake-model", url, "chat"),
        retry=RetryPolicy(attempts=2, base_delay=0.01),
    )
    with pytest.raises(ModelError) as info:
        await generate_one(b, prompt_for("chat"), SamplingParams())
    await b.aclose()
    assert info.value.kind == "unreachable" and info.value.fatal
    assert str(info.value).startswith(f"cannot connect to {url}")
    assert "is the server running?" in str(info.value)


async def test_server_process_killed_mid_run() -> None:
    """A separate server process, killed between requests: finished work stays, the next request
    fails with 'cannot connect' instead of hanging."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cruxtui.testing.fake_openai",
            "--port",
            "0",
            "--latency",
            "0.01",
            "--text",
            ANSWER,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        b = make_backend(
            ModelSpec("openai", "fake-model", url, "chat"),
            retry=RetryPolicy(attempts=2, base_delay=0.01),
        )
        done = [await generate_one(b, prompt_for("chat"), SamplingParams()) for _ in range(3)]
        assert [c.text for c in done] == ["[ANSWER]\nassert f(21) == 42\n"] * 3
        proc.kill()
        proc.wait(5)
        with pytest.raises(ModelError) as info:
            await generate_one(b, prompt_for("chat"), SamplingParams())
        await b.aclose()
        assert info.value.kind in ("unreachable", "stream_cut")
        assert url in str(info.value)
    finally:
        proc.kill()
        proc.wait(5)


async def test_keys_are_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeOpenAI(constant(ANSWER), api_key=KEY) as srv:
        srv.add_faults(Fault("rate_limit", retry_after=0.01), Fault("server_error"))
        b = backend(srv, key=KEY)
        await generate_one(b, prompt_for("chat"), SamplingParams())
        await b.aclose()
        assert srv.log.auth_headers[-1] == f"Bearer {KEY}"  # the key was really used
    assert caplog.records  # the retries were logged ...
    assert all(KEY not in r.getMessage() for r in caplog.records)  # ... without the key
    assert KEY not in caplog.text
    assert KEY not in repr(b) and KEY not in repr(b.spec) and KEY not in str(b.spec.to_json())


# ------------------------------------------------------------------------------ configuration


def test_normalize_base_url() -> None:
    assert normalize_base_url("localhost:8000") == "http://localhost:8000/v1"
    assert normalize_base_url("http://127.0.0.1:8000/") == "http://127.0.0.1:8000/v1"
    assert normalize_base_url("https://api.openai.com/v1/") == "https://api.openai.com/v1"
    assert normalize_base_url("http://h:1/v1/chat/completions") == "http://h:1/v1"
    assert normalize_base_url(" http://h:1/v1/completions ") == "http://h:1/v1"
    assert normalize_base_url("https://host/openai/v1beta") == "https://host/openai/v1beta"
    for bad in ("", "ftp://x", "http://"):
        with pytest.raises(ModelError):
            normalize_base_url(bad)


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    when = parse_retry_after({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert when is not None and 25 <= when <= 31


def test_key_and_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://10.0.0.5:9000")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    b = open_backend(model="m")
    assert isinstance(b, OpenAICompatBackend)
    assert b.base_url == "http://10.0.0.5:9000/v1" and b._key == KEY
    assert KEY not in repr(b)


def test_local_servers_need_no_key_but_openai_does() -> None:
    b = open_backend(base_url="http://127.0.0.1:1", model="m")
    assert isinstance(b, OpenAICompatBackend) and b._key == "sk-no-key-required"
    with pytest.raises(ModelError, match="no API key for api.openai.com"):
        open_backend(model="gpt-4o-mini")


# ------------------------------------------------------------------------------ the CRUXEval model


@pytest.fixture(scope="module")
def some_samples(shared_data: Path) -> list[Sample]:
    from cruxtui.core.data.dataset import read_jsonl

    return read_jsonl(CRUXEVAL_JSONL)[:40]


@pytest.mark.parametrize("mode", ["direct", "cot", "scratchpad"])
@pytest.mark.parametrize("api", ["chat", "completions"])
async def test_cruxeval_responder_answers_right_or_wrong(
    some_samples: list[Sample], mode: str, api: str
) -> None:
    from cruxtui.core.scoring.verdicts import check

    style = "chat" if api == "chat" else "completion"
    with (
        FakeOpenAI(CruxevalResponder(some_samples, "correct")) as right,
        FakeOpenAI(CruxevalResponder(some_samples, "wrong")) as wrong,
    ):
        for srv, should_pass in ((right, True), (wrong, False)):
            b = backend(srv, api)
            for sample in some_samples[:3]:
                for task in ("output", "input"):
                    p = build_prompt(sample, task, mode, style)
                    c = await generate_one(b, p, SamplingParams())
                    answer = extract(p.response(c.text), task).answer
                    assert answer is not None, c.text
                    assert check(sample, task, answer).passed is should_pass, (
                        sample.id,
                        task,
                        answer,
                    )
            await b.aclose()


def test_mixed_responder_hits_its_accuracy(some_samples: list[Sample]) -> None:
    responder = CruxevalResponder(some_samples, "mixed", accuracy=0.3)
    right = 0
    for i, sample in enumerate(some_samples):
        p = build_prompt(sample, "output", "direct")
        for choice in range(5):
            text = responder(
                FakeRequest(
                    "chat", "m", p.messages[-1]["content"], p.messages, {"seed": i}, choice=choice
                )
            )
            right += extract(text, "output").answer == sample.output
    assert 0.15 <= right / (5 * len(some_samples)) <= 0.45


def test_unknown_prompt_gets_an_unusable_answer(some_samples: list[Sample]) -> None:
    text = CruxevalResponder(some_samples)(FakeRequest("chat", "m", "hello", [], {}))
    assert extract(text, "output").answer is None


def test_process_mode_correct_model_needs_a_dataset() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cruxtui.testing.fake_openai", "--mode", "correct"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "--mode correct needs --dataset" in proc.stderr


async def test_process_mode_answers_the_benchmark(official: Dataset) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cruxtui.testing.fake_openai",
            "--mode",
            "correct",
            "--dataset",
            str(CRUXEVAL_JSONL),
            "--model",
            "crux",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        b = make_backend(ModelSpec("openai", "crux", url, "completions"), retry=FAST)
        sample = official["sample_3"]
        p = build_prompt(sample, "output", "direct", "completion")
        [c] = await b.complete(p, SamplingParams())
        await b.aclose()
        assert extract(p.response(c.text), "output").answer == sample.output
    finally:
        proc.kill()
        proc.wait(5)


async def test_many_requests_in_flight_each_get_their_own_answer_over_kept_connections() -> None:
    """Plain requests go over the backend's own HTTP path (aiohttp): 40 at once each get their
    own answer, all at the same time (not one after another), and closing the backend closes
    that path's connections."""
    import asyncio
    import time

    with FakeOpenAI(constant(ANSWER), latency=0.2) as srv:
        b = backend(srv)
        prompts = [
            build_prompt(
                Sample(f"s{i}", SAMPLE.code, str(i), str(2 * i)), "output", "direct", "chat"
            )
            for i in range(40)
        ]
        t0 = time.perf_counter()
        results = await asyncio.gather(*(b.complete(p, SamplingParams(n=1)) for p in prompts))
        elapsed = time.perf_counter() - t0
        assert b._plain is not None and b._plain._open is not None
        session = b._plain._open[1]
        await b.aclose()
    assert session.closed and b._plain._open is None
    assert elapsed < 40 * 0.2 / 4  # in flight together: far less than one after another
    assert len(srv.log.requests) == 40 and all("f(21) == 42" in r[0].text for r in results)
    bodies = {r.body["messages"][-1]["content"] for r in srv.log.requests}
    assert len(bodies) == 40  # every prompt sent once, none twice
