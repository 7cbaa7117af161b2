"""The scratchpad format (docs/scratchpad.md, between `[SCRATCHPAD]` tags), parsed exactly, entry
by entry: `call f(a=1)`, `line N: x = 1; y = 'a'`, `line N: if c -> True`, `line N: (no change)`,
`return V`, `raise E`. An entry that does not follow the grammar becomes a step without claims
and a line in `Chain.problems`."""

from __future__ import annotations

import re

from cruxtui.core.reasoning.claim_types import (
    BINDING,
    CONDITION,
    RAISE,
    RETURN,
    SCRATCHPAD,
    Chain,
    Claim,
    ReasoningStep,
)
from cruxtui.core.reasoning.final_answer import answer_block, block_claim
from cruxtui.core.reasoning.literal_scan import is_literal, scan_balanced, scan_literal

_SCRATCH_RE = re.compile(r"\[SCRATCHPAD\](?P<body>.*?)(?:\[/SCRATCHPAD\]|$)", re.S)
_SP_LINE = re.compile(r"line\s+(?P<n>\d+)\s*:\s*(?P<rest>.*)$")
_SP_COND = re.compile(r"(?P<kw>if|while|elif)\s+(?P<cond>.*?)\s*->\s*(?P<truth>True|False)\s*$")
_SP_NAME = re.compile(r"\s*(?P<name>[A-Za-z_]\w*)\s*=\s*")


def _opaque_value(text: str, i: int, sep: str) -> tuple[int, str] | None:
    """A value that is not a literal but is what `repr()` shows for it: `<function <lambda> at
    0x..>`, `<map object at 0x..>`, `range(1, 5)`, or a value cut short with `…`. Kept as text (its claims are
    unverifiable) so a faithful scratchpad of such a run is not reported as malformed."""
    while i < len(text) and text[i] == " ":
        i += 1
    if text.startswith("<", i):
        depth = 0
        for j in range(i, len(text)):
            depth += {"<": 1, ">": -1}.get(text[j], 0)
            if depth == 0:
                return j + 1, text[i : j + 1]
        return None
    if call := re.compile(r"[A-Za-z_][\w.]*\(").match(text, i):  # range(1, 5), dict_values([])
        end = scan_balanced(text, call.end() - 1)
        return None if end is None else (end, text[i:end])
    nxt = re.compile(re.escape(sep) + r"\s*[A-Za-z_]\w*\s*=\s").search(text, i)
    end = nxt.start() if nxt else len(text)
    value = text[i:end].rstrip()
    return (i + len(value), value) if "…" in value else None


def _split_assignments(rest: str) -> list[tuple[str, str]] | None:
    """`a = 1; b = 'x;y'` -> [("a", "1"), ("b", "'x;y'")], or None if not that grammar."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(rest):
        m = _SP_NAME.match(rest, i)
        if not m:
            return None
        got = scan_literal(rest, m.end()) or _opaque_value(rest, m.end(), ";")
        if got is None:
            return None
        out.append((m.group("name"), got[1]))
        j = got[0]
        while j < len(rest) and rest[j] == " ":
            j += 1
        if j < len(rest):
            if rest[j] != ";":
                return None
            j += 1
        i = j
    return out or None


def parse_call_args(text: str) -> list[tuple[str, str]] | None:
    """`f(nums=[1, 1, 3], k=2)` -> [("nums", "[1, 1, 3]"), ("k", "2")] or None."""
    m = re.fullmatch(r"\s*f\((?P<args>.*)\)\s*", text, re.S)
    if not m:
        return None
    args = m.group("args").strip()
    if not args:
        return []
    pairs = []
    i = 0
    while i < len(args):
        nm = _SP_NAME.match(args, i)
        if not nm:
            return None
        got = scan_literal(args, nm.end()) or _opaque_value(args, nm.end(), ",")
        if got is None:
            return None
        pairs.append((nm.group("name"), got[1]))
        j = got[0]
        while j < len(args) and args[j] == " ":
            j += 1
        if j < len(args):
            if args[j] != ",":
                return None
            j += 1
        i = j
    return pairs


def parse_scratchpad(text: str) -> Chain | None:
    """Parse the `[SCRATCHPAD]` block of `text` exactly; None if the text has no scratchpad.

    Every entry becomes a reasoning step (so indices match the entries); an entry that does not follow
    the grammar becomes a step without claims and a line in `Chain.problems`.
    """
    m = _SCRATCH_RE.search(text)
    if not m:
        return None
    steps: list[ReasoningStep] = []
    problems: list[str] = []
    offset = m.start("body")
    for raw in m.group("body").splitlines(keepends=True):
        entry = raw.strip()
        start = offset + raw.find(entry) if entry else offset
        offset += len(raw)
        if not entry:
            continue
        step = ReasoningStep(len(steps), entry, start, start + len(entry))
        steps.append(step)
        problem = _parse_entry(entry, step)
        if problem:
            problems.append(f"entry {step.index}: {problem}: {entry[:60]}")
    for step in steps:
        for claim in step.claims:
            claim.start, claim.end, claim.source = step.start, step.end, SCRATCHPAD
    block = answer_block(text[m.end() :])
    if block is not None:
        answer = block_claim(block)
        if answer is not None:
            answer.start += m.end()
            answer.end += m.end()
            steps.append(
                ReasoningStep(
                    len(steps), block.group(0).strip(), answer.start, answer.end, claims=[answer]
                )
            )
    return Chain(text, "scratchpad", steps, problems)


def _parse_entry(entry: str, step: ReasoningStep) -> str | None:
    if entry.startswith("call "):
        pairs = parse_call_args(entry[5:])
        if pairs is None:
            return "expected `call f(<name>=<repr>, ...)`"
        step.at_call = True
        step.claims = [Claim(BINDING, f"{n} = {v}", v, name=n) for n, v in pairs]
        return None
    if entry.startswith("return ") or entry == "return":
        value = entry[len("return") :].strip()
        if not is_literal(value):
            return "return value is not a Python literal"
        step.claims = [Claim(RETURN, entry, value)]
        return None
    if entry.startswith("raise "):
        exc = entry[len("raise ") :].strip()
        step.claims = [Claim(RAISE, entry, exc)]
        return None
    lm = _SP_LINE.match(entry)
    if not lm:
        return "expected `call`, `line N:`, `return` or `raise`"
    step.line = int(lm.group("n"))
    rest = lm.group("rest").strip()
    if rest == "(no change)":
        return None
    cm = _SP_COND.match(rest)
    if cm:
        step.claims = [
            Claim(CONDITION, entry, cm.group("truth"), condition=cm.group("cond"), line=step.line)
        ]
        return None
    pairs = _split_assignments(rest)
    if pairs is None:
        return "expected `<name> = <repr>[; ...]`, `if/while <cond> -> True|False` or `(no change)`"
    step.claims = [Claim(BINDING, f"{n} = {v}", v, name=n, line=step.line) for n, v in pairs]
    return None
