"""A run's per-round work (reading, scoring and committing answers: `settle`) in a process of
its own.

A bulk run against a fast server is bound by the client's CPU, and Python runs one thread at a
time: extracting and scoring the answers in a worker thread takes that time from the event loop
that keeps the requests going (measured in `benchmarks/bench_runner.py` at concurrency 64: the
runner at 88% of a bare client with the work in a thread, at the bare client's speed without
it). That work is text in, verdicts and rows of the run's SQLite file out (any process can write
that file), so where it runs changes nothing but which core does it. `Offload.call(fn, *args)`
runs `fn(*args)` in one long-lived helper process and returns its result or raises its
exception.

Never a new way to fail: a call that cannot be pickled (a scorer a caller made up) or that the
helper cannot import, and any call while the helper cannot start or after it died mid-call, runs
in the calling thread instead, and a dead helper is started afresh on the next call. The helper
ignores Ctrl-C (the parent decides what an interrupt stops), writes nothing to the terminal (under
the TUI it is the parent's screen) and leaves quietly when its parent is gone.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

_LOST = (EOFError, OSError)
"""What a connection raises once the other side is gone."""


class _Channel:
    """Both ends of the parent's side: requests out on one pipe, replies in on the other."""

    def __init__(self, out: Connection, back: Connection) -> None:
        self.out, self.back = out, back

    def send(self, message: Any) -> None:
        self.out.send(message)

    def recv(self) -> Any:
        return self.back.recv()

    def close(self) -> None:
        self.out.close()
        self.back.close()


class Offload:
    """One helper process, shared by every caller in this process (one call at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: _Channel | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._failed_start = False

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        with self._lock:
            conn = self._connection()
            if conn is not None:
                try:
                    conn.send((fn, args))
                except (pickle.PicklingError, TypeError, AttributeError):
                    pass  # nothing was sent (pickled first): run it here
                except _LOST:
                    self._close()
                else:
                    try:
                        status, value = conn.recv()
                    except _LOST:
                        log.warning("the scoring process stopped; scoring in this process")
                        self._close()
                    else:
                        if status == "error":
                            raise value
                        if status == "ok":
                            return value  # type: ignore[no-any-return]
                        # "refused": the helper cannot import what the call names
        return fn(*args)

    def start(self) -> None:
        """Start the helper now (if it is not running), so that it boots while the first
        requests are out instead of when the first answers wait for it."""
        with self._lock:
            self._connection()

    @property
    def pid(self) -> int | None:
        """The helper's process id while it runs (None before its first call or once gone)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def close(self) -> None:
        with self._lock:
            self._close()

    def _connection(self) -> _Channel | None:
        if self._conn is not None and self._proc is not None and self._proc.poll() is None:
            return self._conn
        self._close()
        if self._failed_start:
            return None
        # A plain child of its own (not multiprocessing's spawn, which would run the parent's
        # main script again in a script without a `__main__` guard), in its own session so the
        # terminal's Ctrl-C reaches only the parent; calls name their functions by module, found
        # on the parent's `sys.path`.
        requests_in, requests_out = os.pipe()
        replies_in, replies_out = os.pipe()
        try:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _BOOT,
                    json.dumps(sys.path),
                    str(requests_in),
                    str(replies_out),
                ],
                pass_fds=(requests_in, replies_out),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            log.warning("cannot start the scoring process (%s); scoring in this process", exc)
            self._failed_start = True
            for fd in (requests_out, replies_in):
                os.close(fd)
            return None
        finally:
            os.close(requests_in)
            os.close(replies_out)
        self._conn = _Channel(
            Connection(requests_out, readable=False), Connection(replies_in, writable=False)
        )
        self._proc = proc
        return self._conn

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
            try:
                self._proc.wait(2)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._conn = self._proc = None


_BOOT = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from cruxtui.core.runs.offload import serve; serve(int(sys.argv[2]), int(sys.argv[3]))"
)


def serve(requests: int, replies: int) -> None:
    """The helper's loop: a call in, its result (or exception) out, until the parent goes (its
    end of the request pipe closes, even when it was killed)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    calls = Connection(requests, writable=False)
    answers = Connection(replies, readable=False)
    while True:
        try:
            fn, args = calls.recv()
        except _LOST:
            return
        except Exception as exc:  # noqa: BLE001 - a call that does not unpickle here
            reply: tuple[str, Any] = ("refused", str(exc))
        else:
            try:
                reply = ("ok", fn(*args))
            except Exception as exc:  # noqa: BLE001 - the caller raises it
                reply = ("error", exc)
        try:
            answers.send(reply)
        except _LOST:
            return
        except Exception as exc:  # noqa: BLE001 - a result or exception that does not pickle
            try:
                answers.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
            except _LOST:
                return


_shared: Offload | None = None
_shared_lock = threading.Lock()


def shared_offload() -> Offload:
    """The process-wide helper, started on first use and ended at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            import atexit

            _shared = Offload()
            atexit.register(_shared.close)
        return _shared
