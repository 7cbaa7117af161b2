"""Per-user folders (platformdirs), overridable by environment for tests and portable setups."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "cruxtui"


def _dir(env: str, default: str) -> Path:
    return Path(os.environ.get(env) or default)


def cache_dir() -> Path:
    """Downloaded dataset and other re-fetchable files (`CRUXTUI_CACHE_DIR` overrides)."""
    return _dir("CRUXTUI_CACHE_DIR", platformdirs.user_cache_dir(APP))


def data_dir() -> Path:
    """The run store and other files worth keeping (`CRUXTUI_DATA_DIR` overrides)."""
    return _dir("CRUXTUI_DATA_DIR", platformdirs.user_data_dir(APP))


def config_dir() -> Path:
    """`config.toml` with named endpoints (`CRUXTUI_CONFIG_DIR` overrides)."""
    return _dir("CRUXTUI_CONFIG_DIR", platformdirs.user_config_dir(APP))
