"""Reading a chain of thought: ordered reasoning steps and the checkable claims in them.

Two inputs are understood. A **scratchpad** (`scratchpad_parse`) is parsed exactly. **Free
prose** goes through: the `<think>` tags and the answer block are set apart (`final_answer`);
code is blanked (`code_spans`: fenced, indented, a re-printed `f`, statements, signatures,
`assert f(...) == ??`); the rest is split into sentences (`sentence_split`); each sentence's
claims are read (`prose_claims`) with the place in the run it speaks of (an iteration, the end
of the loop, the start, the end of a phase); and self-corrections retract what they correct
(`self_correction`). No value is judged here: `claim_judge` holds the claims against a trace.
"""

from __future__ import annotations

import re
from typing import Any

from cruxtui.core.reasoning.claim_types import (
    BINDING,
    CONDITION,
    EXPRESSION,
    ITERATION,
    LOOP_COUNT,
    RAISE,
    RETURN,
    Chain,
    Claim,
    ReasoningStep,
)
from cruxtui.core.reasoning.code_facts import CHANGING, code_facts
from cruxtui.core.reasoning.code_spans import blank, call_keywords, code_spans, inline_code
from cruxtui.core.reasoning.comment_claims import comment_claims
from cruxtui.core.reasoning.final_answer import (
    answer_after_thinking,
    answer_block,
    answer_forms,
    blank_think_tags,
    block_claim,
    closing_answer,
    comment_answers,
    concluding_value,
    described_answer,
    namely_returns,
    names_a_call,
    of_a_rewrite,
    passed_args,
    same_call,
    stated_answers,
    tests_another_call,
    tests_the_call,
    type_claims,
    word_answers,
)
from cruxtui.core.reasoning.prose_claims import (
    ORDINALS,
    answer_questions,
    found_at,
    iterations,
    last_literal,
    name_quoted_conditions,
    of_a_call_before,
    read_claims,
)
from cruxtui.core.reasoning.scratchpad_parse import parse_call_args, parse_scratchpad
from cruxtui.core.reasoning.self_correction import retract
from cruxtui.core.reasoning.sentence_split import split_at_iterations, split_steps
from cruxtui.core.reasoning.table_claims import table_rows

__all__ = ["parse_call_args", "parse_chain", "parse_prose", "parse_scratchpad"]

