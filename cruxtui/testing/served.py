"""`cruxtui serve` as a real process, and a real browser on its page: for tests, the benchmark and
the browser screenshot, so all three drive the page the same way.

- `ServedTui` starts `python -m cruxtui serve` on a free port of 127.0.0.1, waits for the address
  it prints, and stops it the way a presenter does (SIGINT, as Ctrl+C sends).
- `launch_chromium` starts Debian's Chromium through Playwright (`executable_path`: Playwright's
  own browser download is never used), with the flags a machine without a network needs.
- `TERMINAL_HOOK` and `terminal_text` read what xterm.js shows, as text: textual-serve keeps its
  `Terminal` inside a closure, so the hook (run before the page's scripts) catches it the moment
  the page stores it.

Linux only where it reads /proc (`descendants`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Playwright

CHROMIUM_ENV = "CRUXTUI_CHROMIUM"
"""Path of the Chromium to drive; default: `chromium` (Debian's package) on PATH."""

CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--no-first-run",
    # No network here: without these Chromium keeps dialling Google's services and failing.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]

TERMINAL_HOOK = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    window.cruxtuiTerminal = value;
    Object.defineProperty(this, "terminal", {
      value, writable: true, configurable: true, enumerable: true,
    });
  },
});
"""
"""Init script: the first object given a `terminal` property (textual.js's session object,
`this.terminal = new Terminal(...)`) hands the xterm.js Terminal to `window.cruxtuiTerminal`."""

_READ_SCREEN = """() => {
  const term = window.cruxtuiTerminal;
  if (!term) return null;
  const buffer = term.buffer.active;
  const rows = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
}"""


def chromium_path() -> str | None:
    return os.environ.get(CHROMIUM_ENV) or shutil.which("chromium")


def launch_chromium(playwright: Playwright) -> Browser:
    path = chromium_path()
    if path is None:
        raise FileNotFoundError(f"no Chromium: install Debian's chromium or set ${CHROMIUM_ENV}")
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)


def open_tab(
    browser: Browser | BrowserContext, url: str, size: tuple[int, int] = (1280, 800)
) -> Page:
    """A new tab with the terminal hook installed, on `url` (not waiting for the app)."""
    page = browser.new_page()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.add_init_script(TERMINAL_HOOK)
    page.goto(url)
    return page


def terminal_text(page: Page) -> str:
    """The rows the terminal shows now, as text ('' before the terminal exists)."""
    return page.evaluate(_READ_SCREEN) or ""


def wait_for_text(page: Page, *needles: str, timeout: float = 60.0, absent: str = "") -> str:
    """Poll the terminal until every needle shows (and `absent`, if given, does not); the screen.

    Raises AssertionError with the last screen when the deadline passes.
    """
    deadline = time.monotonic() + timeout
    while True:
        text = terminal_text(page)
        if all(n in text for n in needles) and not (absent and absent in text):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(
                f"terminal never showed {needles!r}"
                + (f" without {absent!r}" if absent else "")
                + f" in {timeout:.0f} s; it shows:\n{text}"
            )
        page.wait_for_timeout(50)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServedTui:
    """`python -m cruxtui serve --port <free> ARGS...` in its own session; `url` once it listens.

    Its output is drained by a thread (a full pipe would stall the server) and kept in `output`.
    """

    def __init__(self, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> None:
        self.args = args
        self.env = env
        self.timeout = timeout
        self.url = ""
        self.lines: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        self._listening = threading.Event()

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def __enter__(self) -> ServedTui:
        for _attempt in range(5):  # another program may take the free port before we bind it
            self._start(free_port())
            if self.url:
                return self
            self.stop()
            if "already in use" not in self.output:
                break
        raise RuntimeError(f"cruxtui serve did not start:\n{self.output}")

    def _start(self, port: int) -> None:
        self.lines = []
        self._listening.clear()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cruxtui", "serve", "--port", str(port), *self.args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self.env,
            start_new_session=True,  # its own process group, as a shell gives a job
        )
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True).start()
        self._listening.wait(self.timeout)
        for line in self.lines:
            if line.startswith("cruxtui serve: open "):
                self.url = line.split()[3]

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.append(line)
            if line.startswith("cruxtui serve: open "):
                self._listening.set()
        self._listening.set()  # exited

    def interrupt(self, *, group: bool = False, timeout: float = 30) -> int:
        """Ctrl+C: SIGINT to the server (or, `group`, to its whole process group, as a terminal
        does); its exit status."""
        assert self.proc is not None
        if self.proc.poll() is None:
            if group:
                os.killpg(self.proc.pid, signal.SIGINT)
            else:
                self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.interrupt(timeout=15)
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def descendants(pid: int) -> dict[int, str]:
    """Every live process below `pid` (children, theirs, ...), by pid, with its command line.

    Read from /proc; zombies (exited, not yet reaped) are not running and are left out.
    """
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state not in ("Z", "X"):
            parents.setdefault(int(ppid), []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = list(parents.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            cmdline = (Path("/proc") / str(child) / "cmdline").read_bytes()
        except OSError:
            continue
        found[child] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
        todo += parents.get(child, [])
    return found


def still_running(processes: dict[int, str]) -> dict[int, str]:
    """Those of `processes` (pid: command line, from `descendants`) still running: same pid, same
    command line, not a zombie."""
    now: dict[int, str] = {}
    for pid, cmdline in processes.items():
        proc = Path("/proc") / str(pid)
        try:
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            same = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state not in ("Z", "X") and same.strip() == cmdline:
            now[pid] = cmdline
    return now
