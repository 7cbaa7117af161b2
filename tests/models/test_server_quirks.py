"""What real (and hostile) servers do, played by the local test server: every request ends, within
bounds, with a reason that says what the server sent."""

from __future__ import annotations

import asyncio
import time

import pytest

from cruxtui.core.models import ModelError, SamplingParams, generate_one
from cruxtui.core.models.backend import ModelSpec, RetryPolicy
from cruxtui.core.models.openai_compat import OpenAICompatBackend
from cruxtui.testing.fake_openai import FakeOpenAI, Fault, constant
from tests.models.test_thinking import ANSWER, prompt_for


def backend(server: FakeOpenAI, **kw: object) -> OpenAICompatBackend:
    return OpenAICompatBackend(
        ModelSpec("openai", "fake-model", server.url, "chat"),
        retry=RetryPolicy(attempts=2, base_delay=0.01),
        **kw,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_trickling_server_is_stopped_by_the_deadline(streamed: bool) -> None:
    """One byte every 0.2 s never trips a 3 s read timeout; the overall deadline ends it."""
    with FakeOpenAI(constant(ANSWER)) as srv:
        srv.add_faults(Fault("trickle", delay=0.2), Fault("trickle", delay=0.2))
        b = backend(srv, timeout=3, deadline=1.5)
        start = time.monotonic()
        with pytest.raises(ModelError) as info:
            if streamed:
                await generate_one(b, prompt_for("chat"), SamplingParams())
            else:
                await b.complete(prompt_for("chat"), SamplingParams())
        took = time.monotonic() - start
        await b.aclose()
    assert info.value.kind == "deadline" and "deadline of 1.5 s" in info.value.message
    assert took < 10, "not retried: the deadline already cost the whole allowance"
    assert srv.request_count == 1


def test_the_default_deadline_grows_with_max_tokens() -> None:
    from cruxtui.core.models.backend import request_deadline

    assert request_deadline(60, 128) == 92
    assert request_deadline(3, 1024) == 259
    assert request_deadline(3, 1024, 10) == 10


async def test_an_endless_stream_is_cut_relative_to_max_tokens() -> None:
    with FakeOpenAI(constant(ANSWER)) as srv:
        srv.add_faults(Fault("endless"))
        b = backend(srv, timeout=5)
        with pytest.raises(ModelError) as info:
            await generate_one(b, prompt_for("chat"), SamplingParams(max_tokens=16))
        await b.aclose()
    assert info.value.kind == "bad_response"
    assert "characters for max_tokens=16" in info.value.message


@pytest.mark.parametrize("fault", [Fault("huge", size=8 << 20), Fault("endless")])
async def test_a_huge_or_endless_body_is_refused_past_its_cap(fault: Fault) -> None:
    with FakeOpenAI(constant(ANSWER)) as srv:
        srv.add_faults(fault)
        b = backend(srv, timeout=5)
        with pytest.raises(ModelError) as info:
            await b.complete(prompt_for("chat"), SamplingParams(max_tokens=16))
        await b.aclose()
    assert info.value.kind == "bad_response" and "stopped reading" in info.value.message


async def test_a_huge_stream_event_is_refused() -> None:
    with FakeOpenAI(constant(ANSWER)) as srv:
        srv.add_faults(Fault("huge", size=8 << 20))
        b = backend(srv, timeout=5)
        with pytest.raises(ModelError) as info:
            await generate_one(b, prompt_for("chat"), SamplingParams(max_tokens=16))
        await b.aclose()
    assert info.value.kind == "bad_response" and "MiB" in info.value.message


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_malformed_answer_is_quoted_in_the_reason(streamed: bool) -> None:
    with FakeOpenAI(constant(ANSWER)) as srv:
        srv.add_faults(Fault("garbage", text="<html><body>502 Bad Gateway</body></html>"))
        b = backend(srv, timeout=5)
        with pytest.raises(ModelError) as info:
            if streamed:
                await generate_one(b, prompt_for("chat"), SamplingParams())
            else:
                await b.complete(prompt_for("chat"), SamplingParams())
        await b.aclose()
    assert info.value.kind == "bad_response"
    assert "502 Bad Gateway" in info.value.message and "JSON" in info.value.message


async def test_json_without_choices_is_quoted() -> None:
    with FakeOpenAI(constant(ANSWER)) as srv:
        srv.add_faults(Fault("garbage", text='{"object": "error", "detail": "overloaded"}'))
        b = backend(srv, timeout=5)
        with pytest.raises(ModelError) as info:
            await b.complete(prompt_for("chat"), SamplingParams())
        await b.aclose()
    assert "returned no choices" in info.value.message and "overloaded" in info.value.message


async def test_an_interrupted_stream_names_the_cause_and_the_fix() -> None:
    """llama-cpp-python ends a running stream with [DONE] and no finish_reason when another
    request arrives: the restart message says so and how to stop it."""
    with FakeOpenAI(constant(ANSWER * 4), interrupt_streams=True, chunk_delay=0.02) as srv:
        b = backend(srv, timeout=5)
        restarts: list[str] = []

        async def first() -> object:
            return await generate_one(
                b, prompt_for("chat"), SamplingParams(stop=()), on_restart=restarts.append
            )

        task = asyncio.create_task(first())
        deadline = time.monotonic() + 10
        while srv.streams_open == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        [other] = await b.complete(prompt_for("chat"), SamplingParams(stop=()))
        comp = await task
        await b.aclose()
    assert other.text and comp.text  # the restarted stream still completed
    assert restarts and "--interrupt_requests False" in restarts[0]
    assert "concurrency = 1" in restarts[0]


async def test_concurrency_one_never_opens_two_streams() -> None:
    """An endpoint with `concurrency = 1` gets one request at a time from every caller, so a
    server that interrupts streams never does."""
    with FakeOpenAI(constant(ANSWER), interrupt_streams=True, chunk_delay=0.005) as srv:
        b = backend(srv, timeout=5, concurrency=1)
        restarts: list[str] = []
        comps = await asyncio.gather(
            *(
                generate_one(
                    b,
                    prompt_for("chat"),
                    SamplingParams(seed=i),
                    on_restart=restarts.append,
                )
                for i in range(4)
            )
        )
        await b.aclose()
    assert srv.max_streams_open == 1 and not restarts
    assert all(c.text for c in comps)
    # Latency is the request's own (about one answer), not the time spent waiting for a slot.
    total = sum(c.latency for c in comps)
    assert max(c.latency for c in comps) < total * 0.6


async def test_token_counts_come_from_the_usage_chunk_or_are_unknown() -> None:
    with FakeOpenAI(constant(ANSWER)) as srv:
        b = backend(srv, timeout=5)
        counted = await generate_one(b, prompt_for("chat"), SamplingParams())
        b._dropped.add("stream_options")  # as a server that refused include_usage
        unknown = await generate_one(b, prompt_for("chat"), SamplingParams())
        await b.aclose()
        sent = [r.body.get("stream_options") for r in srv.log.requests]
    assert sent == [{"include_usage": True}, None]
    assert counted.tokens_out is not None and counted.tokens_in is not None
    assert unknown.tokens_out is None and unknown.tokens_in is None