_AFTER_LOOP_RE = re.compile(
    r"\b(?:after\s+(?:the\s+)?(?:whole\s+|entire\s+|for\s+|while\s+)?(?:loop|iterations)|"
    r"once\s+the\s+(?:\w+\s+)?loop\s+(?:is\s+)?(?:done|finishe[sd]|ends|is\s+over|completes)|"
    r"when\s+the\s+loop\s+(?:is\s+done|ends|finishes|is\s+over|completes)|the\s+loop\s+(?:ends|is\s+over|"
    r"terminates|finishes|is\s+done|stops|exits|completes)|at\s+the\s+end\s+of\s+the\s+loop|"
    r"(?:we\s+)?exit\s+the\s+loop|out\s+of\s+the\s+loop|loop\s+(?:has\s+)?(?:finished|completed|"
    r"terminated|ended)|after\s+(?:all|every)\s+(?:the\s+)?(?:iterations|elements|characters|items)|"
    r"after\s+processing\s+(?:all|every|each)|(?:by|at|to)\s+the\s+end\s+of\s+the\s+(?:\w+\s+)?loop|"
    r"after\s+the\s+(?:first|second|third|last|final|outer|inner|while|for)\s+loop|"
    r"(?:that|this)\s+(?:finishes|ends|completes)\s+the\s+loop|(?:is|was)\s+the\s+last\s+iteration)",
    re.I,
)
_LOOP_STOPS_RE = re.compile(
    r"\b(?:so\s+|and\s+|then\s+|hence\s+|thus\s+)?(?:the\s+(?:\w+\s+)?loop\s+(?:ends|stops|terminates|"
    r"finishes|exits|is\s+over|is\s+done|completes|breaks)|we\s+(?:exit|leave|fall\s+out\s+of)\s+the\s+"
    r"(?:\w+\s+)?loop)\b",
    re.I,
)
"""The loop's end told as an event: words before it state why it ends, not what follows."""
_IN_LOOP_RE = re.compile(
    r"\b(?:(?:when|while|as)\s+the\s+(?:\w+\s+)?loop\s+(?:runs|is\s+running|starts|begins|executes)|"
    r"(?:inside|during|within)\s+the\s+(?:\w+\s+)?loop|in\s+the\s+loop\s+body)\b",
    re.I,
)
_AT_END_RE = re.compile(
    r"\b(?:finally|in\s+the\s+end|at\s+the\s+end(?!\s+of\s+(?:the|an?|its|this|that)\b)|eventually|ultimately|"
    r"by\s+the\s+end(?!\s+of\s+the)|"
    r"the\s+final\s+(?:value|state|list|string|dict(?:ionary)?|result))\b",
    re.I,
)
_PLACED_BEFORE = re.compile(
    r"\b(?:add(?:s|ed|ing)?|append(?:s|ed|ing)?|insert(?:s|ed|ing)?|put(?:s|ting)?|plac(?:e|es|ed|ing)|"
    r"push(?:es|ed|ing)?|go(?:es)?|went|land(?:s|ed)?|stick(?:s|ing)?|tack(?:s|ed)?|"
    r"attach(?:es|ed)?|mov(?:e|es|ed|ing)|stop(?:s|ped|ping)?|sits?|lies|reach(?:es|ed)?)"
    r"\b[^,;.\n]{0,30}$",
    re.I,
)
"""Words that put something somewhere or say where it is: "at the end" after them is a place in
a sequence ("adds key 8 at the end", "the slice stops at the end"), not the end of the run."""


def _speaks_of_the_end(chunk: str) -> bool:
    """Does the step speak of the state as f finishes ("finally", "at the end")?"""
    for m in _AT_END_RE.finditer(chunk):
        words = m.group(0).lower()
        if "at the end" in words and _PLACED_BEFORE.search(chunk[: m.start()]):
            continue
        return True
    return False


_AT_CALL_RE = re.compile(
    r"\b(?:initially|(?<!looks\s)(?<!looking\s)(?<!checks\s)(?<!only\s)at\s+the\s+start"
    r"(?!\s+of\s+(?:the|an?|its|this|that)\b)|at\s+first|to\s+begin\s+with|start(?:s|ing)?\s+(?:with|as|at|out)"
    r"|the\s+(?:function\s+)?(?:is\s+)?called\s+with|we\s+call\s+f|the\s+input\s+is"
    r"|the\s+arguments?\s+(?:is|are))\b",
    re.I,
)
_BULK_RESULT_RE = re.compile(
    r"\b(?:all|every|each|remaining|repeatedly|until|whole|entire)\b[^.;\n]*?\b(?:giving|leaving|"
    r"resulting\s+in|we\s+get|we\s+end\s+up\s+with|ends\s+up|left\s+with|so\s+\w+\s+becomes|"
    r"which\s+gives|to\s+get|produces|yields)\b",
    re.I,
)
_BARE_ORDINAL = re.compile(r"\b(?:" + "|".join(ORDINALS) + r")\b", re.I)
_LOOP_PLACE = re.compile(r"\b(first|second|third|fourth)\s+(?:`?for`?\s+)?loop\b", re.I)
"""A loop named by its place among f's loops ("Second loop: ...")."""
_LOOP_ORDINAL_RE = re.compile(
    r"\b(?:after|once|when)\s+the\s+(first|second|third)\s+(?:\w+\s+)?loop\b", re.I
)
_AFTER_CALL_RE = re.compile(
    r"\b(?:after|once)\s+(?:the\s+|we\s+|it\s+)?(?:call\s+(?:to|of)\s+)?`?\.?([a-z_]+)(?:\(\))?`?\b",
    re.I,
)
_GERUNDS = {
    "appending": "append",
    "sorting": "sort",
    "popping": "pop",
    "inserting": "insert",
    "removing": "remove",
    "reversing": "reverse",
    "extending": "extend",
    "updating": "update",
    "clearing": "clear",
    "splitting": "split",
    "replacing": "replace",
    "joining": "join",
    "stripping": "strip",
}
_LINE_REF_RE = re.compile(r"\b(?:after|on|in|at|executing|running)\s+line\s+(\d+)\b", re.I)


