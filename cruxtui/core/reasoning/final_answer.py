"""The answer a chain ends with, in the usual forms, and the thinking/answer split.

A chain's final answer is a claim about f's result like any other, and the one most often wrong,
so it must be found in whatever form it is written — even when the rest of the chain (a small
model's garbled code, say) cannot be read at all:

- an answer block: `[ANSWER] assert f(...) == X [/ANSWER]` (cruxtui's prompts; the closing tag
  may be missing or mistyped, `[/ANSWER>`), `<answer>X</answer>`; its body an assertion, a
  comparison `f(...) == X` or a bare value;
- an assertion `assert f(...) == X` anywhere, code fences included: a chain that ends on a test
  of f states its answer there (the scoring reads it the same way), though an assertion that is
  not the last answer given is only code;
- a call's value written out: `f(...) == X`, `f(...) = X`, `f(...) → X`, `print(f(...))  # X`;
- an answer line at the end: `Output: X`, `Result: X`, `=> X`, a `**Final Answer**` heading over
  the value, the bare value a reasoning model gives after its `</think>`, a fenced value after
  "the output will be:".

When a chain gives several answers, the last one given is the answer; earlier ones stay claims
where they are prose, and are context where they are code. Answer values are read as Python
literals, with the spellings people and models use for the constants (`TRUE`, `false`, `null`);
a template placeholder (`<value>`, `??`) is no answer. The answer is judged against f's real
result whatever the arguments written beside it (the scoring does the same); other calls of f
with other arguments (an input-task chain trying candidates) speak of another run and are
unverifiable (`other_calls`), and so is an answer read from code that tests another call. Prose sentences ("the output is X", "That list is returned") are
read by `prose_claims`.
"""

from __future__ import annotations

import ast
import difflib
import keyword
import re
from typing import Any

from cruxtui.core.reasoning.claim_types import RAISE, RETURN, Chain, Claim
from cruxtui.core.reasoning.code_facts import CHANGING
from cruxtui.core.reasoning.literal_scan import is_literal, literal_value, scan_literal
from cruxtui.core.scoring.answers import extract
from cruxtui.core.util import safe_ast

_CLOSE = r"(?:\[\s*/\s*ANSWER\s*[\]>]|</ANSWER>|\[\s*/\s*ANSWER\b)"
_BLOCK = re.compile(
    r"\[ANSWER\](?P<body>.*?)(?:"
    + _CLOSE
    + r"|\[ANSWER\]|$)|<answer>(?P<body2>.*?)(?:</answer>|$)",
    re.S | re.I,
)
_THINK_END = re.compile(r"</think>|</thinking>", re.I)
_THINK_TAGS = re.compile(r"</?think(?:ing)?>", re.I)
_PLACEHOLDER = re.compile(r"^\s*(?:<value>|\?\?+|\.\.\.|<output>|<answer>)\s*$", re.I)
_VALUE_TAGS = re.compile(r"^\s*<(value|output)>\s*(?P<inner>.*?)\s*(?:</\1>)?\s*$", re.I | re.S)
_WORD_CONSTANTS = {"true": "True", "false": "False", "null": "None", "none": "None"}


def answer_block(text: str) -> re.Match[str] | None:
    """The last `[ANSWER]...[/ANSWER]` or `<answer>...</answer>` block."""
    found = None
    for m in _BLOCK.finditer(text):
        found = m
    return found


def block_claim(m: re.Match[str]) -> Claim | None:
    """The answer block's claim about f's result: `assert f(...) == X`, `f(...) == X` or a bare X."""
    group = "body" if m.group("body") is not None else "body2"
    body = m.group(group)
    start = m.start(group)
    got = answer_value(body)
    if got is None:
        return None
    stripped = body.strip()
    lead = body.find(stripped) if stripped else 0
    return Claim(
        RETURN,
        stripped.strip("`").strip(),
        got,
        start=start + lead,
        end=start + lead + len(stripped),
    )


def answer_value(snippet: str) -> str | None:
    """The value an answer states: the right side of `assert f(...) == X` or `f(...) == X`, or
    a bare X, as a Python literal (None when there is none, or only a placeholder)."""
    # As scoring reads it; the template's `<value>` tags around a value are dropped only when
    # the text does not parse with them (inside a string literal they are its characters).
    got = extract(snippet, "output")
    value = literal_answer(got.answer) if got.ok and got.answer is not None else None
    if value is None:
        got = extract(re.sub(r"</?(?:value|output)>", " ", snippet, flags=re.I), "output")
        value = literal_answer(got.answer) if got.ok and got.answer is not None else None
    return value


def literal_answer(value: str) -> str | None:
    """`value` as a literal answer: constants as people spell them (`FALSE`, `true`), the
    template's `<value>` tags around a value removed; None for a placeholder or a non-literal."""
    value = value.strip().strip("`").strip().rstrip(".").strip()
    if m := _VALUE_TAGS.match(value):
        value = m.group("inner").strip()
    if not value or _PLACEHOLDER.match(value) or "??" in value:
        return None
    value = _WORD_CONSTANTS.get(value.lower(), value)
    if not is_literal(value) or literal_value(value) is Ellipsis:
        return None
    return value


_ASSERT_F = re.compile(r"(?<![\w.])assert\s+\(?\s*f\s*\(")
_CALL_F = re.compile(r"(?<![\w.])f\s*\(")
_ARROW = re.compile(
    r"\s*(?:==|=(?!=)|→|->|=>|⟶|⇒|,?\s+(?:we|you|I)\s+(?:get|obtain|end\s+up\s+with)\b)\s*", re.I
)
_PRINT_COMMENT = re.compile(
    r"^[ \t]*(?:>>>\s*)?(?:print\s*\(\s*)?f\s*\([^\n]*#\s*(?:(?:=>|->|→|output|result|returns?|gives|prints?)\s*:?\s*)?",
    re.I | re.M,
)
_REPL = re.compile(r"^[ \t]*>>>[ \t]*(?:print\s*\(\s*)?f\s*\([^\n]*\n[ \t]*(?P<v>[^\n]*\S)", re.M)
_FENCED_OUTPUT = re.compile(
    r"^[ \t>#*_-]*(?:(?:so|thus|hence|therefore|finally)\b,?\s*)?"
    r"(?:(?:(?:the|my|our)\s+)?(?:final\s+|expected\s+)?(?:output|result|answer|return\s+value)s?"
    r"(?:\s+of\s+`?f\([^\n]*?\)`?)?(?:\s+(?:is|will\s+be|would\s+be|should\s+be))?"
    r"|[^\n]*?(?:`?\bf\s*\([^\n]*\)`?|\bfunction\s+`f`|\bfunction\s+f\b|`f`)"
    r"(?:,?\s+it)?\s+(?:will\s+|would\s+|should\s+)?(?:returns?|outputs?|gives|produces|evaluates\s+to))"
    r"[*_ \t]*:[*_ \t]*\n[ \t]*(?P<fence>```|~~~)[^\n]*\n(?P<v>[^\n]*\S)[ \t]*\n[ \t]*(?P=fence)",
    re.I | re.M,
)
"""A heading over a fence that holds nothing but a value: "Output:", "The output is:", "Calling
f([1]) returns:", "if you call f([1]), it would return:" (a verb heading names f or its call; "the
function returns:" may speak of a rewrite)."""
_RAISE_COMMENT = re.compile(
    r"(?<![\w.])(?:print\s*\(\s*)?f\s*\(.*#\s*(?:raises?\s+(?:an?\s+)?)?"
    r"(?P<exc>[A-Z]\w*(?:Error|Exception))\b"
)


