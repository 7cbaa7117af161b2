"""Each family of claims, written in free prose as people and models write it, judged against a
real trace: expressions over the frame, iterations, phases, code that is not a claim,
self-corrections, answers in their usual forms, and subjects that must not be misread."""

from __future__ import annotations

import json
import subprocess
import sys

from cruxtui.core.reasoning.alignment import (
    CONSISTENT,
    UNVERIFIABLE,
    Alignment,
    align_text,
)
from cruxtui.core.sandbox.jobs import claim_eval, tracer
from cruxtui.core.trace.steps import Trace, from_wire
from tests.conftest import CRUXEVAL_JSONL, REPO


def run(code: str, call: str) -> Trace:
    return from_wire(code, call, tracer.run(code, call))


def verdicts(result: Alignment) -> list[tuple[str, str, str]]:
    return [(j.claim.kind, j.claim.value, j.verdict) for j in result.judgements]


def flagged(result: Alignment, text: str) -> str | None:
    """The words of the first divergence, as a reader would find them in the chain."""
    div = result.first_divergence
    return None if div is None else text[div.claim.start : div.claim.end]


COUNTS = (
    "def f(nums, text):\n"
    "    c = nums.count(1)\n"
    "    tail = text[-1:]\n"
    "    idx = text.rfind('i')\n"
    "    return c, tail, idx, text[5:8]"
)


# Expressions over the frame --------------------------------------------------------------------


def test_expressions_are_evaluated_on_the_state_they_speak_of() -> None:
    tr = run(COUNTS, "f([1, 2, 1, 1], 'ab c ')")
    right = (
        "First, nums.count(1) returns 3, so c = 3. The last character: text[-1:] is ' '. "
        "text.rfind('i') gives -1 because there is no i, and s[5:8]... I mean text[5:8] is empty."
    )
    result = align_text(right, tr)
    assert result.first_divergence is None, result.first_divergence
    kinds = [k for k, _, v in verdicts(result) if v == CONSISTENT]
    assert kinds.count("expression") >= 4
    wrong = "nums.count(1) returns 2, so c = 2."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "nums.count(1) returns 2"
    assert result.first_divergence.true_value == "3"  # type: ignore[union-attr]


def test_a_method_written_without_its_receiver_takes_the_codes() -> None:
    code = "def f(text):\n    i = text.index('C')\n    return i"
    tr = run(code, "f('abcdCe')")
    wrong = "Scanning for the capital, index('C') is 3, so i = 3 and f returns 3."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "index('C') is 3"
    assert result.first_divergence.claim.name == "text.index('C')"  # type: ignore[union-attr]
    assert result.first_divergence.true_value == "4"  # type: ignore[union-attr]
    assert align_text("index('C') is 4 here, so i = 4.", tr).first_divergence is None


def test_a_claimed_popitem_does_not_change_what_later_claims_see() -> None:
    """Expressions run on copies: a claimed `d.popitem()` gives ('k', 1) and d is still whole."""
    code = "def f(d):\n    size = len(d)\n    return size"
    chain = "d.popitem() gives ('k', 1). len(d) is 2, and f returns 2."
    result = align_text(chain, run(code, "f({'a': 0, 'k': 1})"))
    assert result.first_divergence is None, result.first_divergence
    assert [v for _, _, v in verdicts(result)] == [CONSISTENT] * 3


def test_subscripts_of_dicts_and_lists_and_conditions_over_the_frame() -> None:
    code = (
        "def f(s):\n"
        "    counts = {}\n"
        "    for ch in s:\n"
        "        counts[ch] = counts.get(ch, 0) + 1\n"
        "    temp = [counts[k] for k in sorted(counts)]\n"
        "    return temp"
    )
    tr = run(code, "f('7a7')")
    assert align_text("At the end counts['7'] is 2 and temp[0] is 2.", tr).first_divergence is None
    wrong = "At the end counts['7'] is 1."
    assert flagged(align_text(wrong, tr), wrong) == "counts['7'] is 1"
    cond = "In the first iteration, ch.isdigit() is False."
    assert flagged(align_text(cond, tr), cond) == "ch.isdigit() is False"


def test_the_sandbox_job_works_on_copies_and_contains_failures() -> None:
    out = claim_eval.evaluate(
        {
            "exprs": ["d.popitem()", "len(d)", "1/0", "'a' * 10 ** 12"],
            "states": [{"d": "{'k': 1, 'j': 2}"}],
            "pairs": [[0, 0], [1, 0], [2, 0], [3, 0]],
            "budget": 0.5,
        }
    )
    assert out[0] == ["ok", "('j', 2)"] and out[1] == ["ok", "2"]
    assert out[2][0] == "error" and out[3][0] == "error"


