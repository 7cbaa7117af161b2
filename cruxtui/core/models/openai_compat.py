"""Any OpenAI-compatible server (OpenAI, `vllm serve`, llama.cpp, Ollama) through the `openai` client.

The client's own retries are switched off (`max_retries=0`): retrying happens here, with
`RetryPolicy`, so it is visible (the `on_retry` hook, the `retries` counter), testable, and honours
the server's `Retry-After`. A stream is retried only while no text has arrived; a stream cut after
some text raises `ModelError("stream_cut")` and `generate_one` decides whether to start over.

The API key lives only inside the client object: it is never logged, stored or shown in a repr.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from cruxtui.core.models.backend import (
    Completion,
    ModelError,
    ModelSpec,
    RetryHook,
    RetryPolicy,
    SamplingParams,
    StreamStats,
    TextStream,
    with_retries,
)
from cruxtui.core.models.prompts import Prompt

log = logging.getLogger("cruxtui.models")

OPENAI_URL = "https://api.openai.com/v1"
NO_KEY = "sk-no-key-required"
"""Sent to servers that need no key (local vLLM, llama.cpp, Ollama): the client insists on one."""


_DROPPABLE = ("stream_options", "seed")
"""Optional request fields a server may refuse; the request is repeated without them."""


def normalize_base_url(url: str) -> str:
    """`localhost:8000` -> `http://localhost:8000/v1`; a pasted `.../v1/chat/completions` -> `.../v1`.

    A bare host gets `/v1` appended (where every OpenAI-compatible server mounts its API); any other
    path is kept as given, for servers that mount it elsewhere.
    """
    url = url.strip()
    if not url:
        raise ModelError("config", "the base URL is empty")
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelError("config", f"not an http(s) URL: {url!r}")
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions", "/models"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    if not path:
        path = "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's own explanation, trimmed to one line."""
    body = exc.body
    message = None
    if isinstance(body, dict):
        err = body.get("error", body)
        message = err.get("message") if isinstance(err, dict) else err
    text = str(message or exc.message or "").strip().splitlines()
    return text[0][:200] if text else ""


