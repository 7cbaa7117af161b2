"""Jobs the scorer runs inside sandbox children (`cruxtui.core.sandbox.worker`), one isolated child each.

Kept apart from `scoring.py` so the sandbox worker imports only this small module. Every job
receives plain data and returns plain data; code is compiled with `dont_inherit=True` so no
`from __future__` flag of ours changes the benchmark's semantics.
"""

from __future__ import annotations

import ast
import functools
import signal
import time
import types
from typing import Any

from cruxtui.core.util import values

CAPTURE = "__cruxtui_capture_arguments__"


@functools.lru_cache(maxsize=256)
def _compiled(code: str) -> types.CodeType:
    """Compiled once per child: executing the same code object again still makes fresh functions
    with fresh default values, exactly like compiling the text anew."""
    return compile(code, "<code>", "exec", dont_inherit=True)


def _run_code(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(_compiled(code), namespace)
    return namespace


def exec_call(payload: dict[str, Any]) -> Any:
    """Exec `payload["code"]` in a fresh namespace, then evaluate `payload["call"]` there."""
    namespace: dict[str, Any] = {}
    exec(compile(payload["code"], "<code>", "exec", dont_inherit=True), namespace)
    return eval(compile(payload["call"], "<call>", "eval", dont_inherit=True), namespace)


def eval_arguments(payload: dict[str, Any]) -> list[Any]:
    """Evaluate the arguments of the call `payload["call"]` (`f(...)`) with the sample's code loaded.

    Only the outermost `f` is replaced, by a function that hands back its arguments, so nested
    uses of `f` inside the arguments still mean the benchmark's `f`. Returns `[args, kwargs]`;
    whatever the arguments' code does can only change these values, because `f` itself runs
    later in a different, clean child.
    """
    namespace = _run_code(payload["code"])
    tree = ast.parse(payload["call"], mode="eval")
    if not isinstance(tree.body, ast.Call):
        raise ValueError("not a call")
    tree.body.func = ast.copy_location(ast.Name(id=CAPTURE, ctx=ast.Load()), tree.body.func)
    namespace[CAPTURE] = lambda *args, **kwargs: [list(args), kwargs]
    return eval(compile(tree, "<call>", "eval", dont_inherit=True), namespace)  # type: ignore[no-any-return]


def call_f(payload: dict[str, Any]) -> Any:
    """Load the sample's code in a fresh namespace and return `f(*args, **kwargs)` (plain data in)."""
    return _run_code(payload["code"])["f"](*payload["args"], **payload["kwargs"])


def eval_pure(payload: dict[str, Any]) -> Any:
    """Evaluate `payload["call"]` next to the sample's code (only for pure predictions: literals,
    operators and calls of the benchmark's own `f`, nothing a prediction could tamper with)."""
    namespace = _run_code(payload["code"])
    return eval(compile(payload["call"], "<call>", "eval", dont_inherit=True), namespace)


class _ItemTimeout(BaseException):
    """Raised by the per-item alarm (a BaseException, so `except Exception` in f cannot swallow it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _ItemTimeout


def run_many(payload: dict[str, Any]) -> list[list[Any]]:
    """Several jobs in one child, each on a freshly executed copy of its sample's code.

    Only for work that cannot tamper with its neighbours: trusted `f` on plain arguments, pure
    predictions, and the official check of pure predictions. Per item: `["ok", value]`,
    `["exception", "Type: message"]`, `["timeout", ...]`, `["memory", ...]`, `["bad_result", why]`
    or `["skipped"]`. Each item gets `payload["timeout"]` seconds by an interval alarm (as the
    benchmark's own harness times its checks); once that much time has gone, the rest are skipped.
    The scorer re-runs alone every item that was skipped, ran out of memory, or belonged to a
    child that failed as a whole, so batching never changes a verdict; it only saves forks.
    """
    timeout = float(payload["timeout"])
    signal.signal(signal.SIGALRM, _alarm)
    start = time.monotonic()
    results: list[list[Any]] = []
    for item in payload["items"]:
        if time.monotonic() - start > timeout:
            results.append(["skipped"])
            continue
        job = _BATCHABLE[item["job"]]
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                value = job(item)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _ItemTimeout:
            results.append(["timeout", f"no result within {timeout:g} s"])
            continue
        except MemoryError:
            results.append(["memory", "out of memory"])
            continue
        except Exception as exc:  # noqa: BLE001 - the benchmark counts any exception as a failure
            results.append(["exception", _describe(exc)])
            continue
        if values.is_plain(value):
            results.append(["ok", value])
        else:
            results.append(
                ["bad_result", f"a value of type {type(value).__name__} is not plain data"]
            )
    return results


def _describe(exc: BaseException) -> str:
    text = str(exc)[:500]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def official_check(payload: dict[str, Any]) -> bool:
    """The benchmark's own check, as it does it: exec `{code}\n{assertion}` as one program.

    `assertion` is `assert {output} == {prediction}`, spliced as text. Only run when that text
    could mean something other than our parsed comparison, to record what the official scorer
    would have said. Passing = no exception.
    """
    program = f"{payload['code']}\n{payload['assertion']}"
    exec(compile(program, "<program>", "exec", dont_inherit=True), {})
    return True


_BATCHABLE = {"call_f": call_f, "eval_pure": eval_pure, "official_check": official_check}
