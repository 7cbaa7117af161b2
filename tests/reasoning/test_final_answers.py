"""The final answer in the forms people and models write it, judged against f's real result even
when the rest of the chain cannot be read; code around it stays context. Chains written here in
free prose, for a small function traced for real."""

from __future__ import annotations

import pytest

from cruxtui.core.reasoning.alignment import CONTRADICTED, UNVERIFIABLE, Alignment, align_text
from cruxtui.core.reasoning.claim_types import RAISE, RETURN
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire

DOUBLE = "def f(nums):\n    out = [n * 2 for n in nums]\n    return out"
CALL = "f([3, 4])"


def run(code: str = DOUBLE, call: str = CALL) -> Trace:
    return from_wire(code, call, tracer.run(code, call))


def flagged(result: Alignment) -> str | None:
    div = result.first_divergence
    return None if div is None else result.chain.text[div.claim.start : div.claim.end]


WRONG_ENDINGS = [
    "Each number is doubled.\n```python\nassert f([3, 4]) == [6, 9]\n```",
    "Each number is doubled.\n\n    assert f([3, 4]) == [6, 9]",
    "Each number is doubled, so\n=> [6, 9]",
    "Each number is doubled.\n\n**Final Answer**\n[6, 9]",
    "Each number is doubled.\n\nThe output will be:\n```\n[6, 9]\n```",
    "Doubling both gives the list, so f([3, 4]) → [6, 9]",
    "Each number is doubled. Result: `[6, 9]`",
    "Each number is doubled, so the result will be [6, 9].",
    "Every element gets multiplied by two. The function outputs [6, 9].",
    "<think>three doubled is six and four doubled is nine</think>\n[6, 9]",
    "<think>three doubled is six and four doubled is nine</think>\n\n**[6, 9]**",
    "[ANSWER] assert f([3, 4]) == [6, 9] [/ANSWER>",
    "[ANSWER]\nassert f([3, 4]) == <value> [6, 9] </value>\n[/ANSWER]",
    "Here is a test:\n```python\nprint(f([3, 4]))  # [6, 9]\n```",
    "Trying it:\n```python\nf([3, 4])  # => [6, 9]\n```\nwhich doubles each item.",
    "In the interpreter:\n>>> f([3, 4])\n[6, 9]",
    "Output:\n```\n[6, 9]\n```\nbecause every item is doubled.",
    "When we call f([3, 4]), we get [6, 9] since each item doubles.",
    "Each item is doubled, giving [6, 9].",
    "Both items double, so we end up with [6, 9]",
    "Both items double. Returning [6, 9].",
    "Both items double, and so the value returned is [6, 9].",
    "Both items double.\n\nReturn: [6, 9]",
    "Both items double.\nreturns: `[6, 9]`",
    "Both items double.\n\n```\n[6, 9]\n```",
]


@pytest.mark.parametrize("chain", WRONG_ENDINGS)
def test_a_wrong_final_answer_is_found_in_every_usual_form(chain: str) -> None:
    result = align_text(chain, run())
    div = result.first_divergence
    assert div is not None, [j.claim for j in result.judgements]
    assert div.claim.kind == RETURN and div.true_value == "[6, 8]"
    assert "[6, 9]" in (flagged(result) or "")


@pytest.mark.parametrize("chain", [e.replace("[6, 9]", "[6, 8]") for e in WRONG_ENDINGS])
def test_the_same_forms_with_the_right_answer_agree(chain: str) -> None:
    result = align_text(chain.replace("nine", "eight"), run())
    assert result.first_divergence is None, result.first_divergence
    assert any(j.claim.kind == RETURN for j in result.judgements)


def test_answer_constants_are_read_as_people_spell_them() -> None:
    code = "def f(s):\n    return s.isdigit()"
    tr = run(code, "f('12')")
    for chain in ("So `f('12') == FALSE`.", "Both characters are digits.\nOutput: false"):
        result = align_text(chain, tr)
        assert result.first_divergence is not None, chain
        assert result.first_divergence.true_value == "True"
    assert align_text("Both are digits, so `f('12') == TRUE`.", tr).first_divergence is None


def test_a_placeholder_is_no_answer() -> None:
    tr = run()
    for chain in (
        "Each item doubles.\n[ANSWER] assert f([3, 4]) == <value> [/ANSWER]",
        "Each item doubles.\n```python\nassert f([3, 4]) == ??\n```",
        "Each item doubles.\nassert f([3, 4]) == ...",
    ):
        result = align_text(chain, tr)
        assert result.first_divergence is None, chain
        assert not [j for j in result.judgements if j.claim.kind == RETURN], chain


