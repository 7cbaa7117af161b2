"""Model-assisted extraction against a real local OpenAI-compatible server with scripted replies:
the model's claims are judged by cruxtui like any other and marked as the model's; a garbled
reply or a dead endpoint adds nothing and says why."""

from __future__ import annotations

import json
import subprocess
import sys

from cruxtui.core.reasoning.alignment import CONTRADICTED, align
from cruxtui.core.reasoning.chain_parse import parse_chain
from cruxtui.core.reasoning.model_extract import extract_with, parse_reply
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import from_wire
from cruxtui.testing.fake_openai import FakeOpenAI, FakeRequest
from tests.conftest import CRUXEVAL_JSONL, REPO

CODE = "def f(text):\n    n = len(text)\n    half = text[n // 2:]\n    return half.upper()"
CHAIN = "We take the second half of the word, which is 'bbr', and shout it: the result is 'BBR'."
"""Wrong for f('abbr') (the half is 'br'), but the prose reader cannot tell what "which is 'bbr'"
or "the result" is about; a model can."""


def reply_for(request: FakeRequest) -> str:
    assert "```python" in request.prompt and CHAIN in request.prompt
    return "Here you go:\n" + json.dumps(
        [
            {
                "sentence": "which is 'bbr'",
                "subject": "text[n // 2:]",
                "value": "'bbr'",
                "when": None,
            },
            {"sentence": "not in the chain", "subject": "n", "value": "4", "when": None},
            {
                "sentence": "the result is 'BBR'",
                "subject": "return",
                "value": "'BBR'",
                "when": "end",
            },
            {"sentence": "shout it", "subject": "os.system('x')", "value": "0", "when": None},
        ]
    )


def test_model_claims_are_judged_and_marked() -> None:
    tr = from_wire(CODE, "f('abbr')", tracer.run(CODE, "f('abbr')"))
    assert align(parse_chain(CHAIN, CODE), tr).first_divergence is None  # nothing read alone
    with FakeOpenAI(reply_for) as server:
        chain = parse_chain(CHAIN, CODE)
        got = extract_with(server.url, chain, CODE)
    assert got.problem is None and got.dropped == 2  # a sentence not in the chain, os.system
    result = align(chain, tr)
    div = result.first_divergence
    assert div is not None and div.verdict == CONTRADICTED
    assert (
        div.claim.source == "model" and CHAIN[div.claim.start : div.claim.end] == "which is 'bbr'"
    )
    assert div.claim.name == "text[n // 2:]" and div.true_value == "'br'"
    answer = [j for j in result.judgements if j.claim.kind == "return"]
    assert [(j.claim.source, j.verdict, j.true_value) for j in answer] == [
        ("model", CONTRADICTED, "'BR'")
    ]


def test_garbled_replies_and_dead_endpoints_add_nothing() -> None:
    chain = parse_chain(CHAIN, CODE)
    assert parse_reply("no list here", chain, CODE).problem == "the reply holds no JSON list"
    assert parse_reply("[{'a': 1}]", chain, CODE).problem == "the reply's list is not valid JSON"
    assert parse_reply('[1, "x", {"sentence": 3}]', chain, CODE).dropped == 3
    with FakeOpenAI(lambda _r: "I cannot help with that.") as server:
        got = extract_with(server.url, chain, CODE)
    assert got.claims == [] and "no JSON list" in (got.problem or "")
    dead = extract_with("http://127.0.0.1:9/v1", chain, CODE, model="m")
    assert dead.claims == [] and dead.problem


