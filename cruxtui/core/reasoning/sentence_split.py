"""Splitting prose into reasoning steps: sentences and lines, never inside a literal, and a
sentence that moves on to another loop iteration midway split there."""

from __future__ import annotations

import re

from cruxtui.core.reasoning.literal_scan import OPEN_BRACKETS, scan_balanced, scan_string


def split_steps(text: str) -> list[tuple[int, int]]:
    """Split prose into (start, end) spans of sentences and lines, never inside a literal.

    A quote opens a literal only where a literal can start (after a space, bracket, `=`, `:`, `(`...),
    so apostrophes in "it's" or "don't" do not swallow the rest of the text.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "'\"" and (i == 0 or not text[i - 1].isalnum()):
            end = scan_string(text, i)
            if end is not None:
                i = end
                continue
        if c in OPEN_BRACKETS:
            end = scan_balanced(text, i)
            if end is not None and "\n\n" not in text[i:end]:
                i = end
                continue
        if c == "\n" or (c in ".!?;" and (i + 1 == n or text[i + 1] in " \t\n")):
            if c in ".!?" and _is_abbreviation(text, i):
                i += 1
                continue
            if c == ";" and _CONDITIONAL.search(text, max(start, i - 200), i):
                i += 1  # "Suppose a were 0; then ...": the consequence is still supposed
                continue
            spans.append((start, i + 1))
            start = i + 1
        i += 1
    spans.append((start, n))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


_CONDITIONAL = re.compile(
    r"\b(?:if|suppose|supposing|assume|assuming|imagine|otherwise|unless|were|would|had\s+been)\b",
    re.I,
)
"""A clause that supposes: a semicolon after it does not end the sentence (terse chains
otherwise join clauses with semicolons, each a statement of its own)."""


def _is_abbreviation(text: str, i: int) -> bool:
    if (
        text[i] == "."
        and text[max(0, i - 2) : i] == ".."
        and re.match(r"[ \t]+[a-z]", text[i + 1 :])
    ):
        return True  # "''.isalnum()... so it's True": a thinking pause, the sentence goes on
    if text[i] == "." and re.fullmatch(
        r"[ \t]*(?:\d{1,3}|[a-z])", text[text.rfind("\n", 0, i) + 1 : i]
    ):
        return True  # "4. This string is returned": a list number, not a sentence
    before = text[max(0, i - 5) : i + 1].lower()
    return before.endswith(("e.g.", "i.e.", "etc.", "vs.")) or (
        i > 0 and text[i - 1].isdigit() and i + 1 < len(text) and text[i + 1].isdigit()
    )


_ITER_WORDS = re.compile(
    r"\b(?:(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
    r"\d+(?:st|nd|rd|th))\s+(?:iteration|pass|round|loop\s+iteration|time\s+through)|"
    r"(?:iteration|pass|round)\s*#?\s*\d+)\b",
    re.I,
)


def split_at_iterations(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A sentence that moves on to another iteration midway ("x is 3, and in the second iteration
    i = 1") becomes two steps, so each claim is read in its own iteration."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        cuts = []
        for m in _ITER_WORDS.finditer(text, s, e):
            if m.start() - s <= 10:
                continue
            before = re.search(
                r"[,;]\s*(?:and\s+|then\s+)?(?:in\s+|on\s+|for\s+|during\s+)?(?:the\s+)?$",
                text[s : m.start()],
                re.I,
            )
            if before:
                cuts.append(s + before.start() + 1)
        start = s
        for cut in cuts:
            out.append((start, cut))
            start = cut
            while start < e and text[start] in " \t":
                start += 1
        out.append((start, e))
    return out
