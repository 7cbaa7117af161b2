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


def test_a_wanted_state_is_the_target_not_the_runs_state() -> None:
    from cruxtui.core.reasoning.claim_judge import is_hypothetical

    # Reasoning backwards states what the run must reach, not what it has so far.
    assert is_hypothetical("We want out = [2, 4, 6] once the loop is over.")
    assert is_hypothetical("So we need text == 'ab' at the return.")
    assert is_hypothetical("The goal is count = 3.")
    # Work to do, and a variable that happens to be called target, are the run's.
    assert not is_hypothetical("We need to compute len(s) = 5 first.")
    assert not is_hypothetical("target is 'box.', so 'x.' is not in it.")
    assert not is_hypothetical("out = [2] after the first pass.")


# A call described by its arguments ----------------------------------------------------------

PLACE = "def f(items, where, what):\n    items.insert(where, what)\n    return items\n"


def test_what_an_insert_puts_where() -> None:
    tr = run(PLACE, "f(['a', 'b'], 0, 'z')")
    swapped = "The call inserts 0 at position 26, past the end, so it goes last: ['a', 'b', 0]."
    assert flagged(align_text(swapped, tr), swapped) == "inserts 0 at position 26"
    quiet("The call inserts 'z' at position 0, so the list is ['z', 'a', 'b'].", tr)
    # Where Python really puts it is what a writer may name: index 2 for one past the end.
    tr = run(PLACE, "f(['a', 'b'], 7, 'z')")
    quiet("items.insert(7, 'z') inserts 'z' at index 2, the end, giving ['a', 'b', 'z'].", tr)
    quiet("'z' is inserted at index 7, which is past the end: ['a', 'b', 'z'].", tr)
    tr = run(PLACE, "f(['a', 'b'], -1, 'z')")
    quiet("'z' goes in at position 1, before the last item: ['a', 'z', 'b'].", tr)


def test_a_line_worked_out_gives_the_variable_it_assigns_its_value() -> None:
    code = "def f(st, k):\n    st = st[k:]\n    n = len(st) + k\n    return st, n\n"
    tr = run(code, "f('abcdef', 2)")
    wrong = "First st = st[2:] = 'cde'. Then n = len(st) + k = 5, so f returns ('cde', 5)."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "st = st[2:] = 'cde'"
    assert result.first_divergence.true_value == "'cdef'"  # type: ignore[union-attr]
    quiet("First st = st[2:] = 'cdef'. Then n = len(st) + k = 4 + 2 = 6: ('cdef', 6).", tr)
    # An operand of a sum is not what the line assigns.
    quiet("First st = 'cdef'. Then n = len(st) + k = 4 + 2 = 6: ('cdef', 6).", tr)


ALTERNATE = (
    "def f(text):\n"
    "    out = ''\n"
    "    for i in range(len(text)):\n"
    "        if i % 3 == 0:\n"
    "            out += text[i].capitalize()\n"
    "        else:\n"
    "            out += text[i]\n"
    "    return out\n"
)


def test_the_places_at_which_a_call_is_made() -> None:
    tr = run(ALTERNATE, "f('abcdefg')")
    wrong = "Counting from one, positions 1, 4 and 7 get capitalized, so f gives 'aBcdEfg'."
    assert flagged(align_text(wrong, tr), wrong) == "positions 1, 4 and 7 get capitalized"
    quiet("Counting from zero, positions 0, 3 and 6 get capitalized, so f gives 'AbcDefG'.", tr)
    # A few places named, meaning "and so on", are not a claim that there are no others.
    quiet("Indices 0 and 3 are capitalized, and so on, so f gives 'AbcDefG'.", tr)


# Judged alike however loaded the machine is ------------------------------------------------------


def test_an_evaluation_is_budgeted_in_cpu_time_with_a_wall_clock_backstop() -> None:
    import time

    from cruxtui.core.sandbox.jobs import claim_eval

    began = time.monotonic()
    out = claim_eval.evaluate(
        {
            "exprs": ["sum(i for i in range(10 ** 9))", "__import__('time').sleep(30)", "len(s)"],
            "states": [{"s": "'abc'"}],
            "pairs": [[0, 0], [1, 0], [2, 0]],
            "budget": 0.05,
        }
    )
    assert out[0] == ["error", "timeout"]  # computing: stopped by its CPU budget
    assert out[1] == ["error", "timeout"]  # waiting: stopped by the wall-clock backstop
    assert out[2] == ["ok", "3"]
    assert time.monotonic() - began < 5


