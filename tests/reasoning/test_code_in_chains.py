"""Code inside a chain is context, never a claim — however it is laid out — while a state
narrated in prose still is one. Chains written here in free prose, judged against a real trace
of a function whose variables the code in the chains reuses with other values."""

from __future__ import annotations

import pytest

from cruxtui.core.reasoning.alignment import align_text
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire

CODE = (
    "def f(text, lower=None):\n    out = []\n    for c in text:\n"
    "        out.append(c.upper())\n    return ''.join(out)"
)


def run() -> Trace:
    return from_wire(CODE, "f('ab')", tracer.run(CODE, "f('ab')"))


@pytest.mark.parametrize(
    "chain",
    [
        # A listing without a fence: the literal assignments belong to the code around them.
        "One could write it like this:\nout = [0]\nfor c in text:\n    out.append(c)\nreturn out",
        "An indented sketch:\n\n    lower = 5\n    return lower\n",
        "To try it:\ntext = 'zz'\nlower = 4\nprint(f(text, lower))",
        # Keyword arguments of some call of f, or defaults of a signature, bind nothing here.
        "The signature would be f(text, lower=3) in a variant.",
        "Someone could call it as f(text='zz', lower=True) instead.",
    ],
)
def test_code_laid_out_any_way_is_not_a_claim(chain: str) -> None:
    result = align_text(chain, run())
    assert result.first_divergence is None, result.first_divergence
    assert not [c for c in result.chain.claims if c.name in ("out", "lower", "text")], chain


@pytest.mark.parametrize(
    "chain, wrong",
    [
        ("After the loop out = ['A', 'C'] and the answer is 'AC'.", "out = ['A', 'C']"),
        ("First out = []\nthen out = ['A']\nand finally out = ['A', 'C'].", "out = ['A', 'C']"),
        ("1. out = []\n2. out = ['A']\n3. out = ['A', 'C']\n4. return 'AC'", "out = ['A', 'C']"),
        ("out = ['B']\n\nfor c in text: (the loop)", "out = ['B']"),
        # A fence that only states values computes nothing: a trace written in a fence.
        ("After the loop:\n```\nout = ['A', 'C']\nout[0] = 'A'\n```", "out = ['A', 'C']"),
        ("Once the loop is done:\n```\nout[1] = 'C'\n```", "out[1] = 'C'"),
    ],
)
def test_a_narrated_state_is_still_a_claim(chain: str, wrong: str) -> None:
    result = align_text(chain, run())
    div = result.first_divergence
    assert div is not None and chain[div.claim.start : div.claim.end] == wrong


@pytest.mark.parametrize(
    "chain",
    [
        # Broken the way generated code breaks: a bracket left open runs the call on.
        "A first try, without the loop:\nout = list(text.upper()\nlower = 'x'\nprint(out, lower))",
        # A call whose arguments spread over lines: its keyword is no binding.
        "A variant that keeps the flag:\n    result = helper(text,\n        lower=7)",
        # A header missing its colon still heads the indented body below it.
        "Consider this version:\nfor c in text\n    out = 'zz'",
        # A fence of code that mostly does not parse is still a fence of code.
        "```python\nout = list(text.upper()\nprint(out\nlower = 9\n```",
        # The prompt's template with a placeholder for the value.
        "To test it:\nassert g(text, lower=5) == <value>\n",
    ],
)
def test_broken_code_is_still_code(chain: str) -> None:
    result = align_text(chain, run())
    assert result.first_divergence is None, result.first_divergence
    assert not [c for c in result.chain.claims if c.name in ("out", "lower", "text")], chain


@pytest.mark.parametrize(
    "line, code",
    [
        ("return min((x[0] + x[1], x[2])", True),  # one closer short
        ("if (a % n == 4 and (b * 3 - n)) != 7 * n)):", True),  # one closer too many
        ("elif j > 6:", True),  # a clause continuing a statement
        ("def helper([1, 2], 2):", True),  # a signature a model garbled
        ("total = list(a[:len(b)] + [g(i) for i in range(3)])[:-1])", True),
        ("assert f(x) == <value>", True),
        ("x = 5", False),  # a narrated state
        ("x = 5, y = 6", False),
        ("len(s) = 3", False),  # a narrated expression: no repair mends `=`
        ("total = 3 + 5 = 8", False),
        ("for i = 0: s = 'a'", False),
        ("return the list", False),  # English: two words side by side
        ("nums.count(1) returns 3", False),
        ("The function returns a list.", False),
        ("else", False),  # "the `else` branch": a construct named
        ("else:", True),
    ],
)
def test_a_line_is_code_when_it_reads_as_python(line: str, code: bool) -> None:
    from cruxtui.core.reasoning.python_lines import reads_as_code

    assert reads_as_code(line) is code
