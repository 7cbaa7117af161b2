"""The TUI in a browser: textual-serve's `Server`, made safe to leave running in front of people.

textual-serve runs one app process per browser tab (its command, once per websocket) and relays
the terminal stream to xterm.js in the page. Three things are changed here, each for a reason:

- **The page is self-contained.** textual-serve's own page loads a web font from the internet in
  its `<head>`, which blocks the first paint on a slow or captive network (a conference hall);
  ours uses the font textual-serve ships, and relative addresses, so the page works behind an SSH
  tunnel or a proxy under any host name.
- **Every tab's process is known.** Shutdown (Ctrl+C, SIGTERM) closes every tab's websocket, asks
  each app to quit, and kills one that has not gone within a grace period: nothing is left
  running, whatever an app was doing.
- **It says what it serves** in one line, with the address to open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from pathlib import Path
from typing import Any

import aiohttp_jinja2
from aiohttp import WSCloseCode, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

log = logging.getLogger("textual-serve")

TEMPLATES = Path(__file__).resolve().parent / "templates"
QUIT_GRACE = 3.0
"""Seconds an app gets to quit by itself at shutdown before it is killed."""


class TabServer(Server):
    """textual-serve's server with our page, a record of the live tabs, and a shutdown that
    leaves no process behind."""

    def __init__(self, command: str, host: str, port: int, *, url: str, font_size: int) -> None:
        # The statics (xterm.js, the font) stay textual-serve's own; only the page is ours.
        super().__init__(command, host=host, port=port, title="cruxtui", templates_path=TEMPLATES)
        self.url = url
        self.font_size = font_size
        self.tabs: dict[AppService, web.WebSocketResponse] = {}
        self._endings: dict[AppService, asyncio.Task[None]] = {}

    def serve(self, debug: bool = False) -> None:
        """Run until Ctrl+C or SIGTERM. textual-serve's own loop, with the address printed once
        the port really listens (its banner comes before the bind) and a bounded shutdown."""
        self.debug = debug
        self.initialize_logging()
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # no line per request
        loop = asyncio.new_event_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            handle_signals=False,
            loop=loop,
            shutdown_timeout=QUIT_GRACE + 2,
            print=self._listening,
        )

    def _listening(self, *_banner: object) -> None:
        print(f"cruxtui serve: open {self.url} (one app per tab; Ctrl+C stops)", flush=True)

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its banner here, before the port is bound: nothing to say yet."""

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every tab and end its app: politely first, then by force."""
        tabs = list(self.tabs.items())
        for _service, websocket in tabs:
            with contextlib.suppress(Exception):
                await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"server stopped")
        await asyncio.gather(*(self.end(service) for service, _ in tabs))

    def end(self, service: AppService) -> asyncio.Task[None]:
        """The one ending of a tab's app, however many callers (its tab, the shutdown) await it."""
        if service not in self._endings:
            self._endings[service] = asyncio.ensure_future(end_app(service))
        return self._endings[service]

    @aiohttp_jinja2.template("serve_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        return {
            "font_size": to_int(request.query.get("fontsize", ""), self.font_size),
            "title": self.title,
        }

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One tab: start its app, relay until either side goes, then end the app.

        textual-serve's own handler, with the app service recorded so shutdown can reach it.
        """
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        await websocket.prepare(request)

        async def close() -> None:  # the app said it exited
            await websocket.close()

        service = AppService(
            self.command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        self.tabs[service] = websocket
        try:
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # a broken tab must not take the server down
            log.exception(error)
        finally:
            await self.end(service)
            self.tabs.pop(service, None)
            self._endings.pop(service, None)
            with contextlib.suppress(Exception):
                await websocket.close()
        return websocket


async def end_app(service: AppService, grace: float = QUIT_GRACE) -> None:
    """Ask the tab's app to quit; kill it if it has not gone within `grace` seconds."""
    process = service._process
    if process is None:
        return
    if process.returncode is None:
        with contextlib.suppress(Exception):
            await service.send_meta({"type": "quit"})
        try:
            await asyncio.wait_for(process.wait(), grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    await service.stop()  # textual-serve's own ending: downloads cancelled, the relay awaited
