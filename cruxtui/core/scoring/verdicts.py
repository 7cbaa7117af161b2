"""Verdicts with reasons for predictions of both tasks, pass@k and bootstrap intervals.

How a prediction is judged (never by splicing its text into source):

- It is length-capped and parsed on its own with `ast` as one expression.
- Output task: a literal is compared in this (trusted) process without running anything. Any other
  expression is evaluated in the sandbox, without the sample's code (so `f` is out of reach), and
  must come back as plain builtin data. Naming `f` at all is refused (`calls_f`): the task is to
  predict its value.
- Input task: the prediction must be a bare call `f(...)`. Literal arguments go straight to a
  sandbox child that runs `f` (trusted benchmark code) on them; so does a "pure" call (operators on
  literals and calls of `f` only, nothing that could tamper). Arguments containing code are first
  evaluated in one child (hostile code can only change the arguments), then `f` runs on the
  resulting plain data in a second, clean child, so frame tricks or forged result pipes cannot fake
  a pass.
- Comparison happens here, on exact builtin types, with Python's `==` as the benchmark uses it
  (`True == 1`, dict order ignored).

Each verdict also records `official`: what the benchmark's own check (`assert OUTPUT == PREDICTION`
spliced as text, run whole, pass = no exception) says. Where the spliced source parses to exactly
our comparison the two must agree and nothing extra runs; otherwise (`0 or 1`, `1, 2`,
`x if c else y`, values that are not plain data) the spliced program itself is run in the sandbox.
"""

from __future__ import annotations

import ast
import functools
import json
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.sandbox.pool import Limits, Outcome, Sandbox, default_sandbox
from cruxtui.core.scoring.generations_file import Generations
from cruxtui.core.scoring.passk import PERCENTILES, bootstrap, mean_pass_at_k, pass_at_k
from cruxtui.core.util import values
from cruxtui.core.util.safe_ast import same_tree

__all__ = [
    "KINDS",
    "PERCENTILES",
    "TASKS",
    "ScoredSet",
    "Verdict",
    "check",
    "check_many",
    "pass_at_k",
    "score_generations",
]

TASKS = ("output", "input")
KINDS = (
    "pass",
    "wrong",
    "exception",
    "timeout",
    "memory",
    "crashed",
    "output_limit",
    "unparsable",
    "not_a_call",
    "calls_f",
    "bad_value",
)
MAX_PREDICTION_CHARS = 20_000
"""Longer predictions are not parsed (`unparsable`); the longest real one in the paper's data is ~2,600."""

MAX_OFFICIAL_CHARS = 1_000_000
"""Longer predictions are not even run through the official check (counted as its failure)."""

_JOBS = "cruxtui.core.sandbox.jobs.checks"
EXEC_CALL = "cruxtui.core.sandbox.jobs.checks:exec_call"
EVAL_ARGUMENTS = f"{_JOBS}:eval_arguments"
CALL_F = f"{_JOBS}:call_f"
EVAL_PURE = f"{_JOBS}:eval_pure"
OFFICIAL_CHECK = f"{_JOBS}:official_check"
RUN_MANY = f"{_JOBS}:run_many"
_OFFICIAL_LIMITS = Limits(output_bytes=256 * 1024 * 1024)
"""The official harness swallows any amount of printing; so does our run of it."""


@dataclass(frozen=True)
class Verdict:
    """How one prediction fared. `passed`/`kind` are ours; `official` is the benchmark's own check."""

    passed: bool
    kind: str
    reason: str
    produced: str | None = None
    official: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "kind": self.kind,
            "reason": self.reason,
            "produced": self.produced,
            "official": self.official,
        }

    @property
    def disagrees(self) -> bool:
        """True where the benchmark's spliced check would have judged differently."""
        return self.official is not None and self.official != self.passed


@dataclass(frozen=True)
class _Job:
    """A request from a check to the sandbox."""

    name: str
    payload: dict[str, Any]
    limits: Limits | None = None
    batchable: bool = False
    """Trusted or pure work that may share a child with other such jobs."""

    @functools.cached_property
    def key(self) -> str:
        """Identical jobs (same function, same plain payload) run once per batch."""
        return json.dumps([self.name, values.encode(self.payload)], separators=(",", ":"))


