"""Prompts: every task x mode x style, the few-shot examples checked against real execution, and
the scratchpad examples checked line by line against a tracer and the project's own parser."""

from __future__ import annotations

import ast
import itertools
import re
import sys
from typing import Any

import pytest

from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.models import prompts
from cruxtui.core.models.prompts import (
    MODES,
    STYLES,
    TASKS,
    TEMPLATE_VERSION,
    Prompt,
    build_prompt,
    scratchpad_from_trace,
    style_for_api,
)
from cruxtui.core.reasoning.chain_parse import parse_scratchpad
from cruxtui.core.scoring.answers import extract

SAMPLE = Sample(
    "sample_x",
    "def f(nums, k):\n    out = []\n    for n in nums:\n        out.append(n * k)\n    return out",
    "[1, 2], 3",
    "[3, 6]",
)

ALL = list(itertools.product(TASKS, MODES, STYLES))


@pytest.mark.parametrize(("task", "mode", "style"), ALL)
def test_every_prompt_shows_the_query_and_asks_for_the_answer_format(
    task: str, mode: str, style: str
) -> None:
    p = build_prompt(SAMPLE, task, mode, style)
    assert isinstance(p, Prompt)
    assert (p.task, p.mode, p.style, p.sample_id) == (task, mode, style, "sample_x")
    assert p.template_version == TEMPLATE_VERSION
    query = (
        f"[PYTHON]\n{SAMPLE.code}\nassert f([1, 2], 3) == ??\n[/PYTHON]"
        if task == "output"
        else f"[PYTHON]\n{SAMPLE.code}\nassert f(??) == [3, 6]\n[/PYTHON]"
    )
    for text in (p.text, p.messages[-1]["content"]):
        assert query in text
        assert "[ANSWER]" in text and "[/ANSWER]" in text
        # the query is the last code shown: the examples come before it
        assert text.rfind("[PYTHON]") == text.find(query)
    # the answer to the real sample never leaks into the prompt
    hidden = "[3, 6]" if task == "output" else "[1, 2], 3"
    assert hidden not in p.text.replace(query, "")
    assert "[/ANSWER]" in p.stop


@pytest.mark.parametrize(("task", "mode"), list(itertools.product(TASKS, MODES)))
def test_chat_and_completion_shapes(task: str, mode: str) -> None:
    chat = build_prompt(SAMPLE, task, mode, "chat")
    assert [m["role"] for m in chat.messages] == ["system", "user"]
    assert chat.response_prefix == ""
    assert chat.stop == ("[/ANSWER]",)
    assert chat.text.endswith("ASSISTANT:\n")

    comp = build_prompt(SAMPLE, task, mode, "completion")
    opening = {"direct": "[ANSWER]\n", "cot": "[THOUGHT]\n", "scratchpad": "[SCRATCHPAD]\n"}[mode]
    assert comp.text.endswith("[/PYTHON]\n" + opening)
    assert comp.response_prefix == opening
    assert comp.response("x") == opening + "x"
    assert comp.messages == [{"role": "user", "content": comp.text}]
    assert "\n[PYTHON]" in comp.stop  # a base model that runs on into a new example stops


def test_modes_differ_in_what_they_ask_for() -> None:
    direct = build_prompt(SAMPLE, "output", "direct").messages[-1]["content"]
    cot = build_prompt(SAMPLE, "output", "cot").messages[-1]["content"]
    pad = build_prompt(SAMPLE, "output", "scratchpad").messages[-1]["content"]
    assert "[THOUGHT]" not in direct and "[SCRATCHPAD]" not in direct
    assert "[THOUGHT]" in cot and "[SCRATCHPAD]" not in cot
    assert "[SCRATCHPAD]" in pad and "line <N>:" in pad and "(no change)" in pad


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown task 'outputs'"):
        build_prompt(SAMPLE, "outputs", "direct")
    with pytest.raises(ValueError, match="unknown mode 'fewshot'"):
        build_prompt(SAMPLE, "output", "fewshot")
    with pytest.raises(ValueError, match="unknown prompt style"):
        build_prompt(SAMPLE, "output", "direct", "instruct")


