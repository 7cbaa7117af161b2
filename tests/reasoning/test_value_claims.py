"""Values first: claim families whose stated value is held against what the program computed
where the chain puts it. Every chain here is written for the test, in the ways people and
models phrase such steps; each family is checked both ways (a slip is found at its own words, a
faithful wording raises nothing)."""

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


# Phases ----------------------------------------------------------------------------------------

NESTED = (
    "def f(xs):\n"
    "    seen = [0, 0, 0]\n"
    "    for x in xs: seen[x] += 1\n"
    "    out = []\n"
    "    for j in range(3):\n"
    "        while seen[j] > 0:\n"
    "            seen[j] -= 1\n"
    "            out.append(j)\n"
    "    return seen, out\n"
)


def test_after_the_second_loop_is_its_own_end_not_an_inner_loops() -> None:
    """The inner `while` ends once per outer pass; "after the second loop" is when the `for j`
    loop is left, by which time every count has been drained."""
    tr = run(NESTED, "f([2, 0, 2])")
    wrong = (
        "Counting first: seen = [1, 0, 2]. The second loop drains the counts into out, and "
        "after the second loop seen is still [1, 0, 2] because we only read it."
    )
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "seen is still [1, 0, 2]"
    assert result.first_divergence.true_value == "[0, 0, 0]"  # type: ignore[union-attr]
    quiet("seen = [1, 0, 2] once counted; after the second loop seen is [0, 0, 0].", tr)


def test_a_value_before_the_loop_stops_speaks_of_the_last_check() -> None:
    """ "x is 1, and 1 > 0 is False, so the loop stops": the stop is the chain's conclusion; the
    value before it is the state it concluded from, and the slip is the comparison."""
    code = "def f(d):\n    out = []\n    while len(d) > 0:\n        out.append(d.popitem())\n    return out"
    tr = run(code, "f({1: 'a', 2: 'b', 3: 'c'})")
    wrong = (
        "Two items are popped: out gets (3, 'c') and then (2, 'b'). Now one key is left, so "
        "len(d) is 1, and 1 > 0 is False, so the loop stops."
    )
    assert "1 > 0 is False" in (flagged(align_text(wrong, tr), wrong) or "")


# Types named with the value ----------------------------------------------------------------------

STR_ARG = (
    "def f(items, want):\n"
    "    want = str(want)\n"
    "    hits = 0\n"
    "    for item in items:\n"
    "        if str(item) == want:\n"
    "            hits += 1\n"
    "    return hits\n"
)


def test_the_int_2_is_not_the_string_2_while_the_loop_runs() -> None:
    tr = run(STR_ARG, "f([3, 2, 2], 2)")
    wrong = (
        "Inside the loop want is still the int 2, so no string can ever equal it and hits stays 0."
    )
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "want is still the int 2"
    assert result.first_divergence.true_value == "'2'"  # type: ignore[union-attr]
    quiet("want is now the string '2' when the loop runs, and hits ends at 2.", tr)
    quiet("At the call want is the number 2; the first line turns it into '2'.", tr)


# Expressions written tightly, and the verbs that state a result ---------------------------------


def test_an_expression_written_without_spaces_is_a_subject() -> None:
    code = "def f(word, pad):\n    return word.center(len(word) + 2, pad*2)\n"
    tr = run(code, "f('ab', '*')")
    wrong = "Here pad*2 is just '*', one star, so the word gets a star each side."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "pad*2 is just '*'"
    assert result.first_divergence.true_value == "'**'"  # type: ignore[union-attr]
    quiet("Doubling it, pad*2 is '**', and len(word)+2 is 4.", tr)


def test_a_slice_that_leaves_a_value() -> None:
    code = "def f(s, k):\n    s = '#' + s\n    return s[k:]\n"
    tr = run(code, "f('tail', 2)")
    wrong = "With the marker s is '#tail'; cutting two off the front, s[2:] leaves 'tail'."
    assert flagged(align_text(wrong, tr), wrong) == "s[2:] leaves 'tail'"
    quiet("With the marker s is '#tail'; cutting two off the front, s[2:] leaves 'ail'.", tr)