def test_the_last_answer_given_is_the_answer_and_earlier_code_stays_code() -> None:
    """A test the chain writes in code before its prose answer is context, not its answer."""
    tr = run()
    chain = (
        "A quick check of the idea on a list of my own:\n"
        "```python\nassert f([1]) == [3]\n```\n"
        "For our input both values double, so the answer is [6, 8]."
    )
    result = align_text(chain, tr)
    assert result.first_divergence is None, result.first_divergence
    returns = [j for j in result.judgements if j.claim.kind == RETURN]
    assert [j.claim.value for j in returns] == ["[6, 8]"]


def test_an_assertion_about_a_variable_in_code_is_not_an_answer() -> None:
    chain = (
        "We can check it like this:\n```python\nx = [3, 4]\nassert f(x) == [1, 1]\n```\n"
        "and it should pass."
    )
    result = align_text(chain, run())
    assert result.first_divergence is None, result.first_divergence


def test_the_answer_is_judged_even_when_its_arguments_are_mistyped() -> None:
    """Small models misquote the input in their assertion; the value is still their answer."""
    chain = (
        "```python\ndef f(nums):\n    return [n + n for n in nums]\n```\n"
        "```python\nassert f([3, 44]) == [6, 88]\n```"
    )
    result = align_text(chain, run())
    assert flagged(result) == "assert f([3, 44]) == [6, 88]"


def test_values_of_other_calls_are_unverifiable() -> None:
    """An input-task chain trying candidates speaks of other runs of f."""
    code = "def f(n):\n    return n * 3"
    tr = run(code, "f(4)")
    chain = "Try f(2) = 6: too small. Try f(3) = 9: still short. f(4) = 12, which is what we need."
    result = align_text(chain, tr, target="12")
    assert result.first_divergence is None, result.first_divergence
    verdicts = {j.claim.text: j.verdict for j in result.judgements if j.claim.kind == RETURN}
    assert verdicts["f(2) = 6"] == UNVERIFIABLE
    wrong = "f(4) = 13, which is the one."
    assert flagged(align_text(wrong, tr)) == "f(4) = 13"


def test_an_exception_in_a_comment_is_a_claim_that_f_raises() -> None:
    code = "def f(s):\n    return s.upper()"
    tr = run(code, "f('ab')")
    chain = "Running it:\n```python\nprint(f('ab'))  # AttributeError: no upper\n```"
    result = align_text(chain, tr)
    div = result.first_divergence
    assert div is not None and div.claim.kind == RAISE and div.verdict == CONTRADICTED
    assert div.true_value == "returns 'AB'"


def test_the_result_of_a_variable_named_result_is_not_the_answer() -> None:
    code = "def f(a):\n    result = a + 1\n    return result * 2"
    tr = run(code, "f(1)")
    result = align_text("First a grows by one.\nThe result is 2.", tr)
    assert not [j for j in result.judgements if j.claim.kind == RETURN]


REPLACE = (
    "def f(text, old):\n    if len(old) > 3:\n        return text\n"
    "    n = len(text)\n    return text.replace(old, '-' * n)"
)


def test_comments_on_quoted_lines_of_f_are_the_chains_words() -> None:
    tr = run(REPLACE, "f('banana', 'an')")
    chain = (
        "Annotating the code:\n```python\n"
        "if len(old) > 3:      # len(old) = 3 here, too short\n    return text\n```\n"
        "so we go on to the replace."
    )
    result = align_text(chain, tr)
    assert flagged(result) == "len(old) = 3"


def test_comments_in_a_rewritten_function_are_not_claims_about_f() -> None:
    tr = run(REPLACE, "f('banana', 'an')")
    chain = (
        "A simpler version of the idea:\n```python\n"
        "def g(text):\n    n = len(text)   # n = 3 for 'abc'\n    return n\n```\n"
        "has nothing to do with the call."
    )
    result = align_text(chain, tr)
    assert result.first_divergence is None, result.first_divergence


def test_the_type_of_the_result_is_a_claim_when_f_is_named() -> None:
    code = "def f(a, b):\n    return (a + b, a * b)"
    tr = run(code, "f(2, 3)")
    wrong = "The function returns a list of the sum and the product. It is [5, 6]."
    result = align_text(wrong, tr)
    assert flagged(result) == "The function returns a list"
    assert result.first_divergence.true_value == "(5, 6)"  # type: ignore[union-attr]
    right = "The function returns a tuple holding the sum and the product."
    result = align_text(right, tr)
    assert result.first_divergence is None
    assert [j.verdict for j in result.judgements] == ["consistent"]


def test_a_type_named_for_something_else_or_hedged_is_no_claim() -> None:
    code = "def f(a, b):\n    return (a + b, a * b)"
    tr = run(code, "f(2, 3)")
    for chain in (
        "We should check if f() returns a list here.",
        "This function returns a list in my rewrite, unlike the original.",
        "It returns a list, the split does.",
        "The function returns a string.split(',') result, roughly.",
    ):
        result = align_text(chain, tr)
        assert result.first_divergence is None, chain