def test_style_for_api() -> None:
    assert style_for_api("chat") == "chat"
    assert style_for_api("completions") == "completion"


def test_examples_are_our_own_not_the_benchmarks() -> None:
    """The paper's prompts use f(17) == 17, "x9j" -> "x9ja", "hi" -> "bhihia", f(??) == 17."""
    for task, mode, style in ALL:
        text = build_prompt(SAMPLE, task, mode, style).text
        for theirs in ("x9ja", "bhihia", "assert f(17) == 17", "assert f(16) == 17", '"mq", "px"'):
            assert theirs not in text


def test_a_template_change_needs_a_version_bump() -> None:
    """Pin the text: if this fails, the prompt wording changed. Bump TEMPLATE_VERSION (scores under
    different prompts are not comparable) and update the fingerprint."""
    import hashlib

    blob = "\x00".join(build_prompt(SAMPLE, t, m, s).text for t, m, s in ALL).encode()
    digest = hashlib.sha256(blob).hexdigest()[:16]
    assert (TEMPLATE_VERSION, digest) == ("cruxtui-1", FINGERPRINT)


FINGERPRINT = "a4c1f076f4d4fdfa"


# ---------------------------------------------------------------- few-shot examples are correct

EXAMPLES = sorted({ex for exs in prompts._EXAMPLES.values() for ex in exs}, key=lambda e: e.code)


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda e: e.code.split("\n")[1].strip()[:30])
def test_example_assertion_holds(ex: Any) -> None:
    env: dict[str, Any] = {}
    exec(ex.code, env)  # noqa: S102 - our own example code
    assert eval(f"f({ex.input})", env) == ast.literal_eval(ex.output)  # noqa: S307


def _trace_lines(
    code: str, call: str
) -> tuple[list[tuple[int, dict[str, str]]], dict[str, str], Any]:
    """(line, locals-after-that-line) for each line of f that ran, the arguments, the result."""
    env: dict[str, Any] = {}
    exec(code, env)  # noqa: S102 - our own example code
    events: list[tuple[int, dict[str, str]]] = []
    args: dict[str, str] = {}

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_name != "f":
            return None
        state = {k: repr(v) for k, v in frame.f_locals.items()}
        if event == "call":
            args.update(state)
        elif event in ("line", "return"):
            if events:
                events[-1] = (events[-1][0], state)
            if event == "line":
                events.append((frame.f_lineno, {}))
        return tracer

    sys.settrace(tracer)
    try:
        result = eval(call, env)  # noqa: S307
    finally:
        sys.settrace(None)
    return events, args, result


_ENTRY = re.compile(r"line (\d+): (.*)")


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda e: e.code.split("\n")[1].strip()[:30])
def test_example_scratchpad_matches_real_execution(ex: Any) -> None:
    events, args, result = _trace_lines(ex.code, f"f({ex.input})")
    entries = ex.scratchpad.split("\n")
    assert entries[0] == "call f(" + ", ".join(f"{k}={v}" for k, v in args.items()) + ")"
    assert entries[-1] == f"return {result!r}"
    # the final line of f is the `return`, which the grammar writes as the last entry instead
    ran = events[:-1]
    lines = [_ENTRY.fullmatch(e) for e in entries[1:-1]]
    assert all(lines), entries
    assert [int(m.group(1)) for m in lines] == [n for n, _ in ran]
    before = dict(args)
    for m, (_lineno, after) in zip(lines, ran, strict=True):
        body = m.group(2)
        changed = {k: v for k, v in after.items() if before.get(k) != v}
        if body == "(no change)":
            assert not changed
        elif " -> " in body:
            cond, truth = body.removeprefix("if ").removeprefix("while ").rsplit(" -> ", 1)
            env = {k: ast.literal_eval(v) for k, v in before.items()}
            assert repr(bool(eval(cond, {}, env))) == truth  # noqa: S307
            assert not changed
        else:
            claimed = dict(part.split(" = ", 1) for part in body.split("; "))
            assert claimed == changed
        before = after


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda e: e.code.split("\n")[1].strip()[:30])
def test_example_scratchpad_parses_with_the_project_parser(ex: Any) -> None:
    chain = parse_scratchpad(f"[SCRATCHPAD]\n{ex.scratchpad}\n[/SCRATCHPAD]")
    assert chain is not None
    assert chain.problems == []
    assert len(chain.steps) == len(ex.scratchpad.split("\n"))


