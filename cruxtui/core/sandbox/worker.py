"""The sandbox worker: a pre-started clean interpreter that forks one confined child per check.

Started by the pool (`python -I`, scrubbed environment) with `main`. Once, at start: it dies with
the pool's process and adopts orphans (subreaper), preloads the modules checks use, probes the
private uid (as root), enters a network namespace of its own and prepares Landlock and seccomp
(`cruxtui.core.sandbox.kernel`), then tells the pool what is in force. Per check: it forks the
child (`cruxtui.core.sandbox.child`), enforces the wall clock and the output cap, kills the
child's process group and every orphan, and empties the temp dir.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cruxtui.core.sandbox import kernel
from cruxtui.core.sandbox.child import run_child
from cruxtui.core.sandbox.limits import Limits, cpu_limit
from cruxtui.core.sandbox.wire import read_message, send

_PRELOAD = (
    "resource", "math", "cmath", "re", "string", "collections", "itertools", "functools", "operator",
    "copy", "heapq", "bisect", "random", "statistics", "datetime", "time", "json", "textwrap",
    "unicodedata", "decimal", "fractions", "array", "struct", "hashlib", "base64", "calendar",
    "typing", "enum", "dataclasses", "codecs", "socket", "select",
)  # fmt: skip
"""Imported by each worker once, before any check. Checks may run as a uid that cannot read the
interpreter's files (Python installed under /root, say): they can import only what is loaded."""


def _preload(importlib: Any) -> None:
    """The modules above and every text codec (`str.encode('shift_jis')` imports one lazily)."""
    import encodings
    import pkgutil

    for name in _PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    for module in pkgutil.iter_modules(encodings.__path__):
        with contextlib.suppress(Exception):  # mbcs/oem exist only on Windows
            importlib.import_module(f"encodings.{module.name}")


_SWEEP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def main(config: dict[str, Any]) -> None:
    """Serve checks read from stdin until EOF. Replies go to the original stdout pipe."""
    import gc
    import importlib
    import shutil
    import tempfile

    requests, replies = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    kernel.worker_setup()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _preload(importlib)
    uid: int | None = config.get("uid")
    if uid is not None and not can_switch_to(uid):
        uid = None  # e.g. root in a user namespace where that uid is not mapped
    plan = kernel.Plan(landlock_abi=kernel.landlock_abi())
    kernel.enter_network_namespace(plan)
    shm = "/dev/shm"  # tmpfs: creating and emptying the work dir costs microseconds, not ms
    folder = shm if os.access(shm, os.W_OK) else tempfile.gettempdir()
    _remove_stale_bases(folder)
    base = tempfile.mkdtemp(prefix=f"{_BASE_PREFIX}{os.getpid()}-", dir=folder)
    os.chmod(base, 0o711)
    workdir = os.path.join(base, "work")
    _fresh_workdir(workdir, uid)
    kernel.build_landlock(plan, workdir)
    kernel.build_seccomp(plan)
    kernel.probe(plan)
    report = plan.report() | {"uid": uid}
    send(replies, {"event": "ready", "report": report})
    jobs: dict[str, Callable[[Any], Any]] = {}
    gc.collect()
    gc.freeze()
    try:
        while True:
            request = read_message(requests)
            if request is None:
                return
            job = str(request["job"])
            try:
                func = jobs.get(job) or _resolve(job, importlib)
            except Exception as exc:  # noqa: BLE001 - reported to the caller as a programming error
                send(
                    replies, {"event": "error", "error": f"cannot load sandbox job {job!r}: {exc}"}
                )
                continue
            jobs[job] = func
            limits = Limits(**request["limits"])
            answer = _run_one(
                func, request["payload"], limits, workdir, uid, plan, replies, (requests, replies)
            )
            send(replies, answer)
    finally:
        shutil.rmtree(base, ignore_errors=True)


_BASE_PREFIX = "cruxtui-sandbox-"


def can_switch_to(uid: int) -> bool:
    """Whether a child may become `uid` here (a probe child tries; checks would crash otherwise)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - probe child
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        except BaseException:  # noqa: BLE001
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _remove_stale_bases(folder: str) -> None:
    """Remove the folders of workers that died without cleaning up (SIGKILLed with their parent)."""
    import shutil

    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(_BASE_PREFIX):
            continue
        pid = entry.name[len(_BASE_PREFIX) :].partition("-")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue  # alive (someone else's)


def _resolve(job: str, importlib: Any) -> Callable[[Any], Any]:
    module_name, _, func_name = job.partition(":")
    func = getattr(importlib.import_module(module_name), func_name)
    if not callable(func):
        raise TypeError(f"{job} is not callable")
    return func  # type: ignore[no-any-return]


def _run_one(
    func: Callable[[Any], Any],
    payload: Any,
    limits: Limits,
    workdir: str,
    uid: int | None,
    plan: kernel.Plan,
    replies: int,
    worker_fds: tuple[int, int],
) -> dict[str, Any]:
    """Fork one child for one check, supervise it, clean up everything it left. Returns the answer."""
    _fresh_workdir(workdir, uid)
    kernel.build_landlock(plan, workdir)  # a no-op unless the temp dir had to be made anew
    # With Landlock no write outside the temp dir is possible; without it, as root, sweep what
    # the private uid left in the world-writable folders.
    sweep = uid is not None and plan.ruleset_fd is None
    stamps = _folder_stamps() if sweep else {}
    result_r, result_w = os.pipe()
    output_r, output_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which always leaves through os._exit
        try:
            for fd in (result_r, output_r, *worker_fds):
                os.close(fd)
            run_child(func, payload, limits, workdir, result_w, output_w, uid, plan)
        finally:
            os._exit(70)
    start = time.monotonic()
    os.close(result_w)
    os.close(output_w)
    try:
        send(replies, {"event": "started", "pid": pid, "uid": uid})
        answer = _supervise(pid, result_r, output_r, limits, start)
    finally:
        os.close(result_r)
        os.close(output_r)
        _kill_everything(pid)
        _empty_dir(workdir)
        if sweep:
            assert uid is not None
            _sweep_files_of(uid, stamps)
    answer["elapsed"] = time.monotonic() - start
    return answer


def _fresh_workdir(workdir: str, uid: int | None) -> None:
    """The check's private, empty working dir (reused across checks, reset every time)."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(workdir, 0o700)
    os.chmod(workdir, 0o700)
    if uid is not None:
        os.chown(workdir, uid, uid)


