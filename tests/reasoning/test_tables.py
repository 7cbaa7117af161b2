"""Trace tables that list subjects and their values row by row (`| variable | value |`,
`| check | value |`, `| step | expression | value |`): each row states its subject's value.
Tables written here in free prose, for a small function traced for real."""

from __future__ import annotations

import pytest

from cruxtui.core.reasoning.alignment import align_text
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire

CODE = (
    "def f(word, k):\n    head = word[:k]\n    spot = word.find('o')\n"
    "    if spot > k:\n        return head\n    return head + '!'"
)
CALL = "f('robot', 2)"


def run() -> Trace:
    return from_wire(CODE, CALL, tracer.run(CODE, CALL))


def flagged(text: str) -> str | None:
    div = align_text(text, run()).first_divergence
    return None if div is None else text[div.claim.start : div.claim.end]


RIGHT = """| variable | value |
|---|---|
| word | 'robot' |
| head = word[:k] | 'ro' |
| spot | 1 (the first o) |
| spot > k | False → second return |

So f gives 'ro!'."""


def test_a_subject_value_table_agrees_when_right() -> None:
    result = align_text(RIGHT, run())
    assert result.first_divergence is None, result.first_divergence
    assert len([c for c in result.chain.claims if c.kind != "return"]) == 4


@pytest.mark.parametrize(
    "wrong, cell",
    [
        ("| head = word[:k] | 'ro' |", "| head = word[:k] | 'rob' |"),  # name = its expression
        ("| spot | 1 (the first o) |", "| spot | 3 (the first o) |"),  # a remark after it
        ("| spot > k | False → second return |", "| spot > k | True → first return |"),
    ],
)
def test_each_row_states_its_subjects_value(wrong: str, cell: str) -> None:
    text = RIGHT.replace(wrong, cell)
    got = flagged(text)
    assert got is not None and got in cell, got


def test_a_worked_value_and_an_expression_subject() -> None:
    text = (
        "| step | expression | value |\n|---|---|---|\n"
        "| 1 | word.find('o') | 1 |\n| 2 | len(word) - k | 5 - 2 = 4 |\n\nAnswer: 'ro!'"
    )
    assert flagged(text) == "5 - 2 = 4"
    assert flagged(text.replace("5 - 2 = 4", "5 - 2 = 3")) is None


def test_a_line_of_f_in_backticks_is_the_rows_subject() -> None:
    """`| `head = word[:k]` | 'rob' |`: a line of f quoted as a table's subject cell is what the
    row states a value of, not code to pass over."""
    quoted = RIGHT.replace("| head = word[:k] |", "| `head = word[:k]` |")
    assert align_text(quoted, run()).first_divergence is None
    text = quoted.replace("| 'ro' |", "| 'rob' |")
    assert flagged(text) == "'rob'"


def test_a_test_column_and_a_value_with_a_remark() -> None:
    """`| v | `v in values` |`: the header is a test over two variables of f, not "v in ..." (v
    at some moment); a cell "False (1 is not in it)" is the value with a remark after it."""
    code = (
        "def f(bag):\n    values = list(bag.values())\n    out = {}\n    for v in range(3):\n"
        "        if v in values:\n            out[v] = values.count(v)\n    return out"
    )
    tr = from_wire(code, "f({0: 0, 1: 0})", tracer.run(code, "f({0: 0, 1: 0})"))
    right = (
        "| v | `v in values` |\n|---|---|\n| 0 | True |\n| 1 | False (1 is not in it) |\n"
        "| 2 | False |\n\nAnswer: {0: 2}"
    )
    assert align_text(right, tr).first_divergence is None
    wrong = right.replace("False (1 is not in it)", "True (1 is in it)").replace(
        "{0: 2}", "{0: 2, 1: 0}"
    )
    div = align_text(wrong, tr).first_divergence
    assert div is not None and wrong[div.claim.start : div.claim.end] == "True (1 is in it)"