# Loops and ranges --------------------------------------------------------------------------------

TWO_LOOPS = (
    "def f(a):\n"
    "    for i in range(1):\n"
    "        a[i] = 0\n"
    "    for i in range(len(a), len(a), 2):\n"
    "        a[i - 1] = 9\n"
    "    return a\n"
)


def test_what_a_range_yields_is_judged_by_its_numbers() -> None:
    """Two loops bind `i`; the range the chain writes says by itself which numbers it gives."""
    tr = run(TWO_LOOPS, "f([5, 6])")
    wrong = "The second loop goes over range(2, 2, 2), which yields i = 2 once, so a[1] becomes 9."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "range(2, 2, 2), which yields i = 2 once"
    assert result.first_divergence.true_value == "[]"  # type: ignore[union-attr]
    quiet("The second loop goes over range(2, 2, 2), which is empty, so a stays [0, 6].", tr)
    wrong = "Next, range(0, 2, 2), which is empty, swaps nothing."
    assert flagged(align_text(wrong, tr), wrong) == "range(0, 2, 2), which is empty"


def test_a_span_written_with_two_dots_is_not_its_first_number() -> None:
    code = "def f(skip):\n    return [c for c in range(1, 6) if c != skip]\n"
    quiet("range(1, 6) is 1..5, and every c but 3 is kept, giving [1, 2, 4, 5].", run(code, "f(3)"))


# Counts of what was just written -------------------------------------------------------------------


def test_thats_n_items_counts_the_value_just_written() -> None:
    code = "def f(a, b):\n    xs = list(range(a, b))\n    return len(xs)\n"
    tr = run(code, "f(2, 9)")
    wrong = "xs = list(range(2, 9)) = [2, 3, 4, 5, 6, 7, 8], that's 6 numbers, so f gives 6."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "that's 6 numbers"
    assert result.first_divergence.true_value == "7"  # type: ignore[union-attr]
    quiet("xs = list(range(2, 9)) = [2, 3, 4, 5, 6, 7, 8], that's 7 numbers.", tr)
    code = "def f(w):\n    letters = list(w)\n    return letters\n"
    tr = run(code, "f('parallel')")
    wrong = "letters = list('parallel'), that is 7 letters."
    assert flagged(align_text(wrong, tr), wrong) == "that is 7 letters"
    quiet("letters = list('parallel') - that's 8 characters.", tr)


# A method named by itself -------------------------------------------------------------------------


def test_a_bare_method_name_speaks_of_the_codes_one_call() -> None:
    code = "def f(line, sep):\n    return line.rsplit(sep, 1)\n"
    tr = run(code, "f('k=v=w', '=')")
    wrong = "Splitting from the right with rsplit and a limit of one, which gives ['k', 'v=w']."
    result = align_text(wrong, tr)
    assert (flagged(result, wrong) or "").startswith("rsplit")
    assert result.first_divergence.true_value == "['k=v', 'w']"  # type: ignore[union-attr]
    quiet("Splitting from the right with rsplit and a limit of one, which gives ['k=v', 'w'].", tr)
    code = "def f(s):\n    if s.isupper():\n        return s.lower()\n    return s\n"
    tr = run(code, "f('')")
    wrong = "An empty string has no letters, yet I would say isupper is True here."
    assert flagged(align_text(wrong, tr), wrong) == "isupper is True"
    quiet("An empty string has no cased letters, so isupper is False and s comes back.", tr)


def test_a_method_name_with_another_subject_between_claims_nothing() -> None:
    """ "strip, then the join with out, giving ..." names two subjects: which one gave the value
    is not said, so nothing is contradicted."""
    code = "def f(s):\n    out = s.strip()\n    return '-'.join(out)\n"
    tr = run(code, "f(' ab ')")
    quiet("We strip the spaces and join out with dashes, giving 'a-b'.", tr)
    quiet("We strip, then join with dashes, giving 'a-b'.", tr)


