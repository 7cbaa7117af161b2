"""Self-corrections: "wait, actually ...", "no — ...", "let me recompute: ..." take back what
they correct, so the slip a chain retracts is not reported as its first divergence.

A claim is retracted when, after a correction marker and within a couple of sentences, the chain
states the same subject again with a *different* value ("x is 4. Wait, actually x is 3"), or
when the marker says outright that what came just before was wrong and states nothing new
("That's not right." retracts the previous sentence). A re-check that restates the same value
("let me double-check: x = 4, yes") retracts nothing, so a slip confirmed twice is still found
where it was first made.
"""

from __future__ import annotations

import re
from dataclasses import replace

from cruxtui.core.reasoning.claim_types import Claim
from cruxtui.core.reasoning.literal_scan import CLEAN_AFTER, literal_value, scan_literal, value_key

_MARKER = re.compile(
    r"\b(?:wait|oops|whoops|correction|scratch\s+that|on\s+second\s+thought|"
    r"no[,:]|no\s*[—–-]|no\s+wait|wrong\b|mistake\b|(?:my|an|the)\s+(?:error|slip)\b|\bI\s+forgot\b|"
    r"\bI\s+(?:dropped|ignored|overlooked|skipped|missed|left\s+out)\b|"
    r"(?:that|this)\s+(?:ignores|ignored|forgets|forgot|drops|dropped|misses|missed|skips|skipped)\b|"
    r"re-?reading\b|(?:fix|correct)\s+that\b|or\s+rather\b|double[-\s]?check(?:ing)?\b|(?:^|(?<=[.!]\s))(?<!\.\.\s)(?:hmm+,?\s+)?no\.(?=\s|$)|er+,|erm,|um,|I\s+mean\b|(?:^|(?<=[.!?]\s))actually,|I\s+(?:made\s+(?:a|an)\s+(?:mistake|error|slip)|"
    r"mis(?:read|counted|calculated|computed|spoke|took))|let\s+me\s+(?:re-?check|recount|redo|"
    r"recompute|re-?examine|reconsider|correct|re-?calculate|re-?evaluate|re-?do|fix)|"
    r"(?:that|this)(?:'s|\s+is|\s+was)\s+(?:wrong|not\s+right|incorrect|a\s+mistake|an\s+error)|"
    r"I\s+was\s+wrong|not\s+quite|correcting|nope|was\s+about\s+to\s+say|hold\s+on|"
    r"(?:that|this|it)(?:\s+(?:doesn't|does\s+not|can't|cannot|won't)\s+(?:look|be|seem|sound)|"
    r"(?:'s|\s+is)\s+not|(?:'s|\s+is)n't)\s+right|(?:that|this)(?:'s|\s+is)\s+off\b)",
    re.I | re.M,
)
_OUTRIGHT = re.compile(
    r"\bno,?\s+wait\b|\bwait,?\s+no\b|\bno\s*[—–-]|\bnope\b|\bwas\s+about\s+to\s+say\b|"
    r"(?:^|(?<=[.!]\s))(?<!\.\.\s)(?:hmm+,?\s+)?no\.(?=\s|$)|"
    r"(?:that|this)(?:'s|\s+is|\s+was)\s+(?:wrong|not\s+right|incorrect|a\s+mistake|an\s+error)|"
    r"I\s+(?:made\s+(?:a|an)\s+(?:mistake|error|slip)|was\s+wrong|mis\w+)|scratch\s+that|oops|whoops|"
    r"(?:that|this|it)\s+(?:doesn't|does\s+not|can't|cannot)\s+(?:look|be|seem|sound)\s+right|"
    r"(?:that|this)(?:'s|\s+is)\s+off\b",
    re.I,
)


def corrected_after(text: str, lo: int, hi: int) -> bool:
    """Does a correction marker ("wait", "no, ...", "oops", ...) occur in text[lo:hi]?"""
    return _MARKER.search(text, lo, hi) is not None


def _subject(c: Claim) -> tuple[str, str]:
    if c.kind == "return":
        return ("return", "")
    return (c.kind if c.kind != "condition" else "condition", c.name or c.condition or "")


def _same_subject(a: Claim, b: Claim) -> bool:
    """The same subject, or the same method call written two ways (`'ok'.isupper()` and the
    code's `word.isupper()` named as "isupper")."""
    if _subject(a) == _subject(b):
        return True
    if {a.kind, b.kind} - {"condition", "expression"}:
        return False
    ma = re.findall(r"\.(\w+)\(", a.name or a.condition or "")
    mb = re.findall(r"\.(\w+)\(", b.name or b.condition or "")
    return bool(ma and mb and ma[-1] == mb[-1] and len(ma) == len(mb) == 1)


