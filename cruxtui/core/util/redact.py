"""Keys out of everything cruxtui stores or prints.

A hostile model answer can quote a key it found (a command line, an environment), and a server
can echo the Authorization header in an error message; whatever reaches a verdict's reason, a
produced value, the run store, a case file, a scored file or the terminal passes through
`redact` first (the TUI's live streams through `live_redactor`). Redacted: every key this process uses (`register`, called where endpoints
resolve their key), the values of key-like environment variables (`*API_KEY*`, `*_TOKEN`,
`*_SECRET`), and any `Bearer <token>`.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable

MARK = "[redacted]"
_MIN_LENGTH = 6
"""Shorter values are not treated as secrets (replacing every "abc" would garble text)."""

_BEARER = re.compile(r"(?i)\b(Bearer)\s+[A-Za-z0-9._~+/=-]{4,}")
_KEY_NAME = re.compile(r"(?i)(API_?KEY|_TOKEN$|_SECRET$|^TOKEN$)")
_lock = threading.Lock()
_registered: set[str] = set()


def register(secret: str | None) -> None:
    """Treat `secret` (a key this process sends somewhere) as something never to store or print."""
    if secret and len(secret) >= _MIN_LENGTH:
        with _lock:
            _registered.add(secret)


def active_secrets() -> list[str]:
    """The registered keys and key-like environment values, longest first."""
    with _lock:
        found = set(_registered)
    for name, value in os.environ.items():
        if len(value) >= _MIN_LENGTH and _KEY_NAME.search(name):
            found.add(value)
    return sorted(found, key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with every active secret and any `Bearer <token>` replaced by `[redacted]`."""
    return _redact(text, active_secrets())


def redactor() -> Callable[[str], str]:
    """`redact` with the secrets read once: for a batch of texts redacted together (a run
    stores thousands of texts a second, and reading the environment for each one was the largest
    cost of storing them)."""
    secrets = active_secrets()
    return lambda text: _redact(text, secrets)


def live_redactor() -> Callable[[str, bool], str]:
    """`redact` for text shown while it still arrives (a streaming answer), the secrets read once:
    with `arriving`, a key's first characters at the very end of the text (the rest of it not
    here yet) are hidden too, so a key streamed in pieces never shows, even in part."""
    secrets = active_secrets()

    def apply(text: str, arriving: bool) -> str:
        out = _redact(text, secrets)
        if not arriving:
            return out
        for secret in secrets:
            for k in range(min(len(secret) - 1, len(out)), _PARTIAL - 1, -1):
                if out.endswith(secret[:k]):
                    return out[:-k] + MARK
        return out

    return apply


_PARTIAL = 4
"""The fewest first characters of a key hidden at the end of arriving text (fewer say nothing)."""


def _redact(text: str, secrets: list[str]) -> str:
    if not text:
        return text
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MARK)
    if "earer" in text or "EARER" in text:
        text = _BEARER.sub(rf"\1 {MARK}", text)
    return text


def redact_optional(text: str | None) -> str | None:
    return None if text is None else redact(text)
