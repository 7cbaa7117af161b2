"""Chains written by a real small model (SmolLM2-135M-Instruct on llama-cpp-python's server,
prompted with cruxtui's CoT prompt; `benchmarks/collect_real_chains.py`). Such chains re-print
and rewrite `f`, its `return` lines and its signature: none of that code may ever give a
divergence."""

from __future__ import annotations

import json
import re

from cruxtui.core.reasoning.alignment import CONTRADICTED, align_text
from cruxtui.core.reasoning.claim_types import RETURN
from cruxtui.core.trace.steps import trace_many
from tests.conftest import REPO

REAL = REPO / "benchmarks" / "real_chains"
CORPUS_REAL = REPO / "benchmarks" / "reasoning_corpus" / "tuning" / "smollm2-135m-real_model.jsonl"
"""The corpus's labelled real-model chains of the tuning part (the held-out part is never read)."""


def rows() -> list[dict]:
    out = []
    for path in [*sorted(REAL.glob("*.jsonl")), CORPUS_REAL]:
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            out += [json.loads(x) for x in lines if x.strip()]
    return out


def _stated_output(text: str, fence: re.Match[str]) -> bool:
    """A fence holding one literal value under a heading ("The output is:", "it would
    return:") is the output stated, not code."""
    import ast

    body = fence.group(0).splitlines()[1:-1]
    if len(body) != 1:
        return False
    try:
        ast.literal_eval(body[0].strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return text[: fence.start()].rstrip().rstrip("*_ ").endswith(":")


def code_in(text: str, code: str) -> list[tuple[int, int]]:
    """Fenced blocks and lines of f, found here without the parser."""
    spans = [
        (m.start(), m.end())
        for m in re.finditer(r"```.*?(?:```|\Z)", text, re.S)
        if not _stated_output(text, m)
    ]
    source = {ln.strip() for ln in code.splitlines() if len(ln.strip()) >= 6}
    pos = 0
    for raw in text.splitlines(keepends=True):
        if raw.strip() in source:
            spans.append((pos, pos + len(raw)))
        pos += len(raw)
    return spans


def _asserts(line: str, call: str) -> bool:
    """Does the line state the value of exactly `call` (`assert f(x) == X`, `f(x) == X`,
    `print(f(x))  # X`, `f(x)  # Output: X`)?"""
    squeezed = re.sub(r"\s+", "", line.replace('"', "'")).removeprefix("assert")
    squeezed = squeezed.removeprefix("print(")
    want = re.sub(r"\s+", "", call.replace('"', "'"))
    return squeezed.startswith((want + "==", want + "#", want + ")#"))


def _python(src: str) -> bool:
    import ast

    try:
        ast.parse(src)
    except (SyntaxError, ValueError):
        return False
    return bool(src.strip())


def test_code_in_real_chains_never_gives_a_divergence(official) -> None:  # noqa: ANN001
    chains = rows()
    assert len(chains) >= 10
    traces = trace_many([(official[r["sample"]].code, r["call"], None) for r in chains])
    with_code = 0
    for row, tr in zip(chains, traces, strict=True):
        spans = code_in(row["text"], tr.code)
        with_code += bool(spans)
        result = align_text(row["text"], tr)
        quote = (row.get("first_error") or {}).get("quote")
        label = (row["text"].index(quote), row["text"].index(quote) + len(quote)) if quote else None
        for j in result.judgements:
            labelled = label is not None and j.claim.start < label[1] and label[0] < j.claim.end
            if j.verdict == CONTRADICTED and not labelled and result.first_divergence is j:
                inside = [s for s in spans if s[0] < j.claim.end and j.claim.start < s[1]]
                # The one answer that lives in code: a value stated for exactly the call asked
                # about (`assert f([]) == ()`, `f([]) == ()`, `f([])  # Output: ()`): a claim
                # about this run like any other, not code.
                text = row["text"]
                line = text[text.rfind("\n", 0, j.claim.start) + 1 : j.claim.end]
                answer = j.claim.kind == RETURN and _asserts(line, tr.call)
                assert not inside or answer, (row["sample"], j.claim.text)
        # A fenced block of Python (the prompt's `== ??` included) is code to the parser too.
        for s, e in spans:
            block = row["text"][s:e]
            inner = "\n".join(block.splitlines()[1:-1]).replace("??", "None")
            if block.startswith("```") and _python(inner) and "#" not in inner:
                assert any(a <= s and e <= b + 1 for a, b in result.chain.code_spans), row["sample"]
    assert with_code >= len(chains) // 3  # the set does exercise code in chains
