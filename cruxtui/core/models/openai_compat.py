"""Any OpenAI-compatible server (OpenAI, `vllm serve`, llama.cpp, Ollama) through the `openai` client.

The client's own retries are switched off (`max_retries=0`): retrying happens here, with
`RetryPolicy`, so it is visible (the `on_retry` hook, the `retries` counter), testable, and honours
the server's `Retry-After`. A stream is retried only while no text has arrived; a stream cut after
some text raises `ModelError("stream_cut")` and `generate_one` decides whether to start over.

The API key lives only inside the client object: it is never logged, stored or shown in a repr.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import importlib
import json
import logging
import os
import socket
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from cruxtui.core.models.backend import (
    OBTAINED_CHOICE,
    OBTAINED_EMULATED,
    OBTAINED_OWN,
    Completion,
    ModelError,
    ModelSpec,
    RetryHook,
    RetryPolicy,
    SamplingParams,
    StreamStats,
    TextStream,
    request_deadline,
    with_retries,
)
from cruxtui.core.models.plain_http import PlainReply, PlainSession
from cruxtui.core.models.prompts import Prompt
from cruxtui.core.models.thinking import Piece

log = logging.getLogger("cruxtui.models")

OPENAI_URL = "https://api.openai.com/v1"
NO_KEY = "sk-no-key-required"
"""Sent to servers that need no key (local vLLM, llama.cpp, Ollama): the client insists on one."""


_DROPPABLE = ("stream_options", "seed")
"""Optional request fields a server may refuse; the request is repeated without them."""

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where servers put a reasoning model's thinking, per message and per stream delta."""

BYTES_PER_TOKEN = 256
CHARS_PER_TOKEN = 32


@dataclass
class _Opened:
    """A response whose headers arrived and whose body is still to read, with the request's
    deadline: `sent` is when it left (monotonic), `allowed` the seconds it may take in all."""

    stream: Any
    sent: float
    allowed: float
    body: bytes = b""

    def remaining(self) -> float:
        return max(0.0, self.sent + self.allowed - time.monotonic())


class _PlainResponse:
    """A plain response opened by `_post_plain`, shaped like the client's stream object: the
    HTTP response under `response`, and `close()`."""

    def __init__(self, response: PlainReply) -> None:
        self.response = response

    async def close(self) -> None:
        await self.response.aclose()


class _TooBig(Exception):
    """Internal: a stream went past its byte cap."""


async def _sse_lines(chunks: AsyncIterator[bytes], cap: int) -> AsyncIterator[str]:
    """Lines of an SSE body, decoded, without their line ends; `_TooBig` past `cap` bytes.

    Read here rather than by the client's decoder so that a line that never ends, or a stream
    that never stops, is bounded in memory and time like everything else."""
    buffer = b""
    total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > cap:
            raise _TooBig()
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line.removesuffix(b"\r").decode("utf-8", errors="replace")
    if buffer:
        yield buffer.removesuffix(b"\r").decode("utf-8", errors="replace")
    yield ""  # the end of the body ends a last event that had no blank line after it


def _shown(data: bytes | str, limit: int = 120) -> str:
    """What a server sent, for a message: its start, on one line."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    if not text:
        return "an empty body"
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n} bytes"


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_tls: Any = None


def _shared_tls(http: Any) -> Any:
    """One TLS context for the plain requests' sessions, made by the HTTP library the `openai`
    client uses (`httpx` or a fork of it), so both paths trust the same certificates: building
    one loads the certificate store (~0.1 s), too slow to repeat on the event loop."""
    global _tls
    if _tls is None:
        root = next(c for c in type(http).__mro__ if c.__name__ == "AsyncClient").__module__
        _tls = importlib.import_module(root.split(".")[0]).create_ssl_context()
    return _tls


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


def _refusal(exc: BaseException, host: str | None) -> str | None:
    """What says, in the chain of causes of a failed connect, that the endpoint is not there at
    all: the connection was refused (no server on that port) or the host name does not resolve.
    None for the failures that can heal by themselves (a timeout, a reset, a full backlog)."""
    for cause in _causes(exc):
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused; is the server running?"
        if isinstance(cause, socket.gaierror):
            return f"host {host or '?'} not found; check the base URL"
    return None


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what caused it, outermost first (each once, however the chain loops)."""
    seen: set[int] = set()
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _innermost(exc: BaseException) -> str:
    """The first line of the deepest cause that says something: the system's or TLS library's
    own words, not an HTTP library's wrapping of them (which may run past what a line shows)."""
    for cause in reversed(_causes(exc)):
        text = str(cause).strip()
        if text:
            return text.splitlines()[0][:160]
    return ""


