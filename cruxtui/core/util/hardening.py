"""The scorer's and runner's own process: nothing in it readable by a same-uid process.

- Non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`, Linux): another process of the same uid (a check
  running where no private uid is possible) can no longer open `/proc/PID/environ`, `mem`,
  `cmdline`... of this one, nor ptrace it; no core dump either.
- A key given as `--api-key KEY` is overwritten in the process's argument memory, which is what
  `/proc/PID/cmdline` and `ps` show to every uid. There is a window from the start of the
  process until this runs (the command line is public before any code of ours runs): the help
  says to prefer the environment or the config file.

Why ctypes: Python 3.11 has no prctl, and the argument memory is only reachable through the
addresses the kernel publishes in `/proc/self/stat` (`arg_start`, `arg_end`). The optional
`setproctitle` package would do the second by rewriting the whole title; this changes only the
key's bytes, so `ps` still shows the real command.
"""

from __future__ import annotations

import contextlib
import os
import sys

_PR_SET_DUMPABLE = 4


def make_non_dumpable() -> bool:
    """True if this process is now non-dumpable (always False off Linux)."""
    if sys.platform != "linux":
        return False
    with contextlib.suppress(OSError, AttributeError, ImportError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    return False


def is_dumpable() -> bool | None:
    """Whether this process is dumpable (None where that cannot be asked)."""
    if sys.platform != "linux":
        return None
    with contextlib.suppress(OSError, AttributeError, ImportError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE
    return None


def _argument_area() -> tuple[int, int] | None:
    """(arg_start, arg_end) of this process, from /proc/self/stat (fields 48 and 49)."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # the name may contain spaces and ')'
    try:
        return int(fields[45]), int(fields[46])
    except (IndexError, ValueError):
        return None


def hide_from_command_line(secret: str) -> bool:
    """Overwrite `secret` wherever it appears in this process's visible command line with `*`.

    True if the command line no longer holds it (or never did)."""
    if not secret or sys.platform != "linux":
        return False
    area = _argument_area()
    needle = os.fsencode(secret)
    if area is None or area[1] <= area[0]:
        return False
    start, end = area
    try:
        with open("/proc/self/cmdline", "rb") as fh:
            shown = fh.read()
        import ctypes

        memory = ctypes.string_at(start, end - start)
        if not shown or not memory.startswith(shown[: len(memory)]):
            return False  # moved (setproctitle, say): not ours to write
        at = memory.find(needle)
        while at != -1:
            ctypes.memmove(start + at, b"*" * len(needle), len(needle))
            at = memory.find(needle, at + len(needle))
        return needle not in ctypes.string_at(start, end - start)
    except (OSError, ValueError, ImportError):
        return False
