"""Reading a user's file with every way it can fail said in words, once for all callers
(dataset, generations, case files, chains of thought, recorded runs, the config), each of which
wraps it in its own error.

Bounded: only regular files are read (a FIFO would block forever, `/dev/zero` never ends), and
at most `max_bytes` of them (a 2 GB file, sparse or not, is refused before it is read).
"""

from __future__ import annotations

import os
import stat

MAX_BYTES = 256 * 1024 * 1024
"""The largest user file read (the benchmark's dataset is ~0.3 MB, a generations file of 800
samples x 10 about 2 MB; a big run export maybe tens of MB)."""


class UnreadableFile(Exception):
    """The file could not be read as UTF-8 text; `problem` is the reason, without the path."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def read_bytes(
    path: str | os.PathLike[str], expected: str = "a text file", max_bytes: int = MAX_BYTES
) -> bytes:
    """The file's bytes; `expected` names what it should be, for the message about a folder."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait (it is refused just below).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UnreadableFile(path, "file not found") from None
    except IsADirectoryError:
        raise UnreadableFile(path, f"is a directory, expected {expected}") from None
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableFile(path, f"is a directory, expected {expected}")
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device or socket"
            raise UnreadableFile(path, f"is {kind}, not a regular file; expected {expected}")
        if info.st_size > max_bytes:
            raise UnreadableFile(path, _too_large(info.st_size, max_bytes))
        os.set_blocking(fd, True)
        chunks, got = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            got += len(chunk)
            if got > max_bytes:  # grew while we read it
                raise UnreadableFile(path, _too_large(got, max_bytes))
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def read_text(
    path: str | os.PathLike[str],
    expected: str = "a text file",
    encoding: str = "utf-8",
    max_bytes: int = MAX_BYTES,
) -> str:
    """The file's text; `expected` names what it should be, for the message about a folder."""
    data = read_bytes(path, expected, max_bytes)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UnreadableFile(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _too_large(size: int, limit: int) -> str:
    return (
        f"too large ({size / 2**20:,.0f} MiB; files of at most {limit / 2**20:,.0f} MiB are read)"
    )


def json_value_problem(exc: ValueError) -> str:
    """What a ValueError out of `json.loads` (not a syntax error) means, in words."""
    if "integer string conversion" in str(exc):
        return "a number with more digits than Python reads (4,300)"
    return str(exc)[:200]
