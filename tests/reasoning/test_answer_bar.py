"""A right answer raises the bar for a contradiction (`answer_bar`).

Every chain here is written for the test, over small functions written for it. The faithful
chains are correct in every claim; each sits where a reader that misplaces a value, attaches it
to the wrong subject or reads progress as the result would raise a false alarm. The slips show
that a strong contradiction still stands when the answer is right, and that the bar is only
raised when it is."""

from __future__ import annotations

import pytest

from cruxtui.core.reasoning.alignment import UNVERIFIABLE, Alignment, align_text
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire


def run(code: str, call: str) -> Trace:
    return from_wire(code, call, tracer.run(code, call))


def flagged(result: Alignment, text: str) -> str | None:
    div = result.first_divergence
    return None if div is None else text[div.claim.start : div.claim.end]


def verdict_of(result: Alignment, words: str) -> tuple[str, str]:
    """The verdict and note on the (last) claim read from `words`."""
    j = [j for j in result.judgements if words in j.claim.text][-1]
    return j.verdict, j.note


WORDS = (
    "def f(words):\n"
    "    out = []\n"
    "    for w in words:\n"
    "        if len(w) > 2:\n"
    "            out.append(w.upper())\n"
    "    return out\n"
)
DIGITS = (
    "def f(s):\n"
    "    total = 0\n"
    "    for ch in s:\n"
    "        if ch.isdigit():\n"
    "            total += int(ch)\n"
    "    return total\n"
)
ROTATE = (
    "def f(nums, k):\n"
    "    nums = sorted(nums)\n"
    "    left = nums[:k]\n"
    "    right = nums[k:]\n"
    "    return right + left\n"
)
LSTRIP = (
    "def f(text):\n"
    "    i = 0\n"
    "    while i < len(text) and text[i] == ' ':\n"
    "        i += 1\n"
    "    return text[i:]\n"
)
FLIP = "def f(d):\n    keys = list(d)\n    keys.reverse()\n    return {k: d[k] for k in keys}\n"
PARITY = (
    "def f(s, c):\n"
    "    n = s.count(c)\n"
    "    if n % 2 == 0:\n"
    "        return s.replace(c, '')\n"
    "    return s + c * n\n"
)
GLUE = "def f(xs):\n    acc = ''\n    for x in xs:\n        acc = acc + str(x)\n    return acc\n"
HAIL = (
    "def f(n):\n"
    "    steps = 0\n"
    "    while n != 1:\n"
    "        n = n // 2 if n % 2 == 0 else 3 * n + 1\n"
    "        steps += 1\n"
    "    return steps\n"
)
ZIPPER = (
    "def f(a, b):\n"
    "    m = min(len(a), len(b))\n"
    "    res = []\n"
    "    for i in range(m):\n"
    "        res.append(a[i] + b[i])\n"
    "    return ''.join(res)\n"
)
MOVE = "def f(lst):\n    lst.insert(1, lst.pop())\n    return lst\n"

