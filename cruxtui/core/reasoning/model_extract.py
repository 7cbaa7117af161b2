"""Model-assisted claim extraction (optional): a configured endpoint restates a chain of thought
as structured claims, which join the ones the prose reader found.

The model only *reads*; cruxtui still judges every claim itself against the trace. Its reply is
untrusted text: a JSON list of `{"sentence", "subject", "value", "when"}` objects is looked
for; a claim is kept only when its sentence occurs in the chain (that is where it points the
user), its subject resolves to a variable of `f`, an expression over the frame, or f's result,
and its value is a Python literal. Each kept claim is marked `source="model"`. Nothing here is
needed for alignment to work; a dead endpoint or a garbled reply adds no claims and says why.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from cruxtui.core.reasoning.claim_judge import is_hypothetical
from cruxtui.core.reasoning.claim_types import (
    BINDING,
    CONDITION,
    EXPRESSION,
    MODEL,
    RETURN,
    Chain,
    Claim,
)
from cruxtui.core.reasoning.code_facts import code_facts
from cruxtui.core.reasoning.literal_scan import is_literal, value_key
from cruxtui.core.reasoning.prose_claims import asked, resolve_expression

MAX_CLAIMS = 200
PROMPT = """You restate a chain of thought about a Python function as a list of claims.
For every value the chain states, give one JSON object:
{{"sentence": <the exact words of the chain that state it, copied verbatim>,
  "subject": <the variable or Python expression over the function's variables it is about,
              or "return" for the function's result>,
  "value": <the value the chain states, as a Python literal>,
  "when": <"start", "iteration N", "after the loop", "end" or null>}}
Reply with a JSON list only.

The function:
```python
{code}
```

The chain of thought:
{chain}
"""


@dataclass
class Extraction:
    claims: list[Claim] = field(default_factory=list)
    problem: str | None = None
    """Why no (or fewer) claims came back: the endpoint failed, the reply was not JSON, ..."""
    dropped: int = 0
    """Claims in the reply that were left out (sentence not in the chain, subject unknown...)."""


MAX_TOKENS = 4096
"""The reply's budget: a claims list for the longest chains fits; a model that rambles on is cut
there (its list then unreadable: "no JSON list"), not waited on until the timeout."""


def ask_model(
    endpoint: str,
    model: str | None,
    prompt: str,
    timeout: float = 60.0,
    max_tokens: int = MAX_TOKENS,
) -> str:
    """One chat completion from an OpenAI-compatible endpoint (`endpoint` is its base URL or
    the name of a configured `[endpoints.*]` table)."""
    import openai

    from cruxtui.core.models.endpoints import resolve_endpoint

    if re.match(r"https?://", endpoint):
        base_url, key, chosen = endpoint, "not-needed", model
    else:
        ep = resolve_endpoint(endpoint, model=model)
        base_url = ep.spec.base_url or ""
        key, chosen = ep.api_key or "not-needed", ep.spec.model
    client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=0)
    if not chosen:
        listed = client.models.list()
        chosen = next(iter(listed.data)).id
    reply = client.chat.completions.create(
        model=chosen,
        messages=[{"role": "user", "content": prompt}],
        temperature=0,
        max_tokens=max_tokens,
    )
    return reply.choices[0].message.content or ""


def parse_reply(reply: str, chain: Chain, code: str) -> Extraction:
    """The claims of a model's reply that can be placed in `chain` and resolved against `code`."""
    out = Extraction()
    start = reply.find("[")
    end = reply.rfind("]")
    if start < 0 or end <= start:
        out.problem = "the reply holds no JSON list"
        return out
    try:
        items = json.loads(reply[start : end + 1])
    except (json.JSONDecodeError, RecursionError):
        out.problem = "the reply's list is not valid JSON"
        return out
    if not isinstance(items, list):
        out.problem = "the reply is not a list"
        return out
    facts = code_facts(code)
    cursor = 0
    for item in items[:MAX_CLAIMS]:
        claim = _claim(item, chain.text, facts, cursor)
        if claim is None:
            out.dropped += 1
            continue
        cursor = claim.start
        out.claims.append(claim)
    out.dropped += max(0, len(items) - MAX_CLAIMS)
    return out