def test_a_member_of_a_popped_pair_is_what_the_writer_names() -> None:
    code = "def f(d):\n    k, v = d.popitem()\n    return k\n"
    tr = run(code, "f({'a': 1, 'z': 2})")
    quiet("popitem() gives 'z', the last key inserted, and f returns it: 'z'.", tr)
    wrong = "popitem() gives 'a', the first key, and f returns 'a'."
    assert flagged(align_text(wrong, tr), wrong) == "popitem() gives 'a'"


# Expressions over the frame worked out with spaces ------------------------------------------------


def test_an_expression_over_the_frame_worked_out_with_spaces() -> None:
    code = "def f(xs, k):\n    last = xs[len(xs) - 1]\n    return last * k\n"
    tr = run(code, "f([3, 8, 5], 2)")
    wrong = "The list has three items, so len(xs) - 1 = 3 and the last one is picked."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "len(xs) - 1 = 3"
    assert result.first_divergence.true_value == "2"  # type: ignore[union-attr]
    quiet("len(xs) - 1 = 2, xs[len(xs) - 1] = 5, and last * k → 10.", tr)
    # The right-hand side of a stated assignment is the variable's value, read as a binding.
    quiet("last = xs[len(xs) - 1] = 5.", tr)


def test_lengths_and_counts_said_in_words() -> None:
    code = "def f(seq, v):\n    n = seq.count(v)\n    return n, len(seq)\n"
    tr = run(code, "f([7, 1, 7, 7], 7)")
    for wrong, words in (
        ("The length of seq is 3, so the pair ends with 3.", "The length of seq is 3"),
        ("The count of 7 is 2 here.", "The count of 7 is 2"),
        ("Looking through it, 7 occurs twice.", "7 occurs twice"),
        ("the number of items in seq is 5.", "the number of items in seq is 5"),
    ):
        assert flagged(align_text(wrong, tr), wrong) == words, wrong
    quiet("The length of seq is 4 and the number of 7s is 3: 7 appears three times.", tr)


def test_how_many_times_a_written_range_runs() -> None:
    code = (
        "def f(a, b):\n    for k in range(0, len(a) + len(b)):\n        a += a[0]\n    return a\n"
    )
    tr = run(code, "f('ab', 'c')")
    wrong = "So `range(0, len(a) + len(b))` runs 4 times, adding 'a' each time."
    assert flagged(align_text(wrong, tr), wrong) == "`range(0, len(a) + len(b))` runs 4 times"
    quiet("So `range(0, len(a) + len(b))` runs 3 times, adding 'a' each time.", tr)


# "The condition" speaks of the test the chain quoted --------------------------------------------

GUARD = (
    "def f(s, n):\n"
    "    if n < 0 or len(s) <= n:\n"
    "        return s\n"
    "    i = n\n"
    "    while i > 0:\n"
    "        i -= 1\n"
    "    return s[:n]\n"
)


def test_an_unnamed_condition_is_the_test_quoted_just_before() -> None:
    tr = run(GUARD, "f('xy', -2)")
    wrong = (
        "We start at: if n < 0 or len(s) <= n. Here n < 0 holds. The length is 2 and 2 <= -2 "
        "fails. One part yes, one part no... so the condition is False, and we go on."
    )
    result = align_text(wrong, tr)
    assert "the condition is False" in (flagged(result, wrong) or "")
    quiet(
        "We start at: if n < 0 or len(s) <= n. Here n < 0 holds, so the condition is True "
        "and s comes back unchanged: 'xy'.",
        tr,
    )


def test_worked_arithmetic_said_with_is() -> None:
    code = "def f(n):\n    return [k for k in range(1, 6) if k % n == 0]\n"
    tr = run(code, "f(2)")
    wrong = "Going through: 1 % 2 is 1, 2 % 2 is 0 so 2 is kept, 3 % 2 is 0 so 3 is kept too."
    assert flagged(align_text(wrong, tr), wrong) == "3 % 2 is 0"
    quiet("Going through: 1 % 2 is 1, 2 % 2 is 0 so 2 is kept, 3 % 2 is 1, 4 % 2 is 0.", tr)


