"""What the TUI remembers between sessions (the colour theme): `tui.toml` in the config folder.

A file of its own beside `config.toml`, which people write by hand (endpoints, keys, comments):
the app rewrites this one whenever a remembered choice changes, and must never rewrite theirs.
Written atomically; a missing, unreadable or malformed file means "nothing remembered" (with the
problem reported), never an error that stops the app.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from cruxtui.core.util.atomic import atomic_write_text
from cruxtui.core.util.paths import config_dir

FILE = "tui.toml"
KEYS = ("theme",)
"""The remembered choices; each is a string."""


def prefs_path() -> Path:
    return config_dir() / FILE


def load_prefs(path: Path | None = None) -> tuple[dict[str, str], str | None]:
    """The remembered choices, and a one-line problem with the file (None when it is fine or
    absent). Unknown keys and non-string values are left out."""
    path = path or prefs_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path}: ignored ({exc})"
    return {k: v for k, v in data.items() if k in KEYS and isinstance(v, str)}, None


def save_pref(key: str, value: str, path: Path | None = None) -> None:
    """Remember `key = value` (keeping the other remembered choices). Raises OSError."""
    if key not in KEYS:
        raise ValueError(f"not a remembered choice: {key!r}")
    path = path or prefs_path()
    prefs, _ = load_prefs(path)
    prefs[key] = value
    lines = ["# Written by cruxtui: the choices it remembers. Safe to delete."]
    lines += [f"{k} = {toml_string(v)}" for k, v in sorted(prefs.items())]
    atomic_write_text(path, "\n".join(lines) + "\n")


def toml_string(value: str) -> str:
    """`value` as a TOML basic string. JSON's string syntax is TOML's (the same quotes and
    escapes) but for DEL, which TOML wants escaped; non-ASCII stays literal, as both allow."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
