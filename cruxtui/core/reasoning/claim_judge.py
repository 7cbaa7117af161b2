"""Judging each claim of a placed chain against the trace.

- **consistent** when the subject's value at the step's position (or, for a step no value pins
  down, anywhere between the neighbouring pinned steps) equals the claimed one;
- **contradicted** when no such position has it, the value is known there, and both sides are
  Python literals, with the true value attached;
- **unverifiable** otherwise (unknown subject, values that are not literals, a hypothetical "if
  ...", a claim a self-correction took back).

A claim for the end of a phase ("after the loop", "finally", "..., giving X") is judged at that
end, not anywhere within it. The rules lean towards "unverifiable": a false alarm on a correct
chain costs the user more than a missed slip.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from cruxtui.core.reasoning.claim_types import (
    BINDING,
    CONDITION,
    EMPTY,
    EXPRESSION,
    ITERATION,
    LOOP_COUNT,
    LOOP_VALUES,
    RAISE,
    RETURN,
    Chain,
    Claim,
    ReasoningStep,
)
from cruxtui.core.reasoning.code_facts import CodeFacts
from cruxtui.core.reasoning.final_answer import TYPE_PREFIX, type_verdict
from cruxtui.core.reasoning.frame_eval import ClaimValues, subject_expression
from cruxtui.core.reasoning.literal_scan import OPAQUE, agrees, is_literal, literal_value, value_key
from cruxtui.core.reasoning.prose_claims import changes_state
from cruxtui.core.reasoning.step_placement import in_loop_positions
from cruxtui.core.reasoning.trace_positions import Positions, condition_lines
from cruxtui.core.util import safe_ast

NEAR = 3
"""How many pinned steps away a claimed value still counts as a placement slip."""

CONSISTENT = "consistent"
CONTRADICTED = "contradicted"
UNVERIFIABLE = "unverifiable"

_HYPOTHETICAL = re.compile(
    r"^\s*(?:if(?!\s+(?:we|i)\s+(?:start|take|pick|use|choose|try|set|call|pass|run))|otherwise|else|"
    r"suppose|assuming|in\s+case|had|were)\b|\b(?:if\s+it\s+were|had\s+been|"
    r"would\s+have|otherwise|in\s+case|suppose|hypothetically|about\s+to\s+say|almost\s+said|"
    r"going\s+to\s+(?:say|write)|almost\s+wrote|(?:first|initially|originally)\s+(?:thought|guessed)|"
    r"one\s+might\s+(?:think|expect)|it\s+is\s+tempting|a\s+common\s+mistake|not\s+to\s+be\s+confused|"
    r"(?:smaller|simpler|small|toy|different|another|made-up)\s+(?:example|input|case|call)|"
    r"sanity[-\s]check\s+(?:on|with)\s+(?:f\()?[\[('\"\d])\b"
    r"|^\s*(?:so\s+|now\s+)?(?:we|i)\s+(?:want|need|'d\s+need|would\s+need|are\s+looking\s+for|"
    r"'re\s+looking\s+for)\b(?!\s+to\b)|^\s*the\s+(?:goal|aim)\s+is\b",
    re.I,
)
"""Another run (an example of one's own: "let me try a smaller example first: with nums = [4],
..."), or a state wanted rather than reached ("We want new = [-3, 1]", "the goal is
out == 'ab'"; not "target is ...", which may name a variable): reasoning backwards states the target, not what the run has so far)."""


_ANOTHER_MOMENT = re.compile(
    r"\b(?:(?:before|after)\s+(?:the\s+|this\s+|that\s+|each\s+|every\s+)?(?:loop|call|line|step|"
    r"iteration|pass|update|change|assignment|append|insert|pop|clear|sort|reverse|split|replace|"
    r"remove|extend|[a-z_]+\(|`|it\b|that\b|this\b)|afterwards|initially|at\s+first|originally|"
    r"at\s+the\s+(?:start|beginning|end)|to\s+begin\s+with|later|finally|by\s+then|by\s+now|"
    r"at\s+this\s+point|still)\b",
    re.I,
)
"""Words that place a claim at a moment of the run the chain chooses."""


def is_hypothetical(sentence: str) -> bool:
    """Does the sentence speak of another run ("if it were ...", "one might think ...")?"""
    return bool(_HYPOTHETICAL.search(sentence))


def _rounded(said: str, true: str | None) -> bool:
    """ "the mean is 3.33", "0.1 + 0.2 = 0.3": a float written to as many decimals as the writer
    cares for (and the float error Python adds) is the value rounded, not a slip. Only a
    float written with decimals; "10 / 3 is 3" stays a slip."""
    m = re.fullmatch(r"\s*-?\d+\.(\d+)\s*", said)
    if m is None or true is None:
        return False
    have = literal_value(true)
    if not isinstance(have, float) or isinstance(have, bool):
        return False
    return round(have, len(m.group(1))) == float(said)


_PERSISTS = re.compile(r"\b(?:stays|remains|is\s+still|still\s+is|is\s+left\s+unchanged)\b", re.I)
"""A value said to persist: the subject keeps it through what the chain has just told."""
_KEYWORD_LOOP_RE = re.compile(r"\b(?:after|once|when)\s+the\s+`?(while|for)`?(?:\s+|-)loop\b", re.I)


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
            "provenance": self.claim.source,
            "span": [self.claim.start, self.claim.end],
            "retracted": self.claim.retracted,
        }