def retract(text: str, claims: list[Claim], sentences: list[tuple[int, int]]) -> list[Claim]:
    """Mark `claims` (in text order, with spans) retracted where a later self-correction takes
    them back; return the corrections that restate a claim's value without naming its subject in
    a way the claim reader knows ("x is 4. Wait, no, it's 5", "... wait, actually istitle is
    True"): the corrected subject with the new value, to be judged in its place."""
    restated: list[Claim] = []
    for m in _MARKER.finditer(text):
        here = _sentence_index(sentences, m.start())
        if here is None:
            continue
        # The zone the correction restates things in: its sentence and the next one.
        zone_end = sentences[min(here + 1, len(sentences) - 1)][1]
        back_start = sentences[max(0, here - 3)][0]
        earlier = [c for c in claims if back_start <= c.start < m.start() and not c.retracted]
        later = [c for c in claims if m.start() <= c.start < zone_end]
        if not earlier:
            continue
        retracted_any = False
        fix = _restatement(text, earlier[-1], m.end(), zone_end)
        if fix is not None and not any(k.start < fix.end for k in later):
            earlier[-1].retracted = True
            restated.append(fix)
            claims.append(fix)
            claims.sort(key=lambda c: c.start)
            continue
        for c in earlier:
            again = [k for k in later if _same_subject(k, c)]
            if again and all(value_key(k.value) != value_key(c.value) for k in again[:1]):
                c.retracted = True
                retracted_any = True
        for c in earlier:
            # "length = len(new_text) = 3 — no, ... length = 4": one worked line states the
            # value of both; taking back the variable's takes back the expression's too.
            if not c.retracted and any(
                k.retracted and k.start < c.end and c.start < k.end and k.value == c.value
                for k in earlier
            ):
                c.retracted = True
        outright = _OUTRIGHT.search(text, max(0, m.start() - 12), m.end() + 12)
        if not retracted_any and outright:
            # "Wait, no — ...", "That's wrong.": what was said just before is taken back: the
            # rest of this sentence before the marker, else the previous sentence.
            same = [c for c in earlier if c.start >= sentences[here][0]]
            if same:
                for c in same:
                    c.retracted = True
            else:
                prev = _sentence_index(sentences, earlier[-1].start)
                for c in earlier:
                    if _sentence_index(sentences, c.start) == prev:
                        c.retracted = True
    return restated


_COPULA = re.compile(
    r"(?:\bis|'s|\bare|(?<![=!<>])=(?!=)|\bequals|\bgives|\breturns|\bbecomes|\bshould\s+be|"
    r"\bmust\s+be|\bcomes\s+out\s+(?:as|to)|\bevaluates\s+to)\s+(?:actually\s+|really\s+|just\s+)?",
    re.I,
)
_PRONOUN = re.compile(
    r"^[\s,:;—–-]*(?:(?:it|that|this|the\s+value|the\s+result|the\s+answer)\b)?[\s,]*$", re.I
)
_FILLER = re.compile(
    r"(?:[\s,:;—–.!-]|\b(?:no|nope|actually|hmm+|oh|ah|sorry|wait|I\s+mean|rather|correction)\b)*",
    re.I,
)
_HEDGED = re.compile(r"\b(?:if|were|would|might|could|suppose|maybe|perhaps|or)\b", re.I)
_RESTATABLE = frozenset(["binding", "expression", "condition", "return"])


def _restatement(text: str, claim: Claim, lo: int, hi: int) -> Claim | None:
    """The correction after a marker, when it gives `claim`'s subject a new value of the same
    type and names that subject only by a pronoun or by a word of it ("istitle" for
    `''.istitle()`): a claim the reader could not read alone."""
    if claim.kind not in _RESTATABLE or claim.retracted:
        return None
    end = min(hi, _clause_stop(text, lo, hi))
    lo = _FILLER.match(text, lo).end()  # type: ignore[union-attr]
    bare = scan_literal(text, lo)
    if bare is not None and _BARE_END.match(text, bare[0]):
        # "count is 2? no, 3.", "2, err, 3": the new value alone, the subject unchanged.
        return _corrected(text, claim, lo, bare)
    m = _COPULA.search(text, lo, end)
    if m is None:
        return None
    words = text[lo : m.start()]
    if len(words) > 50 or _HEDGED.search(words) or not re.fullmatch(r"[A-Za-z_'\s,]*", words):
        # Words only: a correction that writes an expression of its own has its own subject.
        return None
    own = set(re.findall(r"[A-Za-z_]\w+", " ".join(filter(None, [claim.name, claim.condition]))))
    named = set(re.findall(r"[A-Za-z_]\w+", words)) & own
    if not named and not _PRONOUN.match(words):
        return None
    got = scan_literal(text, m.end())
    if got is None or not CLEAN_AFTER.match(text, got[0]):
        return None
    return _corrected(text, claim, lo, got)


_BARE_END = re.compile(
    r"[ \t]*(?:[.!;)]|,\s+(?:so|and|then|since|because|as)\b|\s+(?:so|then)\b|$)", re.M
)
"""A value alone ends its correction: the end of the clause, or its consequence ("so ...")."""


def _corrected(text: str, claim: Claim, lo: int, got: tuple[int, str]) -> Claim | None:
    """`claim` with the value `got` (end, literal) stated at `lo`, when it is another value of
    the same type."""
    value = got[1]
    old, new = literal_value(claim.value), literal_value(value)
    if type(old) is not type(new) or value_key(value) == value_key(claim.value):
        return None
    return replace(
        claim,
        text=text[lo : got[0]].strip(" ,"),
        value=value,
        start=lo,
        end=got[0],
        retracted=False,
        asked=False,  # "x is 4? no, 5": the question asked, the correction states
    )


def _clause_stop(text: str, lo: int, hi: int) -> int:
    """Where the correction's sentence ends."""
    stop = re.compile(r"[.!?](?:\s|$)|\n").search(text, lo, hi)
    return stop.start() if stop else hi


def _sentence_index(sentences: list[tuple[int, int]], i: int) -> int | None:
    for k, (s, e) in enumerate(sentences):
        if s <= i < e:
            return k
        if i < s:
            return k
    return len(sentences) - 1 if sentences else None
