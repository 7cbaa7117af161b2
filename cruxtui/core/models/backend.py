"""What every model backend shares: the model description, sampling parameters, the result type,
the async protocol, the user-facing error, and the retry policy.

A `ModelSpec` never holds an API key: specs are stored with runs, keys must never be written down.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from cruxtui.core.models.prompts import Prompt
from cruxtui.core.models.thinking import Piece, ThinkingSplitter, join_thinking, split_thinking

BACKENDS: tuple[str, ...] = ("openai", "vllm", "replay")
APIS: tuple[str, ...] = ("chat", "completions")


@dataclass(frozen=True)
class ModelSpec:
    """Which model, served how. Safe to store and show: it never contains a key.

    `backend` is "openai" (any OpenAI-compatible server), "vllm" (in-process) or "replay" (a
    generations file; `path` names it). `api` is "chat" or "completions".
    """

    backend: str
    model: str
    base_url: str | None = None
    api: str = "chat"
    path: str | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ModelError(
                "config",
                f"unknown backend {self.backend!r} (expected one of {', '.join(BACKENDS)})",
            )
        if self.api not in APIS:
            raise ModelError("config", f"unknown api {self.api!r} (expected chat or completions)")

    @property
    def label(self) -> str:
        """Short name for lists and titles, e.g. `qwen2.5-coder @ 127.0.0.1:8000 (openai/chat)`."""
        if self.backend == "replay":
            return f"{self.model} (replay)"
        where = ""
        if self.base_url:
            where = " @ " + self.base_url.split("://", 1)[-1].removesuffix("/v1").rstrip("/")
        return f"{self.model}{where} ({self.backend}/{self.api})"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelSpec:
        return cls(
            backend=str(data.get("backend")),
            model=str(data.get("model")),
            base_url=data.get("base_url"),
            api=data.get("api") or "chat",
            path=data.get("path"),
        )


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. `stop=None` means "the prompt's own stop sequences"."""

    temperature: float = 0.2
    top_p: float = 0.95
    max_tokens: int = 1024
    n: int = 1
    seed: int | None = None
    stop: tuple[str, ...] | None = None

    def stop_for(self, prompt: Prompt) -> list[str]:
        return list(prompt.stop if self.stop is None else self.stop)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["stop"] = list(self.stop) if self.stop is not None else None
        return data


@dataclass
class Completion:
    """One finished completion. Tokens are None when the server did not report usage.

    `text` is the answer and `reasoning` the model's thinking (None when it had none), never
    mixed: see `cruxtui.core.models.thinking`. `latency` runs from the request leaving (after any
    wait for a free slot of the endpoint) to the answer ending. `seed` is the seed the request
    that produced it carried, and `obtained` says how it was obtained (see `OBTAINED_*`)."""

    text: str
    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency: float = 0.0
    reasoning: str | None = None
    seed: int | None = None
    obtained: str = ""

    @classmethod
    def of(cls, content: str, reasoning_field: str | None = None, **rest: Any) -> Completion:
        """A completion from a server's content and reasoning field: a `<think>` block inline
        in the content joins the field's thinking, and only the rest is the answer."""
        split = split_thinking(content)
        return cls(
            text=split.answer, reasoning=join_thinking(reasoning_field, split.thinking), **rest
        )

    @property
    def truncated_while_thinking(self) -> bool:
        """Cut by max_tokens before the thinking ended: there is thinking and no answer yet."""
        return truncated_while_thinking(self.finish_reason, self.reasoning, self.text)


def truncated_while_thinking(finish_reason: str | None, reasoning: str | None, text: str) -> bool:
    return finish_reason == "length" and bool(reasoning) and not text.strip()


OBTAINED_CHOICE = "choice {k} of a request for n={n}"
"""One of several choices the server returned for one request (it honoured `n`)."""
OBTAINED_OWN = "own request"
OBTAINED_EMULATED = "own request (the server returned fewer choices than n)"
OBTAINED_STREAM = "own streamed request"
OBTAINED_RECORDED = "recorded"


# What each kind of failure means for a run: fatal ones fail every further request the same way,
# so a run stops at once instead of burning through the samples. A bad request is not fatal: a
# prompt longer than the context window fails only its own sample.
_FATAL_KINDS = frozenset(
    {"auth", "unknown_model", "unreachable", "missing_dependency", "no_gpu", "config"}
)
_RETRYABLE_KINDS = frozenset({"rate_limited", "server", "timeout", "connection", "stream_cut"})