# Iterations --------------------------------------------------------------------------------------


LOOP = "def f(n):\n    total = 0\n    for k in range(1, n):\n        total += k\n    return total"


def test_the_values_a_loop_variable_takes_and_how_often_it_runs() -> None:
    tr = run(LOOP, "f(3)")
    right = "k takes the values 1 and 2, so the loop runs 2 times and total ends at 3."
    assert align_text(right, tr).first_divergence is None
    wrong = "Here k takes the values 0, 1 and 2."
    assert flagged(align_text(wrong, tr), wrong) == "k takes the values 0, 1 and 2"
    times = "The loop runs 3 times."
    assert align_text(times, tr).first_divergence.true_value == "2"  # type: ignore[union-attr]
    assert (
        align_text("range(1, 11) gives 1..10, and range(1, n) gives 1, 2.", tr).first_divergence
        is None
    )
    ranged = "Here range(1, n) gives 1, 2, 3."
    assert flagged(align_text(ranged, tr), ranged) == "range(1, n) gives 1, 2, 3"
    named = "The loop goes for k = 1 and k = 2."
    assert align_text(named, tr).first_divergence is None


# Phases ------------------------------------------------------------------------------------------


def test_a_value_claimed_for_the_end_of_a_loop_is_judged_there() -> None:
    """total is 1 in the middle of the loop: claiming it for after the loop is still wrong."""
    tr = run(LOOP, "f(4)")
    wrong = "In the first iteration total becomes 1. After the loop, total is 1."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "total is 1"
    assert result.first_divergence.true_value == "6"  # type: ignore[union-attr]
    right = "In the first iteration total becomes 1. After the loop, total is 6."
    assert align_text(right, tr).first_divergence is None
    final = "Finally, total is 6, and that is returned."
    assert align_text(final, tr).first_divergence is None


def test_a_value_checked_at_the_step_the_chain_places_it() -> None:
    code = "def f(orig):\n    new = orig\n    new.append(4)\n    return orig"
    chain = "new = orig points to the same list; after the append, orig is still [1, 2, 3]."
    result = align_text(chain, run(code, "f([1, 2, 3])"))
    assert flagged(result, chain) == "orig is still [1, 2, 3]"


# Code is not a claim -----------------------------------------------------------------------------


def test_code_in_a_chain_is_never_a_claim() -> None:
    code = (
        "def f(text, lower=None):\n    out = [c for c in text if c != ' ']\n    return ''.join(out)"
    )
    tr = run(code, "f('a b')")
    chain = (
        "Let me rewrite the function:\n"
        "```python\n"
        "def f(text, lower=None):\n"
        "    out = []\n"
        "    for c in text:\n"
        "        if c != ' ':\n"
        "            out.append(c)\n"
        "    return ''.join(out)\n"
        "```\n"
        "The line `return ''.join(out)` joins the characters.\n"
        "    return True\n"
        "def f(text, lower=None):\n"
        "assert f('a b') == ??\n"
        "So out = ['a', 'b'] and the answer is 'ab'."
    )
    result = align_text(chain, tr)
    assert result.first_divergence is None, result.first_divergence
    assert not any(j.claim.name == "lower" for j in result.judgements)
    assert not any(j.claim.value in ("''", "True", "None") for j in result.judgements)
    narrated = "So out = ['a'] and the join gives 'a'."  # a narrated "x = 5" is still a claim: out is built at once
    assert flagged(align_text(narrated, tr), narrated) == "out = ['a']"


def test_a_fenced_trace_table_is_read_but_fenced_python_is_not() -> None:
    code = "def f(text, width):\n    return '\\n'.join(line.center(width) for line in text.split('\\n'))"
    tr = run(code, "f('a\\nbc', 5)")
    chain = "```\nline  -> line.center(5)\n'a'   -> '  a  '\n'bc'  -> ' bc  '\n```\n"
    result = align_text(chain, tr)
    assert flagged(result, chain) == "' bc  '"
    assert result.first_divergence.true_value == "'  bc '"  # type: ignore[union-attr]


# Self-corrections --------------------------------------------------------------------------------


def test_a_self_correction_retracts_what_it_corrects() -> None:
    tr = run(LOOP, "f(3)")
    corrected = "total becomes 2 in the first iteration. Wait, actually total becomes 1 there."
    result = align_text(corrected, tr)
    assert result.first_divergence is None
    assert [j.verdict for j in result.judgements if j.claim.retracted] == [UNVERIFIABLE]
    outright = "After the loop total is 4. No wait, that's wrong. After the loop total is 3."
    assert align_text(outright, tr).first_divergence is None
    rechecked = "After the loop total is 4. Let me double-check: after the loop total is 4."
    result = align_text(rechecked, tr)
    assert flagged(result, rechecked) == "total is 4"
    assert result.first_divergence.claim.start < 30  # type: ignore[union-attr]