_Request = _Job | tuple[_Job, ...]
"""What a check asks the sandbox for: one job, or several to run in the same round."""

_Steps = Generator[_Request, Any, Verdict]


# --------------------------------------------------------------------------------------------
# One prediction
# --------------------------------------------------------------------------------------------


def check(sample: Sample, task: str, prediction: str, sandbox: Sandbox | None = None) -> Verdict:
    """Judge one prediction: for task "output" a value expression, for "input" a call `f(...)`."""
    if task not in TASKS:
        raise ValueError(f"task must be 'output' or 'input', not {task!r}")
    steps = _steps(sample, task, prediction)
    box = sandbox
    try:
        request = next(steps)
        while True:
            box = box or default_sandbox()
            if isinstance(request, tuple):
                request = steps.send(tuple(box.run(j.name, j.payload, j.limits) for j in request))
            else:
                request = steps.send(box.run(request.name, request.payload, request.limits))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def _steps(sample: Sample, task: str, prediction: str) -> _Steps:
    """Our verdict, and the official one; where the latter needs its own run, both share a round."""
    strict_steps = (_output_steps if task == "output" else _input_steps)(sample, prediction)
    plan = _official_plan(sample, task, prediction)
    try:
        first: _Job | None = next(strict_steps)
    except StopIteration as stop:
        first, strict = None, stop.value
    official: bool
    if isinstance(plan, _Job):
        if first is None:
            official = _official_passed((yield plan))
        else:
            official_outcome, outcome = yield (plan, first)
            official = _official_passed(official_outcome)
            strict = yield from _resume(strict_steps, outcome)
    else:
        if first is not None:
            strict = yield from _resume(strict_steps, (yield first))
        if isinstance(plan, bool):
            official = plan
        else:
            official = yield from _derived_official(sample, prediction, strict)
    return Verdict(strict.passed, strict.kind, strict.reason, strict.produced, official)


def _resume(
    steps: Generator[_Job, Outcome, _Strict], outcome: Outcome
) -> Generator[_Job, Outcome, _Strict]:
    """Carry on a strict check that has just been sent `outcome` for its pending job."""
    while True:
        try:
            job = steps.send(outcome)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        outcome = yield job


@dataclass(frozen=True)
class _Strict:
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


def _expected(sample: Sample) -> Generator[_Job, Outcome, tuple[Any] | _Strict]:
    """The expected output as plain data, in a 1-tuple (a literal in the benchmark; evaluated next
    to the code if it is not), or the failing verdict every prediction gets if it cannot be had."""
    cached = _EXPECTED.get((sample.code, sample.output))
    if cached is not None:
        return cached
    parsed = _parse(sample.output)
    literal = None if isinstance(parsed, str) else _literal(parsed)
    if literal is None:
        outcome = yield _Job(EXEC_CALL, {"code": sample.code, "call": sample.output})
        if not outcome.ok:
            reason = f"the expected output cannot be evaluated: {outcome.error or outcome.status}"
            return _Strict(False, "exception", reason, settled=True)
        literal = (outcome.value,)
    _EXPECTED[(sample.code, sample.output)] = literal
    return literal


_EXPECTED: dict[tuple[str, str], tuple[Any]] = {}


@functools.lru_cache(maxsize=4096)
def _parse(prediction: str) -> ast.Expression | str:
    """The prediction as one expression, or why it is not one (cached: the same text is parsed by
    our check and by the official-verdict analysis; callers never modify the tree)."""
    if len(prediction) > MAX_PREDICTION_CHARS:
        return f"longer than {MAX_PREDICTION_CHARS:,} characters ({len(prediction):,})"
    try:
        return ast.parse(prediction.strip(), mode="eval")
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:
        return f"{type(exc).__name__}: {exc}"[:200]


