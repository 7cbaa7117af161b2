"""A right answer raises the bar for a contradiction (`answer_bar`).

Every chain here is written for the test, over the small functions of `test_faithful_chains`
(whose correct chains the bar keeps quiet). The slips show that a strong contradiction still
stands when the answer is right, and that the bar is only raised when it is."""

from __future__ import annotations

import pytest

from cruxtui.core.reasoning.alignment import UNVERIFIABLE, Alignment, align_text
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire
from tests.reasoning.test_faithful_chains import FAITHFUL, GLUE, HAIL, LSTRIP, ROTATE, WORDS


def run(code: str, call: str) -> Trace:
    return from_wire(code, call, tracer.run(code, call))


def flagged(result: Alignment, text: str) -> str | None:
    div = result.first_divergence
    return None if div is None else text[div.claim.start : div.claim.end]


def verdict_of(result: Alignment, words: str) -> tuple[str, str]:
    """The verdict and note on the (last) claim read from `words`."""
    j = [j for j in result.judgements if words in j.claim.text][-1]
    return j.verdict, j.note


def test_progress_read_as_the_result_is_no_slip_when_the_answer_is_right() -> None:
    """ "After 'cde' the output is ['CDE']" is the list so far; ['CDE'] is a value `out` holds,
    and the chain ends on the right answer."""
    tr = run(WORDS, "f(['ab', 'cde', 'xy', 'fghi'])")
    text = (
        "We walk the list. After 'cde' the output is ['CDE']. The function returns ['CDE', 'FGHI']."
    )
    result = align_text(text, tr)
    assert result.first_divergence is None
    verdict, note = verdict_of(result, "the output is ['CDE']")
    assert verdict == UNVERIFIABLE and "the answer is right" in note
    # The same words before a wrong answer are judged as before: the bar is not raised.
    wrong = "We walk the list. After 'cde' the output is ['CDE']. The function returns ['CDE']."
    assert flagged(align_text(wrong, tr), wrong) == "the output is ['CDE']"


def test_a_value_of_another_subject_is_a_misreading_when_the_answer_is_right() -> None:
    """ "the remaining text is 'hi '": 'hi ' is what f returns, not a value of `text`."""
    tr = run(LSTRIP, "f('   hi ')")
    text = "i climbs to 3 over the spaces, and the remaining text is 'hi '. f returns 'hi '."
    result = align_text(text, tr)
    assert result.first_divergence is None
    verdict, note = verdict_of(result, "text is 'hi '")
    assert verdict == UNVERIFIABLE and "holds elsewhere" in note


def test_a_strong_slip_stands_even_when_the_answer_is_right() -> None:
    """A named subject, a value the run never holds, asserted plainly: a slip the answer happens
    to survive (the sort hides it)."""
    tr = run(ROTATE, "f([5, 2, 9, 1], 1)")
    text = (
        "nums = [1, 2, 5, 9] once sorted. left = [9], the first element. right = [2, 5, 9]. "
        "The function returns [2, 5, 9, 1]."
    )
    result = align_text(text, tr)
    assert flagged(result, text) == "left = [9]"
    assert result.first_divergence.true_value == "[1]"  # type: ignore[union-attr]


def test_a_hedged_slip_is_unverifiable_when_the_answer_is_right() -> None:
    tr = run(ROTATE, "f([5, 2, 9, 1], 1)")
    text = (
        "nums = [1, 2, 5, 9] once sorted. I think left = [9] here. right = [2, 5, 9]. "
        "The function returns [2, 5, 9, 1]."
    )
    result = align_text(text, tr)
    assert result.first_divergence is None
    verdict, note = verdict_of(result, "left = [9]")
    assert verdict == UNVERIFIABLE and "hedged" in note
    # With a wrong answer the hedge does not save it.
    wrong = text.replace("returns [2, 5, 9, 1]", "returns [2, 5, 9, 9]")
    assert flagged(align_text(wrong, tr), wrong) == "left = [9]"


