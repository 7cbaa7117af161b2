"""The sandbox job that runs a perturbation variant twice (see `cruxtui.core.perturb.variant`).

It lives outside the `cruxtui.core.perturb` package on purpose: sandbox workers import a job's
module, and importing anything inside that package would load libcst (half a second, tens of MB)
into every worker for nothing.
"""

from __future__ import annotations

from typing import Any


def exec_twice(payload: dict[str, Any]) -> list[Any]:
    """Two independent runs in one sandboxed child: each execs the code into a fresh namespace and
    evaluates the call there (fresh argument objects too), so state the first run leaves in
    imported modules (a random generator, a clock) shows up as a different second result.

    One child instead of two halves the cost of verifying thousands of variants. Each run starts
    from a fresh namespace and fresh arguments; only state kept in imported modules carries over,
    which is exactly what a determinism check must notice.
    """
    code = compile(payload["code"], "<code>", "exec", dont_inherit=True)
    call = compile(payload["call"], "<call>", "eval", dont_inherit=True)
    results = []
    for _ in range(2):
        namespace: dict[str, Any] = {}
        exec(code, namespace)
        results.append(eval(call, namespace))
    return results
