"""Sandbox job: evaluate expressions a chain of thought makes claims about, on traced states.

A chain says "`nums.count(1)` returns 3" or "`d.popitem()` removes ('k', 1)": the expression
comes from untrusted text, so it is evaluated here, in an isolated child under the scoring
limits, never in the app. Each (expression, state) pair gets its own fresh copy of the state,
rebuilt from the traced reprs with `ast.literal_eval`, so a claimed `popitem()` or `pop()`
changes nothing that a later claim is judged on; a state that is not plain literals is
skipped. Each evaluation has its own small time budget, so one runaway claim (`'a' * 10**10`,
a huge `range`) costs only its own answer. The budget is CPU time (a loaded machine that
leaves the child waiting for a core costs no claim its answer), with a wall-clock backstop
several times longer for an evaluation that waits without computing.

Payload: `{"exprs": [src, ...], "states": [{name: repr, ...}, ...], "pairs": [[e, s], ...],
"budget": seconds}`. Returns, per pair, `["ok", repr]` or `["error", "Type: message"]`.
"""

from __future__ import annotations

import ast
import signal
from typing import Any

from cruxtui.core.util.bounded_repr import bounded_repr

RESULT_LIMIT = 2_000
"""Characters of a result's repr sent back (a claimed value is never longer than this)."""


class _OverBudget(Exception):
    pass


WALL_FACTOR = 8
"""The wall-clock backstop of one evaluation, in budgets of CPU time."""


_armed = [False]
"""Whether an evaluation is running: of its two timers only the first to fire interrupts it,
and one firing late (after the evaluation ended) interrupts nothing."""


def _alarm(signum: int, frame: Any) -> None:
    if _armed[0]:
        _armed[0] = False
        raise _OverBudget


def _state(reprs: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, text in reprs.items():
        try:
            out[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue  # an opaque value: an expression that reads it fails with NameError
    return out


def evaluate(payload: dict[str, Any]) -> list[list[str]]:
    exprs = [str(e) for e in payload["exprs"]]
    states = payload["states"]
    budget = float(payload.get("budget", 0.25))
    compiled: list[Any] = []
    for src in exprs:
        try:
            compiled.append(compile(src, "<claim>", "eval", dont_inherit=True))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            compiled.append(exc)
    previous = signal.signal(signal.SIGALRM, _alarm)
    previous_prof = signal.signal(signal.SIGPROF, _alarm)
    out: list[list[str]] = []
    try:
        for e, s in payload["pairs"]:
            code = compiled[e]
            if isinstance(code, BaseException):
                out.append(["error", f"{type(code).__name__}: cannot compile"])
                continue
            scope = _state(states[s])
            try:
                _armed[0] = True
                signal.setitimer(signal.ITIMER_PROF, budget)
                signal.setitimer(signal.ITIMER_REAL, budget * WALL_FACTOR)
                # The frame's names as globals: a comprehension (`[c for c in s if c in keep]`)
                # runs in its own scope, which sees globals but not eval's locals.
                value = eval(code, {"__builtins__": __builtins__, **scope})  # noqa: S307
                out.append(["ok", bounded_repr(value, RESULT_LIMIT)])
            except _OverBudget:
                out.append(["error", "timeout"])
            except BaseException as exc:  # noqa: BLE001 - any failure is this claim's alone
                out.append(["error", f"{type(exc).__name__}: {str(exc)[:200]}"])
            finally:
                _armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.setitimer(signal.ITIMER_PROF, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGPROF, previous_prof)
    return out