_ASIDE = re.compile(
    r",\s*(?:in\s+order|in\s+turn|of\s+course|as\s+expected|basically|essentially|"
    r"in\s+this\s+case|again|respectively|in\s+other\s+words|that\s+is|i\.e\.)\s*,",
    re.I,
)


def _quiet_asides(text: str) -> str:
    """ "the uppercase letters, in order, are S and R": an aside set off by commas is blanked
    (same length, so every offset still points into the chain) and the clause reads whole."""
    return _ASIDE.sub(lambda m: " " * len(m.group(0)), text)


_MATH_SIGNS = str.maketrans({"×": "*", "·": "*", "÷": "/", "−": "-", "←": "="})
"""Signs people write for Python's operators, one character for one so offsets hold: "4×2 = 8",
"x ← 4" (an assignment arrow)."""


def parse_chain(text: str, code: str, call: str | None = None) -> Chain:
    """Parse a chain of thought for the function `code`: the scratchpad if there is one, else
    prose. `call`: the call the chain reasons about, when known (a test in code of a call of
    another shape is then no answer)."""
    return parse_scratchpad(text) or parse_prose(text, code, call)


def parse_prose(text: str, code: str, call: str | None = None) -> Chain:
    facts = code_facts(code)
    args = passed_args(call, facts.params) or {}
    work = blank_think_tags(text)
    spans = code_spans(work, code)
    block = answer_block(work)
    body_end = block.start() if block else len(work)
    spans = sorted(spans + inline_code(work, facts.source_lines))
    masked = _quiet_asides(blank(work, spans + call_keywords(work)).translate(_MATH_SIGNS))
    rows = table_rows(masked[:body_end], facts)
    steps: list[ReasoningStep] = []
    for s, e in split_at_iterations(masked, split_steps(masked[:body_end])):
        chunk = masked[s:e]
        if not chunk.strip():
            continue
        step = ReasoningStep(len(steps), text[s:e], s, e)
        named = iterations(chunk)
        # A sentence naming two iterations gives no single place to read its claims in.
        step.iteration = named[0][0] if len({n for n, *_ in named}) == 1 else None
        if step.iteration is not None and len(_BARE_ORDINAL.findall(chunk)) > 1:
            step.iteration = None  # "the third iteration adds 17 and the fourth adds 89"
        if m := _LOOP_ORDINAL_RE.search(chunk):
            step.loop_ordinal = ORDINALS[m.group(1).lower()]
        if m := _LOOP_PLACE.search(chunk):
            step.named_loop = ORDINALS[m.group(1).lower()]
        step.after_loop = bool(_AFTER_LOOP_RE.search(chunk))
        step.at_end = _speaks_of_the_end(chunk) and not step.after_loop
        step.in_loop = bool(_IN_LOOP_RE.search(chunk)) and not (step.after_loop or step.at_end)
        step.at_call = bool(_AT_CALL_RE.search(chunk))
        if m := _LINE_REF_RE.search(chunk):
            step.line = int(m.group(1))
        elif m := _AFTER_CALL_RE.search(chunk):
            # "after the append, ...": the state once the line calling that method has run.
            method = m.group(1).lower()
            method = _GERUNDS.get(method, method)
            lines = facts.method_lines.get(method, set())
            if len(lines) == 1:
                step.line = next(iter(lines))
        step.code_refs = [
            c
            for c in re.findall(r"`([^`\n]{4,})`", text[s:e])
            if not c.strip().isidentifier() and "=" in c or c.strip().startswith("return")
        ]
        row = rows.get(masked.rfind("\n", 0, s) + 1)
        if row is not None:
            claims = [c for c in row if s <= c.start < e]
            for c in claims:
                c.start -= s
                c.end -= s
        else:
            claims = read_claims(chunk, facts, args)
        stop = _LOOP_STOPS_RE.search(chunk) if step.after_loop else None
        for c in claims:
            c.start += s
            c.end += s
            c.text = text[c.start : c.end].strip()
            if c.kind == RETURN and c.subject_f and s > 0 and of_a_call_before(masked, s, c.text):
                c.subject_f = False  # "`text.find('A')` ...; there is none, so it returns -1"
            if stop is not None and c.end <= s + stop.start() and c.kind != RETURN:
                c.before_exit = True  # "x is 1, so the loop stops": what the stop follows from
            elif c.kind in (BINDING, EXPRESSION) and (
                step.after_loop or step.at_end or _BULK_RESULT_RE.search(masked[s : c.end])
            ):
                c.phase_end = True
        _after_calls(masked, step, claims, facts)
        _quoted_condition(text[s:e], claims, facts)
        step.claims = [c for c in claims if c.kind != ITERATION or c.ordinal]
        steps.append(step)
    _commented(text, masked, steps, facts)
    name_quoted_conditions(steps, facts)
    answer_questions(steps, facts)
    found_at(steps, facts)
    _hypothetical_followups(masked, steps)
    _returned_across(masked, steps)
    _last_iteration(masked, steps)
    if block is not None:
        claim = block_claim(block) or _block_in_words(text, masked, block, facts)
        step = ReasoningStep(len(steps), block.group(0).strip(), block.start(), block.end())
        if claim is not None:
            step.claims.append(claim)
        steps.append(step)
    _answers(text, work, spans, steps, body_end, block is not None, facts.names, call)
    _described(text, work, spans, steps, body_end, code, call)
    for st in steps:
        for c in st.claims:
            if c.kind == RETURN and c.source == "prose" and of_a_rewrite(text, c, code):
                c.subject_f = False
    sentences = [(st.start, st.end) for st in steps]
    for claim in retract(masked, [c for st in steps for c in st.claims], sentences):
        home = next((st for st in steps if st.start <= claim.start < st.end), None)
        if home is not None:
            claim.text = text[claim.start : claim.end].strip()
            home.claims.append(claim)
            home.claims.sort(key=lambda c: c.start)
    return Chain(text, "prose", steps, code_spans=spans)