def test_a_value_given_in_words_or_in_a_parenthesis_is_the_answer() -> None:
    code = "def f(s):\n    return s.strip('x')"
    tr = run(code, "f('xax')")
    for chain, wrong in (
        ("Stripping the x's from both ends. Output: an empty string", "Output: an empty string"),
        (
            "f returns what is left after the strip (i.e. 'ax').",
            "f returns what is left after the strip (i.e. 'ax'",
        ),
        (
            "The function returns the remaining text (namely the empty string).",
            "The function returns the remaining text (namely the empty string",
        ),
    ):
        result = align_text(chain, tr)
        assert flagged(result) == wrong, chain
    right = "The function returns the middle part (here 'a')."
    result = align_text(right, tr)
    assert result.first_divergence is None and len(result.judgements) == 1


def test_a_chain_with_an_answer_does_not_end_on_a_second_one() -> None:
    """The value a chain ends on is its answer only when it gives none in another form."""
    tr = run()
    chain = "The output is [6, 8]. Before that, the first item alone, doubled: [6]"
    result = align_text(chain, tr)
    assert result.first_divergence is None, result.first_divergence
    assert [j.claim.value for j in result.judgements if j.claim.kind == RETURN] == ["[6, 8]"]


def test_an_ending_value_of_another_type_than_the_result_speaks_of_something_else() -> None:
    code = "def f(s):\n    letters = sorted(s)\n    return ''.join(letters)"
    tr = run(code, "f('cab')")
    chain = "Sorting the letters of the word, giving ['a', 'c', 'b']."
    result = align_text(chain, tr)
    assert result.first_divergence is None, result.first_divergence
    wrong = "Sorting the letters and joining them back, giving 'acb'."
    assert flagged(align_text(wrong, tr)) == "giving 'acb'"


def test_a_test_of_another_call_inside_code_is_not_the_answer() -> None:
    """A fenced block that tests f on arguments of another shape (two strings where f takes one
    list) is code about another run: with no other answer given, nothing is contradicted."""
    chain = (
        "Here is how I would check it:\n```python\n"
        "assert f('ab', 'cd') == 5\nassert f(nums) == ??\n```"
    )
    assert align_text(chain, run()).first_divergence is None


@pytest.mark.parametrize(
    "reply",
    [
        # The template's tags inside a string literal are characters of the string.
        "[ANSWER] assert f('tag') == '<value>TAG</value>' [/ANSWER]",
        # Around the value they are the template's, and dropped.
        "[ANSWER] assert f('tag') == <value> 'TAG' </value> [/ANSWER]",
        "It shouts the word.\n```python\nassert f('tag') == 'TAG'\n```",
        "[ANSWER]\nassert f('tag') == \"T\" + 'AG'\n[/ANSWER]",
    ],
)
def test_the_aligner_reads_the_answer_scoring_reads(reply: str) -> None:
    """One answer per reply: where scoring finds one, the aligner judges that same value."""
    from cruxtui.core.reasoning.literal_scan import literal_value
    from cruxtui.core.scoring.answers import extract

    code = "def f(s):\n    return s.upper()"
    result = align_text(reply, run(code, "f('tag')"))
    finals = [j.claim for j in result.judgements if j.claim.kind == RETURN]
    scored = extract(reply, "output")
    if scored.ok and finals:
        assert literal_value(finals[-1].value) == literal_value(scored.answer or "")
    elif scored.ok:
        # scoring's answer is not a literal (an expression): the aligner states none
        assert not finals


def test_a_test_of_another_shape_after_the_answer_does_not_hide_it() -> None:
    """Small models follow their assertion with made-up tests of other calls (other arity,
    other types): those are no answer, and the assertion on the call asked about still is."""
    chain = (
        "Here it is:\n```python\nassert f([3, 4]) == [6, 9]\n"
        "assert f('ab', 2) == 5\nassert f(10) == 34\n```"
    )
    result = align_text(chain, run())
    assert flagged(result) == "assert f([3, 4]) == [6, 9]"
    right = chain.replace("[6, 9]", "[6, 8]")
    assert align_text(right, run()).first_divergence is None


def test_a_string_answer_written_bare_in_backticks() -> None:
    """Small models drop the quotes of a string result: "the output is `BAD`"."""
    code = "def f(s):\n    return s.upper()"
    tr = run(code, "f('tag')")
    result = align_text("It upper-cases each letter, so the output is `TAB`.", tr)
    assert flagged(result) == "the output is `TAB`"
    assert result.first_divergence is not None and result.first_divergence.true_value == "'TAG'"
    for fine in (
        "It upper-cases each letter, so the output is `TAG`.",
        "It upper-cases the letters, so the result is `s` in capitals.",  # a name, not a value
        "Each letter is raised, and the result is `upper` applied to s.",
        "The answer is `s`.",
        # a name of the chain's own rewritten code
        "A shorter version:\n```python\ndef g(s):\n    shout = s.upper()\n    return shout\n```\n"
        "So the result is `shout`.",
    ):
        assert align_text(fine, tr).first_divergence is None, fine
    # Only where f's result is a string: a bare word says nothing about a number.
    tr_n = run("def f(s):\n    return len(s)", "f('tag')")
    assert align_text("Counting them, the output is `three`.", tr_n).first_divergence is None


