"""Prompts for asking a model to predict a CRUXEval output or input.

Every prompt asks for the benchmark's answer format, a completed assertion between tags::

    [ANSWER]
    assert f(<input>) == <output>
    [/ANSWER]

so the benchmark's own extraction rules apply to our generations as well as to theirs. Three modes:

- ``direct``: the answer and nothing else;
- ``cot``: free-form reasoning in ``[THOUGHT]`` tags first (chain of thought);
- ``scratchpad``: the execution state line by line in ``[SCRATCHPAD]`` tags first, in the exact
  grammar of CONTRACTS.md, so `cruxtui.core.reasoning.alignment` can compare it with a real trace.

Each prompt exists as chat messages (instruct models) and as plain completion text (base models,
which the benchmark mostly used). The few-shot examples are our own, not the benchmark's, and are
checked by the tests against real execution. `TEMPLATE_VERSION` is stored with every generation:
change it whenever the wording changes, because a score is only comparable under the same prompt.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from cruxtui.core.data.dataset import Sample
from cruxtui.core.util import safe_ast

TEMPLATE_VERSION = "cruxtui-1"

Task = Literal["output", "input"]
Mode = Literal["direct", "cot", "scratchpad"]
Style = Literal["chat", "completion"]

TASKS: tuple[str, ...] = ("output", "input")
MODES: tuple[str, ...] = ("direct", "cot", "scratchpad")
STYLES: tuple[str, ...] = ("chat", "completion")

ANSWER_OPEN = "[ANSWER]"
ANSWER_CLOSE = "[/ANSWER]"
SCRATCHPAD_OPEN = "[SCRATCHPAD]"
SCRATCHPAD_CLOSE = "[/SCRATCHPAD]"
THOUGHT_OPEN = "[THOUGHT]"
THOUGHT_CLOSE = "[/THOUGHT]"

DEFAULT_MAX_TOKENS: dict[str, int] = {"direct": 128, "cot": 1024, "scratchpad": 2048}
"""Token budgets per mode: the benchmark used 100 (direct) and 1000 (chain of thought); a
scratchpad writes one line per executed statement, so it needs more."""

SYSTEM_MESSAGE = (
    "You are an expert Python programmer. You execute Python code in your head exactly as the "
    "interpreter would, and you answer in the format you are asked for."
)


@dataclass(frozen=True)
class Prompt:
    """One prompt, ready for either kind of endpoint.

    `messages` is what a chat endpoint receives and `text` what a completions endpoint receives;
    both are always filled (for the other style they hold an equivalent rendering), so a prompt
    built for one style still works against the other kind of endpoint.

    `response_prefix` is the start of the answer that a completion prompt already wrote for the
    model (e.g. ``"[ANSWER]\\n"``): the model's raw text continues it. `response(raw)` glues them
    back together, which is what the answer extraction and the scratchpad parser should read.
    """

    task: str
    mode: str
    style: str
    sample_id: str
    messages: list[dict[str, str]] = field(hash=False)
    text: str
    stop: tuple[str, ...]
    response_prefix: str = ""
    template_version: str = TEMPLATE_VERSION

    def response(self, raw: str) -> str:
        """The model's answer as a whole: the prefix the prompt wrote for it, then its raw text."""
        return self.response_prefix + raw


def style_for_api(api: str) -> str:
    """The prompt style that suits an endpoint kind: chat messages for "chat", text otherwise."""
    return "chat" if api == "chat" else "completion"