def call_end(text: str, open_paren: int) -> int | None:
    """The index just past the bracket closing the one at `open_paren` (None if unbalanced on
    its line)."""
    depth = 0
    quote: str | None = None
    j = open_paren
    while j < min(len(text), open_paren + 2000):
        c = text[j]
        if quote:
            if c == "\\":
                j += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "\n":
            return None
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return None


def answer_forms(text: str) -> list[Claim]:
    """Every place `text` states f's result in a formal way — an assertion, or a call with its
    value (`f(x) == 3`, `f(x) → 3`) — as RETURN claims with their spans, in text order. Code
    included: which of them count is for the caller to say (the last is the final answer)."""
    out: list[Claim] = []
    for m in _ASSERT_F.finditer(text):
        line_end = text.find("\n", m.start())
        line_end = len(text) if line_end < 0 else line_end
        snippet = text[m.start() : line_end]
        if m.start() > 0 and text[m.start() - 1] == "`" and "`" in snippet:
            snippet = snippet.split("`", 1)[0]
        cut = re.search(_CLOSE, snippet, re.I)
        if cut:
            snippet = snippet[: cut.start()]
        value = answer_value(snippet)
        if value is None:
            continue
        end = m.start() + len(snippet.rstrip())
        out.append(Claim(RETURN, text[m.start() : end], value, start=m.start(), end=end))
    for m in _CALL_F.finditer(text):
        if any(c.start <= m.start() < c.end for c in out):
            continue
        close = call_end(text, m.end() - 1)
        if close is None:
            continue
        arrow = _ARROW.match(text, close)
        if arrow is None:
            continue
        got = _value_at(text, arrow.end())
        if got is None:
            continue
        end, value = got
        out.append(Claim(RETURN, text[m.start() : end], value, start=m.start(), end=end))
    out.sort(key=lambda c: c.start)
    return out


def _comment_on_the_call(line: str) -> bool:
    """Does a line's result comment speak of f's result? Only when the line is the call itself,
    maybe printed (`f(x)  # 3`, `print(f(x))  # 3`); on `f(x) == [1]  # False` or
    `f(x).upper()  # 'AB'` it gives the value of the whole expression."""
    m = _CALL_F.search(line)
    close = call_end(line, m.end() - 1) if m else None
    if m is None or close is None:
        return False
    rest = line[close:].split("#", 1)[0]
    return re.fullmatch(r"[\s)]*", rest) is not None


def comment_answers(text: str, call: str | None = None) -> list[Claim]:
    """A call of f with its value or exception as the comment (`print(f(x))  # [3, 1]`,
    `f(x)  # => 'ab'`, `f(x)  # TypeError: ...`), a REPL's `>>> f(x)` with the value under it,
    a fenced value under "Output:": the chain's words about f's result inside code. A call of
    another shape than the traced `call` (a made-up example) is another run: no answer."""
    out: list[Claim] = []
    for m in _PRINT_COMMENT.finditer(text):
        if tests_another_call(m.group(0), call) or not _comment_on_the_call(m.group(0)):
            continue
        got = _value_at(text, m.end())
        if got is not None:
            end, value = got
            s = text.rfind("#", m.start(), m.end())
            out.append(Claim(RETURN, text[s:end], value, start=s, end=end))
    for m in list(_REPL.finditer(text)) + list(_FENCED_OUTPUT.finditer(text)):
        # `>>> f(x)` and the value on the next line; "Output:" over a fenced value.
        if tests_another_call(m.group(0), call):
            continue
        shown = literal_answer(m.group("v"))
        if shown is not None:
            out.append(
                Claim(RETURN, m.group("v").strip(), shown, start=m.start("v"), end=m.end("v"))
            )
    for m in _RAISE_COMMENT.finditer(text):
        if tests_another_call(m.group(0), call):
            continue
        line_end = text.find("\n", m.end())
        end = len(text) if line_end < 0 else line_end
        s = m.start("exc")
        out.append(Claim(RAISE, text[s:end].strip(), m.group("exc"), start=s, end=end))
    out.sort(key=lambda c: c.start)
    return out


_END_OF_VALUE = re.compile(
    r"\s*(?:$|\.(?![\w(\[])|[,;:!?)\]}`*✓✔]|\s(?:and|so|because|since|which|as|but)\b|#|\[)", re.M
)


_EMPTY_WORDS = re.compile(
    r"\s*(?:an?|the)\s+empty\s+(?P<t>list|string|str|dict|dictionary|tuple|set)\b", re.I
)
_EMPTY_VALUES = {"list": "[]", "string": "''", "str": "''", "dict": "{}", "dictionary": "{}"}
_EMPTY_VALUES |= {"tuple": "()", "set": "set()"}
_RETURNS_NAMELY = re.compile(
    r"(?:^|(?<=[.!?]\s))(?:the\s+function(?:\s+`?f`?)?|function\s+`?f`?|`?f(?:\([^\n()]*\))?`?)\s+"
    r"(?:will\s+)?returns?\s+[^.()\n]{0,50}\(\s*(?:in\s+this\s+case|here|i\.e\.|namely|that\s+is)\s*,?\s*",
    re.I | re.M,
)


def namely_returns(text: str) -> list[Claim]:
    """ "The function returns an arbitrary value (in this case, the empty string)": the value
    given in the parenthesis is f's result."""
    out = []
    for m in _RETURNS_NAMELY.finditer(text):
        got = _value_at(text, m.end())
        if got is not None and text[got[0] : got[0] + 1] == ")":
            out.append(Claim(RETURN, text[m.start() : got[0]], got[1], start=m.start(), end=got[0]))
    return out


