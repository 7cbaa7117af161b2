"""Shared fixtures. The real benchmark data lives beside the checkout in ../shared/data
(override with CRUXTUI_SHARED_DATA); it is read from there, never copied into the repo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cruxtui.core.data.dataset import Dataset, load_dataset

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
