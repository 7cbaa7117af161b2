"""The first wrong claim, not a later one: claim families whose slip used to go unjudged so that
a later claim (often the answer) was flagged instead. Each chain is written for the test in the
ways people and models phrase such steps, and each family is checked both ways: the slip is
found at its own words, a faithful wording raises nothing."""

from __future__ import annotations

from cruxtui.core.reasoning.alignment import Alignment, align_text
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire


def run(code: str, call: str) -> Trace:
    return from_wire(code, call, tracer.run(code, call))


def flagged(result: Alignment, text: str) -> str | None:
    div = result.first_divergence
    return None if div is None else text[div.claim.start : div.claim.end]


def quiet(text: str, tr: Trace) -> None:
    result = align_text(text, tr)
    assert result.first_divergence is None, result.first_divergence


# Conditions given a verdict in words -----------------------------------------------------------

PARITY = (
    "def f(word, mark):\n"
    "    letters = list(word)\n"
    "    if (letters.count(mark)) % 2 == 0:\n"
    "        letters.reverse()\n"
    "    else:\n"
    "        letters.pop()\n"
    "    return ''.join(letters)\n"
)


def test_the_if_condition_fails_is_the_codes_test_judged() -> None:
    tr = run(PARITY, "f('banana', 'x')")
    wrong = (
        "We split the word into letters; 'x' never occurs in 'banana', so the count is 0. "
        "The test is `letters.count(mark) % 2 == 0`. Zero counts as falsy, so the `if` "
        "condition fails and the last letter is popped. The result is 'banan'."
    )
    assert flagged(align_text(wrong, tr), wrong) == "the `if` condition fails"
    quiet(
        "The count of 'x' in the letters is 0, and 0 % 2 == 0, so the `if` condition holds and "
        "the letters are reversed. The result is 'ananab'.",
        tr,
    )


CHOP = "def f(s, tail):\n    while s.endswith(tail):\n        s = s[:-len(tail)]\n    return s\n"


def test_a_prefix_or_suffix_test_said_in_words() -> None:
    tr = run(CHOP, "f('oxoxo', 'xo')")
    wrong = (
        "First check: 'oxoxo' does end with 'xo', so two characters go and s becomes 'oxo'. "
        "Next check: 'oxo' doesn't end with 'xo', so we stop and return 'oxo'."
    )
    assert flagged(align_text(wrong, tr), wrong) == "'oxo' doesn't end with 'xo'"
    quiet(
        "'oxoxo' ends with 'xo', so s becomes 'oxo'; 'oxo' still ends with 'xo', so s becomes "
        "'o', and 'o' does not end with 'xo'. We return 'o'.",
        tr,
    )
    # Two bare words around "ends with" are prose, not a test of f's variables.
    quiet("The loop ends with s = 'o', which is returned.", tr)


WORDS = (
    "def f(items, target):\n"
    "    for w in items.split():\n"
    "        if w in target:\n"
    "            return items.index(w) + 1\n"
    "        if w.endswith('!'):\n"
    "            return 'loud'\n"
    "    return '.'\n"
)


def test_a_question_answered_at_the_end_of_the_next_sentence() -> None:
    tr = run(WORDS, "f('go! now', 'cargo!')")
    wrong = (
        "The first word is 'go!'. Is 'go!' in target? target is 'cargo!', and 'go!' is not "
        "among its words, so no. It ends with '!', so f returns 'loud'."
    )
    assert flagged(align_text(wrong, tr), wrong) == "and 'go!' is not among its words, so no"
    quiet(
        "The first word is 'go!'. Is 'go!' in target? target is 'cargo!', which has it as a "
        "substring, so yes. f returns items.index('go!') + 1 = 1.",
        tr,
    )


# Placement: a state-changing call in the iteration the chain names ------------------------------

DRAIN = (
    "def f(stock):\n"
    "    taken = []\n"
    "    while stock:\n"
    "        taken.append(stock.popitem())\n"
    "    return taken\n"
)


