"""Traced execution of a sample: the steps `f` takes, as data a person can step through.

`trace(code, call)` runs the call in the sandbox (the call may come from a model) and returns a
`Trace`: ordered steps with the event, line, nesting depth, locals in definition order (bounded
reprs) and which of them changed, then the return value or the exception. The tracing itself
happens in the child process (`trace_job`, built on `cruxtui.core.sandbox.jobs.tracer`); the child sends only
what changed at each step and this module rebuilds full locals, so even a 10,000-step trace
crosses the process boundary quickly.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from cruxtui.core.sandbox.jobs import tracer

if TYPE_CHECKING:
    from cruxtui.core.data.dataset import Sample
    from cruxtui.core.sandbox.pool import Sandbox

JOB = "cruxtui.core.trace.steps:trace_job"
DEFAULT_MAX_STEPS = 10_000
DEFAULT_TIMEOUT = 3.0
"""Seconds the traced call may run (the benchmark's 3 s); the sandbox gets a little more, so that
the child stops itself first and still sends back the steps recorded so far."""

_SANDBOX_GRACE = 1.0


@dataclass
class Step:
    """One event of the traced run. For `line` the event fires BEFORE the line runs, so `locals`
    is the state the line starts from; `changed` names what differs from this frame's previous
    step (at a frame's `call` step: its arguments)."""

    index: int
    event: str  # "call" | "line" | "return" | "exception"
    line: int  # 1-based line number in the sample's code
    depth: int  # 0 for f itself, +1 per nested frame (helper fn, lambda, comprehension)
    func: str  # code object name: "f", "<lambda>", "<listcomp>", ...
    locals: list[tuple[str, str]]  # (name, bounded repr) in definition order
    changed: list[str]
    value: str | None = None  # repr of return value / "Type: msg" for exception events
    frame: int = 0  # which function activation (same number = same frame, e.g. loop iterations)
    values: list[tuple[str, str]] = field(default_factory=list)
    """For `line` steps: (source, bounded repr) of the line's side-effect-free sub-expressions
    (call results, subscripts, slices, comparisons), as they evaluate on the state the line
    starts from (`cruxtui.core.sandbox.jobs.line_values`)."""


@dataclass
class Trace:
    code: str
    call: str
    steps: list[Step]
    return_repr: str | None  # repr of f's return value, None if it raised / timed out
    exception: str | None  # "Type: message" if the call raised
    truncated: bool  # step cap hit
    timeout: bool
    error: str | None  # sandbox-level failure (crash, memory, bad call text)
    numsteps: int  # trace events incl. opcodes, as the benchmark's filter counted them
    stdout: str = ""  # what the call printed (bounded)

    @property
    def ended(self) -> str:
        """How the run ended, in words, for status lines: the value, the exception, or why not."""
        if self.error:
            return f"error: {self.error}"
        if self.timeout:
            return "timed out"
        if self.truncated:
            return f"stopped after {len(self.steps):,} steps (step cap)"
        if self.exception:
            return f"raised {self.exception}"
        return f"returned {self.return_repr}"

    @property
    def ok(self) -> bool:
        return self.return_repr is not None and not (self.error or self.timeout or self.truncated)

    def effects(self, index: int) -> list[tuple[str, str]]:
        """What running step `index`'s line did to its frame's variables: the changes seen at the
        frame's next step (for a `call` step, the arguments it bound)."""
        step = self.steps[index]
        if step.event == "call":
            return [(n, r) for n, r in step.locals if n in step.changed]
        if step.event != "line":
            return []
        after = self._frame_links()[1][index]
        if after is None:
            return []
        later = self.steps[after]
        shown = dict(later.locals)
        return [(n, shown[n]) for n in later.changed if n in shown]

    def before(self, index: int) -> dict[str, str]:
        """The locals of step `index`'s frame at its previous step (empty at the frame's call):
        what the changed variables were before."""
        earlier = self._frame_links()[0][index]
        return dict(self.steps[earlier].locals) if earlier is not None else {}

    def _frame_links(self) -> tuple[list[int | None], list[int | None]]:
        """For each step, the index of the previous and of the next step of the same frame
        (two passes over the steps, computed once)."""
        cached = self.__dict__.get("_links")
        if cached is None or len(cached[0]) != len(self.steps):
            previous: list[int | None] = [None] * len(self.steps)
            following: list[int | None] = [None] * len(self.steps)
            last: dict[int, int] = {}
            for step in self.steps:
                previous[step.index] = last.get(step.frame)
                last[step.frame] = step.index
            last.clear()
            for step in reversed(self.steps):
                following[step.index] = last.get(step.frame)
                last[step.frame] = step.index
            cached = self.__dict__["_links"] = (previous, following)
        return cached

    def visits(self) -> dict[int, list[int]]:
        """Line number -> indexes of the steps that arrive at it (`line` events, and `call` at a
        function's `def` line), in order: where "next visit of this line" goes."""
        found: dict[int, list[int]] = {}
        for step in self.steps:
            if step.event in ("call", "line"):
                found.setdefault(step.line, []).append(step.index)
        return found

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for step in data["steps"]:
            step["locals"] = [list(pair) for pair in step["locals"]]
            step["values"] = [list(pair) for pair in step["values"]]
        return data

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Trace:
        steps = [
            Step(
                index=s["index"],
                event=s["event"],
                line=s["line"],
                depth=s["depth"],
                func=s["func"],
                locals=[(n, r) for n, r in s["locals"]],
                changed=list(s["changed"]),
                value=s.get("value"),
                frame=int(s.get("frame", 0)),
                values=[(src, r) for src, r in s.get("values", [])],
            )
            for s in d["steps"]
        ]
        return cls(
            code=d["code"],
            call=d["call"],
            steps=steps,
            return_repr=d.get("return_repr"),
            exception=d.get("exception"),
            truncated=bool(d.get("truncated")),
            timeout=bool(d.get("timeout")),
            error=d.get("error"),
            numsteps=int(d.get("numsteps", 0)),
            stdout=d.get("stdout", ""),
        )


def trace_job(payload: dict[str, Any]) -> dict[str, Any]:
    """Sandbox job (runs in the isolated child): trace and return the compact wire form."""
    return tracer.run(
        str(payload["code"]),
        str(payload["call"]),
        expected=payload.get("expected"),
        max_steps=int(payload.get("max_steps", DEFAULT_MAX_STEPS)),
        timeout=float(payload.get("timeout", DEFAULT_TIMEOUT)),
        line_values=payload.get("line_values", True) is True,
    )


def payload_for(
    code: str,
    call: str,
    *,
    expected: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    return {
        "code": code,
        "call": call,
        "expected": expected,
        "max_steps": max_steps,
        "timeout": timeout,
    }


def from_wire(code: str, call: str, wire: dict[str, Any]) -> Trace:
    """Rebuild a Trace from `trace_job`'s result: replay the per-step deltas into full locals.

    The steps arrive as one JSON text (decoding it in C is what keeps tracing all samples fast)
    written by a process that also ran untrusted code, so every field is type-checked here:
    anything unexpected raises ValueError.
    """
    raw = json.loads(wire["steps"])
    if type(raw) is not list:
        raise ValueError("steps is not a list")
    exprs = _checked_exprs(wire.get("exprs", {}))
    frames: dict[int, dict[str, str]] = {}
    steps: list[Step] = []
    for index, record in enumerate(raw):
        if type(record) is not list or len(record) not in (8, 9):
            raise ValueError("a step is not a list of 8 or 9 fields")
        event, line, depth, func, fid, changes, removed, value = _checked(record[:8])
        computed: list[tuple[str, str]] = []
        if len(record) == 9:
            sources = exprs.get(line, [])
            for pair in record[8]:
                if not (
                    type(pair) is list
                    and len(pair) == 2
                    and type(pair[0]) is int
                    and type(pair[1]) is str
                    and 0 <= pair[0] < len(sources)
                ):
                    raise ValueError("a step has malformed sub-expression values")
                computed.append((sources[pair[0]], pair[1]))
        shown = frames.setdefault(fid, {})
        for name in removed:
            shown.pop(name, None)
        for name, text in changes:
            shown[name] = text
        steps.append(
            Step(
                index,
                event,
                line,
                depth,
                func,
                list(shown.items()),
                [n for n, _ in changes],
                value,
                fid,
                computed,
            )
        )
    return Trace(
        code=code,
        call=call,
        steps=steps,
        return_repr=_text_or_none(wire["return_repr"]),
        exception=_text_or_none(wire["exception"]),
        truncated=wire["truncated"] is True,
        timeout=wire["timeout"] is True,
        error=_text_or_none(wire["error"]),
        numsteps=int(wire["numsteps"]),
        stdout=_text_or_none(wire.get("stdout")) or "",
    )


_EVENTS = frozenset({"call", "line", "return", "exception"})


def _checked_exprs(raw: Any) -> dict[int, list[str]]:
    """The per-line sub-expression sources of the wire form, type-checked."""
    if type(raw) is not dict or not all(
        type(k) is str and k.isdigit() and type(v) is list and all(type(x) is str for x in v)
        for k, v in raw.items()
    ):
        raise ValueError("malformed sub-expression table")
    return {int(k): v for k, v in raw.items()}


def _checked(record: Any) -> tuple[str, int, int, str, int, list[list[str]], list[str], str | None]:
    """One wire step (its first 8 fields), or ValueError if any field has the wrong type."""
    if type(record) is not list or len(record) != 8:
        raise ValueError("a step is not a list of 8 fields")
    event, line, depth, func, fid, changes, removed, value = record
    if (
        event not in _EVENTS
        or not all(type(v) is int for v in (line, depth, fid))
        or type(func) is not str
    ):
        raise ValueError("a step has a bad event, line, depth, function or frame")
    if type(changes) is not list or not all(
        type(c) is list and len(c) == 2 and type(c[0]) is str and type(c[1]) is str for c in changes
    ):
        raise ValueError("a step has malformed changes")
    if type(removed) is not list or not all(type(n) is str for n in removed):
        raise ValueError("a step has malformed removals")
    return event, line, depth, func, fid, changes, removed, _text_or_none(value)


def _text_or_none(value: Any) -> str | None:
    if value is None or type(value) is str:
        return value
    raise ValueError(f"expected text, got {type(value).__name__}")


def failed(code: str, call: str, error: str) -> Trace:
    """A trace that never ran (bad call text, sandbox crash, memory limit...)."""
    return Trace(code, call, [], None, None, False, False, error, 0)


def trace(
    code: str,
    call: str,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    sandbox: Sandbox | None = None,
    expected: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Trace:
    """Run `call` (e.g. `"f('abc')"`) against `code` in the sandbox and return its trace.

    `expected`, when given, is the benchmark's output text: `numsteps` then counts the program
    the benchmark's filter ran, `<code>\\nassert <call> == <expected>`. Bad call text is reported
    in `Trace.error` without starting a process.
    """
    problem = tracer.problem_with(call, "call")
    if problem:
        return failed(code, call, problem)
    box = sandbox if sandbox is not None else _default_sandbox()
    payload = payload_for(code, call, expected=expected, max_steps=max_steps, timeout=timeout)
    outcome = box.run(JOB, payload, limits=_limits(box, timeout))
    return from_outcome(code, call, outcome)


def trace_many(
    items: list[tuple[str, str, str | None]],
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    sandbox: Sandbox | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[Trace]:
    """Trace `(code, call, expected)` items in parallel on the sandbox's workers, in order."""
    box = sandbox if sandbox is not None else _default_sandbox()
    jobs = [
        (JOB, payload_for(c, k, expected=e, max_steps=max_steps, timeout=timeout))
        for c, k, e in items
    ]
    outcomes = box.map(jobs, limits=_limits(box, timeout))
    return [from_outcome(c, k, o) for (c, k, _), o in zip(items, outcomes, strict=True)]


def trace_sample(
    sample: Sample,
    call: str | None = None,
    *,
    sandbox: Sandbox | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Trace:
    """Trace a sample on its own input (and count numsteps as the benchmark did) or on `call`."""
    call = call.strip() if call is not None else sample.call
    expected = sample.output if call == sample.call else None
    return trace(sample.code, call, expected=expected, sandbox=sandbox, max_steps=max_steps)


def from_outcome(code: str, call: str, outcome: Any) -> Trace:
    """Turn a sandbox `Outcome` of `trace_job` into a Trace (a dead child becomes `error`)."""
    if outcome.status == "ok" and isinstance(outcome.value, dict):
        try:
            return from_wire(code, call, outcome.value)
        except (KeyError, TypeError, ValueError, RecursionError) as exc:
            return failed(code, call, f"malformed trace from the sandbox ({exc})")
    if outcome.status == "timeout":  # stuck where the tracer cannot stop it (a long builtin call)
        return Trace(code, call, [], None, None, False, True, None, 0)
    return failed(code, call, f"{outcome.status}: {outcome.error}")


def _limits(box: Sandbox, timeout: float) -> Any:
    from dataclasses import replace

    base = getattr(box, "limits", None)
    if base is None:
        from cruxtui.core.sandbox.pool import Limits

        base = Limits()
    return replace(base, timeout=timeout + _SANDBOX_GRACE)


def _default_sandbox() -> Sandbox:
    from cruxtui.core.sandbox.pool import default_sandbox

    return default_sandbox()
