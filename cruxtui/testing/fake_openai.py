"""A real OpenAI-compatible HTTP server on 127.0.0.1, scripted to answer and to misbehave.

Tests, benchmarks and demos talk to it over real sockets with the real `openai` client, so what is
tested is what runs against `vllm serve`, llama.cpp or OpenAI: SSE streaming with chunked transfer
encoding, `data: [DONE]`, status codes and headers. Serves `/v1/chat/completions`,
`/v1/completions` (stream and non-stream) and `/v1/models`.

Scripting:
- `responder(request) -> text` decides what the model says (e.g. `CruxevalResponder` answers
  CRUXEval prompts correctly, wrongly, or a mix);
- `latency` before the first byte, `chunk_delay` between stream chunks;
- faults, queued with `add_faults` (consumed one per completion request, in order) or decided per
  request by `fault_for(request_number)`: 429 with Retry-After, 500, slower than a timeout, a stream
  cut mid-way, a dropped connection, a body trickled a byte at a time, a stream that never ends, a
  huge body, a body or event that is not JSON; a wrong key gives 401 and an unknown model 404;
- a reasoning model: `think` (text or a function of the request) is the thinking before each
  answer, sent the way `think_style` says: in the `reasoning_content` or `reasoning` field of
  messages and deltas, inline as `<think>...</think>`, or `bare` (no opening tag: the template
  opened it). max_tokens counts the thinking too, so a small budget cuts it (unterminated);
- real servers' quirks: `max_choices=1` ignores `n` (llama.cpp), `interrupt_streams=True` ends a
  running stream with `[DONE]` and no finish_reason when another request arrives
  (llama-cpp-python without `--interrupt_requests False`).

In a thread: ``with FakeOpenAI(responder) as server: ... server.url``. As a process (so a test can
kill it mid-run): ``python -m cruxtui.testing.fake_openai --port 0 --latency 0.05 --mode correct
--dataset cruxeval.jsonl`` prints its URL on the first line of stdout.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cruxtui.core.data.dataset import Sample, read_jsonl

FAULT_KINDS = (
    "rate_limit",
    "server_error",
    "slow",
    "cut",
    "drop",
    "trickle",
    "endless",
    "huge",
    "garbage",
)
THINK_STYLES = ("reasoning_content", "reasoning", "inline", "bare")


@dataclass
class FakeRequest:
    """One completion request as the responder sees it."""

    endpoint: str  # "chat" | "completions"
    model: str
    prompt: str  # the completion prompt, or the chat messages' text
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    choice: int = 0  # which of the n choices is being produced
    number: int = 0  # 0-based count of completion requests the server has received


@dataclass(frozen=True)
class Fault:
    """Misbehaviour for one request.

    rate_limit: 429 with `Retry-After: retry_after`; server_error: HTTP `status`; slow: wait `delay`
    seconds before answering; cut: stream (or body) stops after `after_chars` characters of text
    (half by default) and the connection is closed — as a broken chunked body, or with `clean=True`
    as an unframed stream (`Connection: close`) that just ends, which looks like a normal end to
    the client, or with `error="..."` as an error event in the stream (what vLLM sends when the
    engine fails mid-answer); drop: the connection closes without a response; trickle: the body
    goes out one byte every `delay` seconds; endless: a stream whose text never ends (a plain
    answer: a body that never ends); huge: a body (or one stream event) of `size` bytes;
    garbage: a body, or a stream event, that is not JSON (`text`).
    """

    kind: str
    retry_after: float | None = None
    status: int = 500
    delay: float = 5.0
    after_chars: int | None = None
    clean: bool = False
    error: str | None = None
    size: int = 64 << 20
    text: str = "<html><body>502 Bad Gateway</body></html>"

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(
                f"unknown fault {self.kind!r} (expected one of {', '.join(FAULT_KINDS)})"
            )


Responder = Callable[[FakeRequest], str]


def constant(text: str) -> Responder:
    """A model that always says `text`."""
    return lambda _request: text


@dataclass
class ServerLog:
    """What the server saw, for assertions: completion requests (in order) and faults served."""

    requests: list[FakeRequest] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    auth_headers: list[str] = field(default_factory=list)


class FakeOpenAI:
    """The server. Start with `start()` or a `with` block; `url` ends in `/v1`."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        chunk_delay: float = 0.0,
        chunk_chars: int = 8,
        models: Iterable[str] = ("fake-model",),
        api_key: str | None = None,
        faults: Iterable[Fault] = (),
        fault_for: Callable[[int], Fault | None] | None = None,
        max_choices: int | None = None,
        interrupt_streams: bool = False,
        think: str | Callable[[FakeRequest], str] | None = None,
        think_style: str = "reasoning_content",
        refuse: dict[str, str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.responder = responder or constant("[ANSWER]\nassert f(1) == 1\n[/ANSWER]")
        self.latency = latency
        self.chunk_delay = chunk_delay
        self.chunk_chars = max(1, chunk_chars)
        self.models = list(models)
        self.api_key = api_key
        self.fault_for = fault_for
        self.max_choices = max_choices
        """Answer at most this many choices whatever `n` asks (as llama.cpp does), None: all."""
        self.interrupt_streams = interrupt_streams
        """End a running stream ([DONE], no finish_reason) when another request arrives."""
        if think_style not in THINK_STYLES:
            raise ValueError(f"unknown think_style {think_style!r} (one of {THINK_STYLES})")
        self.think = think
        self.think_style = think_style
        self.streams_open = 0
        self.max_streams_open = 0
        """Streams in flight now, and the most there ever were at once (for concurrency tests)."""
        self.refuse = dict(refuse or {})
        """Request fields this server refuses with HTTP 400, and the message it gives."""
        self.log = ServerLog()
        self._faults: list[Fault] = list(faults)
        self._lock = threading.Lock()
        self._count = 0
        self._httpd = _Server((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- scripting -----------------------------------------------------------------------------

    def add_faults(self, *faults: Fault) -> None:
        """Queue faults for the next completion requests, one each, in order."""
        with self._lock:
            self._faults.extend(faults)

    @property
    def request_count(self) -> int:
        return self._count

    def _next(self) -> tuple[int, Fault | None]:
        with self._lock:
            number = self._count
            self._count += 1
            fault = self._faults.pop(0) if self._faults else None
        if fault is None and self.fault_for is not None:
            fault = self.fault_for(number)
        if fault is not None:
            with self._lock:
                self.log.faults.append(fault.kind)
        return number, fault


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256  # bursts of concurrent connections must not be refused
    allow_reuse_address = True
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeouts, killed runs) is normal here, not worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    _framed = True
    _cut_error: str | None = None
    protocol_version = "HTTP/1.1"  # keep-alive, chunked streams
    disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silent: tests and benchmarks print their own output."""

    # -- plumbing ------------------------------------------------------------------------------

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self, status: int, message: str, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        self._send_json(
            status, {"error": {"message": message, "type": kind, "code": status}}, headers
        )

    def _abort_connection(self) -> None:
        """Close the socket at once: the client sees the response (or the stream) cut off."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _authorised(self) -> bool:
        fake = self.server.fake
        header = self.headers.get("Authorization", "")
        with fake._lock:
            fake.log.auth_headers.append(header)
        if fake.api_key is None or header == f"Bearer {fake.api_key}":
            return True
        self._error(401, "Incorrect API key provided.", "invalid_request_error")
        return False

    def _read_body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._error(400, "request body is not JSON", "invalid_request_error")
            return None
        if not isinstance(body, dict):
            self._error(400, "request body must be a JSON object", "invalid_request_error")
            return None
        return body

    # -- routes --------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        if self.path.rstrip("/") != "/v1/models":
            self._error(404, f"no route {self.path}", "not_found")
            return
        if not self._authorised():
            return
        models = [
            {"id": m, "object": "model", "owned_by": "cruxtui"} for m in self.server.fake.models
        ]
        self._send_json(200, {"object": "list", "data": models})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.rstrip("/")
        endpoint = {"/v1/chat/completions": "chat", "/v1/completions": "completions"}.get(path)
        body = self._read_body()
        if body is None:
            return
        if endpoint is None:
            self._error(404, f"no route {self.path}", "not_found")
            return
        if not self._authorised():
            return
        fake = self.server.fake
        model = str(body.get("model", ""))
        if model not in fake.models:
            self._error(404, f"The model `{model}` does not exist.", "model_not_found")
            return
        refused = next((name for name in fake.refuse if name in body), None)
        if refused is not None:
            self._error(400, fake.refuse[refused], "invalid_request_error")
            return
        number, fault = fake._next()
        if fault is not None and fault.kind == "rate_limit":
            headers = (
                {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            )
            self._error(429, "Rate limit reached, slow down.", "rate_limit_error", headers)
            return
        if fault is not None and fault.kind == "server_error":
            self._error(
                fault.status, "The server had an error processing your request.", "server_error"
            )
            return
        if fault is not None and fault.kind == "drop":
            self._abort_connection()
            return
        time.sleep(
            fake.latency + (fault.delay if fault is not None and fault.kind == "slow" else 0)
        )
        messages = body.get("messages") or []
        if endpoint == "chat":
            prompt = "\n\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        else:
            prompt = str(body.get("prompt", ""))
        request = FakeRequest(endpoint, model, prompt, messages, body, number=number)
        n = max(1, int(body.get("n") or 1))
        if fake.max_choices is not None:
            n = min(n, fake.max_choices)
        texts: list[_Reply] = []
        for choice in range(n):
            request.choice = choice
            try:
                reply = fake.responder(request)
                think = fake.think(request) if callable(fake.think) else fake.think
            except Exception as exc:  # noqa: BLE001 - a scripted responder's bug must be visible
                self._error(500, f"the responder failed: {exc!r}", "server_error")
                return
            # Reasoning fields exist on chat only: a completions endpoint sends the thinking inline.
            style = fake.think_style if endpoint == "chat" else "inline"
            texts.append(_compose(reply, think, style, body))
        with fake._lock:
            fake.log.requests.append(request)
        cutting = fault is not None and fault.kind == "cut"
        cut = fault.after_chars if fault is not None and cutting else None
        self._framed = not (cutting and fault is not None and fault.clean)
        self._cut_error = fault.error if cutting and fault is not None else None
        prompt_tokens = _count_tokens(prompt)
        if fault is not None and fault.kind in ("trickle", "endless", "huge", "garbage"):
            self._hostile(fault, bool(body.get("stream")))
            return
        if body.get("stream"):
            with fake._lock:
                fake.streams_open += 1
                fake.max_streams_open = max(fake.max_streams_open, fake.streams_open)
            try:
                self._stream(endpoint, model, texts[0], prompt_tokens, body, cut, cutting, number)
            finally:
                with fake._lock:
                    fake.streams_open -= 1
        else:
            self._whole(endpoint, model, texts, prompt_tokens, cutting)

    def _hostile(self, fault: Fault, stream: bool) -> None:
        """A body no honest server sends: trickled, endless, huge or not JSON."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if fault.kind == "trickle":
                for byte in b'data: {"choices": []}\n\n' * 1000:
                    self._chunk(bytes([byte]))
                    time.sleep(fault.delay)
            elif fault.kind == "endless":
                piece = {
                    "index": 0,
                    "delta": {"content": "la "},
                    "text": "la ",
                    "finish_reason": None,
                }
                event = f"data: {json.dumps({'choices': [piece]})}\n\n".encode()
                filler = b" " * 65536
                while True:
                    self._chunk(event if stream else filler)
            elif fault.kind == "huge":
                block = b"x" * 65536
                self._chunk(b'data: {"pad": "' if stream else b'{"pad": "')
                for _ in range(fault.size // len(block)):
                    self._chunk(block)
                self._chunk(b'"}\n\n' if stream else b'"}')
                self._chunk(b"")
            else:
                self._chunk((f"data: {fault.text}\n\n" if stream else fault.text).encode())
                self._chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _whole(
        self,
        endpoint: str,
        model: str,
        texts: list[_Reply],
        prompt_tokens: int,
        cutting: bool,
    ) -> None:
        choices = []
        for i, reply in enumerate(texts):
            text, finish = reply.text, reply.finish
            if endpoint == "chat":
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if reply.field is not None:
                    message[reply.field] = reply.thinking
                choices.append({"index": i, "message": message, "finish_reason": finish})
            else:
                choices.append(
                    {"index": i, "text": text, "finish_reason": finish, "logprobs": None}
                )
        payload = {
            "id": f"cmpl-{time.monotonic_ns()}",
            "object": "chat.completion" if endpoint == "chat" else "text_completion",
            "created": int(time.time()),
            "model": model,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": sum(r.tokens for r in texts),
                "total_tokens": prompt_tokens + sum(r.tokens for r in texts),
            },
        }
        if not cutting:
            self._send_json(200, payload)
            return
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self._abort_connection()

    def _stream(
        self,
        endpoint: str,
        model: str,
        reply: _Reply,
        prompt_tokens: int,
        body: dict[str, Any],
        cut: int | None,
        cutting: bool,
        number: int,
    ) -> None:
        fake = self.server.fake
        text, finish = reply.text, reply.finish
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if self._framed:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        ident = f"cmpl-{time.monotonic_ns()}"
        kind = "chat.completion.chunk" if endpoint == "chat" else "text_completion"
        limit = (len(text) // 2 if cut is None else cut) if cutting else None

        def event(choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> None:
            payload: dict[str, Any] = {
                "id": ident,
                "object": kind,
                "created": int(time.time()),
                "model": model,
                "choices": choices,
            }
            if usage is not None:
                payload["usage"] = usage
            self._chunk(f"data: {json.dumps(payload)}\n\n".encode())

        def choice(piece: str, finish_reason: str | None, field: str = "content") -> dict[str, Any]:
            if endpoint == "chat":
                return {
                    "index": 0,
                    "delta": {field: piece} if piece else {},
                    "finish_reason": finish_reason,
                }
            return {"index": 0, "text": piece, "finish_reason": finish_reason, "logprobs": None}

        try:
            if endpoint == "chat":
                event(
                    [
                        {
                            "index": 0,
                            "delta": {"role": "assistant", "content": ""},
                            "finish_reason": None,
                        }
                    ]
                )

            def interrupted() -> bool:
                """Another request arrived since this one (llama-cpp-python then ends it)."""
                if fake.interrupt_streams and fake.request_count > number + 1:
                    self._chunk(b"data: [DONE]\n\n")
                    self._chunk(b"")
                    return True
                return False

            if reply.field is not None and reply.thinking and endpoint == "chat":
                for start in range(0, len(reply.thinking), fake.chunk_chars):
                    if interrupted():
                        return
                    event(
                        [
                            choice(
                                reply.thinking[start : start + fake.chunk_chars], None, reply.field
                            )
                        ]
                    )
                    if fake.chunk_delay:
                        time.sleep(fake.chunk_delay)
            sent = 0
            for start in range(0, len(text), fake.chunk_chars):
                if interrupted():
                    return
                piece = text[start : start + fake.chunk_chars]
                if limit is not None and sent + len(piece) > limit:
                    piece = piece[: max(limit - sent, 0)]
                    if piece:
                        event([choice(piece, None)])
                    self._end_cut()
                    return
                event([choice(piece, None)])
                sent += len(piece)
                if fake.chunk_delay:
                    time.sleep(fake.chunk_delay)
            if limit is not None:
                self._end_cut()
                return
            event([choice("", finish)])
            if (body.get("stream_options") or {}).get("include_usage"):
                completion_tokens = reply.tokens
                event(
                    [],
                    {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                )
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _end_cut(self) -> None:
        """End a stream cut short: an error event and a proper end, or a broken connection."""
        if self._cut_error is None:
            self._abort_connection()
            return
        error = {"error": {"message": self._cut_error, "type": "server_error", "code": 500}}
        self._chunk(f"data: {json.dumps(error)}\n\n".encode())
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        if not self._framed:  # an unframed stream: the body simply ends when the connection closes
            self.wfile.write(data)
            self.wfile.flush()
            return
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _count_tokens(text: str) -> int:
    """A stand-in tokenizer: about four characters per token, like English BPE."""
    return max(1, (len(text) + 3) // 4) if text else 0


@dataclass(frozen=True)
class _Reply:
    """One choice as the server sends it: content, thinking in a reasoning `field` (None when the
    thinking is inline or absent), finish reason and completion tokens (thinking included)."""

    text: str
    finish: str
    thinking: str | None = None
    field: str | None = None

    @property
    def tokens(self) -> int:
        return _count_tokens(self.text) + _count_tokens(self.thinking or "")


def _compose(answer: str, think: str | None, style: str, body: dict[str, Any]) -> _Reply:
    """The reply of a (reasoning) model: thinking first, then the answer, within max_tokens."""
    if not think:
        return _Reply(*_apply_limits(answer, body))
    if style == "inline":
        return _Reply(*_apply_limits(f"<think>\n{think}\n</think>\n\n{answer}", body))
    if style == "bare":
        return _Reply(*_apply_limits(f"{think}\n</think>\n\n{answer}", body))
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
    if isinstance(max_tokens, int) and _count_tokens(think) >= max_tokens:
        return _Reply("", "length", think[: max_tokens * 4], style)
    rest = dict(body)
    if isinstance(max_tokens, int):
        rest["max_tokens"] = max_tokens - _count_tokens(think)
        rest.pop("max_completion_tokens", None)
    text, finish = _apply_limits(answer, rest)
    return _Reply(text, finish, think, style)


def _apply_limits(text: str, body: dict[str, Any]) -> tuple[str, str]:
    """Cut the text at the first stop sequence or at max_tokens, whichever comes first, as a real
    server does."""
    stops = body.get("stop") or []
    if isinstance(stops, str):
        stops = [stops]
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
    budget = max_tokens * 4 if isinstance(max_tokens, int) else None
    cut = min((text.find(s) for s in stops if s and s in text), default=-1)
    if cut >= 0 and (budget is None or cut <= budget):
        return text[:cut], "stop"
    if budget is not None and _count_tokens(text) > max_tokens:  # type: ignore[operator]
        return text[:budget], "length"
    return text, "stop"


# ------------------------------------------------------------------------------------------ CRUXEval


class CruxevalResponder:
    """A model that knows the benchmark: it recognises the sample in a cruxtui (or benchmark-style)
    prompt by its `[PYTHON]` block and answers correctly, wrongly, or correctly with probability
    `accuracy` ("mixed", deterministic per prompt, seed and choice). Answers follow the prompt's
    mode (direct, [THOUGHT] or [SCRATCHPAD] first) and style (a completion prompt already opened
    the first tag)."""

    def __init__(
        self, samples: Iterable[Sample], behaviour: str = "correct", accuracy: float = 0.5
    ) -> None:
        if behaviour not in ("correct", "wrong", "mixed"):
            raise ValueError(f"unknown behaviour {behaviour!r} (expected correct, wrong or mixed)")
        self.behaviour = behaviour
        self.accuracy = accuracy
        self._pads: dict[str, str] = {}
        self._lock = threading.Lock()
        self._by_output_query: dict[tuple[str, str], Sample] = {}
        self._by_input_query: dict[tuple[str, str], Sample] = {}
        for s in samples:
            code = s.code.strip("\n")
            self._by_output_query.setdefault((code, s.input), s)
            self._by_input_query.setdefault((code, s.output), s)

    @classmethod
    def from_file(
        cls, path: str, behaviour: str = "correct", accuracy: float = 0.5
    ) -> CruxevalResponder:
        return cls(read_jsonl(path), behaviour, accuracy)

    def __call__(self, request: FakeRequest) -> str:
        found = self._find(request.prompt)
        if found is None:
            return "I do not recognise this function, so I cannot answer."
        sample, task = found
        right = self._decide(request, sample)
        if task == "output":
            value = sample.output if right else _wrong_literal(sample.output)
            assertion = f"assert f({sample.input}) == {value}"
        else:
            call = f"f({sample.input})" if right else _wrong_call(sample.input)
            assertion = f"assert {call} == {sample.output}"
        return _format_reply(request, assertion, lambda: self._scratchpad(sample, right))

    def _scratchpad(self, sample: Sample, right: bool) -> str:
        """The real execution, traced once per sample (a wrong model gets the return wrong)."""
        with self._lock:
            pad = self._pads.get(sample.id)
        if pad is None:
            pad = _traced_scratchpad(sample)
            with self._lock:
                self._pads[sample.id] = pad
        if right:
            return pad
        head = pad.rpartition("\n")[0]
        wrong = f"return {_wrong_literal(sample.output)}"
        return f"{head}\n{wrong}" if head else wrong

    def _decide(self, request: FakeRequest, sample: Sample) -> bool:
        if self.behaviour != "mixed":
            return self.behaviour == "correct"
        key = f"{sample.id}|{request.body.get('seed')}|{request.choice}|{request.number if request.body.get('seed') is None else ''}"
        roll = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64
        return roll < self.accuracy

    def _find(self, prompt: str) -> tuple[Sample, str] | None:
        start = prompt.rfind("[PYTHON]\n")
        end = prompt.find("\n[/PYTHON]", start)
        if start < 0 or end < 0:
            return None
        block = prompt[start + len("[PYTHON]\n") : end]
        code, _, last = block.rpartition("\n")
        if last.startswith("assert f(??) == "):
            sample = self._by_input_query.get((code, last[len("assert f(??) == ") :]))
            return (sample, "input") if sample else None
        if last.startswith("assert f(") and last.endswith(") == ??"):
            sample = self._by_output_query.get((code, last[len("assert f(") : -len(") == ??")]))
            return (sample, "output") if sample else None
        return None


def _format_reply(request: FakeRequest, assertion: str, scratchpad: Callable[[], str]) -> str:
    """The reply in the prompt's mode; a completion prompt already wrote the first opening tag."""
    answer = f"[ANSWER]\n{assertion}\n[/ANSWER]"
    tail = request.prompt.rstrip(" ")
    if "[SCRATCHPAD]" in request.prompt:
        pad = f"[SCRATCHPAD]\n{scratchpad()}\n[/SCRATCHPAD]\n{answer}"
        opened = "[SCRATCHPAD]\n"
    elif "[THOUGHT]" in request.prompt:
        pad = f"[THOUGHT]\nI run f on the input line by line and read off the result.\n[/THOUGHT]\n{answer}"
        opened = "[THOUGHT]\n"
    else:
        pad, opened = answer, "[ANSWER]\n"
    if request.endpoint == "completions" and tail.endswith(opened):
        return pad[len(opened) :]
    return pad


def _traced_scratchpad(sample: Sample) -> str:
    """The scratchpad of the real run (traced in the sandbox); the bound arguments and the
    expected result when tracing is not possible."""
    from cruxtui.core.models.prompts import scratchpad_from_trace
    from cruxtui.core.trace.steps import trace

    pad = scratchpad_from_trace(trace(sample.code, sample.call))
    if pad is not None:
        return pad
    try:
        fn = next(
            n
            for n in ast.parse(sample.code).body
            if isinstance(n, ast.FunctionDef) and n.name == "f"
        )
        names = [a.arg for a in fn.args.args]
        values = ast.literal_eval(f"({sample.input},)")
        bound = ", ".join(f"{n}={v!r}" for n, v in zip(names, values, strict=True))
    except (SyntaxError, ValueError, StopIteration, TypeError, MemoryError, RecursionError):
        bound = sample.input
    return f"call f({bound})\nreturn {sample.output}"


def _wrong_literal(text: str) -> str:
    """A literal surely different from the value `text` denotes (same type where possible)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return "'cruxtui-wrong'"
    return repr(_mutate(value))


def _mutate(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "?"
    if isinstance(value, list):
        return [*value, "?"]
    if isinstance(value, tuple):
        return (*value, "?")
    if isinstance(value, dict):
        return {**value, "?": "?"}
    if isinstance(value, set | frozenset):
        return set(value) | {"?"}
    return "cruxtui-wrong"


def _wrong_call(input_text: str) -> str:
    """A call with the first argument changed (or no arguments when they are not literals)."""
    try:
        args = list(ast.literal_eval(f"({input_text},)"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return "f()"
    if not args:
        return "f(0)"
    args[0] = _mutate(args[0])
    return "f(" + ", ".join(repr(a) for a in args) + ")"


# ------------------------------------------------------------------------------------------ process


def _parse_fault(text: str) -> Fault:
    """`rate_limit:2` (Retry-After seconds), `server_error:503`, `slow:3.0`, `cut:40`, `drop`,
    `trickle:2.0` (seconds per byte), `endless`, `huge:BYTES`, `garbage:TEXT`."""
    kind, _, arg = text.partition(":")
    if kind == "rate_limit":
        return Fault(kind, retry_after=float(arg) if arg else 1.0)
    if kind == "server_error":
        return Fault(kind, status=int(arg) if arg else 500)
    if kind == "slow":
        return Fault(kind, delay=float(arg) if arg else 5.0)
    if kind == "cut":
        return Fault(kind, after_chars=int(arg) if arg else None)
    if kind == "trickle":
        return Fault(kind, delay=float(arg) if arg else 2.0)
    if kind == "huge":
        return Fault(kind, size=int(arg) if arg else 64 << 20)
    if kind == "garbage":
        return Fault(kind, text=arg) if arg else Fault(kind)
    return Fault(kind)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cruxtui.testing.fake_openai",
        description="Serve a scripted OpenAI-compatible model on 127.0.0.1 until killed.",
    )
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument(
        "--chunk-delay", type=float, default=0.0, help="seconds between stream chunks"
    )
    parser.add_argument("--model", action="append", help="model name to serve (repeatable)")
    parser.add_argument("--key", help="require this API key (401 otherwise)")
    parser.add_argument(
        "--mode", choices=("correct", "wrong", "mixed", "constant"), default="constant"
    )
    parser.add_argument(
        "--accuracy", type=float, default=0.5, help="share of right answers in mixed mode"
    )
    parser.add_argument(
        "--dataset", help="CRUXEval JSONL the correct/wrong/mixed model answers from"
    )
    parser.add_argument(
        "--text", default="[ANSWER]\nassert f(1) == 1\n[/ANSWER]", help="reply in constant mode"
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        help="queue a fault for the next request: rate_limit:SECS, server_error:STATUS, "
        "slow:SECS, cut:CHARS, drop, trickle:SECS, endless, huge:BYTES, garbage:TEXT",
    )
    parser.add_argument(
        "--fault-every",
        type=int,
        default=0,
        help="apply --fault-kind to every Nth request (0: never)",
    )
    parser.add_argument("--fault-kind", default="server_error", help="fault used by --fault-every")
    parser.add_argument(
        "--max-choices",
        type=int,
        help="answer at most this many choices (1: ignore n, as llama.cpp)",
    )
    parser.add_argument(
        "--interrupt-streams",
        action="store_true",
        help="end a running stream ([DONE], no finish_reason) when another request arrives",
    )
    parser.add_argument("--think", help="thinking text a reasoning model writes before each answer")
    parser.add_argument("--think-style", choices=THINK_STYLES, default="reasoning_content")
    args = parser.parse_args(argv)

    if args.mode == "constant":
        responder: Responder = constant(args.text)
    else:
        if not args.dataset:
            parser.error(f"--mode {args.mode} needs --dataset PATH (the benchmark JSONL)")
        responder = CruxevalResponder.from_file(args.dataset, args.mode, args.accuracy)
    try:
        faults = [_parse_fault(f) for f in args.fault]
        every = _parse_fault(args.fault_kind) if args.fault_every else None
    except ValueError as exc:
        parser.error(str(exc))
    fault_for = (lambda n: every if (n + 1) % args.fault_every == 0 else None) if every else None
    server = FakeOpenAI(
        responder,
        latency=args.latency,
        chunk_delay=args.chunk_delay,
        models=args.model or ["fake-model"],
        api_key=args.key,
        faults=faults,
        fault_for=fault_for,
        max_choices=args.max_choices,
        interrupt_streams=args.interrupt_streams,
        think=args.think,
        think_style=args.think_style,
        port=args.port,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server.start()
    print(server.url, flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
