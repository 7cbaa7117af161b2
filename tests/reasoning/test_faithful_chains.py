"""Correct chains of thought written for the test, over small functions written for it, in
the styles people and models use (numbered, terse, markdown, narrative, tables, short answers,
thinking, code-heavy). Every claim in them is true of the run; each sits where a reader that
misplaces a value, attaches it to the wrong subject, reads progress as the result or takes a
table's bare characters for numbers would raise a false alarm. None may raise one."""

from __future__ import annotations

import pytest

from cruxtui.core.reasoning.alignment import align_text
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire


def run(code: str, call: str) -> Trace:
    return from_wire(code, call, tracer.run(code, call))


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

COUNTER = (
    "def f(s):\n"
    "    seen = {}\n"
    "    for ch in s:\n"
    "        seen[ch] = seen.get(ch, 0) + 1\n"
    "    best = max(seen, key=seen.get)\n"
    "    return best, seen[best]\n"
)
EVENS = (
    "def f(nums):\n"
    "    i = 0\n"
    "    kept = []\n"
    "    while i < len(nums):\n"
    "        if nums[i] % 2 == 0:\n"
    "            kept.append(nums[i])\n"
    "        i += 1\n"
    "    return kept\n"
)
SPLITJOIN = (
    "def f(text, sep):\n"
    "    parts = text.split(sep)\n"
    "    parts = [p.strip() for p in parts if p.strip()]\n"
    "    return '-'.join(parts)\n"
)
APPEND_SORT = "def f(xs):\n    xs.append(9)\n    xs.sort()\n    return xs\n"

FAITHFUL += [
    (
        COUNTER,
        "f('abcab')",
        "| ch | seen after |\n|---|---|\n| a | {'a': 1} |\n| b | {'a': 1, 'b': 1} |\n"
        "| c | {'a': 1, 'b': 1, 'c': 1} |\n| a | {'a': 2, 'b': 1, 'c': 1} |\n"
        "| b | {'a': 2, 'b': 2, 'c': 1} |\n\nmax picks the first key with the top count, 'a', so "
        "the result is ('a', 2).",
    ),
    (
        COUNTER,
        "f('abcab')",
        "- counts: `{'a': 2, 'b': 2, 'c': 1}`\n- `max(seen, key=seen.get)` → `'a'` (ties go to the "
        "first key seen)\n- `seen[best]` → `2`\n\n**Answer:** `('a', 2)`",
    ),
    (
        COUNTER,
        "f('abcab')",
        "a and b both appear twice and c once; the first of the tied keys is 'a', so f returns "
        "('a', 2).",
    ),
    (
        EVENS,
        "f([3, 8, 5, 2])",
        "| i | nums[i] | even? | kept |\n|---|---|---|---|\n| 0 | 3 | no | [] |\n"
        "| 1 | 8 | yes | [8] |\n| 2 | 5 | no | [8] |\n| 3 | 2 | yes | [8, 2] |\n\n"
        "i reaches 4 and the loop ends. Output: [8, 2]",
    ),
    (
        EVENS,
        "f([3, 8, 5, 2])",
        "i starts at 0. nums[0] = 3 is odd. i = 1: 8 is even, kept = [8]. i = 2: 5, odd. i = 3: "
        "2, even, kept = [8, 2]. Then i = 4, which is not less than 4, so we stop and return "
        "[8, 2].",
    ),
    (
        EVENS,
        "f([3, 8, 5, 2])",
        "Only the even numbers survive: 8 and 2, in their original order. So the answer is [8, 2].",
    ),
    (
        EVENS,
        "f([3, 8, 5, 2])",
        "<think>\nwhile loop with index. 3 % 2 = 1, skip. 8 % 2 = 0 → kept [8]. 5 skip. 2 → kept "
        "[8, 2]. len(nums) is 4 so i goes 0..3 and stops at 4.\n</think>\n[8, 2]",
    ),
    (
        SPLITJOIN,
        "f(' a , b ,, c ', ',')",
        "1. text.split(',') gives [' a ', ' b ', '', ' c '].\n"
        "2. Stripping each and dropping the empty ones leaves ['a', 'b', 'c'].\n"
        "3. Joining with '-' gives 'a-b-c'.\n"
        "[ANSWER] assert f(' a , b ,, c ', ',') == 'a-b-c' [/ANSWER]",
    ),
    (
        SPLITJOIN,
        "f(' a , b ,, c ', ',')",
        "split on commas → 4 pieces, one of them empty; after strip and filter, parts is "
        "['a', 'b', 'c'] (3 items); the join puts dashes between them: 'a-b-c'.",
    ),
    (
        SPLITJOIN,
        "f(' a , b ,, c ', ',')",
        "The text splits into ' a ', ' b ', '' and ' c '. The comprehension keeps p.strip() for "
        "every p whose stripped form is not empty, so the empty piece goes and parts becomes "
        "['a', 'b', 'c']. The function returns 'a-b-c'.",
    ),
    (
        WORDS,
        "f(['ab', 'cde', 'xy', 'fghi'])",
        "I first thought 'ab' would pass, but len('ab') is 2 and the test is > 2, so it does not. "
        "'cde' and 'fghi' pass. The result is ['CDE', 'FGHI'].",
    ),
    (
        ZIPPER,
        "f('abc', 'xy')",
        "| i | a[i] | b[i] | res |\n|---|---|---|---|\n| 0 | 'a' | 'x' | ['ax'] |\n"
        "| 1 | 'b' | 'y' | ['ax', 'by'] |\n\nm = 2 stops it there. ''.join gives 'axby'.",
    ),
    (
        HAIL,
        "f(6)",
        "steps counts the moves: 6 → 3 → 10 → 5 → 16 → 8 → 4 → 2 → 1. That's 8 arrows, so "
        "steps = 8 when n becomes 1. Answer: 8",
    ),
    (
        GLUE,
        "f([4, 0, 7])",
        "The result string grows one digit at a time and ends as '407'; str(x) is needed because "
        "x is an int. f([4, 0, 7]) == '407'.",
    ),
    (
        MOVE,
        "f([1, 2, 3, 4])",
        "Inner call first: lst.pop() removes and returns the last item, 4; the list is [1, 2, 3] "
        "for a moment. Then insert(1, 4): [1, 4, 2, 3]. That is the return value.",
    ),
    (
        DIGITS,
        "f('a1b23')",
        "| ch | digit? | total |\n|---|---|---|\n| a | no | 0 |\n| 1 | yes | 1 |\n| b | no | 1 |\n"
        "| 2 | yes | 3 |\n| 3 | yes | 6 |\n\nSo the total is 6.",
    ),
    (
        APPEND_SORT,
        "f([5, 1])",
        "append puts 9 at the end, so xs is [5, 1, 9]; sorting then gives [1, 5, 9], which is "
        "returned.",
    ),
]


