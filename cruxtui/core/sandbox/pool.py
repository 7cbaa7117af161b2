"""Isolated execution of untrusted code, parent side: a pool of pre-started sandbox workers.

Why this shape: starting a fresh interpreter per check (the benchmark's design) costs ~15 ms and
gives no isolation beyond a process. Here each worker (`cruxtui.core.sandbox.worker`) is started
once with a scrubbed environment (`python -I`, env = PATH and locale only), imports what jobs
need, and then forks a throw-away child (`cruxtui.core.sandbox.child`) for every check. The child,
before it runs any untrusted code, leaves the worker's session, gets resource limits, a fresh
temp dir, a private uid (as root on Linux), the kernel's confinement where the kernel offers it
(`cruxtui.core.sandbox.kernel`: Landlock, seccomp, the worker's own network namespace) and an
audit hook (`cruxtui.core.sandbox.guard`, a second layer). docs/sandbox.md has the threat model.

The result travels back over a pipe as tagged JSON (`cruxtui.core.util.values`), never pickle,
and is decoded here with exact type checks. If a worker itself dies or stops answering, the pool
kills what is left and starts a new one.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from itertools import count
from typing import Any

from cruxtui.core.sandbox.limits import STATUSES, Limits
from cruxtui.core.sandbox.wire import HEADER, write_all
from cruxtui.core.util import values

__all__ = [
    "SANDBOX_UID_BASE",
    "STATUSES",
    "Limits",
    "Outcome",
    "Sandbox",
    "SandboxError",
    "default_sandbox",
]

SANDBOX_UID_BASE = 2_000_000_000
"""First uid used for checks when running as root on Linux (one unused uid per worker)."""

_WORKER_GRACE = 5.0
"""Seconds the parent waits beyond the check's own timeout before it declares the worker hung."""


class SandboxError(RuntimeError):
    """The sandbox cannot be used at all (e.g. under `python -O`) or was given an unknown job."""


@dataclass
class Outcome:
    """What one check came to. `value` is plain builtin data when `status == "ok"`, else None."""

    status: str
    value: Any
    error: str
    elapsed: float
    size: int = 0
    """Bytes of the child's encoded result (a measure of what `value` costs to keep)."""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


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
            "from cruxtui.core.sandbox.worker import main; main(cfg)"
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
        self.report: dict[str, Any] | None = None
        """What the kernel enforces on this worker's checks, as the worker said when it started."""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def check(self, request: bytes, limits: Limits) -> dict[str, Any]:
        """Send one check, wait for its answer; raises `_WorkerLost` if the worker dies or hangs."""
        try:
            write_all(self._in, HEADER.pack(len(request)) + request)
        except OSError:
            raise _WorkerLost("crashed", "the sandbox worker had died") from None
        child: int | None = None
        try:
            if self.report is None:
                ready = self._read(time.monotonic() + 60.0)
                self.report = ready.get("report") if type(ready.get("report")) is dict else {}
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
            if len(self._buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self._buffer)
                if len(self._buffer) >= HEADER.size + size:
                    blob = bytes(self._buffer[HEADER.size : HEADER.size + size])
                    del self._buffer[: HEADER.size + size]
                    message: dict[str, Any] = json.loads(blob)
                    return message
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
    ...     box.run("cruxtui.core.sandbox.jobs.checks:exec_call", {"code": "def f(x): return x*2", "call": "f(2)"})
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

    def enforcement(self) -> dict[str, Any]:
        """What the kernel enforces on checks here (network, filesystem, uid, ...), as a worker
        reported it when it started; runs one trivial check if no worker has reported yet."""
        with self._lock:
            reports = [w.report for w in self._all if w.report is not None]
        if not reports:
            self.run("cruxtui.core.sandbox.jobs.checks:exec_call", {"code": "", "call": "0"})
            with self._lock:
                reports = [w.report for w in self._all if w.report is not None]
        return dict(reports[0]) if reports else {}

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
        executor = self._pool()
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
                    own = item[2] if len(item) > 2 else None
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

    def map_unordered(
        self,
        items: Iterable[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], Limits | None]],
        limits: Limits | None = None,
    ) -> Iterator[tuple[int, Outcome]]:
        """Like `map`, but (position in `items`, outcome) pairs as checks finish: nothing waits
        behind a slow check, so at most the window's outcomes are ever held."""
        executor = self._pool()
        work = enumerate(items)
        running: dict[Future[Outcome], int] = {}
        window = self.workers * 4
        try:
            while True:
                while len(running) < window:
                    entry = next(work, None)
                    if entry is None:
                        break
                    position, item = entry
                    own = item[2] if len(item) > 2 else None
                    running[executor.submit(self.run, item[0], item[1], own or limits)] = position
                if not running:
                    return
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    yield running.pop(future), future.result()
        finally:
            for future in running:
                future.cancel()

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="sandbox")
        return self._executor

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
    said = result.get("error")
    error = said[:2000] if type(said) is str else ""
    if status != "ok":
        return Outcome(status, None, error, elapsed)
    try:
        return Outcome("ok", values.decode(result.get("value")), "", elapsed, len(answer["result"]))
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


def _default_workers() -> int:
    """Twice the cores (at most 8): while a slow check waits out its limit at low priority, the
    other workers keep every core busy with quick checks."""
    return min(8, 2 * (os.cpu_count() or 1))
