"""Verdicts with reasons for predictions of both tasks: `check` one, `check_many` in bulk.

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

The pieces: `strict_check` (our verdict, as steps), `official_check` (the benchmark's), and
`check_jobs` (the sandbox work they ask for, batched); `scored_file` scores a whole file.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from typing import Any

from cruxtui.core.data.dataset import Sample
from cruxtui.core.sandbox.pool import Outcome, Sandbox, default_sandbox
from cruxtui.core.scoring.check_jobs import Job, Request, jobs_of, stream_jobs
from cruxtui.core.scoring.official_check import derived_official, official_passed, official_plan
from cruxtui.core.scoring.strict_check import StrictVerdict, input_steps, output_steps

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


_Steps = Generator[Request, Any, Verdict]


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
        verdict: Verdict = stop.value
        return verdict


def _steps(sample: Sample, task: str, prediction: str) -> _Steps:
    """Our verdict, and the official one; where the latter needs its own run, both share a round."""
    strict_steps = (output_steps if task == "output" else input_steps)(sample, prediction)
    plan = official_plan(sample, task, prediction)
    try:
        first: Job | None = next(strict_steps)
    except StopIteration as stop:
        first, strict = None, stop.value
    official: bool
    if isinstance(plan, Job):
        if first is None:
            official = official_passed((yield plan))
        else:
            official_outcome, outcome = yield (plan, first)
            official = official_passed(official_outcome)
            strict = yield from _resume(strict_steps, outcome)
    else:
        if first is not None:
            strict = yield from _resume(strict_steps, (yield first))
        if isinstance(plan, bool):
            official = plan
        else:
            official = yield from derived_official(sample, prediction, strict)
    return Verdict(strict.passed, strict.kind, strict.reason, strict.produced, official)


def _resume(
    steps: Generator[Job, Outcome, StrictVerdict], outcome: Outcome
) -> Generator[Job, Outcome, StrictVerdict]:
    """Carry on a strict check that has just been sent `outcome` for its pending job."""
    while True:
        try:
            job = steps.send(outcome)
        except StopIteration as stop:
            strict: StrictVerdict = stop.value
            return strict
        outcome = yield job


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
    results: dict[int, Verdict] = {}
    done = [0]
    total = len(unique)

    def finish(slot: int, verdict: Verdict) -> None:
        results[slot] = verdict
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    waiting: list[tuple[int, _Steps, Request]] = []
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
    return [results[index[(s.id, s.code, p)]] for s, p in pairs]


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
    waiting: list[tuple[int, _Steps, Request]],
    kept: _Kept,
    finish: Callable[[int, Verdict], None],
) -> list[tuple[int, _Steps, Request]]:
    """Run every job the waiting checks asked for; hand each check its answer as soon as all of
    its jobs are done, and forget each outcome once every check waiting on it has it. So the
    scorer holds the values of the checks in flight, never those of the whole file."""
    next_round: list[tuple[int, _Steps, Request]] = []
    missing: list[int] = []  # per waiting check: how many of its jobs are still to come
    waiters: dict[str, list[int]] = {}  # job key -> the waiting checks that asked for it
    users: dict[str, int] = {}  # job key -> checks not yet answered that need its outcome
    got: dict[str, Outcome] = {}
    distinct: dict[str, Job] = {}
    for position, (_, _, request) in enumerate(waiting):
        keys = {job.key: job for job in jobs_of(request)}
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
        for key in {job.key for job in jobs_of(request)}:
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
    for key, outcome in stream_jobs(box, todo):
        kept.keep(key, outcome)
        arrived(key, outcome)
    return next_round