def _commented(text: str, masked: str, steps: list[ReasoningStep], facts: Any) -> None:
    """The values comments on quoted lines of f state (`comment_claims`), in the step holding
    each comment, where the prose reader found no claim in that comment."""
    for claim in comment_claims(text, masked, facts):
        home = next((st for st in steps if st.start <= claim.start < st.end), None)
        if home is None or any(c.start < claim.end and claim.start < c.end for c in home.claims):
            continue
        home.claims.append(claim)
        home.claims.sort(key=lambda c: c.start)


def _block_in_words(text: str, masked: str, block: re.Match[str], facts: Any) -> Claim | None:
    """An answer block that states the answer in words ("[ANSWER] The output is [1]
    [/ANSWER]", "[ANSWER] f(x) returns [1] [/ANSWER]"): its last statement of f's result, read
    with code blanked (`masked`)."""
    group = "body" if block.group("body") is not None else "body2"
    lo, hi = block.start(group), block.end(group)
    chunk = masked[lo:hi]
    found = [c for c in read_claims(chunk, facts) if c.kind == RETURN]
    found += stated_answers(chunk, frozenset(facts.names))
    if not found:
        return None
    claim = max(found, key=lambda c: c.start)
    claim.start += lo
    claim.end += lo
    claim.text = text[claim.start : claim.end].strip()
    return claim