def test_worked_arithmetic_after_a_word() -> None:
    """ "each key gets 4 * 3 = 13": a sum worked out in prose, whatever word comes before it."""
    code = "def f(keys, v):\n    return {k: v * 3 for k in keys}\n"
    tr = run(code, "f(['a', 'b'], 4)")
    wrong = "Both keys get 4 * 3 = 13, so the dict maps each to 13."
    assert flagged(align_text(wrong, tr), wrong) == "4 * 3 = 13"
    quiet("Both keys get 4 * 3 = 12, so f returns {'a': 12, 'b': 12}.", tr)


def test_a_test_asked_and_answered() -> None:
    """ "Is X? No." across two sentences is the condition X claimed False."""
    code = "def f(s):\n    hits = 0\n    if s[0] in s[1:]:\n        hits += 1\n    return hits\n"
    tr = run(code, "f('abca')")
    wrong = "s[0] is 'a'. Is 'a' in s[1:]? No, so hits stays 0."
    result = align_text(wrong, tr)
    assert (flagged(result, wrong) or "").startswith("Is 'a' in s[1:]?")
    assert result.first_divergence.true_value == "True"  # type: ignore[union-attr]
    quiet("s[0] is 'a'. Is 'a' in s[1:]? Yes, the last letter, so hits becomes 1.", tr)


def test_a_range_followed_by_the_numbers_it_gives() -> None:
    code = "def f(xs):\n    for i in range(len(xs) - 1, 0, -2):\n        xs[i] = 0\n    return xs\n"
    tr = run(code, "f([1, 2, 3, 4, 5, 6, 7])")
    wrong = "i runs over range(6, 0, -2): 6, 4, 2, 0, zeroing those places."
    assert "range(6, 0, -2)" in (flagged(align_text(wrong, tr), wrong) or "")
    quiet("i runs over range(6, 0, -2): 6, 4, 2, zeroing those places.", tr)


def test_what_follows_a_stated_pop_sees_the_popped_list() -> None:
    """ "pop(0) removes 'x'" said rightly pins the chain after that call: a later index over the
    list is judged on the shorter list, not on the one before the pop."""
    code = "def f(s):\n    parts = s.split('-')\n    parts.pop(0)\n    return parts.index('b')\n"
    tr = run(code, "f('x-a-b')")
    wrong = "parts = ['x', 'a', 'b']. pop(0) removes 'x'. parts.index('b') is 2."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "parts.index('b') is 2"
    assert result.first_divergence.true_value == "1"  # type: ignore[union-attr]
    quiet("parts = ['x', 'a', 'b']. pop(0) removes 'x'. parts.index('b') is 1.", tr)


def test_a_written_call_and_what_it_leaves() -> None:
    code = "def f(t, xs):\n    xs.remove(2)\n    return t.strip(), xs\n"
    tr = run(code, "f(' \\t ', [2, 1, 2])")
    wrong = "t.strip() takes off the spaces on both ends, leaving '\\t'."
    result = align_text(wrong, tr)
    assert (flagged(result, wrong) or "").startswith("t.strip()")
    assert result.first_divergence.true_value == "''"  # type: ignore[union-attr]
    quiet("t.strip() takes off all the whitespace on both ends, leaving ''.", tr)
    # After a call that changes its receiver, what is left is the receiver.
    wrong = "xs.remove(2) drops the last 2, leaving [2, 1]."
    assert (flagged(align_text(wrong, tr), wrong) or "").startswith("xs.remove(2)")
    quiet("xs.remove(2) drops the first 2, leaving [1, 2].", tr)


def test_a_value_then_compared_is_the_expressions_and_a_test_restated_is_the_tests() -> None:
    code = "def f(w):\n    ls = list(w)\n    ls.pop(0)\n    return len(ls) * 2 > len(w) and w[3:] == 'q'\n"
    tr = run(code, "f('flak')")
    quiet("len(ls) * 2 = 6 > 4 → True, and w[3:] == 'q' → 'k' == 'q' → False.", tr)
    wrong = "ls = ['l', 'a', 'k'], so len(ls) * 2 = 8 > 4 → True."
    assert flagged(align_text(wrong, tr), wrong) == "len(ls) * 2 = 8"