def test_a_sandbox_call_out_of_time_is_made_again_in_halves() -> None:
    from cruxtui.core.reasoning import frame_eval
    from cruxtui.core.sandbox.jobs import claim_eval
    from cruxtui.core.sandbox.pool import Outcome

    class Loaded:
        """A sandbox on a machine so loaded that a call of more than two pairs runs out of
        time (load cannot be made to order in a test); smaller calls run the real job."""

        calls: list[int] = []

        def run(self, job: str, payload: dict) -> Outcome:  # type: ignore[type-arg]
            self.calls.append(len(payload["pairs"]))
            if len(payload["pairs"]) > 2:
                return Outcome("timeout", None, "wall clock", 3.0)
            return Outcome("ok", claim_eval.evaluate(payload), "", 0.1)

    box = Loaded()
    got = frame_eval._run(
        ["len(s)", "s.upper()", "s[::-1]", "s * 2"],
        [{"s": "'ab'"}],
        [[0, 0], [1, 0], [2, 0], [3, 0]],
        box,
    )
    assert got == [("ok", "2"), ("ok", "'AB'"), ("ok", "'ba'"), ("ok", "'abab'")]
    assert box.calls == [4, 2, 2]
    # Once only: a call still out of time in halves leaves those pairs unknown.
    box.calls.clear()
    many = [[0, 0]] * 6
    got = frame_eval._run(["len(s)"], [{"s": "'ab'"}], many, box)
    assert all(status == "error" for status, _ in got)
    assert box.calls == [6, 3, 3]


SEARCH = (
    "def f(word):\n"
    "    at = word.find('o', word.find('o') + 1)\n"
    "    return word[:at] if at > 0 else word\n"
)


def test_a_search_reported_by_where_it_finds_its_item() -> None:
    tr = run(SEARCH, "f('foolproof')")
    wrong = (
        "The inner find gives 1, so next comes word.find('o', 2). Searching from there, it "
        "finds the 'o' at index 6. So f returns 'foolpr'."
    )
    assert flagged(align_text(wrong, tr), wrong) == "finds the 'o' at index 6"
    quiet(
        "The inner find gives 1, so next comes word.find('o', 2). Searching from there, it "
        "finds the 'o' at index 2. So f returns 'fo'.",
        tr,
    )
    # A search written for another item says nothing of where this one is found.
    quiet("We run word.find('l', 2) in our heads; it finds the 'o' at index 9. f returns 'fo'.", tr)


SPREAD = (
    "def f(src):\n"
    "    out = list(src)\n"
    "    for i in range(len(src) // 2):\n"
    "        out[i + 2] = src[i]\n"
    "    return out\n"
)


def test_a_change_stated_for_one_place_that_the_program_made_at_another() -> None:
    tr = run(SPREAD, "f(['p', 'q', 'p', 'q'])")
    # out[0] already holds 'p', so reading "out[0] is 'p'" as a state would agree: the chain
    # says the loop's write went there, and the program wrote out[2].
    wrong = (
        "out starts as ['p', 'q', 'p', 'q']. In the first iteration i is 0, so out[0] is set "
        "to 'p'. In the second iteration i is 1 and out[1] is set to 'q'. f returns "
        "['p', 'q', 'p', 'q']."
    )
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "out[0] is set to 'p'"
    assert result.first_divergence.true_value == "out[2]"  # type: ignore[union-attr]
    quiet(
        "out starts as ['p', 'q', 'p', 'q']. In the first iteration i is 0, so out[2] is set "
        "to 'p'. In the second iteration i is 1 and out[3] is set to 'q'. f returns "
        "['p', 'q', 'p', 'q'].",
        tr,
    )
    # A state of the place, not a change of it, is judged as a state.
    quiet("In the first iteration i is 0; out[0] is 'p' all along. f returns the list as is.", tr)
