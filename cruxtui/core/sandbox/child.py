"""The check's own process: forked by the worker, confined, runs one job, leaves via os._exit.

Set-up order matters: session and fds, temp dir, rlimits, the private uid (as root), then the
kernel's confinement (`kernel.confine_child`, which must follow the uid switch), then ctypes is
unloaded, the payload decoded and the audit hook installed; only then does untrusted code run.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from cruxtui.core.sandbox import kernel
from cruxtui.core.sandbox.guard import make_guard
from cruxtui.core.sandbox.limits import Limits, cpu_limit
from cruxtui.core.sandbox.wire import write_all
from cruxtui.core.util import values

RESULT_FD = 3
"""The child's result pipe; stdout/stderr go to a separate pipe the worker counts and discards."""


def run_child(
    func: Callable[[Any], Any],
    payload: Any,
    limits: Limits,
    workdir: str,
    result_w: int,
    output_w: int,
    uid: int | None,
    plan: kernel.Plan,
) -> None:  # pragma: no cover - child process
    message: dict[str, Any]
    try:
        _confine(limits, workdir, result_w, output_w, uid, plan)
        argument = values.decode(payload)
    except BaseException as exc:  # noqa: BLE001
        _report({"status": "crashed", "error": f"sandbox set-up failed: {describe(exc)}"})
    try:
        if limits.python_guard:
            sys.addaudithook(make_guard(workdir))
        value = func(argument)
        try:
            message = {"status": "ok", "value": values.encode(value)}
        except values.NotPlainData as exc:
            message = {"status": "bad_result", "error": str(exc)}
    except MemoryError:
        message = {"status": "memory", "error": f"out of memory (limit {limits.memory_mb} MiB)"}
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: all are failures
        message = {"status": "exception", "error": describe(exc)}
    _report(message)


def _report(message: dict[str, Any]) -> None:  # pragma: no cover - child process
    try:
        blob = json.dumps(message, separators=(",", ":")).encode()
    except MemoryError:
        blob = b'{"status":"memory","error":"out of memory while sending the result"}'
    except BaseException:  # noqa: BLE001
        blob = b'{"status":"bad_result","error":"the result could not be encoded"}'
    with contextlib.suppress(BaseException):
        write_all(RESULT_FD, blob)
    os._exit(0)


def describe(exc: BaseException) -> str:
    name = type(exc).__name__
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = ""
    text = text[:500]
    return f"{name}: {text}" if text else name


def _confine(
    limits: Limits,
    workdir: str,
    result_w: int,
    output_w: int,
    uid: int | None,
    plan: kernel.Plan,
) -> None:  # pragma: no cover - child process
    """Everything the kernel enforces on the child, set up before any untrusted code runs."""
    import resource

    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output_w, 1)
    os.dup2(output_w, 2)
    os.dup2(result_w, RESULT_FD)
    keep = plan.ruleset_fd
    if keep is not None and keep > RESULT_FD:
        os.closerange(RESULT_FD + 1, keep)
        os.closerange(keep + 1, 1 << 16)
    else:
        os.closerange(RESULT_FD + 1, 1 << 16)
    os.chdir(workdir)
    os.environ["HOME"] = workdir
    os.environ["TMPDIR"] = workdir
    memory = limits.memory_mb * 1024 * 1024
    cpu = cpu_limit(limits)
    for name, soft, hard in (
        ("RLIMIT_AS", memory, memory),
        ("RLIMIT_CPU", cpu, cpu + 1),
        ("RLIMIT_FSIZE", limits.file_bytes, limits.file_bytes),
        ("RLIMIT_CORE", 0, 0),
        ("RLIMIT_NPROC", 1, 1),
    ):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            resource.setrlimit(getattr(resource, name), (soft, hard))
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    kernel.confine_child(plan)
    kernel.forget(plan)