class ModelError(Exception):
    """A model request that failed, with a message meant for the user (one line, no traceback).

    `kind` is one of: auth, unknown_model, unreachable, connection, timeout, deadline,
    rate_limited, server, stream_cut, bad_response, bad_request, missing_dependency, no_gpu,
    config, replay. `retry_after` is the server's requested wait in seconds, when it gave one.
    A `deadline` (the request's overall time ran out) and a `bad_response` (a malformed or
    oversized answer) are not retried: the same server would most likely do it again, and each
    try already cost the whole allowance.
    """

    def __init__(self, kind: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in _RETRYABLE_KINDS

    @property
    def fatal(self) -> bool:
        """True when every further request would fail the same way (wrong key, unknown model...)."""
        return self.kind in _FATAL_KINDS


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter; a server's `Retry-After` wins over the computed delay.

    Delays: base * 2**attempt (attempt 0, 1, 2...), capped at `max_delay`, times a random factor
    in [1 - jitter, 1]. `attempts` counts the tries in all (1 = no retry).
    """

    attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.25

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        raw = min(self.base_delay * 2.0**attempt, self.max_delay)
        return raw * (1.0 - self.jitter * random.random())


def request_deadline(timeout: float, max_tokens: int, deadline: float | None = None) -> float:
    """Seconds one request may take in all, from sending it to the last byte of its answer.

    `timeout` only bounds each wait for data, so a server that trickles a byte now and then
    would hold a request forever; this bounds the whole. Unless given, it is the timeout plus a
    quarter second per token asked for (a floor of 4 tokens/s): 92 s for a 128-token direct answer
    with the default timeout, 4.4 minutes for a 1024-token chain of thought."""
    if deadline is not None:
        return deadline
    return timeout + DEADLINE_SECONDS_PER_TOKEN * max(1, max_tokens)


DEADLINE_SECONDS_PER_TOKEN = 0.25

T = TypeVar("T")

RetryHook = Callable[[ModelError, int, float], None]
"""Called before each retry with (error, attempt number from 1, seconds it will wait)."""


async def with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    on_retry: RetryHook | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Await `call()` until it succeeds, retrying retryable `ModelError`s as `policy` says.

    The last error is re-raised with the number of attempts added to its message, so the user sees
    that the failure was not a one-off.
    """
    attempt = 0
    while True:
        try:
            return await call()
        except ModelError as exc:
            attempt += 1
            if not exc.retryable or attempt >= policy.attempts:
                if exc.retryable and attempt > 1:
                    raise ModelError(
                        exc.kind,
                        f"{exc.message} (gave up after {attempt} attempts)",
                        retry_after=exc.retry_after,
                    ) from None
                raise
            wait = policy.delay(attempt - 1, exc.retry_after)
            if on_retry is not None:
                on_retry(exc, attempt, wait)
            await sleep(wait)


@runtime_checkable
class Backend(Protocol):
    """An async model. `stream` yields the `Piece`s (answer text and thinking, apart) of ONE
    completion (it ignores `params.n`); `complete` returns `params.n` finished completions, each
    sampled on its own. `supports_n` says whether one `complete`
    call with n > 1 is cheaper than n calls (the runner batches then). `index` is the number of
    the generation being asked for (for `complete`: of the first one); only replay uses it, to
    serve the same recorded text for the same generation after a resume. `concurrency` is the
    number of requests in flight the endpoint's configuration asks for (None: the caller decides).

    A backend that is cheaper fed in bulk (vLLM in-process) also has `complete_batch(requests)`:
    many (prompt, params) requests in one call, returning each one's completions in order, and
    `batch_size`, how many to give it at once; the runner then uses that instead of `complete`."""

    spec: ModelSpec
    supports_n: bool
    concurrency: int | None

    def stream(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> TextStream: ...

    async def complete(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> list[Completion]: ...

    async def aclose(self) -> None: ...


@dataclass
class StreamStats:
    """What a stream learnt besides the text, filled in by the backend as it streams.

    `started` is when the request left (monotonic clock), after any wait for a free slot: the
    latency of a streamed completion is counted from there."""

    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    started: float | None = None
    seed: int | None = None


class TextStream:
    """The async iterator `Backend.stream` returns: `Piece`s of answer text and of thinking, plus
    `stats` for after the end.

    A backend produces raw pieces: text as the server sent it, and thinking from a reasoning field
    (`thinking=True`). Inline `<think>` blocks in the text are split off here, once for every
    backend, so `async for piece in backend.stream(...)` sees the answer and the thinking apart.
    """

    def __init__(self, produce: Callable[[StreamStats], AsyncIterator[Piece]]) -> None:
        self.stats = StreamStats()
        self._chunks = self._split(produce(self.stats))

    @staticmethod
    async def _split(raw: AsyncIterator[Piece]) -> AsyncIterator[Piece]:
        splitter = ThinkingSplitter()
        try:
            async for piece in raw:
                if piece.thinking:
                    yield piece
                    continue
                for out in splitter.feed(piece.text):
                    yield out
            for out in splitter.finish():
                yield out
        finally:
            closer = getattr(raw, "aclose", None)
            if closer is not None:
                await closer()

    def __aiter__(self) -> TextStream:
        return self

    async def __anext__(self) -> Piece:
        return await self._chunks.__anext__()

    async def aclose(self) -> None:
        await self._chunks.aclose()  # type: ignore[attr-defined]
