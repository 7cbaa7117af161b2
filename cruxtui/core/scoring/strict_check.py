"""Our verdict on one prediction, as steps: parse it alone, evaluate it in the sandbox, compare.

`output_steps` and `input_steps` are generators that yield the sandbox `Job`s they need and
return a `StrictVerdict` (see `verdicts` for the rules). Nothing here runs a prediction in this
process except `ast.literal_eval` of literals.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from cruxtui.core.data.dataset import Sample
from cruxtui.core.sandbox.pool import Outcome
from cruxtui.core.scoring.check_jobs import CALL_F, EVAL_ARGUMENTS, EVAL_PURE, EXEC_CALL, Job
from cruxtui.core.util import safe_ast, values
from cruxtui.core.util.bounded_repr import bounded_call, bounded_repr, shorten

MAX_PREDICTION_CHARS = 20_000
"""Longer predictions are not parsed (`unparsable`); the longest real one in the paper's data is ~2,600."""


@dataclass(frozen=True)
class StrictVerdict:
    """Our verdict plus what the official verdict can be derived from without running it."""

    passed: bool
    kind: str
    reason: str
    produced: str | None = None
    literal: bool = False
    """The prediction's values came from literals or pure literal arithmetic (no names, no calls):
    evaluating them anywhere, apart from `f` or next to it, gives the same values."""
    settled: bool = False
    """The evaluation ended in a plain value or an ordinary exception/timeout: the official check,
    if its spliced source parses to the same comparison, must reach the same result."""


def expected_output(sample: Sample) -> Generator[Job, Outcome, tuple[Any] | StrictVerdict]:
    """The expected output as plain data, in a 1-tuple (a literal in the benchmark; evaluated next
    to the code if it is not), or the failing verdict every prediction gets if it cannot be had."""
    cached = _EXPECTED.get((sample.code, sample.output))
    if cached is not None:
        return cached
    parsed = parse_prediction(sample.output)
    literal = None if isinstance(parsed, str) else literal_value(parsed)
    if literal is None:
        outcome = yield Job(EXEC_CALL, {"code": sample.code, "call": sample.output})
        if not outcome.ok:
            reason = f"the expected output cannot be evaluated: {outcome.error or outcome.status}"
            return StrictVerdict(False, "exception", reason, settled=True)
        literal = (outcome.value,)
    _EXPECTED[(sample.code, sample.output)] = literal
    return literal


_EXPECTED: dict[tuple[str, str], tuple[Any]] = {}


@functools.lru_cache(maxsize=4096)
def parse_prediction(prediction: str) -> ast.Expression | str:
    """The prediction as one expression, or why it is not one (cached: the same text is parsed by
    our check and by the official-verdict analysis; callers never modify the tree)."""
    if len(prediction) > MAX_PREDICTION_CHARS:
        return f"longer than {MAX_PREDICTION_CHARS:,} characters ({len(prediction):,})"
    try:
        return safe_ast.parse(prediction.strip(), mode="eval")
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:
        return f"{type(exc).__name__}: {exc}"[:200]


def literal_value(node: ast.AST) -> tuple[Any] | None:
    try:
        return (ast.literal_eval(node),)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


REASON_LIMIT = 200
"""Characters of a value a verdict's reason quotes before the cut marker."""
CALL_LIMIT = 120
"""Characters of an input prediction's call a reason quotes before the cut marker."""


def _compare(expected: Any, produced: Any, literal: bool, call: str | None = None) -> StrictVerdict:
    shown = bounded_repr(produced, REASON_LIMIT)
    try:
        equal = bool(expected == produced)
    except (RecursionError, MemoryError) as exc:
        return StrictVerdict(
            False, "bad_value", f"cannot compare: {type(exc).__name__}", shown, literal
        )
    if equal:
        reason = f"{call} returns the expected output" if call else "matches the expected output"
        return StrictVerdict(True, "pass", reason, shown, literal, settled=True)
    got = f"{call} returned {shown}" if call else f"got {shown}"
    return StrictVerdict(
        False,
        "wrong",
        f"{got}, expected {bounded_repr(expected, REASON_LIMIT)}",
        shown,
        literal,
        settled=True,
    )


def _failure(outcome: Outcome, context: str, literal: bool = False) -> StrictVerdict:
    """A sandbox outcome that is not a value, as a verdict. `context` says what was running."""
    kind = {"bad_result": "bad_value"}.get(outcome.status, outcome.status)
    settled = outcome.status in ("exception", "timeout")
    if outcome.status == "exception":
        reason = f"{context} raised {outcome.error}"
    elif outcome.status == "bad_result":
        reason = f"{context} gave something that is not plain data: {outcome.error}"
    else:
        reason = f"{context}: {outcome.error}"
    return StrictVerdict(False, kind, reason, literal=literal, settled=settled)


def _uses_f(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.Name) and node.id == "f" for node in ast.walk(tree))


