"""Python literals in free text, and comparing a claimed value with a traced one.

`scan_literal` reads one literal where it starts (strings with any quotes, numbers, containers,
`True`/`None`, `set()`), `claimed_value` the value a clause asserts ("= 'abc'", "which gives
[1, 2]"). Values compare as Python objects (`value_key`), so `'ab'` and `"ab"` agree,
`{1: 2, 3: 4}` and `{3: 4, 1: 2}` agree, but `1` and `True` do not.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Any

from cruxtui.core.reasoning.claim_types import EMPTY
from cruxtui.core.util import safe_ast

_NUMBER = re.compile(r"-?(?:\d+\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?|\.\d+)j?")
_KEYWORD = re.compile(r"(?:True|False|None)\b")
OPEN_BRACKETS = {"[": "]", "(": ")", "{": "}"}
_EMPTY_CALL = re.compile(r"(?:set|list|dict|tuple|frozenset)\(\)")


def scan_string(text: str, i: int) -> int | None:
    """End index (exclusive) of the string literal starting at text[i] (a quote), or None."""
    q = text[i]
    if text.startswith(q * 3, i):
        end = text.find(q * 3, i + 3)
        return None if end < 0 else end + 3
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == q:
            return j + 1
        if c == "\n":
            return None
        j += 1
    return None


MAX_DEPTH = 64
"""Brackets nested deeper than this are no literal a chain states (and `literal_eval` could not
read it anyway): giving up there keeps a run of unclosed brackets in untrusted text linear."""


def scan_balanced(text: str, i: int) -> int | None:
    """End index of the bracketed expression opening at text[i], skipping over string literals
    (None when it does not close, or nests deeper than `MAX_DEPTH`)."""
    stack = [OPEN_BRACKETS[text[i]]]
    j = i + 1
    while j < len(text):
        c = text[j]
        if c in "'\"":
            end = scan_string(text, j)
            if end is None:
                return None
            j = end
            continue
        if c in OPEN_BRACKETS:
            stack.append(OPEN_BRACKETS[c])
            if len(stack) > MAX_DEPTH:
                return None
        elif c in ")]}":
            if c != stack.pop():
                return None
            if not stack:
                return j + 1
        j += 1
    return None


def scan_literal(text: str, i: int) -> tuple[int, str] | None:
    """Read one Python literal starting at text[i] (after optional spaces/backticks).

    Returns (end index, literal text) when the text there is a literal that `ast.literal_eval`
    accepts; strings may carry a b/r/u prefix; `set()` and `dict()`/`list()`/`tuple()` count.
    """
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    tick = i < n and text[i] == "`"
    if tick:
        i += 1
    if i >= n:
        return None
    c = text[i]
    end: int | None = None
    if c in "'\"":
        end = scan_string(text, i)
    elif c in "bBrRuU" and i + 1 < n and text[i + 1] in "'\"":
        end = scan_string(text, i + 1)
    elif c in OPEN_BRACKETS:
        end = scan_balanced(text, i)
    elif m := (_KEYWORD.match(text, i) or _EMPTY_CALL.match(text, i)):
        end = m.end()
    elif m := _NUMBER.match(text, i):
        end = m.end()
        if end < n and (text[end].isalnum() or text[end] == "_"):
            return None  # "3rd", "2x", "5abc": not a number on its own
    if end is None:
        return None
    lit = text[i:end]
    if literal_value(lit) is _BAD:
        return None
    if tick:
        if end < n and text[end] == "`":
            end += 1
        else:
            return None
    return end, lit


class _Bad:
    def __repr__(self) -> str:
        return "<not a literal>"


_BAD = _Bad()
_EMPTY_CALLS: dict[str, object] = {
    "set()": set(),
    "list()": [],
    "dict()": {},
    "tuple()": (),
    "frozenset()": frozenset(),
}


def literal_value(text: str) -> object:
    """`ast.literal_eval` of text, or the `_BAD` marker (never raises)."""
    t = text.strip()
    if t in _EMPTY_CALLS:
        return _EMPTY_CALLS[t]
    try:
        return ast.literal_eval(t)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _BAD


def is_literal(text: str) -> bool:
    return literal_value(text) is not _BAD


# Words after which a value may end; anything else ("5 characters", "'a' times 3") voids the claim.
CLEAN_AFTER = re.compile(
    r"\s*(?:$|\.(?![\w(\[]|\.\.?-?\d)|[,;:!?)\]}\n]|(?:and|so|now|then|after|because|since|which|at|in|when|as|before|"
    r"for|while|but|thus|hence|therefore|here|again|too|still|(?:at|by) this point|from|on|"
    r"instead|unchanged|afterwards|in\s+total|overall|now|there|as\s+well|at\s+that\s+point|"
    r"in\s+that\s+iteration|this\s+time|yet|either|anyway|each\s+time|every\s+time)\b|\(|--|—|–"
    r"|(?:->|→|=>|⇒)\s*(?![-\d'\"\[({`]|(?:True|False|None)\b))|\s\|\s"
    # the end of inline code the value closes ("giving `changes = ['yes']`, so ...")
    r"|`(?=\s|$|[,.;:!?)])"
    # run-on notation: the next binding or the return begins ("count = 3 total = 6 return 6")
    r"|\s(?=[A-Za-z_]\w*\s*=(?!=)\s*[-\d'\"\[({]|return\s+[-\d'\"\[({])",
    re.I,
)
# Between an expression and its value: "'ab' + 'c' = 'abc'", "..., which gives 'abc'".
_RESULT_OF = re.compile(
    r"\s*(?:=(?!=)|->|→|=>|,?\s*which\s+(?:is|gives|equals|evaluates\s+to|yields|results\s+in)"
    r"|,?\s*(?:giving|yielding|resulting\s+in|i\.e\.|that\s+is)|,?\s*so\s+(?:it\s+)?(?:is|becomes))\s*",
    re.I,
)


def claimed_value(text: str, i: int, then_compared: bool = False) -> tuple[int, str] | None:
    """The value asserted at text[i:]: a literal ending cleanly, or the last literal of an expression
    chain ("'ab' + 'c' = 'abc'") within the clause. None when no value can be read with confidence.
    `then_compared`: the subject is no test, so a comparison written after its value ("= 6 > 4")
    starts another claim."""
    got = scan_literal(text, i)
    if got is not None and CLEAN_AFTER.match(text, got[0]):
        return got
    if then_compared and got is not None and _COMPARED.match(text, got[0]):
        return got  # "len(ls) * 2 = 6 > 4 -> True": 6 is stated, then compared
    # An expression first: look for "= <literal>" (or "which is <literal>") later in the clause.
    clause_end = _clause_end(text, i)
    j = i
    seg = i
    while True:
        m = _RESULT_OF.search(text, j, clause_end)
        if m is None:
            return None
        part = text[seg : m.start()]
        if not _is_expression(part) or is_literal(part.strip().strip("`")):
            # Words, not an expression ("is called with `x` = 1"), or a bare value followed by
            # another ("None -> True"): nothing is asserted with confidence.
            return None
        seg = m.end()
        got = scan_literal(text, m.end())
        if (
            got is not None
            and got[0] <= max(clause_end, got[0])
            and CLEAN_AFTER.match(text, got[0])
        ):
            # Prefer the last value of a chain "a = b = c".
            nxt = _RESULT_OF.match(text, got[0])
            if nxt and scan_literal(text, nxt.end()):
                j = got[0]
                continue
            return got
        j = m.end()


_COMPARED = re.compile(r"\s*(?:<=|>=|==|!=|<(?!-)|>)\s*[-\w'\"(\[]")


def _is_expression(text: str) -> bool:
    if re.search(r"\b(?:and|or|not|is|if|in|for)\b", text):
        return False  # words: "nums is not empty and count % 2 == 0" states no value of nums
    try:
        safe_ast.parse(text.strip().strip("`").strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_CLAUSE_WINDOW = 400
"""How far a clause is read for its value: run-on prose with no sentence punctuation would
otherwise make every claim read to the end of the text (quadratic in its length)."""


def _clause_end(text: str, i: int) -> int:
    """End of the sentence clause starting at i (a newline, or '.'/';' followed by a space),
    at most `_CLAUSE_WINDOW` characters on."""
    stop = min(len(text), i + _CLAUSE_WINDOW)
    m = re.compile(r"\n|[.;!?](?:\s|$)").search(text, i, stop)
    return m.start() if m else stop


class _Opaque:
    """A traced repr that is not a literal (an object, a cut value): never equal to a claim."""


OPAQUE = _Opaque()


def _canon(obj: object) -> object:
    """A hashable key equal for equal values of the same kind (dict order ignored, 1 != True)."""
    if isinstance(obj, bool) or obj is None:
        return ("atom", repr(obj))
    if isinstance(obj, int | float):
        return ("num", float(obj)) if obj == obj else ("nan",)
    if isinstance(obj, complex):
        return ("complex", obj.real, obj.imag)
    if isinstance(obj, str | bytes):
        return (type(obj).__name__, obj)
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, tuple(_canon(x) for x in obj))
    if isinstance(obj, set | frozenset):
        return ("set", _sorted([_canon(x) for x in obj]))
    if isinstance(obj, dict):
        return ("dict", _sorted([(_canon(k), _canon(v)) for k, v in obj.items()]))
    return ("other", repr(obj))


def _sorted(keys: list[Any]) -> tuple[Any, ...]:
    """Keys in a fixed order. Sorted as they are, never by their repr: a repr of a nested key's
    repr doubles its backslashes at every level (200 nested dicts would need 2**200 bytes)."""
    try:
        return tuple(sorted(keys))
    except TypeError:
        return tuple(sorted(keys, key=hash))


@lru_cache(maxsize=65536)
def value_key(text: str) -> object:
    """The comparison key of a repr/literal text, or `OPAQUE`."""
    if text == EMPTY:
        return OPAQUE
    obj = literal_value(text)
    if obj is _BAD:
        return OPAQUE
    try:
        return _canon(obj)
    except RecursionError:
        return OPAQUE


@lru_cache(maxsize=65536)
def _empty(text: str) -> bool | None:
    obj = literal_value(text)
    if obj is _BAD:
        return None
    try:
        return len(obj) == 0  # type: ignore[arg-type]
    except TypeError:
        return False


def agrees(claimed: str, true: str) -> bool | None:
    """Does the claimed value equal the traced one? None when it cannot be told (a value that is
    not a literal on either side)."""
    if claimed == EMPTY:
        return _empty(true)
    want, have = value_key(claimed), value_key(true)
    if want is OPAQUE or have is OPAQUE:
        return None
    return want == have