_WORD_ANSWER = re.compile(
    r"(?:^|(?<=[.!?:]\s)|(?<=\n)|\b(?:that|so|thus|hence|and),?\s+)(?P<p>(?:the\s+|its\s+)?(?:final\s+)?"
    r"(?:output|result|answer|return\s+value))"
    r"(?:\s+(?:returned\s+)?(?:by|of)\s+`?f\([^\n`]*?\)`?)?\s+(?:is|will\s+be|would\s+be)\s*:?\s*"
    r"`(?P<v>[^`'\"\n()\[\]{}=<>#]*[A-Za-z][^`'\"\n()\[\]{}=<>#]*)`",
    re.I,
)
_PYTHON_WORDS = frozenset(
    dir(str) + dir(list) + dir(dict) + dir(set) + dir(__builtins__) + ["f", "true", "false", "none"]
)


def word_answers(text: str, names: frozenset[str] = frozenset()) -> list[Claim]:
    """ "You'll find that output is `ykdfhp`": a small model writes a string result bare in
    backticks, without its quotes. Read as that string — but only inferred (judged where f's
    result is a string), and never when the backticked word is a name: a variable of f, a
    method, a builtin, a keyword (`text`, `join`, `assert`) is a subject, not a value."""
    out = []
    for m in _WORD_ANSWER.finditer(text):
        word = m.group("v").strip()
        if not word or is_literal(word) or word.lower() in _WORD_CONSTANTS:
            continue
        tokens = re.findall(r"\w+", word)
        if any(t in names or t in _PYTHON_WORDS or keyword.iskeyword(t) for t in tokens):
            continue
        if not _END_OF_VALUE.match(text, m.end()):
            continue
        claim = Claim(RETURN, text[m.start("p") : m.end()], repr(word))
        claim.start, claim.end = m.start("p"), m.end()
        claim.inferred = True  # judged only where f's result is a string
        out.append(claim)
    return out


def _value_at(text: str, i: int) -> tuple[int, str] | None:
    """A literal answer value at text[i:] ending cleanly (a word constant counts: `FALSE`)."""
    got = scan_literal(text, i)
    if got is not None:
        end, lit = got
        value = literal_answer(lit)
    elif m := _EMPTY_WORDS.match(text, i):
        end, value = m.end(), _EMPTY_VALUES[m.group("t").lower()]
    else:
        m = re.compile(r"\s*`?(?P<w>true|false|null|none)\b`?", re.I).match(text, i)
        if m is None:
            return None
        end, value = m.end(), _WORD_CONSTANTS[m.group("w").lower()]
    if value is None or not _END_OF_VALUE.match(text, end):
        return None
    return end, value


_ANSWER_LINE = re.compile(
    r"(?:^|(?<=[.!?]\s)|(?<=,\s)(?=(?:so|thus|hence|therefore)\b))[ \t>*_#-]*"
    r"(?:(?:so|thus|hence|therefore|finally)\b,?\s*)?"
    r"(?:(?:(?:the|my|our)\s+)?(?:final\s+|expected\s+)?"
    r"(?P<noun>answer|output|result|return\s+value|value\s+returned"
    r"|(?:final|returned|returns?)(?=[*_ \t]*:))"
    r"(?:\s+of\s+(?:the\s+)?(?:function|f|call|`?f\([^\n]*?\)`?))?[*_ \t]*"
    r"(?:[:=]|is\b|will\s+be\b|would\s+be\b|should\s+be\b|→|->|=>|⇒)"
    r"|(?:the\s+function|f|it|`?f\([^\n]*?\)`?)\s+(?:will\s+|would\s+)?"
    r"(?:outputs?|returns?|gives|produces|prints|evaluates\s+to)\b"
    r"|returning\b|=>|→|->|⇒)[*_ \t]*",
    re.I | re.M,
)
_HEADING = re.compile(
    r"^[ \t>#*_-]*(?:(?:the\s+)?final\s+)?(?:answer|output|result)[*_ \t]*:?[*_ \t]*$"
    r"|\b(?:output|result|answer|returns?)\b[^:\n]*:[*_ \t]*$",
    re.I | re.M,
)
_FENCE_LINE = re.compile(r"^\s*(```|~~~)[\w+.-]*\s*$")