def build_prompt(sample: Sample, task: str, mode: str, style: str = "chat") -> Prompt:
    """Build the prompt asking for `sample`'s output (task "output") or an input (task "input")."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r} (expected one of {', '.join(TASKS)})")
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(MODES)})")
    if style not in STYLES:
        raise ValueError(f"unknown prompt style {style!r} (expected one of {', '.join(STYLES)})")

    instructions = _INSTRUCTIONS[(task, mode)]
    examples = [_render_example(ex, task, mode) for ex in _EXAMPLES[(task, mode)]]
    query = _render_query(sample.code, sample.input, sample.output, task)
    prefix = _RESPONSE_PREFIX[mode]

    completion_text = "\n\n".join([instructions, *examples, query]) + "\n" + prefix
    user = (
        instructions
        + "\n\nExamples:\n\n"
        + "\n\n".join(examples)
        + "\n\nNow solve this one:\n\n"
        + query
        + "\n\n"
        + _CHAT_REMINDER[mode]
    )
    chat_messages = [
        {"role": "system", "content": SYSTEM_MESSAGE},
        {"role": "user", "content": user},
    ]
    if style == "chat":
        return Prompt(
            task=task,
            mode=mode,
            style=style,
            sample_id=sample.id,
            messages=chat_messages,
            text=_render_transcript(chat_messages),
            stop=(ANSWER_CLOSE,),
        )
    return Prompt(
        task=task,
        mode=mode,
        style=style,
        sample_id=sample.id,
        messages=[{"role": "user", "content": completion_text}],
        text=completion_text,
        # A base model that forgets the closing tag tends to start another example: stop there too.
        stop=(ANSWER_CLOSE, "\n[PYTHON]"),
        response_prefix=prefix,
    )


def scratchpad_from_trace(trace: Any) -> str | None:
    """The scratchpad a perfect model would write for a traced run (`cruxtui.core.trace.steps.Trace`),
    in the grammar above, without the tags; None when the trace is incomplete (timeout, step cap,
    sandbox error).

    Only f's own activation is written (nested frames such as comprehensions are inside its
    lines). Each line's entry shows what changed by the next step of f, an `if`/`while` line that
    changed nothing shows where control went, and the `return` line is the final entry.
    """
    if trace.error or trace.timeout or trace.truncated or not trace.steps:
        return None
    top = trace.steps[0]
    steps = [s for s in trace.steps if s.frame == top.frame and s.func == top.func]
    if steps[0].event != "call":
        return None
    bodies = _condition_bodies(trace.code)
    source = trace.code.splitlines()
    entries = ["call f(" + ", ".join(f"{n}={v}" for n, v in steps[0].locals) + ")"]
    for step, after in zip(steps[1:], steps[2:], strict=False):
        if step.event != "line":
            continue
        before = dict(step.locals)
        changed = [(n, v) for n, v in after.locals if before.get(n) != v]
        text = source[step.line - 1].strip() if 0 < step.line <= len(source) else ""
        if changed:
            entries.append(f"line {step.line}: " + "; ".join(f"{n} = {v}" for n, v in changed))
        elif after.event == "return" and text.startswith("return"):
            continue  # written as the final `return` entry
        elif step.line in bodies:
            keyword, condition, (first, last) = bodies[step.line]
            taken = after.event == "line" and first <= after.line <= last
            if first == step.line:
                # The body is on the `if` line itself: `if c: return x` was taken iff f left right
                # there; for any other one-line body the outcome is not visible in the trace.
                taken = after.event in ("return", "exception") and after.line == step.line
                if not taken and not re.search(r":\s*(?:return|raise)\b", text):
                    entries.append(f"line {step.line}: (no change)")
                    continue
            entries.append(f"line {step.line}: {keyword} {condition} -> {taken}")
        else:
            entries.append(f"line {step.line}: (no change)")
    if trace.exception is not None:
        entries.append(f"raise {trace.exception}")
    elif trace.return_repr is not None:
        entries.append(f"return {trace.return_repr}")
    else:
        return None
    return "\n".join(entries)


def _condition_bodies(code: str) -> dict[int, tuple[str, str, tuple[int, int]]]:
    """For each `if`/`elif`/`while` line: the keyword, the condition's text and its body's lines."""
    try:
        tree = safe_ast.parse(code)
    except SyntaxError:
        return {}
    found: dict[int, tuple[str, str, tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While) and node.body:
            condition = ast.get_source_segment(code, node.test) or ast.unparse(node.test)
            keyword = "while" if isinstance(node, ast.While) else "if"
            last = node.body[-1].end_lineno or node.body[-1].lineno
            found[node.lineno] = (keyword, " ".join(condition.split()), (node.body[0].lineno, last))
    return found


def _render_transcript(messages: list[dict[str, str]]) -> str:
    """Chat messages as plain text, for a completions endpoint or for showing the prompt."""
    body = "\n\n".join(f"{m['role'].upper()}:\n{m['content']}" for m in messages)
    return body + "\n\nASSISTANT:\n"


def _render_query(code: str, input_: str, output: str, task: str) -> str:
    code = code.strip("\n")
    if task == "output":
        return f"[PYTHON]\n{code}\nassert f({input_}) == ??\n[/PYTHON]"
    return f"[PYTHON]\n{code}\nassert f(??) == {output}\n[/PYTHON]"


@dataclass(frozen=True)
class _Example:
    """A worked example of our own. `thought` and `scratchpad` must match real execution: the
    tests run every example's assertion and replay its scratchpad against a line tracer."""

    code: str
    input: str
    output: str
    thought: str
    scratchpad: str


