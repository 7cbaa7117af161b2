"""Hold a chain of thought against the real execution: where does the reasoning first go wrong?

`align(chain, trace)` places each reasoning step of a parsed chain (`cruxtui.core.reasoning.chain_parse`) on a
*position* of the trace — a trace step, read as "the state once the previous line of this frame has
run" — by a monotone dynamic programme maximising how well the steps fit: claimed values that equal
the traced values weigh most, then the loop iteration, loop exit or call a step speaks of, the
condition outcome, and last the fuzzy similarity (rapidfuzz) of the step's words with the source line.

Each claim is then judged:
- **consistent** when the traced value at the step's position (or, for a step no value pins down,
  anywhere between the neighbouring pinned steps) equals the claimed one;
- **contradicted** when no such position has it, the value is known there, and both sides are Python
  literals — with the true value attached;
- **unverifiable** otherwise (unknown name, values that are not literals, a hypothetical "if ...").

Values compare as Python objects (`ast.literal_eval`), so `'ab'` and `"ab"` agree, `{1: 2, 3: 4}` and
`{3: 4, 1: 2}` agree, but `1` and `True` do not. The first contradicted claim is the first divergence.
The rules lean towards "unverifiable": a false alarm on a correct chain costs the user more than a
missed slip.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from cruxtui.core.reasoning.chain_parse import (
    BINDING,
    CONDITION,
    ITERATION,
    LOOP_COUNT,
    RAISE,
    RETURN,
    Chain,
    Claim,
    ReasoningStep,
    code_names,
    literal_value,
    parse_chain,
)
from cruxtui.core.reasoning.safe_eval import evaluate_condition
from cruxtui.core.util import safe_ast

CONSISTENT = "consistent"
CONTRADICTED = "contradicted"
UNVERIFIABLE = "unverifiable"

# Weights of the alignment score; a value match outweighs any amount of wording similarity.
_W_VALUE = 4.0
_W_LINE = 3.0
_W_PLACE = 2.0
_W_COND = 1.5
_W_TEXT = 0.6
_TEXT_FLOOR = 60.0

_HYPOTHETICAL = re.compile(
    r"^\s*(?:if|otherwise|else|suppose|assuming|in\s+case|had|were)\b|\b(?:if\s+it\s+were|had\s+been|"
    r"would\s+have|otherwise|in\s+case|suppose|hypothetically)\b",
    re.I,
)


@dataclass
class Judgement:
    """The verdict on one claim, and where in the trace it was checked."""

    step: int
    """Index of the reasoning step the claim is in."""
    claim: Claim
    verdict: str
    trace_step: int | None
    true_value: str | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "reasoning_step": self.step,
            "kind": self.claim.kind,
            "claim": self.claim.text,
            "name": self.claim.name,
            "claimed": self.claim.value,
            "verdict": self.verdict,
            "trace_step": self.trace_step,
            "true_value": self.true_value,
            "note": self.note,
        }


@dataclass
class Alignment:
    """A chain placed on a trace: per reasoning step its trace step (or None) and all judgements."""

    chain: Chain
    trace: Any
    positions: list[int | None]
    judgements: list[Judgement] = field(default_factory=list)

    @property
    def first_divergence(self) -> Judgement | None:
        return next((j for j in self.judgements if j.verdict == CONTRADICTED), None)

    def judgements_of(self, step: int) -> list[Judgement]:
        return [j for j in self.judgements if j.step == step]

    def step_at(self, trace_step: int) -> int | None:
        """The reasoning step that speaks of the state at `trace_step`: the last step placed at or
        before it (None before the first placed step). Drives the highlight in the Trace screen."""
        best: int | None = None
        for i, pos in enumerate(self.positions):
            if pos is not None and pos <= trace_step:
                best = i
        return best

    def counts(self) -> dict[str, int]:
        out = {CONSISTENT: 0, CONTRADICTED: 0, UNVERIFIABLE: 0}
        for j in self.judgements:
            out[j.verdict] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        div = self.first_divergence
        return {
            "format": self.chain.format,
            "problems": self.chain.problems,
            "counts": self.counts(),
            "first_divergence": None
            if div is None
            else {
                "reasoning_step": div.step,
                "trace_step": div.trace_step,
                "claim": div.claim.text,
                "claimed": div.claim.value,
                "true": div.true_value,
            },
            "steps": [
                {
                    "index": s.index,
                    "text": s.text,
                    "trace_step": self.positions[s.index],
                    "claims": [j.to_json() for j in self.judgements_of(s.index)],
                }
                for s in self.chain.steps
            ],
        }


# --------------------------------------------------------------------------- values


class _Opaque:
    """A traced repr that is not a literal (an object, a cut value): never equal to a claim."""


_OPAQUE = _Opaque()


def _canon(obj: object) -> object:
    """A hashable key equal for equal values of the same kind (dict order ignored, 1 != True)."""
    if isinstance(obj, bool) or obj is None:
        return ("atom", repr(obj))
    if isinstance(obj, int | float):
        return ("num", float(obj)) if obj == obj else ("nan",)
    if isinstance(obj, complex):
        return ("complex", obj.real, obj.imag)
    if isinstance(obj, str | bytes):
        return (type(obj).__name__, obj)
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, tuple(_canon(x) for x in obj))
    if isinstance(obj, set | frozenset):
        return ("set", _sorted([_canon(x) for x in obj]))
    if isinstance(obj, dict):
        return ("dict", _sorted([(_canon(k), _canon(v)) for k, v in obj.items()]))
    return ("other", repr(obj))


def _sorted(keys: list[Any]) -> tuple[Any, ...]:
    """Keys in a fixed order. Sorted as they are, never by their repr: a repr of a nested key's
    repr doubles its backslashes at every level (200 nested dicts would need 2**200 bytes)."""
    try:
        return tuple(sorted(keys))
    except TypeError:
        return tuple(sorted(keys, key=hash))


@lru_cache(maxsize=65536)
def value_key(text: str) -> object:
    """The comparison key of a repr/literal text, or `_OPAQUE`."""
    obj = literal_value(text)
    if obj is not None and type(obj).__name__ == "_Bad":
        return _OPAQUE
    try:
        return _canon(obj)
    except RecursionError:
        return _OPAQUE


# --------------------------------------------------------------------------- the code's shape


@dataclass
class _Shape:
    """What the source says about conditions and loops, by line number."""

    lines: list[str]
    cond_body: dict[int, int | None]  # if/while test line -> first body line (None: same line)
    cond_text: dict[int, str]
    loops: list[tuple[int, int, int]]  # (header line, first body line, last line) of f's own loops
    single_loop: bool  # exactly one loop in f, comprehensions included
    loop_vars: set[str]  # names bound by for loops and comprehensions
    inline_exit: set[int]  # `if c: return x` on one line: taken iff f returns/raises right there
    inline_else: dict[int, int]  # `if c: x += 1` + `else:` below: not taken iff the else runs next


def _shape(code: str) -> _Shape:
    lines = code.splitlines()
    cond_body: dict[int, int | None] = {}
    cond_text: dict[int, str] = {}
    loops: list[tuple[int, int, int]] = []
    loop_vars: set[str] = set()
    inline_exit: set[int] = set()
    inline_else: dict[int, int] = {}
    n_loops = 0
    try:
        tree = safe_ast.parse(code)
    except SyntaxError:
        return _Shape(lines, {}, {}, [], False, set(), set(), {})
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While):
            first = node.body[0].lineno
            cond_body[node.lineno] = None if first == node.lineno else first
            if first == node.lineno and isinstance(node, ast.If):
                if isinstance(node.body[0], ast.Return | ast.Raise):
                    inline_exit.add(node.lineno)
                elif node.orelse and node.orelse[0].lineno != node.lineno:
                    inline_else[node.lineno] = node.orelse[0].lineno
            cond_text[node.lineno] = ast.get_source_segment(code, node.test) or ""
        if isinstance(node, ast.For | ast.While):
            loops.append((node.lineno, node.body[0].lineno, node.end_lineno or node.lineno))
        if isinstance(node, ast.For | ast.While | ast.comprehension):
            n_loops += 1
        if isinstance(node, ast.For | ast.comprehension):
            loop_vars.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    return _Shape(
        lines,
        cond_body,
        cond_text,
        loops,
        n_loops == 1 and len(loops) == 1,
        loop_vars,
        inline_exit,
        inline_else,
    )


# --------------------------------------------------------------------------- positions


@dataclass
class _Positions:
    """Per trace step: the line that just ran in its frame, the visible values, and markers."""

    ran: list[int | None]
    env: list[dict[str, str]]
    cond: list[
        tuple[int, bool] | None
    ]  # the condition that just ran at this frame, and its outcome
    loop_exit: list[bool]
    iteration: list[int | None]  # iteration of the single loop this state belongs to (depth 0)
    iterations: int | None  # how many times the single loop's body ran (depth-0 frame)
    returns_at: int | None  # position of f's own return
    first_line: int
    top: list[
        bool
    ]  # the position belongs to the first activation of f (not a helper, not recursion)


def _positions(trace: Any, shape: _Shape) -> _Positions:
    steps = trace.steps
    n = len(steps)
    ran: list[int | None] = [None] * n
    env: list[dict[str, str]] = [{}] * n
    cond: list[tuple[int, bool] | None] = [None] * n
    loop_exit = [False] * n
    iteration: list[int | None] = [None] * n
    last_line: dict[tuple[int, str], int] = {}
    top: dict[str, str] = {}
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
            top = dict(st.locals)
            env[k] = top
        else:
            env[k] = {**top, **dict(st.locals)}
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
    return _Positions(
        ran, env, cond, loop_exit, iteration, iters if header else None, returns_at, first_line, top
    )


# --------------------------------------------------------------------------- conditions


def _condition_lines(claim: Claim, shape: _Shape) -> set[int]:
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
    if len(shape.cond_body) == 1 or claim.condition is None:
        # "The condition is false": whichever condition ran there (all must disagree to contradict).
        return set(shape.cond_body)
    return set()


# --------------------------------------------------------------------------- alignment


def _step_line(step: ReasoningStep, shape: _Shape, pos: _Positions) -> int | None:
    """The source line whose effect a step states: a scratchpad `line N`, "after line N", or a quoted
    statement ("running `x += 1`") matching exactly one line that is not a condition. Only lines
    that ran count."""
    ran = set(pos.ran)
    if step.line is not None:
        return step.line if step.line in ran else None
    found: set[int] = set()
    for ref in step.code_refs:
        norm = ref.strip().rstrip(":")
        for no, src in enumerate(shape.lines, start=1):
            if no in shape.cond_body:
                continue
            s = src.strip().rstrip(":")
            if s and fuzz.ratio(norm, s) >= 90:
                found.add(no)
    if len(found) == 1:
        line = found.pop()
        return line if line in ran else None
    return None


def _step_scores(
    step: ReasoningStep, trace: Any, shape: _Shape, pos: _Positions, line: int | None
) -> list[float]:
    n = len(trace.steps)
    score = [0.0] * n
    text = step.text
    if len(text) > 3 and step.claims:
        sims: dict[int, float] = {}
        for line_no in {r for r in pos.ran if r is not None}:
            src = shape.lines[line_no - 1].strip() if 0 < line_no <= len(shape.lines) else ""
            if len(src) > 3:
                s = fuzz.partial_ratio(src, text)
                if s >= _TEXT_FLOOR:
                    sims[line_no] = _W_TEXT * (s - _TEXT_FLOOR) / (100 - _TEXT_FLOOR)
        if sims:
            for k, r in enumerate(pos.ran):
                if r in sims:
                    score[k] += sims[r]
    for claim in step.claims:
        if claim.kind == BINDING and claim.name:
            want = value_key(claim.value)
            if want is _OPAQUE:
                continue
            for k in range(n):
                have = pos.env[k].get(claim.name)
                if have is not None and value_key(have) == want:
                    score[k] += _W_VALUE
        elif claim.kind == CONDITION:
            lines = _condition_lines(claim, shape)
            for k, c in enumerate(pos.cond):
                if c is not None and c[0] in lines:
                    # Not rewarded for agreeing with the claimed outcome: that would place a
                    # wrong claim on a run where it happens to hold and hide the slip.
                    score[k] += _W_COND
        elif claim.kind in (RETURN, RAISE) and pos.returns_at is not None:
            score[pos.returns_at] += _W_PLACE
    if line is not None:
        score = [v + _W_LINE if pos.ran[k] == line else 0.0 for k, v in enumerate(score)]
    if step.iteration is not None:
        for k, it in enumerate(pos.iteration):
            if it == step.iteration:
                score[k] += _W_PLACE
    if step.after_loop:
        for k, flag in enumerate(pos.loop_exit):
            if flag:
                score[k] += _W_PLACE
    if step.at_call and n:
        score[0] += _W_PLACE
    # A step that names a loop iteration or the loop's end speaks of that place only.
    if step.iteration is not None and pos.iterations is not None:
        score = [v if pos.iteration[k] == step.iteration else 0.0 for k, v in enumerate(score)]
    elif step.after_loop and any(pos.loop_exit):
        score = [v if pos.loop_exit[k] else 0.0 for k, v in enumerate(score)]
    return score


def _dp(scores: list[list[float]], n_pos: int) -> list[int | None]:
    """Monotone placement maximising the summed scores; a step scoring 0 where it lands stays
    unplaced. `best[i][p]`: the best total of steps 0..i with every placed step at or before p."""
    if not scores or n_pos == 0:
        return [None] * len(scores)
    tables: list[list[float]] = []
    prev = [0.0] * n_pos
    for row in scores:
        cur = [0.0] * n_pos
        run = float("-inf")
        for p in range(n_pos):
            here = prev[p] + row[p]
            run = here if here > run else run
            cur[p] = run
        tables.append(cur)
        prev = cur
    out: list[int | None] = [None] * len(scores)
    p = n_pos - 1
    for i in range(len(scores) - 1, -1, -1):
        cur = tables[i]
        while p > 0 and cur[p] == cur[p - 1]:
            p -= 1
        if scores[i][p] > 0:
            out[i] = p
    return out


# --------------------------------------------------------------------------- judging


class _Judge:
    def __init__(
        self,
        chain: Chain,
        trace: Any,
        shape: _Shape,
        pos: _Positions,
        placed: list[int | None],
        lines: list[int | None],
    ) -> None:
        self.chain, self.trace, self.shape, self.pos, self.placed = chain, trace, shape, pos, placed
        self.lines = lines
        self.n = len(trace.steps)
        self.anchors: list[int | None] = [None] * len(chain.steps)
        self.names = code_names(trace.code)
        self.last: dict[str, tuple[object, int]] = {}
        """Per variable: the value the chain last stated correctly, and where."""

    def run(self) -> list[Judgement]:
        # Pass 1: which steps are pinned (a claim holds exactly where the step was placed).
        for step in self.chain.steps:
            p = self.placed[step.index]
            if p is not None and any(
                self._holds_at(c, p) for c in step.claims if c.kind == BINDING
            ):
                self.anchors[step.index] = p
        out: list[Judgement] = []
        for step in self.chain.steps:
            hypothetical = bool(_HYPOTHETICAL.search(step.text))
            for claim in step.claims:
                j = self._judge(step, claim)
                if claim.kind == BINDING and j.verdict == CONSISTENT and j.trace_step is not None:
                    self.last[claim.name or ""] = (value_key(claim.value), j.trace_step)
                if hypothetical and j.verdict == CONTRADICTED:
                    j = Judgement(
                        step.index, claim, UNVERIFIABLE, j.trace_step, None, "hypothetical wording"
                    )
                out.append(j)
        return out

    def _holds_at(self, claim: Claim, p: int) -> bool:
        have = self.pos.env[p].get(claim.name or "")
        want = value_key(claim.value)
        return have is not None and want is not _OPAQUE and value_key(have) == want

    def _window(self, step: ReasoningStep, widen: bool = False) -> tuple[int, int]:
        """Between the previous and the next pinned step. `widen`: up to the last place the next
        pinned step could sit (where its pinning claims still hold)."""
        lo, hi = 0, self.n - 1
        for i in range(step.index - 1, -1, -1):
            if self.anchors[i] is not None:
                lo = self.anchors[i]
                break
        for i in range(step.index + 1, len(self.chain.steps)):
            p = self.anchors[i]
            if p is not None:
                # The next pinned step could sit anywhere its pinning claims hold.
                pins = [
                    c
                    for c in self.chain.steps[i].claims
                    if c.kind == BINDING and self._holds_at(c, p)
                ]
                hi = p
                while widen and hi + 1 < self.n and all(self._holds_at(c, hi + 1) for c in pins):
                    hi += 1
                break
        return lo, max(lo, hi)

    def _candidates(self, step: ReasoningStep, claim: Claim | None = None) -> list[int]:
        """Positions a step may speak of: its own if pinned, else the window between pinned
        neighbours, narrowed by the iteration / loop exit / call the step names. A variable given
        a second value in the same step ("x = [], and then x = [1]") may be later than the pin."""
        p = self.placed[step.index]
        repeated = claim is not None and any(
            c is not claim and c.name == claim.name and c.kind == BINDING for c in step.claims
        )
        lo, hi = self._window(step, widen=repeated)
        if p is not None and self.anchors[step.index] is not None and not repeated:
            return self._pinned_run(step, p, lo, hi)
        cand = list(range(lo, hi + 1))
        if step.at_call:
            cand = [k for k in cand if k <= self.pos.first_line] or cand
        if step.iteration is not None and self.pos.iterations is not None:
            cand = [k for k in cand if self.pos.iteration[k] == step.iteration]
        if step.after_loop:
            exits = [k for k in cand if self.pos.loop_exit[k]]
            cand = exits or cand
        line = self.lines[step.index]
        if line is not None and not repeated:
            cand = [k for k in cand if self.pos.ran[k] == line]
        if self.chain.format == "scratchpad":
            cand = [k for k in cand if self.pos.top[k]]
        return cand

    def _names_in(self, text: str) -> bool:
        """Does `text` use a variable of the code (`list` may be the code's own, not the type)?"""
        try:
            tree = safe_ast.parse(text.strip().strip("`"), mode="eval")
        except SyntaxError:
            return False
        return any(isinstance(n, ast.Name) and n.id in self.names for n in ast.walk(tree))

    def _pinned_run(
        self, step: ReasoningStep, p: int, lo: int, hi: int, exclude: Claim | None = None
    ) -> list[int]:
        """The positions around `p` where every claim that pins the step still holds: a sentence
        with several claims ("i = 1, and nums = [...]") may span a few consecutive states."""
        pins = [
            c
            for c in step.claims
            if c.kind == BINDING and c is not exclude and self._holds_at(c, p)
        ]
        a = p
        while a - 1 >= lo and all(self._holds_at(c, a - 1) for c in pins):
            a -= 1
        b = p
        while b + 1 <= hi and all(self._holds_at(c, b + 1) for c in pins):
            b += 1
        line = self.lines[step.index]
        run = list(range(a, b + 1))
        if line is not None and len(pins) == len([c for c in step.claims if c.kind == BINDING]):
            run = [k for k in run if self.pos.ran[k] == line] or [p]
        return run

    def _judge(self, step: ReasoningStep, claim: Claim) -> Judgement:
        kind = claim.kind
        if kind == BINDING:
            return self._binding(step, claim)
        if kind == CONDITION:
            return self._condition(step, claim)
        if kind == RETURN:
            return self._return(step, claim)
        if kind == RAISE:
            return self._raise(step, claim)
        if kind in (ITERATION, LOOP_COUNT):
            return self._loop(step, claim)
        return Judgement(step.index, claim, UNVERIFIABLE, None, note="unknown claim kind")

    def _binding(self, step: ReasoningStep, claim: Claim) -> Judgement:
        name = claim.name or ""
        want = value_key(claim.value)
        cand = self._candidates(step, claim)
        if want is _OPAQUE:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note="claimed value is not a literal"
            )
        stale = self._stale_change(step, claim, want) or self._change_in_step(step, claim, want)
        if stale is not None:
            return stale
        seen = [k for k in cand if name in self.pos.env[k]]
        if not seen:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note=f"{name} has no value here"
            )
        for k in seen:
            if value_key(self.pos.env[k][name]) == want:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        k = self._true_position(step, seen, name)
        if claim.change:
            k = self._next_change(name, k, self._window(step)[1]) or k
        true = self.pos.env[k][name]
        if value_key(true) is _OPAQUE:
            return Judgement(
                step.index,
                claim,
                UNVERIFIABLE,
                self.trace.steps[k].index,
                true,
                "traced value is not a literal",
            )
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[k].index,
            true,
            f"{name} is {true} here",
        )

    def _change_in_step(self, step: ReasoningStep, claim: Claim, want: object) -> Judgement | None:
        """ "x becomes V" in a step pinned by other claims ("as x = 3 is handled, out becomes [2]"):
        if `out` changes while the step's other claims hold, V must be a value it changes to."""
        p = self.anchors[step.index]
        name = claim.name or ""
        if not claim.change or p is None or sum(c.name == name for c in step.claims) > 1:
            return None
        if not any(
            c is not claim and c.kind == BINDING and c.name != name and self._holds_at(c, p)
            for c in step.claims
        ):
            return None
        lo, hi = self._window(step)
        run = [
            k for k in self._pinned_run(step, p, lo, hi, exclude=claim) if name in self.pos.env[k]
        ]
        if not run:
            return None
        first = self.pos.env[run[0]][name]
        after = [k for k in run if self.pos.env[k][name] != first]
        if not after:
            return None  # no change while the step holds: judged as a plain statement
        stated = self.last.get(name, (None, None))[0]
        if value_key(first) == want and stated != want:
            # It had just changed to V as the step begins ("i gets updated to 1, and result ...").
            return Judgement(step.index, claim, CONSISTENT, self.trace.steps[run[0]].index)
        start = after[0]
        later = [k for k in run if k >= start]
        for k in later:
            if value_key(self.pos.env[k][name]) == want:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        true = self.pos.env[start][name]
        if value_key(true) is _OPAQUE:
            return None
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[start].index,
            true,
            f"{name} changes to {true} here",
        )

    def _next_change(self, name: str, k: int, hi: int) -> int | None:
        """Where `name` next takes another value after position k (up to hi): for "x becomes V"
        the true value is the one x changes to, not the one it had before the line ran."""
        start = self.pos.env[k].get(name)
        for j in range(k + 1, min(hi, self.n - 1) + 1):
            have = self.pos.env[j].get(name)
            if have is not None and have != start:
                return j
        return None

    def _stale_change(self, step: ReasoningStep, claim: Claim, want: object) -> Judgement | None:
        """ "x becomes V" right after the chain said x = V: a change is claimed, so the value is the
        one x takes at its next change (if it changes before the next pinned step)."""
        name = claim.name or ""
        if not claim.change or name not in self.last or self.last[name][0] != want:
            return None
        p = self.anchors[step.index]
        if p is not None and any(
            c is not claim and c.kind == BINDING and c.name != name and self._holds_at(c, p)
            for c in step.claims
        ):
            return None  # the step's other claims place it: it is judged there
        if name in self.shape.loop_vars:
            return None  # a loop may bind its variable to an equal value: no change to see
        q = self.last[name][1]
        hi = min(self._window(step)[1], self.n - 1)
        changed_at: int | None = None
        for k in range(q + 1, hi + 1):
            have = self.pos.env[k].get(name)
            if have is None:
                continue
            key = value_key(have)
            if key is _OPAQUE:
                return None
            if changed_at is None and key != want:
                changed_at = k
            elif changed_at is not None and key == want:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        if changed_at is None:
            return None
        have = self.pos.env[changed_at][name]
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[changed_at].index,
            have,
            f"{name} changes to {have}",
        )

    def _true_position(self, step: ReasoningStep, seen: list[int], name: str) -> int:
        """Where to read the true value of a wrong claim: the step's own place if it has one in the
        window, else the first change of the variable in the window, else the window start."""
        p = self.placed[step.index]
        if p is not None and p in seen:
            return p
        first = self.pos.env[seen[0]][name]
        for k in seen:
            if self.pos.env[k][name] != first:
                return k
        return seen[0]

    def _condition(self, step: ReasoningStep, claim: Claim) -> Judgement:
        if claim.condition and claim.line is None and not self._names_in(claim.condition):
            truth = evaluate_condition(claim.condition)
            if truth is not None:
                verdict = CONSISTENT if str(truth) == claim.value else CONTRADICTED
                return Judgement(
                    step.index,
                    claim,
                    verdict,
                    self.placed[step.index],
                    None if verdict == CONSISTENT else str(truth),
                    "worked out from the values written in the condition",
                )
        lines = _condition_lines(claim, self.shape)
        if not lines:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note="which condition is meant is unclear"
            )
        cand = self._condition_candidates(step, narrow=claim.condition is not None)
        runs = [k for k in cand if self.pos.cond[k] is not None and self.pos.cond[k][0] in lines]
        if not runs:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note="the condition does not run here"
            )
        for k in runs:
            if str(self.pos.cond[k][1]) == claim.value:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        k = runs[0]
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[k].index,
            str(self.pos.cond[k][1]),
            f"line {self.pos.cond[k][0]} is {self.pos.cond[k][1]} here",
        )

    def _condition_candidates(self, step: ReasoningStep, narrow: bool) -> list[int]:
        """A condition is checked just before the step's state: widen a pinned step to the stretch
        since the previous pinned step."""
        if self.lines[step.index] is not None or step.line is not None:
            return self._candidates(step)
        p = self.placed[step.index]
        lo, hi = self._window(step)
        if p is not None and self.anchors[step.index] is not None:
            hi = p
        elif narrow:
            # A named condition: up to where the next step was placed, the chain has moved on by
            # then. An unnamed one ("the condition is true") keeps the whole window.
            later = [q for q in self.placed[step.index + 1 :] if q is not None and q >= lo]
            if later:
                hi = min(hi, later[0])
        cand = list(range(lo, hi + 1))
        if step.iteration is not None and self.pos.iterations is not None:
            cand = [k for k in cand if self.pos.iteration[k] == step.iteration] or []
        return cand

    def _return(self, step: ReasoningStep, claim: Claim) -> Judgement:
        tr = self.trace
        at = self.pos.returns_at
        if tr.return_repr is None:
            if tr.exception and not (tr.truncated or tr.timeout or tr.error):
                return Judgement(
                    step.index,
                    claim,
                    CONTRADICTED,
                    at,
                    f"raises {tr.exception}",
                    "f raises instead of returning",
                )
            return Judgement(
                step.index, claim, UNVERIFIABLE, at, note="the trace has no return value"
            )
        want, have = value_key(claim.value), value_key(tr.return_repr)
        if want is _OPAQUE or have is _OPAQUE:
            return Judgement(
                step.index, claim, UNVERIFIABLE, at, tr.return_repr, "not comparable as literals"
            )
        if want == have:
            return Judgement(step.index, claim, CONSISTENT, at)
        if not claim.subject_f:
            return Judgement(
                step.index,
                claim,
                UNVERIFIABLE,
                at,
                tr.return_repr,
                "may be the value of a method or helper, not of f",
            )
        return Judgement(
            step.index, claim, CONTRADICTED, at, tr.return_repr, f"f returns {tr.return_repr}"
        )

    def _raise(self, step: ReasoningStep, claim: Claim) -> Judgement:
        tr = self.trace
        if tr.exception:
            same = tr.exception.split(":")[0].strip() == claim.value.split(":")[0].strip()
            return Judgement(
                step.index,
                claim,
                CONSISTENT if same else CONTRADICTED,
                self.pos.returns_at,
                None if same else f"raises {tr.exception}",
            )
        if tr.return_repr is not None:
            return Judgement(
                step.index,
                claim,
                CONTRADICTED,
                self.pos.returns_at,
                f"returns {tr.return_repr}",
                "f does not raise",
            )
        return Judgement(step.index, claim, UNVERIFIABLE, None, note="the trace did not finish")

    def _loop(self, step: ReasoningStep, claim: Claim) -> Judgement:
        total = self.pos.iterations
        if total is None or self.trace.truncated or self.trace.timeout or self.trace.error:
            return Judgement(step.index, claim, UNVERIFIABLE, None, note="no single loop to count")
        claimed = int(claim.value)
        if claim.kind == ITERATION:
            ok = claimed <= total
            where = next(
                (
                    self.trace.steps[k].index
                    for k, it in enumerate(self.pos.iteration)
                    if it == claimed
                ),
                None,
            )
            if ok:
                return Judgement(step.index, claim, CONSISTENT, where)
            last = next(
                (self.trace.steps[k].index for k, flag in enumerate(self.pos.loop_exit) if flag),
                None,
            )
            return Judgement(
                step.index,
                claim,
                CONTRADICTED,
                last,
                f"{total} iterations",
                f"the loop body runs {total} time(s)",
            )
        if claimed == total:
            return Judgement(step.index, claim, CONSISTENT, None)
        return Judgement(
            step.index, claim, CONTRADICTED, None, str(total), f"the loop body runs {total} time(s)"
        )


