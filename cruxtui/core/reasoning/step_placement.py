"""Placing a chain's reasoning steps on the positions of a trace, in order.

A monotone dynamic programme maximises how well the steps fit: claimed values that equal the
subject's value at a position weigh most (a variable's, or an expression's as the program
computed it there), then the loop iteration, loop exit or call a step speaks of, the condition
that ran, and last the fuzzy similarity (rapidfuzz) of the step's words with the source line.
Retracted claims place nothing.
"""

from __future__ import annotations

from typing import Any

from rapidfuzz import fuzz

from cruxtui.core.reasoning.claim_types import (
    BINDING,
    CONDITION,
    EXPRESSION,
    RAISE,
    RETURN,
    ReasoningStep,
)
from cruxtui.core.reasoning.code_facts import CodeFacts
from cruxtui.core.reasoning.frame_eval import ClaimValues
from cruxtui.core.reasoning.literal_scan import agrees
from cruxtui.core.reasoning.trace_positions import Positions, condition_lines

# Weights of the alignment score; a value match outweighs any amount of wording similarity.
_W_VALUE = 4.0
_W_EXPR = 2.0
_W_LINE = 3.0
_W_PLACE = 2.0
_W_COND = 1.5
_W_TEXT = 0.6
_TEXT_FLOOR = 60.0


def step_line(step: ReasoningStep, shape: CodeFacts, pos: Positions) -> int | None:
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


def step_scores(
    step: ReasoningStep,
    trace: Any,
    shape: CodeFacts,
    pos: Positions,
    line: int | None,
    values: ClaimValues,
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
        if claim.retracted:
            continue
        if claim.kind in (BINDING, EXPRESSION) or (claim.kind == CONDITION and values.known(claim)):
            weight = _W_VALUE if claim.kind == BINDING else _W_EXPR
            for k in range(n):
                have = values.at(claim, k)
                if have is not None and agrees(claim.value, have):
                    score[k] += weight
        elif claim.kind == CONDITION and not values.known(claim):
            lines = condition_lines(claim, shape)
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
    if step.at_end and pos.returns_at is not None:
        score[pos.returns_at] += _W_PLACE
    if step.at_call and n:
        score[0] += _W_PLACE
    # A step that names a loop iteration or the loop's end speaks of that place only.
    if step.iteration is not None and pos.iterations is not None:
        score = [v if pos.iteration[k] == step.iteration else 0.0 for k, v in enumerate(score)]
    elif step.after_loop and any(pos.loop_exit):
        score = [v if pos.loop_exit[k] else 0.0 for k, v in enumerate(score)]
    elif step.in_loop:
        inside = in_loop_positions(trace, shape, pos)
        if inside:
            score = [v if k in inside else 0.0 for k, v in enumerate(score)]
    return score


def in_loop_positions(trace: Any, shape: CodeFacts, pos: Positions) -> set[int]:
    """Positions of f's own frame whose line is inside one of f's loops (header included): where
    "when the loop runs" or "inside the loop" speaks of."""
    return {
        k
        for k, st in enumerate(trace.steps)
        if pos.top[k] and any(h <= st.line <= end for h, _b, end in shape.loops)
    }


def place(scores: list[list[float]], n_pos: int) -> list[int | None]:
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