def _claim(item: Any, text: str, facts: Any, cursor: int) -> Claim | None:
    if not isinstance(item, dict):
        return None
    sentence, subject, value = item.get("sentence"), item.get("subject"), item.get("value")
    when = item.get("when")
    if not (isinstance(sentence, str) and isinstance(subject, str) and sentence.strip()):
        return None
    if not isinstance(value, str):
        value = json.dumps(value) if isinstance(value, bool | int | float) else None
        if value in ("true", "false"):
            value = value.title()
    if value is None or not is_literal(value):
        return None
    at = text.find(sentence, cursor)
    if at < 0:
        at = text.find(sentence)
    if at < 0:
        return None
    span = (at, at + len(sentence))
    subject = subject.strip().strip("`")
    if subject in facts.names:  # f's own `output` or `result` is a variable, not its result
        claim = Claim(BINDING, sentence, value, name=subject)
    elif subject.lower() in ("return", "result of f", "f", "output", "answer"):
        claim = Claim(RETURN, sentence, value)
    else:
        expr = resolve_expression(subject, facts)
        if expr is None:
            return None
        kind = CONDITION if value in ("True", "False") else EXPRESSION
        claim = Claim(kind, sentence, value, name=expr)
        if kind == CONDITION:
            claim.condition = expr
    claim.start, claim.end = span
    claim.source = MODEL
    claim.phase_end = isinstance(when, str) and bool(re.search(r"after|end", when, re.I))
    return claim


def merge(chain: Chain, claims: list[Claim], target: str | None = None) -> int:
    """Add the model's claims to the steps they fall in, unless the prose reader already read a
    claim on the same subject there or the sentence supposes another run; a claim asked is
    marked so, as the prose reader's are. (The model is asked to leave out values the chain
    takes back: the prose reader's rules for that are keyed to its own readings, and "wait, let
    me double-check 'i'" would take back a model's claim about 'o'.) Returns how many were
    added. `target`: for the input task, the output asked for; a result claimed equal to it
    ("Target: [1, 2, 4]", "find x such that f(x) == [1, 2, 4]") is the question restated, not a
    claim about the proposed run (the proposed call itself claims it, `claim_target`)."""
    goal = value_key(target) if target is not None else None
    kept: list[Claim] = []
    for claim in claims:
        if goal is not None and claim.kind == RETURN and value_key(claim.value) == goal:
            continue
        step = next((s for s in chain.steps if s.start <= claim.start < s.end), None)
        if step is None or is_hypothetical(step.text):
            continue  # (a run the chain supposes, read alike from the prose)
        if any(
            c.start < claim.end
            and claim.start < c.end
            and (c.name, c.kind) == (claim.name, claim.kind)
            for c in step.claims
        ):
            continue
        claim.asked = asked(chain.text, claim)
        step.claims.append(claim)
        step.claims.sort(key=lambda c: c.start)
        kept.append(claim)
    return len(kept)


def extract_with(
    endpoint: str,
    chain: Chain,
    code: str,
    model: str | None = None,
    target: str | None = None,
    max_tokens: int = MAX_TOKENS,
) -> Extraction:
    """Ask `endpoint` for the chain's claims and merge those that check out into `chain`."""
    prompt = PROMPT.format(code=code, chain=chain.text)
    try:
        reply = ask_model(endpoint, model, prompt, max_tokens=max_tokens)
    except Exception as exc:  # noqa: BLE001 - the endpoint is optional; say why and go on
        return Extraction(problem=f"{type(exc).__name__}: {str(exc)[:200]}")
    got = parse_reply(reply, chain, code)
    merge(chain, got.claims, target)
    return got