# Answers -----------------------------------------------------------------------------------------


def test_answers_in_their_usual_forms() -> None:
    tr = run(LOOP, "f(3)")
    for text in (
        "**Answer:** 4",
        "The output is 4.",
        "[ANSWER]\nassert f(3) == 4\n[/ANSWER]",
        "<think>k is 1 then 2.</think>\nf(3) returns 4.",
        "The sum is computed, giving 4. That number is returned.",
        "So f(3) == 4.",
    ):
        result = align_text(text, tr)
        assert result.first_divergence is not None, text
        assert result.first_divergence.true_value == "3", text
    assert align_text("**Answer:** 3", tr).first_divergence is None


def test_the_fstring_gives_the_result_when_f_returns_an_fstring() -> None:
    code = "def f(a, b):\n    return f'{a}-{b}'"
    tr = run(code, "f(1, 2)")
    assert align_text("The f-string gives '1-2'.", tr).first_divergence is None
    assert align_text("The f-string gives '1_2'.", tr).first_divergence is not None


# Subjects that must not be misread ---------------------------------------------------------------


def test_words_around_a_name_decide_whether_it_is_the_subject() -> None:
    code = (
        "def f(nums, const, place, count, arr, n):\n"
        "    nums.sort()\n"
        "    nums.append(const)\n"
        "    m = n + arr\n"
        "    return nums, m"
    )
    tr = run(code, "f([3, 1], 9, 0, 4, [2], [1])")
    for chain in (
        "The code sorts the list in place: [1, 3].",
        "nums is not empty and count % 2 == 0, so we go on.",
        "m = n + arr = [1, 2].",
        "Then append const -> [1, 3, 9].",
    ):
        result = align_text(chain, tr)
        assert result.first_divergence is None, (chain, result.first_divergence)
        named = {j.claim.name for j in result.judgements}
        assert not named & {"place", "const", "arr"}, chain
        assert not any(j.claim.name == "nums" and j.claim.value == "0" for j in result.judgements)


def test_isspace_is_judged_as_written_not_as_the_codes_negation() -> None:
    code = "def f(s):\n    out = ''\n    for i in s:\n        if not i.isspace():\n            out += i\n    return out"
    tr = run(code, "f(' a')")
    chain = "In the first iteration, i.isspace() is True, so it is skipped."
    assert align_text(chain, tr).first_divergence is None
    wrong = "In the first iteration, i.isspace() is False."
    assert flagged(align_text(wrong, tr), wrong) == "i.isspace() is False"


# The CLI's JSON carries each claim's kind and provenance -----------------------------------------


