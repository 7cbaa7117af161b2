"""A right answer raises the bar for a contradiction.

A correct chain always ends on the right answer, so every false alarm on a correct chain is
raised in a chain whose final answer the trace confirms; and most chains whose answer is right
are correct throughout (a slip that leaves the answer right is rare: it has to cancel out or not
matter). So in such a chain a contradiction read in mid-chain is more likely the reader's
misreading than the writer's slip, and it stands only on strong evidence:

- **the subject is named**: a traced variable or an expression over the frame written out in
  the claim's own words (every variable it reads is written there), or a table column headed
  by it; not inferred from the sentence, not a method named alone, not "the condition";
- **the value is nowhere else in the run**: no variable at any step, no sub-expression the
  program evaluated (`Step.values`), no expression the chain names, not f's result, not an
  argument holds it — a true value attached to the wrong subject is a misreading, not a slip
  (strings and containers only: numbers and truth values coincide by chance). The subject's own values at other times count too, unless the
  chain's words say when (an iteration, after the loop, finally, a line, a call): otherwise the
  placement may be what is wrong. A condition's truth is held against that condition's own
  outcomes only (True and False are everywhere);
- **the words assert it**: not hedged ("I think", "probably", "should be", a question).

A contradiction short of that becomes unverifiable, with a note that says which part failed.
"""

from __future__ import annotations

import re
from typing import Any

from cruxtui.core.reasoning.claim_judge import CONSISTENT, CONTRADICTED, UNVERIFIABLE, Judgement
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
    SCRATCHPAD,
    Chain,
    Claim,
    ReasoningStep,
)
from cruxtui.core.reasoning.code_facts import CodeFacts
from cruxtui.core.reasoning.final_answer import TYPE_PREFIX
from cruxtui.core.reasoning.frame_eval import ClaimValues, subject_expression
from cruxtui.core.reasoning.literal_scan import OPAQUE, literal_value, scan_literal, value_key
from cruxtui.core.reasoning.run_values import RunValues, distinctive, squeeze
from cruxtui.core.reasoning.self_correction import corrected_after
from cruxtui.core.reasoning.trace_positions import Positions, condition_lines
from cruxtui.core.util import safe_ast

_HEDGE = re.compile(
    r"\b(?:i\s+think|i\s+believe|i\s+guess|i\s+suppose|i'd\s+say|i\s+would\s+say|i\s+assume|"
    r"probably|maybe|perhaps|presumably|likely|possibly|might|may\s+be|seems?|apparently|would|could|"
    r"should\s+be|not\s+sure|i'm\s+not\s+certain|roughly|approximately|my\s+guess)\b",
    re.I,
)
_ANOTHER_CANDIDATE = re.compile(
    r"\b(?:candidate|alternative|alternatively|try(?:ing)?|tried|option|options|choice|instead|"
    r"rejected|reject|would\s+not\s+work|wouldn't\s+work|doesn't\s+work|does\s+not\s+work|"
    r"won't\s+work|e\.g\.|for\s+example|for\s+instance|suppose|say\s+we)\b|[✗✘❌]",
    re.I,
)
_CONDITIONAL_MOOD = re.compile(
    r"\b(?:would|could|might)(?:\s+(?:also|still|then))?\s+(?:have|be|run|give|get|return|make|stop|end|go|take)\b",
    re.I,
)
_HEDGED_AFTER = re.compile(r"[`\s]*(?:would|could|might|may)\b", re.I)
_LITERAL_STARTS = frozenset("'\"[({-0123456789.TFNbBrRuUs")
_TAIL = 1000
_BUILTINS = frozenset(
    ["len", "str", "int", "list", "sorted", "sum", "min", "max", "range", "set", "bool", "dict"]
)


