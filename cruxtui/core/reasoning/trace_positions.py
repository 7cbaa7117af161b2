"""A trace read as positions a chain's steps can be placed on.

Position k is trace step k read as "the state once the previous line of this frame has run": the
visible variables (f's own, with a helper's or comprehension's on top), which condition just
ran and how it came out, whether a loop was just left, which iteration of f's loop it belongs
to, and the values the line at k computes (`Step.values`, recorded by the tracer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cruxtui.core.reasoning.code_facts import CodeFacts


@dataclass
class Positions:
    """Per trace step: the line that just ran in its frame, the visible values, and markers."""

    ran: list[int | None]
    env: list[dict[str, str]]
    cond: list[tuple[int, bool] | None]
    """The condition that just ran in this frame (its line), and its outcome."""
    loop_exit: list[bool]
    iteration: list[int | None]
    """Iteration of f's single loop this state belongs to (depth 0)."""
    iterations: int | None
    """How many times the single loop's body ran (f's own frame)."""
    returns_at: int | None
    """Position of f's own return."""
    first_line: int
    top: list[bool]
    """The position belongs to the first activation of f (not a helper, not recursion)."""
    computed: list[dict[str, str]] = field(default_factory=list)
    """Sub-expression source (spaces removed) -> value, as the line at this position computes."""
    sources: list[tuple[tuple[str, str], ...]] = field(default_factory=list)
    """The same sub-expressions with their source as written, and their values."""
    loop_values: dict[str, list[str]] = field(default_factory=dict)
    """A `for` target of f's own frame -> the values it takes, in order (loops entered once)."""
    loop_values_at: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    """The same per `for` header line, so a loop named by its place ("the second loop") is read
    even when another loop binds the same name."""

    def __len__(self) -> int:
        return len(self.ran)


def positions(trace: Any, shape: CodeFacts) -> Positions:
    steps = trace.steps
    n = len(steps)
    ran: list[int | None] = [None] * n
    env: list[dict[str, str]] = [{}] * n
    cond: list[tuple[int, bool] | None] = [None] * n
    loop_exit = [False] * n
    iteration: list[int | None] = [None] * n
    last_line: dict[tuple[Any, ...], int] = {}
    top_env: dict[str, str] = {}
    header = shape.loops[0] if shape.single_loop else None
    iters = 0
    current_iter: int | None = None
    returns_at: int | None = None
    first_line = 0
    for k, st in enumerate(steps):
        frame = (getattr(st, "frame", 0), st.depth, st.func)
        if st.event == "call":
            last_line.pop(frame, None)
        prev = last_line.get(frame)
        ran[k] = prev
        if st.depth == 0:
            top_env = dict(st.locals)
            env[k] = top_env
        else:
            env[k] = {**top_env, **dict(st.locals)}
        if prev is not None and st.event in ("line", "return"):
            body = shape.cond_body.get(prev)
            if body is not None and prev in shape.cond_body and st.event == "line":
                cond[k] = (prev, st.line == body)
            elif prev in shape.inline_exit and (st.event == "return" or st.line != prev):
                cond[k] = (prev, st.event == "return" and st.line == prev)
            elif prev in shape.inline_else and st.event == "line":
                cond[k] = (prev, st.line != shape.inline_else[prev])
            if st.depth == 0:
                for h, _b, end in shape.loops:
                    if h <= prev <= end and not (h <= st.line <= end):
                        loop_exit[k] = True
        if st.depth == 0 and header is not None and st.event == "line":
            h, b, end = header
            if prev == h and st.line == b:
                iters += 1
                current_iter = iters
            elif not (h <= st.line <= end) and prev is not None and h <= prev <= end:
                current_iter = None
        if st.depth == 0:
            iteration[k] = current_iter
        elif k > 0:
            iteration[k] = iteration[k - 1]
        if st.event == "line" and st.depth == 0 and not first_line:
            first_line = k
        if st.event == "return" and st.depth == 0:
            returns_at = k
        if st.event != "call":
            last_line[frame] = st.line
    # The header position that ends an iteration still shows that iteration's results.
    if header is not None:
        for k in range(1, n):
            if (
                steps[k].depth == 0
                and steps[k].line == header[0]
                and iteration[k] is None
                and ran[k] is not None
            ):
                iteration[k] = iteration[k - 1]
    top_frame = getattr(steps[0], "frame", 0) if steps else 0
    top = [st.depth == 0 and getattr(st, "frame", 0) == top_frame for st in steps]
    positions_ = Positions(
        ran, env, cond, loop_exit, iteration, iters if header else None, returns_at, first_line, top
    )

    positions_.sources = [tuple(getattr(st, "values", ())) for st in steps]
    positions_.computed = [
        {src.replace(" ", ""): value for src, value in pairs} for pairs in positions_.sources
    ]
    positions_.loop_values_at = _loop_values(steps, shape, ran, top)
    positions_.loop_values = _by_name(positions_.loop_values_at)
    return positions_


def _by_name(per_header: dict[int, dict[str, list[str]]]) -> dict[str, list[str]]:
    """Per target name, the values of the one loop binding it (two loops over the same name:
    which is meant is unclear)."""
    seen: dict[str, int] = {}
    out: dict[str, list[str]] = {}
    for values in per_header.values():
        for t, vals in values.items():
            seen[t] = seen.get(t, 0) + 1
            out[t] = vals
    return {t: vals for t, vals in out.items() if seen[t] == 1}


def _loop_values(
    steps: list[Any], shape: CodeFacts, ran: list[int | None], top: list[bool]
) -> dict[int, dict[str, list[str]]]:
    """Per `for` header line, per target name: the values it takes, read where the body starts
    each time, for loops of f's own frame that are entered once (a loop run afresh per outer
    iteration has no single list of values)."""
    out: dict[int, dict[str, list[str]]] = {}
    entries: dict[int, int] = {}
    for h, b, end in shape.loops:
        targets = shape.for_targets.get(h)
        if not targets:
            continue
        values: dict[str, list[str]] = {t: [] for t in targets}
        for k, st in enumerate(steps):
            if not top[k] or st.event != "line":
                continue
            came = ran[k]
            if st.line == h and (came is None or not h <= came <= end):
                entries[h] = entries.get(h, 0) + 1
            if st.line == b and ran[k] == h:
                shown = dict(st.locals)
                for t in targets:
                    if t in shown:
                        values[t].append(shown[t])
        if entries.get(h, 0) == 1:
            out[h] = values
    return out


def condition_lines(claim: Any, shape: CodeFacts) -> set[int]:
    """The `if`/`while` lines an outcome claim may speak of (all of them when it names none)."""
    from rapidfuzz import fuzz

    if claim.line is not None:
        return {claim.line} if claim.line in shape.cond_body else set()
    if not shape.cond_body:
        return set()
    if claim.condition:
        scored = sorted(
            ((fuzz.ratio(claim.condition, text), line) for line, text in shape.cond_text.items()),
            reverse=True,
        )
        if scored and scored[0][0] >= 70:
            return {scored[0][1]}
    if len(shape.cond_body) == 1:
        # "The condition is false": with one `if`/`while` in f there is no doubt which.
        return set(shape.cond_body)
    return set()