def test_the_input_task_goal_restated_is_not_a_claim_about_the_proposed_run() -> None:
    """ "Find x such that f(x) == [6, 8]" is the question; the proposed call is the answer."""
    tr = run(DOUBLE, "f([3, 5])")
    chain = (
        "We look for nums such that `f(nums) == [6, 8]`. Halving each item gives 3 and 5, "
        "so the input is [3, 5].\n\n**Answer:** `f([3, 5])`"
    )
    result = align_text(chain, tr, target="[6, 8]")
    div = result.first_divergence
    assert div is not None and chain[div.claim.start : div.claim.end] == "f([3, 5])"
    right = chain.replace("3 and 5", "3 and 4").replace("[3, 5]", "[3, 4]")
    assert align_text(right, run(DOUBLE, "f([3, 4])"), target="[6, 8]").first_divergence is None


def test_a_printed_call_of_another_shape_is_no_answer() -> None:
    """`print(f([3, 4], 9))  # [1]` is a made-up example (another arity): no answer; the same
    comment on the call asked about is one."""
    for other in ("print(f([3, 4], 9))  # Returns: [1]", ">>> f('34')\n[1]"):
        chain = f"Trying it:\n```python\n{other}\n```"
        assert align_text(chain, run()).first_divergence is None, other
    for same in (
        "print(f([3, 4]))  # Returns: [1]",
        "print(f([3, 4], nums=[3, 4]))  # Returns: [1]",
    ):
        chain = f"Trying it:\n```python\n{same}\n```"  # a stray keyword: still the call
        assert flagged(align_text(chain, run())) == "# Returns: [1]", same


def test_beside_a_test_of_the_call_itself_other_inputs_are_other_runs() -> None:
    """The chain tests the call asked about (its value unreadable) and, beside it, another
    input of the same shape: that one is an example, not a misquoted answer."""
    chain = "A check:\n```python\nassert f([1]) == [5]\nassert f([3, 4]) == [g(3), 8]\n```"
    assert align_text(chain, run()).first_divergence is None
    alone = "A check:\n```python\nassert f([3, 44]) == [5]\n```"  # no test of the call: misquoted
    assert flagged(align_text(alone, run())) == "assert f([3, 44]) == [5]"
    other = "A check:\n```python\nassert f([1]) == [5]\n```"  # another input altogether
    assert align_text(other, run()).first_divergence is None


@pytest.mark.parametrize(
    "chain",
    [
        # The comment gives the value of the comparison, not of f.
        "Checking:\n```python\nf([3, 4]) == g(1)  # Output: false\n```",
        # Of more than f: a method applied to its result.
        "Checking:\n```python\nf([3, 4]).count(6)  # Output: 5\n```",
        # Of another function's call, on the line above a comment alone on its line.
        "Checking:\n```python\nprint(helper())\n# Output: [5, 5]\n```",
        # A comment line in a fence, even in a fence of broken code, is code's.
        "Checking:\n```python\nf(-1, [2]) -> {}\n# (the first item of the output is 7)\n```",
    ],
)
def test_a_comment_speaks_of_f_only_on_the_call_itself(chain: str) -> None:
    assert align_text(chain, run()).first_divergence is None, chain


def test_a_result_comment_on_the_call_itself_is_the_answer() -> None:
    chain = "Checking:\n```python\nprint(f([3, 4]))\n# Output: [5, 5]\n```"
    assert flagged(align_text(chain, run())) == "Output: [5, 5]"


def test_a_final_answer_on_a_call_of_another_shape_is_another_run() -> None:
    chain = "Doubling each item, f(7, [1]) → [6, 9]."
    assert align_text(chain, run()).first_divergence is None
    elided = "Doubling each item, so `f(...) == [6, 9]`."  # the call asked about, args left out
    assert flagged(align_text(elided, run())) == "f(...) == [6, 9]"


KEEP = "def f(items, k):\n    out = [x for x in items if x > k]\n    return out"
"""f([5, 7], 9) returns [] and f([5, 7], 1) returns its first argument's value, [5, 7]."""


