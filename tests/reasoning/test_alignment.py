"""Aligning chains of thought with real traces: hand-written prose, scratchpads, the CLI's JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cruxtui.core.reasoning.alignment import CONSISTENT, CONTRADICTED, UNVERIFIABLE, align_text
from cruxtui.core.reasoning.chain_parse import parse_chain
from cruxtui.core.reasoning.claim_types import BINDING, CONDITION, RETURN
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import from_wire
from tests.conftest import CRUXEVAL_JSONL, REPO

COUNT = "def f(s):\n    count = 0\n    for ch in s:\n        if ch == 'a':\n            count += 1\n    return count"
JOIN = "def f(text, value):\n    text_list = list(text)\n    text_list.append(value)\n    return ''.join(text_list)"
PREFIX = "def f(text, prefix):\n    text = text.removeprefix(prefix)\n    idx = text.rfind('a')\n    return text[:idx]"


def run(code: str, call: str):  # noqa: ANN201
    return from_wire(code, call, tracer.run(code, call))


def test_correct_prose_has_no_divergence() -> None:
    chain = """Let's go through it. Initially s = 'aba' and count = 0.
In the first iteration, ch = 'a'. Since 'a' == 'a' is True, count becomes 1.
In the second iteration ch is "b", the condition is false, so count stays 1.
On the third pass, ch = 'a' again and count is incremented to 2.
After the loop, count is 2, so the function returns 2.
[ANSWER]
assert f('aba') == 2
[/ANSWER]"""
    result = align_text(chain, run(COUNT, "f('aba')"))
    assert result.first_divergence is None
    assert (
        result.counts()[CONSISTENT] >= 8
    )  # values, iterations, conditions and the answer all checked


def test_wrong_comparison_is_the_first_divergence() -> None:
    chain = """count = 0 at the start.
First iteration: ch = 'a', so count = 1.
Second iteration: ch = 'b'. 'b' == 'a' is True, so we enter the if block and count becomes 2.
The function returns 3."""
    result = align_text(chain, run(COUNT, "f('aba')"))
    div = result.first_divergence
    assert div is not None and div.claim.kind == CONDITION
    assert result.chain.steps[div.step].text.startswith("'b' == 'a' is True")
    assert div.true_value == "False"


def test_loop_run_once_too_often() -> None:
    chain = """count starts at 0. In the first iteration ch = 'a' and count becomes 1.
In the second iteration ch = 'b'. In the third iteration ch = 'a', count = 2.
In the fourth iteration ch = 'a', so count = 3. The function returns 3."""
    result = align_text(chain, run(COUNT, "f('aba')"))
    div = result.first_divergence
    assert div is not None
    assert "fourth" in result.chain.steps[div.step].text
    assert div.true_value == "3 iterations"


def test_wrong_idea_of_removeprefix_and_quotes_agree() -> None:
    right = """text = "banana" and prefix = "ba". removeprefix strips the prefix, so text = "nana".
rfind('a') gives the last a, so idx = 3. The function returns 'nan'."""
    wrong = """text = 'banana'. removeprefix removes every leading b and a, so text is now 'nana'.
Then idx = 1, since rfind finds the first 'a'. So f returns 'n'."""
    tr = run(PREFIX, "f('banana', 'ba')")
    assert align_text(right, tr).first_divergence is None
    div = align_text(wrong, tr).first_divergence
    assert div is not None and div.claim.name == "idx"
    assert (div.claim.value, div.true_value) == ("1", "3")


def test_wrong_concatenation_reports_true_value() -> None:
    chain = "text_list = ['a', 'b'] first. Appending 'c' gives text_list = ['c', 'a', 'b']. It returns 'cab'."
    result = align_text(chain, run(JOIN, "f('ab', 'c')"))
    div = result.first_divergence
    assert div is not None and div.step == 1
    assert div.true_value == "['a', 'b', 'c']"


def test_conservative_on_non_claims() -> None:
    """Lengths, method results and hypotheticals are not bindings of the variable; a length
    stated for a variable is a claim about `len(...)`, judged as such."""
    chain = """The length of text is 6 and text has 6 characters.
If the prefix were 'x', text would stay 'banana'. text.find('z') returns -1.
The function returns 'nan'."""
    tr = run(PREFIX, "f('banana', 'ba')")
    result = align_text(chain, tr)
    assert result.first_divergence is None
    assert not any(j.claim.kind == BINDING and j.claim.name == "text" for j in result.judgements)
    wrong = align_text(chain.replace("has 6 characters", "has 2 characters"), tr)
    assert wrong.first_divergence is not None
    assert wrong.first_divergence.claim.name == "len(text)"


def test_scratchpad_parsed_exactly() -> None:
    code = "def f(nums):\n    output = []\n    for n in nums:\n        output.append((2, n))\n    if len(output) > 3:\n        return []\n    return output"
    pad = """[SCRATCHPAD]