def _answers(
    text: str,
    work: str,
    spans: list[tuple[int, int]],
    steps: list[ReasoningStep],
    body_end: int,
    has_block: bool,
    names: Any,
    call: str | None = None,
) -> None:
    """Answers the prose reader does not see (`final_answer`): a call's value written out in
    prose, a printed call's value in a comment (the chain's words even inside code), and, when
    there is no answer block, the last answer given — even an assertion inside code, or a bare
    value at the end."""
    forms = answer_forms(work[:body_end])
    comments = comment_answers(work[:body_end], call)
    in_code = [c for c in forms if any(s <= c.start < e for s, e in spans)]
    found = [c for c in forms if c not in in_code] + comments
    prose = blank(work, spans)[:body_end]
    found += type_claims(prose) + namely_returns(prose) + stated_answers(prose, frozenset(names))
    # A word the chain's own code uses (a rewritten function's `new_text`) is a name there.
    code_words = {w for s, e in spans for w in re.findall(r"[A-Za-z_]\w*", work[s:e])}
    found += word_answers(prose, frozenset(names) | code_words)
    if not has_block:
        # In code, only a test of a call written out (`assert f('ab') == 'ba'`, not
        # `assert f(x) == y`), of the traced call's shape, can be the answer.
        coded = [
            c for c in in_code if names_a_call(c.text) and not tests_another_call(c.text, call)
        ]
        if tests_the_call("\n".join(work[a:b] for a, b in spans), call):
            coded = [c for c in coded if same_call(c.text, call)]  # the others: other inputs
        last = sorted(
            [c for c in forms if c not in in_code and not tests_another_call(c.text, call)]
            + coded
            + comments,
            key=lambda c: c.start,
        )
        ending = answer_after_thinking(text) or closing_answer(work, names=frozenset(names))
        if ending is not None and (not last or ending.start >= last[-1].end):
            last.append(ending)
        prose_returns = [c for st in steps for c in st.claims if c.kind == RETURN]
        if last and not any(c.start > last[-1].start for c in prose_returns):
            found.append(last[-1])
        elif not last and not prose_returns and not found:
            # A chain that states no answer in any form ends on its result ("..., giving [2, 4].").
            concluded = concluding_value(blank(work, spans)[:body_end])
            if concluded is not None:
                found.append(concluded)
    have = [c for st in steps for c in st.claims]
    for claim in sorted(found, key=lambda c: c.start):
        if any(claim.start < c.end and c.start < claim.end for c in have):
            continue
        have.append(claim)
        home = next((st for st in steps if st.start <= claim.start < st.end), None)
        if home is None:
            home = ReasoningStep(-1, work[claim.start : claim.end], claim.start, claim.end)
            steps.append(home)
        home.claims.append(claim)
        home.claims.sort(key=lambda c: c.start)
    steps.sort(key=lambda st: st.start)
    for i, st in enumerate(steps):
        st.index = i


def _described(
    text: str,
    work: str,
    spans: list[tuple[int, int]],
    steps: list[ReasoningStep],
    body_end: int,
    code: str,
    call: str | None,
) -> None:
    """The final answer said in words that denote one value ("the function returns the
    original list"; `final_answer.described_answer`): taken only when no other answer, in any
    form, follows it."""
    claim = described_answer(blank(work, spans)[:body_end], text, code, call)
    if claim is None:
        return
    claims = [c for st in steps for c in st.claims]
    if any(c.kind in (RETURN, RAISE) and c.start >= claim.start for c in claims):
        return
    if any(claim.start < c.end and c.start < claim.end for c in claims):
        return
    home = next((st for st in steps if st.start <= claim.start < st.end), None)
    if home is None:
        return
    home.claims.append(claim)
    home.claims.sort(key=lambda c: c.start)


_SUPPOSE = re.compile(
    r"\b(?:what\s+if|suppose|supposing|imagine|assume|if\b[^.?!\n]*\b(?:were|had\s+been))\b", re.I
)
_WOULD = re.compile(r"\b(?:would|'d)\b", re.I)