@pytest.mark.parametrize(
    ("chain", "call", "value"),
    [
        ("Nothing in the list beats k. So the function returns nothing.", "f([5, 7], 9)", "None"),
        ("No item is large enough, so in the end f returns zero.", "f([5, 7], 9)", "0"),
        ("Every item is kept? No: the result is two.", "f([5, 7], 9)", "2"),
        ("Neither item passes. This function returns an empty dict.", "f([5, 7], 9)", "{}"),
        ("Both pass the filter. The function returns false here.", "f([5, 7], 1)", "False"),
        (
            "The function drops 5 and keeps 7. It returns the items unchanged.",
            "f([5, 7], 6)",
            "[5, 7]",
        ),
        ("Only 7 is bigger, so f returns the original list.", "f([5, 7], 6)", "[5, 7]"),
        ("Only 7 survives. Thus the output is the input list unchanged.", "f([5, 7], 6)", "[5, 7]"),
    ],
)
def test_a_final_answer_described_in_words_is_that_value(chain: str, call: str, value: str) -> None:
    result = align_text(chain, run(KEEP, call))
    answers = [j for j in result.judgements if j.claim.kind == RETURN]
    assert [j.claim.value for j in answers] == [value]
    assert answers[0].verdict == CONTRADICTED


@pytest.mark.parametrize(
    ("chain", "call"),
    [
        ("Neither item is above nine, so the function returns an empty list.", "f([5, 7], 9)"),
        ("Both are above one. So f returns the original list.", "f([5, 7], 1)"),
        ("The function keeps each item, so it returns items unchanged.", "f([5, 7], 1)"),
        ("Neither item is over 9. The result is an empty list (`[]`).", "f([5, 7], 9)"),
    ],
)
def test_a_right_answer_described_in_words_agrees(chain: str, call: str) -> None:
    result = align_text(chain, run(KEEP, call))
    assert result.first_divergence is None
    assert [j.verdict for j in result.judgements if j.claim.kind == RETURN] == ["consistent"]


@pytest.mark.parametrize(
    "chain",
    [
        "The function might return nothing when nothing is kept.",
        "Perhaps f could return zero; it should return the original list.",
        "If no item is bigger than k, the function returns nothing.",
        "The function returns nothing if every item is small.",
        "Does the function return the original list?",
        "The filter builds a new list, and `x > k` returns True.",
        "The function returns a list of the items bigger than k.",
        "The function returns the original list with the small items dropped.",
        "Here is my version:\n\n    def g(items):\n        return None\n\nThis function returns nothing.",
        "```python\nassert f([5, 7], 6) is None  # the function returns nothing.\n```",
        "The function returns the original list (`[5]`).",
        "Then `items.count(4)` is called. It returns zero.",
        "The filter keeps 7. It returns the original list.",
        "The function returns nothing. Then it is called: f([5, 7], 6) gives [7].",
    ],
)
def test_a_description_that_is_hedged_conditional_elsewhere_or_not_last_is_no_answer(
    chain: str,
) -> None:
    result = align_text(chain, run(KEEP, "f([5, 7], 6)"))
    described = [
        j
        for j in result.judgements
        if j.claim.kind == RETURN and j.claim.value in ("None", "0", "[5, 7]")
    ]
    assert described == [], chain
    assert result.first_divergence is None or result.first_divergence.claim.value == "[7]"


def test_the_original_argument_of_a_function_that_changes_it_is_no_value() -> None:
    """f appends to its argument and returns it: "the same list" is that object, changed, and
    "the original list" does not say which state is meant."""
    code = "def f(nums):\n    nums.append(0)\n    return nums"
    tr = run(code, "f([1])")
    assert align_text("So the function returns the same list.", tr).judgements == []
    result = align_text("So the function returns nums unchanged.", tr)
    assert flagged(result) == "So the function returns nums unchanged"


def test_the_input_named_generically_must_be_one_argument() -> None:
    code = "def f(a, b):\n    return a"
    tr = run(code, "f('x', 'y')")
    assert align_text("The function returns the original string.", tr).judgements == []
    result = align_text("The function returns the original a.", tr)
    assert [j.verdict for j in result.judgements] == ["consistent"]


@pytest.mark.parametrize(
    ("chain", "call", "value"),
    [
        # A relative clause on f: its antecedent is the function.
        (
            "The code wraps a filter inside `f`, which here returns nothing.",
            "f([5, 7], 6)",
            "None",
        ),
        (
            "We hand both numbers to f, which in this case returns an empty list.",
            "f([5, 7], 1)",
            "[]",
        ),
        # Run-on prose: a clause opened by "so" with no comma before it.
        ("both stay above one so the function returns an empty list", "f([5, 7], 1)", "[]"),
        # A phrase placing the answer in the task: "in the expected output", "for the given call".
        ("This function returns an empty list for the given call.", "f([5, 7], 1)", "[]"),
        (
            "The function returns nothing in the expected output, since 7 is kept.",
            "f([5, 7], 6)",
            "None",
        ),
        # "the original function" is f as given (as against a rewrite).
        ("The original function returns zero.", "f([5, 7], 6)", "0"),
    ],
)
def test_more_plain_statements_of_the_answer_in_words(chain: str, call: str, value: str) -> None:
    result = align_text(chain, run(KEEP, call))
    answers = [j for j in result.judgements if j.claim.kind == RETURN]
    assert [j.claim.value for j in answers] == [value], chain
    assert answers[0].verdict == CONTRADICTED