@pytest.mark.parametrize(("task", "mode", "style"), ALL)
def test_worked_examples_in_the_prompt_extract_to_their_own_answer(
    task: str, mode: str, style: str
) -> None:
    """Each example's reply, as shown in the prompt, goes through our extraction unchanged."""
    text = build_prompt(SAMPLE, task, mode, style).text
    blocks = re.findall(r"\[/PYTHON\]\n(.*?\[/ANSWER\])", text, re.DOTALL)
    assert len(blocks) == len(prompts._EXAMPLES[(task, mode)])
    for block, ex in zip(blocks, prompts._EXAMPLES[(task, mode)], strict=True):
        want = ex.output if task == "output" else f"f({ex.input})"
        assert extract(block, task).answer == want
        assert extract(block, task, "official").answer == want


def test_real_samples_build_for_every_combination(official: Dataset) -> None:
    for sample in official.samples[::80]:
        for task, mode, style in ALL:
            p = build_prompt(sample, task, mode, style)
            assert sample.code.strip("\n") in p.text


# ---------------------------------------------------------------- reference scratchpads from traces


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda e: e.code.split("\n")[1].strip()[:30])
def test_the_traced_scratchpad_is_the_handwritten_example(ex: Any) -> None:
    from cruxtui.core.trace.steps import trace

    assert scratchpad_from_trace(trace(ex.code, f"f({ex.input})")) == ex.scratchpad


def test_traced_scratchpad_conditions_loops_and_raise() -> None:
    from cruxtui.core.trace.steps import trace

    code = (
        "def f(n):\n"
        "    while n > 3:\n"
        "        n -= 2\n"
        "    if n == 1:\n"
        "        return 'one'\n"
        "    elif n:\n"
        "        x = [i for i in range(n)]\n"
        "    return x"
    )
    assert scratchpad_from_trace(trace(code, "f(6)")) == (
        "call f(n=6)\n"
        "line 2: while n > 3 -> True\n"
        "line 3: n = 4\n"
        "line 2: while n > 3 -> True\n"
        "line 3: n = 2\n"
        "line 2: while n > 3 -> False\n"
        "line 4: if n == 1 -> False\n"
        "line 6: if n -> True\n"
        "line 7: x = [0, 1]\n"
        "return [0, 1]"
    )
    assert scratchpad_from_trace(trace("def f(a):\n    b = a - 1\n    return 1 // b", "f(1)")) == (
        "call f(a=1)\nline 2: b = 0\nline 3: (no change)\n"
        "raise ZeroDivisionError: integer division or modulo by zero"
    )
    assert (
        scratchpad_from_trace(
            trace("def f(a):\n    while True:\n        pass", "f(1)", max_steps=50)
        )
        is None
    )


def test_traced_scratchpads_of_real_samples_parse_cleanly(official: Dataset) -> None:
    from cruxtui.core.trace.steps import trace

    for sample in official.samples[:40]:
        pad = scratchpad_from_trace(trace(sample.code, sample.call))
        assert pad is not None and pad.endswith(f"return {sample.output}") or "…" in (pad or "")
        chain = parse_scratchpad(f"[SCRATCHPAD]\n{pad}\n[/SCRATCHPAD]")
        assert chain is not None
        # long values are cut by the tracer's bounded repr ("…"): those entries are not literals
        assert [p for p in chain.problems if "…" not in p] == [], sample.id