def test_a_pop_stated_for_the_first_iteration_is_the_first_pop() -> None:
    tr = run(DRAIN, "f({'a': 1, 'b': 2, 'c': 3})")
    wrong = (
        "taken starts as []. In the first iteration, stock.popitem() gives ('a', 1), so taken "
        "is [('a', 1)]. In the second iteration it gives ('b', 2). In the third iteration it "
        "gives ('c', 3). So f returns [('a', 1), ('b', 2), ('c', 3)]."
    )
    # ('a', 1) is popped in the end, but not in the iteration the chain names.
    assert flagged(align_text(wrong, tr), wrong) == "stock.popitem() gives ('a', 1)"
    quiet(
        "taken starts as []. In the first iteration, stock.popitem() gives ('c', 3), so taken "
        "is [('c', 3)]. In the second iteration it gives ('b', 2), and in the third ('a', 1). "
        "So f returns [('c', 3), ('b', 2), ('a', 1)].",
        tr,
    )


# Kinds of characters: which, and how many --------------------------------------------------------

CAPS = (
    "def f(s):\n"
    "    n = 0\n"
    "    for ch in s:\n"
    "        if ch.isupper():\n"
    "            n += 1\n"
    "    return n * 10\n"
)


def test_which_characters_are_of_a_kind() -> None:
    tr = run(CAPS, "f('HeLLo World')")
    wrong = "We go through the text. The uppercase letters are H and W, so n ends at 2; f gives 20."
    assert flagged(align_text(wrong, tr), wrong) == "The uppercase letters are H and W"
    heading = "Going letter by letter.\nCapitals: H, W.\nSo n is 2 and f returns 20."
    assert flagged(align_text(heading, tr), heading) == "Capitals: H, W"
    # Listed once each or at every occurrence, in any order: the same letters.
    quiet("The uppercase letters are W, L and H (L twice), so n ends at 4 and f returns 40.", tr)
    quiet("The uppercase letters are H, L, L and W, so f returns 40.", tr)
    # A part of the string narrowed in words, and items that are not of the kind: no listing.
    quiet("In the first word the uppercase letters are H and L. In all, f returns 40.", tr)
    quiet("The uppercase letters are a small matter here; f returns 40.", tr)


def test_how_many_characters_of_a_kind_a_string_has() -> None:
    tr = run(CAPS, "f('HeLLo World')")
    wrong = "The string has 3 uppercase letters, so f returns 30."
    assert flagged(align_text(wrong, tr), wrong) == "The string has 3 uppercase letters"
    literal = "'HeLLo World' has 3 capitals and 7 lowercase letters, so f returns 30."
    assert flagged(align_text(literal, tr), literal) == "'HeLLo World' has 3 capitals"
    quiet("The input has 4 uppercase letters and 1 space, so f returns 40.", tr)


# What a change puts into a variable, and "the slice" -------------------------------------------

GROW = (
    "def f(bag, extra):\n"
    "    if isinstance(extra, list):\n"
    "        for e in extra:\n"
    "            bag.extend(e)\n"
    "    else:\n"
    "        bag.extend(extra)\n"
    "    return len(bag)\n"
)


def test_a_value_said_to_be_added_is_in_the_variable_once_the_change_ran() -> None:
    tr = run(GROW, "f([0], 'hey')")
    wrong = (
        "extra is a string, so the else branch runs: bag.extend(extra) adds 'hey' to bag as "
        "one item, so bag is [0, 'hey'] and f returns 2."
    )
    assert flagged(align_text(wrong, tr), wrong) == "adds 'hey' to bag"
    quiet(
        "extra is a string, so the else branch runs: bag.extend(extra) adds 'h' to bag, then "
        "'e' and 'y', so bag is [0, 'h', 'e', 'y'] and f returns 4.",
        tr,
    )
    # A number added to a number is arithmetic: its membership test cannot run, no claim stands.
    counter = "def f(n):\n    total = 0\n    total += n\n    return total\n"
    quiet("The second line adds 5 to total, which is then 5; f returns 5.", run(counter, "f(5)"))


WINDOW = (
    "def f(text, width):\n"
    "    gap = width - len(text)\n"
    "    text = text.center(width, '.')\n"
    "    return text[:gap // 2:-gap // 2]\n"
)


