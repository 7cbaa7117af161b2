"""The plain requests' own HTTP path (aiohttp): what it must keep of the `openai` client's
behaviour (proxies from the environment, our key and nothing else) and what it must not leak
(sessions left open across event loops)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import http.server
import json
import ssl
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from cruxtui.core.models import ModelError, ModelSpec, SamplingParams, make_backend, openai_compat
from cruxtui.core.models.openai_compat import OpenAICompatBackend
from cruxtui.core.models.plain_http import PlainSession
from cruxtui.core.models.prompts import build_prompt
from cruxtui.testing.fake_openai import FakeOpenAI, constant
from tests.models.test_openai_backend import ANSWER, FAST, SAMPLE

KEY = "sk-test-plain-0123456789"


def _backend(srv: FakeOpenAI, key: str | None = None) -> OpenAICompatBackend:
    b = make_backend(ModelSpec("openai", "fake-model", srv.url, "chat"), api_key=key, retry=FAST)
    assert isinstance(b, OpenAICompatBackend)
    return b


def test_one_backend_serves_one_event_loop_after_another_and_closes_cleanly_in_each() -> None:
    """The CLI and the tests run a backend in one `asyncio.run` after another: each loop gets
    its own connections, and closing the backend in it closes them (no "unclosed" warning)."""
    prompt = build_prompt(SAMPLE, "output", "direct", "chat")

    async def one(b: OpenAICompatBackend) -> list:
        try:
            return await b.complete(prompt, SamplingParams())
        finally:
            await b.aclose()

    with FakeOpenAI(constant(ANSWER)) as srv:
        b = _backend(srv)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            done = asyncio.run(one(b)) + asyncio.run(one(b))
            gc.collect()
    assert len(done) == 2 and all("f(21) == 42" in c.text for c in done)
    assert not [w for w in caught if "nclosed" in str(w.message)], [str(w.message) for w in caught]
    assert len(srv.log.requests) == 2


def test_a_loop_that_ended_without_closing_the_backend_does_not_break_the_next() -> None:
    prompt = build_prompt(SAMPLE, "output", "direct", "chat")
    with FakeOpenAI(constant(ANSWER)) as srv:
        b = _backend(srv)
        asyncio.run(b.complete(prompt, SamplingParams()))  # its loop ends, the session with it
        [c] = asyncio.run(b.complete(prompt, SamplingParams()))
        asyncio.run(b.aclose())
    assert "f(21) == 42" in c.text and len(srv.log.requests) == 2


def test_the_proxy_is_the_environments_and_no_proxy_is_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As the `openai` client's own HTTP library does: HTTP(S)_PROXY name the proxy, NO_PROXY
    exempts hosts (looked up once per URL, not per request)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    session = PlainSession(5.0, True, None)
    assert str(session.proxy("http://models.example/v1/chat/completions")["proxy"]) == (
        "http://proxy.example:3128"
    )
    monkeypatch.setenv("NO_PROXY", "exempt.example")
    assert PlainSession(5.0, True, None).proxy("http://exempt.example/v1/completions") == {}
    monkeypatch.delenv("HTTP_PROXY")
    assert PlainSession(5.0, True, None).proxy("http://models.example/v1/completions") == {}


async def test_a_netrc_entry_for_the_host_neither_replaces_nor_clashes_with_our_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ~/.netrc with credentials for the server's host is not read: the request carries the
    configured key (aiohttp would otherwise refuse to send both)."""
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login someone password elsewhere\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETRC", str(netrc))
    with FakeOpenAI(constant(ANSWER), api_key=KEY) as srv:
        b = _backend(srv, key=KEY)
        [c] = await b.complete(build_prompt(SAMPLE, "output", "direct", "chat"), SamplingParams())
        await b.aclose()
    assert "f(21) == 42" in c.text
    assert srv.log.auth_headers == [f"Bearer {KEY}"]


CERT = Path(__file__).parent / "fixtures" / "tls_cert.pem"
"""A self-signed certificate for 127.0.0.1 (and its key beside it), made for these tests."""


@contextlib.contextmanager
def _tls_server() -> Iterator[str]:
    """An HTTPS server on 127.0.0.1 answering every POST with one chat completion."""
    answer = json.dumps(
        {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": ANSWER},
                    "finish_reason": "stop",
                }
            ]
        }
    ).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(CERT, CERT.with_name("tls_key.pem"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


async def test_an_untrusted_certificate_is_one_clear_line_and_no_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setattr(openai_compat, "_tls", None)
    with _tls_server() as url:
        b = make_backend(ModelSpec("openai", "m", url, "chat"), retry=FAST)
        with pytest.raises(ModelError) as info:
            await b.complete(build_prompt(SAMPLE, "output", "direct", "chat"), SamplingParams())
        await b.aclose()
    assert info.value.kind == "config" and b.retries == 0
    assert "certificate is not trusted (self-signed certificate)" in info.value.message
    assert "SSL_CERT_FILE" in info.value.message and "\n" not in info.value.message


async def test_a_certificate_trusted_through_ssl_cert_file_is_trusted_by_the_plain_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As by the `openai` client: SSL_CERT_FILE names the certificates to trust."""
    monkeypatch.setenv("SSL_CERT_FILE", str(CERT))
    monkeypatch.setattr(openai_compat, "_tls", None)
    with _tls_server() as url:
        b = make_backend(ModelSpec("openai", "m", url, "chat"), retry=FAST)
        assert isinstance(b, OpenAICompatBackend)
        [c] = await b.complete(build_prompt(SAMPLE, "output", "direct", "chat"), SamplingParams())
        assert b._plain is not None and b._plain._open is not None  # it went the plain way
        await b.aclose()
    assert "f(21) == 42" in c.text


async def test_https_asked_of_a_plain_http_server_says_to_use_http_at_once() -> None:
    """A server that does not speak TLS (an http:// URL written https://) is a setting to fix:
    one line naming the http:// URL, no retries as if the server were down."""
    with FakeOpenAI(constant(ANSWER)) as srv:
        url = srv.url.replace("http://", "https://")
        b = make_backend(ModelSpec("openai", "m", url, "chat"), retry=FAST)
        with pytest.raises(ModelError) as info:
            await b.complete(build_prompt(SAMPLE, "output", "direct", "chat"), SamplingParams())
        await b.aclose()
    assert info.value.kind == "config" and b.retries == 0
    assert f"is its URL {srv.url}?" in info.value.message and "\n" not in info.value.message
