"""Shared fixtures. The real benchmark data lives beside the checkout in ../shared/data
(override with CRUXTUI_SHARED_DATA); it is read from there, never copied into the repo.

A test that reads it is marked `shared_data`: by requesting the `shared_data` or `official`
fixture (marked automatically), or with `@pytest.mark.shared_data` when it only uses the path
constants below. Without the data such a test is skipped with the reason; with `CI` set in the
environment a skipped `shared_data` test fails the run, so a missing data folder cannot make CI
pass by testing less.
"""

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


SHARED_FIXTURES = ("shared_data", "official")
"""Fixtures that read ../shared/data: a test requesting one of them gets the `shared_data` mark."""


def missing_shared_data() -> str | None:
    """Why the shared data cannot be used (None if it can): the first expected path absent."""
    for path in (CRUXEVAL_JSONL, CODELLAMA_OUTPUT / "generations.json"):
        if not path.exists():
            return f"benchmark data not found at {path} (set CRUXTUI_SHARED_DATA)"
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ../shared/data folder (skips with a reason if it is absent)."""
    if reason := missing_shared_data():
        pytest.skip(reason)
    return SHARED_DATA


@pytest.fixture(scope="session")
def official(shared_data: Path) -> Dataset:
    """The 800 CRUXEval samples from ../shared/data (skips with a reason if absent)."""
    return load_dataset(CRUXEVAL_JSONL)


_skipped_shared_data: list[str] = []
"""Node ids of `shared_data` tests skipped in this session (reported, and fatal in CI)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests requesting a data fixture get the mark, so `-m shared_data` selects all of them."""
    for item in items:
        if any(name in getattr(item, "fixturenames", ()) for name in SHARED_FIXTURES):
            item.add_marker(pytest.mark.shared_data)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked by hand (it uses the path constants) skips like the fixtures do."""
    if item.get_closest_marker("shared_data") is not None and (reason := missing_shared_data()):
        pytest.skip(reason)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and "shared_data" in report.keywords:
        _skipped_shared_data.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI (`CI` set) a skipped `shared_data` test fails the run."""
    if _skipped_shared_data and os.environ.get("CI") and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _skipped_shared_data and os.environ.get("CI"):
        terminalreporter.section("shared_data tests skipped in CI", red=True)
        terminalreporter.line(
            f"{len(_skipped_shared_data)} test(s) need the benchmark data and were skipped, "
            "which fails the run in CI (set CRUXTUI_SHARED_DATA to the folder holding "
            "cruxeval.jsonl and generations/):"
        )
        for nodeid in dict.fromkeys(_skipped_shared_data):
            terminalreporter.line(f"  {nodeid}")


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


def output_plan(
    store: Any, backend: Any, dataset_digest: str, params: Any, style: str = "chat"
) -> Any:
    """The plan of a direct output-prediction run prepared in `store`, as `cruxtui run` makes
    one: what most runner tests start from."""
    from cruxtui.core.runs.runner import prepare_run

    _, plan = prepare_run(
        store,
        backend,
        dataset_digest=dataset_digest,
        task="output",
        mode="direct",
        style=style,
        params=params,
    )
    return plan


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
