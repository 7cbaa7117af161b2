"""Stream one completion and assemble it: the helper the runner, the TUI and case replays share."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from cruxtui.core.models.backend import (
    OBTAINED_STREAM,
    Backend,
    Completion,
    ModelError,
    RetryPolicy,
    SamplingParams,
)
from cruxtui.core.models.prompts import Prompt

ThinkingHook = Callable[[str, bool], None]
"""Called with (thinking text, moved): `moved` means the text is the answer text shown so far,
which turned out to be thinking (a bare `</think>` arrived): drop it from the answer."""


async def generate_one(
    backend: Backend,
    prompt: Prompt,
    params: SamplingParams,
    on_chunk: Callable[[str], None] | None = None,
    *,
    on_thinking: ThinkingHook | None = None,
    on_restart: Callable[[str], None] | None = None,
    index: int | None = None,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Completion:
    """Stream one completion, passing each piece of answer text to `on_chunk` and of thinking to
    `on_thinking`, and return it whole (answer and thinking apart).

    Backends retry failures that happen before any text arrives. A stream that breaks off
    (`stream_cut`, which includes a timeout between chunks and a server that ends a stream
    because another request arrived) is started over here, up to `policy.attempts` times in all;
    `on_restart(reason)` tells the caller to drop the partial text it has shown. `latency` runs
    from the request leaving (after any wait for a free slot of the endpoint) to the stream's end.
    """
    policy = policy or getattr(backend, "retry", None) or RetryPolicy()
    attempt = 0
    while True:
        queued = time.monotonic()
        parts: list[str] = []
        thinking: list[str] = []
        stream = (
            backend.stream(prompt, params, index=index)
            if index is not None
            else backend.stream(prompt, params)
        )
        try:
            async for piece in stream:
                if piece.moved:
                    parts.clear()
                if piece.thinking:
                    thinking.append(piece.text)
                    if on_thinking is not None:
                        on_thinking(piece.text, piece.moved)
                else:
                    parts.append(piece.text)
                    if on_chunk is not None:
                        on_chunk(piece.text)
        except ModelError as exc:
            attempt += 1
            # Failures before the stream started were already retried by the backend.
            if exc.kind != "stream_cut" or attempt >= policy.attempts:
                raise
            if (parts or thinking) and on_restart is not None:
                on_restart(exc.message)
            await sleep(policy.delay(attempt - 1, exc.retry_after))
            continue
        finally:
            await stream.aclose()
        stats = stream.stats
        started = stats.started if stats.started is not None else queued
        return Completion(
            text="".join(parts),
            reasoning="".join(thinking) or None,
            finish_reason=stats.finish_reason,
            tokens_in=stats.tokens_in,
            tokens_out=stats.tokens_out,
            latency=time.monotonic() - started,
            seed=stats.seed if stats.seed is not None else params.seed,
            obtained=OBTAINED_STREAM,
        )
