"""Isolated execution of untrusted code: clean pre-started workers that fork one child per check.

Why this shape: starting a fresh interpreter per check (the benchmark's design) costs ~15 ms and
gives no isolation beyond a process. Here each worker is started once with a scrubbed environment
(`python -I`, env = PATH and locale only), imports what jobs need, and then forks a throw-away child
for every check. The child, before it runs any untrusted code:

- leaves the worker's session (`setsid`), so it and everything it starts form one killable group;
- gets resource limits: address space (memory), CPU seconds, file size, no new processes, no core;
- works in a fresh temp dir, with stdin at /dev/null and stdout/stderr piped to the worker, which
  counts bytes and kills the child past `Limits.output_bytes`;
- on Linux as root, drops to a uid of its own (so it cannot signal the worker or other checks, and
  cannot write root-owned files), and dies with its worker (PDEATHSIG);
- installs a Python audit hook that refuses process creation, signals, ctypes, sockets, rlimit
  changes and writes outside the temp dir (a second layer; the kernel limits are the first).

The result travels back over a pipe as tagged JSON (`cruxtui.core.util.values`), never pickle, and is
decoded with exact type checks. The worker enforces the wall clock, kills the child's process group,
and (Linux, as a child subreaper) every orphaned descendant, then removes the temp dir. If a worker
itself dies or stops answering, the parent kills what is left and starts a new one.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from itertools import count
from pathlib import Path
from typing import Any

from cruxtui.core.util import values

STATUSES = ("ok", "exception", "timeout", "memory", "crashed", "output_limit", "bad_result")

SANDBOX_UID_BASE = 2_000_000_000
"""First uid used for checks when running as root on Linux (one unused uid per worker)."""

_WORKER_GRACE = 5.0
"""Seconds the parent waits beyond the check's own timeout before it declares the worker hung."""

_HEADER = struct.Struct(">I")


class SandboxError(RuntimeError):
    """The sandbox cannot be used at all (e.g. under `python -O`) or was given an unknown job."""


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


@dataclass
class Outcome:
    """What one check came to. `value` is plain builtin data when `status == "ok"`, else None."""

    status: str
    value: Any
    error: str
    elapsed: float

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# --------------------------------------------------------------------------------------------
# Built-in jobs (run inside the child)
# --------------------------------------------------------------------------------------------


def exec_call(payload: dict[str, Any]) -> Any:
    """Exec `payload["code"]` in a fresh namespace, then evaluate `payload["call"]` there.

    Compiled with `dont_inherit=True` so this module's `from __future__` flags never leak into
    the benchmark's code.
    """
    namespace: dict[str, Any] = {}
    exec(compile(payload["code"], "<code>", "exec", dont_inherit=True), namespace)
    return eval(compile(payload["call"], "<call>", "eval", dont_inherit=True), namespace)


# --------------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------------

_uid_counter = count()


def _check_not_optimized() -> None:
    if sys.flags.optimize:
        raise SandboxError(
            "cruxtui refuses to check predictions under `python -O`: asserts vanish, so the "
            "benchmark's `assert` checks would pass everything"
        )


def _clean_env() -> dict[str, str]:
    """The worker's whole environment: no API keys, tokens or user settings get through."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def _sandbox_uid() -> int | None:
    """A uid of its own for the next worker's checks, when we may switch to one (root on Linux)."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return None
    return SANDBOX_UID_BASE + (os.getpid() % 20_000) * 50 + next(_uid_counter) % 50


class _WorkerLost(Exception):
    def __init__(self, status: str, error: str) -> None:
        super().__init__(error)
        self.status = status
        self.error = error