def _hypothetical_followups(masked: str, steps: list[ReasoningStep]) -> None:
    """ "What if a were 4? Then x would be 5.": the sentence after a supposition that goes on in
    the conditional speaks of the supposed run, not of this one; its values are no claims."""
    for prev, step in zip(steps, steps[1:], strict=False):
        if not _SUPPOSE.search(masked, prev.start, prev.end):
            continue
        if not _WOULD.search(masked, step.start, step.end):
            continue
        step.claims = [c for c in step.claims if c.kind not in (BINDING, EXPRESSION, CONDITION)]


_RETURNED_ALONE = re.compile(
    r"\s*(?:\d{1,3}[.)]\s+|[-*+]\s+)?(?:and\s+)?(?:that|this|it)\s+(?:\w+\s+){0,2}?(?:is|gets)\s+(?:what\s+(?:is|gets)\s+)?returned\b"
    r"|\s*(?:that|this)\s+is\s+(?:the\s+)?(?:return\s+value|output|answer|result)\b",
    re.I,
)


def _returned_across(masked: str, steps: list[ReasoningStep]) -> None:
    """ "..., giving 4. That number is returned.": the value of the sentence before is f's."""
    for i, step in enumerate(steps):
        if i == 0 or any(c.kind == RETURN for c in step.claims):
            continue
        m = _RETURNED_ALONE.match(masked, step.start, step.end)
        if not m:
            continue
        prev = steps[i - 1]
        found = last_literal(masked[prev.start : prev.end])
        if found is None:
            continue
        s, _e, value = found
        claim = Claim(RETURN, masked[prev.start + s : m.end()], value)
        claim.start, claim.end = prev.start + s, m.end()
        step.claims.append(claim)


_CALL_MENTION = re.compile(r"`?\b([A-Za-z_]\w*)\.([a-z_]+)\(")


def _after_calls(masked: str, step: ReasoningStep, claims: list[Claim], facts: Any) -> None:
    """ "`d.pop(key, None)` ... so d is still {...}": a value stated for a variable after the
    sentence names a call that changes it is the value once that call's line has run."""
    for m in _CALL_MENTION.finditer(masked, step.start, step.end):
        name, method = m.group(1), m.group(2)
        lines = facts.method_lines.get(method, set())
        if method not in CHANGING or name not in facts.names or len(lines) != 1:
            continue
        line = next(iter(lines))
        for c in claims:
            if c.kind == BINDING and c.name == name and c.start >= m.end() and c.line is None:
                c.line = line


_QUOTED_TEST = re.compile(r"`\s*(?:if|elif|while)\s+([^`\n]+?):?\s*`")


def _quoted_condition(words: str, claims: list[Claim], facts: Any) -> None:
    """ "`if nums.count(0):` -> ... so the condition is True": a condition claim that names no
    test speaks of the one the sentence quotes from the code."""
    quoted = [m.group(1).strip() for m in _QUOTED_TEST.finditer(words)]
    tests = {t.replace(" ", ""): t for t in facts.cond_text.values()}
    named = [tests[q.replace(" ", "")] for q in quoted if q.replace(" ", "") in tests]
    if len(set(named)) != 1:
        return
    for c in claims:
        if c.kind == CONDITION and c.condition is None and c.name is None:
            c.condition = named[0]


_FINISHES = re.compile(
    r"\b(?:that|this|which)\s+(?:finishes|ends|completes|concludes)\s+the\s+(?:\w+\s+)?loop\b|"
    r"\b(?:that|this)\s+(?:is|was)\s+the\s+(?:last|final)\s+(?:iteration|pass|round)\b",
    re.I,
)


def _last_iteration(masked: str, steps: list[ReasoningStep]) -> None:
    """ "In the sixth iteration ... That finishes the loop": the loop ran six times."""
    last: int | None = None
    for step in steps:
        named = [c.ordinal for c in step.claims if c.kind == ITERATION and c.ordinal]
        m = _FINISHES.search(masked, step.start, step.end)
        if m and (named or last):
            n = max(named) if named else last
            claim = Claim(LOOP_COUNT, m.group(0), str(n), start=m.start(), end=m.end())
            step.claims.append(claim)
            step.claims.sort(key=lambda c: c.start)
        if named:
            last = max(named)