class Judge:
    """Judges every claim of a placed chain (see `alignment` for the rules)."""

    def __init__(
        self,
        chain: Chain,
        trace: Any,
        shape: CodeFacts,
        pos: Positions,
        placed: list[int | None],
        lines: list[int | None],
        values: ClaimValues,
    ) -> None:
        self.chain, self.trace, self.shape, self.pos, self.placed = chain, trace, shape, pos, placed
        self.lines = lines
        self.values = values
        self.n = len(trace.steps)
        self._computed_once: dict[str, list[int] | None] = {}
        """Per expression (spaces removed): where the program computed it, if on one line only."""
        self.anchors: list[int | None] = [None] * len(chain.steps)
        self.names = shape.names
        self.call_pins: list[int] = []
        """Positions just after a state-changing call the chain stated: nothing before them is
        a placement slip for what the chain says next."""
        self.last: dict[str, tuple[object, int]] = {}
        """Per variable: the value the chain last stated correctly, and where."""

    def run(self) -> list[Judgement]:
        # Pass 1: which steps are pinned (a claim holds exactly where the step was placed).
        last = 0
        for step in self.chain.steps:
            p = self.placed[step.index]
            if p is not None and any(
                self._holds_at(c, p) for c in step.claims if c.kind == BINDING
            ):
                self.anchors[step.index] = p
            elif (done := self._call_done(step, last)) is not None:
                self.anchors[step.index] = done
                self.call_pins.append(done)
            last = self.anchors[step.index] or last
        out: list[Judgement] = []
        for step in self.chain.steps:
            hypothetical = is_hypothetical(step.text)
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
        if claim.retracted:
            return False
        have = self.values.at(claim, p)
        return have is not None and agrees(claim.value, have) is True

    def _window(self, step: ReasoningStep, widen: bool = False) -> tuple[int, int]:
        """Between the previous and the next pinned step. `widen`: up to the last place the next
        pinned step could sit (where its pinning claims still hold)."""
        lo, hi = 0, self.n - 1
        for i in range(step.index - 1, -1, -1):
            anchor = self.anchors[i]
            if anchor is not None:
                lo = anchor
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
            return self._inside_loop(step, self._pinned_candidates(step, claim, p, lo, hi))
        cand = list(range(lo, hi + 1))
        if step.at_call:
            cand = [k for k in cand if k <= self.pos.first_line] or cand
        if step.iteration is not None and self.pos.iterations is not None:
            cand = [k for k in cand if self.pos.iteration[k] == step.iteration]
        if step.after_loop and not (claim is not None and claim.before_exit):
            exits = [k for k in cand if self.pos.loop_exit[k]]
            cand = exits or cand
        else:
            cand = self._inside_loop(step, cand)
        line = self.lines[step.index]
        if line is not None and not repeated:
            cand = [k for k in cand if self.pos.ran[k] == line]
        if self.chain.format == "scratchpad":
            cand = [k for k in cand if self.pos.top[k]]
        return cand

    def _pinned_candidates(
        self, step: ReasoningStep, claim: Claim | None, p: int, lo: int, hi: int
    ) -> list[int]:
        run = self._pinned_run(step, p, lo, hi)
        pins = [c for c in step.claims if c.kind == BINDING and self._holds_at(c, p)]
        if claim is None or claim in pins or not pins or not run:
            return run
        # A claim written before the step's pinning claims may speak of the state on the way
        # there ("len(lst) is 0, so ... lst is [1]"), one written after of what follows.
        if claim.end <= min(c.start for c in pins):
            return list(range(lo, run[-1] + 1))
        if claim.start >= max(c.end for c in pins):
            return list(range(run[0], hi + 1))
        return run

    def _inside_loop(self, step: ReasoningStep, cand: list[int]) -> list[int]:
        """ "when the loop runs", "inside the loop": only the positions within a loop."""
        if not step.in_loop:
            return cand
        inside = in_loop_positions(self.trace, self.shape, self.pos)
        return [k for k in cand if k in inside] or cand

    def _mid_line(self, step: ReasoningStep, claim: Claim) -> bool:
        """The subject is changed by two calls on one line that runs where the step speaks of
        (or a claim on such a call, `nums.pop(0)` twice on a line): no trace state shows it."""
        names = {claim.name or ""} if claim.kind == BINDING else set(_names_of(claim.name or ""))
        lines = set().union(*(self.shape.changed_twice.get(n, set()) for n in names))
        if not lines:
            return False
        lo, hi = self._window(step)
        claimed = literal_value(claim.value)
        for k in range(max(lo - 1, 0), min(hi + 1, self.n)):
            if self.trace.steps[k].line not in lines or k + 1 >= self.n:
                continue
            for n in names:
                for state in (self.pos.env[k].get(n), self.pos.env[k + 1].get(n)):
                    if state is not None and _could_be_between(claimed, literal_value(state)):
                        return True
        return False

    def _call_done(self, step: ReasoningStep, since: int) -> int | None:
        """ "pop(0) removes 'Dmreh'": a state-changing call the step states rightly, where the
        code makes it, pins the step to just after that call (what follows sees its effect).
        The call must be one the step may speak of: in the iteration it names, if it names one
        ("First iteration: popitem() gives (5, 1)" is not pinned to the fourth pop)."""
        named = step.iteration if self.pos.iterations is not None else None
        for c in step.claims:
            if c.retracted or c.before_line is None or not changes_state(c):
                continue
            for k in range(since, self.n - 1):
                st = self.trace.steps[k]
                if named is not None and self.pos.iteration[k] != named:
                    continue
                if st.line == c.before_line and st.event == "line" and self._holds_at(c, k):
                    return k + 1
        return None

    def _enters(self, k: int, line: int) -> bool:
        """At a `for` header the iterable is made once, as the loop is entered (not on each
        return to the header); any other line starts afresh each time."""
        if line not in self.shape.for_iters:
            return True
        loop = next((lp for lp in self.shape.loops if lp[0] == line), None)
        came = self.pos.ran[k]
        return loop is None or came is None or not loop[0] <= came <= loop[2]

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
        if claim.retracted:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note="taken back by a self-correction"
            )
        if claim.asked:
            return Judgement(step.index, claim, UNVERIFIABLE, None, note="asked, not stated")
        if kind in (BINDING, EXPRESSION):
            return self._valued(step, claim)
        if kind == CONDITION:
            return self._condition(step, claim)
        if kind == LOOP_VALUES:
            return self._loop_values(step, claim)
        if kind == RETURN:
            return self._return(step, claim)
        if kind == RAISE:
            return self._raise(step, claim)
        if kind in (ITERATION, LOOP_COUNT):
            return self._loop(step, claim)
        return Judgement(step.index, claim, UNVERIFIABLE, None, note="unknown claim kind")

    def _v(self, claim: Claim, k: int) -> str | None:
        return self.values.at(claim, k)

    def _valued(self, step: ReasoningStep, claim: Claim) -> Judgement:
        """A binding or an expression: its subject's value where the step speaks of. A claim
        whose subject was inferred from the sentence can agree, never contradict."""
        j = self._valued_verdict(step, claim)
        if j.verdict == CONTRADICTED and _rounded(claim.value, j.true_value):
            return Judgement(
                step.index,
                claim,
                UNVERIFIABLE,
                j.trace_step,
                j.true_value,
                "the value written rounded",
            )
        if j.verdict == CONTRADICTED and self._unquoted_cell(claim, j.true_value):
            return Judgement(
                step.index,
                claim,
                UNVERIFIABLE,
                j.trace_step,
                j.true_value,
                "a table cell written without quotes",
            )
        if j.verdict == CONTRADICTED and self._mid_line(step, claim):
            return Judgement(
                step.index,
                claim,
                UNVERIFIABLE,
                j.trace_step,
                j.true_value,
                "changed twice within one line: the state between is not traced",
            )
        if claim.inferred and j.verdict == CONTRADICTED:
            return Judgement(
                step.index, claim, UNVERIFIABLE, j.trace_step, j.true_value, "subject not named"
            )
        if (
            j.verdict == CONTRADICTED
            and self._near_miss(step, claim)
            and "changes" not in j.note
            and not j.note.startswith(_ELSEWHERE)  # the named place holds it: that is the slip
        ):
            # The subject does have the claimed value one pinned step away: placing the step
            # is the likelier mistake than the chain's.
            return Judgement(
                step.index,
                claim,
                UNVERIFIABLE,
                j.trace_step,
                j.true_value,
                "the value it has a step away",
            )
        return j

    def _unquoted_cell(self, claim: Claim, true: str | None) -> bool:
        """A table cell `1` where the subject holds the string '1': tables drop the quotes of
        short strings (a column of characters reads `a`, `b`, `1`), so the number is that
        string written bare, not a slip of type."""
        text = self.chain.text
        head = text[text.rfind("\n", 0, max(claim.start, 0)) + 1 : claim.start]
        if not head.lstrip().startswith("|") or true is None:
            return False
        return literal_value(true) == claim.value.strip()

    def _computed_at(self, step: ReasoningStep, claim: Claim) -> list[int] | None:
        """Values first: an expression the program itself computes on one line of f only
        (`len(array)` in `array.extend('x' * len(array))`) speaks of what that line computed,
        whatever the step's placement — unless the chain says when (an iteration, after the
        loop, a line, a call). The positions where the line computed it, or None."""
        if (
            claim.kind not in (EXPRESSION, CONDITION)
            or claim.change
            or claim.phase_end
            or claim.line is not None
            or claim.before_line is not None
            or step.iteration is not None
            or step.after_loop
            or step.line is not None
            or not self.pos.computed
        ):
            return None
        if _ANOTHER_MOMENT.search(step.text):
            return None  # "before the clear, `len(array)` is 3": the chain says when
        src = (claim.name or "").replace(" ", "")
        if not src:
            return None
        if src not in self._computed_once:
            at = [k for k in range(self.n) if src in self.pos.computed[k]]
            one_line = bool(at) and len({self.trace.steps[k].line for k in at}) == 1
            self._computed_once[src] = at if one_line else None
        return self._computed_once[src]

    def _near_miss(self, step: ReasoningStep, claim: Claim) -> bool:
        if claim.phase_end or claim.value in ("True", "False"):
            return False
        if self._computed_at(step, claim) is not None:
            return False  # judged where the program computed it: no placement to blame
        if _PERSISTS.search(claim.text):
            return False  # "new_list stays empty": the value before the change is the slip
        if step.line is not None or claim.line is not None or claim.before_line is not None:
            return False  # the chain says where ("after the append"): it is judged there
        if step.iteration is not None and self.pos.iterations is not None:
            return False
        if step.in_loop and in_loop_positions(self.trace, self.shape, self.pos):
            return False  # "when the loop runs": the chain says when
        p = self.anchors[step.index]
        if p is not None and claim.kind == EXPRESSION:
            # "ls = ['l', 'a', 'k'], so len(ls) * 2 = 8": over variables the step itself states.
            pinned = {
                c.name
                for c in step.claims
                if c.kind == BINDING
                and c.end <= claim.start
                and not c.change
                and self._holds_at(c, p)
            }
            reads = _names_of(claim.name or "") - _BUILTINS
            if reads and reads <= pinned:
                return False
        before = [a for a in self.anchors[: step.index] if a is not None]
        after = [a for a in self.anchors[step.index + 1 :] if a is not None]
        lo = before[-NEAR - 1] if len(before) > NEAR else 0
        own = self._window(step)[0]
        lo = max([lo, *(c for c in self.call_pins if c <= own)])
        hi = after[NEAR] if len(after) > NEAR else self.n - 1
        return any(
            (have := self._v(claim, k)) is not None and agrees(claim.value, have) is True
            for k in range(lo, hi + 1)
        )

    def _valued_verdict(self, step: ReasoningStep, claim: Claim) -> Judgement:
        name = claim.name or ""
        want = value_key(claim.value)
        if want is OPAQUE and claim.value != EMPTY:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note="claimed value is not a literal"
            )
        if claim.phase_end:
            return self._phase_end(step, claim)
        cand = self._candidates(step, claim)
        if claim.before_line is not None:
            starts = [
                k
                for k in range(self.n)
                if self.trace.steps[k].line == claim.before_line
                and self.trace.steps[k].event == "line"
                and self._enters(k, claim.before_line)
            ]
            cand = [k for k in cand if k in starts] or starts or cand
        if claim.line is not None and self.chain.format == "prose":
            # Stated for after a call the sentence names: the state once that line has run.
            lo, _hi = self._window(step)
            inside = [k for k in cand if self.pos.ran[k] == claim.line]
            after = [k for k in range(lo, self.n) if self.pos.ran[k] == claim.line]
            cand = inside or after[:1] or cand
        if claim.kind == BINDING and not claim.phase_end:
            cand = self._at_the_test(step, claim, cand)
        if (computed := self._computed_at(step, claim)) is not None:
            cand = [k for k in cand if k in computed] or computed
        if claim.kind == BINDING:
            stale = self._stale_change(step, claim, want) or self._change_in_step(step, claim, want)
            if stale is not None:
                return stale
        if claim.kind == EXPRESSION and claim.change:
            misplaced = self._written_elsewhere(step, claim, cand)
            if misplaced is not None:
                return misplaced
        seen = [k for k in cand if self._v(claim, k) is not None]
        if not seen:
            note = self.values.errors.get(subject_expression(claim) or "", "")
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note=note or f"{name} has no value here"
            )
        for k in seen:
            if agrees(claim.value, self._v(claim, k) or "") is True:
                # An expression's value as the program has it, to show beside the claim.
                shown = self._v(claim, k) if claim.kind == EXPRESSION else None
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index, shown)
        if (claim.inferred or claim.by_method) and not any(
            _same_type(claim.value, self._v(claim, k)) for k in seen
        ):
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note=f"not a value of {name}'s type"
            )
        k = self._true_position(step, seen, claim)
        if claim.change:
            k = self._next_change(claim, k, self._window(step)[1]) or k
        true = self._v(claim, k) or ""
        if claim.kind == EXPRESSION and any(_part_of(claim.value, self._v(claim, j)) for j in seen):
            # "popitem() gives '4'" of ('4', ',,,,,'): the key the writer means, named alone.
            return Judgement(
                step.index, claim, UNVERIFIABLE, self.trace.steps[k].index, true, "a part of it"
            )
        if value_key(true) is OPAQUE or agrees(claim.value, true) is None:
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

    def _phase_end(self, step: ReasoningStep, claim: Claim) -> Judgement:
        """ "After the loop x is V", "finally x is V", "..., giving V": the value once that stretch
        of work is over, not one it had on the way."""
        lo, hi = self._window(step)
        exits = [k for k in range(lo, hi + 1) if self.pos.loop_exit[k]]
        ordinal = step.loop_ordinal or self._loop_by_keyword(step)
        if ordinal is not None:
            exits = self._exits_of_loop(ordinal) or exits
        if not exits:
            exits = [k for k in range(0, hi + 1) if self.pos.loop_exit[k]][-1:]
        ends = (exits[:1] or [hi]) if step.after_loop else sorted({*exits, hi})
        if step.at_end and self.pos.returns_at is not None:
            ends = [self.pos.returns_at]
        name = claim.name or ""
        seen = [k for k in ends if self._v(claim, k) is not None]
        if not seen:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note=f"{name} has no value here"
            )
        for k in seen:
            if agrees(claim.value, self._v(claim, k) or "") is True:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        if (claim.inferred or claim.by_method) and not any(
            _same_type(claim.value, self._v(claim, k)) for k in seen
        ):
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note=f"not a value of {name}'s type"
            )
        k = seen[0]
        true = self._v(claim, k) or ""
        if agrees(claim.value, true) is None:
            return Judgement(step.index, claim, UNVERIFIABLE, None, true, "not comparable")
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[k].index,
            true,
            f"{name} is {true} at the end of that stretch",
        )

    def _loop_by_keyword(self, step: ReasoningStep) -> int | None:
        """ "after the while loop": f's one `while` loop (its ordinal), when it has one."""
        m = _KEYWORD_LOOP_RE.search(step.text)
        if m is None:
            return None
        fors = m.group(1).lower() == "for"
        loops = sorted(self.shape.loops)
        hits = [i for i, (h, _b, _e) in enumerate(loops) if (h in self.shape.for_iters) == fors]
        return hits[0] + 1 if len(hits) == 1 else None

    def _exits_of_loop(self, ordinal: int) -> list[int]:
        """Positions where f's `ordinal`-th loop (in source order) has just been left."""
        loops = sorted(self.shape.loops)
        if ordinal > len(loops):
            return []
        h, _b, end = loops[ordinal - 1]
        # Left for good: the next line is outside this loop (an inner loop's exit is not).
        return [
            k
            for k in range(self.n)
            if self.pos.loop_exit[k]
            and self.pos.ran[k] is not None
            and h <= (self.pos.ran[k] or 0) <= end
            and not (h <= self.trace.steps[k].line <= end and self.trace.steps[k].event == "line")
            and self.pos.top[k]
        ]

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
            k
            for k in self._pinned_run(step, p, lo, hi, exclude=claim)
            if self._v(claim, k) is not None
        ]
        if not run:
            return None
        first = self._v(claim, run[0])
        after = [k for k in run if self._v(claim, k) != first]
        if not after:
            return None  # no change while the step holds: judged as a plain statement
        stated = self.last.get(name, (None, None))[0]
        if value_key(first or "") == want and stated != want:
            # It had just changed to V as the step begins ("i gets updated to 1, and result ...").
            return Judgement(step.index, claim, CONSISTENT, self.trace.steps[run[0]].index)
        start = after[0]
        for k in run:
            if k >= start and value_key(self._v(claim, k) or "") == want:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        true = self._v(claim, start) or ""
        if value_key(true) is OPAQUE:
            return None
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[start].index,
            true,
            f"{name} changes to {true} here",
        )

    def _next_change(self, claim: Claim, k: int, hi: int) -> int | None:
        """Where the subject next takes another value after position k (up to hi): for "x becomes
        V" the true value is the one x changes to, not the one it had before the line ran."""
        start = self._v(claim, k)
        for j in range(k + 1, min(hi, self.n - 1) + 1):
            have = self._v(claim, j)
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
            have = self._v(claim, k)
            if have is None:
                continue
            key = value_key(have)
            if key is OPAQUE:
                return None
            if changed_at is None and key != want:
                changed_at = k
            elif changed_at is not None and key == want:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        if changed_at is None:
            return None
        have = self._v(claim, changed_at) or ""
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[changed_at].index,
            have,
            f"{name} changes to {have}",
        )

    def _true_position(self, step: ReasoningStep, seen: list[int], claim: Claim) -> int:
        """Where to read the true value of a wrong claim: the step's own place if it has one in the
        window, else the first change of the subject in the window, else the window start."""
        p = self.placed[step.index]
        if p is not None and p in seen:
            return p
        first = self._v(claim, seen[0])
        for k in seen:
            if self._v(claim, k) != first:
                return k
        return seen[0]

    def _written_elsewhere(
        self, step: ReasoningStep, claim: Claim, cand: list[int]
    ) -> Judgement | None:
        """ "result[1] is set to 'qk6'" where the code's one `result[i*2] = array[i]` ran with
        i*2 = 2 and wrote 'qk6': a change stated for one place that the program made at
        another is the slip, even if the named place happens to hold that value already. The
        index and value the line computed are read from the recorded sub-expression values of
        the runs of that line the step may speak of."""
        try:
            node = safe_ast.parse(claim.name or "", mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if not (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant)
        ):
            return None
        stores = self.shape.item_stores.get(node.value.id, [])
        if len(stores) != 1 or not cand:
            return None
        line, index_src, value_src = stores[0]
        _lo, hi = self._window(step)
        runs_of = [
            k
            for k in range(min(cand), self.n)
            if self.trace.steps[k].line == line and self.trace.steps[k].event == "line"
        ]
        # The runs within the stretch the step may speak of, and the next one after it (the
        # change the sentence narrates may be made just after the state it was placed on).
        runs = [k for k in runs_of if k <= max(max(cand), hi)] or runs_of[:1]
        wrote: list[tuple[int, object, str]] = []
        for k in runs:
            at = self.pos.computed[k].get(index_src.replace(" ", ""))
            put = self.pos.computed[k].get(value_src.replace(" ", ""))
            if at is not None and put is not None:
                wrote.append((k, literal_value(at), put))
        if not wrote or any(at == node.slice.value for _k, at, _put in wrote):
            return None
        same = [(k, at) for k, at, put in wrote if agrees(claim.value, put) is True]
        if not same:
            return None
        k, i = same[0]
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[k].index,
            f"{node.value.id}[{i!r}]",
            f"{_ELSEWHERE} {node.value.id}[{i!r}]: line {line} sets it to {claim.value} here",
        )

    def _at_the_test(self, step: ReasoningStep, claim: Claim, cand: list[int]) -> list[int]:
        """ "m is None, so the `if` body is skipped": a value given as the premise of a verdict
        on one of the code's tests speaks of the state that test is decided on (where it runs,
        among the positions the step may speak of)."""
        text = self.chain.text
        for c in step.claims:
            if c.kind != CONDITION or c.start < claim.end or c.line is not None:
                continue
            if c.name is not None and c.name not in self.shape.cond_text.values():
                continue
            if not _PREMISE.search(text[claim.end : c.start]):
                continue
            lines = condition_lines(c, self.shape)
            lo, hi = self._window(step)
            around = sorted(set(cand) | set(range(lo, hi + 1)))
            if step.iteration is not None and self.pos.iterations is not None:
                around = [k for k in around if self.pos.iteration[k] == step.iteration]
            tested = [k for k in around if (t := self.pos.cond[k]) is not None and t[0] in lines]
            if tested:
                return tested
        return cand

    def _condition(self, step: ReasoningStep, claim: Claim) -> Judgement:
        if claim.line is None and self.values.known(claim):
            return self._evaluated_condition(step, claim)
        lines = condition_lines(claim, self.shape)
        if not lines:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note="which condition is meant is unclear"
            )
        cand = self._condition_candidates(step, narrow=claim.condition is not None)
        runs = [(k, c) for k in cand if (c := self.pos.cond[k]) is not None and c[0] in lines]
        if not runs:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note="the condition does not run here"
            )
        for k, (_line, outcome) in runs:
            if str(outcome) == claim.value:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        k, (line, outcome) = runs[0]
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[k].index,
            str(outcome),
            f"line {line} is {outcome} here",
        )

    def _evaluated_condition(self, step: ReasoningStep, claim: Claim) -> Judgement:
        """A condition written as an expression over the frame (or over values only): its truth
        where the step speaks of, evaluated, whatever the code's own `if` says."""
        cand = self._condition_candidates(step, narrow=True)
        computed = self._computed_at(step, claim)
        if computed is not None:  # values first: where the program computed that test
            cand = [k for k in cand if k in computed] or computed
        if claim.kind == EXPRESSION and claim.change:
            misplaced = self._written_elsewhere(step, claim, cand)
            if misplaced is not None:
                return misplaced
        seen = [k for k in cand if self._v(claim, k) is not None]
        if not seen:
            note = self.values.errors.get(subject_expression(claim) or "", "")
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note=note or "cannot be evaluated here"
            )
        for k in seen:
            if self._v(claim, k) == claim.value:
                return Judgement(step.index, claim, CONSISTENT, self.trace.steps[k].index)
        k = self._true_position(step, seen, claim)
        if (
            computed is None
            and self._placed_loosely(step, claim)
            and self._holds_nearby(step, claim, 1)
        ):
            return Judgement(
                step.index,
                claim,
                UNVERIFIABLE,
                self.trace.steps[k].index,
                self._v(claim, k),
                "true one pinned step away",
            )
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            self.trace.steps[k].index,
            self._v(claim, k),
            f"{claim.condition} is {self._v(claim, k)} here",
        )

    def _placed_loosely(self, step: ReasoningStep, claim: Claim) -> bool:
        """Neither the chain (an iteration, a line, a call) nor a closed expression fixes where
        the claim is checked."""
        if step.line is not None or claim.line is not None or claim.before_line is not None:
            return False
        if step.iteration is not None and self.pos.iterations is not None:
            return False
        expr = subject_expression(claim) or ""
        return bool(_names_of(expr))

    def _holds_nearby(self, step: ReasoningStep, claim: Claim, near: int) -> bool:
        before = [a for a in self.anchors[: step.index] if a is not None]
        after = [a for a in self.anchors[step.index + 1 :] if a is not None]
        lo = before[-near - 1] if len(before) > near else 0
        hi = after[near] if len(after) > near else self.n - 1
        return any(self._v(claim, k) == claim.value for k in range(lo, hi + 1))

    def _named_loop_values(self, step: ReasoningStep, claim: Claim) -> list[str] | None:
        """ "Second loop: for i in range(1, 3), so i goes 1, 2, 3": of two loops over i, the one
        the step names by its place among f's loops."""
        if step.named_loop is None:
            return None
        headers = sorted(h for h, _b, _e in self.shape.loops)
        if step.named_loop > len(headers):
            return None
        return self.pos.loop_values_at.get(headers[step.named_loop - 1], {}).get(claim.name or "")

    def _loop_values(self, step: ReasoningStep, claim: Claim) -> Judgement:
        """ "k takes the values 1 and 2": the values the loop variable really takes, in order."""
        if claim.line is not None:
            return self._values_at_line(step, claim)
        got = self.pos.loop_values.get(claim.name or "")
        if got is None:
            got = self._named_loop_values(step, claim)
        if got is None or self.trace.truncated or self.trace.timeout or self.trace.error:
            return Judgement(
                step.index, claim, UNVERIFIABLE, None, note="no single loop over that variable"
            )
        true = "[" + ", ".join(got) + "]"
        if claim.some:
            return self._some_loop_values(step, claim, got)
        verdict = agrees(claim.value, true)
        said = literal_value(claim.value)
        if (
            verdict is False
            and isinstance(said, list)
            and len(said) > len(got)
            and all(agrees(repr(v), t) is True for v, t in zip(said, got, strict=False))
            and self._left_early(claim.name or "")
        ):
            # "the loop will try idx = 0 through 4" of a loop that breaks after two: what it
            # ranges over, not a slip about the values it took.
            return Judgement(
                step.index,
                claim,
                UNVERIFIABLE,
                None,
                true,
                "the loop stops early: these may be the values it ranges over",
            )
        if verdict is None:
            return Judgement(step.index, claim, UNVERIFIABLE, None, true, "not comparable")
        return Judgement(
            step.index,
            claim,
            CONSISTENT if verdict else CONTRADICTED,
            None,
            None if verdict else true,
            "" if verdict else f"{claim.name} takes {true}",
        )

    def _left_early(self, name: str) -> bool:
        """Did the run leave the loop over `name` by a `break` or `return` in its body?"""
        for h, _b, end in self.shape.loops:
            if name not in self.shape.for_targets.get(h, set()):
                continue
            stops = {
                k
                for k in range(h, end + 1)
                if re.match(r"\s*(?:break|return)\b", self.shape.lines[k - 1])
            }
            return any(st.event == "line" and st.line in stops for st in self.trace.steps)
        return False

    def _some_loop_values(self, step: ReasoningStep, claim: Claim, got: list[str]) -> Judgement:
        """ "i % 2 == 0 for i = 0, 2, 4": each value named is one the loop variable takes."""
        said = literal_value(claim.value)
        took = [literal_value(v) for v in got]
        if not isinstance(said, list) or not all(is_literal(v) for v in got):
            return Judgement(step.index, claim, UNVERIFIABLE, None, note="not comparable")
        shown = "[" + ", ".join(got) + "]"
        if all(v in took for v in said):
            return Judgement(step.index, claim, CONSISTENT, None, shown)
        return Judgement(
            step.index, claim, CONTRADICTED, None, shown, f"{claim.name} takes {shown}"
        )

    def _values_at_line(self, step: ReasoningStep, claim: Claim) -> Judgement:
        """ "positions 1, 3 and 5 get swapcased": the values the loop variable has each time f's
        own frame runs the line making that call. Every value named must be one of them (a
        writer may name a few and mean "and so on")."""
        tr = self.trace
        if tr.truncated or tr.timeout or tr.error:
            return Judgement(step.index, claim, UNVERIFIABLE, None, note="the run is incomplete")
        seen = [
            have
            for k, st in enumerate(tr.steps)
            if self.pos.top[k]
            and st.event == "line"
            and st.line == claim.line
            and (have := self.pos.env[k].get(claim.name or "")) is not None
        ]
        true = sorted({literal_value(v) for v in seen}, key=repr)
        said = literal_value(claim.value)
        if not isinstance(said, list) or not all(isinstance(v, int) for v in true + said):
            return Judgement(step.index, claim, UNVERIFIABLE, None, note="not comparable")
        shown = repr(true)
        if set(said) <= set(true):
            return Judgement(step.index, claim, CONSISTENT, None, shown)
        return Judgement(
            step.index,
            claim,
            CONTRADICTED,
            None,
            shown,
            f"line {claim.line} runs for {claim.name} in {shown}",
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
        if claim.value.startswith(TYPE_PREFIX):  # "the function returns a list of ..."
            fits = type_verdict(claim.value, tr.return_repr)
            if fits is None or not claim.subject_f:
                return Judgement(step.index, claim, UNVERIFIABLE, at, tr.return_repr)
            verdict = CONSISTENT if fits else CONTRADICTED
            return Judgement(
                step.index, claim, verdict, at, tr.return_repr, f"f returns {tr.return_repr}"
            )
        if claim.inferred and not _same_type(claim.value, tr.return_repr):
            # "..., giving [2, 4]." read as the result: a value of another type than f's speaks
            # of something else.
            return Judgement(step.index, claim, UNVERIFIABLE, at, tr.return_repr)
        want, have = value_key(claim.value), value_key(tr.return_repr)
        if want is OPAQUE or have is OPAQUE:
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


def _could_be_between(claimed: object, state: object) -> bool:
    """Could `claimed` be a state between two changes of `state` on one line (what pops leave:
    part of it), or a value taken out of it (what a pop gives)?"""
    if not isinstance(state, list | str):
        return False
    if isinstance(claimed, type(state)) and len(claimed) < len(state):
        rest = list(state)
        for x in claimed:
            if x not in rest:
                return False
            rest.remove(x)
        return True
    try:
        return claimed in state
    except TypeError:
        return False


def _part_of(claimed: str, true: str | None) -> bool:
    """Is the claimed value one member of a small tuple the program computed (a popped pair, a
    partition)? Writers name the member they care about; that is no slip."""
    obj = literal_value(true) if true is not None else None
    if not isinstance(obj, tuple) or not 2 <= len(obj) <= 3:
        return False
    want = value_key(claimed)
    return want is not OPAQUE and any(value_key(repr(x)) == want for x in obj)


_ELSEWHERE = "the change is made at"
_PREMISE = re.compile(r"\b(?:so|therefore|thus|hence|which\s+means|meaning)\b|→|->|=>", re.I)
"""Words that make what was said before them the reason for what follows."""


def _same_type(claimed: str, true: str | None) -> bool:
    if true is None:
        return False
    a, b = literal_value(claimed), literal_value(true)
    return type(a) is type(b)


_BUILTINS = frozenset(["len", "str", "int", "list", "sorted", "sum", "min", "max", "range", "set"])


def _names_of(src: str) -> set[str]:
    try:
        tree = safe_ast.parse(src, mode="eval")
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - {"bool"}