@pytest.mark.parametrize(
    "code,call,text", FAITHFUL, ids=[f"faithful-{i}" for i in range(len(FAITHFUL))]
)
def test_a_faithful_chain_raises_nothing(code: str, call: str, text: str) -> None:
    tr = run(code, call)
    assert tr.ok
    result = align_text(text, tr)
    assert result.first_divergence is None, result.first_divergence


POP_SORT = (
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
# People own up to a slip in many words besides "wait" and "actually": naming the mistake
# ("Wrong.", "I see my error"), saying what they left out ("I forgot the doubling", "that
# ignores the * 2"), going back to the code ("Rereading the code, ...") or a bare "Er,".
OWNED_UP = [
    "Hmm, that ignores the * 2. res = [6].",
    "Mistake! res = [6].",
    "Oh, I dropped the multiplication; really res = [6].",
    "Rereading the code, the appended value is x * 2, so res = [6].",
    "I need to fix that: res = [6].",
    "Wrong. res = [6].",
    "Er, [6].",
    "Ah, I see my error: res = [6].",
    "I forgot the doubling, so res = [6].",
    "I got that wrong, res is [6].",
    "Or rather [6], since x is doubled.",
    "Double-checking the line: it appends x * 2, so res = [6].",
]


@pytest.mark.parametrize("fix", OWNED_UP)
def test_a_slip_owned_up_to_in_other_words_is_taken_back(fix: str) -> None:
    text = (
        f"nums = [1, 2, 3]. The first pop gives x = 3, so res = [3]. {fix} Then x = 2 goes "
        "to the front: [2, 6]. Then x = 1 gives [2, 6, 2]. The answer is [2, 6, 2]."
    )
    result = align_text(text, run(POP_SORT, "f([1, 2, 3])"))
    assert result.first_divergence is None, result.first_divergence


def test_a_slip_left_standing_beside_the_word_wrong_is_still_found() -> None:
    text = (
        "nums = [1, 2, 3]. The first pop gives x = 3, so res = [3]. Popping from the end is "
        "the wrong order to read the list in, but that is what the code does. Then x = 2 goes to "
        "the front: [2, 3]. The answer is [2, 3, 2]."
    )
    fd = align_text(text, run(POP_SORT, "f([1, 2, 3])")).first_divergence
    assert fd is not None and fd.claim.text == "res = [3]"


EVERY_OTHER = (
    "def f(s, n):\n"
    "    out = ''\n"
    "    for i in range(len(s)):\n"
    "        if i % n == 0:\n"
    "            out += s[i].upper()\n"
    "        else:\n"
    "            out += s[i]\n"
    "    return out\n"
)


@pytest.mark.parametrize(
    "text",
    [
        "n is 2, and i % 2 == 0 for i = 0, 2, 4, so those letters are capitals: 'HeLlO'.",
        "We capitalise the letter for i = 0, 2 and 4 and keep the rest: 'HeLlO'.",
    ],
)
def test_values_a_test_holds_for_are_some_of_the_loop_values(text: str) -> None:
    result = align_text(text, run(EVERY_OTHER, "f('hello', 2)"))
    assert result.first_divergence is None, result.first_divergence


def test_a_value_the_loop_never_takes_is_still_a_slip_when_only_some_are_named() -> None:
    text = "i % 2 == 0 for i = 0, 2, 4 and 6, so those letters are capitals: 'HeLlO'."
    fd = align_text(text, run(EVERY_OTHER, "f('hello', 2)")).first_divergence
    assert fd is not None and fd.true_value == "[0, 1, 2, 3, 4]"


def test_the_loop_said_to_run_for_values_lists_them_all() -> None:
    text = "The loop runs for i = 0, 1, 2, 3. The result is 'HeLlO'."
    fd = align_text(text, run(EVERY_OTHER, "f('hello', 2)")).first_divergence
    assert fd is not None and fd.claim.kind == "loop_values"


KEEP_TOP_TWO = (
    "def f(xs):\n"
    "    out = []\n"
    "    for x in xs:\n"
    "        if x > 0:\n"
    "            out.append(x)\n"
    "    out.sort()\n"
    "    while len(out) > 2:\n"
    "        out.pop(0)\n"
    "    return out\n"
)


def test_after_the_while_loop_is_the_exit_of_fs_one_while_loop() -> None:
    text = (
        "By the time we reach the sort, out is [5, 3, 8, 1]. Up to here only -1 was left out. "
        "After the while loop, out = [5, 8]."
    )
    result = align_text(text, run(KEEP_TOP_TWO, "f([5, -1, 3, 8, 1])"))
    assert result.first_divergence is None, result.first_divergence


def test_after_the_for_loop_is_judged_before_the_sort() -> None:
    text = "After the for loop, out is [1, 3, 5, 8]. The while loop then trims it to [5, 8]."
    fd = align_text(text, run(KEEP_TOP_TWO, "f([5, -1, 3, 8, 1])")).first_divergence
    assert fd is not None and fd.true_value == "[5, 3, 8, 1]"


FIRST_VOWEL = (
    "def f(word, limit):\n"
    "    seen = ''\n"
    "    for k in range(limit):\n"
    "        if word[k] in 'aeiou':\n"
    "            break\n"
    "        seen += word[k]\n"
    "    return seen\n"
)


def test_the_range_a_loop_that_breaks_is_set_to_cover_is_no_slip() -> None:
    text = (
        "limit is 6, so the loop is set up for k = 0 through 5. k = 0 reads 's', no vowel, "
        "seen = 's'. k = 1 reads 't', seen = 'st'. k = 2 reads 'o', a vowel, so we break. "
        "The function returns 'st'."
    )
    result = align_text(text, run(FIRST_VOWEL, "f('stove', 6)"))
    assert result.first_divergence is None, result.first_divergence


def test_a_range_misread_in_a_loop_that_runs_to_the_end_is_still_a_slip() -> None:
    text = "limit is 2, so k goes 0, 1, 2. seen ends as 'st'. The function returns 'st'."
    fd = align_text(text, run(FIRST_VOWEL, "f('stove', 2)")).first_divergence
    assert fd is not None and fd.claim.kind == "loop_values"


COLLECT = "def f(xs):\n    acc = []\n    [acc.append(x * 2) for x in xs]\n    return len(acc)\n"


def test_a_value_said_to_stay_through_a_change_is_the_slip() -> None:
    """'acc stays empty' after the line that fills it: the value acc had a step before is
    what the writer wrongly thinks persists, not a placement slip of the reader."""
    text = (
        "xs = [1, 2]. For x = 1, 2 is appended; for x = 2, 4. So acc = [2, 4] and the "
        "length is 2.\n\nHmm, actually -- the comprehension's own list of Nones is thrown away, "
        "so acc stays empty, and len(acc) is 0.\n\nAnswer: 0"
    )
    fd = align_text(text, run(COLLECT, "f([1, 2])")).first_divergence
    assert fd is not None and fd.claim.text == "acc stays empty", fd


PAD_EACH = (
    "def f(s, widths):\n"
    "    out = []\n"
    "    for n in widths:\n"
    "        out.append(s.rjust(n, '.'))\n"
    "    return out\n"
)


def test_what_one_pass_gives_is_the_loop_bodys_one_call_there() -> None:
    """'The second pass gives X' names no subject; in a loop whose body makes one call that
    gives a value, X is that call's value in that pass."""
    slip = (
        "The first pass pads to 4 and gives '.abc'. The second pass, with n = 6, gives "
        "'..abc'. So the answer is ['.abc', '..abc']."
    )
    fd = align_text(slip, run(PAD_EACH, "f('abc', [4, 6])")).first_divergence
    assert fd is not None and fd.claim.value == "'..abc'" and fd.true_value == "'...abc'"
    right = slip.replace("'..abc'", "'...abc'")
    result = align_text(right, run(PAD_EACH, "f('abc', [4, 6])"))
    assert result.first_divergence is None, result.first_divergence


TRAILING_BANGS = (
    "def f(s):\n"
    "    i = len(s) - 1\n"
    "    while i >= 0 and s[i] == '!':\n"
    "        i -= 1\n"
    "    return s[:i + 1], len(s) - i - 1\n"
)


@pytest.mark.parametrize(
    "spelled",
    ["s = 'h','i','!','!','!'", "s = 'h', 'i', '!', '!' and '!'"],
)
def test_a_subject_spelled_out_item_by_item_is_not_its_first_item(spelled: str) -> None:
    text = (
        f"<think>\nLet me recount: {spelled}, indices 0 to 4, with the '!' at 2, 3 and 4. "
        "So i goes down from 4 to 1 and stops at the 'i'.\n</think>\n('hi', 3)"
    )
    result = align_text(text, run(TRAILING_BANGS, "f('hi!!!')"))
    assert result.first_divergence is None, result.first_divergence


def test_a_value_followed_by_another_kind_of_value_is_still_read() -> None:
    text = "i = 3, '!' is at s[3], so i moves on. In the end i = 2 and f returns ('hi', 3)."
    fd = align_text(text, run(TRAILING_BANGS, "f('hi!!!')")).first_divergence
    assert fd is not None and fd.claim.text == "i = 2"


@pytest.mark.parametrize(
    "aside",
    [
        "Let me try a smaller example first: with nums = [4], x = 4 is even and res = [4].",
        "A toy case to see the pattern: nums = [5, 6] would end as res = [6, 10].",
    ],
)
def test_an_example_of_the_writers_own_is_another_run(aside: str) -> None:
    text = (
        f"<think>\n{aside} Now the real input: x = 3 gives res = [6]; x = 2 gives [2, 6]; "
        "x = 1 gives [2, 6, 2].\n</think>\n[2, 6, 2]"
    )
    result = align_text(text, run(POP_SORT, "f([1, 2, 3])"))
    assert result.first_divergence is None, result.first_divergence


MEAN = (
    "def f(xs):\n"
    "    total = sum(xs)\n"
    "    mean = total / len(xs)\n"
    "    return [x for x in xs if x > mean]\n"
)


def test_a_float_written_rounded_is_no_slip() -> None:
    text = "total = 10 and mean = 10 / 3 = 3.33. Only 7 is above it, so f returns [7]."
    result = align_text(text, run(MEAN, "f([1, 2, 7])"))
    assert result.first_divergence is None, result.first_divergence


def test_a_float_rounded_to_another_value_is_still_a_slip() -> None:
    text = "total = 10 and mean = 10 / 3 = 3.5. Only 7 is above it, so f returns [2, 7]."
    fd = align_text(text, run(MEAN, "f([1, 2, 7])")).first_divergence
    assert fd is not None and fd.claim.value == "3.5"


def test_the_code_s_loop_test_described_and_a_place_at_the_end() -> None:
    """ "it loops while the substring 'ab' is in text" describes the code's test, it does not
    say the test holds; "the slice stops at the end" is a place in the list, not the end of the
    run (where lst[1:4] is already reversed)."""
    code = "def f(text):\n    while 'ab' in text:\n        text = text.replace('ab', 'ba')\n    return text"
    text = (
        "The function loops while the substring 'ab' is in text, swapping it. Here text is "
        "'xyz', so the loop never runs and f returns 'xyz'."
    )
    result = align_text(text, run(code, "f('xyz')"))
    assert result.first_divergence is None, result.first_divergence
    code = "def f(lst):\n    lst[1:4] = lst[1:4][::-1]\n    return lst"
    text = (
        "lst has 3 items, so the slice just stops at the end: lst[1:4] = [2, 3]. Reversed it is "
        "[3, 2], so lst becomes [1, 3, 2]. **Answer:** [1, 3, 2]"
    )
    result = align_text(text, run(code, "f([1, 2, 3])"))
    assert result.first_divergence is None, result.first_divergence