def _render_example(ex: _Example, task: str, mode: str) -> str:
    parts = [_render_query(ex.code, ex.input, ex.output, task)]
    if mode == "cot":
        parts.append(f"{THOUGHT_OPEN}\n{ex.thought}\n{THOUGHT_CLOSE}")
    elif mode == "scratchpad":
        parts.append(f"{SCRATCHPAD_OPEN}\n{ex.scratchpad}\n{SCRATCHPAD_CLOSE}")
    parts.append(f"{ANSWER_OPEN}\nassert f({ex.input}) == {ex.output}\n{ANSWER_CLOSE}")
    return "\n".join(parts)


_COUNT_UPPER = _Example(
    code=(
        "def f(words):\n"
        "    total = 0\n"
        "    for w in words:\n"
        "        if w.isupper():\n"
        "            total += len(w)\n"
        "    return total"
    ),
    input="['AB', 'cd', 'EFG']",
    output="5",
    thought=(
        "f starts with total = 0 and visits each word. 'AB' is upper case, so total becomes 2. "
        "'cd' is not, so total stays 2. 'EFG' is upper case, so total becomes 2 + 3 = 5. "
        "The loop ends and f returns 5."
    ),
    scratchpad=(
        "call f(words=['AB', 'cd', 'EFG'])\n"
        "line 2: total = 0\n"
        "line 3: w = 'AB'\n"
        "line 4: if w.isupper() -> True\n"
        "line 5: total = 2\n"
        "line 3: w = 'cd'\n"
        "line 4: if w.isupper() -> False\n"
        "line 3: w = 'EFG'\n"
        "line 4: if w.isupper() -> True\n"
        "line 5: total = 5\n"
        "line 3: (no change)\n"
        "return 5"
    ),
)

_REVERSE_PARTS = _Example(
    code=(
        "def f(text, sep):\n"
        "    parts = text.split(sep)\n"
        "    parts.reverse()\n"
        "    return sep.join(parts).upper()"
    ),
    input="'a-bc-d', '-'",
    output="'D-BC-A'",
    thought=(
        "text.split('-') gives ['a', 'bc', 'd']; reversing it in place gives ['d', 'bc', 'a']. "
        "Joining with '-' gives 'd-bc-a', and upper() turns it into 'D-BC-A'."
    ),
    scratchpad=(
        "call f(text='a-bc-d', sep='-')\n"
        "line 2: parts = ['a', 'bc', 'd']\n"
        "line 3: parts = ['d', 'bc', 'a']\n"
        "return 'D-BC-A'"
    ),
)

_ROTATE = _Example(
    code="def f(text, n):\n    return text[n:] + text[:n]",
    input="'abcd', 2",
    output="'cdab'",
    thought=(
        "f moves the first n characters of text to the end. 'cdab' is 'ab' moved behind 'cd', "
        "so text = 'abcd' with n = 2 works: 'abcd'[2:] + 'abcd'[:2] == 'cd' + 'ab' == 'cdab'."
    ),
    scratchpad="call f(text='abcd', n=2)\nreturn 'cdab'",
)