class _Worker:
    """One pre-started worker process and the pipes to it (used by one thread at a time)."""

    def __init__(self) -> None:
        self.uid = _sandbox_uid()
        """The private uid its checks run as (None: not root on Linux, or the switch is not
        allowed here); confirmed by the worker with every check."""
        config = {"path": [p for p in sys.path if p], "uid": self.uid}
        boot = (
            "import sys, json; cfg = json.loads(sys.argv[1]); sys.path[:] = cfg['path'];"
            "from cruxtui.core.sandbox.pool import _worker_main; _worker_main(cfg)"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", boot, json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_clean_env(),
            cwd="/",
            close_fds=True,
            start_new_session=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buffer = bytearray()  # grows in place: a 64 MB result must not be copied per read

    def alive(self) -> bool:
        return self.proc.poll() is None

    def check(self, request: bytes, limits: Limits) -> dict[str, Any]:
        """Send one check, wait for its answer; raises `_WorkerLost` if the worker dies or hangs."""
        try:
            _write_all(self._in, _HEADER.pack(len(request)) + request)
        except OSError:
            raise _WorkerLost("crashed", "the sandbox worker had died") from None
        child: int | None = None
        try:
            started = self._read(time.monotonic() + 30.0)
            if started.get("event") == "error":
                raise SandboxError(str(started.get("error")))
            child = int(started["pid"])
            self.uid = started.get("uid")
            return self._read(time.monotonic() + limits.timeout + _WORKER_GRACE)
        except _WorkerLost:
            self.kill(child)
            raise

    def _read(self, deadline: float) -> dict[str, Any]:
        while True:
            if len(self._buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(self._buffer)
                if len(self._buffer) >= _HEADER.size + size:
                    blob = bytes(self._buffer[_HEADER.size : _HEADER.size + size])
                    del self._buffer[: _HEADER.size + size]
                    return json.loads(blob)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _WorkerLost("timeout", "the sandbox worker stopped answering")
            ready, _, _ = select.select([self._out], [], [], remaining)
            if ready:
                data = os.read(self._out, 1 << 20)
                if not data:
                    raise _WorkerLost("crashed", "the sandbox worker was killed during the check")
                self._buffer += data

    def kill(self, child: int | None = None) -> None:
        """Kill the worker and, if known, the check's process group it was supervising."""
        if child is not None:
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(OSError):
                    kill(child, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]

    def close(self) -> None:
        """Ask the worker to finish (EOF on its request pipe); kill it if it does not."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        with contextlib.suppress(OSError):
            self.proc.stdout.close()  # type: ignore[union-attr]


class Sandbox:
    """A pool of sandbox workers. Thread-safe; a dead or hung worker is replaced and work goes on.

    >>> with Sandbox() as box:
    ...     box.run("cruxtui.core.sandbox.pool:exec_call", {"code": "def f(x): return x*2", "call": "f(2)"})
    """

    def __init__(self, workers: int | None = None, limits: Limits = Limits()) -> None:  # noqa: B008
        _check_not_optimized()
        self.workers = max(1, workers if workers is not None else _default_workers())
        self.limits = limits
        self._idle: queue.Queue[_Worker | None] = queue.Queue()
        self._lock = threading.Lock()
        self._all: list[_Worker] = []
        self._closed = False
        self._executor: ThreadPoolExecutor | None = None
        for _ in range(self.workers):
            self._idle.put(self._spawn())

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers (for tests and diagnostics)."""
        with self._lock:
            return [w.proc.pid for w in self._all]

    @property
    def uids(self) -> list[int]:
        """Private uids the workers' checks run as (empty when no uid switch is possible)."""
        with self._lock:
            return [w.uid for w in self._all if w.uid is not None]

    def _spawn(self) -> _Worker:
        worker = _Worker()
        with self._lock:
            self._all.append(worker)
        return worker

    def _forget(self, worker: _Worker) -> None:
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)

    def run(self, job: str, payload: dict[str, Any], limits: Limits | None = None) -> Outcome:
        """Run `job` ("module:function") on `payload` (plain data) in a fresh isolated child."""
        limits = limits or self.limits
        try:
            request = json.dumps(
                {"job": job, "payload": values.encode(payload), "limits": asdict(limits)},
                separators=(",", ":"),
            ).encode()
        except values.NotPlainData as exc:
            raise TypeError(f"sandbox payload must be plain data: {exc}") from None
        if self._closed:
            raise SandboxError("the sandbox is closed")
        worker = self._idle.get()
        if worker is None or self._closed:
            self._idle.put(None)
            raise SandboxError("the sandbox is closed")
        start = time.monotonic()
        try:
            if not worker.alive():
                self._forget(worker)
                worker = self._spawn()
            answer = worker.check(request, limits)
        except _WorkerLost as lost:
            self._forget(worker)
            worker = self._spawn()
            return Outcome(lost.status, None, lost.error, time.monotonic() - start)
        finally:
            self._idle.put(worker)
        return _outcome_from(answer, time.monotonic() - start)

    def map(
        self,
        items: Iterable[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], Limits | None]],
        limits: Limits | None = None,
    ) -> Iterator[Outcome]:
        """Run many checks across the workers; outcomes come back in the order of `items`.

        An item may carry its own limits as a third element (None: use `limits`)."""
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="sandbox")
        executor = self._executor
        work = iter(items)
        pending: deque[Future[Outcome]] = deque()  # submitted, in order, not yet yielded
        running: set[Future[Outcome]] = set()  # submitted and not finished
        window = self.workers * 4
        try:
            while True:
                # Keep every worker busy even while the oldest check (say a 3 s timeout) holds up
                # the in-order output: only unfinished checks count against the window.
                while len(running) < window:
                    item = next(work, None)
                    if item is None:
                        break
                    own = item[2] if len(item) > 2 else None  # type: ignore[misc]
                    future = executor.submit(self.run, item[0], item[1], own or limits)
                    pending.append(future)
                    running.add(future)
                if not pending:
                    return
                if pending[0].done():
                    running.discard(pending[0])
                    yield pending.popleft().result()
                    continue
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                running -= finished
        finally:
            for future in pending:
                future.cancel()

    def close(self) -> None:
        """Stop every worker (each removes its temp files on the way out)."""
        self._closed = True
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            workers, self._all = list(self._all), []
        for worker in workers:
            worker.close()
        self._idle.put(None)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _outcome_from(answer: dict[str, Any], elapsed: float) -> Outcome:
    """Turn the worker's answer (and the child's untrusted result inside it) into an Outcome."""
    status = answer.get("status")
    error = str(answer.get("error") or "")
    if status != "child":
        return Outcome(str(status), None, error, elapsed)
    try:
        result = json.loads(answer["result"])
    except (ValueError, RecursionError, TypeError):
        return Outcome("bad_result", None, "the check sent back a malformed result", elapsed)
    if type(result) is not dict or result.get("status") not in STATUSES:
        return Outcome("bad_result", None, "the check sent back a malformed result", elapsed)
    status = result["status"]
    error = result.get("error")
    error = error[:2000] if type(error) is str else ""
    if status != "ok":
        return Outcome(status, None, error, elapsed)
    try:
        return Outcome("ok", values.decode(result.get("value")), "", elapsed)
    except values.NotPlainData as exc:
        return Outcome("bad_result", None, str(exc), elapsed)