def test_a_value_the_subject_has_at_another_time_needs_the_time_said() -> None:
    """ "Looking back, ... n = 16 there" is placed at the end, far from where n was 16: with the
    answer right, the placement is the likelier mistake."""
    tr = run(HAIL, "f(6)")
    text = next(t for _c, _call, t in FAITHFUL if t.startswith("n = 3, steps = 1."))
    verdict, note = verdict_of(align_text(text, tr), "n = 16")
    assert verdict == UNVERIFIABLE and "16 elsewhere" in note


def test_a_time_said_keeps_the_contradiction() -> None:
    """`acc` is '40' in the run, but not in the first iteration, where it only becomes '4': the
    chain says when, so the contradiction stands though the answer is right."""
    tr = run(GLUE, "f([4, 0, 7])")
    pinned = "acc = '' at the start. In the first iteration acc = '40'. The function returns '407'."
    assert flagged(align_text(pinned, tr), pinned) == "acc = '40'"


def test_the_input_task_answer_is_right_when_the_call_gives_the_target() -> None:
    """Input task: the chain's answer is right when f on its proposed call gives the target;
    a weak mid-chain contradiction is then unverifiable."""
    tr = run(LSTRIP, "f('  ok')")
    text = (
        "We need 'ok'. Two leading spaces will be skipped, and the remaining text is 'ok'. "
        "So f('  ok') works."
    )
    assert align_text(text, tr, target="'ok'").first_divergence is None
    assert align_text(text, tr, target="'no'").first_divergence is not None


PUSH_OR_FRONT = (
    "def f(nums):\n"
    "    res = []\n"
    "    while nums:\n"
    "        x = nums.pop()\n"
    "        if x % 2:\n"
    "            res.append(x * 2)\n"
    "        else:\n"
    "            res.insert(0, x)\n"
    "    return res\n"
)


@pytest.mark.parametrize(
    "between",
    [
        "Hmm. x * 2 is 6, so",
        "Let me look at that line again: it appends x * 2, not x, so",
        "That can't be: the line appends x * 2, so",
        "My bad,",
        "Ugh,",
    ],
)
def test_a_value_put_right_at_once_in_any_words_is_no_divergence(between: str) -> None:
    """A writer who gives res two values for one moment and ends on the right answer has put
    the first right, whatever the words between."""
    text = (
        f"The first pop gives x = 3. res = [3]. {between} res = [6]. Then 2 goes to the "
        "front: [2, 6]. Finally x = 1 adds 2: [2, 6, 2]. The answer is [2, 6, 2]."
    )
    tr = run(PUSH_OR_FRONT, "f([1, 2, 3])")
    assert align_text(text, tr).first_divergence is None


def test_a_value_for_a_later_moment_puts_nothing_right() -> None:
    """'res = [3]. Then res = [2, 6]': the second value is for after the next pop, so the first
    still stands as the slip."""
    text = (
        "The first pop gives x = 3, and res = [3]. Then x = 2 goes to the front, so res = "
        "[2, 6]. Finally x = 1 adds 2: res = [2, 6, 2]. The answer is [2, 6, 2]."
    )
    fd = align_text(text, run(PUSH_OR_FRONT, "f([1, 2, 3])")).first_divergence
    assert fd is not None and fd.claim.value == "[3]"


BANGS = (
    "def f(s):\n"
    "    i = len(s) - 1\n"
    "    while i >= 0 and s[i] == '!':\n"
    "        i -= 1\n"
    "    return s[:i + 1], len(s) - i - 1\n"
)


@pytest.mark.parametrize(
    "start",
    [
        "len(s) is 4. Wait, the string has 5 characters, so i starts at 4.",
        "len(s) is 4. Hmm, no: 'hi!!!' has 5 characters. i starts at 4.",
        "The loop runs twice — no, three times, one per '!'. i starts at 4.",
    ],
)
def test_a_claim_a_correction_follows_at_once_is_no_divergence(start: str) -> None:
    """The words that put it right need not name a subject the reader knows: the marker
    right after the claim, in a chain whose answer is right, says the writer took it back."""
    text = (
        start + " So i stops at 1, the slice is 'hi', and 5 - 1 - 1 = 3. The answer is ('hi', 3)."
    )
    assert align_text(text, run(BANGS, "f('hi!!!')")).first_divergence is None