@pytest.mark.parametrize(
    "chain",
    [
        # "which" on something else than f.
        "The filter calls len(items), which then returns two.",
        # a described value followed by more that pins nothing ("a list of ...")
        "Both stay, so the function returns an empty list of pairs.",
        # a hedge is not an answer, whatever its subject
        "The original code should return zero.",
    ],
)
def test_a_relative_clause_on_another_subject_or_a_longer_description_is_no_answer(
    chain: str,
) -> None:
    result = align_text(chain, run(KEEP, "f([5, 7], 1)"))
    described = [j for j in result.judgements if j.claim.kind == RETURN]
    assert described == [], chain


def test_a_value_fenced_under_a_heading_is_the_stated_output_anywhere_in_the_chain() -> None:
    """ "The output is:" or "calling f(...) returns:" over a fence holding nothing but a value
    states the answer even when more explanation follows; a heading over another call's value
    does not."""
    for chain in (
        "Each item doubles.\n\nThe output is:\n```\n[6, 9]\n```\nbecause both values double.",
        "Say we call `f([3, 4])`, it would return:\n```python\n[6, 9]\n```\nThat is all it does.",
        "Calling f([3, 4]) gives:\n```\n[6, 9]\n```\nas each number is doubled.",
    ):
        result = align_text(chain, run())
        assert flagged(result) == "[6, 9]", chain
        assert align_text(chain.replace("[6, 9]", "[6, 8]"), run()).first_divergence is None
    other = "For instance, calling `f([10, 20, 30])` returns:\n```\n[20, 40, 60]\n```\nand so on."
    assert align_text(other, run()).judgements == []
    code = "Calling f([3, 4]) gives:\n```python\nout = [6, 9]\nprint(out)\n```\nwhich prints it."
    assert align_text(code, run()).first_divergence is None


def test_a_value_after_returned_and_a_colon_is_the_returned_value() -> None:
    """ "..., so it is returned: X" names X, not the value written before the verb."""
    chain = "3 -> 6, 4 -> 8; the list is complete so it is returned: [6, 9]"
    result = align_text(chain, run())
    assert flagged(result) == "it is returned: [6, 9]"
    assert align_text(chain.replace("[6, 9]", "[6, 8]"), run()).first_divergence is None


@pytest.mark.parametrize(
    "chain",
    [
        "This function returns [6, 9] because each item is doubled. It is a comprehension.",
        "The function `f` returns `[6, 9]` since both values double. Simple enough.",
        "The function will output [6, 9] for this input. Each value doubles.",
        "Here, `f` will return [6, 9] after doubling. That is all.",
        "The expected output is [6, 9]. Each item doubles.",
        "The returned value is [6, 9]. Each item doubles.",
        "The original function returns [6, 9], unlike my rewrite. Each item doubles.",
        "The given code will return [6, 9], as each item doubles.",
    ],
)
def test_f_named_as_the_subject_in_the_middle_of_a_chain_states_its_result(chain: str) -> None:
    result = align_text(chain, run())
    assert "[6, 9]" in (flagged(result) or ""), chain
    assert align_text(chain.replace("[6, 9]", "[6, 8]"), run()).first_divergence is None


def test_the_expected_output_of_the_input_task_is_the_question() -> None:
    tr = run(DOUBLE, "f([3, 5])")
    chain = "The expected output is [6, 8], so each item of the input is half of it: f([3, 5])."
    result = align_text(chain, tr, target="[6, 8]")
    assert flagged(result) == "f([3, 5])"
    restated = [j for j in result.judgements if j.claim.text.startswith("The expected")]
    assert [j.verdict for j in restated] == [UNVERIFIABLE]


def test_a_result_described_then_given_after_a_colon() -> None:
    """ "it returns a new list with these values: X" gives X; a colon that does not introduce
    the result ("a list of pairs: key and value", a condition) gives nothing."""
    for chain in (
        "Each item doubles. In the end it returns a fresh list holding these: `[6, 9]`. Done.",
        "Each item doubles. The function returns the following list: [6, 9]",
    ):
        assert "[6, 9]" in (flagged(align_text(chain, run())) or ""), chain
        assert align_text(chain.replace("[6, 9]", "[6, 8]"), run()).first_divergence is None
    for chain in (
        "Each item doubles. The function returns a list of pairs: key and value.",
        "Each item doubles. The function returns the list when nums: [6, 9] is empty.",
    ):
        assert align_text(chain, run()).first_divergence is None, chain