def closing_answer(text: str, start: int = 0, names: frozenset[str] = frozenset()) -> Claim | None:
    """The answer written as the chain's last words from `start` on: a last sentence `Output:
    X`, `Result: X`, `=> X`, "so the result will be X", "the function outputs X", or a heading
    ("**Final Answer**", "The output will be:") with the value (bare, bold or fenced) on the
    lines after. Only the end of a chain is read so: in the middle, "Result: ..." may be a
    step's. `names`: f's variables ("the result is" speaks of a variable `result`)."""
    lines = [
        (start + m.start(), start + m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*", text[start:])
    ]
    if not lines:
        return None
    if (
        len(lines) >= 3
        and _FENCE_LINE.match(text[lines[-1][0] : lines[-1][1]])
        and _FENCE_LINE.match(text[lines[-3][0] : lines[-3][1]])
    ):
        value_line = lines[-2]
        head_line = lines[-4] if len(lines) >= 4 else None
    else:
        ls, le = lines[-1]
        for m in _ANSWER_LINE.finditer(text, ls, le):
            noun = m.group("noun")
            if noun and noun.lower().replace(" ", "_") in names:
                continue
            got = _value_at(text, m.end())
            if got is not None and _at_end(text, got[0], le):
                return Claim(
                    RETURN, text[m.start() : got[0]].strip(), got[1], start=m.start(), end=got[0]
                )
        value_line = lines[-1]
        head_line = lines[-2] if len(lines) >= 2 else None
    bare = _bare_value(text, *value_line)
    if bare is None:
        return None
    if head_line is None or not _HEADING.search(text[head_line[0] : head_line[1]]):
        if value_line is lines[-1]:
            return None
        # A fence holding nothing but a value, the chain's last words, under no heading: the
        # answer shown, but only inferred (judged where it has the type of f's result).
        fenced = Claim(RETURN, text[value_line[0] : bare[0]].strip(), bare[1])
        fenced.start, fenced.end, fenced.inferred = value_line[0], bare[0], True
        return fenced
    return Claim(
        RETURN, text[head_line[0] : bare[0]].strip(), bare[1], start=head_line[0], end=bare[0]
    )


_CONCLUDES = re.compile(
    r"(?:,\s*|\s)(?:giving|which\s+gives|that\s+gives|gives|yields?|yielding|we\s+get|you\s+get|"
    r"we\s+end\s+up\s+with|we\s+are\s+left\s+with|leaving|resulting\s+in|results?\s+in|"
    r"produces?|producing)\s+",
    re.I,
)


def concluding_value(text: str) -> Claim | None:
    """The value a chain ends on when it states no answer in any form: the last sentence's
    result ("Each item doubles, giving [2, 4].", "..., so we end up with [2, 4]"), the literal being the
    chain's last words. Only for a chain with no other answer: a chain asked for f's output ends
    with it."""
    body = text.rstrip()
    if not body:
        return None
    tail_start = max(
        body.rfind("\n"), max(body.rfind(". ", 0, len(body) - 1), body.rfind("? ")) + 1
    )
    best = None
    for m in _CONCLUDES.finditer(body, max(0, tail_start)):
        got = _value_at(body, m.end())
        if got is not None and _at_end(body, got[0], len(body)):
            best = Claim(
                RETURN, body[m.start() : got[0]].strip(" ,:"), got[1], start=m.start(), end=got[0]
            )
            best.inferred = True  # judged only where the value has the type of f's result
            break
    if best is not None:
        best.start += len(body[best.start :]) - len(body[best.start :].lstrip(" ,:"))
    return best


def _at_end(text: str, i: int, line_end: int) -> bool:
    """Nothing but punctuation or a closing remark ("✓") after a value at the end of its line."""
    return re.fullmatch(r"[\s.!*_`)\]✓✔]*", text[i:line_end]) is not None


def _bare_value(text: str, ls: int, le: int) -> tuple[int, str] | None:
    """A line holding nothing but a value (bold or backticked allowed)."""
    line = text[ls:le]
    inner = line.strip().strip("*_").strip()
    value = literal_answer(inner)
    if value is None:
        return None
    return le, value


TYPE_PREFIX = "<type "
"""A claimed value that is only a type ("the function returns a list of ..."): `<type list>`."""
_TYPE_NOUNS = {
    "list": "list",
    "string": "str",
    "str": "str",
    "tuple": "tuple",
    "dict": "dict",
    "dictionary": "dict",
    "set": "set",
    "integer": "int",
    "int": "int",
    "boolean": "bool",
    "bool": "bool",
    "float": "float",
}
_RETURNS_TYPE = re.compile(
    r"(?:^|(?<=[.!?:]\s)|(?<=\n))[ \t>*_-]*(?:so\s+|thus\s+|hence\s+|therefore,?\s+)?"
    r"(?:the\s+function(?:\s+`?f`?)?|function\s+`?f`?|`?f(?:\([^\n()]*\))?`?"
    r"|(?P<it>(?:when\s+(?:you|we)\s+call\s+[^\n]{1,80}?,\s*)?it))\s+"
    r"(?:always\s+|will\s+|then\s+)?returns\s+(?:an?|one)\s+"
    r"(?:(?P<empty>empty)\s+|(?:new|single|sorted|reversed|modified|plain|python|non-empty|nonempty)\s+)?"
    r"(?P<noun>" + "|".join(sorted(_TYPE_NOUNS, key=len, reverse=True)) + r")\b(?!\s*\(|\.\w)",
    re.I | re.M,
)


def type_claims(text: str) -> list[Claim]:
    """ "The function returns a list of the first counts": f's result is of that type ("an
    empty list": that value). Only for f named as the subject at the head of a sentence (never
    "it", "this function" — a rewritten one — or a hedge: "check if f() returns a list")."""
    out = []
    for m in _RETURNS_TYPE.finditer(text):
        it = m.group("it")
        if it and not (_CALL_F.search(it) or _F_SUBJECT.match(_sentence_before(text, m.start()))):
            continue  # "it" is f only in "when you call f(x), it ..." or after a sentence on f
        noun = _TYPE_NOUNS[m.group("noun").lower()]
        start = m.start() + len(m.group(0)) - len(m.group(0).lstrip(" \t>*_-"))
        empty = _EMPTY_VALUES.get(m.group("noun").lower()) if m.group("empty") else None
        if m.group("empty") and empty is None:
            continue  # "an empty integer": no such value
        value = empty if empty is not None else f"{TYPE_PREFIX}{noun}>"
        out.append(Claim(RETURN, text[start : m.end()], value, start=start, end=m.end()))
    return out


def type_verdict(claimed: str, true: str) -> bool | None:
    """Is the traced value `true` of the type a type claim names? None when it cannot be told
    (not a literal; an int claimed for a bool, which is one)."""
    name = claimed[len(TYPE_PREFIX) : -1]
    obj = literal_value(true)
    if not is_literal(true):
        return None
    have = type(obj).__name__
    if name == "int" and have == "bool":
        return None
    return have == name


def answer_after_thinking(text: str) -> Claim | None:
    """The answer part after a reasoning model's `</think>` when it is nothing but a value: the
    thinking ended, what follows is the answer."""
    m = _THINK_END.search(text)
    if m is None:
        return None
    rest = text[m.end() :]
    body = rest.strip()
    if not body or "\n" in body:
        return None
    s = m.end() + rest.find(body)
    got = _bare_value(text, s, s + len(body))
    if got is None:
        return None
    return Claim(RETURN, body, got[1], start=s, end=got[0])


def other_calls(
    chain: Chain, call: str, final: Claim | None = None, target: str | None = None
) -> None:
    """Claims of f's result that name a call of f with other arguments than the traced `call`
    ("f([1]) = [2], too small; f([1, 2]) = [2, 4]") speak of another run: unverifiable. The
    final answer is exempt: it is f's answer for the task whatever arguments it repeats. For
    the input task (`target`: the output asked for), f's result stated as the target before the
    answer, of a call naming no input ("find x such that f(x) == [8, 1]"), is the question
    restated, not a claim about the proposed run."""
    want = _call_args(call)
    if want is None:
        return
    in_code = final is not None and any(a <= final.start < b for a, b in chain.code_spans)
    if final is not None and in_code and tests_another_call(final.text, call):
        final.subject_f = False  # (parsed without the call)
    goal = literal_value(target) if target is not None and is_literal(target) else None
    for c in chain.claims:
        if c.kind not in (RETURN, RAISE) or c.source != "prose":
            continue
        if c is final:
            # The final answer is f's answer whatever arguments it repeats, unless it names a
            # call of another shape (a made-up example): that is another run.
            if tests_another_call(c.text, call) or (
                _CALL_F.search(c.text) is None
                and (
                    _sentence_of_another_call(chain, c, want, call)
                    or _for_another_input(chain.text, c, want, call)
                )
            ):
                c.subject_f = False
            continue
        m = _CALL_F.search(c.text)
        if (
            goal is not None
            and c.kind == RETURN
            and is_literal(c.value)
            and literal_value(c.value) == goal
            and (m is None or not names_a_call(c.text))
        ):
            c.subject_f = False
            continue
        if m is None:
            if _sentence_of_another_call(chain, c, want) or _for_another_input(chain.text, c, want):
                c.subject_f = False
            continue
        close = call_end(c.text, m.end() - 1)
        if close is None:
            continue
        named = _call_args(c.text[m.start() : close])
        if named is not None and named != want:
            c.subject_f = False


_FOR_INPUT = re.compile(
    r"`?\s+(?:for|on|with|when\s+(?:given|called\s+(?:with|on)|passed|applied\s+to))\s+"
    r"(?:an?\s+input\s+of\s+|the\s+)?(?:input\s+|string\s+|list\s+|number\s+)?(?=[-\d'\"\[({])",
    re.I,
)
"""An input named after a result: "... for '123'", "... when given an input of 0"."""


def _for_another_input(
    text: str, claim: Claim, want: Any, misquoted_from: str | None = None
) -> bool:
    """ "It would return True for '123'": a result stated for an input written after it, which
    is not the traced call's (its only argument), speaks of that run."""
    if want[1] or len(ast.literal_eval(want[0])) != 1:
        return False  # an input written alone names one argument: only f's only one
    m = _FOR_INPUT.match(text, claim.end)
    got = scan_literal(text, m.end()) if m else None
    if got is None or not is_literal(got[1]):
        return False
    other = f"f({got[1]})"
    if _call_args(other) == want:
        return False
    return misquoted_from is None or tests_another_call(other, misquoted_from)


def _sentence_of_another_call(
    chain: Chain, claim: Claim, want: Any, misquoted_from: str | None = None
) -> bool:
    """Does the sentence of a result claim that names no call itself ("[2, 3] is returned",
    "the final answer would be [2, 3]") name a call of f with other arguments, and not the
    traced one ("If we call f([1, 1]), [2, 3] is returned")? Then it speaks of that run. For
    the final answer (`misquoted_from`: the traced call), a call that could be a misquote of
    it does not count."""
    step = next((st for st in chain.steps if st.start <= claim.start < st.end), None)
    if step is None:
        return False
    others = False
    for m in _CALL_F.finditer(chain.text, step.start, step.end):
        close = call_end(chain.text, m.end() - 1)
        named = _call_args(chain.text[m.start() : close]) if close is not None else None
        if named is None:
            continue
        if named == want:
            return False
        if misquoted_from is None or tests_another_call(
            chain.text[m.start() : close], misquoted_from
        ):
            others = True
    return others


def tests_another_call(text: str, call: str | None) -> bool:
    """Does `text` (an answer read from code) test a call of f of another shape than the traced
    `call`? An answer from code (no answer block: an `assert f(...) == X` of a fenced block) is
    the chain's answer when it tests the traced call, even misquoted (small models copy an input
    wrongly); a call of another shape (other arity, other argument types) is code about another
    run — a made-up example, a rewritten f's own test — and its value no answer."""
    if call is None:
        return False
    m = _CALL_F.search(text)
    close = call_end(text, m.end() - 1) if m else None
    if m is None or close is None:
        return False
    named = _call_shape(text[m.start() : close])
    if named is None:
        return False
    if named != _call_shape(call):
        return True
    # Of the same shape: a misquote keeps most of the input ('ThisIsSoAtroctive' for
    # 'ThisIsSoAtrocious'); another input ('2568' for '03625163633 d') is another run.
    got, want = _call_args(text[m.start() : close]), _call_args(call)
    if got is None or want is None:
        return False
    return difflib.SequenceMatcher(None, _bare_args(got[0]), _bare_args(want[0])).ratio() < 0.5


def _bare_args(args_repr: str) -> str:
    """The arguments' text without the quotes and brackets every call of the shape shares."""
    return re.sub(r"""[\s'"(),\[\]{}]""", "", args_repr)


def tests_the_call(text: str, call: str | None) -> bool:
    """Does `text` hold an assertion about exactly the traced `call` (its value readable or
    not: `assert f([1, 2]) == [f(5), 1]`)? Then that is where the chain answers, and tests of
    other inputs beside it are other runs."""
    want = _call_args(call) if call else None
    if want is None:
        return False
    for m in _ASSERT_F.finditer(text):
        paren = text.find("(", m.end() - 1)
        close = call_end(text, paren) if paren >= 0 else None
        start = text.rfind("f", m.start(), paren + 1)
        if close is not None and _call_args(text[start:close]) == want:
            return True
    return False


def same_call(text: str, call: str | None) -> bool:
    """Does `text` name f with exactly the traced call's arguments?"""
    want = _call_args(call) if call else None
    m = _CALL_F.search(text)
    close = call_end(text, m.end() - 1) if m else None
    return (
        want is not None
        and m is not None
        and close is not None
        and (_call_args(text[m.start() : close]) == want)
    )


def names_a_call(text: str) -> bool:
    """Does `text` write out a call of f with literal arguments (`f('ab', 2)`, `f()`)?"""
    m = _CALL_F.search(text)
    close = call_end(text, m.end() - 1) if m else None
    if m is None or close is None:
        return False
    src = text[m.start() : close]
    return _call_args(src) is not None or re.fullmatch(r"f\s*\(\s*\)", src) is not None


def _call_args(call: str) -> Any:
    """The arguments of `f(...)` as values (None when they are not all literals, e.g. names:
    "f(text)" speaks of f in general)."""
    try:
        node = safe_ast.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call) or not (node.args or node.keywords):
        return None
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = tuple(
            sorted((k.arg or "", repr(ast.literal_eval(k.value))) for k in node.keywords)
        )
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
    if any(a is Ellipsis for a in args):
        return None
    return repr(args), kwargs