_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """A lazily created shared sandbox, closed at interpreter exit."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            import atexit

            _default = Sandbox()
            atexit.register(_default.close)
        return _default


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# --------------------------------------------------------------------------------------------
# Worker side (runs in the pre-started worker process)
# --------------------------------------------------------------------------------------------

_PRELOAD = (
    "resource", "math", "cmath", "re", "string", "collections", "itertools", "functools", "operator",
    "copy", "heapq", "bisect", "random", "statistics", "datetime", "time", "json", "textwrap",
    "unicodedata", "decimal", "fractions", "array", "struct", "hashlib", "base64", "calendar",
    "typing", "enum", "dataclasses", "codecs",
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


_RESULT_FD = 3
_SWEEP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl (Linux), looked up once in the worker; the forked children inherit it."""
    if sys.platform != "linux":
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError, ImportError):
        return None


_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38


def _worker_main(config: dict[str, Any]) -> None:
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
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _preload(importlib)
    uid: int | None = config.get("uid")
    if uid is not None and not _can_switch_to(uid):
        uid = None  # e.g. root in a user namespace where that uid is not mapped
    shm = "/dev/shm"  # tmpfs: creating and emptying the work dir costs microseconds, not ms
    folder = shm if os.access(shm, os.W_OK) else tempfile.gettempdir()
    _remove_stale_bases(folder)
    base = tempfile.mkdtemp(prefix=f"{_BASE_PREFIX}{os.getpid()}-", dir=folder)
    os.chmod(base, 0o711)
    workdir = os.path.join(base, "work")
    jobs: dict[str, Callable[[Any], Any]] = {}
    gc.collect()
    gc.freeze()
    try:
        while True:
            request = _read_message(requests)
            if request is None:
                return
            job = str(request["job"])
            try:
                func = jobs.get(job) or _resolve(job, importlib)
            except Exception as exc:  # noqa: BLE001 - reported to the caller as a programming error
                _send(
                    replies, {"event": "error", "error": f"cannot load sandbox job {job!r}: {exc}"}
                )
                continue
            jobs[job] = func
            limits = Limits(**request["limits"])
            answer = _run_one(
                func, request["payload"], limits, workdir, uid, replies, (requests, replies)
            )
            _send(replies, answer)
    finally:
        shutil.rmtree(base, ignore_errors=True)


