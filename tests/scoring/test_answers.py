"""Answer extraction: real-world response shapes, failures with reasons, the benchmark's own rules,
and the 8000 real CodeLlama generations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cruxtui.core.data.dataset import Dataset
from cruxtui.core.scoring.answers import Extraction, extract
from tests.conftest import CODELLAMA_OUTPUT

# (raw text, task, expected answer) — shapes seen from chat models, base models and servers that
# ignore stop sequences.
FOUND = [
    # the asked-for format
    ("[ANSWER]\nassert f([1, 2]) == [2, 1]\n[/ANSWER]", "output", "[2, 1]"),
    ("[ANSWER]\nassert f([1, 2]) == [2, 1]\n[/ANSWER]", "input", "f([1, 2])"),
    # the stop sequence ate the closing tag
    ("[ANSWER]\nassert f('ab') == 'ba'\n", "output", "'ba'"),
    # a completion prompt ended with "[ANSWER]\n": only the assertion and the closing tag come back
    ("assert f(3) == 9\n[/ANSWER]", "output", "9"),
    ("assert f(3) == 9\n", "input", "f(3)"),
    # answers that contain == or the word assert inside strings survive (split by ast)
    ("[ANSWER]\nassert f('a') == 'x == y'\n[/ANSWER]", "output", "'x == y'"),
    ("[ANSWER]\nassert f('a == b', 'assert') == True\n[/ANSWER]", "input", "f('a == b', 'assert')"),
    # parentheses are kept: without them `(1 == 1)` would become a chained comparison
    ("[ANSWER]\nassert f(1) == (1 == 1)\n[/ANSWER]", "output", "(1 == 1)"),
    ("assert ((f(1))) == (2)", "output", "(2)"),
    ("assert ((f(1))) == (2)", "input", "f(1)"),
    ('assert f("é") == "ü"', "output", '"ü"'),
    # code fences inside the tags, and instead of them
    ("[ANSWER]\n```python\nassert f(2) == {'a': 1}\n```\n[/ANSWER]", "output", "{'a': 1}"),
    ("Sure! Here it is:\n```python\nassert f(2) == 4\n```\nHope this helps.", "output", "4"),
    ("```py\nassert f(x=2) == 4\n```", "input", "f(x=2)"),
    # surrounding prose and chain of thought
    (
        "[THOUGHT]\nThe loop doubles each item, so [1, 2] becomes [2, 4].\n[/THOUGHT]\n"
        "[ANSWER]\nassert f([1, 2]) == [2, 4]\n[/ANSWER]",
        "output",
        "[2, 4]",
    ),
    ("Let's see. f returns n * 2.\nTherefore: assert f(4) == 8", "output", "8"),
    ("The answer is `assert f('q') == 'qq'`.", "output", "'qq'"),
    ("So the completed assertion is assert f(4) == 'done'.", "output", "'done'"),
    # several assertions in prose: the last one is the conclusion
    ("First guess: assert f(1) == 2\nNo wait, recheck.\nFinal: assert f(1) == 3\n", "output", "3"),
    # several answer blocks (a server that ignored the stop word): the first block counts
    (
        "[ANSWER]\nassert f(1) == 'a'\n[/ANSWER]\n\n[PYTHON]\ndef f(x):\n    return x\n"
        "assert f(2) == ??\n[/PYTHON]\n[ANSWER]\nassert f(2) == 2\n[/ANSWER]",
        "output",
        "'a'",
    ),
    # multi-line values
    (
        "[ANSWER]\nassert f(0) == [\n    [3, True],\n    [1, True]\n]\n[/ANSWER]",
        "output",
        "[\n    [3, True],\n    [1, True]\n]",
    ),
    # the assertion carries a message or a comment
    ("[ANSWER]\nassert f(1) == 2, 'two'\n[/ANSWER]", "output", "2"),
    ("assert f(1) == 2 # done", "output", "2"),
    # Windows line ends
    ("[ANSWER]\r\nassert f(1) == 'x'\r\n[/ANSWER]\r\n", "output", "'x'"),
    # chat-model habits: tags inside a fence, inline code inside tags, a think block first,
    # explanation after, everything on one line
    ("```\n[ANSWER]\nassert f('a') == 'b'\n[/ANSWER]\n```", "output", "'b'"),
    ("**Answer:**\n\n[ANSWER]\n`assert f(1) == 2`\n[/ANSWER]", "output", "2"),
    (
        '[ANSWER]\nassert f("x") == "y"\n[/ANSWER]\n\nExplanation: f returns y == y.',
        "output",
        '"y"',
    ),
    (
        "<think>\nmaybe assert f(1) == 5?\n</think>\n[ANSWER]\nassert f(1) == 2\n[/ANSWER]",
        "output",
        "2",
    ),
    (
        "I will put the answer in [ANSWER] tags.\nSo:\n[ANSWER]\nassert f(1)==2\n[/ANSWER]",
        "output",
        "2",
    ),
    ("[ANSWER] assert f(1) == 2 [/ANSWER]", "output", "2"),
    ("assert f(1) == 2[/ANSWER]", "output", "2"),
    ("[ANSWER]\nassert f(text='abc', n=2) == 'cab'\n[/ANSWER]", "input", "f(text='abc', n=2)"),
    ("The output is:\n```python\n[1, 2, 3]\n```", "output", "[1, 2, 3]"),
    ("[ANSWER]\nassert f(1) == 2\nassert f(2) == 3\n[/ANSWER]", "output", "2"),
    # no assert, just the answer (the form of benchmark generation files)
    ("[ANSWER]\n'abc'\n[/ANSWER]", "output", "'abc'"),
    ("'o=9,h=6,l=4'", "output", "'o=9,h=6,l=4'"),
    ("f('hello', 3)", "input", "f('hello', 3)"),
    ("f([1]) == [2]", "output", "[2]"),
    ("f([1]) == [2]", "input", "f([1])"),
    ("  -5 \n", "output", "-5"),
    ("None", "output", "None"),
]


@pytest.mark.parametrize(("raw", "task", "expected"), FOUND)
def test_strict_finds_the_answer(raw: str, task: str, expected: str) -> None:
    result = extract(raw, task)
    assert result == Extraction(expected, result.reason)
    assert result.ok and result.reason


FAILS = [
    ("", "output", "empty response"),
    ("   \n ", "input", "empty response"),
    ("I am not sure what this function does.", "output", "not a Python expression"),
    ("[ANSWER]\n[/ANSWER]", "output", "empty"),
    ("[ANSWER]\nassert f(??) == 3\n[/ANSWER]", "input", "??"),
    ("[ANSWER]\nassert f(1) == \n[/ANSWER]", "output", "does not parse"),
    ("[ANSWER]\nassert g(1) == 3\n[/ANSWER]", "input", "not a call to f"),
    ("[ANSWER]\nassert 3 == f(1)\n[/ANSWER]", "input", "not a call to f"),
    ("[ANSWER]\nassert f(1) != 3\n[/ANSWER]", "output", "not of the form"),
    ("[ANSWER]\nassert f(1) == 3 == 3\n[/ANSWER]", "output", "chains"),
    ("[ANSWER]\n'unterminated\n[/ANSWER]", "output", "not a Python expression"),
    ("hello", "output", "bare name"),
    ("[1, 2]", "input", "not a call to f"),
    ("assert f('abc) == 3", "output", "does not parse"),
]


@pytest.mark.parametrize(("raw", "task", "why"), FAILS)
def test_strict_says_why_there_is_no_answer(raw: str, task: str, why: str) -> None:
    result = extract(raw, task)
    assert result.answer is None and not result.ok
    assert why in result.reason


def test_reason_names_where_the_answer_was_found() -> None:
    assert "[ANSWER] tags" in extract("[ANSWER]\nassert f(1) == 2\n[/ANSWER]", "output").reason
    assert "without [/ANSWER]" in extract("[ANSWER]\nassert f(1) == 2", "output").reason
    assert "code fence" in extract("```python\nassert f(1) == 2\n```", "output").reason
    assert "outside tags" in extract("so assert f(1) == 2", "output").reason
    assert "bare value" in extract("2", "output").reason


def test_bad_task_or_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown task"):
        extract("2", "outputs")
    with pytest.raises(ValueError, match="unknown extraction mode"):
        extract("2", "output", "lenient")


# ------------------------------------------------------------------ the benchmark's own rules

OFFICIAL = [
    # cut at the first [/ANSWER] (their stop word), keep what follows the first [ANSWER]
    (
        "[THOUGHT]\nx\n[/THOUGHT]\n[ANSWER]\nassert f(1) == 2\n[/ANSWER]\nassert f(1) == 3",
        "output",
        "2",
    ),
    # the text between the first and the second "==": an answer containing == is cut short
    ("assert f('a') == 'x == y'\n", "output", "'x"),
    # input: before the first ==, then between the first and second "assert"
    ("assert f('a') == 'b'", "input", "f('a')"),
    ("assert f('assert') == 1", "input", "f('"),
    # no tags, no ==: the whole text, stripped (a chain of thought without an answer block)
    ("The output is 5", "output", "The output is 5"),
    ("  [1, 2]  \n", "output", "[1, 2]"),
    # an unparsable value is returned as is: the benchmark fails it at execution
    ("assert f(1) == 'abc", "output", "'abc"),
]


@pytest.mark.parametrize(("raw", "task", "expected"), OFFICIAL)
def test_official_rules(raw: str, task: str, expected: str) -> None:
    assert extract(raw, task, "official").answer == expected


def test_official_empty_is_a_failure_with_a_reason() -> None:
    result = extract("[ANSWER]\n[/ANSWER]", "output", "official")
    assert result.answer is None and "nothing left" in result.reason


def test_strict_and_official_agree_on_well_formed_answers() -> None:
    for raw, task, expected in FOUND[:5]:
        assert extract(raw, task, "official").answer == expected


# ------------------------------------------------------------------ real generations


@pytest.fixture(scope="module")
def codellama(shared_data: Path) -> dict[str, list[str]]:
    path = CODELLAMA_OUTPUT / "generations.json"
    return json.loads(path.read_text())


def test_real_codellama_generations_round_trip(
    codellama: dict[str, list[str]], official: Dataset
) -> None:
    """The released generations are answers already cut by the official rules. Rebuilt into the
    raw form CodeLlama produced after the direct prompt (`assert f(<input>) == <answer>`), both
    modes must give the answer back; strict refuses exactly the ones Python cannot parse (answers
    cut off by the token limit), and says so."""
    total = parsed = 0
    for sid, answers in codellama.items():
        call = official[sid].call
        for answer in answers:
            total += 1
            raw = f"assert {call} == {answer}\n"
            assert extract(raw, "output", "official").answer == answer
            strict = extract(raw, "output")
            bare = extract(answer, "output")
            try:
                compile(answer, "<answer>", "eval")
            except SyntaxError:
                assert strict.answer is None and "does not parse" in strict.reason
                assert bare.answer is None and "not a Python expression" in bare.reason
                continue
            parsed += 1
            assert strict.answer == answer, (sid, answer, strict.reason)
            assert bare.answer == answer
            wrapped = f"[THOUGHT]\nSome reasoning.\n[/THOUGHT]\n[ANSWER]\n{raw}[/ANSWER]"
            assert extract(wrapped, "output").answer == answer
    assert total == 8000
    assert parsed >= 7800  # 165 of the 8000 are cut off mid-string by the token limit


def test_an_assertion_about_a_helper_is_no_output_answer() -> None:
    """Seen from SmolLM2: an assert about a list the model built is not an answer about f."""
    raw = (
        "def g(x):\n    return [c for c in x if c]\nassert len([c for c in 'ab' if c == 'z']) == 0"
    )
    got = extract(raw, "output")
    assert got.answer is None and "not about f(...)" in got.reason
    # An assertion about f earlier in the text is still found.
    both = "assert f('ab') == 'ba'\nand also\nassert len([]) == 0"
    assert extract(both, "output").answer == "'ba'"
    assert extract("f(1) == 2", "output").answer == "2"
    assert extract("g(1) == 2", "output").answer is None


def test_a_closing_fence_is_never_paired_with_the_next_opening_one() -> None:
    """An unknown language tag made the old pattern start a block at the closing fence, so the
    prose between two blocks was read as code."""
    raw = (
        "```text\nsome notes\n```\n"
        "assert f(1) == 'prose, not code'\n"
        "```python\nassert f(1) == 3\n```\n"
    )
    got = extract(raw, "output")
    assert got.answer == "3" and "code fence" in got.reason
    unterminated = "Here:\n```python\nassert f(2) == [1]\n"
    assert extract(unterminated, "output").answer == "[1]"