@pytest.mark.parametrize(
    "chain",
    [
        "Both values double. The answer is therefore [6, 9]. Simple.",
        "Both values double. So the function's output is [6, 9] and we are done.",
        "Both values double. The final answer is $[6, 9]$. Simple.",
        "Both values double; output -> [6, 9]",
        "Both values double. Hence the call evaluates to [6, 9]. Simple.",
        "Both values double. [6, 9] is returned. Simple.",
        "Both values double, and [6, 9] is the output.",
        "3 -> 6 and 4 -> 9 -> [6, 9] returned",
        "three and four double to six and nine, giving [6, 9] which f returns",
        "Both values double.\n\nFinal answer:\n[6, 9]\n\nThe doubling explains it.",
        "Both values double.\nResult → [6, 9]",
        "Both values double.\nFinal: [6, 9]",
    ],
)
def test_an_answer_stated_in_the_grammar_of_answers_anywhere(chain: str) -> None:
    result = align_text(chain, run())
    assert "[6, 9]" in (flagged(result) or ""), chain
    assert result.first_divergence is not None and result.first_divergence.claim.kind == RETURN
    right = chain.replace("[6, 9]", "[6, 8]").replace("nine", "eight").replace("9", "8")
    assert align_text(right, run()).first_divergence is None, right


@pytest.mark.parametrize(
    "chain",
    [
        # "the result" alone, mid-chain, may be a step's.
        "Doubling the first item, the result is [6]. Then the second.",
        # returned by something else
        "Both values double; [6, 9] returned by the helper is discarded.",
        # a value inside another one is no clause of its own
        "Both values double, so the pair (1, [6, 9]) is returned by g.",
        # a heading over more than a value
        "Final answer:\n[6, 9] or so, I am not sure",
    ],
)
def test_answer_grammar_does_not_reach_other_values(chain: str) -> None:
    result = align_text(chain, run())
    assert not [j for j in result.judgements if j.claim.kind == RETURN], chain


def test_a_clause_is_read_for_its_value_within_a_bounded_window() -> None:
    """Run-on prose with no sentence punctuation must not make every claim read to the end of
    the text (quadratic in its length): a clause is read at most a window's length on."""
    from cruxtui.core.reasoning import literal_scan

    text = "and then x is 5 " * 5000
    assert literal_scan._clause_end(text, 10) == 10 + literal_scan._CLAUSE_WINDOW
    assert literal_scan._clause_end("x is 5. y", 0) == 6


@pytest.mark.parametrize(
    "chain",
    [
        "Each doubled item must give 6 and 8, so I halve them. So the input is [3, 5].",
        "Halving six and eight, one possible input is `[3, 5]`.",
        "Halving both, the input should be [3, 5].",
    ],
)
def test_an_input_named_without_the_call_is_the_input_tasks_answer(chain: str) -> None:
    """For the input task, "the input is X" proposes f(X): that claims f(X) gives the target."""
    result = align_text(chain, run(DOUBLE, "f([3, 5])"), target="[6, 8]")
    assert flagged(result) == "[3, 5]", chain
    right = chain.replace("[3, 5]", "[3, 4]")
    result = align_text(right, run(DOUBLE, "f([3, 4])"), target="[6, 8]")
    assert result.first_divergence is None
    assert [j.verdict for j in result.judgements if j.claim.kind == RETURN] == ["consistent"]
    # Another value named "the input" (a piece of it, say) proposes nothing.
    piece = "Halving both, the input is a list; its first item is 3."
    assert align_text(piece, run(DOUBLE, "f([3, 5])"), target="[6, 8]").judgements == []


@pytest.mark.parametrize(
    "chain",
    [
        "Each item doubles. If we call f([1, 1]), [2, 3] is returned. Here the answer is [6, 8].",
        "Each item doubles. With f([1, 1]) the final answer would be [2, 3]. Ours is [6, 8].",
        "Each item doubles. This function returns [2, 3] for f([1, 1]). Ours gives [6, 8].",
        "Each item doubles. Calling f([1, 1]), the call evaluates to [2, 3]. Ours: [6, 8].",
        # the last sentence, too, when it speaks of another input altogether
        "Each item doubles, so for f([10, 20, 30]) the output is [20, 41, 60].",
    ],
)
def test_a_result_in_a_sentence_about_another_call_is_another_run(chain: str) -> None:
    """A result stated in a sentence that names a call of f with other arguments (and not the
    call asked about) speaks of that call, whatever the claim's own words."""
    result = align_text(chain, run())
    assert result.first_divergence is None, (chain, result.first_divergence)
    # the same sentence about the call asked about is a claim about this run
    asked = chain.replace("[1, 1]", "[3, 4]").replace("[10, 20, 30]", "[3, 4]")
    assert align_text(asked, run()).first_divergence is not None, asked