def _literal(node: ast.AST) -> tuple[Any] | None:
    try:
        return (ast.literal_eval(node),)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _compare(expected: Any, produced: Any, literal: bool, call: str | None = None) -> _Strict:
    shown = values.bounded_repr(produced)
    try:
        equal = bool(expected == produced)
    except (RecursionError, MemoryError) as exc:
        return _Strict(False, "bad_value", f"cannot compare: {type(exc).__name__}", shown, literal)
    if equal:
        reason = f"{call} returns the expected output" if call else "matches the expected output"
        return _Strict(True, "pass", reason, shown, literal, settled=True)
    got = f"{call} returned {shown}" if call else f"got {shown}"
    return _Strict(
        False,
        "wrong",
        f"{got}, expected {values.bounded_repr(expected)}",
        shown,
        literal,
        settled=True,
    )


def _failure(outcome: Outcome, context: str, literal: bool = False) -> _Strict:
    """A sandbox outcome that is not a value, as a verdict. `context` says what was running."""
    kind = {"bad_result": "bad_value"}.get(outcome.status, outcome.status)
    settled = outcome.status in ("exception", "timeout")
    if outcome.status == "exception":
        reason = f"{context} raised {outcome.error}"
    elif outcome.status == "bad_result":
        reason = f"{context} gave something that is not plain data: {outcome.error}"
    else:
        reason = f"{context}: {outcome.error}"
    return _Strict(False, kind, reason, literal=literal, settled=settled)


def _uses_f(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.Name) and node.id == "f" for node in ast.walk(tree))


def _output_steps(sample: Sample, prediction: str) -> Generator[_Job, Outcome, _Strict]:
    tree = _parse(prediction)
    if isinstance(tree, str):
        return _Strict(False, "unparsable", tree)
    if _uses_f(tree):
        return _Strict(False, "calls_f", "uses f instead of stating the value f returns")
    found = yield from _expected(sample)
    if isinstance(found, _Strict):
        return found
    expected = found[0]
    literal = _literal(tree)
    if literal is not None:
        return _compare(expected, literal[0], literal=True)
    pure = _pure(tree)
    if pure:
        outcome = yield _Job(
            EVAL_PURE, {"code": sample.code, "call": prediction.strip()}, batchable=True
        )
    else:
        # Evaluated without the sample's code: `f` must not be reachable at all (not by name, which
        # is `calls_f` above, nor through `globals()`, `eval` and the like).
        outcome = yield _Job(EXEC_CALL, {"code": "", "call": prediction.strip()})
    if not outcome.ok:
        return _failure(outcome, "the prediction", literal=pure)
    return _compare(expected, outcome.value, literal=pure)


def _input_steps(sample: Sample, prediction: str) -> Generator[_Job, Outcome, _Strict]:
    tree = _parse(prediction)
    if isinstance(tree, str):
        return _Strict(False, "unparsable", tree)
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "f"):
        return _Strict(False, "not_a_call", "not a bare call f(...)")
    found = yield from _expected(sample)
    if isinstance(found, _Strict):
        return found
    expected = found[0]
    arguments = _literal_arguments(call)
    if arguments is not None:
        args, kwargs = arguments
        payload = {"code": sample.code, "args": args, "kwargs": kwargs}
        outcome = yield _Job(CALL_F, payload, batchable=True)
        shown_call, literal = _shown_call(args, kwargs), True
    elif _pure(tree):
        # Operators on literals and calls of the benchmark's own f: nothing in it can tamper with
        # the result, so it is evaluated whole, f included.
        outcome = yield _Job(
            EVAL_PURE, {"code": sample.code, "call": prediction.strip()}, batchable=True
        )
        shown_call, literal = _bounded_text(prediction.strip()), True
    else:
        outcome = yield _Job(EVAL_ARGUMENTS, {"code": sample.code, "call": prediction.strip()})
        if not outcome.ok:
            return _failure(outcome, "evaluating the arguments")
        arguments = _checked_arguments(outcome.value)
        if arguments is None:
            return _Strict(False, "bad_value", "the arguments did not evaluate to plain data")
        args, kwargs = arguments
        payload = {"code": sample.code, "args": args, "kwargs": kwargs}
        outcome = yield _Job(CALL_F, payload, batchable=True)
        shown_call, literal = _shown_call(args, kwargs), False
    if not outcome.ok:
        verdict = _failure(outcome, shown_call)
        return _Strict(
            False, verdict.kind, verdict.reason, literal=literal, settled=verdict.settled
        )
    return _compare(expected, outcome.value, literal, call=shown_call)


