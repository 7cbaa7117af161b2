"""What a check may use, shared by the pool (parent side) and the worker that enforces it."""

from __future__ import annotations

import math
from dataclasses import dataclass

STATUSES = ("ok", "exception", "timeout", "memory", "crashed", "output_limit", "bad_result")
"""Every way a check can end, as the child, the worker and the pool report it."""


@dataclass(frozen=True)
class Limits:
    """Per-check limits. Defaults follow the benchmark: 3 s wall clock per check."""

    timeout: float = 3.0
    """Wall-clock seconds per check."""
    memory_mb: int = 1024
    """Address-space limit (RLIMIT_AS) in MiB."""
    output_bytes: int = 65536
    """stdout + stderr bytes the child may print (discarded); more ends the check as `output_limit`."""
    cpu_seconds: int | None = None
    """CPU-time limit (RLIMIT_CPU); default: the timeout rounded up, plus one second."""
    file_bytes: int = 16 * 1024 * 1024
    """Largest file the child may write (RLIMIT_FSIZE)."""
    result_bytes: int = 64 * 1024 * 1024
    """Largest encoded result accepted from the child (`bad_result` beyond)."""
    python_guard: bool = True
    """Install the audit-hook policy. Only tests turn it off, to prove the kernel limits alone hold."""


def cpu_limit(limits: Limits) -> int:
    """The RLIMIT_CPU soft limit in seconds a check gets."""
    return limits.cpu_seconds or math.ceil(limits.timeout) + 1