def _call_shape(call: str) -> tuple[str, ...] | None:
    """The types of a literal call's positional arguments: a misquoted input keeps its shape
    (a stray keyword added to it too: `f('ab', f='ab')`), a call of f on something else
    usually does not."""
    try:
        node = safe_ast.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call):
        return None
    try:
        args = [ast.literal_eval(a) for a in node.args]
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
    if any(a is Ellipsis for a in args):
        return None  # `f(...)`: the call asked about, its arguments left out
    return tuple(type(a).__name__ for a in args)


def final_claim(chain: Chain) -> Claim | None:
    """The chain's final answer: the last RETURN/RAISE claim in text order."""
    found = None
    for c in chain.claims:
        if (
            c.kind in (RETURN, RAISE)
            and not c.retracted
            and (found is None or c.start >= found.start)
        ):
            found = c
    return found


def thinking_end(text: str) -> int | None:
    """Where a reasoning model's thinking ends (`</think>`), if it is marked."""
    m = _THINK_END.search(text)
    return m.start() if m else None


def blank_think_tags(text: str) -> str:
    """The `<think>` tags themselves are markup, not words of the chain (offsets kept)."""
    return _THINK_TAGS.sub(lambda m: " " * len(m.group(0)), text)


NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
"""Numbers as people write them in words, for answers ("f returns zero") and counts ("the loop
runs thirteen times")."""
NUMBER_ALT = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
"""The words as a regex alternation, longest first: "seventeen" is not "seven"."""
KIND_NOUNS: dict[str, type | None] = {
    "input": None,
    "argument": None,
    "value": None,
    "list": list,
    "array": list,
    "string": str,
    "str": str,
    "dict": dict,
    "dictionary": dict,
    "tuple": tuple,
    "set": set,
    "number": int,
    "integer": int,
}
"""What kind of value a noun names ("the same list", "that string"); None: any kind."""
_DESCRIBED = re.compile(
    r"(?:^|(?<=[.!:]\s)|(?<=\n)|(?<=,\s)(?=(?:so|thus|hence|therefore|which)\b)"
    r"|(?<=\s)(?=(?:so|thus|hence|therefore)\s))[ \t>*_-]*"
    r"(?:(?:so|thus|hence|therefore|finally|in\s+the\s+end|in\s+this\s+case|overall)\b,?\s+)*"
    r"(?:(?P<subj>(?:the|this)\s+function(?:\s+`?f`?)?|function\s+`?f`?|`?f(?:\([^\n]*?\))?`?|it"
    r"|(?:the\s+)?(?:original|given)\s+(?:function|code)(?:\s+`?f`?)?|which)"
    r"(?:,?\s+(?:then|simply|just|always|now|here|in\s+this\s+case|for\s+this\s+input),?)*"
    r"\s+(?:will\s+(?:simply\s+|just\s+)?)?"
    r"(?:return|returns|outputs?|gives\s+back|evaluates\s+to)"
    r"|(?:the\s+|its\s+)?(?:final\s+)?(?:output|result|answer|return\s+value)"
    r"(?:\s+of\s+`?f\([^\n`]*?\)`?)?\s+(?:is|will\s+be))\s+"
    r"(?P<desc>(?:an?|the)\s+empty\s+(?P<empty>list|string|str|dict|dictionary|tuple|set)"
    r"|`?(?P<const>nothing|none|true|false)`?"
    r"|(?P<num>" + NUMBER_ALT + r")"
    r"|(?:the\s+|its\s+)?(?:original|same|unchanged|unmodified)\s+(?:input\s+)?`?(?P<orig>\w+)`?"
    r"(?:\s+(?:unchanged|unmodified|as\s+it\s+was(?:\s+(?:passed|given))?))?"
    r"|(?:the\s+|its\s+)?(?:input\s+)?`?(?P<kept>\w+)`?\s+(?:unchanged|unmodified))"
    r"(?:\s*\((?P<paren>[^()\n]*)\))?"
    r"(?:,?\s+(?:here|(?:in|for|as)\s+(?:this|the|its|our)\s+(?:\w+\s+)?"
    r"(?:case|input|call|example|output|result|answer)s?))?"
    r"(?=\s*(?:[.!](?:\s|$)|$|,?\s+(?:because|since|as)\b|,\s*which\b))",
    re.I | re.M,
)


