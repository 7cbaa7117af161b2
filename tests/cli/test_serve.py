"""`cruxtui serve` as a real process: one app per tab, TUI options passed through, a port in use
refused in one line, a loud warning off loopback, and nothing left running after Ctrl+C.

Tabs here are real websocket sessions opened with aiohttp's client (the browser itself is in
test_serve_browser.py): each is what a tab's textual.js does, `/ws?width=..&height=..`.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from cruxtui.cli.main import build_parser
from cruxtui.cli.serve_cmd import app_command, is_loopback, page_url, tui_argv
from cruxtui.testing.served import ServedTui, descendants, still_running

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


TUI_FIELDS = (
    "dataset",
    "offline",
    "store",
    "endpoint",
    "model",
    "step_counts",
    "generations",
    "task",
    "demo",
    "theme",
)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--no-step-counts", "--task", "input"],
        ["--dataset", "my data/it's.jsonl", "--offline", "--cases", "/tmp/g a"],
        ["--generations", "g.json", "--endpoint", "http://127.0.0.1:9/v1", "--store", "x;rm -rf"],
        ["--demo", "--theme", "presentation", "--model", "$(whoami)"],
    ],
)
def test_the_served_command_is_this_cruxtui_with_the_same_tui_options(argv: list[str]) -> None:
    """What each tab runs parses back (through the shell's quoting) to the options given."""
    served = parse("serve", "--port", "9000", *argv)
    direct = parse(*argv)
    command = app_command(served)
    assert command.startswith("exec ")
    words = shlex.split(command.removeprefix("exec "))
    assert words[:3] == [sys.executable, "-m", "cruxtui"]
    again = parse(*words[3:])
    assert again.command is None  # the TUI itself, not a subcommand
    for name in (*TUI_FIELDS, "cases"):
        assert getattr(again, name) == getattr(direct, name), name


def test_options_before_serve_are_passed_too() -> None:
    args = parse("--dataset", "d.jsonl", "--offline", "serve", "--task", "input")
    assert tui_argv(args) == ["--dataset", "d.jsonl", "--offline", "--task", "input"]


def test_starter_set_server_tells_every_tab_not_to_download() -> None:
    assert shlex.split(app_command(parse("serve"), offline=True))[-1] == "--offline"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.1.2.3", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("my-laptop.local", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_printed_address_opens_locally() -> None:
    assert page_url("0.0.0.0", 8000) == "http://127.0.0.1:8000/"
    assert page_url("::1", 8001) == "http://[::1]:8001/"


def test_a_port_in_use_is_refused_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "cruxtui", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("note:")]
    assert errors == [
        f"cruxtui: error: port {port} on 127.0.0.1 is already in use (another `cruxtui serve`?); "
        "choose another with --port"
    ]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_a_bad_dataset_is_refused_before_serving(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    proc = subprocess.run(
        [sys.executable, "-m", "cruxtui", "serve", "--dataset", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("cruxtui: error: ") and str(bad) in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


class Tab:
    """A tab's websocket, read continuously as a browser does (an unread socket would stall the
    app on its output): `received` bytes of screen so far, `closed` once the server ends it."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.received = 0
        self.closed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            if msg.type is aiohttp.WSMsgType.BINARY:
                self.received += len(msg.data)
        self.closed.set()

    @classmethod
    async def open(cls, url: str, session: aiohttp.ClientSession) -> Tab:
        """Once its app has drawn its first screen (several KB of escape codes)."""
        tab = cls(
            await session.ws_connect(url.replace("http://", "ws://") + "ws?width=100&height=30")
        )
        assert await wait_until(lambda: tab.received > 2000 or tab.closed.is_set())
        assert not tab.closed.is_set()
        return tab


def app_processes(server_pid: int) -> dict[int, str]:
    return {pid: cmd for pid, cmd in descendants(server_pid).items() if " -m cruxtui" in f" {cmd}"}


def sandbox_workers(app_pid: int) -> list[int]:
    """The processes an app started (its sandbox workers: `python -I -c ... cruxtui.core.sandbox`)."""
    return [pid for pid, cmd in descendants(app_pid).items() if "cruxtui.core.sandbox" in cmd]


async def wait_until(condition: Callable[[], object], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@pytest.mark.parametrize("group", [False, True], ids=["sigint-server", "ctrl-c-terminal"])
def test_one_app_per_tab_and_nothing_left_after_ctrl_c(group: bool) -> None:
    """Two tabs: two app processes with the options given; Ctrl+C (SIGINT to the server alone,
    or to its whole process group as a terminal sends it) stops the server and every process
    below it, sandbox workers included, and each tab hears that its session ended."""

    async def scenario(served: ServedTui) -> None:
        assert served.proc is not None
        async with aiohttp.ClientSession() as session:
            tabs = [await Tab.open(served.url, session) for _ in range(2)]
            assert await wait_until(lambda: len(app_processes(served.proc.pid)) == 2)  # type: ignore[union-attr]
            apps = app_processes(served.proc.pid)
            for cmd in apps.values():
                assert cmd.endswith("-m cruxtui --offline --task input"), cmd
            # The first app counts steps in the sandbox at start-up (the second finds them
            # cached): its sandbox workers are grandchildren of the server, and must go too.
            assert await wait_until(lambda: any(sandbox_workers(pid) for pid in apps))
            everything = descendants(served.proc.pid)
            assert set(apps) <= set(everything) and len(everything) > len(apps)
            status = await asyncio.to_thread(served.interrupt, group=group)
            assert status == 0, served.output
            assert await wait_until(lambda: not still_running(everything), 15), still_running(
                everything
            )
            for tab in tabs:  # each tab hears that its session ended
                await asyncio.wait_for(tab.closed.wait(), 10)

    with ServedTui("--task", "input", "--offline") as served:
        asyncio.run(scenario(served))
    assert "cruxtui serve: stopped" in served.output
    assert "Traceback" not in served.output, served.output


def test_a_closed_tab_ends_its_app() -> None:
    async def scenario(served: ServedTui) -> None:
        assert served.proc is not None
        async with aiohttp.ClientSession() as session:
            tab = await Tab.open(served.url, session)
            assert await wait_until(lambda: len(app_processes(served.proc.pid)) == 1)  # type: ignore[union-attr]
            apps = app_processes(served.proc.pid)
            await tab.ws.close()
            assert await wait_until(lambda: not still_running(apps), 15)
            assert served.proc.poll() is None  # the server goes on for the next tab

    with ServedTui("--offline", "--no-step-counts") as served:
        asyncio.run(scenario(served))


def test_serving_beyond_this_machine_says_so_loudly() -> None:
    """Bound to every interface (nothing but this test connects, over loopback)."""
    with ServedTui("--host", "0.0.0.0", "--offline") as served:
        assert served.url.startswith("http://127.0.0.1:")
    assert "cruxtui: WARNING: serving on 0.0.0.0:" in served.output
    assert "NOT only this machine" in served.output and "no password" in served.output.lower()