def _tls_failure(exc: BaseException, url: str) -> str | None:
    """What went wrong in the TLS handshake, if that is why the connection failed: a certificate
    not trusted ("self-signed certificate"), or a server that does not speak TLS at all (an
    http:// server asked for https://). Settings to fix, not a server to wait for."""
    for cause in reversed(_causes(exc)):  # the TLS library's own error, under any wrapping
        if isinstance(cause, ssl.SSLCertVerificationError):
            said = getattr(cause, "verify_message", None) or getattr(cause, "reason", None)
            reason = str(said or cause).splitlines()[0][:160]
            return (
                f"its TLS certificate is not trusted ({reason}); for a server with a "
                "certificate of its own, point SSL_CERT_FILE at the certificate (or its CA's)"
            )
        if isinstance(cause, ssl.SSLError):
            reason = str(getattr(cause, "reason", None) or cause).splitlines()[0][:160]
            if reason in ("WRONG_VERSION_NUMBER", "HTTP_REQUEST", "RECORD_LAYER_FAILURE"):
                plain = "http://" + url.split("://", 1)[-1]
                return f"it does not speak TLS ({reason}): is its URL {plain}?"
            return f"the TLS handshake failed ({reason})"
    return None


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
        deadline: float | None = None,
        concurrency: int | None = None,
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
        self.deadline = deadline
        """Seconds one request may take in all (None: `request_deadline`'s default)."""
        self.concurrency = concurrency
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self.retry = retry or RetryPolicy()
        self.on_retry = on_retry
        self.retries = 0
        """Retries made so far (all requests), for progress displays and tests."""
        self._client: openai.AsyncOpenAI | None = None
        self._dropped: set[str] = set()
        self._max_completion_tokens = False
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._plain: PlainSession | None = None
        """The plain requests' own HTTP path (see `_post_plain`), made with the client."""
        self._plain_headers: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"OpenAICompatBackend({self.spec.model!r} at {self.base_url}, api={self.spec.api})"

    # -- client --------------------------------------------------------------------------------

    def _new_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=self._key, base_url=self.base_url, timeout=self.timeout, max_retries=0
        )

    def preconnect(self) -> None:
        """Build the client and the plain requests' HTTP path now. Blocking (TLS certificates and
        aiohttp's import, ~0.1 s each): call it in a thread before a run so an event loop that
        paints a UI does not pause at the first request. The first loop that uses them adopts
        them."""
        if self._client is None:
            self._client = self._new_client()
            self._client_loop = None
        plain = self._plain_session(self._client)
        plain.proxy(
            self.base_url + self._path()
        )  # imports aiohttp: off the event loop, not at first use

    def _get_client(self) -> openai.AsyncOpenAI:
        """One client per event loop: its connection pool belongs to the loop that opened it."""
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is None:
            self._client_loop = loop  # built ahead by `preconnect`, not used by any loop yet
        if self._client is None or self._client_loop is not loop:
            self._client = self._new_client()
            self._client_loop = loop
        return self._client

    def _path(self) -> str:
        return "/chat/completions" if self.spec.api == "chat" else "/completions"

    def _plain_session(self, client: openai.AsyncOpenAI) -> PlainSession:
        """The plain requests' HTTP path, with the client's settings (timeout, redirects, the
        certificates it trusts); it opens its pool in whichever loop sends first."""
        if self._plain is None:
            http = client._client
            https = urlsplit(self.base_url).scheme == "https"
            self._plain = PlainSession(
                self.timeout, bool(http.follow_redirects), _shared_tls(http) if https else None
            )
            self._plain_headers = {
                "Authorization": f"Bearer {self._key}",
                "Content-Type": "application/json",
                "Accept": "application/json",
                "User-Agent": str(getattr(client, "user_agent", "cruxtui")),
            }
        return self._plain

    async def aclose(self) -> None:
        if self._plain is not None:
            await self._plain.aclose()
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

    async def _create(
        self, args: dict[str, Any], allowed: float, body_cap: int | None = None
    ) -> _Opened:
        """POST the request through the client's generic `post` and return once the headers are
        in, the body still unread.

        The typed `chat.completions.create` would validate the parameters and build pydantic
        objects for every response and every SSE chunk: measured at 2-3 ms of CPU per request,
        enough to make the client, not the server, the bottleneck of a bulk run. Reading the body
        here (as a stream, even for a plain answer) bounds it in bytes and time, and plain dicts
        pass through fields that servers other than OpenAI add (reasoning fields).

        With `body_cap`, the whole body is read here too (into `_Opened.body`), so that a body cut
        short is retried like any other failed request.
        """
        client = self._get_client()
        path = self._path()
        sent = time.monotonic()
        plain = body_cap is not None and hasattr(client, "_make_status_error_from_response")
        try:
            async with asyncio.timeout(allowed):
                if plain:
                    stream = await self._post_plain(client, path, args)
                else:
                    stream = await client.post(
                        path,
                        cast_to=object,
                        body=args,
                        stream=True,
                        stream_cls=openai.AsyncStream[object],
                    )
        except TimeoutError:
            raise ModelError(
                "deadline",
                f"{self.base_url} did not answer within the request's deadline of {allowed:g} s; "
                "raise it with --deadline if the model is slow",
            ) from None
        except openai.APIError as exc:
            raise await self._explain(exc) from None
        opened = _Opened(stream, sent, allowed)
        if body_cap is not None:
            try:
                opened.body = await self._read_body(opened, body_cap)
            finally:
                await stream.close()
        return opened

    async def _post_plain(self, client: Any, path: str, args: dict[str, Any]) -> Any:
        """A plain (not streamed) request sent over aiohttp (`plain_http`) rather than through
        the client: a bulk run's requests are identical but for their body, and the client's
        request-building layers and HTTP library cost more CPU than the exchange itself
        (measured at c=64 in benchmarks/bench_runner.py). Failures become the client's own
        exceptions, as its `post` would raise them, so `_explain` reads them the same way."""
        session = self._plain_session(client)
        url = self.base_url + path
        try:
            reply = await session.post(url, self._plain_headers, json.dumps(args).encode())
        except Exception as exc:  # noqa: BLE001 - aiohttp's transport errors, as `post` maps them
            request = client._client.build_request("POST", url)
            if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
                raise openai.APITimeoutError(request=request) from exc
            raise openai.APIConnectionError(request=request) from exc
        if reply.status_code >= 400:
            request = client._client.build_request("POST", url)
            try:
                body = await reply.aread()
            except Exception as exc:  # noqa: BLE001 - a body cut short: the connection broke
                raise openai.APIConnectionError(request=request) from exc
            finally:
                await reply.aclose()
            library = importlib.import_module(type(request).__module__.split(".")[0])
            headers = list(reply.headers.items())
            response = library.Response(
                reply.status_code, headers=headers, content=body, request=request
            )
            raise client._make_status_error_from_response(response)
        return _PlainResponse(reply)

    def _note_retry(self, exc: ModelError, attempt: int, wait: float) -> None:
        self.retries += 1
        log.info("%s; retry %d in %.1f s", exc.message, attempt, wait)
        if self.on_retry is not None:
            self.on_retry(exc, attempt, wait)

    async def _create_with_retries(
        self, args: dict[str, Any], allowed: float, body_cap: int | None = None
    ) -> _Opened:
        try:
            try:
                return await with_retries(
                    lambda: self._create(args, allowed, body_cap), self.retry, self._note_retry
                )
            except ModelError as exc:
                if exc.kind != "bad_request" or not self._learn(args, exc.message):
                    raise
                log.info("%s; retrying without the refused parameter", exc.message)
                adapted = self._adapted(dict(args))
                return await with_retries(
                    lambda: self._create(adapted, allowed, body_cap), self.retry, self._note_retry
                )
        except ModelError as exc:
            if exc.kind == "connection":
                # Still refused after every retry: the endpoint is down, not having a bad moment.
                raise ModelError("unreachable", exc.message) from None
            raise

    # -- limits --------------------------------------------------------------------------------

    def _slot(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """A free slot of the endpoint: at most `concurrency` requests or streams in flight,
        whoever asks (a run, the TUI, a replay). A server that handles one request at a time
        (llama-cpp-python) cuts a running stream when another request arrives, and queues the
        rest, which a latency would then count."""
        if not self.concurrency:
            return contextlib.nullcontext()
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:
            self._slots = (loop, asyncio.Semaphore(self.concurrency))
        return self._slots[1]

    def _deadline(self, params: SamplingParams) -> float:
        return request_deadline(self.timeout, params.max_tokens, self.deadline)

    @staticmethod
    def body_cap(params: SamplingParams, n: int) -> int:
        """Bytes a response may have: room for n answers of max_tokens even in escaped JSON with
        logprobs, plus 1 MiB of envelope. A server sending more is misbehaving, and reading on
        would only use memory."""
        return (1 << 20) + BYTES_PER_TOKEN * max(1, n) * max(1, params.max_tokens)

    @staticmethod
    def char_cap(params: SamplingParams) -> int:
        """Characters (answer and thinking) a stream of one answer may carry for max_tokens: a
        token is rarely longer than a few characters, so this is only reached by a server that
        ignores max_tokens or never ends."""
        return 4096 + CHARS_PER_TOKEN * max(1, params.max_tokens)

    # -- requests ----------------------------------------------------------------------------------

    async def complete(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> list[Completion]:
        """`params.n` completions, each sampled on its own.

        A server that returns fewer choices than asked (llama.cpp ignores `n`) is asked for the
        rest one at a time, with seed + k for the k-th (the same seed would give the same text
        again), and each completion says how it was obtained. Choices beyond `n`, or repeating
        an index, are dropped: one choice is never stored twice."""
        wanted = max(1, params.n)
        results = await self._complete_once(prompt, params, wanted)
        for k, comp in enumerate(results):
            comp.obtained = OBTAINED_OWN if wanted == 1 else OBTAINED_CHOICE.format(k=k, n=wanted)
        for k in range(len(results), wanted):
            seed = None if params.seed is None else params.seed + k
            single = replace(params, n=1, seed=seed)
            comp = (await self._complete_once(prompt, single, 1))[0]
            comp.obtained = OBTAINED_EMULATED
            results.append(comp)
        return results

    async def _complete_once(
        self, prompt: Prompt, params: SamplingParams, n: int
    ) -> list[Completion]:
        args = self._request(prompt, params, n, stream=False)
        cap = self.body_cap(params, n)
        async with self._slot():
            opened = await self._create_with_retries(args, self._deadline(params), cap)
            latency = time.monotonic() - opened.sent
        data = opened.body
        response = self._parse_json(data)
        raw_choices = response.get("choices")
        if not isinstance(raw_choices, list) or not raw_choices:
            raise ModelError("bad_response", f"{self.base_url} returned no choices: {_shown(data)}")
        choices: dict[int, dict[str, Any]] = {}
        for position, choice in enumerate(raw_choices):
            if not isinstance(choice, dict):
                raise ModelError(
                    "bad_response",
                    f"{self.base_url} sent a choice that is not an object: {_shown(data)}",
                )
            at = choice.get("index", position)
            choices.setdefault(at if isinstance(at, int) else position, choice)
        kept = [choices[i] for i in sorted(choices)][:n]
        raw_usage = response.get("usage")
        usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        tokens_in = _int_or_none(usage.get("prompt_tokens"))
        tokens_out = _int_or_none(usage.get("completion_tokens"))
        out = []
        for choice in kept:
            content, reasoning = self._choice_text(choice, delta=False)
            out.append(
                Completion.of(
                    content,
                    reasoning,
                    finish_reason=_str_or_none(choice.get("finish_reason")),
                    tokens_in=tokens_in,
                    # usage covers all choices of the response: share it out evenly
                    tokens_out=round(tokens_out / len(kept)) if tokens_out is not None else None,
                    latency=latency,
                    seed=params.seed,
                )
            )
        return out

    def _choice_text(self, choice: dict[str, Any], *, delta: bool) -> tuple[str, str | None]:
        """(content, reasoning field) of a choice or a stream delta, whatever the server calls
        the thinking: `reasoning_content` (vLLM's parsers, DeepSeek, llama.cpp) or `reasoning`
        (newer vLLM, OpenRouter)."""
        if self.spec.api != "chat":
            text = choice.get("text")
            return (text if isinstance(text, str) else ""), None
        message = choice.get("delta" if delta else "message")
        if not isinstance(message, dict):
            return "", None
        content = message.get("content")
        reasoning = None
        for name in REASONING_FIELDS:
            value = message.get(name)
            if isinstance(value, str) and value:
                reasoning = value
                break
        return (content if isinstance(content, str) else ""), reasoning

    async def _read_body(self, opened: _Opened, cap: int) -> bytes:
        """The whole body, refused past `cap` bytes or past the request's deadline."""
        body = bytearray()
        try:
            async with asyncio.timeout(opened.remaining()):  # the request's deadline, absolute
                async for chunk in opened.stream.response.aiter_bytes():
                    body += chunk
                    if len(body) > cap:
                        raise ModelError(
                            "bad_response",
                            f"{self.base_url} sent more than {_size(cap)} for one answer; "
                            "stopped reading (a misbehaving server or proxy?)",
                        )
        except TimeoutError:
            raise self._deadline_error(opened, f"after {_size(len(body))} of the body") from None
        except ModelError:
            raise
        except Exception as exc:  # noqa: BLE001 - the HTTP library's read errors
            raise self._read_error(exc, f"the answer from {self.base_url}", len(body)) from None
        return bytes(body)

    def _parse_json(self, data: bytes) -> dict[str, Any]:
        try:
            response = json.loads(data)
        except (ValueError, RecursionError):
            raise ModelError(
                "bad_response",
                f"{self.base_url} answered with something other than JSON: {_shown(data)}",
            ) from None
        if not isinstance(response, dict):
            raise ModelError(
                "bad_response",
                f"{self.base_url} answered with JSON that is not an object: {_shown(data)}",
            )
        return response

    def stream(
        self, prompt: Prompt, params: SamplingParams, *, index: int | None = None
    ) -> TextStream:
        """Pieces of one completion (answer text, and thinking from a reasoning field), as the
        server sends them (SSE)."""
        return TextStream(lambda stats: self._stream(prompt, params, stats))

    async def _stream(
        self, prompt: Prompt, params: SamplingParams, stats: StreamStats
    ) -> AsyncIterator[Piece]:
        args = self._request(prompt, params, 1, stream=True)
        stats.seed = params.seed
        async with self._slot():
            opened = await self._create_with_retries(args, self._deadline(params))
            stats.started = opened.sent
            async for piece in self._events(opened, params, stats):
                yield piece

    async def _events(
        self, opened: _Opened, params: SamplingParams, stats: StreamStats
    ) -> AsyncIterator[Piece]:
        received = 0
        char_cap = self.char_cap(params)
        byte_cap = self.body_cap(params, 1)
        done = False
        try:
            lines = _sse_lines(opened.stream.response.aiter_bytes(), byte_cap)
            data: list[str] = []
            while not done:
                try:
                    async with asyncio.timeout(opened.remaining()):
                        line = await anext(lines, None)
                except TimeoutError:
                    raise self._deadline_error(
                        opened, f"after {received} characters of a stream"
                    ) from None
                if line is None:
                    break
                if line.startswith(":"):
                    continue  # a comment (keep-alive)
                if line:
                    field, _, value = line.partition(":")
                    if field == "data":
                        data.append(value.removeprefix(" "))
                    continue
                if not data:
                    continue
                payload, data = "\n".join(data), []
                if payload.strip() == "[DONE]":
                    done = True
                    break
                event = self._event(payload, received)
                usage = event.get("usage")
                if isinstance(usage, dict):
                    stats.tokens_in = _int_or_none(usage.get("prompt_tokens"))
                    stats.tokens_out = _int_or_none(usage.get("completion_tokens"))
                choices = event.get("choices")
                for choice in choices if isinstance(choices, list) else []:
                    if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                        continue  # only the one choice asked for
                    content, reasoning = self._choice_text(choice, delta=True)
                    finish = choice.get("finish_reason")
                    if isinstance(finish, str) and finish:
                        stats.finish_reason = finish
                    for text, thinking in ((reasoning, True), (content, False)):
                        if not text:
                            continue
                        received += len(text)
                        if received > char_cap:
                            raise ModelError(
                                "bad_response",
                                f"the stream from {self.base_url} went on past {char_cap} "
                                f"characters for max_tokens={params.max_tokens}; stopped reading "
                                "(the server ignores max_tokens?)",
                            )
                        yield Piece(text, thinking=thinking)
        except _TooBig:
            raise ModelError(
                "bad_response",
                f"the stream from {self.base_url} sent more than {_size(byte_cap)} for one "
                "answer; stopped reading",
            ) from None
        except ModelError:
            raise
        except Exception as exc:  # noqa: BLE001 - the HTTP library's read errors
            raise self._read_error(exc, f"the stream from {self.base_url}", received) from None
        finally:
            await opened.stream.close()
        if stats.finish_reason is None and done:
            raise ModelError(
                "stream_cut",
                f"the stream from {self.base_url} ended after {received} characters without "
                "finishing ([DONE] but no finish_reason): a server that handles one request at a "
                "time does this when another request arrives; start llama-cpp-python's server "
                "with --interrupt_requests False, or set concurrency = 1 for the endpoint",
            )
        if stats.finish_reason is None:
            raise ModelError(
                "stream_cut",
                f"the stream from {self.base_url} ended after {received} characters without "
                "finishing (the connection closed before [DONE])",
            )

    def _event(self, payload: str, received: int) -> dict[str, Any]:
        try:
            event = json.loads(payload)
        except (ValueError, RecursionError):
            raise ModelError(
                "bad_response",
                f"the stream from {self.base_url} sent an event that is not JSON after "
                f"{received} characters: {_shown(payload)}",
            ) from None
        if not isinstance(event, dict):
            raise ModelError(
                "bad_response",
                f"the stream from {self.base_url} sent an event that is not an object: "
                f"{_shown(payload)}",
            )
        error = event.get("error")
        if error is not None:
            # A server that fails mid-answer (vLLM's engine) sends an error event.
            message = error.get("message") if isinstance(error, dict) else error
            said = str(message or "").strip().splitlines()
            raise ModelError(
                "stream_cut",
                f"the stream from {self.base_url} broke off after {received} characters"
                + (f" ({said[0][:200]})" if said else ""),
            )
        return event

    def _deadline_error(self, opened: _Opened, where: str) -> ModelError:
        return ModelError(
            "deadline",
            f"{self.base_url} did not finish within the request's deadline of "
            f"{opened.allowed:g} s ({where}); raise it with --deadline if the model is slow",
        )

    def _read_error(self, exc: BaseException, what: str, received: int) -> ModelError:
        if "timeout" in type(exc).__name__.lower():
            return ModelError(
                "stream_cut",
                f"{self.base_url} stopped sending for {self.timeout:g} s in the middle of a "
                f"stream ({received} characters in)",
            )
        # An abruptly closed body is a protocol/read error of the HTTP library.
        return ModelError(
            "stream_cut", f"{what} broke off after {received} characters ({type(exc).__name__})"
        )

    # -- errors --------------------------------------------------------------------------------

    async def _explain(self, exc: openai.APIError) -> ModelError:
        """Turn a client exception into a one-line message the user can act on."""
        url = self.base_url
        if isinstance(exc, openai.APITimeoutError):
            return ModelError("timeout", f"no answer from {url} within {self.timeout:g} s")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            tls = _tls_failure(exc, url)
            if tls is not None:
                return ModelError("config", f"cannot connect to {url}: {tls}")
            why = _innermost(cause) if cause is not None else ""
            if cause is not None and "Connect" not in type(cause).__name__:
                # Connected, then the response broke off (server died or dropped us mid-answer).
                return ModelError(
                    "stream_cut",
                    f"the connection to {url} broke off" + (f" ({why})" if why else ""),
                )
            refusal = _refusal(exc, urlsplit(url).hostname)
            if refusal is not None:
                # Nobody listens there, or the name resolves to nothing: retrying would only
                # make the user wait for an answer that cannot come (a server that is starting
                # up is a few seconds away; the next run finds it).
                return ModelError("unreachable", f"cannot connect to {url} ({refusal})")
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