def passed_args(call: str | None, params: list[str]) -> dict[str, object] | None:
    """f's arguments in `call` by parameter name (positional ones named by `params` in order),
    those that are literals; None when `call` is no call or passes more than `params` take."""
    if not call:
        return None
    try:
        node = safe_ast.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call) or len(node.args) > len(params):
        return None
    named = [
        *zip(params, node.args, strict=False),
        *((k.arg, k.value) for k in node.keywords if k.arg),
    ]
    out: dict[str, object] = {}
    for name, arg in named:
        try:
            out[name] = ast.literal_eval(arg)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            continue
    return out


def _arguments(code: str, call: str) -> dict[str, str] | None:
    """f's parameters and the literal values the call passes them (None when f or the call
    cannot be read, or an argument is not a literal)."""
    try:
        tree = safe_ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    fn = next((d for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == "f"), None)
    if fn is None or fn.args.vararg or fn.args.kwarg:
        return None
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    given = passed_args(call, params)
    if given is None or len(given) != len(params):
        return None  # not all literals, or a default stands for one: "the input" is not said
    return {p: repr(v) for p, v in given.items()}


def _argument_named(noun: str, args: dict[str, str]) -> str | None:
    """The one argument "the original <noun>" denotes: a parameter by its name, else the only
    argument of that kind ("the input": f's only argument)."""
    if noun in args:
        return args[noun]
    kind = KIND_NOUNS.get(noun.lower(), Ellipsis)
    if kind is Ellipsis:
        return None
    fits = [v for v in args.values() if kind is None or type(literal_value(v)) is kind]
    if kind is None and len(args) != 1:
        return None
    return fits[0] if len(fits) == 1 else None


def _changed_in_place(code: str, name: str) -> bool:
    """Does f change its argument `name` in place (`name.append(..)`, `name[i] = ..`,
    `name += ..`)? "The original list" is then the same object, holding another value."""
    try:
        tree = safe_ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = node.func.value
            if isinstance(base, ast.Name) and base.id == name and node.func.attr in CHANGING:
                return True
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and t.id == name and isinstance(node, ast.AugAssign):
                return True
            if isinstance(t, (ast.Subscript, ast.Attribute)):
                while isinstance(t, (ast.Subscript, ast.Attribute)):
                    t = t.value
                if isinstance(t, ast.Name) and t.id == name:
                    return True
    return False


def _rewritten_before(text: str, at: int, code: str) -> bool:
    """Does a function other than f as given (a rewrite, a helper) appear before `at`? "The
    function" may then be that one."""
    source = {ln.strip() for ln in code.splitlines() if ln.strip()}
    for m in re.finditer(r"^[ \t]*def\s+\w+\s*\(", text[:at], re.M):
        indent = len(m.group(0)) - len(m.group(0).lstrip())
        for ln in text[m.start() : at].splitlines():
            if ln.strip().startswith("```"):
                break
            if ln.strip() and ln.strip() not in source:
                if len(ln) - len(ln.lstrip()) <= indent and not ln.lstrip().startswith("def"):
                    break  # the block ended
                return True
    return False


