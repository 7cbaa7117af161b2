"""A run's pure per-round work (answer extraction, scoring) in a process of its own.

A bulk run against a fast server is bound by the client's CPU, and Python runs one thread at a
time: extracting and scoring the answers in a worker thread takes that time from the event loop
that keeps the requests going (measured in `benchmarks/bench_runner.py` at concurrency 64: the
runner at 88% of a bare client with the work in a thread, at the bare client's speed without
it). That work is pure, text in and verdicts out, so where it runs changes nothing but which
core does it. `Offload.call(fn, *args)` runs `fn(*args)` in one long-lived helper process and
returns its result or raises its exception.

Never a new way to fail: a call that cannot be pickled (a scorer a caller made up) or that the
helper cannot import, and any call while the helper cannot start or after it died mid-call, runs
in the calling thread instead, and a dead helper is started
afresh on the next call. The helper ignores Ctrl-C (the parent decides what an interrupt stops)
and leaves quietly when its parent is gone.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import signal
import threading
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

_LOST = (EOFError, OSError)
"""What a connection raises once the other side is gone."""


class Offload:
    """One helper process, shared by every caller in this process (one call at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: Any = None
        self._proc: Any = None
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

    @property
    def pid(self) -> int | None:
        """The helper's process id while it runs (None before its first call or once gone)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.is_alive() else None

    def close(self) -> None:
        with self._lock:
            self._close()

    def _connection(self) -> Any:
        if self._conn is not None and self._proc is not None and self._proc.is_alive():
            return self._conn
        self._close()
        if self._failed_start:
            return None
        try:
            ctx = multiprocessing.get_context("spawn")  # never fork a process with threads
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=serve, args=(theirs,), name="cruxtui-scoring", daemon=True)
            proc.start()
            theirs.close()
        except Exception as exc:  # noqa: BLE001 - no helper: everything runs in the caller
            log.warning("cannot start the scoring process (%s); scoring in this process", exc)
            self._failed_start = True
            return None
        self._conn, self._proc = mine, proc
        return mine

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None and self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(1)
        self._conn = self._proc = None


def serve(conn: Any) -> None:
    """The helper's loop: a call in, its result (or exception) out, until the parent goes.

    Its output goes nowhere: under the TUI the terminal is the parent's screen, and everything
    the helper has to say travels back with the call."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    os.close(quiet)
    while True:
        try:
            fn, args = conn.recv()
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
            conn.send(reply)
        except _LOST:
            return
        except Exception as exc:  # noqa: BLE001 - a result or exception that does not pickle
            try:
                conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
            except _LOST:
                return


_shared: Offload | None = None
_shared_lock = threading.Lock()


def shared_offload() -> Offload:
    """The process-wide helper, started on first use; multiprocessing ends it at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Offload()
        return _shared