class OpenAICompatBackend:
    """Chat or completions requests to one model on one OpenAI-compatible server."""

    supports_n = True
    concurrency: int | None = None
    """Requests in flight the endpoint asks for (config.toml `concurrency`); None: caller decides."""

    def __init__(
        self,
        spec: ModelSpec,
        api_key: str | None = None,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        on_retry: RetryHook | None = None,
    ) -> None:
        base = spec.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
        self.base_url = normalize_base_url(base)
        self.spec = ModelSpec(spec.backend, spec.model, self.base_url, spec.api, spec.path)
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and urlsplit(self.base_url).hostname == "api.openai.com":
            raise ModelError(
                "auth", "no API key for api.openai.com: set OPENAI_API_KEY or pass --api-key"
            )
        self._key = key or NO_KEY
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.on_retry = on_retry
        self.retries = 0
        """Retries made so far (all requests), for progress displays and tests."""
        self._client: openai.AsyncOpenAI | None = None
        self._dropped: set[str] = set()
        self._max_completion_tokens = False
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"OpenAICompatBackend({self.spec.model!r} at {self.base_url}, api={self.spec.api})"

    # -- client --------------------------------------------------------------------------------

    def _new_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=self._key, base_url=self.base_url, timeout=self.timeout, max_retries=0
        )

    def preconnect(self) -> None:
        """Build the client now. Blocking (it loads TLS certificates, ~0.1 s): call it in a thread
        before a run so an event loop that paints a UI does not pause at the first request. The
        first loop that uses the client adopts it."""
        if self._client is None:
            self._client = self._new_client()
            self._client_loop = None

    def _get_client(self) -> openai.AsyncOpenAI:
        """One client per event loop: its connection pool belongs to the loop that opened it."""
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is None:
            self._client_loop = loop  # built ahead by `preconnect`, not used by any loop yet
        if self._client is None or self._client_loop is not loop:
            self._client = self._new_client()
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    # -- requests ------------------------------------------------------------------------------

    def _request(
        self, prompt: Prompt, params: SamplingParams, n: int, stream: bool
    ) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": self.spec.model,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "n": n,
        }
        if params.seed is not None:
            args["seed"] = params.seed
        stop = params.stop_for(prompt)
        if stop:
            args["stop"] = stop[:4]  # the OpenAI API accepts at most four
        if stream:
            args["stream"] = True
            args["stream_options"] = {"include_usage": True}
        if self.spec.api == "chat":
            args["messages"] = prompt.messages
        else:
            args["prompt"] = prompt.text
        return self._adapted(args)

    def _adapted(self, args: dict[str, Any]) -> dict[str, Any]:
        """Apply what earlier refusals taught about this server (see `_learn`)."""
        for name in self._dropped:
            args.pop(name, None)
        if self._max_completion_tokens and "max_tokens" in args:
            args["max_completion_tokens"] = args.pop("max_tokens")
        return args

    def _learn(self, args: dict[str, Any], message: str) -> bool:
        """After an HTTP 400, adapt to the two refusals seen in the wild; True if worth a retry.

        OpenAI's newer models want `max_completion_tokens` instead of `max_tokens`; some older
        servers refuse `stream_options` or `seed`. Anything else is a real bad request.
        """
        if "max_completion_tokens" in message and "max_tokens" in args:
            self._max_completion_tokens = True
            return True
        for name in _DROPPABLE:
            if name in args and any(f"{q}{name}{q}" in message for q in "'`\""):
                self._dropped.add(name)
                return True
        return False

    async def _create(self, args: dict[str, Any]) -> Any:
        """POST the request through the client's generic `post`, getting plain JSON back.

        The typed `chat.completions.create` would validate the parameters and build pydantic
        objects for every response and every SSE chunk: measured at 2-3 ms of CPU per request,
        enough to make the client, not the server, the bottleneck of a bulk run. Plain dicts
        also pass through fields that servers other than OpenAI add.
        """
        client = self._get_client()
        path = "/chat/completions" if self.spec.api == "chat" else "/completions"
        stream = bool(args.get("stream"))
        try:
            if stream:
                return await client.post(
                    path,
                    cast_to=object,
                    body=args,
                    stream=True,
                    stream_cls=openai.AsyncStream[object],
                )
            return await client.post(path, cast_to=object, body=args)
        except openai.APIError as exc:
            raise await self._explain(exc) from None

    def _note_retry(self, exc: ModelError, attempt: int, wait: float) -> None:
        self.retries += 1
        log.info("%s; retry %d in %.1f s", exc.message, attempt, wait)
        if self.on_retry is not None:
            self.on_retry(exc, attempt, wait)

    async def _create_with_retries(self, args: dict[str, Any]) -> Any:
        try:
            try:
                return await with_retries(lambda: self._create(args), self.retry, self._note_retry)
            except ModelError as exc:
                if exc.kind != "bad_request" or not self._learn(args, exc.message):
                    raise
                log.info("%s; retrying without the refused parameter", exc.message)
                adapted = self._adapted(dict(args))
                return await with_retries(
                    lambda: self._create(adapted), self.retry, self._note_retry
                )
        except ModelError as exc:
            if exc.kind == "connection":
                # Still refused after every retry: the endpoint is down, not having a bad moment.
                raise ModelError("unreachable", exc.message) from None
            raise

    async def complete(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> list[Completion]:
        """`params.n` completions. Servers that ignore `n` (llama.cpp) are asked again for the rest."""
        wanted = max(1, params.n)
        results: list[Completion] = []
        while len(results) < wanted:
            start = time.monotonic()
            response = await self._create_with_retries(
                self._request(prompt, params, wanted - len(results), stream=False)
            )
            latency = time.monotonic() - start
            if not isinstance(response, dict):
                raise ModelError(
                    "server", f"{self.base_url} answered with something other than JSON"
                )
            choices = sorted(response.get("choices") or [], key=lambda c: c.get("index", 0))
            if not choices:
                raise ModelError("server", f"{self.base_url} returned no choices")
            usage = response.get("usage") or {}
            tokens_in = usage.get("prompt_tokens")
            tokens_out = usage.get("completion_tokens")
            for choice in choices:
                if self.spec.api == "chat":
                    text = (choice.get("message") or {}).get("content")
                else:
                    text = choice.get("text")
                results.append(
                    Completion(
                        text=text or "",
                        finish_reason=choice.get("finish_reason"),
                        tokens_in=tokens_in,
                        # usage covers all choices of the response: share it out evenly
                        tokens_out=round(tokens_out / len(choices))
                        if tokens_out is not None
                        else None,
                        latency=latency,
                    )
                )
        return results[:wanted]

    def stream(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> TextStream:
        """Text chunks of one completion, as the server sends them (SSE)."""
        return TextStream(lambda stats: self._stream(prompt, params, stats))

    async def _stream(
        self, prompt: Prompt, params: SamplingParams, stats: StreamStats
    ) -> AsyncIterator[str]:
        response = await self._create_with_retries(self._request(prompt, params, 1, stream=True))
        received = 0
        try:
            async for chunk in response:
                if not isinstance(chunk, dict):
                    continue
                usage = chunk.get("usage")
                if usage:
                    stats.tokens_in = usage.get("prompt_tokens")
                    stats.tokens_out = usage.get("completion_tokens")
                for choice in chunk.get("choices") or []:
                    if self.spec.api == "chat":
                        text = (choice.get("delta") or {}).get("content")
                    else:
                        text = choice.get("text")
                    if choice.get("finish_reason"):
                        stats.finish_reason = choice["finish_reason"]
                    if text:
                        received += len(text)
                        yield text
        except openai.APITimeoutError:
            raise ModelError(
                "stream_cut",
                f"{self.base_url} stopped sending for {self.timeout:g} s in the middle of a stream",
            ) from None
        except (openai.APIError, OSError, RuntimeError, ValueError) as exc:
            # httpx reports an abruptly closed stream as a protocol/read error; a server that
            # fails mid-answer may send an error event instead, whose message is worth showing.
            said = (
                exc.message
                if isinstance(exc, openai.APIError)
                and not isinstance(exc, openai.APIConnectionError)
                else type(exc).__name__
            )
            raise ModelError(
                "stream_cut",
                f"the stream from {self.base_url} broke off after {received} characters ({said})",
            ) from None
        finally:
            await response.close()
        if stats.finish_reason is None:
            raise ModelError(
                "stream_cut",
                f"the stream from {self.base_url} ended after {received} characters without "
                "finishing",
            )

    # -- errors --------------------------------------------------------------------------------

    async def _explain(self, exc: openai.APIError) -> ModelError:
        """Turn a client exception into a one-line message the user can act on."""
        url = self.base_url
        if isinstance(exc, openai.APITimeoutError):
            return ModelError("timeout", f"no answer from {url} within {self.timeout:g} s")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            why = str(cause).strip().splitlines()[0][:120] if cause and str(cause).strip() else ""
            if cause is not None and "Connect" not in type(cause).__name__:
                # Connected, then the response broke off (server died or dropped us mid-answer).
                return ModelError(
                    "stream_cut",
                    f"the connection to {url} broke off" + (f" ({why})" if why else ""),
                )
            return ModelError(
                "connection",
                f"cannot connect to {url}"
                + (f" ({why})" if why else "")
                + "; is the server running?",
            )
        if not isinstance(exc, openai.APIStatusError):
            return ModelError("server", f"unexpected response from {url}: {exc.message[:200]}")
        status = exc.status_code
        said = _server_message(exc)
        detail = f": {said}" if said else ""
        if status == 401:
            return ModelError(
                "auth",
                f"{url} rejected the API key (HTTP 401{detail}); check --api-key, "
                "OPENAI_API_KEY or the endpoint's api_key_env",
            )
        if status == 403:
            return ModelError("auth", f"{url} refused access (HTTP 403{detail})")
        if status == 404:
            return await self._explain_404(said)
        if status == 429:
            return ModelError(
                "rate_limited",
                f"{url} is rate limiting requests (HTTP 429{detail})",
                retry_after=parse_retry_after(exc.response.headers),
            )
        if status >= 500:
            return ModelError(
                "server",
                f"server error HTTP {status} from {url}{detail}",
                retry_after=parse_retry_after(exc.response.headers),
            )
        return ModelError("bad_request", f"{url} refused the request (HTTP {status}{detail})")

    async def _explain_404(self, said: str) -> ModelError:
        """A 404 is either an unknown model or a wrong base URL: ask the server which it is."""
        model, url = self.spec.model, self.base_url
        try:
            listing = await self._get_client().models.list()
            names = [m.id for m in listing.data]
        except (openai.APIError, TypeError, ValueError, AttributeError):
            names = None
        if names is None:
            return ModelError(
                "unknown_model",
                f"{url} answered 404 (not found) and lists no models: is the base URL right? "
                "It usually ends in /v1",
            )
        if model not in names:
            shown = ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
            return ModelError(
                "unknown_model",
                f"unknown model {model!r} at {url}; it serves: {shown or '(none)'}",
            )
        what = "chat" if self.spec.api == "chat" else "completions"
        return ModelError(
            "unknown_model",
            f"{url} serves {model!r} but answered 404 to a {what} request"
            + (f" ({said})" if said else "")
            + "; try the other --api",
        )

    async def list_models(self) -> list[str]:
        """Model names the server offers (`GET /v1/models`)."""

        async def fetch() -> list[str]:
            try:
                listing = await self._get_client().models.list()
            except openai.NotFoundError:
                raise ModelError(
                    "unknown_model",
                    f"{self.base_url} has no /models listing: is the base URL right?",
                ) from None
            except openai.APIError as exc:
                raise await self._explain(exc) from None
            return [m.id for m in listing.data]

        return await with_retries(fetch, self.retry, self._note_retry)
