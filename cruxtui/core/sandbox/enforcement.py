"""What this machine really enforces on a check, found by trying (for `cruxtui doctor`).

The worker says which kernel mechanisms it put in force (`kernel.Plan.report`); this module
then runs a few real attempts in checks with the audit hook switched off, so that what is
reported as enforced is what the kernel alone refused: opening a socket and connecting to a
listener of ours, writing outside the temp dir, reading another process's `/proc` files, and
the limits as the check sees them. One more check with the hook on shows the second layer.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from typing import Any

from cruxtui.core.sandbox.limits import Limits
from cruxtui.core.sandbox.pool import Sandbox

_EXEC = "cruxtui.core.sandbox.jobs.checks:exec_call"

_PROBE = r"""
import os, resource
def attempt(what):
    try:
        what()
        return "allowed"
    except BaseException as exc:
        return f"refused ({type(exc).__name__}: {str(exc)[:80]})"
def connect(port):
    import socket
    s = socket.socket()
    s.settimeout(1)
    s.connect(("127.0.0.1", port))
    s.sendall(b"x")
def write(folder):
    with open(os.path.join(folder, "cruxtui-doctor-probe"), "w") as fh:
        fh.write("x")
def probe(port, folder, proc, home):
    limits = {}
    for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC", "RLIMIT_CORE"):
        limits[name] = list(resource.getrlimit(getattr(resource, name)))
    return {
        "uid": os.getuid(),
        "rlimits": limits,
        "connect": attempt(lambda: connect(port)),
        "write_outside": attempt(lambda: write(folder)),
        "read_proc": attempt(lambda: open(proc, "rb").read(1)),
        "read_home": attempt(lambda: os.listdir(home)),
    }
"""


def enforcement(sandbox: Sandbox | None = None) -> dict[str, Any]:
    """The `sandbox` object of `cruxtui doctor --json`: each mechanism named, or "none"."""
    own = sandbox is None
    box = sandbox or Sandbox(workers=1)
    try:
        return _enforcement(box)
    finally:
        if own:
            box.close()


def _enforcement(box: Sandbox) -> dict[str, Any]:
    report = box.enforcement()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0)
    folder = tempfile.mkdtemp(prefix="cruxtui-doctor-")
    os.chmod(folder, 0o777)  # world-writable, like /tmp: only the sandbox may stop the write
    try:
        home = os.path.expanduser("~")
        port = listener.getsockname()[1]
        call = f"probe({port}, {folder!r}, '/proc/{os.getpid()}/environ', {home!r})"
        outcome = box.run(_EXEC, {"code": _PROBE, "call": call}, Limits(python_guard=False))
        received = _accepted(listener)
        left = os.listdir(folder)
    finally:
        listener.close()
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)
    guard = box.run(_EXEC, {"code": "", "call": "__import__('os').system('true')"})
    seen: dict[str, Any] = outcome.value if outcome.ok and type(outcome.value) is dict else {}
    uid = report.get("uid")
    return {
        "network": report.get("network", "none"),
        "filesystem": report.get("filesystem", "none"),
        "seccomp": report.get("seccomp", "none"),
        "abstract_unix_sockets": report.get("abstract_unix_sockets", "none"),
        "signals": "private uid + " + str(report.get("signals"))
        if uid is not None and report.get("signals") != "none"
        else ("private uid" if uid is not None else report.get("signals", "none")),
        "uid": f"private uid {uid}" if uid is not None else "none (the user's own uid)",
        "rlimits": seen.get("rlimits", {}),
        "guard": "audit hook (policy in a closure)"
        if "blocked by the cruxtui sandbox" in guard.error
        else "none",
        "tried_without_guard": {
            "connect to 127.0.0.1": seen.get("connect", outcome.error or outcome.status),
            "listener received": "something" if received else "nothing",
            "write in a world-writable folder": seen.get("write_outside", "?")
            + ("" if not left else " (a file appeared)"),
            "read the scorer's /proc/PID/environ": seen.get("read_proc", "?"),
            "list the user's home folder": seen.get("read_home", "?"),
        },
        "process": {"pid": os.getpid(), "platform": sys.platform},
        "notes": report.get("notes", []),
    }


def _accepted(listener: socket.socket) -> bool:
    try:
        conn, _ = listener.accept()
    except (BlockingIOError, OSError):
        return False
    conn.close()
    return True