def align(chain: Chain, trace: Any) -> Alignment:
    """Place the chain's steps on the trace and judge every claim (see the module doc)."""
    n = len(trace.steps)
    if n == 0:
        judgements = [
            Judgement(s.index, c, UNVERIFIABLE, None, note="no trace to check against")
            for s in chain.steps
            for c in s.claims
        ]
        return Alignment(chain, trace, [None] * len(chain.steps), judgements)
    shape = _shape(trace.code)
    pos = _positions(trace, shape)
    lines = [_step_line(s, shape, pos) for s in chain.steps]
    scores = [
        _step_scores(s, trace, shape, pos, line) for s, line in zip(chain.steps, lines, strict=True)
    ]
    if chain.format == "scratchpad":  # a scratchpad follows f's own activation only
        scores = [[v if pos.top[k] else 0.0 for k, v in enumerate(row)] for row in scores]
    placed = _dp(scores, n)
    judge = _Judge(chain, trace, shape, pos, placed, lines)
    judgements = judge.run()
    positions = [trace.steps[p].index if p is not None else None for p in placed]
    return Alignment(chain, trace, positions, judgements)


def align_text(text: str, trace: Any) -> Alignment:
    """Parse `text` (prose or scratchpad) for the traced code and align it."""
    return align(parse_chain(text, trace.code), trace)


def call_to_trace(sample: Any, text: str, task: str) -> tuple[str, str]:
    """Which call a chain should be held against, and why.

    Output task: the sample's own call. Input task: the model reasons about the input *it* chose,
    so its answer's call (`f(...)` from the answer) is traced; the sample's call if it gave none.
    """
    if task == "input":
        from cruxtui.core.scoring.answers import extract

        got = extract(text, "input")
        if got.ok and got.answer:
            return got.answer, "the call from the chain's answer"
        return sample.call, f"the sample's own call (no usable answer: {got.reason})"
    return sample.call, "the sample's own call"