def _empty_dir(folder: str) -> None:
    import shutil

    try:
        entries = list(os.scandir(folder))
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)  # odd permissions: start over next time
            return


def _supervise(
    pid: int, result_r: int, output_r: int, limits: Limits, start: float
) -> dict[str, Any]:
    deadline = start + limits.timeout
    slow_at: float | None = start + _SLOW_AFTER
    chunks: list[bytes] = []
    size = printed = 0
    open_fds = [result_r, output_r]
    while result_r in open_fds:
        now = time.monotonic()
        remaining = deadline - now
        if remaining <= 0:
            return {"status": "timeout", "error": f"no result within {limits.timeout:g} s"}
        if slow_at is not None and now >= slow_at:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PGRP, pid, _SLOW_NICENESS)
            slow_at = None
        wait = remaining if slow_at is None else min(remaining, slow_at - now)
        ready, _, _ = select.select(open_fds, [], [], wait)
        for fd in ready:
            data = os.read(fd, 1 << 16)
            if not data:
                open_fds.remove(fd)
            elif fd == output_r:
                printed += len(data)
                if printed > limits.output_bytes:
                    return {
                        "status": "output_limit",
                        "error": f"printed more than {limits.output_bytes:,} bytes",
                    }
            else:
                size += len(data)
                if size > limits.result_bytes:
                    return {
                        "status": "bad_result",
                        "error": f"result larger than {limits.result_bytes:,} bytes",
                    }
                chunks.append(data)
    status = _wait_exit(pid, deadline)
    if status is None:
        return {"status": "timeout", "error": f"did not finish within {limits.timeout:g} s"}
    if os.WIFSIGNALED(status):
        return _signal_answer(os.WTERMSIG(status), limits)
    if not chunks:
        code = os.waitstatus_to_exitcode(status)
        return {"status": "crashed", "error": f"the check exited (status {code}) without a result"}
    return {"status": "child", "result": b"".join(chunks).decode("utf-8", "replace")}


_SLOW_AFTER = 0.25
"""Seconds after which a check still running is moved to the lowest CPU priority. Its wall-clock
limit is unchanged; quick checks on the other workers keep the CPU while it waits that limit out
(an endless loop otherwise holds a core for the benchmark's full 3 s)."""

_SLOW_NICENESS = 19


def _wait_exit(pid: int, deadline: float) -> int | None:
    """Wait for the child to exit until `deadline`; its wait status, or None if still running."""
    pidfd = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(pid)
    try:
        delay = 0.0005
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if pidfd is not None:
                select.select([pidfd], [], [], remaining)
            else:
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, 0.05)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _signal_answer(signum: int, limits: Limits) -> dict[str, Any]:
    if signum == signal.SIGXCPU:
        return {"status": "timeout", "error": f"CPU time limit ({cpu_limit(limits)} s) exceeded"}
    if signum == getattr(signal, "SIGXFSZ", -1):
        return {
            "status": "crashed",
            "error": f"wrote a file larger than {limits.file_bytes:,} bytes",
        }
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    what = {"SIGSEGV": "segmentation fault", "SIGKILL": "killed", "SIGABRT": "aborted"}.get(
        name, "killed"
    )
    return {"status": "crashed", "error": f"{what} ({name})"}


def _kill_everything(pid: int) -> None:
    """Kill the check's process group, reap it, then kill and reap every orphan handed to us."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    for _ in range(1000):
        children = _children()
        if not children:
            break
        for child in children:
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(OSError):
                    kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _children() -> list[int]:
    """Our direct children (orphans of a check are re-parented to us as the subreaper)."""
    me = os.getpid()
    try:
        return [int(p) for p in Path(f"/proc/{me}/task/{me}/children").read_text().split()]
    except OSError:
        return []


def _folder_stamps() -> dict[str, int]:
    """Modification times of the world-writable folders (a new entry changes its folder's).

    Timestamps are coarse (a few ms), so a folder changed in the last 100 ms gets no stamp: it is
    listed after the check whatever happens."""
    stamps = {}
    now = time.time_ns()
    for folder in _SWEEP_DIRS:
        with contextlib.suppress(OSError):
            stamp = os.stat(folder).st_mtime_ns
            if now - stamp > 100_000_000:
                stamps[folder] = stamp
    return stamps


def _sweep_files_of(uid: int, stamps: dict[str, int]) -> None:
    """Remove whatever the check's private uid left in world-writable folders (only folders whose
    modification time moved during the check are listed: usually none)."""
    import shutil

    for folder in _SWEEP_DIRS:
        try:
            if os.stat(folder).st_mtime_ns == stamps.get(folder):
                continue
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue
