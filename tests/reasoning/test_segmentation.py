"""How prose is cut into claims: self-corrections that restate a value, a thinking pause ("...")
that does not end a sentence, terse run-on sentences. Chains written here in free prose, judged
against real traces."""

from __future__ import annotations

from cruxtui.core.reasoning.alignment import CONTRADICTED, Alignment, align_text
from cruxtui.core.reasoning.chain_parse import parse_chain
from cruxtui.core.reasoning.sentence_split import split_steps
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire


def run(code: str, call: str) -> Trace:
    return from_wire(code, call, tracer.run(code, call))


def flagged(result: Alignment) -> str | None:
    div = result.first_divergence
    return None if div is None else result.chain.text[div.claim.start : div.claim.end]


UPPER = "def f(word):\n    if word.isupper():\n        return word.lower()\n    return word"


def test_a_correction_that_restates_only_the_value_takes_the_corrected_subject() -> None:
    """'... wait, actually it's X': the new value belongs to what was just said."""
    tr = run(UPPER, "f('ok')")
    wrong_fix = (
        "First, 'ok'.isupper() is False, since both letters are small... hmm, wait, no, it's True."
    )
    result = align_text(wrong_fix, tr)
    assert flagged(result) == "it's True"
    assert result.first_divergence.verdict == CONTRADICTED  # type: ignore[union-attr]
    named = (
        "'ok'.isupper() is True? Oh wait, actually isupper is False here, the letters are small."
    )
    result = align_text(named, tr)
    assert result.first_divergence is None, result.first_divergence
    restated = [c for c in result.chain.claims if not c.retracted]
    assert [c.value for c in restated] == ["False"]
    assert restated[0].name is not None and restated[0].name.endswith(".isupper()")


def test_a_correction_about_something_else_or_hypothetical_restates_nothing() -> None:
    code = "def f(n):\n    k = n + 1\n    return k * 2"
    tr = run(code, "f(3)")
    for chain in (
        "k = 4. Wait, if it were 5 the result would be 10.",
        "k = 4. Hmm, wait, the length of the list is 7, but that does not matter here.",
        "k = 4. Wait, then k * 2 is 8.",
    ):
        result = align_text(chain, tr)
        assert result.first_divergence is None, (chain, result.first_divergence)
        assert not any(c.name == "k" and c.value != "4" for c in result.chain.claims), chain


def test_a_pause_in_thinking_does_not_end_the_sentence() -> None:
    text = "And ''.isalnum()... there are no letters at all, so it should be False. Next step."
    spans = split_steps(text)
    assert [text[s:e] for s, e in spans] == [
        "And ''.isalnum()... there are no letters at all, so it should be False.",
        "Next step.",
    ]
    # An ellipsis before a new sentence (a capital letter) still ends one.
    assert len(split_steps("We loop... Then we stop.")) == 2


def test_a_two_sentence_chain_with_a_retraction() -> None:
    code = "def f(s):\n    return s[::-1]"
    tr = run(code, "f('abc')")
    chain = "Reversing 'abc' gives 'cab'. No wait, it gives 'cba', so the output is 'cba'."
    result = align_text(chain, tr)
    assert result.first_divergence is None, result.first_divergence
    chain = parse_chain("Reversing gives 'cab'; the output is 'cab'.", code)
    assert [c.value for c in chain.claims if c.kind == "return"] == ["'cab'"]


def test_the_condition_speaks_of_the_test_written_out_just_before() -> None:
    code = (
        "def f(a, b):\n    if a > 2 or b == 'z':\n        return 'big'\n"
        "    if a % 2 == 0:\n        return 'even'\n    return 'odd'"
    )
    tr = run(code, "f(5, 'q')")
    chain = (
        "We look at if a > 2 or b == 'z' first. The left part holds, five being more than two. "
        "Hmm, so the condition is False then, and we move on."
    )
    result = align_text(chain, tr)
    assert flagged(result) == "the condition is False"
    assert result.first_divergence.true_value == "True"  # type: ignore[union-attr]
    both = (
        "The tests are if a > 2 or b == 'z' and if a % 2 == 0. Five is odd. "
        "So the condition is False."
    )
    result = align_text(both, tr)
    assert result.first_divergence is None, result.first_divergence


STEPS = "def f(a):\n    x = a + 1\n    y = x * 2\n    return y"


def test_thinking_that_checks_itself_raises_no_alarm() -> None:
    tr = run(STEPS, "f(3)")
    for chain in (
        "x is 4. Hmm, let me re-check: x is 4, yes. So y = 8.",
        "x = 5. Hmm, hold on, I misread the plus: x = 4. y = 8.",
        "x = 4, so y = 9. Hmm, that doesn't look right: 4 * 2 = 8. y = 8.",
        "x = 4 and y = 8. But what if a were 4? Then x would be 5 and y would be 10. Anyway y = 8.",
    ):
        result = align_text(chain, tr)
        assert result.first_divergence is None, (chain, result.first_divergence)