_VAGUE_F = re.compile(
    r"[ \t>*_-]*(?:(?:so|thus|hence|then|finally|therefore|in\s+this\s+case|here)\b,?\s+)*"
    r"(?:(?:the|this|that)\s+(?:new\s+|simpler\s+|rewritten\s+)?(?:function|code|version)(?!\s+`?f\s*\()"
    r"|`?f`?(?!\s*\()|it)\b",
    re.I,
)


def of_a_rewrite(text: str, claim: Claim, code: str) -> bool:
    """Is a result claim's subject "this function", "the function", "it" or a bare `f` after the
    chain wrote a function of its own (a rewrite, a helper)? It may then be that one's result
    ("Here is a simpler version: ... This function returns [4, 5]"); "the original function"
    and a call written out (`f([3, 4]) returns ...`) still name f as given."""
    return _VAGUE_F.match(claim.text) is not None and _rewritten_before(text, claim.start, code)


_F_SUBJECT = re.compile(
    r"[ \t>*_-]*(?:(?:so|thus|hence|then|first|next|finally|in\s+this\s+case)\b,?\s+)*"
    r"(?:(?:the|this)\s+function\b|function\s+`?f\b|`?f(?:\([^\n]*?\))?`?\s)",
    re.I,
)


def _sentence_before(text: str, at: int) -> str:
    """The sentence that ends just before `at`."""
    head = text[:at].rstrip()
    cut = max(head.rfind(". ", 0, len(head) - 1), head.rfind("\n"), head.rfind("! "))
    return head[cut + 1 :].lstrip() if cut >= 0 else head.lstrip()


_OF_F = re.compile(r"(?:\bf`?|\bfunction`?|\bf\([^\n()]*\)`?)\s*,\s*$", re.I)
"""A relative clause's antecedent is f: "`f`, which", "the function, which", "f(x), which"."""


def described_answer(prose: str, text: str, code: str, call: str | None) -> Claim | None:
    """The last commitment to f's result in words that denote one value: "the function returns
    nothing", "f returns zero", "the output is an empty dict", "it returns the original list"
    (the argument as passed), "the function returns the input unchanged". f (or its output) must
    be the sentence's subject and the sentence a plain statement (no hedge, no condition, no
    question), in prose; a description that does not pin a value ("a list of the numbers") is
    none. `prose`: the chain with code blanked; `text`: as written."""
    found = list(_DESCRIBED.finditer(prose))
    if not found:
        return None
    m = found[-1]
    value: str | None
    if m.group("empty"):
        value = _EMPTY_VALUES[m.group("empty").lower()]
    elif m.group("const"):
        value = ({"nothing": "None"} | _WORD_CONSTANTS)[m.group("const").lower()]
    elif m.group("num"):
        value = str(NUMBER_WORDS[m.group("num").lower()])
    else:
        noun = m.group("orig") or m.group("kept")
        args = _arguments(code, call) if call else None
        value = _argument_named(noun, args) if args else None
        said_unchanged = m.group("kept") or re.search(
            r"unchanged|unmodified|as\s+it\s+was", m.group("desc"), re.I
        )
        if value is not None and not said_unchanged:
            same = [p for p, v in (args or {}).items() if v == value]
            if any(_changed_in_place(code, p) for p in same):
                value = None  # "the same list": the object, changed
    if value is None:
        return None
    paren = (m.group("paren") or "").strip().strip("`").strip()
    if is_literal(paren) and repr(literal_value(paren)) != repr(literal_value(value)):
        return None  # two values given: which one is meant is not said
    subj = (m.group("subj") or "").lower()
    if subj == "it" and not _F_SUBJECT.match(_sentence_before(prose, m.start())):
        return None  # "it" is f only when the sentence before speaks of f
    if subj == "which" and not _OF_F.search(prose, max(0, m.start() - 40), m.start()):
        return None  # "which" is f only in a clause on f: "the `f` function, which returns ..."
    if subj in ("it", "which", "the function", "this function") and _rewritten_before(
        text, m.start(), code
    ):
        return None
    start = m.start() + len(m.group(0)) - len(m.group(0).lstrip(" \t>*_-"))
    return Claim(RETURN, text[start : m.end()], value, start=start, end=m.end())


_CLAUSE = r"(?:^|(?<=[.!?;:]\s)|(?<=\n)|(?<=,\s)|(?<=\bso\s)|(?<=\band\s)|(?<=->\s)|(?<=→\s))"
_ADVERB = r"(?:therefore|thus|hence|then|now|simply|just|finally|clearly|again|indeed)"
_NOUN_ANSWER = re.compile(
    _CLAUSE + r"[ \t>*_-]*(?:(?:so|thus|hence|therefore|finally)\b,?\s+)?"
    r"(?P<head>(?:(?:the|my|our)\s+|(?P<poss>(?:the\s+)?(?:function|call|f|`f`)'s\s+))?"
    r"(?P<final>final\s+|expected\s+)?"
    r"(?P<noun>answer|output|result|return\s+value|returned\s+value|value\s+returned)"
    r"(?P<of>\s+of\s+(?:the\s+)?(?:function|call|f\b|`?f\([^\n`]*?\)`?))?)"
    r"(?:,?\s+" + _ADVERB + r",?)?[*_]*"
    r"\s*(?:is|will\s+be|would\s+be|=|:|→|->|=>|⇒)[*_]*\s*(?:"
    + _ADVERB
    + r",?\s+)?(?P<dollar>\$?)",
    re.I | re.M,
)
_THE_CALL = re.compile(
    _CLAUSE + r"(?:(?:so|thus|hence|therefore|finally)\b,?\s+)?the\s+(?:whole\s+)?call\s+"
    r"(?:(?:then|thus|therefore|finally)\s+)?(?:returns|gives|evaluates\s+to|yields|produces)\s+",
    re.I | re.M,
)
_VALUE_IS_ANSWER = re.compile(
    r"`?\s+(?:(?:is|gets)\s+(?:what\s+(?:f|the\s+function)\s+returns|returned(?!\s+(?:by|from))"
    r"|(?:the\s+)?(?:final\s+)?(?:output|answer|return\s+value))\b|returned(?!\s+(?:by|from))\b)"
    r"|`?,?\s+which\s+(?:f|the\s+function)\s+(?:then\s+|finally\s+)?returns\b",
    re.I,
)
CONDITIONED = re.compile(
    r"`?\s*,?\s*(?:when(?:ever)?(?!\s+(?:given|called|passed|applied|run|we\s+(?:call|pass|run|give)))"
    r"|if|only\s+(?:if|when)|unless|provided|as\s+long\s+as|in\s+case)\b"
    r"|`?\s+for\s+(?:any|all|every|each|such|other|(?:\w+\s+)?(?:strings|lists|inputs|numbers|values|"
    r"words|arguments|cases|items|elements|characters|dicts|dictionaries|integers|texts))\b",
    re.I,
)
"""A result stated under a condition or for a class of inputs: a rule of f, not this run's."""
_ANSWER_HEADING = re.compile(
    r"^[ \t>#*_-]*(?:(?:the|my)\s+)?final\s+(?:answer|output|result)[*_ \t]*:?[*_ \t]*$"
    r"|^[ \t>#*_-]*answer[*_ \t]*:[*_ \t]*$",
    re.I | re.M,
)


