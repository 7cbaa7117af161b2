"""The answer a chain ends with, in the usual forms, and the thinking/answer split.

`[ANSWER] assert f(...) == X [/ANSWER]` (cruxtui's prompts), `<answer>X</answer>`, and the
reasoning models' `<think>...</think>` followed by the answer: the thinking is the chain to
align, and the answer after it is held against f's result like any other. Prose forms
("**Answer:** X", "the output is X", "That list is returned") are read by `prose_claims`.
"""

from __future__ import annotations

import re

from cruxtui.core.reasoning.claim_types import RETURN, Claim
from cruxtui.core.reasoning.literal_scan import is_literal

_BLOCK = re.compile(
    r"\[ANSWER\](?P<body>.*?)(?:\[/ANSWER\]|$)|<answer>(?P<body2>.*?)(?:</answer>|$)", re.S | re.I
)
_ASSERT = re.compile(r"assert\s+f\((?P<args>.*)\)\s*==\s*(?P<out>.+?)\s*$", re.S)
_THINK_END = re.compile(r"</think>|</thinking>", re.I)
_THINK_TAGS = re.compile(r"</?think(?:ing)?>", re.I)


def answer_block(text: str) -> re.Match[str] | None:
    """The last `[ANSWER]...[/ANSWER]` or `<answer>...</answer>` block."""
    found = None
    for m in _BLOCK.finditer(text):
        found = m
    return found


def block_claim(m: re.Match[str]) -> Claim | None:
    """The answer block's claim about f's result: `assert f(...) == X` or a bare literal X."""
    group = "body" if m.group("body") is not None else "body2"
    body = m.group(group)
    start = m.start(group)
    stripped = body.strip().strip("`").strip()
    am = _ASSERT.search(stripped)
    if am and is_literal(am.group("out")) and "??" not in am.group("out"):
        value = am.group("out").strip()
    elif is_literal(stripped):
        value = stripped
    else:
        return None
    return Claim(RETURN, stripped, value, start=start, end=start + len(body))


def thinking_end(text: str) -> int | None:
    """Where a reasoning model's thinking ends (`</think>`), if it is marked."""
    m = _THINK_END.search(text)
    return m.start() if m else None


def blank_think_tags(text: str) -> str:
    """The `<think>` tags themselves are markup, not words of the chain (offsets kept)."""
    return _THINK_TAGS.sub(lambda m: " " * len(m.group(0)), text)
