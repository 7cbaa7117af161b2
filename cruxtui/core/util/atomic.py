"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never a torn one.

Private files (the run store's neighbours, caches, config) keep the temp file's mode, 0600.
Files meant to be shared (scored files, case files, galleries, exports) get the mode any new
file would get under the user's umask (`shared=True`), and their text is redacted first
(`write_shared_text`): a gallery copied to a web server must be readable there, and must not
carry a key.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path

from cruxtui.core.util.redact import redact


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, shared: bool = False) -> None:
    """Write `data` to a temp file in the same folder, fsync it, then rename it over `path`.

    `shared`: the file gets 0666 less the umask (as `open()` would make it), not 0600."""
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        if shared:
            os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(dest.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_shared_text(path: str | os.PathLike[str], text: str) -> None:
    """A file meant to be shared: keys redacted, mode from the umask, written atomically."""
    atomic_write_bytes(path, redact(text).encode("utf-8"), shared=True)


_umask_lock = threading.Lock()


def current_umask() -> int:
    """The process's umask (read from /proc where possible: setting it to ask is racy)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        with open("/proc/self/status") as fh:
            line = next(ln for ln in fh if ln.startswith("Umask:"))
        return int(line.split()[1], 8)
    with _umask_lock:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask
