"""Reading a user's text file with every way it can fail said in words, once for all callers
(dataset, generations, case files, chains of thought), each of which wraps it in its own error."""

from __future__ import annotations

import os
from pathlib import Path


class UnreadableFile(Exception):
    """The file could not be read as UTF-8 text; `problem` is the reason, without the path."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def read_text(
    path: str | os.PathLike[str], expected: str = "a text file", encoding: str = "utf-8"
) -> str:
    """The file's text; `expected` names what it should be, for the message about a folder."""
    try:
        return Path(path).read_text(encoding=encoding)
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(path, exc, expected) from None


def read_bytes(path: str | os.PathLike[str], expected: str = "a file") -> bytes:
    """The file's bytes (for callers that fingerprint exactly what is on disk), same messages."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise unreadable(path, exc, expected) from None


def unreadable(
    path: str | os.PathLike[str], exc: OSError | UnicodeDecodeError, expected: str
) -> UnreadableFile:
    """The `UnreadableFile` saying in words why reading `path` raised `exc`."""
    if isinstance(exc, UnicodeDecodeError):
        return UnreadableFile(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    if isinstance(exc, FileNotFoundError):
        return UnreadableFile(path, "file not found")
    if isinstance(exc, IsADirectoryError):
        return UnreadableFile(path, f"is a directory, expected {expected}")
    return UnreadableFile(path, exc.strerror or str(exc))