def answer_right(chain: Chain, trace: Any, judgements: list[Judgement], target: str | None) -> bool:
    """Does the trace confirm the chain's final answer? For the input task (`target` given): f on
    the proposed call gives the target output. Otherwise: the last answer the chain gives (a
    value, not a type) is judged consistent."""
    if target is not None:
        have = value_key(trace.return_repr) if trace.return_repr is not None else OPAQUE
        return have is not OPAQUE and have == value_key(target)
    final = None
    for j in judgements:
        c = j.claim
        if (
            c.kind in (RETURN, RAISE)
            and not c.retracted
            and (final is None or c.start >= final.claim.start)
        ):
            final = j
    if (
        final is not None
        and not final.claim.value.startswith(TYPE_PREFIX)
        and final.claim.subject_f
        and final.verdict != UNVERIFIABLE
    ):
        return final.verdict == CONSISTENT
    # No answer read, or none that can be checked: a correct chain still ends on the right
    # value in some form no reader knows ("So the tuple is (False, True).", "Result:
    # `'hosu'`."), and the bar must not drop for want of its wording. Strings and containers
    # only: a number or truth value last written may be any count or test that equals it.
    if trace.return_repr is None or not distinctive(trace.return_repr):
        return False
    have = value_key(trace.return_repr)
    return have is not OPAQUE and _last_value(chain.text) == have


def _last_value(text: str) -> object:
    """The value key of the last literal written in the chain's last _TAIL characters (OPAQUE
    when there is none). Only the tail is read: the answer is where a chain ends, and a
    bounded stretch keeps unbalanced brackets in untrusted text from costing quadratic time."""
    tail = text[-_TAIL:]
    last: object = OPAQUE
    i, n = 0, len(tail)
    while i < n:
        c = tail[i]
        if c in _LITERAL_STARTS and not (i > 0 and (tail[i - 1].isalnum() or tail[i - 1] == "_")):
            got = scan_literal(tail, i)
            if got is not None:
                last = value_key(got[1])
                i = max(got[0], i + 1)
                continue
        i += 1
    return last


def _names_read(src: str) -> set[str] | None:
    import ast

    try:
        tree = safe_ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - _BUILTINS