def test_cli_json_has_kind_and_provenance(tmp_path, official) -> None:  # noqa: ANN001
    cot = tmp_path / "cot.txt"
    cot.write_text(
        "```python\ndef f(text, value):\n    return text\n```\n"
        "text_list = ['b', 'c', 'k', 's', 'r', 'u', 't']. The function returns 'bcksrutq'.\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "cruxtui", "align", "sample_3", "--cot", str(cot), "--json"]
        + ["--dataset", str(CRUXEVAL_JSONL)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["first_divergence"] is None
    claims = [c for s in data["steps"] for c in s["claims"]]
    assert {c["kind"] for c in claims} == {"binding", "return"}
    assert {c["provenance"] for c in claims} == {"prose"}
    assert all(isinstance(c["span"], list) and len(c["span"]) == 2 for c in claims)
    assert data["code_spans"] and data["code_spans"][0][0] == 0


def test_positions_and_counts_of_something() -> None:
    code = "def f(nums):\n    zeros = nums.count(0)\n    return zeros"
    tr = run(code, "f([3, 0, 2, 1, 0, 0])")
    assert (
        align_text("0 appears at positions 1, 4 and 5, so zeros = 3.", tr).first_divergence is None
    )
    wrong = "0 appears at positions 1 and 4, and nums has 6 elements."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "0 appears at positions 1 and 4"
    assert result.first_divergence.true_value == "[1, 4, 5]"  # type: ignore[union-attr]
    assert align_text("nums has 5 elements.", tr).first_divergence.true_value == "6"  # type: ignore[union-attr]
    assert align_text("0 appears 2 times.", tr).first_divergence.true_value == "3"  # type: ignore[union-attr]


def test_one_place_named_in_the_singular_is_where_one_occurrence_is() -> None:
    """ "the first 0 is at index 1" names where one of the zeros is, not where all of them are;
    a place that does not hold it is still a slip."""
    code = "def f(nums):\n    zeros = nums.count(0)\n    return zeros"
    tr = run(code, "f([3, 0, 2, 1, 0, 0])")
    assert (
        align_text("The first 0 is at index 1 and the last 0 is at index 5.", tr).first_divergence
        is None
    )
    wrong = "The first 0 is at index 2, so zeros = 3."
    result = align_text(wrong, tr)
    assert flagged(result, wrong) == "0 is at index 2"
    assert result.first_divergence.true_value == "2"  # type: ignore[union-attr]


def test_the_input_task_restated_is_no_claim() -> None:
    """ "Find `xs` such that `f(xs) == [4, 2]`" is the question; the slip is the proposed call."""
    code = "def f(xs):\n    return [x * 2 for x in xs]"
    tr = run(code, "f([2, 2])")
    text = "Find `xs` such that `f(xs) == [4, 2]`. Halving each gives [2, 2], so f([2, 2])."
    result = align_text(text, tr, target="[4, 2]")
    assert flagged(result, text) == "f([2, 2])"
    assert all("f(xs)" not in j.claim.text for j in result.judgements)


def test_ends_as_states_a_value() -> None:
    """ "out ends as [...]" is "out ends up as [...]" said shorter."""
    code = "def f(xs):\n    out = []\n    for x in xs:\n        if x not in out:\n            out.append(x)\n    return out"
    tr = run(code, "f([2, 1, 2, 3])")
    wrong = "The repeated 2 is skipped, so out ends as [1, 2, 3]. That list is the result."
    assert flagged(align_text(wrong, tr), wrong) == "out ends as [1, 2, 3]"
    assert align_text("so out ends as [2, 1, 3].", tr).first_divergence is None


LOOP_ONCE = (
    "def f(n, array):\n    final = [array.copy()]\n    for i in range(n):\n"
    "        arr = array.copy()\n        arr.extend(final[-1])\n        final.append(arr)\n"
    "    return final"
)


def test_a_listing_of_loop_values_ends_where_a_clause_begins() -> None:
    """ "i takes the values 0 and 1 and the body runs twice": the listing is 0 and 1; the words
    after it are another clause, not an item that makes the listing unreadable."""
    tr = run(LOOP_ONCE, "f(1, [1, 2, 3])")
    text = (
        "We loop over range(n) with n = 1, so i takes the values 0 and 1 and the body runs twice."
    )
    assert flagged(align_text(text, tr), text).startswith("i takes the values 0 and 1")
    going_on = "We loop over range(n) with n = 1, so i takes the values 0 and 1 and so on."
    assert align_text(going_on, tr).first_divergence is None


def test_the_loop_variable_named_as_such() -> None:
    """ "the loop variable runs 1, 2" of f's one loop (`for _ in range(num)`) is what `_` takes;
    with two loops in f it names none."""
    code = "def f(num):\n    out = [1]\n    for _ in range(num):\n        out.append(len(out))\n    return out"
    tr = run(code, "f(3)")
    text = "With num = 3 the loop variable runs 1, 2, 3, appending each: f returns [1, 1, 2, 3, 4]."
    assert flagged(align_text(text, tr), text) == "the loop variable runs 1, 2, 3"
    right = "With num = 3 the loop variable runs 0, 1, 2, so f returns [1, 1, 2, 3]."
    assert align_text(right, tr).first_divergence is None
    two = code.replace("    return out", "    for k in out:\n        k += 1\n    return out")
    got = align_text(text, run(two, "f(3)")).first_divergence
    assert got is not None and got.claim.kind == "return"


CENTER = (
    "def f(text, width):\n    result = ''\n    for l in text.split('\\n'):\n"
    "        result += l.center(width)\n        result += '\\n'\n    return result[:-1]"
)


def test_a_backticked_equality_in_prose_states_the_value() -> None:
    """ "so after the loop `result == 'l \\nl '`" says what result holds; "if `result == ...`"
    tests it and "`result == ...` is False" judges the test: neither states it."""
    tr = run(CENTER, "f('l\\nl', 2)")
    text = "Each line adds 'l ' and a newline, so after the loop `result == 'l \\nl '`."
    assert flagged(align_text(text, tr), text) == "`result == 'l \\nl '`"
    right = text.replace("'l \\nl '`", "'l \\nl \\n'`")
    assert align_text(right, tr).first_divergence is None
    for words in ("if `result == 'l \\nl '` we stop.", "`result == 'l \\nl '` is False."):
        assert align_text(words, tr).first_divergence is None, words


def test_taking_back_a_worked_line_takes_back_each_value_it_states() -> None:
    """ "length = len(new_text) = 3 — no, ... so length = 4": the correction names `length`
    only, but the line it takes back stated len(new_text) too."""
    code = (
        "def f(text, value):\n    new_text = list(text)\n    new_text.append(value)\n"
        "    length = len(new_text)\n    return '[' + str(length) + ']'"
    )
    tr = run(code, "f('abv', 'a')")
    text = (
        "new_text = ['a', 'b', 'v', 'a']. length = len(new_text) = 3 — no, that misses the "
        "appended 'a': there are 4 items, so length = 4. f returns '[5]'."
    )
    div = align_text(text, tr).first_divergence
    assert div is not None and div.claim.kind == "return"
    kept = text.replace("3 — no, that misses the appended 'a': there", "3. There")
    div = align_text(kept, tr).first_divergence
    assert div is not None and kept[div.claim.start : div.claim.end].startswith("length = len(")


BACKWARDS = (
    "def f(text):\n    result = ''\n    for i in range(len(text) - 1, -1, -1):\n"
    "        result += text[i]\n    return result"
)


def test_loop_values_listed_with_then_or_a_backticked_name() -> None:
    """ "`i` goes 3, 2, 1", "`i` takes 3, then 2, then 1, then 0": what the loop variable
    takes, however the listing is joined."""
    tr = run(BACKWARDS, "f('was,')")
    text = "len(text) is 4, so `i` goes 3, 2, 1 and the result is ',sa'."
    assert flagged(align_text(text, tr), text) == "`i` goes 3, 2, 1"
    then = "len(text) is 4, so `i` takes 3, then 2, then 1. f returns ',sa'."
    assert flagged(align_text(then, tr), then) == "`i` takes 3, then 2, then 1"
    right = "len(text) is 4, so `i` takes 3, then 2, then 1, then 0. f returns ',saw'."
    assert align_text(right, tr).first_divergence is None


def test_an_action_word_as_a_noun_does_not_hide_the_subject() -> None:
    """ "after the sort mylist is [5, 8]": "the sort" is the event, mylist the subject ("sorts
    the list in place: [...]" still names no variable `place`)."""
    code = (
        "def f(mylist):\n    revl = mylist[:]\n    revl.reverse()\n"
        "    mylist.sort(reverse=True)\n    return mylist == revl"
    )
    tr = run(code, "f([5, 8])")
    text = "[5, 8] is already in order, so after the sort mylist is [5, 8]. f returns False."
    assert flagged(align_text(text, tr), text) == "mylist is [5, 8]"
    right = "Sorting in reverse, after the sort mylist is [8, 5]: equal to revl. f returns True."
    assert align_text(right, tr).first_divergence is None


def test_positions_of_an_item_named_in_words_or_backticks() -> None:
    """ "the comma sits at index 10" (a character named by its name), "`'La'` appears at indices
    0 and 3" (the item in backticks): where the item is, in f's one argument."""
    tr = run("def f(text):\n    return text.find(',')", 'f("There are, no, commas")')
    text = "'There are' is 9 characters, so the comma sits at index 10 and find returns 10."
    assert flagged(align_text(text, tr), text) == "the comma sits at index 10"
    assert align_text(text.replace("10", "9"), tr).first_divergence is None
    code = (
        "def f(strings):\n    seen = {}\n    for s in strings:\n"
        "        if s not in seen:\n            seen[s] = strings.count(s)\n    return seen"
    )
    tr = run(code, "f(['La', 'Q', 'La', 'La'])")
    text = "`'La'` appears at indices 0 and 2, so its count is 2. f returns {'La': 2, 'Q': 1}."
    assert flagged(align_text(text, tr), text) == "`'La'` appears at indices 0 and 2"
    right = "`'La'` appears at indices 0, 2 and 3, so its count is 3. f returns {'La': 3, 'Q': 1}."
    assert align_text(right, tr).first_divergence is None


def test_a_backticked_narrated_assignment_is_a_binding() -> None:
    """ "giving `changes = ['yes']`, so ..." narrates a value of `changes` inside inline code
    (the code's own line `changes = list(changes)` stays code); "the loop moves on to i = 1"
    names i."""
    code = (
        "def f(text, changes):\n    changes = list(changes)\n    out = ''\n"
        "    for i in range(len(text)):\n        out += changes[i % len(changes)]\n    return out"
    )
    tr = run(code, "f('ab', 'yes')")
    text = (
        "`changes = list(changes)` wraps the argument, giving `changes = ['yes']`, so each "
        "character becomes 'yes' and f returns 'yesyes'."
    )
    assert flagged(align_text(text, tr), text) == "changes = ['yes']"
    right = text.replace("['yes']", "['y', 'e', 's']").replace(
        "'yes' and f returns 'yesyes'", "'y' then 'e': f returns 'ye'"
    )
    assert align_text(right, tr).first_divergence is None
    moves = "i = 0 gives 'y', then the loop moves on to i = 2, giving 's'. f returns 'ys'."
    assert flagged(align_text(moves, tr), moves) == "i = 2"


def test_a_test_quoted_with_values_is_judged_by_its_own_truth() -> None:
    """ "First check: `str.isascii('234år')`. ... so this is `True`": the test is written with
    values only, so it has a truth of its own whatever the code's `if` is called on."""
    code = (
        "def f(s):\n    if str.isascii(s[-5:]):\n        return s[-5:]\n"
        "    elif str.isascii(s[:5]):\n        return s[:5]\n    return s"
    )
    tr = run(code, "f('a1234år')")
    text = (
        "s[-5:] is '234år'. First check: `str.isascii('234år')`. `å` is in the extended ASCII "
        "range, so this is `True`, and f returns '234år'."
    )
    assert flagged(align_text(text, tr), text) == "so this is `True`"
    right = text.replace(
        "is in the extended ASCII range, so this is `True`, and f returns '234år'",
        "is not ASCII, so this is `False`; then `str.isascii('a1234')` is True and f returns 'a1234'",
    )
    assert align_text(right, tr).first_divergence is None
    unquoted = "s[-5:] is '234år'. Hmm, so this is `True`, and f returns '234år'."
    got = align_text(unquoted, tr).first_divergence
    assert got is not None and got.claim.kind == "return"


def test_a_value_after_an_arrow_and_other_everyday_forms() -> None:
    """ "`temp = array[i]` -> `temp` = 4" (an arrow is no operator), "the loop body runs only
    once", "the function gives back 12"."""
    code = (
        "def f(array, i, x):\n    temp = array[i]\n    for k in range(i):\n        array[k] += temp\n"
        "    return len(array) + temp + x"
    )
    tr = run(code, "f([1, 2, 3], 1, 0)")
    arrow = "`temp = array[i]` -> `temp` = 1, so f returns 4."
    assert flagged(align_text(arrow, tr), arrow) == "`temp` = 1"
    assert (
        align_text(arrow.replace("= 1, so f returns 4", "= 2, so f returns 5"), tr).first_divergence
        is None
    )
    once = "temp is 2, and the loop body runs only twice. So the function gives back 5."
    assert flagged(align_text(once, tr), once) == "the loop body runs only twice"
    back = "temp is 2, and the loop body runs only once. So the function gives back 6."
    assert flagged(align_text(back, tr), back) == "the function gives back 6"


def test_an_arrow_verdict_under_a_heading_test_names_no_single_condition() -> None:
    """ "- `'mathematics'.endswith('example')`: the last 7 characters are 'ematics', and
    'ematics' != 'example' → False": the verdict is the heading test's (or the comparison's,
    read one way); which is meant is unclear, so neither is contradicted. A verdict said of
    the comparison alone still is judged."""
    code = (
        "def f(text, suffix):\n    if suffix and text.endswith(suffix):\n"
        "        return text[:-len(suffix)]\n    return text"
    )
    tr = run(code, "f('mathematics', 'example')")
    text = (
        "- `'mathematics'.endswith('example')`: the last 7 characters are 'ematics', and "
        "'ematics' != 'example' → False\n- so f returns 'mathematics'"
    )
    assert align_text(text, tr).first_divergence is None
    plain = (
        "The last 7 characters are 'ematics', and 'ematics' != 'example' → False. f returns 'math'."
    )
    got = flagged(align_text(plain, tr), plain)
    assert got is not None and got.strip().endswith("'ematics' != 'example' → False")


def test_of_two_loops_over_one_name_the_one_named_by_its_place() -> None:
    """ "Second loop: ..., so i goes 1, 2, 3": f has two loops over i; the step names which."""
    code = (
        "def f(text):\n    out = ''\n    mid = (len(text) - 1) // 2\n    for i in range(mid):\n"
        "        out += text[i]\n    for i in range(mid, len(text) - 1):\n"
        "        out += text[i]\n    return out"
    )
    tr = run(code, "f('eat!')")
    text = "First loop: i = 0 only, out = 'e'.\nSecond loop: range(1, 3), so i goes 1, 2, 3. f returns 'eat!'."
    assert flagged(align_text(text, tr), text) == "so i goes 1, 2, 3"
    right = text.replace("i goes 1, 2, 3. f returns 'eat!'", "i goes 1, 2. f returns 'eat'")
    assert align_text(right, tr).first_divergence is None
    unnamed = right.replace("Second loop: ", "Then ").replace("i goes 1, 2.", "i goes 1, 2, 3.")
    assert all(
        j.verdict != "contradicted" or j.claim.kind != "loop_values"
        for j in align_text(unnamed, tr).judgements
    )


def test_precision_on_everyday_words_around_values() -> None:
    """Each of these once raised a false alarm on a correct chain: the count before "and that
    same list is returned" (a list is returned, not 9); "it returns -1" in a sentence about
    `text.find` (a clause after a semicolon is the same sentence); "'X' for i = 0 and 'Y' for
    i = 1" (two things' values, interleaved); a question ("does ... start with 'mjs'?")."""
    insert = "def f(lst, i, n):\n    lst.insert(i, n)\n    return lst"
    tr = run(insert, "f([44, 34, 23], 1, 15)")
    text = "The list becomes [44, 15, 34, 23], 4 elements, and that same list is returned."
    assert align_text(text, tr).first_divergence is None
    find = (
        "def f(text):\n    at = text.find('A')\n    if at >= 0:\n        return text[:at]\n"
        "    return ''.join(sorted(text))"
    )
    tr = run(find, "f('cab')")
    text = (
        "`text.find('A')` looks for a capital A; there is none, so it returns -1. f returns 'abc'."
    )
    assert align_text(text, tr).first_divergence is None
    upper = "def f(xs):\n    for i in range(len(xs)):\n        xs[i] = xs[i].upper()\n    return xs"
    tr = run(upper, "f(['x', 'y'])")
    text = "`xs[i].upper()` computes 'X' for i = 0 and 'Y' for i = 1, so f returns ['X', 'Y']."
    assert align_text(text, tr).first_divergence is None
    prefix = "def f(prefix, text):\n    if text.startswith(prefix):\n        return text\n    return prefix + text"
    tr = run(prefix, "f('mjs', 'mjqw')")
    text = "Does 'mjqw' start with 'mjs'? It does not, so f returns 'mjsmjqw'."
    assert align_text(text, tr).first_divergence is None


def test_an_aside_set_off_by_commas_does_not_break_the_clause() -> None:
    """ "the uppercase letters, in order, are S and R": the aside is read past."""
    code = "def f(text):\n    return ''.join(c for c in text if c.isupper())"
    tr = run(code, "f('SaRbT')")
    text = "Scanning 'SaRbT', the uppercase letters, in order, are S and R. f returns 'SR'."
    div = align_text(text, tr).first_divergence
    assert div is not None and "S and R" in div.claim.text
    right = "Scanning 'SaRbT', the uppercase letters, in order, are S, R and T. f returns 'SRT'."
    assert align_text(right, tr).first_divergence is None


def test_more_precision_on_correct_chains() -> None:
    """From correct chains that once raised an alarm: a run in the conditional ("with text =
    'C7x' the loop would run once"), a count after a listing ("'1', two spaces, '3' — that's 4
    characters" counts them all), a test with its worked form ("length <= len(text) is 0 <= 7,
    which is True")."""
    code = "def f(text):\n    out = []\n    for i in range(len(text) // 3):\n        out.append(i)\n    return len(out)"
    tr = run(code, "f('C7')")
    text = "len('C7') // 3 is 0, so the loop never runs. For comparison, with text = 'C7x' the loop would run once. f returns 0."
    assert align_text(text, tr).first_divergence is None
    count = "def f(s):\n    return len(s)"
    tr = run(count, "f('1  3')")
    text = "Counting: '1', two spaces, '3' — that's 4 characters. f returns 4."
    assert align_text(text, tr).first_divergence is None
    worked = (
        "def f(text, c):\n    n = len(c)\n    if n <= len(text):\n        return n\n    return -1"
    )
    tr = run(worked, "f('managed', '')")
    text = "n = 0. The condition n <= len(text) is 0 <= 7, which is True, so f returns 0."
    assert align_text(text, tr).first_divergence is None
    wrong = "n = 0. The condition n <= len(text) is 0 <= 7, which is False, so f returns -1."
    div = align_text(wrong, tr).first_divergence
    assert div is not None and "which is False" in div.claim.text


DIGITS = (
    "def f(single_digit):\n    result = []\n    for c in range(1, 11):\n"
    "        if c != single_digit:\n            result.append(c)\n    return result"
)


def test_a_listing_that_goes_on_unsaid_stands_for_the_numbers_it_spells() -> None:
    """ "c goes 1, 2, ..., 10" is all ten numbers, not the two written before the dots; dots
    whose meaning cannot be told ("'a', 'b', ...") make no claim."""
    tr = run(DIGITS, "f(5)")
    right = "The loop is over range(1, 11), so c goes 1, 2, ..., 10. f returns [1, 2, 3, 4, 6, 7, 8, 9, 10]."
    assert align_text(right, tr).first_divergence is None
    short = "The loop is over range(1, 11), so c takes the values 1, 2, …, 9 and then stops."
    assert flagged(align_text(short, tr), short) == "c takes the values 1, 2, …, 9"
    odd = "The loop is over range(1, 11), so c goes 1, 3, ..., 9."
    assert (flagged(align_text(odd, tr), odd) or "").endswith("c goes 1, 3, ..., 9")
    letters = "The loop is over range(1, 11), so c goes 'a', 'b', ... and so on."
    assert align_text(letters, tr).first_divergence is None


def test_counts_in_words_past_ten() -> None:
    """ "the loop runs thirteen times", "c takes the eight values ...": counts spelt out as
    people write them, past ten too, and a count before the listing it announces."""
    tr = run(DIGITS, "f(5)")
    text = "The loop runs thirteen times, so f returns [1, 2, 3, 4, 6, 7, 8, 9, 10]."
    assert flagged(align_text(text, tr), text) == "The loop runs thirteen times"
    assert align_text(text.replace("thirteen", "ten"), tr).first_divergence is None
    code = "def f(s):\n    total = 0\n    for c in s:\n        if c == 'e':\n            total += 1\n    return total"
    tr = run(code, "f('234rtccde')")
    text = "c takes the eight values '2', '3', '4', 'r', 't', 'c', 'c', 'd', none of them 'e'."
    assert flagged(align_text(text, tr), text).startswith("c takes the eight values '2'")


REVERSED = (
    "def f(n):\n    length = len(n) + 2\n    revn = list(n)\n    result = ''.join(revn)\n"
    "    revn.clear()\n    if not result:\n        return 'empty'\n    return result + ('!' * length)"
)


def test_a_value_in_a_comment_on_a_line_of_f_is_that_line_s_value() -> None:
    """Lines of f quoted with what each gives as a comment: the comment names no subject, the
    line does (its target, a changed receiver, its test). A comment in words claims nothing."""
    tr = run(REVERSED, "f('iq')")
    text = (
        "```python\n"
        "length = len(n) + 2      # 4\n"
        "revn = list(n)           # ['i', 'q']\n"
        "result = ''.join(revn)   # joined -> 'qi'\n"
        "revn.clear()             # []\n"
        "```\n"
        "So f returns 'qi!!!!'."
    )
    assert flagged(align_text(text, tr), text) == "joined -> 'qi'"
    right = text.replace("'qi'", "'iq'").replace("'qi!!!!'", "'iq!!!!'")
    result = align_text(right, tr)
    assert result.first_divergence is None
    assert ("binding", "['i', 'q']", CONSISTENT) in verdicts(result)
    assert ("binding", "[]", CONSISTENT) in verdicts(result)
    test = right.replace("```\nSo", "if not result:           # True\n```\nSo")
    assert flagged(align_text(test, tr), test) == "True"
    words = right.replace("# 4", "# two more than the length")
    assert align_text(words, tr).first_divergence is None


TRANSLATE = (
    "def f(text, char1, char2):\n    t1a = []\n    t2a = []\n    for i in range(len(char1)):\n"
    "        t1a.append(char1[i])\n        t2a.append(char2[i])\n"
    "    t1 = text.maketrans(dict(zip(t1a, t2a)))\n    return text.translate(t1)"
)


def test_places_of_an_item_in_the_one_argument_that_holds_it() -> None:
    """ "- `e` at indices 0 and 8" of f(text, char1, char2): the argument holding 'e' and long
    enough to reach index 8 is text; "insert '*' at index 0" is an action, no place claimed."""
    tr = run(TRANSLATE, 'f("ewriyat emf rwto segya", "tey", "dgo")')
    text = "Characters to replace:\n- `e` at indices 0 and 8 -> `g`\n- `t` at indices 6 and 14"
    assert flagged(align_text(text, tr), text) == "`e` at indices 0 and 8"
    right = text.replace("0 and 8", "0, 8 and 18")
    assert align_text(right, tr).first_divergence is None
    action = "We insert 'e' at index 3 of a copy, which changes nothing in text."
    assert align_text(action, tr).first_divergence is None