_BASE_PREFIX = "cruxtui-sandbox-"


def _can_switch_to(uid: int) -> bool:
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


def _read_message(fd: int) -> dict[str, Any] | None:
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    body = _read_exact(fd, size)
    return None if body is None else json.loads(body)


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        data = os.read(fd, min(size - got, 1 << 20))
        if not data:
            return None
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def _send(fd: int, message: dict[str, Any]) -> None:
    blob = json.dumps(message, separators=(",", ":")).encode()
    _write_all(fd, _HEADER.pack(len(blob)) + blob)


def _run_one(
    func: Callable[[Any], Any],
    payload: Any,
    limits: Limits,
    workdir: str,
    uid: int | None,
    replies: int,
    worker_fds: tuple[int, int],
) -> dict[str, Any]:
    """Fork one child for one check, supervise it, clean up everything it left. Returns the answer."""
    _fresh_workdir(workdir, uid)
    stamps = _folder_stamps() if uid is not None else {}
    result_r, result_w = os.pipe()
    output_r, output_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which always leaves through os._exit
        try:
            for fd in (result_r, output_r, *worker_fds):
                os.close(fd)
            _child(func, payload, limits, workdir, result_w, output_w, uid)
        finally:
            os._exit(70)
    start = time.monotonic()
    os.close(result_w)
    os.close(output_w)
    try:
        _send(replies, {"event": "started", "pid": pid, "uid": uid})
        answer = _supervise(pid, result_r, output_r, limits, start)
    finally:
        os.close(result_r)
        os.close(output_r)
        _kill_everything(pid)
        _empty_dir(workdir)
        if uid is not None:
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
    slow_at = start + _SLOW_AFTER
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


def _default_workers() -> int:
    """Twice the cores (at most 8): while a slow check waits out its limit at low priority, the
    other workers keep every core busy with quick checks."""
    return min(8, 2 * (os.cpu_count() or 1))


def _wait_exit(pid: int, deadline: float) -> int | None:
    """Wait for the child to exit until `deadline`; its wait status, or None if still running."""
    pidfd = None
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(pid)  # type: ignore[attr-defined]
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
        return {"status": "timeout", "error": f"CPU time limit ({_cpu_limit(limits)} s) exceeded"}
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


def _cpu_limit(limits: Limits) -> int:
    return limits.cpu_seconds or math.ceil(limits.timeout) + 1


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


# --------------------------------------------------------------------------------------------
# Child side (runs in the forked child; leaves only through os._exit)
# --------------------------------------------------------------------------------------------


def _child(
    func: Callable[[Any], Any],
    payload: Any,
    limits: Limits,
    workdir: str,
    result_w: int,
    output_w: int,
    uid: int | None,
) -> None:  # pragma: no cover - child process
    message: dict[str, Any]
    try:
        _confine(limits, workdir, result_w, output_w, uid)
        argument = values.decode(payload)
    except BaseException as exc:  # noqa: BLE001
        _report({"status": "crashed", "error": f"sandbox set-up failed: {_describe(exc)}"})
    try:
        if limits.python_guard:
            sys.addaudithook(_make_guard(workdir))
        value = func(argument)
        try:
            message = {"status": "ok", "value": values.encode(value)}
        except values.NotPlainData as exc:
            message = {"status": "bad_result", "error": str(exc)}
    except MemoryError:
        message = {"status": "memory", "error": f"out of memory (limit {limits.memory_mb} MiB)"}
    except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: all are failures
        message = {"status": "exception", "error": _describe(exc)}
    _report(message)