DIGITS = "def f(s):\n    if s.isdigit():\n        return True\n    return False"


@pytest.mark.parametrize(
    "chain",
    [
        "This function returns True when every character is a digit. Here 'a' is not, so False.",
        "The function returns True whenever s is numeric; our input is not, so the answer is False.",
        "f returns True for numeric strings. For '12a' the output is False.",
        "It would return True for '123'. But for '12a' the answer is False.",
        "It returns True when given an input of '77'. The answer for ours is False.",
    ],
)
def test_a_rule_of_f_or_a_result_for_another_input_is_no_claim(chain: str) -> None:
    """Chains describe f's behaviour before applying it: a result under a condition ("when
    ...", "for numeric strings") or for an input named after it that is not the call's is
    f's rule or another run, never a contradiction."""
    result = align_text(chain, run(DIGITS, "f('12a')"))
    assert result.first_divergence is None, (chain, result.first_divergence)


def test_a_result_for_the_input_asked_about_is_a_claim() -> None:
    tr = run(DIGITS, "f('12a')")
    for chain in (
        "It returns True when given an input of '12a'.",
        "The function returns True for '12a'.",
    ):
        assert flagged(align_text(chain, tr)) is not None, chain


def test_a_value_returned_by_a_call_the_sentence_names_is_not_fs() -> None:
    """ "text.split(',') is called and ['a', 'b'] is returned": that value is the split's."""
    code = "def f(text):\n    parts = text.split(',')\n    return len(parts)"
    tr = run(code, "f('a,b')")
    for chain in (
        "First text.split(',') is called and ['a', 'c'] is returned. Its length is 2.",
        "split -> ['a', 'c'] returned, len -> 2. Answer 2.",
        "Then `split` runs, and ['a', 'c'] is returned; the answer is 2.",
    ):
        returns = [j for j in align_text(chain, tr).judgements if j.claim.kind == RETURN]
        assert all(j.claim.value == "2" for j in returns), chain


def test_a_result_after_a_rewrite_said_of_this_function_may_be_the_rewrites() -> None:
    """After the chain writes a function of its own, "this function returns X" may speak of
    that one; "the original function" and a call written out still name f."""
    rewrite = "Here is a simpler version:\n```python\ndef g(nums):\n    return nums[::-1]\n```\n"
    for tail in (
        "This function returns [4, 3]. For ours, the answer is [6, 8].",
        "The function returns [4, 3] then. The original doubles: the answer is [6, 8].",
        "It returns [4, 3]. Ours doubles, so the answer is [6, 8].",
    ):
        assert align_text(rewrite + tail, run()).first_divergence is None, tail
    for tail in ("The original function returns [6, 9].", "So f([3, 4]) returns [6, 9]."):
        assert flagged(align_text(rewrite + tail, run())) is not None, tail


def test_an_answer_block_that_states_the_answer_in_words() -> None:
    """ "[ANSWER] The output is X [/ANSWER]": the block's words are the answer; code in a block
    is still code."""
    for chain in (
        "Each doubles.\n[ANSWER] The output is [6, 9] [/ANSWER]",
        "Each doubles.\n[ANSWER] f([3, 4]) returns [6, 9] [/ANSWER]",
    ):
        assert "[6, 9]" in (flagged(align_text(chain, run())) or ""), chain
        assert align_text(chain.replace("[6, 9]", "[6, 8]"), run()).first_divergence is None
    coded = "Each doubles.\n[ANSWER]\n```python\ndef g(nums):\n    return 5\n```\n[/ANSWER]"
    assert align_text(coded, run()).judgements == []


def test_it_returns_a_type_when_it_is_the_call_just_named() -> None:
    code = "def f(a, b):\n    return (a + b, a * b)"
    tr = run(code, "f(2, 3)")
    wrong = "When you call f(2, 3), it returns a list of the sum and the product."
    assert flagged(align_text(wrong, tr)) == wrong.removesuffix(" of the sum and the product.")
    other = "When you call f(1, 1), it returns a list of the sum and the product."
    assert align_text(other, tr).first_divergence is None
    # "it" after a sentence about something else is not f
    loose = "The split is done first. It returns a list of the parts."
    assert align_text(loose, tr).first_divergence is None


def test_a_fenced_value_at_the_end_under_no_heading_is_judged_only_as_f_s_type() -> None:
    """A fence holding one value as a chain's last words is its answer shown; with no heading
    to say so, a value of another type than f's result (a count, here) speaks of something
    else and contradicts nothing."""
    result = align_text("Both items double, and there are this many of them:\n```\n3\n```", run())
    assert result.first_divergence is None
