"""Shared fixtures. The real benchmark data lives beside the checkout in ../shared/data
(override with CRUXTUI_SHARED_DATA); it is read from there, never copied into the repo."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
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