def _literal_arguments(call: ast.Call) -> tuple[list[Any], dict[str, Any]] | None:
    args: list[Any] = []
    for node in call.args:
        value = None if isinstance(node, ast.Starred) else _literal(node)
        if value is None:
            return None
        args.append(value[0])
    kwargs: dict[str, Any] = {}
    for keyword in call.keywords:
        value = None if keyword.arg is None else _literal(keyword.value)
        if value is None:
            return None
        kwargs[keyword.arg] = value[0]  # type: ignore[index]
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


def _pure(tree: ast.AST) -> bool:
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


def _bounded_text(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


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


def _shown_call(args: list[Any], kwargs: dict[str, Any], limit: int = 120) -> str:
    parts = [values.bounded_repr(a, limit) for a in args]
    parts += [f"{k}={values.bounded_repr(v, limit)}" for k, v in kwargs.items()]
    text = ", ".join(parts)
    return f"f({text if len(text) <= limit else text[:limit] + '...'})"


# --------------------------------------------------------------------------------------------
# What the benchmark's own scorer would say
# --------------------------------------------------------------------------------------------


def official_prefilter(sample: Sample, task: str, prediction: str) -> bool:
    """The benchmark's text pre-filters: True if it fails the prediction without running it."""
    if task == "input":
        return "f(" not in prediction
    return f"f({sample.input})" in prediction


_SAME = "same comparison"


def _official_plan(sample: Sample, task: str, prediction: str) -> bool | _Job | str:
    """What the official check needs: decided already (bool), its own run (the job), or, when the
    spliced text parses to exactly our comparison, derivation from our verdict (`_SAME`)."""
    if official_prefilter(sample, task, prediction) or len(prediction) > MAX_OFFICIAL_CHARS:
        return False
    if _binds_tighter_than_eq(sample.output) and _binds_tighter_than_eq(prediction):
        return _SAME  # no need to parse the splice: see `_binds_tighter_than_eq`
    splice = f"assert {sample.output} == {prediction}"
    try:
        spliced = ast.parse(splice)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False  # the whole program fails to compile: an exception, so a failure
    if _same_comparison(spliced, sample.output, prediction):
        return _SAME
    return _official_job(sample, splice, spliced)


_TIGHT = (
    ast.Constant, ast.Name, ast.List, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp,
    ast.GeneratorExp, ast.Call, ast.Attribute, ast.Subscript, ast.JoinedStr, ast.BinOp,
)  # fmt: skip


def _binds_tighter_than_eq(text: str) -> bool:
    """True if `text` is one expression on one line that binds tighter than `==`.

    Then `assert A == B` with both sides such texts can only parse as `Compare(A, [Eq], [B])`:
    arithmetic, calls, subscripts, displays and unary `-`/`+`/`~` all bind tighter than comparison,
    and `' == '` keeps the tokens apart. Tuples without brackets, `not`, `and`/`or`, `if`-`else`,
    `lambda`, comparisons (which would chain), comments and line breaks get the full check.
    """
    if any(c in text for c in "\n\r\x0c#"):
        return False
    tree = _parse(text)
    if isinstance(tree, str):
        return False
    body = tree.body
    return isinstance(body, _TIGHT) or (
        isinstance(body, ast.UnaryOp) and not isinstance(body.op, ast.Not)
    )


def _official_job(sample: Sample, splice: str, spliced: ast.Module) -> _Job:
    payload = {"code": sample.code, "assertion": splice}
    if _pure(spliced):  # only literals, operators and f: cannot print, may share a child
        return _Job(OFFICIAL_CHECK, payload, batchable=True)
    return _Job(OFFICIAL_CHECK, payload, _OFFICIAL_LIMITS)


def _official_passed(outcome: Outcome) -> bool:
    return outcome.ok and outcome.value is True


def _derived_official(
    sample: Sample, prediction: str, strict: _Strict
) -> Generator[_Job, Outcome, bool]:
    """The official verdict of a prediction whose splice is exactly our comparison."""
    # The same evaluation, too: literals, or operators on literals (and calls of f in the input
    # task), which evaluate alike anywhere. Other code ran apart from f (input-task arguments) or
    # without the sample's code (output task), so the spliced program itself must run.
    if strict.settled and strict.literal:
        return strict.passed
    splice = f"assert {sample.output} == {prediction}"
    outcome = yield _official_job(sample, splice, ast.parse(splice))
    return _official_passed(outcome)


def _same_comparison(spliced: ast.Module, output: str, prediction: str) -> bool:
    """True if `assert OUTPUT == PREDICTION` parses to exactly `OUTPUT == (PREDICTION parsed alone)`."""
    if len(spliced.body) != 1 or not isinstance(spliced.body[0], ast.Assert):
        return False
    statement = spliced.body[0]
    test = statement.test
    if statement.msg is not None or not isinstance(test, ast.Compare):
        return False
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    alone = _parse(prediction)
    expected = _parse(output)
    if isinstance(alone, str) or isinstance(expected, str):
        return False
    return same_tree(test.left, expected.body) and same_tree(test.comparators[0], alone.body)


# --------------------------------------------------------------------------------------------
# Many predictions
# --------------------------------------------------------------------------------------------


def check_many(
    pairs: Iterable[tuple[Sample, str]],
    task: str,
    sandbox: Sandbox | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Verdict]:
    """Verdicts for many (sample, prediction) pairs, in order.

    Identical pairs are judged once; identical sandbox jobs run once; calls of the same sample's
    `f` on different literal arguments share one child (each on a fresh copy of the code, re-run
    alone if that child fails as a whole). Literal output predictions never leave this process.
    """
    if task not in TASKS:
        raise ValueError(f"task must be 'output' or 'input', not {task!r}")
    pairs = list(pairs)
    index: dict[tuple[str, str, str], int] = {}
    unique: list[tuple[Sample, str]] = []
    for sample, prediction in pairs:
        key = (sample.id, sample.code, prediction)
        if key not in index:
            index[key] = len(unique)
            unique.append((sample, prediction))
    results: list[Verdict | None] = [None] * len(unique)
    done = [0]
    total = len(unique)

    def finish(slot: int, verdict: Verdict) -> None:
        results[slot] = verdict
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    waiting: list[tuple[int, _Steps, _Request]] = []
    for slot, (sample, prediction) in enumerate(unique):
        steps = _steps(sample, task, prediction)
        try:
            waiting.append((slot, steps, next(steps)))
        except StopIteration as stop:
            finish(slot, stop.value)
    box = sandbox
    kept = _Kept()  # across rounds: f(*[x]) needs the same run as f(x)
    while waiting:
        box = box or default_sandbox()
        waiting = _round(box, waiting, kept, finish)
    return [results[index[(s.id, s.code, p)]] for s, p in pairs]  # type: ignore[misc]


class _Kept:
    """Outcomes kept from earlier rounds, within a byte budget: identical jobs of later rounds
    reuse them; past the budget (huge values) a later identical job simply runs again."""

    BUDGET = 64 * 1024 * 1024

    def __init__(self) -> None:
        self.outcomes: dict[str, Outcome] = {}
        self.bytes = 0

    def keep(self, key: str, outcome: Outcome) -> None:
        cost = len(key) + outcome.size
        if key not in self.outcomes and self.bytes + cost <= self.BUDGET:
            self.outcomes[key] = outcome
            self.bytes += cost


def _round(
    box: Sandbox,
    waiting: list[tuple[int, _Steps, _Request]],
    kept: _Kept,
    finish: Callable[[int, Verdict], None],
) -> list[tuple[int, _Steps, _Request]]:
    """Run every job the waiting checks asked for; hand each check its answer as soon as all of
    its jobs are done, and forget each outcome once every check waiting on it has it. So the
    scorer holds the values of the checks in flight, never those of the whole file."""
    next_round: list[tuple[int, _Steps, _Request]] = []
    missing: list[int] = []  # per waiting check: how many of its jobs are still to come
    waiters: dict[str, list[int]] = {}  # job key -> the waiting checks that asked for it
    users: dict[str, int] = {}  # job key -> checks not yet answered that need its outcome
    got: dict[str, Outcome] = {}
    distinct: dict[str, _Job] = {}
    for position, (_, _, request) in enumerate(waiting):
        keys = {job.key: job for job in _jobs_of(request)}
        missing.append(len(keys))
        for key, job in keys.items():
            waiters.setdefault(key, []).append(position)
            users[key] = users.get(key, 0) + 1
            distinct.setdefault(key, job)

    def answer(position: int) -> None:
        slot, steps, request = waiting[position]
        reply: Any = (
            tuple(got[job.key] for job in request)
            if isinstance(request, tuple)
            else got[request.key]
        )
        for key in {job.key for job in _jobs_of(request)}:
            users[key] -= 1
            if users[key] == 0:
                del got[key]  # nobody else needs this value: let it go
        try:
            next_round.append((slot, steps, steps.send(reply)))
        except StopIteration as stop:
            finish(slot, stop.value)

    def arrived(key: str, outcome: Outcome) -> None:
        got[key] = outcome
        for position in waiters.pop(key):
            missing[position] -= 1
            if missing[position] == 0:
                answer(position)

    todo = [job for key, job in distinct.items() if key not in kept.outcomes]
    for key in [key for key in distinct if key in kept.outcomes]:
        arrived(key, kept.outcomes[key])
    for key, outcome in _stream_jobs(box, todo):
        kept.keep(key, outcome)
        arrived(key, outcome)
    return next_round


def _jobs_of(request: _Request) -> tuple[_Job, ...]:
    return request if isinstance(request, tuple) else (request,)


def _stream_jobs(box: Sandbox, jobs: list[_Job]) -> Iterator[tuple[str, Outcome]]:
    """Run each distinct job once, yielding (key, outcome) as they finish; batchable jobs share
    children (`run_many`), 32 at a time, and what a batch could not settle runs again alone."""
    distinct: dict[str, _Job] = {}
    for job in jobs:
        distinct.setdefault(job.key, job)
    singles: list[_Job] = []
    groups: dict[Limits | None, list[_Job]] = {}
    for job in distinct.values():
        if job.batchable:
            groups.setdefault(job.limits, []).append(job)
        else:
            singles.append(job)
    batches: dict[str, list[_Job]] = {}
    runs: list[_Job] = []
    for limits, group in groups.items():
        group.sort(key=lambda j: j.payload["code"])  # a sample's jobs together: fewer retries
        for start in range(0, len(group), _BATCH_SIZE):
            chunk = group[start : start + _BATCH_SIZE]
            if len(chunk) == 1:
                singles.extend(chunk)
                continue
            items = [{"job": j.name.partition(":")[2]} | j.payload for j in chunk]
            each = limits or box.limits
            # Room for one item to use its whole time plus all the quick ones; see `run_many`.
            whole = replace(each, timeout=2 * each.timeout + 1, cpu_seconds=None)
            batch = _Job(RUN_MANY, {"items": items, "timeout": each.timeout}, whole)
            batches[batch.key] = chunk
            runs.append(batch)
    runs += singles
    retry: list[_Job] = []
    for job, result in _unordered(box, runs):
        if job.key not in batches:
            yield job.key, result
            continue
        members = batches.pop(job.key)
        parts = result.value if result.ok and type(result.value) is list else None
        if parts is None or len(parts) != len(members):
            retry.extend(members)
            continue
        share = result.elapsed / len(members)
        size = result.size // len(members)
        for member, part in zip(members, parts, strict=True):
            status, value = (
                (part + [None, None])[:2] if type(part) is list else ("bad_result", None)
            )
            if status == "ok":
                yield member.key, Outcome("ok", value, "", share, size)
            elif status in ("exception", "timeout"):
                yield member.key, Outcome(status, None, str(value), share)
            else:
                retry.append(member)  # skipped, memory, odd values: judge it alone
        del parts, result
    for job, result in _unordered(box, retry):
        yield job.key, result


_BATCH_SIZE = 32
"""Most jobs sharing one child: a batch that times out is re-run job by job, so keep it modest."""


def _unordered(box: Sandbox, jobs: list[_Job]) -> Iterator[tuple[_Job, Outcome]]:
    items = ((job.name, job.payload, job.limits) for job in jobs)
    for position, outcome in box.map_unordered(items):
        yield jobs[position], outcome


# --------------------------------------------------------------------------------------------
# A scored generations file
# --------------------------------------------------------------------------------------------


@dataclass
class ScoredSet:
    """Verdicts for a whole generations file: per sample, one verdict per prediction, in order."""

    task: str
    generations: Generations
    verdicts: dict[str, list[Verdict]]

    def counts(self, official: bool = False) -> list[tuple[int, int]]:
        """(n, c) per sample: generations and how many passed (ours, or the official check's)."""
        return [
            (len(vs), sum(bool(v.official) if official else v.passed for v in vs))
            for vs in self.verdicts.values()
        ]

    def pass_at(self, k: int, official: bool = False) -> float | None:
        """Mean pass@k x100; None if some sample has fewer than k generations."""
        counts = self.counts(official)
        if not counts or min(n for n, _ in counts) < k:
            return None
        return mean_pass_at_k(counts, k)

    def intervals(self, k: int, official: bool = False) -> dict[str, float] | None:
        """Bootstrap percentiles (2.5 / 25 / 50 / 75 / 97.5) of pass@k x100 over samples."""
        counts = self.counts(official)
        if not counts or min(n for n, _ in counts) < k:
            return None
        return bootstrap(counts, k)

    def pass_rate(self, sample_id: str) -> float | None:
        """Fraction of this sample's predictions that pass (ours); None if it has none."""
        verdicts = self.verdicts.get(sample_id)
        if not verdicts:
            return None
        return sum(v.passed for v in verdicts) / len(verdicts)

    def kinds(self) -> Counter[str]:
        """How many predictions ended in each verdict kind."""
        return Counter(v.kind for vs in self.verdicts.values() for v in vs)

    def disagreements(self) -> list[tuple[str, int, Verdict]]:
        """(sample id, index, verdict) wherever the official spliced check judges differently."""
        return [
            (sample_id, index, verdict)
            for sample_id, vs in self.verdicts.items()
            for index, verdict in enumerate(vs)
            if verdict.disagrees
        ]

    @property
    def size(self) -> int:
        return sum(len(vs) for vs in self.verdicts.values())

    def summary(self) -> dict[str, Any]:
        """The machine-readable summary (`cruxtui score --json`)."""
        scores: dict[str, Any] = {}
        for name, official in (("strict", False), ("official", True)):
            scores[name] = {f"pass_at_{k}": self.pass_at(k, official) for k in (1, 5)} | {
                f"pass_at_{k}_intervals": self.intervals(k, official) for k in (1, 5)
            }
        kinds = self.kinds()
        return {
            "task": self.task,
            "samples": len(self.verdicts),
            "predictions": self.size,
            "scores": scores,
            "kinds": {kind: kinds[kind] for kind in KINDS if kinds[kind]},
            "disagreements": [
                {
                    "sample": sample_id,
                    "index": index,
                    "official": v.official,
                    "strict": v.passed,
                    "kind": v.kind,
                    "reason": v.reason,
                }
                for sample_id, index, v in self.disagreements()
            ],
        }

    def to_document(self) -> dict[str, Any]:
        """The scored file: the benchmark's keys (official-compatible), ours under "cruxtui"."""
        official = {sid: [bool(v.official) for v in vs] for sid, vs in self.verdicts.items()}
        return {
            "raw_generations": self.generations,
            "raw_scored_generations": official,
            "pass_at_1": self.pass_at(1, official=True),
            "pass_at_5": self.pass_at(5, official=True),
            "cruxtui": {
                "task": self.task,
                "summary": self.summary(),
                "verdicts": {sid: [v.to_json() for v in vs] for sid, vs in self.verdicts.items()},
            },
        }


def score_generations(
    dataset: Dataset,
    generations: Generations,
    task: str,
    sandbox: Sandbox | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ScoredSet:
    """Judge every prediction of a generations file (ids must exist in `dataset`)."""
    pairs = [(dataset[sid], p) for sid, predictions in generations.items() for p in predictions]
    flat = check_many(pairs, task, sandbox=sandbox, progress=progress)
    verdicts: dict[str, list[Verdict]] = {}
    position = 0
    for sample_id, predictions in generations.items():
        verdicts[sample_id] = flat[position : position + len(predictions)]
        position += len(predictions)
    return ScoredSet(task, generations, verdicts)
