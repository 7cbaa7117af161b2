"""A carried wrong value is followed back to where it first appears (`carried_values`).

Every chain here is written for the test, over functions written for it: the slip is stated in
words no claim pattern names a subject for, and the chain carries the wrong value on to its
answer. The first divergence is where the value entered the chain, not where it ended up."""

from __future__ import annotations

import json
import subprocess
import sys

from cruxtui.core.reasoning.alignment import CONTRADICTED, Alignment, align_text
from cruxtui.core.reasoning.claim_types import CARRIED
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire
from tests.conftest import CRUXEVAL_JSONL, REPO

INITIALS = "def f(words):\n    firsts = [w[0] for w in words]\n    return ''.join(firsts)\n"
COPY = "def f(s):\n    t = s.upper()\n    return s\n"
TAIL = "def f(xs):\n    xs.append(xs[0] * 2)\n    return xs\n"


def run(code: str, call: str) -> Trace:
    return from_wire(code, call, tracer.run(code, call))


def flagged(result: Alignment, text: str) -> str | None:
    div = result.first_divergence
    return None if div is None else text[div.claim.start : div.claim.end]


def test_the_slip_is_where_the_wrong_value_first_appears() -> None:
    tr = run(INITIALS, "f(['apple', 'kiwi', 'fig'])")
    text = (
        "Each word gives up its first letter: a from apple, k from kiwi and f from fig. Put "
        "together that makes 'akg'. So the function returns 'akg'."
    )
    result = align_text(text, tr)
    assert flagged(result, text) == "Put together that makes 'akg'"
    div = result.first_divergence
    assert div is not None and div.claim.kind == CARRIED and div.true_value is None
    assert "'akg' first appears here; the program never computes it" in div.note
    # The answer is still contradicted, with its true value.
    answer = [j for j in result.judgements if j.verdict == CONTRADICTED][-1]
    assert answer.claim.value == "'akg'" and answer.true_value == "'akf'"
    # And it shows in the JSON as a claim of its own kind, from the prose.
    claims = [c for s in result.to_json()["steps"] for c in s["claims"]]
    assert {"kind": CARRIED, "provenance": "prose"}.items() <= claims[0].items()
    json.dumps(result.to_json())


def test_a_list_built_in_words_is_followed_back_from_the_answer() -> None:
    tr = run(TAIL, "f([3, 1])")
    text = (
        "- the first item doubled is 6\n"
        "- it goes on the end, which leaves `[3, 1, 3]`\n"
        "- the list is returned\n\n"
        "**Answer:** `[3, 1, 3]`"
    )
    assert flagged(align_text(text, tr), text) == "which leaves `[3, 1, 3]"


def test_a_value_the_run_holds_is_not_followed() -> None:
    """'AB' is `t`'s value: stating it is no slip the program never makes, so only the answer,
    which is f's result, is contradicted."""
    tr = run(COPY, "f('ab')")
    text = "Upper-casing gives 'AB' as a copy. Then f returns 'AB'."
    assert flagged(align_text(text, tr), text) == "f returns 'AB'"


def test_hypotheticals_code_calls_and_operands_are_not_where_a_value_enters() -> None:
    tr = run(INITIALS, "f(['apple', 'kiwi', 'fig'])")
    text = (
        "If the last word were 'gig', the result would be 'akg'.\n\n"
        "```python\nif words[-1] == 'gig':\n    out = 'akg'\n```\n\n"
        "Comparing, 'akg' == 'akh' is False, and g('akg') does not matter. The letters are "
        "a, k and g, so f returns 'akg'."
    )
    assert flagged(align_text(text, tr), text) == "f returns 'akg'"


def test_a_comment_in_code_is_not_where_a_value_enters() -> None:
    """A comment on a quoted line of f is the chain's words, but a reader sent there lands in
    code: the value is followed back to prose only."""
    tr = run(INITIALS, "f(['apple', 'kiwi', 'fig'])")
    text = (
        "The first letters are taken in order.\n\n```python\n"
        "return ''.join(firsts)  # 'akg'\n```\n\nSo f returns 'akg'."
    )
    assert flagged(align_text(text, tr), text) == "f returns 'akg'"


def test_numbers_are_not_followed() -> None:
    """A number written earlier is too likely another quantity that happens to be equal."""
    code = "def f(s):\n    return len(s) * 2\n"
    tr = run(code, "f('abc')")
    text = (
        "The string is padded to length 8, and then doubling its length gives 8, which f returns."
    )
    result = align_text(text, tr)
    assert all(j.claim.kind != CARRIED for j in result.judgements)


def test_the_input_task_target_restated_is_not_followed() -> None:
    """We need 'akf' is the question: proposing a call that does not give it is the slip."""
    tr = run(INITIALS, "f(['apple', 'kiwi', 'gig'])")
    text = "We need 'akf'. Words starting with a, k and g will do: f(['apple', 'kiwi', 'gig'])."
    result = align_text(text, tr, target="'akf'")
    assert flagged(result, text) == "f(['apple', 'kiwi', 'gig'])"


def test_the_cli_names_where_the_value_entered(official, tmp_path) -> None:  # noqa: ANN001
    """`cruxtui align` keeps its `first_divergence` object; a carried value has no true value of
    its own, so the report says where it came from instead."""
    cot = tmp_path / "cot.txt"
    cot.write_text(
        "The letters of 'bcksrut' go into a list and 'q' is put at the front, so joined back "
        "together it reads 'qbcksrut'. The function returns 'qbcksrut'.",
        encoding="utf-8",
    )
    base = [sys.executable, "-m", "cruxtui", "align", "sample_3", "--cot", str(cot)]
    base += ["--dataset", str(CRUXEVAL_JSONL)]
    out = subprocess.run([*base, "--json"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    div = json.loads(out.stdout)["first_divergence"]
    assert set(div) == {"reasoning_step", "trace_step", "claim", "claimed", "true"}
    assert div["claim"] == "so joined back together it reads 'qbcksrut'"
    assert div["true"] is None
    shown = subprocess.run(base, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "first appears here; the program never computes it" in " ".join(shown.stdout.split())


def test_the_input_task_target_taken_apart_is_the_question() -> None:
    """Reasoning backwards, the chain takes the target apart ('a' is its last letter): a piece
    of the target is the question, so the slip is where the proposed input fails to give it."""
    code = "def f(s):\n    return s[2:] + s[0]\n"
    tr = run(code, "f('zacde')")
    text = (
        "We need 'cdea'. The front letter must be 'a' and the rest from index 2 must be "
        "'cde'. Take s = 'zacde': s[2:] = 'cde' and s[0] = 'a'. So f('zacde')."
    )
    assert flagged(align_text(text, tr, target="'cdea'"), text) == "s[0] = 'a'"


def test_unclosed_brackets_in_untrusted_text_are_given_up_on() -> None:
    """A run of unclosed brackets is no literal: the scan gives up past `MAX_DEPTH` levels (so
    each bracket costs a bounded look, not a scan to the end of the text), and the chain is still
    read around it."""
    from cruxtui.core.reasoning.literal_scan import MAX_DEPTH, scan_balanced

    assert scan_balanced("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), 0) is None
    assert scan_balanced("[" * MAX_DEPTH + "]" * MAX_DEPTH, 0) == 2 * MAX_DEPTH
    tr = run(INITIALS, "f(['apple', 'kiwi', 'fig'])")
    text = "Noise " + "[" * 3000 + "\n\nPut together that makes 'akg'. So f returns 'akg'."
    assert flagged(align_text(text, tr), text) == "Put together that makes 'akg'"
