"""Shared fixtures. The real benchmark data lives beside the checkout in ../shared/data
(override with CRUXTUI_SHARED_DATA); it is read from there, never copied into the repo."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.notifications import SeverityLevel
from textual.pilot import Pilot

from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.tui.app import CruxApp

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
CRUXEVAL_JSONL = SHARED_DATA / "cruxeval.jsonl"
CODELLAMA_OUTPUT = SHARED_DATA / "generations" / "codellama-7b_temp0.2_output"


@pytest.fixture(autouse=True)
def _isolated_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never read or write the real user's cache, data or config folders from a test."""
    base = tmp_path_factory.mktemp("userdirs")
    monkeypatch.setenv("CRUXTUI_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("CRUXTUI_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("CRUXTUI_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("CRUXTUI_OFFLINE", "1")
    monkeypatch.delenv("CRUXTUI_DATASET", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture(scope="session")
def official() -> Dataset:
    """The 800 CRUXEval samples from ../shared/data (skips with a reason if absent)."""
    if not CRUXEVAL_JSONL.exists():
        pytest.skip(f"benchmark data not found at {CRUXEVAL_JSONL} (set CRUXTUI_SHARED_DATA)")
    return load_dataset(CRUXEVAL_JSONL)


# -- a real model on a real OpenAI-compatible server ---------------------------------------------

REALMODEL_DIR = Path(os.environ.get("CRUXTUI_SHARED_REALMODEL") or SHARED_DATA.parent / "realmodel")
REALMODEL_VENV = Path(
    os.environ.get("CRUXTUI_REALMODEL_VENV")
    or Path.home() / ".cache" / "cruxtui-realmodel" / "venv"
)


class RealModel:
    """The running server: `url` ends in /v1, the model is served as `model`."""

    model = "smollm2"

    def __init__(self, url: str, pid: int, log: Path, started_in: float) -> None:
        self.url = url
        self.pid = pid
        self.log = log
        self.started_in = started_in


@pytest.fixture(scope="session")
def real_model() -> Iterator[RealModel]:
    """SmolLM2-135M-Instruct served by llama-cpp-python on a free port of 127.0.0.1, with the
    server's defaults (so it ignores `n` and cuts a running stream when another request arrives,
    as real installs do) but one thread. The venv lives outside the repo ($CRUXTUI_REALMODEL_VENV, else
    ~/.cache/cruxtui-realmodel/venv) and is made once; the server is killed at session end."""
    import signal
    import socket
    import subprocess

    serve = REALMODEL_DIR / "serve.sh"
    if not serve.is_file():
        pytest.skip(f"no real model here: {serve} not found (set CRUXTUI_SHARED_REALMODEL)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    REALMODEL_VENV.parent.mkdir(parents=True, exist_ok=True)
    log = REALMODEL_VENV.parent / f"server-{port}.log"
    env = {**os.environ, "REALMODEL_LOG": str(log)}
    start = time.monotonic()
    # One thread: on two shared cores llama.cpp's threads spin-wait on each other under load,
    # which made each answer 20-40x slower (measured: 20-38 s with 2 threads, 1 s with 1).
    proc = subprocess.run(
        ["bash", str(serve), str(REALMODEL_VENV), str(port), "--n_threads", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or len(lines) < 2:
        pytest.fail(f"serve.sh failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
    url, pid = lines[-2], int(lines[-1])
    try:
        yield RealModel(url, pid, log, time.monotonic() - start)
    finally:
        try:
            os.killpg(pid, signal.SIGTERM)  # setsid made it a session (and group) leader
        except ProcessLookupError:
            pass
        except PermissionError:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.killpg(pid, signal.SIGKILL)


async def wait_for(
    pilot: Pilot[Any], condition: Callable[[], object], timeout: float = 60.0, what: str = ""
) -> None:
    """Let the app run until `condition()` holds, then let the screen settle; fail after `timeout`
    seconds. For anything a worker or a message brings: on a busy machine neither starts nor ends
    on a fixed schedule, so a test waits for what it needs to see, never for a fixed time or for
    "the workers" (which may not have started yet)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:.0f} s for {what or 'a condition'} in vain")
        await pilot.pause(0.02)
    await pilot.pause()


@dataclass(frozen=True)
class Note:
    message: str
    title: str
    severity: SeverityLevel


class NotingApp(CruxApp):
    """CruxApp that keeps every notification it shows in `notes`, for tests to read (Textual's
    own list is private)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.notes: list[Note] = []

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        self.notes.append(Note(message, title, severity))
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)
