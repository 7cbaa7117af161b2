"""The in-process tracer: runs a sample's code under `sys.settrace` and records what it does.

This module runs inside the sandbox's child process (see `cruxtui.core.trace.steps.trace_job`), so it
executes untrusted code and must return plain data only. It records two things in one run:

* the steps a person steps through: call / line / return / exception events of the frames
  whose code comes from the sample (not the module body, not the call text), with locals;
* at each line event, the values of the line's side-effect-free sub-expressions (call results,
  subscripts, slices, comparisons: `line_values`), evaluated while tracing is off so the count
  below does not change;
* `numsteps`, the benchmark filter's measure of how much work a sample does: every trace event
  of every frame, opcode events included, while running the program `<code>\\nassert <call> ==
  <expected>` (CRUXEval's `data/filter/analyze_ops.py` counted exactly this, on Python 3.9;
  bytecode differs between Python versions, so counts are comparable, not identical).

Steps go over the wire as deltas (only the locals that changed), which keeps a 10,000-step
trace small, and as one JSON text, which the parent decodes in C; `cruxtui.core.trace.steps` checks
every field and rebuilds full locals from them.
"""

from __future__ import annotations

import dis
import io
import json
import sys
import time
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

from cruxtui.core.sandbox.jobs.line_values import LineTable
from cruxtui.core.util import safe_ast
from cruxtui.core.util.bounded_repr import bounded_repr

SAMPLE_FILE = "<sample>"
"""Filename the sample's code is compiled under: how the tracer tells user frames apart."""

LOCAL_LIMIT = 200
"""Characters of a local's repr kept per step."""

RESULT_LIMIT = 20_000
"""Characters of the return value's repr kept (generous: it is compared with the expected output)."""

STDOUT_LIMIT = 4_000
"""Characters of printed output kept; the rest is counted and dropped."""

_RETURN_OPS = frozenset({"RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE"})
_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None))
_CHECK_CLOCK_EVERY = 2048

TraceFn = Callable[[FrameType, str, Any], Any]


class _Stop(BaseException):
    """Raised from the trace function to end the run (step cap or deadline); not an Exception so
    that ordinary `except Exception` in the traced code does not swallow it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _BoundedOutput(io.TextIOBase):
    """Stands in for stdout/stderr: keeps the first characters, counts the rest.

    A function that prints a lot must not fill the pipe to the parent nor make the trace huge.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept: list[str] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.size < self.limit:
            self.kept.append(text[: self.limit - self.size])
        self.size += len(text)
        return len(text)

    def text(self) -> str:
        kept = "".join(self.kept)
        if self.size > len(kept):
            kept += f"…(+{self.size - len(kept)} chars)"
        return kept


class _Frame:
    """What the recorder remembers about one activation of a user function."""

    __slots__ = ("fid", "depth", "shown", "values", "line")

    def __init__(self, fid: int, depth: int) -> None:
        self.fid = fid
        self.depth = depth
        self.line: int | None = None  # the line of this frame's previous line event
        self.shown: dict[str, str] = {}  # name -> repr last recorded, in definition order
        self.values: dict[str, object] = {}  # name -> object last seen (to skip re-repr)


def describe_exception(exc: BaseException) -> str:
    """`Type: message` (just `Type` if the message is empty), never raising."""
    name = type(exc).__name__
    try:
        msg = str(exc)
    except Exception:  # a user-defined __str__ may fail
        msg = ""
    if len(msg) > 500:
        msg = f"{msg[:500]}…(+{len(msg) - 500} chars)"
    return f"{name}: {msg}" if msg else name


