"""Stream one completion and assemble it: the helper the runner and the TUI share."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from cruxtui.core.models.backend import Backend, Completion, ModelError, RetryPolicy, SamplingParams
from cruxtui.core.models.prompts import Prompt


async def generate_one(
    backend: Backend,
    prompt: Prompt,
    params: SamplingParams,
    on_chunk: Callable[[str], None] | None = None,
    *,
    on_restart: Callable[[str], None] | None = None,
    index: int | None = None,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Completion:
    """Stream one completion, passing each text chunk to `on_chunk`, and return it whole.

    Backends retry failures that happen before any text arrives. A stream that breaks off
    (`stream_cut`, which includes a timeout between chunks) is started over here, up to
    `policy.attempts` times in all; `on_restart(reason)` tells the caller to drop the partial text
    it has shown. `latency` is measured from the request to the end of the stream.
    """
    policy = policy or getattr(backend, "retry", None) or RetryPolicy()
    attempt = 0
    while True:
        start = time.monotonic()
        parts: list[str] = []
        stream = (
            backend.stream(prompt, params, index=index)
            if index is not None
            else backend.stream(prompt, params)
        )
        try:
            async for chunk in stream:
                parts.append(chunk)
                if on_chunk is not None:
                    on_chunk(chunk)
        except ModelError as exc:
            attempt += 1
            # Failures before the stream started were already retried by the backend.
            if exc.kind != "stream_cut" or attempt >= policy.attempts:
                raise
            if parts and on_restart is not None:
                on_restart(exc.message)
            await sleep(policy.delay(attempt - 1, exc.retry_after))
            continue
        stats = getattr(stream, "stats", None)
        return Completion(
            text="".join(parts),
            finish_reason=getattr(stats, "finish_reason", None),
            tokens_in=getattr(stats, "tokens_in", None),
            tokens_out=getattr(stats, "tokens_out", None),
            latency=time.monotonic() - start,
        )