def output_steps(sample: Sample, prediction: str) -> Generator[Job, Outcome, StrictVerdict]:
    tree = parse_prediction(prediction)
    if isinstance(tree, str):
        return StrictVerdict(False, "unparsable", tree)
    literal = literal_value(tree)  # a literal names nothing, so it cannot use f: no walk
    if literal is None and _uses_f(tree):
        return StrictVerdict(False, "calls_f", "uses f instead of stating the value f returns")
    found = yield from expected_output(sample)
    if isinstance(found, StrictVerdict):
        return found
    expected = found[0]
    if literal is not None:
        return _compare(expected, literal[0], literal=True)
    pure = is_pure(tree)
    if pure:
        outcome = yield Job(
            EVAL_PURE, {"code": sample.code, "call": prediction.strip()}, batchable=True
        )
    else:
        # Evaluated without the sample's code: `f` must not be reachable at all (not by name, which
        # is `calls_f` above, nor through `globals()`, `eval` and the like).
        outcome = yield Job(EXEC_CALL, {"code": "", "call": prediction.strip()})
    if not outcome.ok:
        return _failure(outcome, "the prediction", literal=pure)
    return _compare(expected, outcome.value, literal=pure)


def input_steps(sample: Sample, prediction: str) -> Generator[Job, Outcome, StrictVerdict]:
    tree = parse_prediction(prediction)
    if isinstance(tree, str):
        return StrictVerdict(False, "unparsable", tree)
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "f"):
        return StrictVerdict(False, "not_a_call", "not a bare call f(...)")
    found = yield from expected_output(sample)
    if isinstance(found, StrictVerdict):
        return found
    expected = found[0]
    arguments = _literal_arguments(call)
    if arguments is not None:
        args, kwargs = arguments
        payload = {"code": sample.code, "args": args, "kwargs": kwargs}
        outcome = yield Job(CALL_F, payload, batchable=True)
        shown_call, literal = bounded_call("f", args, kwargs, CALL_LIMIT), True
    elif is_pure(tree):
        # Operators on literals and calls of the benchmark's own f: nothing in it can tamper with
        # the result, so it is evaluated whole, f included.
        outcome = yield Job(
            EVAL_PURE, {"code": sample.code, "call": prediction.strip()}, batchable=True
        )
        shown_call, literal = shorten(prediction.strip(), CALL_LIMIT), True
    else:
        outcome = yield Job(EVAL_ARGUMENTS, {"code": sample.code, "call": prediction.strip()})
        if not outcome.ok:
            return _failure(outcome, "evaluating the arguments")
        arguments = _checked_arguments(outcome.value)
        if arguments is None:
            return StrictVerdict(False, "bad_value", "the arguments did not evaluate to plain data")
        args, kwargs = arguments
        payload = {"code": sample.code, "args": args, "kwargs": kwargs}
        outcome = yield Job(CALL_F, payload, batchable=True)
        shown_call, literal = bounded_call("f", args, kwargs, CALL_LIMIT), False
    if not outcome.ok:
        verdict = _failure(outcome, shown_call)
        return StrictVerdict(
            False, verdict.kind, verdict.reason, literal=literal, settled=verdict.settled
        )
    return _compare(expected, outcome.value, literal, call=shown_call)


def _literal_arguments(call: ast.Call) -> tuple[list[Any], dict[str, Any]] | None:
    args: list[Any] = []
    for node in call.args:
        value = None if isinstance(node, ast.Starred) else literal_value(node)
        if value is None:
            return None
        args.append(value[0])
    kwargs: dict[str, Any] = {}
    for keyword in call.keywords:
        value = None if keyword.arg is None else literal_value(keyword.value)
        if keyword.arg is None or value is None:  # `**mapping`, or a value that is not a literal
            return None
        kwargs[keyword.arg] = value[0]
    if not values.is_plain([args, kwargs]):
        return None  # too deep for the wire: evaluated in the sandbox instead, like any call
    return args, kwargs


_PURE_NODES = (
    ast.Expression,
    ast.Module,
    ast.Assert,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.Starred,
    ast.UnaryOp,
    ast.BinOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Subscript,
    ast.Slice,
    ast.keyword,
    ast.expr_context,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def is_pure(tree: ast.AST) -> bool:
    """True if `tree` holds only literals, operators and calls of the benchmark's `f` by name.

    No other names, no attributes, no other calls: evaluating it runs nothing but builtin
    operators and trusted benchmark code, so it cannot tamper with anything. It may share a child
    with other pure work, and it evaluates to the same values wherever it is evaluated."""
    for node in ast.walk(tree):
        if isinstance(node, _PURE_NODES):
            continue
        if isinstance(node, ast.Name) and node.id == "f" and isinstance(node.ctx, ast.Load):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "f":
            continue
        return False
    return True


def _checked_arguments(value: Any) -> tuple[list[Any], dict[str, Any]] | None:
    """The `[args, kwargs]` sent back by `eval_arguments`, if it has exactly that shape."""
    if type(value) is not list or len(value) != 2:
        return None
    args, kwargs = value
    if (
        type(args) is not list
        or type(kwargs) is not dict
        or any(type(k) is not str for k in kwargs)
    ):
        return None
    return args, kwargs