def stated_answers(text: str, names: frozenset[str] = frozenset()) -> list[Claim]:
    """f's result stated in prose anywhere, in the grammar of an answer: a noun of the answer
    ("the answer", "the function's output", "the return value", "the final result") with a
    copula or an arrow and a value ("The answer is therefore [1]", "output -> [1]", "the final
    answer is $[1]$"); "the call evaluates to [1]"; the value as the clause's subject ("[1] is
    returned", "[1] is the output", "... -> [1] returned", "giving [1], which f returns"); an
    "Answer:" or "Final answer" heading over a line holding only the value. "The result is"
    without "final", "of f" or a possessive may be a step's; a noun that is one of f's variables
    (`names`) is that variable."""
    out: list[Claim] = []
    for m in _NOUN_ANSWER.finditer(text):
        noun = m.group("noun").lower()
        if noun.replace(" ", "_") in names and not (m.group("poss") or m.group("of")):
            continue
        if noun == "result" and not (m.group("final") or m.group("poss") or m.group("of")):
            continue
        got = _value_at(text, m.end())
        if got is None and m.group("dollar"):
            lit = scan_literal(text, m.end())
            if lit is not None and text.startswith("$", lit[0]):
                got = (lit[0] + 1, lit[1]) if literal_answer(lit[1]) else None
        if got is None:
            continue
        s = m.start("head")
        out.append(Claim(RETURN, text[s : got[0]], got[1], start=s, end=got[0]))
    for m in _THE_CALL.finditer(text):
        got = _value_at(text, m.end())
        if got is not None:
            out.append(Claim(RETURN, text[m.start() : got[0]], got[1], start=m.start(), end=got[0]))
    for m in _VALUE_IS_ANSWER.finditer(text):
        found = _literal_ending(
            text, m.start(), clause=not m.group(0).lstrip("`, ").startswith("which")
        )
        reduced = re.match(r"`?\s+returned", m.group(0)) is not None  # "X returned"
        if CONDITIONED.match(text, m.end()):
            continue  # "'Half Life' is returned whenever 0 < num < 1000": f's rule, not this run
        if found is not None and not _names_other_code(text, found[0], bare_words=reduced):
            s, value = found
            out.append(Claim(RETURN, text[s : m.end()], value, start=s, end=m.end()))
    for m in _ANSWER_HEADING.finditer(text):
        nxt = re.compile(r"[ \t]*\n(?P<v>[^\n]*\S)[ \t]*(?:\n|$)").match(text, m.end())
        if nxt is None:
            continue
        bare = _bare_value(text, nxt.start("v"), nxt.end("v"))
        if bare is not None:
            out.append(
                Claim(
                    RETURN, text[m.start() : bare[0]].strip(), bare[1], start=m.start(), end=bare[0]
                )
            )
    return out


def _names_other_code(text: str, at: int, bare_words: bool) -> bool:
    """Does the sentence before `at` name a method or a builtin ("text.split(',') is called and
    ['a'] is returned", "`split` gives ..."; with `bare_words`, "split -> ['a'] returned" too)?
    The value returned may then be that call's."""
    head = re.split(r"[.!?]\s|\n", text[max(0, at - 80) : at])[-1]
    if re.search(r"[\w\])'\"]\.\w+\(|\.[a-z_]+\b|\b(?!f\b)[A-Za-z_]\w*\(", head):
        return True
    words = re.findall(r"`([A-Za-z_]\w*)`", head)
    if bare_words:
        words += re.findall(r"[A-Za-z_]\w*", head)
    return any(w in _PYTHON_WORDS and w not in ("f", "true", "false", "none") for w in words)


_CLAUSE_OPEN = re.compile(r"(?:[.!?;:,\n]|\bso|\band|->|→)$")
_LITERAL_START = re.compile(r"[-\d'\"\[({]|True\b|False\b|None\b")


def _literal_ending(text: str, at: int, clause: bool) -> tuple[int, str] | None:
    """The literal that ends just at `at` (a closing backtick allowed), starting a clause when
    `clause` (so "... 5, and [1] is returned" reads [1], not the 5 or a literal inside it)."""
    head = text[max(0, at - 400) : at]
    base = at - len(head)
    for k in range(len(head)):
        if not _LITERAL_START.match(head, k):
            continue
        if k > 0 and (head[k - 1].isalnum() or head[k - 1] in "_.'\"[({,-"):
            continue
        got = scan_literal(text, base + k)
        if got is None or got[0] != at:
            continue
        value = literal_answer(got[1])
        if value is None:
            return None
        lead = text[max(0, base + k - 40) : base + k].rstrip(" `*")
        at_start = not lead and base + k <= 40  # the text opens with the value
        if clause and not (at_start or _CLAUSE_OPEN.search(lead)):
            return None
        return base + k, value
    return None


_INPUT_IS = re.compile(
    r"\b(?:the|an?|one|my|our)\s+(?:possible\s+|valid\s+|suitable\s+|correct\s+|final\s+|such\s+)?"
    r"(?:input|argument)(?:\s+(?:that\s+works|list|string|value|we\s+need))?\s*[*_]*"
    r"(?:,?\s+(?:therefore|thus|then|then,|so),?)?\s*(?:is|should\s+be|would\s+be|could\s+be|=|:)[*_]*\s*",
    re.I,
)


def stated_input(text: str, call: str | None) -> tuple[int, int] | None:
    """Input task: where the chain names its proposed input without writing the call ("so the
    input is [3, 5]", "one possible input is 'ab'"): the span of the last such value that is the
    traced call's only argument. Proposing it claims that f on it gives the target."""
    want = _call_args(call) if call else None
    if want is None or want[1]:
        return None
    found = None
    for m in _INPUT_IS.finditer(text):
        start = m.end() + (1 if text[m.end() : m.end() + 1] == "`" else 0)
        got = scan_literal(text, start)
        if got is None or not _END_OF_VALUE.match(text, got[0]):
            continue
        if is_literal(got[1]) and repr((literal_value(got[1]),)) == want[0]:
            found = (start, got[0])
    return found
