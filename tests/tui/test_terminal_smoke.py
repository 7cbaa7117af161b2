"""The installed `cruxtui` command in a real terminal (tmux): it opens, typing narrows Browse,
Enter opens a sample, `t` traces it, `q` quits with exit status 0. What a new user does first,
through the console script, the terminal driver and real key bytes: nothing Pilot stands in for."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import CRUXEVAL_JSONL

pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"
    ),
]

COLS, ROWS = 100, 30


class Tmux:
    """One tmux server on its own socket, running one window."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return proc.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "smoke")

    def wait(self, condition: Callable[[str], object], what: str, timeout: float = 90) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if condition(text):
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"waited {timeout:.0f} s for {what}; the screen shows:\n{text}")
            time.sleep(0.2)


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    server = Tmux(tmp_path / "tmux.sock")
    yield server
    server("kill-server")


def shown(text: str) -> int | None:
    found = re.search(r"(\d+) of 800 shown", text)
    return int(found.group(1)) if found else None


def test_first_minutes_in_a_real_terminal(tmux: Tmux, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "cruxtui"
    assert script.exists(), f"the cruxtui console script is not installed next to {sys.executable}"
    status = tmp_path / "status"
    keep = ("CRUXTUI_CACHE_DIR", "CRUXTUI_DATA_DIR", "CRUXTUI_CONFIG_DIR", "CRUXTUI_OFFLINE")
    env = " ".join(f"{k}={shlex.quote(os.environ[k])}" for k in keep if k in os.environ)
    command = (
        f"cd {shlex.quote(str(tmp_path))} && env {env} TERM=xterm-256color "
        f"{shlex.quote(str(script))} --dataset {shlex.quote(str(CRUXEVAL_JSONL))} "
        f"--no-step-counts; echo $? > {shlex.quote(str(status))}"
    )
    tmux("new-session", "-d", "-s", "smoke", "-x", str(COLS), "-y", str(ROWS), command)

    tmux.wait(lambda t: shown(t) == 800, "Browse with every sample")
    tmux("send-keys", "-t", "smoke", "-l", "rfind")  # no `/` first: typing searches
    text = tmux.wait(lambda t: (n := shown(t)) is not None and 0 < n < 800, "the search")
    assert "rfind" in text
    tmux("send-keys", "-t", "smoke", "Enter")  # in the search box: opens the top hit
    tmux.wait(lambda t: "Expected output" in t, "the Sample screen")
    tmux("send-keys", "-t", "smoke", "t")
    tmux.wait(lambda t: re.search(r"step 0/\d+", t), "the Trace screen")
    tmux("send-keys", "-t", "smoke", "q")
    deadline = time.monotonic() + 30
    while not (status.exists() and status.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status.exists(), f"cruxtui did not quit on q; the screen shows:\n{tmux.screen()}"
    assert status.read_text().strip() == "0"