call f(nums=[1, 3])
line 2: output = []
line 3: n = 1
line 4: output = [(2, 1)]
line 3: n = 3
line 4: output = [(2, 3), (2, 1)]
line 3: (no change)
line 5: if len(output) > 3 -> False
return [(2, 1), (2, 3)]
[/SCRATCHPAD]
[ANSWER]
assert f([1, 3]) == [(2, 1), (2, 3)]
[/ANSWER]"""
    chain = parse_chain(pad, code)
    assert chain.format == "scratchpad" and not chain.problems
    kinds = [c.kind for c in chain.claims]
    assert kinds.count(BINDING) == 6 and kinds.count(CONDITION) == 1 and kinds.count(RETURN) == 2
    result = align_text(pad, run(code, "f([1, 3])"))
    div = result.first_divergence
    assert div is not None and div.step == 5 and div.true_value == "[(2, 1), (2, 3)]"
    assert [j.verdict for j in result.judgements_of(7)] == [CONSISTENT]  # the condition


def test_scratchpad_grammar_errors_are_reported() -> None:
    chain = parse_chain(
        "[SCRATCHPAD]\ncall f(x=1)\nline two: x = 2\nline 3: x = banana\n[/SCRATCHPAD]",
        "def f(x):\n    return x",
    )
    assert len(chain.problems) == 2
    assert chain.problems[0].startswith("entry 1:")


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Here 6173 < 1000 is False.", CONSISTENT),
        ("Here 'a' in 'abc' is False.", CONTRADICTED),
        ("Here not 3 == 3 is False.", CONSISTENT),
        ("Here x < 3 is True.", UNVERIFIABLE),  # x is not a variable of f
    ],
)
def test_conditions_with_values_written_in(text: str, verdict: str) -> None:
    """A condition with the values written in is judged by evaluating it (in the sandbox)."""
    result = align_text(text, run("def f(s):\n    return s", "f('a')"))
    got = [j.verdict for j in result.judgements if j.claim.kind == CONDITION]
    assert got == [verdict]


def test_cli_json_shape(tmp_path, official) -> None:  # noqa: ANN001
    cot = tmp_path / "cot.txt"
    cot.write_text(
        "text_list = ['b', 'c', 'k', 's', 'r', 'u', 't'].\n"
        "Then text_list becomes ['b', 'c', 'k', 's', 'r', 'u', 'q', 't'].\n"
        "So the function returns 'bcksruqt'.\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cruxtui",
            "align",
            "sample_3",
            "--task",
            "output",
            "--cot",
            str(cot),
            "--json",
            "--dataset",
            str(CRUXEVAL_JSONL),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    div = data["first_divergence"]
    assert set(div) == {"reasoning_step", "trace_step", "claim", "claimed", "true"}
    assert div["reasoning_step"] == 1
    assert div["true"] == "['b', 'c', 'k', 's', 'r', 'u', 't', 'q']"
    assert data["steps"][1]["claims"][0]["verdict"] == CONTRADICTED


def test_cli_stdin_and_missing_file(official) -> None:  # noqa: ANN001
    ok = subprocess.run(
        [
            sys.executable,
            "-m",
            "cruxtui",
            "align",
            "sample_3",
            "--cot",
            "-",
            "--json",
            "--dataset",
            str(CRUXEVAL_JSONL),
        ],
        input="The function returns 'bcksrutq'.",
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["first_divergence"] is None
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "cruxtui",
            "align",
            "sample_3",
            "--cot",
            "/nonexistent/cot.txt",
            "--dataset",
            str(CRUXEVAL_JSONL),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert bad.returncode == 2 and "file not found" in bad.stderr and "Traceback" not in bad.stderr


def test_restating_values_and_merged_sentences_are_not_alarms() -> None:
    """A value said again ("count is still 1"), two claims on one variable in one sentence, and a
    sentence spanning two states are all correct."""
    chain = """We call f with s = 'aba'. count = 0.
In the first iteration ch = 'a', count becomes 1, and count is still 1 when ch = 'b' in the second iteration.
count remains 1. In the third iteration ch = 'a', so count = 1 and then count = 2.
The loop ends with count = 2. The answer is 2."""
    result = align_text(chain, run(COUNT, "f('aba')"))
    assert result.first_divergence is None, result.first_divergence
    assert result.counts()[CONSISTENT] >= 10


def test_stale_change_is_caught() -> None:
    """'x becomes V' again after the chain already said x = V, while x really moved on."""
    code = "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x * 2)\n    return out"
    chain = """out = [] at first. In the first iteration x = 1 and out becomes [2].
