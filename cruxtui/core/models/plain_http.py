"""The HTTP path of plain (not streamed) requests: aiohttp, one session per event loop.

Why not the `openai` client's own HTTP library for these: a bulk run sends thousands of requests
that differ only in their body, and at concurrency 64 against the local test server that
library's CPU per request (~1.0 ms: a pure-Python HTTP parser and a connection pool walked on
every request) made the client, not the server, the bottleneck of the run. aiohttp does the same
exchange in ~0.3 ms (its parser is compiled; its pool is keyed by host), measured side by side in
`benchmarks/bench_runner.py`. Streams, model listings and everything interactive stay on the
`openai` client; `OpenAICompatBackend` turns this module's failures into that client's own
exceptions so that both paths are explained the same way.

aiohttp is imported on first use (~0.2 s), not with the backend: opening the app or a command
that makes no request does not pay for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

    import aiohttp

MAX_CONNECTIONS = 1000
"""Connections one session may hold, as the `openai` client's own limit: callers bound what is
in flight (a run's concurrency, an endpoint's `concurrency`), this only stops a runaway."""


class PlainReply:
    """A response whose headers arrived, its body still to read (as the caller's caps say)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status
        self.headers: Mapping[str, str] = response.headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives, decoded (gzip, deflate) as the server's encoding says."""
        async for chunk in self._response.content.iter_any():
            yield chunk

    async def aread(self) -> bytes:
        return await self._response.read()

    async def aclose(self) -> None:
        """Give the connection back (it is closed instead if the body was not read to its end)."""
        self._response.release()


class PlainSession:
    """POSTs to one server over a pool of kept-alive connections. The pool belongs to the event
    loop that opened it; a request from another loop (a second `asyncio.run`) gets a new one."""

    def __init__(self, timeout: float, follow_redirects: bool, tls: ssl.SSLContext | None) -> None:
        self.timeout = timeout
        """Seconds to connect, and seconds of silence allowed while reading (as the `openai`
        client's timeout); the request's deadline in all is the caller's."""
        self.follow_redirects = follow_redirects
        self.tls = tls
        self._open: tuple[asyncio.AbstractEventLoop, aiohttp.ClientSession] | None = None
        self._proxy: dict[str, Any] = {}
        """Per URL, the proxy the environment names for it (`{}`: none), looked up once."""

    def _session(self) -> aiohttp.ClientSession:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._open is not None and self._open[0] is loop:
            return self._open[1]
        self._forget()
        connector = aiohttp.TCPConnector(
            limit=MAX_CONNECTIONS, ssl=self.tls if self.tls is not None else True
        )
        session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=self.timeout, sock_read=self.timeout
            ),
            # Not `trust_env`: it reads ~/.netrc and the proxy variables again in a thread on
            # every request (a fifth of the client's CPU at c=64), and a netrc entry for the host
            # would clash with our Authorization header. The proxy is looked up once (`proxy`).
            trust_env=False,
            cookie_jar=aiohttp.DummyCookieJar(),  # an API server's cookies mean nothing here
        )
        self._open = (loop, session)
        return session

    def _forget(self) -> None:
        """Drop a session whose loop is gone: its connections died with that loop, and closing it
        from another loop is not possible; marking it closed keeps aiohttp from warning."""
        if self._open is not None:
            _, session = self._open
            self._open = None
            connector = session.connector
            session.detach()
            if connector is not None:
                connector._close()  # noqa: SLF001 - the synchronous part of `close()`: no loop needed

    def proxy(self, url: str) -> dict[str, Any]:
        """The proxy the environment names for `url` (HTTP(S)_PROXY, NO_PROXY), as the `openai`
        client honours them: `{"proxy": ..., "proxy_auth": ...}`, or `{}` for none."""
        found = self._proxy.get(url)
        if found is None:
            from aiohttp.helpers import get_env_proxy_for_url
            from yarl import URL

            try:
                address, auth = get_env_proxy_for_url(URL(url))
                found = {"proxy": address, "proxy_auth": auth}
            except LookupError:
                found = {}
            self._proxy[url] = found
        return found

    async def post(self, url: str, headers: Mapping[str, str], body: bytes) -> PlainReply:
        """Send; return once the status and headers are in. Raises aiohttp's own exceptions."""
        response = await self._session().post(
            url,
            data=body,
            headers=headers,
            allow_redirects=self.follow_redirects,
            **self.proxy(url),
        )
        return PlainReply(response)

    async def aclose(self) -> None:
        if self._open is None:
            return
        loop, session = self._open
        if loop is asyncio.get_running_loop():
            self._open = None
            await session.close()
        else:
            self._forget()
