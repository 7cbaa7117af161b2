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
            **{k: data.get(k) for k in ("backend", "model", "base_url", "path")},
            api=data.get("api") or "chat",
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
    """One finished completion. Tokens are None when the server did not report usage."""

    text: str
    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency: float = 0.0


# What each kind of failure means for a run: fatal ones fail every further request the same way,
# so a run stops at once instead of burning through the samples. A bad request is not fatal: a
# prompt longer than the context window fails only its own sample.
_FATAL_KINDS = frozenset(
    {"auth", "unknown_model", "unreachable", "missing_dependency", "no_gpu", "config"}
)
_RETRYABLE_KINDS = frozenset({"rate_limited", "server", "timeout", "connection", "stream_cut"})


class ModelError(Exception):
    """A model request that failed, with a message meant for the user (one line, no traceback).

    `kind` is one of: auth, unknown_model, unreachable, connection, timeout, rate_limited, server,
    stream_cut, bad_request, missing_dependency, no_gpu, config, replay. `retry_after` is the
    server's requested wait in seconds, when it gave one.
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
        raw = min(self.base_delay * (2**attempt), self.max_delay)
        return raw * (1.0 - self.jitter * random.random())


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
    """An async model. `stream` yields the text chunks of ONE completion (it ignores `params.n`);
    `complete` returns `params.n` finished completions. `supports_n` says whether one `complete`
    call with n > 1 is cheaper than n calls (the runner batches then). `index` is the number of
    the generation being asked for (for `complete`: of the first one); only replay uses it, to
    serve the same recorded text for the same generation after a resume. `concurrency` is the
    number of requests in flight the endpoint's configuration asks for (None: the caller decides)."""

    spec: ModelSpec
    supports_n: bool
    concurrency: int | None

    def stream(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> AsyncIterator[str]: ...

    async def complete(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> list[Completion]: ...

    async def aclose(self) -> None: ...


@dataclass
class StreamStats:
    """What a stream learnt besides the text, filled in by the backend as it streams."""

    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None


class TextStream:
    """The async iterator of text chunks `Backend.stream` returns, plus `stats` for after the end.

    Plain `async for chunk in backend.stream(...)` works; a caller that wants the finish reason and
    token counts reads `stream.stats` once the loop is over.
    """

    def __init__(self, produce: Callable[[StreamStats], AsyncIterator[str]]) -> None:
        self.stats = StreamStats()
        self._chunks = produce(self.stats)

    def __aiter__(self) -> TextStream:
        return self

    async def __anext__(self) -> str:
        return await self._chunks.__anext__()

    async def aclose(self) -> None:
        closer = getattr(self._chunks, "aclose", None)
        if closer is not None:
            await closer()