FAITHFUL = [
    (
        WORDS,
        "f(['ab', 'cde', 'xy', 'fghi'])",
        "The first word 'ab' is too short. 'cde' has 3 letters, so it goes in as 'CDE'; 'xy' is "
        "skipped; 'fghi' is upper-cased to 'FGHI'. The result is ['CDE', 'FGHI'].",
    ),
    (
        WORDS,
        "f(['ab', 'cde', 'xy', 'fghi'])",
        "- `w = 'ab'`: `len(w)` is 2, not more than 2, skip\n"
        "- `w = 'cde'`: 3 > 2 → `out = ['CDE']`\n"
        "- `w = 'xy'`: skip\n"
        "- `w = 'fghi'`: `out` becomes `['CDE', 'FGHI']`\n\n"
        "**Answer:** `['CDE', 'FGHI']`",
    ),
    (
        WORDS,
        "f(['ab', 'cde', 'xy', 'fghi'])",
        "We walk the list. After 'cde' the output is ['CDE']. Nothing happens for 'xy'. Then "
        "'fghi' is long enough too, so the list ends as ['CDE', 'FGHI'], and that is returned.",
    ),
    (
        DIGITS,
        "f('a1b23')",
        "The string 'a1b23' has five characters. The second one, '1', is a digit, so total "
        "becomes 1. The fourth and fifth, '2' and '3', bring it to 3 and then 6. So total is 6 "
        "and that is what f gives back.",
    ),
    (
        DIGITS,
        "f('a1b23')",
        "digits are 1, 2 and 3, they sum to 6, letters are ignored, so f('a1b23') returns 6.",
    ),
    (
        DIGITS,
        "f('a1b23')",
        "<think>\nLoop over 'a1b23'. 'a' no. '1' yes, total 1. 'b' no. '2' → total = 3. '3' → "
        "total = 6. Hmm, int('3') is 3, right, yes.\n</think>\n\n6",
    ),
    (
        ROTATE,
        "f([5, 2, 9, 1], 1)",
        "<think>\nsorted gives [1, 2, 5, 9]. k is 1 so left is [1] and right is [2, 5, 9]. "
        "right + left... that's [2, 5, 9, 1]. Let me double check the slice: nums[:1] is just "
        "the first element, yes [1].\n</think>\n\n[2, 5, 9, 1]",
    ),
    (
        ROTATE,
        "f([5, 2, 9, 1], 1)",
        "Let's execute the code step by step:\n"
        "1. nums is [5, 2, 9, 1] and k is 1.\n"
        "2. After sorting, nums = [1, 2, 5, 9].\n"
        "3. left = nums[:1] = [1].\n"
        "4. right = nums[1:] = [2, 5, 9].\n"
        "5. The function returns right + left = [2, 5, 9, 1].\n"
        "[ANSWER] assert f([5, 2, 9, 1], 1) == [2, 5, 9, 1] [/ANSWER]",
    ),
    (
        LSTRIP,
        "f('   hi ')",
        "1. text = '   hi ', i = 0.\n"
        "2. text[0] is ' ', so i = 1.\n"
        "3. text[1] is a space too, i = 2.\n"
        "4. text[2] is a space, i = 3.\n"
        "5. text[3] is 'h', the loop stops.\n"
        "6. We return text[3:], which is 'hi '.",
    ),
    (
        LSTRIP,
        "f('   hi ')",
        "Three leading spaces are skipped, so the loop runs 3 times and i ends at 3; the "
        "trailing space stays. Output: 'hi '",
    ),
    (
        FLIP,
        "f({'a': 1, 'b': 2})",
        "Reversing the keys gives ['b', 'a'], so the dict is rebuilt as {'b': 2, 'a': 1}. The "
        "answer is {'b': 2, 'a': 1}.",
    ),
    (
        FLIP,
        "f({'a': 1, 'b': 2})",
        "keys starts as ['a', 'b'] and after keys.reverse() it is ['b', 'a']. The comprehension "
        "maps each key back to its value in d, so we get {'b': 2, 'a': 1}.",
    ),
    (
        PARITY,
        "f('banana', 'a')",
        "'banana' contains 'a' three times, so n = 3. 3 is odd, so the replace branch is not "
        "taken; instead we return s + c * n, that is 'banana' + 'aaa' = 'bananaaaa'.",
    ),
    (
        PARITY,
        "f('banana', 'a')",
        "```python\nn = s.count(c)      # 3\nif n % 2 == 0:      # 3 % 2 == 1, False\n"
        "    ...\nreturn s + c * n    # 'banana' + 'aaa'\n```\n\n"
        "`c * n` is `'aaa'`, so the result is `'bananaaaa'`.\n\n**Answer:** 'bananaaaa'",
    ),
    (
        GLUE,
        "f([4, 0, 7])",
        "| x | acc |\n|---|---|\n| 4 | '4' |\n| 0 | '40' |\n| 7 | '407' |\n\nSo f returns '407'.",
    ),
    (
        GLUE,
        "f([4, 0, 7])",
        "str(4) is '4', so acc is '4'; then '0' is added to give '40', and '7' to give '407'. "
        "The function returns '407'.",
    ),
    (
        HAIL,
        "f(6)",
        "Starting from 6: it is even, so it halves to 3 (steps = 1). 3 is odd: 3 * 3 + 1 = 10 "
        "(steps = 2). Then 5, 16, 8, 4, 2 and finally 1, taking 8 steps in all. The function "
        "returns 8.",
    ),
    (
        HAIL,
        "f(6)",
        "n goes 6, 3, 10, 5, 16, 8, 4, 2, 1 — that's 8 moves, so steps ends at 8. Answer: 8",
    ),
    (
        ZIPPER,
        "f('abc', 'xy')",
        "- `m = min(3, 2) = 2`\n"
        "- `i = 0`: `'a' + 'x'` → `res = ['ax']`\n"
        "- `i = 1`: `'b' + 'y'` → `res = ['ax', 'by']`\n"
        "- joined: `'axby'`\n\n**Answer:** `'axby'`",
    ),
    (
        ZIPPER,
        "f('abc', 'xy')",
        "The shorter string has 2 characters, so only the first two positions pair up: 'a' "
        "with 'x' and 'b' with 'y'. The 'c' is dropped. Joining the pairs gives 'axby'.",
    ),
    (
        MOVE,
        "f([1, 2, 3, 4])",
        "pop() takes off the 4, leaving [1, 2, 3], and insert(1, 4) puts it back at index 1: "
        "[1, 4, 2, 3]. That list is returned.",
    ),
    (
        MOVE,
        "f([1, 2, 3, 4])",
        "lst.pop() returns 4 and lst is now [1, 2, 3]. Then 4 is inserted at position 1, so "
        "lst = [1, 4, 2, 3], which is returned.",
    ),
]