class Recorder:
    """Trace functions for one run. `global_trace` is installed with `sys.settrace`."""

    def __init__(
        self, user_lines: int, max_steps: int, deadline: float, lines: LineTable | None = None
    ) -> None:
        self.user_lines = user_lines
        self.lines = lines
        self.max_steps = max_steps
        self.deadline = deadline
        self.events = 0
        self.steps: list[list[Any]] = []
        self.frames: dict[FrameType, _Frame] = {}
        self.user_code: dict[CodeType, bool] = {}
        self.top_return: str | None = None
        """repr of the value the last depth-0 frame returned; None if it raised (or none ran)."""

    # -- trace functions -------------------------------------------------------------------
    def global_trace(self, frame: FrameType, event: str, arg: Any) -> TraceFn:
        """Called for every new frame (and every generator resume): count it, pick a local tracer."""
        frame.f_trace_opcodes = True
        self.events += 1
        code = frame.f_code
        is_user = self.user_code.get(code)
        if is_user is None:
            is_user = self.user_code[code] = (
                code.co_filename == SAMPLE_FILE
                and code.co_name != "<module>"
                and code.co_firstlineno <= self.user_lines
            )
        if not is_user:
            return self.count_trace
        self._record(frame, event, arg)
        return self.user_trace

    def count_trace(self, frame: FrameType, event: str, arg: Any) -> TraceFn:
        """Frames outside the sample's functions (the module body, the call line): count only."""
        self.events += 1
        if self.events % _CHECK_CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            raise _Stop("timeout")
        return self.count_trace

    def user_trace(self, frame: FrameType, event: str, arg: Any) -> TraceFn:
        self.events += 1
        if event == "opcode":
            if self.events % _CHECK_CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
                raise _Stop("timeout")
            return self.user_trace
        self._record(frame, event, arg)
        return self.user_trace

    # -- recording -------------------------------------------------------------------------
    def _record(self, frame: FrameType, event: str, arg: Any) -> None:
        if len(self.steps) >= self.max_steps:
            raise _Stop("truncated")
        if time.monotonic() > self.deadline:
            raise _Stop("timeout")
        state = self.frames.get(frame)
        if state is None:
            state = self.frames[frame] = _Frame(len(self.frames), self._depth(frame))
        elif event == "call":  # a generator resumed, possibly from elsewhere
            state.depth = self._depth(frame)
        value: str | None = None
        if event == "return":
            value = self._on_return(frame, state, arg)
        elif event == "exception":
            value = describe_exception(arg[1])
        changes, removed = self._local_changes(frame, state)
        record = [
            event,
            frame.f_lineno,
            state.depth,
            frame.f_code.co_name,
            state.fid,
            changes,
            removed,
            value,
        ]
        if event == "line" and self.lines is not None:
            computed = self.lines.values(frame, frame.f_lineno, state.line)
            state.line = frame.f_lineno
            if computed:
                record.append(computed)
        self.steps.append(record)

    def _depth(self, frame: FrameType) -> int:
        parent = frame.f_back
        while parent is not None:
            known = self.frames.get(parent)
            if known is not None:
                return known.depth + 1
            parent = parent.f_back
        return 0

    def _on_return(self, frame: FrameType, state: _Frame, arg: Any) -> str | None:
        """The return value's repr, or None when the frame is unwinding because of an exception.

        A `return` event carries None both for `return None` and for an exception passing
        through; the instruction the frame stopped at tells which.
        """
        code = frame.f_code
        lasti = frame.f_lasti
        normal = 0 <= lasti < len(code.co_code) and dis.opname[code.co_code[lasti]] in _RETURN_OPS
        text = (
            bounded_repr(arg, RESULT_LIMIT if state.depth == 0 else LOCAL_LIMIT) if normal else None
        )
        if state.depth == 0:
            self.top_return = text
        return text

    def _local_changes(self, frame: FrameType, state: _Frame) -> tuple[list[list[str]], list[str]]:
        current = frame.f_locals
        shown, values = state.shown, state.values
        changes: list[list[str]] = []
        for name, value in current.items():
            if name[0] == ".":  # the hidden iterator argument of 3.11 comprehensions
                continue
            if name in values and values[name] is value and type(value) in _IMMUTABLE:
                continue
            values[name] = value
            text = bounded_repr(value, LOCAL_LIMIT)
            if shown.get(name) != text:
                shown[name] = text
                changes.append([name, text])
        removed = [name for name in shown if name not in current]
        for name in removed:
            del shown[name]
            values.pop(name, None)
        return changes, removed


def program_for(code: str, call: str, expected: str | None) -> str:
    """The text the benchmark's filter ran: the code, then the checked call on the next line."""
    last = f"assert {call} == {expected}" if expected is not None else call
    return code.rstrip("\n") + "\n" + last + "\n"


def problem_with(text: str, what: str) -> str | None:
    """None if `text` is a single Python expression; otherwise what is wrong with it, in words."""
    try:
        safe_ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        where = f" (column {exc.offset})" if exc.offset else ""
        return f"{what} does not parse: {exc.msg}{where}: {text.strip()!r}"
    return None


def run(
    code: str,
    call: str,
    *,
    expected: str | None = None,
    max_steps: int = 10_000,
    timeout: float = 3.0,
    line_values: bool = True,
) -> dict[str, Any]:
    """Trace `call` against `code` in this process; return the wire form (see module doc).

    `line_values`: also record, at each line event, the values of the line's side-effect-free
    sub-expressions (`line_values.LineTable`); their sources go in `exprs`, per line."""
    result: dict[str, Any] = {
        "steps": "[]",
        "return_repr": None,
        "exception": None,
        "truncated": False,
        "timeout": False,
        "error": None,
        "numsteps": 0,
        "stdout": "",
    }
    problem = problem_with(call, "call")
    if problem:
        result["error"] = problem
        return result
    if expected is not None and problem_with(expected, "expected output"):
        expected = None  # count steps for the bare call rather than fail on a bad expectation
    try:
        compiled = compile(program_for(code, call.strip(), expected), SAMPLE_FILE, "exec")
    except SyntaxError as exc:
        result["error"] = f"code does not parse: {exc.msg} (line {exc.lineno})"
        return result
    except (ValueError, OverflowError, RecursionError, MemoryError) as exc:
        result["error"] = f"code cannot be compiled: {describe_exception(exc)}"
        return result

    lines = LineTable(code) if line_values else None
    recorder = Recorder(
        len(code.rstrip("\n").splitlines()), max_steps, time.monotonic() + timeout, lines
    )
    output = _BoundedOutput(STDOUT_LIMIT)
    saved = sys.stdout, sys.stderr
    escaped: BaseException | None = None
    sys.stdout = sys.stderr = output
    sys.settrace(recorder.global_trace)
    try:
        exec(compiled, {"__name__": "__main__"})  # noqa: S102 - running the sample is the point
    except _Stop as stop:
        result[stop.reason] = True
    except BaseException as exc:  # noqa: BLE001 - whatever the code raised ends the trace
        escaped = exc
    finally:
        sys.settrace(None)
        sys.stdout, sys.stderr = saved

    result["steps"] = json.dumps(recorder.steps)
    result["exprs"] = {str(k): v for k, v in lines.sources.items()} if lines is not None else {}
    result["numsteps"] = recorder.events
    result["stdout"] = output.text()
    result["return_repr"] = recorder.top_return
    if escaped is not None:
        # With an expected output the program ends in `assert call == expected`; the assert
        # failing only says the value differs, which return_repr already shows.
        returned = recorder.top_return is not None
        if not (returned and expected is not None and isinstance(escaped, AssertionError)):
            result["exception"] = describe_exception(escaped)
            result["return_repr"] = None
    elif not recorder.frames and not result["truncated"] and not result["timeout"]:
        result["error"] = "the call ran none of the sample's functions"
    return result