def test_cli_extract_with(tmp_path, official) -> None:  # noqa: ANN001
    """`cruxtui align --extract-with URL --json`: the model's claims carry provenance "model"."""
    chain = "The list grows by one letter, giving ['b', 'c', 'k', 's', 'r', 'u', 'q', 't']."
    cot = tmp_path / "cot.txt"
    cot.write_text(chain, encoding="utf-8")

    def reply(_request: FakeRequest) -> str:
        return json.dumps(
            [
                {
                    "sentence": "giving ['b', 'c', 'k', 's', 'r', 'u', 'q', 't']",
                    "subject": "text_list",
                    "value": "['b', 'c', 'k', 's', 'r', 'u', 'q', 't']",
                    "when": None,
                }
            ]
        )

    with FakeOpenAI(reply) as server:
        out = subprocess.run(
            [sys.executable, "-m", "cruxtui", "align", "sample_3", "--cot", str(cot), "--json"]
            + ["--dataset", str(CRUXEVAL_JSONL), "--extract-with", server.url],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["extraction"]["added"] == 1 and data["extraction"]["problem"] is None
    div = data["first_divergence"]
    assert set(div) == {"reasoning_step", "trace_step", "claim", "claimed", "true"}
    assert div["true"] == "['b', 'c', 'k', 's', 'r', 'u', 't', 'q']"
    claims = [c for s in data["steps"] for c in s["claims"]]
    assert [c["provenance"] for c in claims if c["verdict"] == "contradicted"] == ["model"]


def test_a_comprehension_over_the_frame_is_a_subject() -> None:
    """ "the capitals are S and R" restated as `[c for c in text if c.isupper()]`: the
    comprehension's own names are its own, the rest must be f's; it is evaluated on the frame."""
    code = "def f(text, keep):\n    out = [c for c in text if c in keep]\n    return len(out)"
    tr = from_wire(code, "f('SaRb', 'ab')", tracer.run(code, "f('SaRb', 'ab')"))
    chain_text = "The capitals are S and R, the kept ones a, b and R, so f returns 3."
    chain = parse_chain(chain_text, code)
    reply = json.dumps(
        [
            {
                "sentence": "The capitals are S and R",
                "subject": "[c for c in text if c.isupper()]",
                "value": "['S', 'R']",
                "when": None,
            },
            {
                "sentence": "the kept ones a, b and R",
                "subject": "[c for c in text if c in keep]",
                "value": "['a', 'b', 'R']",
                "when": None,
            },
            {
                "sentence": "the kept ones",
                "subject": "[c for c in text if c in os]",
                "value": "[]",
                "when": None,
            },
        ]
    )
    got = parse_reply(reply, chain, code)
    assert [c.name for c in got.claims] == [
        "[c for c in text if c.isupper()]",
        "[c for c in text if c in keep]",
    ] and got.dropped == 1
    from cruxtui.core.reasoning.model_extract import merge

    merge(chain, got.claims)
    div = align(chain, tr).first_divergence
    assert (
        div is not None
        and chain_text[div.claim.start : div.claim.end] == "the kept ones a, b and R"
    )
    assert div.true_value == "['a', 'b']"


def test_the_target_restated_is_the_question_not_a_claim() -> None:
    """Input task: "Target: 2" restated by the model as f's result is the question; the
    proposed call claims the target itself (and is the divergence when it misses it)."""
    from cruxtui.core.reasoning.alignment import align_text
    from cruxtui.core.reasoning.model_extract import merge

    code = "def f(s):\n    return s.count('a')"
    tr = from_wire(code, "f('ab')", tracer.run(code, "f('ab')"))
    text = "Target: 2. Each 'a' counts once, so f('ab') will do.\n[ANSWER]\nf('ab')\n[/ANSWER]"
    reply = json.dumps(
        [
            {"sentence": "Target: 2", "subject": "return", "value": "2", "when": "end"},
            {"sentence": "f('ab') will do", "subject": "s.count('a')", "value": "2"},
        ]
    )

    def extract(chain) -> None:  # noqa: ANN001
        merge(chain, parse_reply(reply, chain, code).claims, "2")

    result = align_text(text, tr, target="2", extract=extract)
    assert not any(c.source == "model" and c.kind == "return" for c in result.chain.claims)
    div = result.first_divergence
    assert div is not None and text[div.claim.start : div.claim.end] == "f('ab') will do"
    assert div.claim.source == "model" and div.true_value == "1"


def test_a_supposed_run_or_a_question_is_no_model_claim() -> None:
    """The model's claims pass the prose reader's sentence rules: "if it were ..." speaks of
    another run, and a question asks; either would be a false divergence if judged."""
    from cruxtui.core.reasoning.model_extract import merge

    tr = from_wire(CODE, "f('abbr')", tracer.run(CODE, "f('abbr')"))
    text = (
        "If it were 'abc', the half would be 'bc'. Is the half 'xx'? "
        "No: the half is 'br', so f returns 'BR'."
    )
    chain = parse_chain(text, CODE)
    half = "text[n // 2:]"
    reply = json.dumps(
        [
            {"sentence": "the half would be 'bc'", "subject": half, "value": "'bc'"},
            {"sentence": "Is the half 'xx'", "subject": half, "value": "'xx'"},
            {"sentence": "the half is 'br'", "subject": half, "value": "'br'"},
        ]
    )
    assert merge(chain, parse_reply(reply, chain, CODE).claims) == 2
    assert align(chain, tr).first_divergence is None
    model = [(c.value, c.asked) for c in chain.claims if c.source == "model"]
    assert model == [("'xx'", True), ("'br'", False)]


def test_a_variable_named_output_is_that_variable() -> None:
    """ "output" is how a model may name f's result, unless f has a variable of that name."""
    code = "def f(xs):\n    output = ['x']\n    output.extend(xs)\n    return output"
    chain = parse_chain("output starts as ['x'], so f returns ['x', 1].", code)
    reply = json.dumps(
        [
            {"sentence": "output starts as ['x']", "subject": "output", "value": "['x']"},
            {"sentence": "f returns ['x', 1]", "subject": "return", "value": "['x', 1]"},
        ]
    )
    got = parse_reply(reply, chain, code)
    assert [(c.kind, c.name) for c in got.claims] == [("binding", "output"), ("return", None)]