def _report(message: dict[str, Any]) -> None:  # pragma: no cover - child process
    try:
        blob = json.dumps(message, separators=(",", ":")).encode()
    except MemoryError:
        blob = b'{"status":"memory","error":"out of memory while sending the result"}'
    except BaseException:  # noqa: BLE001
        blob = b'{"status":"bad_result","error":"the result could not be encoded"}'
    with contextlib.suppress(BaseException):
        _write_all(_RESULT_FD, blob)
    os._exit(0)


def _describe(exc: BaseException) -> str:
    name = type(exc).__name__
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = ""
    text = text[:500]
    return f"{name}: {text}" if text else name


def _confine(limits: Limits, workdir: str, result_w: int, output_w: int, uid: int | None) -> None:
    """Everything the kernel enforces on the child, set up before any untrusted code runs."""
    import resource

    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(output_w, 1)
    os.dup2(output_w, 2)
    os.dup2(result_w, _RESULT_FD)
    os.closerange(_RESULT_FD + 1, 1 << 16)
    os.chdir(workdir)
    os.environ["HOME"] = workdir
    os.environ["TMPDIR"] = workdir
    memory = limits.memory_mb * 1024 * 1024
    cpu = _cpu_limit(limits)
    for name, soft, hard in (
        ("RLIMIT_AS", memory, memory),
        ("RLIMIT_CPU", cpu, cpu + 1),
        ("RLIMIT_FSIZE", limits.file_bytes, limits.file_bytes),
        ("RLIMIT_CORE", 0, 0),
        ("RLIMIT_NPROC", 1, 1),
    ):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            resource.setrlimit(getattr(resource, name), (soft, hard))
    prctl = _prctl()
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


_BLOCKED_EVENTS = (
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
    "os.startfile",
    "subprocess.",
    "signal.pthread_kill",
    "ctypes.",
    "socket.",
    "resource.",
    "sys.addaudithook",
    "sys.remote_exec",
    "winreg.",
    "webbrowser.",
)
_PATH_EVENTS = {
    "os.remove": 1,
    "os.rmdir": 1,
    "os.rename": 2,
    "os.mkdir": 1,
    "os.symlink": 2,
    "os.link": 2,
    "os.chmod": 1,
    "os.chown": 1,
    "os.truncate": 1,
    "os.utime": 1,
    "os.chflags": 1,
    "os.lchflags": 1,
    "os.setxattr": 1,
    "os.removexattr": 1,
    "shutil.rmtree": 1,
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _make_guard(workdir: str) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit-hook policy: no processes, signals, ctypes or sockets; writes only in `workdir`."""
    realpath = os.path.realpath
    isdir = os.path.isdir
    fsdecode = os.fsdecode
    root = realpath(workdir)
    inside_prefix = root + os.sep

    def inside(path: Any) -> bool:
        if isinstance(path, int):
            return True  # an fd the check already holds
        full = realpath(fsdecode(path))
        return full == root or full.startswith(inside_prefix)

    def refuse(event: str) -> None:
        raise PermissionError(f"blocked by the cruxtui sandbox: {event}")

    def guard(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if path is None or inside(path):
                return
            if writes or isdir(fsdecode(path)):
                refuse(f"open {fsdecode(path)!r} for writing" if writes else "opening a folder")
        elif event in _PATH_EVENTS:
            for path in args[: _PATH_EVENTS[event]]:
                if path is not None and not inside(path):
                    refuse(f"{event} {fsdecode(path) if not isinstance(path, int) else path!r}")
        elif event.startswith(_BLOCKED_EVENTS):
            refuse(event)

    return guard
