"""What a parsed chain of thought is made of: reasoning steps, and the checkable claims in them.

A claim names a *subject* (a variable of `f`, an expression over its frame, a condition, the
loop, f's result), the *value* the chain states for it, *where* in the text it was read (so a
user is sent to the exact words), *when* in the run it speaks of (an iteration, the end of a
loop, the start) and *where it came from* (the scratchpad grammar, the prose reader, or a
model's restatement). No value is judged here: `cruxtui.core.reasoning.claim_judge` does that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BINDING = "binding"
"""A variable's value: `x = [1, 2]`, "count becomes 3"."""
EXPRESSION = "expression"
"""The value of an expression over the frame: "`nums.count(1)` returns 3", "`s[5:8]` is ''"."""
CONDITION = "condition"
"""A truth value: "`6173 < 1000` is False", "the condition is not met"."""
RETURN = "return"
"""f's result: the final answer, "the function returns 'ab'"."""
RAISE = "raise"
CARRIED = "carried"
"""A value the chain first states here and carries on to a claim the run contradicts, though the
program never computes it (`carried_values`)."""
ITERATION = "iteration"
"""The loop reaches its N-th iteration ("in the third iteration")."""
LOOP_COUNT = "loop_count"
"""How many times the loop body runs ("the loop runs 9 times")."""
LOOP_VALUES = "loop_values"
"""The values a loop variable takes ("k takes the values 1 and 2")."""

PROSE = "prose"
SCRATCHPAD = "scratchpad"
MODEL = "model"
"""Provenance: read by the prose patterns, by the scratchpad grammar, or restated by a model."""

EMPTY = "<empty>"
"""A claimed value given in words as "empty": any value of length 0 agrees with it."""


@dataclass
class Claim:
    """One checkable statement, e.g. `x = [1, 2]`, `6173 < 1000 -> False`, `returns 'ab'`.

    `value` is the claimed value as Python literal text ("True"/"False" for conditions, the ordinal
    for an iteration, the count for a loop count, a list literal for loop values). `text` is the
    span of the chain the claim was read from, `start`/`end` its place in the whole chain.
    """

    kind: str
    text: str
    value: str
    name: str | None = None
    """The variable (binding, loop values) or the expression's source (expression, condition)."""
    condition: str | None = None
    line: int | None = None
    ordinal: int | None = None
    subject_f: bool = True
    """For return claims: False when the subject may be a helper or a method rather than `f`."""
    change: bool = False
    """For bindings: worded as a change ("becomes", "is now", "is set to"), not a plain statement."""
    start: int = -1
    end: int = -1
    phase_end: bool = False
    """Claimed for the end of a stretch of work ("after the loop", "finally", "..., giving X")."""
    before_exit: bool = False
    """Written before the words that end the loop ("len(d) is 1, so the loop stops"): it speaks
    of the state the chain concludes the stop from, not of the state after the loop."""
    source: str = PROSE
    retracted: bool = False
    """Taken back by a self-correction further on ("wait, actually ...")."""
    before_line: int | None = None
    """Judged on the state as this line starts (the argument of a call the sentence names)."""
    by_method: bool = False
    """The subject is the one call of a method the sentence names ("rsplit ... which gives X",
    "istitle is True"): it contradicts only with a value of the type that call gives."""
    some: bool = False
    """For loop values: the values a test holds for or an action is done for ("i % 2 == 0 for
    i = 0, 2, 4"), not all the loop variable takes: each one named must be one of them."""
    inferred: bool = False
    """The subject is not written next to the value but read from the sentence ("... removed from
    nums, giving [2]"): judged only where the value has the subject's type."""
    asked: bool = False
    """Written as a question ("does 'mjqw...' start with 'mjs'?"): it asks, it states nothing.
    Kept among the claims (a correction after it may take it back), never judged."""

    def describe(self) -> str:
        if self.kind == BINDING:
            return f"{self.name} = {self.value}"
        if self.kind == EXPRESSION:
            return f"{self.name} -> {self.value}"
        if self.kind == CONDITION:
            return f"{self.name or self.condition or 'condition'} -> {self.value}"
        if self.kind == RETURN:
            return f"returns {self.value}"
        if self.kind == RAISE:
            return f"raises {self.value}"
        if self.kind == ITERATION:
            return f"iteration {self.value}"
        if self.kind == LOOP_VALUES:
            return f"{self.name} takes {self.value}"
        if self.kind == CARRIED:
            return f"{self.value} (never computed)"
        return f"loop runs {self.value} times"


@dataclass
class ReasoningStep:
    """A sentence, line or scratchpad entry, with its place in the original text."""

    index: int
    text: str
    start: int
    end: int
    claims: list[Claim] = field(default_factory=list)
    line: int | None = None
    """Source line named by a scratchpad entry (`line N: ...`)."""
    iteration: int | None = None
    """Ordinal of the loop iteration the step speaks of ("in the second iteration" -> 2)."""
    after_loop: bool = False
    """The step speaks of the state once a loop has finished ("after the loop, ...")."""
    at_end: bool = False
    """The step speaks of the state as f finishes ("finally", "at the end", "in the end")."""
    at_call: bool = False
    """The step states the arguments as bound at the call (scratchpad `call f(...)`, "initially")."""
    code_refs: list[str] = field(default_factory=list)
    """Backticked source code the step quotes ("running `x += 1`"): where in the code it is."""
    in_loop: bool = False
    """The step speaks of the state while a loop runs ("when the loop runs", "inside the loop")."""
    loop_ordinal: int | None = None
    """Which of f's loops (in the order written) "after the second loop" speaks of."""
    named_loop: int | None = None
    """Which of f's loops (in the order written) the step names by its place ("Second loop:
    ..., so i goes 1, 2"): the one its loop values are of."""


@dataclass
class Chain:
    """A parsed chain of thought."""

    text: str
    format: str  # "prose" | "scratchpad"
    steps: list[ReasoningStep]
    problems: list[str] = field(default_factory=list)
    """Scratchpad entries that do not follow the grammar, as `entry N: reason` lines."""
    code_spans: list[tuple[int, int]] = field(default_factory=list)
    """Stretches of the text that are code (fenced, indented, f re-printed): never claims."""

    @property
    def claims(self) -> list[Claim]:
        return [c for s in self.steps for c in s.claims]