def test_a_re_check_that_keeps_the_wrong_value_takes_nothing_back() -> None:
    text = (
        "len(s) is 4.\n\nHmm, wait. Let me count the characters... I'll keep len(s) = 4. "
        "So i stops at 1 and the answer is ('hi', 3)."
    )
    fd = align_text(text, run(BANGS, "f('hi!!!')")).first_divergence
    assert fd is not None and fd.claim.text == "len(s) is 4"


@pytest.mark.parametrize(
    "ending",
    ["All told: 'hi '.", "So we are left holding 'hi ' straight away."],
)
def test_the_bar_holds_when_the_answer_is_in_words_no_reader_knows(ending: str) -> None:
    """A correct chain ends on the right value, however it words it: the last value the chain
    writes is read as its answer for the bar, so a misreading mid-chain is not an alarm for want
    of a known answer form. Ending on another value keeps the bar down."""
    tr = run(LSTRIP, "f('   hi ')")
    text = f"i climbs to 3 over the spaces, and the remaining text is 'hi '. {ending}"
    result = align_text(text, tr)
    assert not [j for j in result.judgements if j.claim.kind == "return"]
    assert result.first_divergence is None
    verdict, note = verdict_of(result, "text is 'hi '")
    assert verdict == UNVERIFIABLE and "the answer is right" in note
    wrong = "'hi'".join(text.rsplit("'hi '", 1))  # the last value written is not f's result
    assert flagged(align_text(wrong, tr), wrong) == "text is 'hi '"


def test_an_option_the_chain_weighs_is_no_slip_when_the_answer_is_right() -> None:
    """Input task: " `insert_loc = 0` would do, but -2 works too" weighs another input; the
    call proposed is f(..., -2), so insert_loc is -2 in the run, and the answer is right."""
    code = "def f(matr, insert_loc):\n    matr.insert(insert_loc, [])\n    return matr"
    tr = run(code, "f([[5], [1]], -2)")
    text = (
        "The [] must end up at the front. `insert_loc = 0` would do, but a negative index works "
        "too: -2 on a 2-element list means position 0. So f([[5], [1]], -2) works."
    )
    result = align_text(text, tr, target="[[], [5], [1]]")
    assert result.first_divergence is None
    verdict, note = verdict_of(result, "insert_loc = 0")
    assert verdict == UNVERIFIABLE and "hedged" in note


def test_other_candidates_of_the_input_task_are_other_runs() -> None:
    """Input task, answer right: "Candidate 'a1': l[0] = 'a' ... Rejected" traces another input
    than the one proposed; "'Half Life' is returned whenever 0 < num < 1000" states f's rule."""
    code = (
        "def f(s):\n    l = list(s)\n    for i in range(len(l)):\n        if not l[i].isdigit():\n"
        "            return False\n    return True"
    )
    tr = run(code, "f('123')")
    text = (
        "Candidate 'a1': l[0] = 'a', not a digit, so it returns False. Rejected.\n"
        "Candidate '123': every character is a digit, so f('123') works."
    )
    assert align_text(text, tr, target="True").first_divergence is None
    rule = "def f(num):\n    if 0 < num < 1000:\n        return 'Half Life'\n    return 'Not found'"
    tr = run(rule, "f(1000)")
    text = (
        "'Half Life' is returned whenever 0 < num < 1000, so num = 1000 gives 'Not found': f(1000)."
    )
    assert align_text(text, tr, target="'Not found'").first_divergence is None