class AnswerBar:
    """Demotes the contradictions of a chain with a right answer that lack strong evidence."""

    def __init__(
        self,
        chain: Chain,
        trace: Any,
        shape: CodeFacts,
        pos: Positions,
        values: ClaimValues,
        run_values: RunValues | None = None,
        target: str | None = None,
    ) -> None:
        self.chain, self.trace, self.shape, self.pos, self.values = chain, trace, shape, pos, values
        self.run_values = run_values or RunValues(trace, pos, values)
        self.target = target
        """Input task: the output the proposed call must give (None for the output task)."""
        self.step_of = {id(c): s for s in chain.steps for c in s.claims}

    def apply(self, judgements: list[Judgement]) -> list[Judgement]:
        self.judgements = judgements
        out = []
        for j in judgements:
            if j.verdict == CONTRADICTED and (why := self.weakness(j)) is not None:
                j = Judgement(
                    j.step,
                    j.claim,
                    UNVERIFIABLE,
                    j.trace_step,
                    j.true_value,
                    f"the answer is right, and {why}: more likely a misreading than a slip",
                )
            out.append(j)
        return out

    def weakness(self, j: Judgement) -> str | None:
        """Why the contradiction is not strong evidence, or None when it is."""
        claim = j.claim
        step = self.step_of.get(id(claim))
        if step is None:
            return None
        if not self._named(claim):
            return "the subject is not named in the claim"
        if self._hedged(step, claim):
            return "the claim is hedged"
        if self._questioned(step, claim):
            return "a correction follows it at once"
        if self._put_right(j):
            return "the chain states it again at once with the value the run has there"
        if claim.kind == CONDITION:
            if claim.value in self._own_outcomes(claim) and not self._when_said(step, claim):
                return f"the condition is {claim.value} elsewhere in the run"
            return None
        own = self._own_subjects(claim)
        if claim.value == EMPTY:
            if self.run_values.any_empty_but(own):
                return "an empty value is held elsewhere in the run"
            return None
        want = value_key(claim.value)
        if want is OPAQUE:
            return "the claimed value is not a literal"
        mine = set().union(*(self.run_values.by_subject.get(s, set()) for s in own))
        if want in mine:
            if not self._when_said(step, claim):
                return f"the subject is {claim.value} elsewhere in the run"
            return None
        if distinctive(claim.value) and self.run_values.held_by_others(want, own):
            return f"{claim.value} is a value the run holds elsewhere"
        types = self.run_values.types.get(own[0], set())
        if (
            claim.kind in (BINDING, EXPRESSION)
            and types
            and type(literal_value(claim.value)) not in types
        ):
            return "the subject never holds a value of that type"
        return None

    def _questioned(self, step: ReasoningStep, claim: Claim) -> bool:
        """Does a correction marker follow the claim at once (in the rest of its sentence or the
        next one: "len(s) is 4. Wait, the string has 5 characters")? The writer is taking it
        back, even when the words that put it right name no subject the reader knows."""
        steps = self.chain.steps
        hi = steps[step.index + 1].end if step.index + 1 < len(steps) else step.end
        if not corrected_after(self.chain.text, claim.end, hi):
            return False
        # "3 // 2 = 2. Hmm, wait. ... I'll take middle = 2": a re-check that states the value
        # again takes nothing back.
        later = steps[min(step.index + 3, len(steps) - 1)].end
        return not any(
            c.start >= claim.end
            and c.start < later
            and c.kind in (BINDING, EXPRESSION)
            and value_key(c.value) == value_key(claim.value)
            for s in steps[step.index :]
            for c in s.claims
        )

    def _put_right(self, j: Judgement) -> bool:
        """Does the chain state the subject again at once (within two reasoning steps, the next
        claim on it) with another value, one the run gives it there: the value it has where `j`
        is placed or the next one it takes? A writer who gives one variable two values for one
        moment and ends on the right answer has put the first right, whatever words come between
        ("res = [3]. Hmm. x * 2 is 6, so res = [6]"): the self-correction reader cannot know all
        of them. A value for a later moment ("res = [3]. Then res = [2, 6]") puts nothing right."""
        claim = j.claim
        if claim.kind not in (BINDING, EXPRESSION) or j.trace_step is None:
            return False
        at = next((k for k, st in enumerate(self.trace.steps) if st.index == j.trace_step), None)
        again = next(
            (
                b
                for b in self.judgements
                if b.claim.start >= claim.end
                and not b.claim.retracted
                and b.claim.kind == claim.kind
                and b.claim.name == claim.name
            ),
            None,
        )
        if at is None or again is None or again.verdict != CONSISTENT or again.step > j.step + 2:
            return False
        if value_key(again.claim.value) == value_key(claim.value):
            return False
        if self._moves_on(j, again):
            return False
        held: list[object] = []
        for k in range(at, len(self.pos)):
            have = self.values.at(claim, k)
            if have is not None and (not held or value_key(have) != held[-1]):
                held.append(value_key(have))
            if len(held) == 2:
                break
        return value_key(again.claim.value) in held

    def _moves_on(self, a: Judgement, b: Judgement) -> bool:
        """Do the words between two claims on one subject take the run to another moment: a
        value of another variable ("i = 7, so total becomes 9"), an iteration, the loop's end?"""
        between = [
            c
            for s in self.chain.steps[a.step : b.step + 1]
            for c in s.claims
            if a.claim.end <= c.start < b.claim.start
        ]
        if any(
            c.kind in (ITERATION, LOOP_VALUES, LOOP_COUNT)
            or (c.kind == BINDING and c.name != a.claim.name)
            for c in between
        ):
            return True
        first = self.chain.steps[a.step]
        return any(
            s.iteration != first.iteration or s.after_loop or s.at_end
            for s in self.chain.steps[a.step + 1 : b.step + 1]
        )

    def _named(self, claim: Claim) -> bool:
        if claim.inferred or claim.by_method:
            return False
        if claim.source == SCRATCHPAD or claim.kind in (ITERATION, LOOP_COUNT, RETURN, RAISE):
            return claim.subject_f if claim.kind == RETURN else True
        words = set(re.findall(r"[A-Za-z_]\w*", claim.text))
        if self._table_row(claim):
            return True
        if claim.kind in (BINDING, LOOP_VALUES):
            return (claim.name or "") in words
        if claim.kind == CONDITION and not claim.name:
            return claim.condition is not None
        reads = _names_read(claim.name or "")
        return reads is not None and reads <= words

    def _table_row(self, claim: Claim) -> bool:
        text = self.chain.text
        head = text[text.rfind("\n", 0, max(claim.start, 0)) + 1 : claim.start]
        return head.lstrip().startswith("|")

    def _other_input(self, step: ReasoningStep, claim: Claim) -> bool:
        """Input task: does the step try an input other than the one proposed — a call of f
        with other arguments ("f('aaa', 'aa') gives 1"), or an argument given another value
        than the proposed call's ("- number = 4: only D ✗")?"""
        call = re.sub(r"\s+", "", self.trace.call)
        for m in re.finditer(r"(?<![\w.])f\(", step.text):
            if not re.sub(r"\s+", "", step.text[m.start() :]).startswith(call):
                return True
        # An argument given another value than the proposed call's, in this step: the step
        # works out that other input's run ("- B = '19' → text = '19kefp7': text[2:] = ...").
        return any(
            c.kind == BINDING
            and c.name in self.shape.params
            and (start := self.pos.env[0].get(c.name) if len(self.pos) else None) is not None
            and value_key(start) != value_key(c.value)
            for c in step.claims
        )

    def _hedged(self, step: ReasoningStep, claim: Claim) -> bool:
        text = self.chain.text
        sentence = text[step.start : claim.end]
        after = text[claim.end : claim.end + 2]
        if _HEDGED_AFTER.match(text, claim.end):
            return True  # "`insert_loc = 0` would do, but ...": an option, not the run
        if self.target is not None and (
            _ANOTHER_CANDIDATE.search(step.text) or self._other_input(step, claim)
        ):
            # Input task: "Candidate 'a1': ... Rejected", "Check the alternative 999": the chain
            # tries inputs other than the one it proposes; their runs are not the traced one.
            return True
        if _CONDITIONAL_MOOD.search(step.text):
            # "For comparison, with text = 'C7x' the loop would run once": the sentence is in
            # the conditional, about a run that is not this one.
            return True
        return bool(_HEDGE.search(sentence)) or after.lstrip().startswith("?")

    def _when_said(self, step: ReasoningStep, claim: Claim) -> bool:
        """Do the chain's words fix when in the run the claim speaks of? Not when the sentence
        gives its subject other values too ("n = 3, n = 10, ... at the end"): it tells a
        sequence, and the words of time belong to one of them at most."""
        if self.chain.format == "scratchpad":
            return True
        if any(
            c is not claim
            and c.kind == claim.kind
            and c.name == claim.name
            and c.value != claim.value
            for c in step.claims
        ):
            return False
        if step.iteration is not None and self.pos.iterations is not None:
            return True
        if step.after_loop or step.at_end or step.at_call:
            return True
        return any(x is not None for x in (step.line, claim.line, claim.before_line))

    def _own_subjects(self, claim: Claim) -> list[str]:
        if claim.kind == BINDING:
            return [f"var:{claim.name}"]
        if claim.kind == LOOP_VALUES:
            return [f"loop:{claim.name}"]  # the list of values it takes, a subject of its own
        if claim.kind in (ITERATION, LOOP_COUNT):
            return ["loop"]
        if claim.kind == RETURN:
            return ["return"]
        expr = subject_expression(claim) or claim.name or ""
        return [f"expr:{squeeze(expr)}"]

    def _own_outcomes(self, claim: Claim) -> set[str]:
        """The truth values this condition takes anywhere in the run."""
        if claim.line is None and self.values.known(claim):
            return {v for k in range(len(self.pos)) if (v := self.values.at(claim, k)) is not None}
        lines = condition_lines(claim, self.shape)
        return {str(c[1]) for c in self.pos.cond if c is not None and c[0] in lines}


def raise_the_bar(
    chain: Chain,
    trace: Any,
    shape: CodeFacts,
    pos: Positions,
    values: ClaimValues,
    run_values: RunValues,
    judgements: list[Judgement],
    target: str | None = None,
) -> list[Judgement]:
    """The judgements, with the weak contradictions of a chain whose answer is right demoted."""
    if not answer_right(chain, trace, judgements, target):
        return judgements
    return AnswerBar(chain, trace, shape, pos, values, run_values, target).apply(judgements)