def test_states_between_two_changes_on_one_line_are_not_contradicted() -> None:
    """`xs.insert(i, xs.pop(0) + xs.pop(0))`: the second pop sees the list the first left, and
    the list between the pops and the insert is never a traced state."""
    code = "def f(xs):\n    xs.insert(1, xs.pop(0) + xs.pop(0))\n    return xs\n"
    tr = run(code, "f([4, 5, 6, 7])")
    quiet(
        "xs.pop(0) is 4, then xs.pop(0) is 5, so the sum is 9. xs is now [6, 7], and inserting "
        "9 at index 1 gives xs = [6, 9, 7].",
        tr,
    )
    wrong = "The sum is 9 and inserting it at index 1 gives xs = [9, 6, 7]."
    assert flagged(align_text(wrong, tr), wrong) == "xs = [9, 6, 7]"


def test_what_sits_at_the_even_or_odd_places() -> None:
    code = (
        "def f(w):\n    return ''.join(c.upper() if i % 2 == 0 else c for i, c in enumerate(w))\n"
    )
    tr = run(code, "f('abcdef')")
    wrong = "In 'abcdef' the letters at even indices are b, d and f, so those go upper case."
    result = align_text(wrong, tr)
    assert (flagged(result, wrong) or "").startswith("In 'abcdef' the letters at even indices")
    assert result.first_divergence.true_value == "['a', 'c', 'e']"  # type: ignore[union-attr]
    quiet("The letters at odd positions are b, d and f; they stay as they are.", tr)


def test_a_variable_named_as_a_plain_noun_after_a_quantity_is_no_binding() -> None:
    """ "the count of title words is 2" states a count, not that `words` is 2."""
    code = "def f(text):\n    words = text.split()\n    return sum(w.istitle() for w in words)\n"
    quiet(
        "text.split() gives ['Ab', 'cd', 'Ef']. The count of title words is 2.",
        run(code, "f('Ab cd Ef')"),
    )


def test_a_range_listed_item_by_item_is_not_its_first_number() -> None:
    code = "def f(a):\n    for i in range(len(a)):\n        a[i] *= 2\n    return a\n"
    tr = run(code, "f([1, 2, 3])")
    quiet("range(len(a)) gives 0, 1, 2, so the loop runs 3 times and a = [2, 4, 6].", tr)
    wrong = "range(len(a)) gives 0, 1, 2, 3, so every item is doubled."
    assert (flagged(align_text(wrong, tr), wrong) or "").startswith("range(len(a)) gives")


# Tables drop the quotes of short strings --------------------------------------------------------


def test_a_bare_digit_in_a_table_column_of_characters_is_that_character() -> None:
    """A column of characters reads a, b, 1: the `1` is the string '1' written bare (whatever the
    chain's answer); a cell that gives another value is still a slip."""
    code = "def f(s):\n    n = 0\n    for ch in s:\n        if ch.isdigit():\n            n += int(ch)\n    return n\n"
    tr = run(code, "f('x7y')")
    table = "| ch | n |\n|---|---|\n| x | 0 |\n| 7 | 7 |\n| y | 7 |\n\nn ends at 7."
    quiet(table, tr)
    wrong = "| ch | n |\n|---|---|\n| x | 0 |\n| 8 | 8 |\n| y | 8 |\n\nn ends at 8."
    assert flagged(align_text(wrong, tr), wrong) == "8"


def test_a_value_before_an_arrow_to_a_verdict_is_stated() -> None:
    """Trace notation: "b[1] = 'q' → equal → go on": the arrow leads to the chain's verdict on
    the value, so the value before it is stated."""
    code = "def f(a, b):\n    n = 0\n    while n < len(a) and a[n] == b[n]:\n        n += 1\n    return n\n"
    tr = run(code, "f('xyz', 'xqz')")
    wrong = "- n = 0: a[0] = 'x', b[0] = 'x' → equal\n- n = 1: a[1] = 'y', b[1] = 'y' → equal\n"
    assert flagged(align_text(wrong, tr), wrong) == "b[1] = 'y'"
    quiet("- n = 0: a[0] = 'x', b[0] = 'x' → equal\n- n = 1: b[1] = 'q' → differs, stop", tr)