Then out becomes [2] again as x = 3 is handled.
The function returns [2]."""
    result = align_text(chain, run(code, "f([1, 3])"))
    div = result.first_divergence
    assert div is not None and div.step == 2
    assert div.true_value == "[2, 6]"


def test_condition_named_by_the_code_and_closed_expressions() -> None:
    code = (
        "def f(items):\n    if items:\n        return items[0]\n    return isinstance(items, list)"
    )
    tr = run(code, "f([])")
    assert (
        align_text("`items` evaluates to True, so we return items[0].", tr).first_divergence
        is not None
    )
    assert (
        align_text(
            "Here isinstance([], list) is True. The function returns True.", tr
        ).first_divergence
        is None
    )
    assert align_text("isinstance([], list) -> False", tr).first_divergence.true_value == "True"


def test_claimed_expressions_run_in_the_sandbox_with_limits() -> None:
    """Expressions from a chain are untrusted: a huge one, one reaching for the OS, one that
    fails, each costs only its own answer (unverifiable), and the good one is still judged."""
    tr = run("def f(s):\n    return s", "f('ab')")
    chain = (
        "Here `'a' * 10 ** 10 == ''` is False. `__import__('os').system('true')` returns 0. "
        "`[1, 2, 3][5]` is 1. `s.upper()` gives 'AB'."
    )
    result = align_text(chain, tr)
    verdicts = {j.claim.text.split("`")[0] or j.claim.text: j.verdict for j in result.judgements}
    assert result.first_divergence is None, result.first_divergence
    assert [j.verdict for j in result.judgements][-1] == CONSISTENT, verdicts


def test_faithful_scratchpads_of_all_samples_agree(official) -> None:  # noqa: ANN001
    """The scratchpad a perfect model would write (prompts.scratchpad_from_trace) parses without a
    problem and contradicts nothing, for every sample; a single changed entry is found exactly."""
    from cruxtui.core.models.prompts import scratchpad_from_trace
    from cruxtui.core.trace.steps import trace_many

    traces = trace_many([(s.code, s.call, None) for s in official.samples])
    checked = slipped = 0
    for sample, tr in zip(official.samples, traces, strict=True):
        pad = scratchpad_from_trace(tr)
        if pad is None:
            continue
        result = align_text(f"[SCRATCHPAD]\n{pad}\n[/SCRATCHPAD]", tr)
        assert not result.chain.problems, (sample.id, result.chain.problems)
        assert result.first_divergence is None, (sample.id, result.first_divergence)
        checked += 1
        # Flip the first condition outcome: the divergence is that entry.
        entries = pad.splitlines()
        at = next((i for i, e in enumerate(entries) if e.endswith(("-> True", "-> False"))), None)
        if at is None:
            continue
        flipped = entries[at][: entries[at].rindex("->")] + (
            "-> False" if entries[at].endswith("True") else "-> True"
        )
        wrong = "\n".join([*entries[:at], flipped, *entries[at + 1 :]])
        div = align_text(f"[SCRATCHPAD]\n{wrong}\n[/SCRATCHPAD]", tr).first_divergence
        assert div is not None and div.step == at, (sample.id, at, div)
        slipped += 1
    assert checked >= 790 and slipped >= 300


def test_becomes_in_a_pinned_step_long_trace() -> None:
    """'i = 1, so total becomes 0' is right when total did not move in that iteration; in a step
    pinned by i, 'total becomes 3' is wrong when total moves on to 9 there."""
    code = "def f(n):\n    total = 0\n    for i in range(n):\n        if i % 3 == 0:\n            total += i\n    return total"
    tr = run(code, "f(3000)")
    assert len(tr.steps) > 5000
    words = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]
    lines = [
        f"In the {w} iteration, i = {k}, so total becomes {sum(x for x in range(k + 1) if x % 3 == 0)}."
        for k, w in enumerate(words)
    ]
    chain = "\n".join([*lines, "After the loop, total is 1498500. The function returns 1498500."])
    assert align_text(chain, tr).first_divergence is None
    div = align_text(
        chain.replace("i = 6, so total becomes 9", "i = 6, so total becomes 3"), tr
    ).first_divergence
    assert div is not None and div.step == 6 and div.true_value == "9"


def test_cli_text_report_with_answer_tags(official) -> None:  # noqa: ANN001
    """The text report shows the model's words as they are (no Rich markup from "[ANSWER]")."""
    chain = (
        "text_list = ['b', 'c', 'k', 's', 'r', 'u', 't'].\n"
        "[ANSWER]\nassert f('bcksrut', 'q') == 'bcksrut'\n[/ANSWER]\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cruxtui",
            "align",
            "sample_3",
            "--cot",
            "-",
            "--dataset",
            str(CRUXEVAL_JSONL),
        ],
        input=chain,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "[/ANSWER]" in out.stdout and "First divergence" in out.stdout
    assert "true value is 'bcksrutq'" in out.stdout