def test_the_end_of_a_list_is_a_place_not_the_end_of_the_run() -> None:
    """ "an empty slice at the end of a length-2 list": a place in the list, so the value
    stated there is judged where the step is, not once f has finished."""
    code = (
        "def f(xs):\n    for k in range(len(xs)):\n        xs[k + 1 : k + 2] = ['+']\n"
        "    xs.append('+')\n    return xs"
    )
    tr = run(code, "f(['9', 'r'])")
    text = (
        "First pass: xs[1:2] is replaced, giving ['9', '+']. Second pass: xs[2:3] is an empty "
        "slice at the end of a length-2 list, so xs becomes ['9', '+', '+']. Then the append "
        "gives ['9', '+', '+', '+'], which f returns."
    )
    assert align_text(text, tr).first_divergence is None


def test_the_start_of_a_string_is_a_place_not_the_start_of_the_run() -> None:
    """ "`removeprefix` only looks at the start": a place in the string, not a time, so the
    claim beside it ("The text ends in 'sac'", true before the spaces were added) is not pinned
    to the start of the run. A correct chain of the reasoning corpus (writer-ab)."""
    code = (
        "def f(text):\n    for p in ['acs', 'asp', 'scn']:\n"
        "        text = text.removeprefix(p) + ' '\n    return text.removeprefix(' ')[:-1]"
    )
    tr = run(code, "f('ilfdoirwirmtoibsac')")
    text = "Start: `text = 'ilfdoirwirmtoibsac'` (18 chars).\n\n- `p = 'acs'`: text starts with `'ilf'`, so `removeprefix` does nothing; then `+ ' '` → `'ilfdoirwirmtoibsac '`\n- `p = 'asp'`: no match again → `'ilfdoirwirmtoibsac  '`\n- `p = 'scn'`: no match → `'ilfdoirwirmtoibsac   '` (3 trailing spaces, length 21)\n- The text ends in `'sac'`, which looks like a scrambled `'acs'`, but `removeprefix` only looks at the start\n- `text.removeprefix(' ')`: text begins with `'i'`, not a space, so nothing is removed\n- `[:-1]` drops one trailing space → `'ilfdoirwirmtoibsac  '` (2 trailing spaces, length 20)\n\nFinal answer: `'ilfdoirwirmtoibsac  '`"
    assert align_text(text, tr).first_divergence is None


def test_options_the_input_task_weighs_are_other_runs() -> None:
    """Input task, proposed call right: bullets that try other values of an argument ("- number
    = 4: only D ✗"), a call of f with other arguments ("f('aaa', 'aa') gives 1"), "it'd be 1"."""
    code = (
        "def f(number):\n    d = {'A': 1, 'B': 2, 'C': 3, 'D': 4}\n"
        "    return [k for k, v in d.items() if v % number == 0]"
    )
    tr = run(code, "f(2)")
    text = (
        "We want ['B', 'D'].\n- number = 1: every key ✗\n- number = 2: 2 and 4 → ['B', 'D'] ✓\n"
        "- number = 4: only 4 % number == 0 → ['D'] ✗\n\n**Answer:** f(2)"
    )
    assert align_text(text, tr, target="['B', 'D']").first_divergence is None
    count = (
        "def f(full, part):\n    n = 0\n    while part in full:\n"
        "        full = full[full.find(part) + len(part) :]\n        n += 1\n    return n"
    )
    tr = run(count, "f('abab', 'ab')")
    text = (
        "full = 'abab' and part = 'ab' give two matches. With full = 'ab' alone it'd be 1; "
        "f('aaa', 'aa') gives 1 since after the match full becomes 'a'. Proposed: f('abab', 'ab')"
    )
    assert align_text(text, tr, target="2").first_divergence is None


def test_a_test_written_out_then_judged() -> None:
    """ "every check `c.isascii() is False` is False": the backticked test is judged as a
    whole; its inner "is False" is part of it, not a claim that c.isascii() is False."""
    code = "def f(s):\n    for c in s:\n        if c.isascii() is False:\n            return False\n    return True"
    tr = run(code, "f('1z1')")
    text = "Every character is ASCII, so every check `c.isascii() is False` is False and f returns True."
    assert align_text(text, tr).first_divergence is None