_EVEN_SUM = _Example(
    code=(
        "def f(nums):\n"
        "    evens = [x for x in nums if x % 2 == 0]\n"
        "    return sum(evens) * len(nums)"
    ),
    input="[2, 4, 3]",
    output="18",
    thought=(
        "f multiplies the sum of the even numbers by the length of the list. 18 = 6 * 3, so a "
        "list of three numbers whose even ones add up to 6 works, for example [2, 4, 3]: the even "
        "numbers are 2 and 4 (sum 6) and the list has 3 elements."
    ),
    scratchpad="call f(nums=[2, 4, 3])\nline 2: evens = [2, 4]\nreturn 18",
)

_EXAMPLES: dict[tuple[str, str], tuple[_Example, ...]] = {
    ("output", "direct"): (_COUNT_UPPER, _REVERSE_PARTS),
    ("output", "cot"): (_COUNT_UPPER,),
    ("output", "scratchpad"): (_COUNT_UPPER, _REVERSE_PARTS),
    ("input", "direct"): (_ROTATE, _EVEN_SUM),
    ("input", "cot"): (_EVEN_SUM,),
    ("input", "scratchpad"): (_ROTATE, _EVEN_SUM),
}

_RESPONSE_PREFIX = {
    "direct": f"{ANSWER_OPEN}\n",
    "cot": f"{THOUGHT_OPEN}\n",
    "scratchpad": f"{SCRATCHPAD_OPEN}\n",
}

_OUTPUT_TASK = (
    "You are given a Python function f and an assertion calling f on an input. Replace ?? with "
    "the exact value f returns for that input, written as a Python literal (no expressions, no "
    "function calls), even if the function looks wrong or incomplete."
)
_INPUT_TASK = (
    "You are given a Python function f and an assertion f(??) == output. Find an input for which "
    "f returns exactly that output; several may exist, give one. Write it as the arguments of a "
    "call to f, using Python literals."
)
_ANSWER_RULE = (
    "Give the completed assertion on its own line between [ANSWER] and [/ANSWER] tags, as in the "
    "examples."
)
_SCRATCHPAD_RULES = """\
Before answering, trace the execution in [SCRATCHPAD] and [/SCRATCHPAD] tags, one entry per line:
- first `call f(<name>=<value>, ...)` with the arguments bound to the parameters;
- after each source line runs, `line <N>: <name> = <value>` for every variable it changed
  (several separated by `; `), where N counts the lines of the code shown, the `def` line being 1;
- for an `if` or `while` line, `line <N>: if <condition> -> True` (or `-> False`; `while` likewise);
- for a line that changed nothing, `line <N>: (no change)`;
- last, `return <value>` (the `return` line gets no `line` entry of its own) or
  `raise <ExceptionType>: <message>`.
Write every value as Python's repr() of it."""

_INSTRUCTIONS: dict[tuple[str, str], str] = {
    ("output", "direct"): f"{_OUTPUT_TASK} Do not explain. {_ANSWER_RULE}",
    ("output", "cot"): (
        f"{_OUTPUT_TASK} First reason step by step about what the code does on this input, in "
        f"[THOUGHT] and [/THOUGHT] tags. Then {_ANSWER_RULE[0].lower()}{_ANSWER_RULE[1:]}"
    ),
    (
        "output",
        "scratchpad",
    ): f"{_OUTPUT_TASK}\n\n{_SCRATCHPAD_RULES}\n\nThen {_ANSWER_RULE[0].lower()}{_ANSWER_RULE[1:]}",
    ("input", "direct"): f"{_INPUT_TASK} Do not explain. {_ANSWER_RULE}",
    ("input", "cot"): (
        f"{_INPUT_TASK} First reason step by step, working backwards from the output, in "
        f"[THOUGHT] and [/THOUGHT] tags. Then {_ANSWER_RULE[0].lower()}{_ANSWER_RULE[1:]}"
    ),
    ("input", "scratchpad"): (
        f"{_INPUT_TASK} Choose an input, then check it.\n\n{_SCRATCHPAD_RULES}\n\n"
        f"Then {_ANSWER_RULE[0].lower()}{_ANSWER_RULE[1:]}"
    ),
}

_CHAT_REMINDER = {
    "direct": "Reply with only the [ANSWER] block.",
    "cot": "Reply with the [THOUGHT] block, then the [ANSWER] block.",
    "scratchpad": "Reply with the [SCRATCHPAD] block, then the [ANSWER] block.",
}
