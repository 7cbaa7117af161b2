"""Hold a chain of thought against the real execution: where does the reasoning first go wrong?

`align(chain, trace)` places each reasoning step of a parsed chain (`chain_parse`) on a
*position* of the trace (`trace_positions`: a trace step, read as "the state once the previous
line of this frame has run") by a monotone dynamic programme (`step_placement`), after working
out the value of every claim's subject at every position (`frame_eval`: variables from the
trace, expressions as the program computed them or evaluated in the sandbox). Each claim is then
judged consistent, contradicted (with the true value) or unverifiable (`claim_judge`). Two
passes follow: when the chain's answer is right a contradiction must rest on strong evidence
(`answer_bar`), and a wrong value the program never computes is followed back to where the
chain first states it (`carried_values`). The first contradicted claim is the first divergence.

Values first, wording second: a stated value the program never had where the chain's order
places it is the evidence of a slip; the words only say which value is meant, and when they do
not say it unambiguously the claim is unverifiable rather than contradicted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cruxtui.core.reasoning.answer_bar import raise_the_bar
from cruxtui.core.reasoning.carried_values import carry_back
from cruxtui.core.reasoning.chain_parse import parse_chain
from cruxtui.core.reasoning.claim_judge import (
    CONSISTENT,
    CONTRADICTED,
    UNVERIFIABLE,
    Judge,
    Judgement,
)
from cruxtui.core.reasoning.claim_types import RETURN, Chain, Claim
from cruxtui.core.reasoning.code_facts import code_facts
from cruxtui.core.reasoning.final_answer import final_claim, other_calls, stated_input
from cruxtui.core.reasoning.frame_eval import ClaimValues
from cruxtui.core.reasoning.literal_scan import is_literal, value_key
from cruxtui.core.reasoning.run_values import RunValues
from cruxtui.core.reasoning.step_placement import place, step_line, step_scores
from cruxtui.core.reasoning.trace_positions import positions

__all__ = [
    "CONSISTENT",
    "CONTRADICTED",
    "UNVERIFIABLE",
    "Alignment",
    "Judgement",
    "align",
    "align_text",
    "call_to_trace",
]


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
            "code_spans": [list(span) for span in self.chain.code_spans],
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


def align(chain: Chain, trace: Any, sandbox: Any = None, target: str | None = None) -> Alignment:
    """Place the chain's steps on the trace and judge every claim (see the module doc).
    `target`: for the input task, the output the proposed call must give."""
    n = len(trace.steps)
    if n == 0:
        judgements = [
            Judgement(s.index, c, UNVERIFIABLE, None, note="no trace to check against")
            for s in chain.steps
            for c in s.claims
        ]
        return Alignment(chain, trace, [None] * len(chain.steps), judgements)
    shape = code_facts(trace.code)
    pos = positions(trace, shape)
    values = ClaimValues(chain.claims, pos, sandbox)
    lines = [step_line(s, shape, pos) for s in chain.steps]
    scores = [
        step_scores(s, trace, shape, pos, line, values)
        for s, line in zip(chain.steps, lines, strict=True)
    ]
    if chain.format == "scratchpad":  # a scratchpad follows f's own activation only
        scores = [[v if pos.top[k] else 0.0 for k, v in enumerate(row)] for row in scores]
    placed = place(scores, n)
    judgements = Judge(chain, trace, shape, pos, placed, lines, values).run()
    run_values = RunValues(trace, pos, values)
    judgements = raise_the_bar(chain, trace, shape, pos, values, run_values, judgements, target)
    where = [trace.steps[p].index if p is not None else None for p in placed]
    judgements = carry_back(chain, run_values, judgements, where, target)
    return Alignment(chain, trace, where, judgements)


def align_text(
    text: str,
    trace: Any,
    sandbox: Any = None,
    target: str | None = None,
    extract: Callable[[Chain], object] | None = None,
) -> Alignment:
    """Parse `text` (prose or scratchpad) for the traced code and align it. `target`: for the
    input task, the output the chain's proposed call must give (its answer claims as much).
    `extract`: adds claims to the parsed chain before it is judged (model-assisted extraction,
    `model_extract`); the one way the CLI, the reasoning pane and the benchmark align a chain."""
    chain = parse_chain(text, trace.code, trace.call)
    if target is not None:
        claim_target(chain, trace.call, target)
    other_calls(chain, trace.call, final_claim(chain), target)
    if extract is not None:
        extract(chain)
    return align(chain, trace, sandbox, target)


def claim_target(chain: Chain, call: str, target: str) -> None:
    """Input task: proposing `f(x)` claims that f(x) returns the target output. The claim sits on
    the last place the chain writes that call (its answer), unless the chain already states f's
    result there. The task restated ("find `array` such that `f(array) == [8, -1]`": f of
    unknowns giving the target) is the question, not a claim: it is dropped."""
    text = chain.text
    goal = value_key(target)
    for st in chain.steps:
        st.claims = [
            c
            for c in st.claims
            if not (c.kind == RETURN and value_key(c.value) == goal and _of_unknowns(c.text))
        ]
    squeezed = re.sub(r"\s+", "", call)
    at = -1
    for m in re.finditer(r"\bf\(", text):
        end = _call_end(text, m.end() - 1)
        if end is not None and re.sub(r"\s+", "", text[m.start() : end]) == squeezed:
            at = m.start()
            stop = end
    if at < 0 and (named := stated_input(text, call)) is not None:
        at, stop = named  # "so the input is [3, 5]": the call proposed without being written
    if at < 0:
        return
    step = next((s for s in reversed(chain.steps) if s.start <= at < s.end), None)
    if step is None or any(c.kind == RETURN and c.start <= at < c.end + 1 for c in step.claims):
        return
    claim = Claim(RETURN, text[at:stop], target, start=at, end=stop)
    step.claims.append(claim)
    step.claims.sort(key=lambda c: c.start)


def _of_unknowns(text: str) -> bool:
    """Does `text` write a call of f whose arguments are not all values (`f(array)`, `f(??)`)?"""
    m = re.search(r"(?<![\w.])f\s*\(", text)
    if m is None:
        return False
    end = _call_end(text, m.end() - 1)
    if end is None:
        return False
    inner = text[m.end() : end - 1].strip()
    return bool(inner) and not is_literal(f"({inner},)")


def _call_end(text: str, open_paren: int) -> int | None:
    depth = 0
    for j in range(open_paren, min(len(text), open_paren + 2000)):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
    return None


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
