"""The framing on the pipes between the pool and its workers: a 4-byte length, then JSON.

JSON, never pickle: the worker's answer carries the child's untrusted result as text, which the
parent decodes with exact type checks (`cruxtui.core.util.values`).
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">I")


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def send(fd: int, message: dict[str, Any]) -> None:
    blob = json.dumps(message, separators=(",", ":")).encode()
    write_all(fd, HEADER.pack(len(blob)) + blob)


def read_exact(fd: int, size: int) -> bytes | None:
    """Exactly `size` bytes, or None at end of file."""
    chunks, got = [], 0
    while got < size:
        data = os.read(fd, min(size - got, 1 << 20))
        if not data:
            return None
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def read_message(fd: int) -> dict[str, Any] | None:
    """One framed message, or None when the other side has closed the pipe."""
    header = read_exact(fd, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    body = read_exact(fd, size)
    if body is None:
        return None
    message: dict[str, Any] = json.loads(body)
    return message