def test_the_slice_is_the_codes_one_slice_where_the_code_takes_it() -> None:
    tr = run(WINDOW, "f('a', 9)")
    # Before the centring, 'a'[:4:-4] is empty; the slice is taken on the centred text.
    wrong = "gap = 8, the text becomes '....a....', and that slice is empty, so f returns ''."
    assert flagged(align_text(wrong, tr), wrong) == "that slice is empty"
    quiet("gap = 8, the text becomes '....a....', and the slice gives '.', which f returns.", tr)
    two = "def f(s):\n    return s[:2] + s[-2:]\n"
    quiet("The slice is 'zz', so f returns 'abyz'.", run(two, "f('abyz')"))


# Values introduced by their description ------------------------------------------------------

GRID = (
    "def f(rows):\n"
    "    rows.reverse()\n"
    "    out = []\n"
    "    for r in rows:\n"
    "        out.append(sorted(r))\n"
    "    return out\n"
)


def test_a_result_introduced_by_a_colon_after_its_noun() -> None:
    tr = run(GRID, "f([[3, 1], [2, 2]])")
    wrong = "It reverses the rows and sorts each. So it returns a new list with these rows: `[]`."
    got = flagged(align_text(wrong, tr), wrong) or ""
    assert got.startswith("it returns a new list with these rows: `[]"), got
    quiet("Reversed and sorted, it returns the following: [[2, 2], [1, 3]].", tr)


def test_the_type_of_the_one_argument_f_takes() -> None:
    swap = "def f(table):\n    return dict(zip(table.values(), table.keys()))\n"
    tr = run(swap, "f({1: 'x'})")
    wrong = "The function takes a list of numbers as input and sorts it, giving [1]."
    assert flagged(align_text(wrong, tr), wrong) == "The function takes a list of numbers as input"
    quiet("The function takes a dictionary as input and swaps keys and values: {'x': 1}.", tr)
    # With two parameters, which one "a list" is, is not said.
    pair = "def f(a, b):\n    return a + b\n"
    quiet("The function takes a list as input and adds the two; f returns 3.", run(pair, "f(1, 2)"))


STEP = "def f(s):\n    cut = s[:4:5]\n    return cut\n"


def test_an_expressions_value_written_out_after_its_description() -> None:
    tr = run(STEP, "f('abcdef')")
    wrong = "With a step of 5, s[:4:5] is the first four letters, 'abcd', so f returns 'abcd'."
    assert flagged(align_text(wrong, tr), wrong) == "s[:4:5] is the first four letters, 'abcd'"
    quiet("With a step of 5, s[:4:5] is just the first letter, 'a', so f returns 'a'.", tr)


# A premise of a verdict on a test: the state the test is decided on ---------------------------

RESET = (
    "def f(word, ch, times):\n"
    "    flag = ch\n"
    "    for _ in range(times):\n"
    "        if flag:\n"
    "            word, flag = word.replace(flag, '', 1), None\n"
    "            flag = ch\n"
    "    return word\n"
)


def test_a_value_given_as_the_reason_for_a_branch_is_the_state_at_the_test() -> None:
    tr = run(RESET, "f('banana', 'a', 2)")
    # flag is None for a moment inside the first iteration, but is 'a' again by the test of the
    # second: the writer's reason is wrong where the test is decided.
    wrong = (
        "In the first iteration flag is 'a', so one 'a' goes and flag is set to None. "
        "In the second iteration flag is None, so the `if` body is skipped. f returns 'bnana'."
    )
    assert flagged(align_text(wrong, tr), wrong) == "flag is None"
    quiet(
        "In the first iteration flag is 'a', so one 'a' goes, flag is set to None and then back "
        "to 'a'. In the second iteration flag is 'a', so the `if` body runs again and another "
        "'a' goes. f returns 'bnna'.",
        tr,
    )


def test_a_premise_that_is_not_the_codes_test_gets_no_verdict_of_its_own() -> None:
    code = "def f(xs):\n    out = 0\n    if xs:\n        out = len(xs)\n    return out\n"
    tr = run(code, "f([])")
    # "xs == []" is the reason, true; the branch verdict is about the code's `if xs:`.
    quiet("xs == [], so we skip the if block and f returns 0.", tr)
    wrong = "xs == [], so we enter the if block and f returns 1."
    assert flagged(align_text(wrong, tr), wrong) == "we enter the if"