FAITHFUL += [
    (
        WORDS,
        "f(['ab', 'cde', 'xy', 'fghi'])",
        "In short, out will be ['CDE', 'FGHI']. Let's check: 'ab' has length 2, which fails the "
        "test, 'cde' passes and out = ['CDE'], 'xy' fails, and 'fghi' passes, so out = "
        "['CDE', 'FGHI']. The function returns ['CDE', 'FGHI'].",
    ),
    (
        LSTRIP,
        "f('   hi ')",
        "The loop skips over the leading blanks one by one: i = 1, i = 2, i = 3. At index 3 "
        "there is an 'h', so it stops, and the remaining text is 'hi '. f returns 'hi '.",
    ),
    (
        ROTATE,
        "f([5, 2, 9, 1], 1)",
        "sorted(nums) is [1, 2, 5, 9]. The first k = 1 element goes to the back: once the 1 is "
        "taken off, what is left is [2, 5, 9], and the 1 is appended to it. Result: "
        "[2, 5, 9, 1].",
    ),
    (
        ROTATE,
        "f([5, 2, 9, 1], 1)",
        "right + left = [2, 5, 9] + [1] = [2, 5, 9, 1], which is the output. Note the input "
        "nums is [5, 2, 9, 1]; sorted() builds a new list rather than sorting it in place.",
    ),
    (
        PARITY,
        "f('banana', 'a')",
        "n = 3, an odd count. Had n been even, the function would return 'bnn'. Since it is odd, "
        "the answer is 'banana' followed by three more a's: 'bananaaaa'.",
    ),
    (
        GLUE,
        "f([4, 0, 7])",
        "Each number is turned into its digit and glued on: acc goes '' → '4' → '40' → '407'. "
        "The final acc is '407'.",
    ),
    (
        GLUE,
        "f([4, 0, 7])",
        "<think>\nacc starts empty. x = 4: acc = '4'. x = 0: acc = '40' — wait, is 0 falsy a "
        "problem? No, str(0) is '0', it's just concatenated. x = 7: acc = '407'.\n</think>\n\n"
        "The output is '407'.",
    ),
    (
        HAIL,
        "f(6)",
        "| step | n |\n|---|---|\n| 0 | 6 |\n| 1 | 3 |\n| 2 | 10 |\n| 3 | 5 |\n| 4 | 16 |\n"
        "| 5 | 8 |\n| 6 | 4 |\n| 7 | 2 |\n| 8 | 1 |\n\nn reaches 1 after 8 steps, so f(6) = 8.",
    ),
    (
        HAIL,
        "f(6)",
        "The loop body runs 8 times. The largest value n reaches is 16, and the odd values on "
        "the way are 3 and 5. steps is 8 at the end.",
    ),
    (
        ZIPPER,
        "f('abc', 'xy')",
        "len(a) is 3 and len(b) is 2, so m is 2 and i takes the values 0 and 1. a[0] + b[0] is "
        "'ax', a[1] + b[1] is 'by'. res = ['ax', 'by'] and ''.join(res) is 'axby'.",
    ),
    (
        ZIPPER,
        "f('abc', 'xy')",
        "Interleave until one runs out: the pairs are 'ax' and 'by', and the join of the list "
        "is 'axby'. So the answer is 'axby'.",
    ),
    (
        MOVE,
        "f([1, 2, 3, 4])",
        "The last element, 4, moves to index 1. Everything from the old index 1 on shifts "
        "right by one, so 2 is now at index 2 and 3 at index 3. The list is [1, 4, 2, 3].",
    ),
    (
        FLIP,
        "f({'a': 1, 'b': 2})",
        "d has 2 keys. list(d) is ['a', 'b']; reversed in place it becomes ['b', 'a']. The new "
        "dict has the same pairs, b first: {'b': 2, 'a': 1}. Since dicts compare without order, "
        "this equals d itself.",
    ),
    (
        DIGITS,
        "f('a1b23')",
        "Three of the five characters are digits. Adding them up: 1 + 2 + 3 = 6. The letters "
        "'a' and 'b' add nothing. Final total: 6.",
    ),
    (
        WORDS,
        "f(['ab', 'cde', 'xy', 'fghi'])",
        "Two of the four words are longer than 2 characters, 'cde' and 'fghi'. The list of "
        "upper-cased survivors, in order, is ['CDE', 'FGHI']. [ANSWER] assert f(['ab', 'cde', "
        "'xy', 'fghi']) == ['CDE', 'FGHI'] [/ANSWER]",
    ),
    (
        LSTRIP,
        "f('   hi ')",
        "text[0], text[1] and text[2] are spaces, so i climbs to 3. The condition "
        "i < len(text) stays True throughout, since len(text) is 6. text[3:] = 'hi '.",
    ),
    (
        HAIL,
        "f(6)",
        "n = 3, steps = 1. n = 10, steps = 2. n = 5, steps = 3. n = 16, steps = 4. n = 8, "
        "steps = 5. n = 4, steps = 6. n = 2, steps = 7. n = 1, steps = 8. Looking back, the "
        "peak came right after 5: n = 16 there. f returns 8.",
    ),
    (
        HAIL,
        "f(6)",
        "Let me list: n = 3, n = 10, n = 5, n = 16, n = 8, n = 4, n = 2, n = 1, with steps = 8 "
        "at the end. The odd ones were n = 3 and n = 5. f returns 8.",
    ),
]


@pytest.mark.parametrize(
    "code,call,text", FAITHFUL, ids=[f"faithful-{i}" for i in range(len(FAITHFUL))]
)
def test_a_faithful_chain_raises_nothing(code: str, call: str, text: str) -> None:
    result = align_text(text, run(code, call))
    assert result.first_divergence is None, result.first_divergence


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
    text = FAITHFUL[-2][2]
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