def test_a_slip_the_check_confirms_or_a_wrong_correction_is_still_found() -> None:
    tr = run(STEPS, "f(3)")
    chain = "x = 4, y = 9. Let me double check: 4 * 2 = 9. Yes y = 9."
    assert flagged(align_text(chain, tr)) == "y = 9"
    chain = "x = 4. Hmm, wait, actually x = 5. So y = 10."
    assert flagged(align_text(chain, tr)) == "x = 5"
    # A supposition only covers the sentence after it that stays in the conditional.
    chain = "What if a were 4? Let us just go on: x = 5."
    assert flagged(align_text(chain, tr)) == "x = 5"


def test_a_correction_that_gives_the_new_value_alone() -> None:
    """ "x is 5? no, 4." and "x is 5, err, 4": the value alone corrects what was just said; a
    wrong correction is found where it is given."""
    tr = run(STEPS, "f(3)")
    for chain in (
        "x is 5? no, 4. So y is 8.",
        "x is 5, err, 4, so y is 8.",
        "x = 5, I mean 4; y = 8.",
    ):
        result = align_text(chain, tr)
        assert result.first_divergence is None, (chain, result.first_divergence)
        assert [c.value for c in result.chain.claims if c.name == "x" and not c.retracted] == ["4"]
    result = align_text("x is 4? no, 5. So y is 10.", tr)
    assert flagged(result) == "5"


def test_a_bare_no_rejects_the_sentence_before_but_answers_a_question() -> None:
    tr = run(STEPS, "f(3)")
    chain = "x is 5. Hmm, no. Adding one to three, I get 4 for x, and y is 8."
    assert align_text(chain, tr).first_divergence is None
    # "No." answering a question, or a check after a pause, takes nothing back.
    for chain in (
        "x is 5. Is y bigger than 20? No. y is 10.",
        "x is 5. Let me see whether any other step changes it... no. y is 10.",
    ):
        assert flagged(align_text(chain, tr)) == "x is 5", chain


def test_a_semicolon_ends_a_clause_and_a_narrated_return_is_no_code() -> None:
    """Terse chains join clauses with semicolons: each is read on its own, and a line of
    reports ending in `return <value>` narrates the run (a quoted `return y` is still code)."""
    tr = run(STEPS, "f(3)")
    text = "x: 4; y: 9; return 9"
    assert [text[s:e] for s, e in split_steps(text)] == ["x: 4;", "y: 9;", "return 9"]
    result = align_text(text, tr)
    assert flagged(result) == "y: 9"
    assert align_text("x: 4; y: 8; return 8", tr).first_divergence is None
    quoted = "The last line is\n\n    y = x * 2; return y\n\nwhich ends f."
    assert align_text(quoted, tr).judgements == []


def test_a_supposition_or_a_discarded_thought_contradicts_nothing() -> None:
    """Thinking tries values out loud: the consequence of a supposition after a semicolon is
    still supposed, and a value the chain says it was going to give, almost wrote or first
    thought is a thought set aside, not a claim."""
    tr = run(STEPS, "f(3)")
    for chain in (
        "Suppose a were 0; the function would return 2. But a is 3, so x = 4 and y = 8.",
        "I was going to say y = 9. Actually y = 8. So it returns 8.",
        "x = 4; y = 8; hmm, I almost wrote y = 6. Return 8.",
        "I first thought x = 5, but adding one to three makes 4, so y = 8.",
    ):
        result = align_text(chain, tr)
        assert result.first_divergence is None, (chain, result.first_divergence)
    # Without the supposition, the same clause is a claim.
    assert flagged(align_text("a is 3; the function would return 2.", tr)) is not None


def test_run_on_bindings_without_punctuation_are_read_one_by_one() -> None:
    """ "x = 4 y = 9 return 9": a value ends where the next binding (or the return) begins."""
    tr = run(STEPS, "f(3)")
    result = align_text("so x = 4 y = 9 return 9", tr)
    assert flagged(result) == "y = 9"
    assert [c.value for c in result.chain.claims if c.name == "x"] == ["4"]
    assert align_text("so x = 4 y = 8 return 8", tr).first_divergence is None
    # "x = 4 times" is no next binding: the value does not end cleanly there
    assert not [c for c in parse_chain("x = 4 times two", STEPS).claims if c.name == "x"]


def test_math_signs_and_terse_separators_are_read_as_python_and_clause_ends() -> None:
    """People write ×, ·, ÷, − for Python's operators and ← for an assignment, and separate
    terse clauses with ⇒ or |: each clause's value is read where it is written."""
    tr = run(STEPS, "f(3)")
    for chain, slip in (
        ("a = 3 so x = 3+1 = 4, y = 4×2 = 9, return 9", "4×2 = 9"),
        ("x ← 4, y ← 9, return 9", "y ← 9"),
        ("x = 4 ⇒ y = 9 ⇒ output 9", "y = 9"),
        ("x: 3+1=4 | y: 4·2=9 | ret 9", "4·2=9"),
    ):
        assert flagged(align_text(chain, tr)) == slip, chain
        right = chain.replace("9", "8")
        assert align_text(right, tr).first_divergence is None, right
