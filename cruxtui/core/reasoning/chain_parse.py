"""Reading a chain of thought: ordered reasoning steps and the checkable claims in them.

Two inputs are understood. A **scratchpad** (the format in CONTRACTS.md, between `[SCRATCHPAD]` tags) is
parsed exactly, entry by entry, with malformed entries reported. **Free prose** is split into sentences
and lines; claims are found by patterns that only fire on a *known variable name* followed by a binding
verb and a *Python literal* ending cleanly (so "text is 5 characters long" or "the length of text is 5"
claim nothing). Anything the patterns cannot read with confidence is left out: an unread claim costs a
missed divergence, a misread one costs a false alarm on a correct chain, which is worse.

No value is judged here; `cruxtui.core.reasoning.alignment` holds the claims against a trace.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from cruxtui.core.util import safe_ast

BINDING = "binding"
CONDITION = "condition"
RETURN = "return"
RAISE = "raise"
ITERATION = "iteration"
LOOP_COUNT = "loop_count"


@dataclass
class Claim:
    """One checkable statement, e.g. `x = [1, 2]`, `6173 < 1000 -> False`, `returns 'ab'`.

    `value` is the claimed value as Python literal text ("True"/"False" for conditions, the ordinal for
    an iteration, the count for a loop count). `text` is the span of the chain the claim was read from.
    """

    kind: str
    text: str
    value: str
    name: str | None = None
    condition: str | None = None
    line: int | None = None
    ordinal: int | None = None
    subject_f: bool = True
    """For return claims: False when the subject may be a helper or a method rather than `f`."""
    change: bool = False
    """For bindings: worded as a change ("becomes", "is now", "is set to"), not a plain statement."""

    def describe(self) -> str:
        if self.kind == BINDING:
            return f"{self.name} = {self.value}"
        if self.kind == CONDITION:
            return f"{self.condition or 'condition'} -> {self.value}"
        if self.kind == RETURN:
            return f"returns {self.value}"
        if self.kind == RAISE:
            return f"raises {self.value}"
        if self.kind == ITERATION:
            return f"iteration {self.value}"
        return f"loop runs {self.value} times"


@dataclass
class ReasoningStep:
    """A sentence, line or scratchpad entry, with its place in the original text."""

    index: int
    text: str
    start: int
    end: int
    claims: list[Claim] = field(default_factory=list)
    line: int | None = None
    """Source line named by a scratchpad entry (`line N: ...`)."""
    iteration: int | None = None
    """Ordinal of the loop iteration the step speaks of ("in the second iteration" -> 2)."""
    after_loop: bool = False
    """The step speaks of the state once a loop has finished ("after the loop, ...")."""
    at_call: bool = False
    """The step states the arguments as bound at the call (scratchpad `call f(...)`, "initially")."""
    code_refs: list[str] = field(default_factory=list)
    """Backticked source code the step quotes ("running `x += 1`"): where in the code it is."""


@dataclass
class Chain:
    """A parsed chain of thought."""

    text: str
    format: str  # "prose" | "scratchpad"
    steps: list[ReasoningStep]
    problems: list[str] = field(default_factory=list)
    """Scratchpad entries that do not follow the grammar, as `entry N: reason` lines."""

    @property
    def claims(self) -> list[Claim]:
        return [c for s in self.steps for c in s.claims]


# --------------------------------------------------------------------------- literals

_NUMBER = re.compile(r"-?(?:\d+\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?|\.\d+)j?")
_KEYWORD = re.compile(r"(?:True|False|None)\b")
_OPEN = {"[": "]", "(": ")", "{": "}"}
_EMPTY_CALL = re.compile(r"(?:set|list|dict|tuple|frozenset)\(\)")


def _scan_string(text: str, i: int) -> int | None:
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


def _scan_balanced(text: str, i: int) -> int | None:
    """End index of the bracketed expression opening at text[i], skipping over string literals."""
    stack = [_OPEN[text[i]]]
    j = i + 1
    while j < len(text):
        c = text[j]
        if c in "'\"":
            end = _scan_string(text, j)
            if end is None:
                return None
            j = end
            continue
        if c in _OPEN:
            stack.append(_OPEN[c])
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
        end = _scan_string(text, i)
    elif c in "bBrRuU" and i + 1 < n and text[i + 1] in "'\"":
        end = _scan_string(text, i + 1)
    elif c in _OPEN:
        end = _scan_balanced(text, i)
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
_EMPTY_CALLS = {
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
_CLEAN_AFTER = re.compile(
    r"\s*(?:$|[.,;:!?)\]}\n]|(?:and|so|now|then|after|because|since|which|at|in|when|as|before|"
    r"for|while|but|thus|hence|therefore|here|again|too|still|(?:at|by) this point|from|on|"
    r"instead|unchanged|afterwards|in\s+total|overall|now)\b|\(|--|—|–)",
    re.I,
)
# Between an expression and its value: "'ab' + 'c' = 'abc'", "..., which gives 'abc'".
_RESULT_OF = re.compile(
    r"\s*(?:==|=|->|→|=>|,?\s*which\s+(?:is|gives|equals|evaluates\s+to|yields|results\s+in)"
    r"|,?\s*(?:giving|yielding|resulting\s+in|i\.e\.|that\s+is)|,?\s*so\s+(?:it\s+)?(?:is|becomes))\s*",
    re.I,
)


def claimed_value(text: str, i: int) -> tuple[int, str] | None:
    """The value asserted at text[i:]: a literal ending cleanly, or the last literal of an expression
    chain ("'ab' + 'c' = 'abc'") within the clause. None when no value can be read with confidence."""
    got = scan_literal(text, i)
    if got is not None and _CLEAN_AFTER.match(text, got[0]):
        return got
    # An expression first: look for "= <literal>" (or "which is <literal>") later in the clause.
    clause_end = _clause_end(text, i)
    j = i
    while True:
        m = _RESULT_OF.search(text, j, clause_end)
        if m is None:
            return None
        if not _is_expression(text[i : m.start()]):
            return (
                None  # words, not an expression: "is called with `x` = 1", "2 works: ... == 'cdab'"
            )
        got = scan_literal(text, m.end())
        if (
            got is not None
            and got[0] <= max(clause_end, got[0])
            and _CLEAN_AFTER.match(text, got[0])
        ):
            # Prefer the last value of a chain "a = b = c".
            nxt = _RESULT_OF.match(text, got[0])
            if nxt and scan_literal(text, nxt.end()):
                j = got[0]
                continue
            return got
        j = m.end()


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text.strip().strip("`").strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _clause_end(text: str, i: int) -> int:
    """End of the sentence clause starting at i (a newline, or '.'/';' followed by a space)."""
    m = re.compile(r"\n|[.;!?](?:\s|$)").search(text, i)
    return m.start() if m else len(text)


# --------------------------------------------------------------------------- names in the code


def code_names(code: str) -> set[str]:
    """Variable names of the code (parameters, assignment/loop/with targets, comprehension vars)."""
    try:
        tree = safe_ast.parse(code)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def code_conditions(code: str) -> list[str]:
    """Source text of the code's `if` / `while` tests."""
    try:
        tree = safe_ast.parse(code)
    except SyntaxError:
        return []
    return [
        ast.get_source_segment(code, n.test) or ""
        for n in ast.walk(tree)
        if isinstance(n, ast.If | ast.While)
    ]


# --------------------------------------------------------------------------- splitting prose


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
            end = _scan_string(text, i)
            if end is not None:
                i = end
                continue
        if c in _OPEN:
            end = _scan_balanced(text, i)
            if end is not None and "\n\n" not in text[i:end]:
                i = end
                continue
        if c == "\n" or (c in ".!?" and (i + 1 == n or text[i + 1] in " \t\n")):
            if c in ".!?" and _is_abbreviation(text, i):
                i += 1
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


def _is_abbreviation(text: str, i: int) -> bool:
    before = text[max(0, i - 5) : i + 1].lower()
    return before.endswith(("e.g.", "i.e.", "etc.", "vs.")) or (
        i > 0 and text[i - 1].isdigit() and i + 1 < len(text) and text[i + 1].isdigit()
    )


# --------------------------------------------------------------------------- prose claims

_BIND_VERB = (
    r"(?:(?:is\s+|gets\s+|was\s+)?(?:incremented|decremented|increased|decreased|reduced|extended|"
    r"updated|changed|set|reset|grown|doubled|shortened|trimmed|converted|modified)\s+to"
    r"|(?:goes|go|went)\s+(?:up|down)\s+to|(?:increases|decreases|grows|shrinks|rises|drops)\s+to"
    r"|now\s+(?:reads|looks\s+like)|(?:is\s+(?:now\s+)?)?equal\s+to"
    r"|becomes|will\s+be|would\s+be|remains|stays|gets(?:\s+set\s+to)?|equals|holds|contains"
    r"|has\s+(?:the\s+)?value|(?:now\s+)?(?:becomes|equals|holds)|turns\s+into|changes\s+to"
    r"|(?:is|gets|was)\s+(?:re)?assigned(?:\s+to)?|ends\s+up\s+(?:as|being)|:=|=(?!=)|->|→|:"
    r"|(?:now\s+)?is\s+(?:now\s+|then\s+|still\s+|set\s+to\s+|updated\s+to\s+|changed\s+to\s+|"
    r"equal\s+to\s+|initiali[sz]ed\s+to\s+|initially\s+|bound\s+to\s+|going\s+to\s+be\s+)?)"
)
_CHANGE_VERB = re.compile(
    r"becomes|\bnow\b|updated|changes|changed|set\s+to|:=|->|→|turns\s+into|incremented|decremented|"
    r"increased|decreased|reduced|extended|grown|doubled|shortened|trimmed|converted|modified|"
    r"(?:goes|go|went)\s+(?:up|down)|increases|decreases|grows|shrinks|rises|drops",
    re.I,
)
_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
}
_ITER_RE = re.compile(
    r"\b(?:(?P<word>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
    r"twelfth)|(?P<num>\d+)(?:st|nd|rd|th))\s+(?:iteration|pass|round|loop\s+iteration|time\s+through)"
    r"|\b(?:iteration|pass|round)\s*#?\s*(?P<num2>\d+)\b",
    re.I,
)
_AFTER_LOOP_RE = re.compile(
    r"\b(?:after\s+(?:the\s+)?(?:whole\s+|entire\s+)?(?:loop|iterations)|once\s+the\s+loop\s+"
    r"(?:is\s+)?(?:done|finishe[sd]|ends|is\s+over|completes)|when\s+the\s+loop\s+(?:is\s+done|ends|"
    r"finishes|is\s+over)|the\s+loop\s+(?:ends|is\s+over|terminates|finishes|is\s+done|stops|exits)|"
    r"at\s+the\s+end\s+of\s+the\s+loop|(?:we\s+)?exit\s+the\s+loop|out\s+of\s+the\s+loop|"
    r"loop\s+(?:has\s+)?(?:finished|completed|terminated))",
    re.I,
)
_AT_CALL_RE = re.compile(
    r"\b(?:initially|at\s+the\s+start|to\s+begin\s+with|the\s+(?:function\s+)?(?:is\s+)?called\s+with"
    r"|we\s+call\s+f|the\s+input\s+is|the\s+arguments?\s+(?:is|are))\b",
    re.I,
)
_LINE_REF_RE = re.compile(r"\b(?:after|on|in|at|executing|running)\s+line\s+(\d+)\b", re.I)
_LOOP_COUNT_RE = re.compile(
    r"\bloop\s+(?:runs|executes|iterates|goes\s+round|repeats)\s+(?P<n>\d+|once|twice|"
    r"one|two|three|four|five|six|seven|eight|nine|ten)\s+times?\b",
    re.I,
)
_COUNT_WORDS = {
    "once": 1,
    "one": 1,
    "twice": 2,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}

_TRUTH_WORDS = (
    r"true|false|satisfied|not\s+satisfied|unsatisfied|met|not\s+met|fulfilled|not\s+fulfilled"
)
_TRUTH = r"(?P<truth>" + _TRUTH_WORDS + ")"
_TRUTH2 = r"(?P<truth2>" + _TRUTH_WORDS + ")"
# "<cond> is False", "<cond> evaluates to True", "<cond> -> True", "<cond>, which is false".
_COND_TRUTH_RE = re.compile(
    r"(?:,\s*which\s+|\s+)(?:is|evaluates\s+to|returns|holds\s+as|comes\s+out(?:\s+as)?|gives|yields)"
    r"\s+(?:therefore\s+|thus\s+|also\s+)?`?"
    + _TRUTH
    + r"\b`?|\s*(?:->|→|=>)\s*`?"
    + _TRUTH2
    + r"\b",
    re.I,
)
_COND_HOLDS_RE = re.compile(
    r"\bthe\s+(?:if\s+|while\s+|loop\s+)?condition\s+(?:`[^`]*`\s+)?(?:is|evaluates\s+to|holds)\s+"
    r"(?:therefore\s+|thus\s+)?"
    + _TRUTH
    + r"\b|\bthe\s+condition\s+(?P<neg>does\s+not|doesn't)\s+hold\b"
    r"|\bthe\s+condition\s+holds\b",
    re.I,
)
_BRANCH_RE = re.compile(
    r"\b(?:(?P<enter>we\s+(?:enter|go\s+into|execute)|(?:we\s+)?(?:enter|go\s+into)|entering)\s+the\s+"
    r"(?:if|branch|block|body|if[-\s](?:block|body|branch))"
    r"|(?P<skip>(?:we\s+)?(?:skip|don't\s+enter|do\s+not\s+enter|bypass)\s+the\s+"
    r"(?:if|branch|block|body|if[-\s](?:block|body|branch)))"
    r"|the\s+(?:if[-\s])?(?:branch|block|body)\s+is\s+(?P<taken>taken|executed|entered|run)"
    r"|the\s+(?:if[-\s])?(?:branch|block|body)\s+is\s+(?P<skipped>skipped|not\s+(?:taken|executed|"
    r"entered|run)|bypassed))\b",
    re.I,
)
_COND_SHAPE = re.compile(
    r"(?:<=|>=|==|!=|<|>|\bnot\s+in\b|\bin\b|\bis\s+(?:not\s+)?(?:None|list|str|dict|int|tuple|set|float|bool)\b"
    r"|\.(?:startswith|endswith|is[a-z]+)\()"
)
_RETURN_RE = re.compile(
    r"(?P<subj>\bthe\s+function\s+(?:f\s+)?|\bfunction\s+f\s+|`?\bf\([^\n]*?\)`?\s+|\bf\s+|\bit\s+|"
    r"\bthis\s+|\bwe\s+|\bso\s+|\bwhich\s+|\bthen\s+|\band\s+|^)"
    r"(?:will\s+|would\s+|finally\s+|therefore\s+|thus\s+|then\s+|now\s+)*returns?\s+(?:the\s+value\s+)?"
    r"|(?:\bthe\s+(?:final\s+)?(?P<noun>output|answer|result)|\b(?:the\s+)?return\s+value)(?:\s+of\s+(?:the\s+)?"
    r"(?:function|f|call|`?f\([^\n]*?\)`?))?\s+(?:is|will\s+be|would\s+be|should\s+be|=)\s+"
    r"|\bf\([^\n]*?\)\s*==\s*|\bassert\s+f\([^\n]*?\)\s*==\s*",
    re.I | re.M,
)
_CALLISH = re.compile(r"[\w\]\)'\"]\.\w+\(|\b(?!f\()\w+\(")
_ANSWER_RE = re.compile(r"\[ANSWER\](?P<body>.*?)(?:\[/ANSWER\]|$)", re.S)
_ASSERT_RE = re.compile(r"assert\s+f\((?P<args>.*)\)\s*==\s*(?P<out>.+?)\s*$", re.S)


def _truth(word: str | None, negated: bool = False) -> str | None:
    if word is None:
        return None
    w = re.sub(r"\s+", " ", word.lower())
    val = w in ("true", "satisfied", "met", "fulfilled")
    return str(val != negated)


def _find_bindings(text: str, names: set[str]) -> list[Claim]:
    claims: list[Claim] = []
    if not names:
        return claims
    alt = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
    pat = re.compile(
        r"(?P<pre>(?i:\bthe\s+(?:new\s+|current\s+|final\s+)?value\s+of\s+(?:the\s+variable\s+)?)?)"
        r"(?P<q>`?)(?P<name>\b(?:" + alt + r"))(?P=q)(?![\w.\[(`'])"
        r"(?:\s*(?:'s\s+value|,)\s*)?\s*(?P<verb>" + _BIND_VERB + r")",
        re.I if False else 0,
    )
    for m in pat.finditer(text):
        start = m.start("q")
        before = text[max(0, start - 40) : start]
        # Not the subject: "the length of x is 3", "len(x) = 3", "x[0] is", "it's", "a.x".
        symbolic = m.group("verb").strip() in ("=", ":=", "->", "→", ":")
        if not m.group("pre") and re.search(
            (
                r"(?:[\w.'\"`(\[])$"
                if symbolic
                else r"(?:\b(?:of|in|to|from|than|with|by|into|over|through|on)\s+(?:the\s+)?"
                r"(?:(?:string|list|variable|dict(?:ionary)?|tuple|set|array|value|argument|parameter)\s+)?"
                r"|[\w.'\"`(\[]|\bis\s+|\bequals\s+|\b(?:return|returned|output|final|its|their)\s+)$"
            ),
            before,
            re.I,
        ):
            continue
        got = claimed_value(text, m.end())
        if got is None:
            continue
        end, lit = got
        if m.group("verb").strip() == ":" and not text[m.end() : m.end() + 1].isspace():
            continue
        change = bool(_CHANGE_VERB.search(m.group("verb")))
        claims.append(
            Claim(BINDING, text[start:end].strip(), lit, name=m.group("name"), change=change)
        )
    return claims


def _looks_like_condition(cond: str, known: Iterable[str]) -> bool:
    """A comparison or test, a closed expression that can be evaluated, or one of the code's own
    conditions ("`result` evaluates to True" when the code says `if result:`)."""
    if not cond:
        return False
    if _COND_SHAPE.search(cond):
        return True
    from cruxtui.core.reasoning.safe_eval import evaluate_condition

    if evaluate_condition(cond) is not None:
        return True
    bare = cond.strip("`() ").replace(" ", "")
    return any(bare == k.replace(" ", "") for k in known)


def _find_conditions(text: str, known: Iterable[str] = ()) -> list[Claim]:
    claims: list[Claim] = []
    taken: list[tuple[int, int]] = []
    matches = list(_COND_TRUTH_RE.finditer(text))
    starts = {m.start() for m in matches}
    for m in matches:
        if m.end() in starts:
            continue  # "x is False is False": the first "is False" belongs to the condition
        cond_start = _condition_start(text, m.start())
        cond = text[cond_start : m.start()].strip().strip("`").strip()
        if cond.lower() in ("it", "that", "this", "which", "this condition", "the result"):
            # "Checking x > 3: it is False", "Is x > 3? That is false": the condition came just before.
            prev_end = cond_start - 1
            while prev_end > 0 and text[prev_end - 1] in " :?,":
                prev_end -= 1
            cond_start = _condition_start(text, prev_end)
            cond = text[cond_start:prev_end]
        cond = (
            re.sub(
                r"^(?:if|while|since|because|as|and|so|but|here|now|is|check(?:ing)?(?:\s+whether|\s+if)?|"
                r"we\s+(?:test|check)|testing|the\s+condition|whether)\s+",
                "",
                cond.strip(),
                flags=re.I,
            )
            .strip()
            .strip("`,?:")
            .strip()
        )
        if not _looks_like_condition(cond, known):
            continue
        truth = _truth(m.group("truth") or m.group("truth2"))
        claims.append(
            Claim(CONDITION, text[cond_start : m.end()].strip(), truth or "", condition=cond)
        )
        taken.append((cond_start, m.end()))
    for m in _COND_HOLDS_RE.finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        truth = _truth(m.group("truth")) if m.group("truth") else str(not m.group("neg"))
        claims.append(Claim(CONDITION, m.group(0), truth or "", condition=None))
        taken.append((m.start(), m.end()))
    if not claims:
        for m in _BRANCH_RE.finditer(text):
            truth = "True" if (m.group("enter") or m.group("taken")) else "False"
            # The condition may be written just before: "6173 < 1000, so the branch is taken".
            cond = _leading_condition(text[: m.start()], known)
            claims.append(Claim(CONDITION, m.group(0), truth, condition=cond))
            break
    return claims


def _condition_start(text: str, end: int) -> int:
    """Where a condition ending at `end` starts: after the last clause break before it."""
    j = end - 1
    depth = 0
    while j >= 0:
        c = text[j]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                return j + 1
            depth -= 1
        elif depth == 0 and _is_break(text, j):
            return j + 1
        j -= 1
    return 0


def _is_break(text: str, j: int) -> bool:
    c = text[j]
    brk = c in ",;:\n" or (c == "." and j + 1 < len(text) and text[j + 1] == " ")
    return brk and not _inside_quotes(text, j)


def _inside_quotes(text: str, j: int) -> bool:
    line_start = text.rfind("\n", 0, j) + 1
    seg = text[line_start:j]
    return seg.count("'") % 2 == 1 or seg.count('"') % 2 == 1


def _leading_condition(prefix: str, known: Iterable[str]) -> str | None:
    cut = re.sub(
        r"[\s,]*(?:\b(?:so|and|therefore|thus|hence|then|which\s+means)\b)?[\s,]*$",
        "",
        prefix,
        flags=re.I,
    )
    start = _condition_start(cut, len(cut))
    cond = cut[start:].strip().strip("`")
    cond = (
        re.sub(r"^(?:since|because|as|and|so|if|here)\s+", "", cond, flags=re.I).strip().strip("`")
    )
    # "x > 3 is False, so the branch is skipped": the truth words are not part of the condition.
    cond = (
        re.sub(
            r"\s*(?:(?:is|evaluates\s+to|->)\s+(?:true|false)|is\s+(?:not\s+)?(?:met|satisfied))$",
            "",
            cond,
            flags=re.I,
        )
        .strip()
        .strip("`")
    )
    return cond if _looks_like_condition(cond, known) else None


def _find_returns(text: str, names: set[str]) -> list[Claim]:
    claims: list[Claim] = []
    for m in _RETURN_RE.finditer(text):
        if m.group("noun") and m.group("noun") in names:
            continue  # "the result is ..." speaks of the variable `result`
        got = claimed_value(text, m.end())
        if got is None:
            continue
        subj = (m.group("subj") or "").strip().lower() if "subj" in m.groupdict() else ""
        # "text.find('a') returns 2" / "it returns" next to a method call: maybe not f's value.
        head = text[: m.start()]
        subject_f = True
        if m.group(0).lower().lstrip().startswith(
            ("it", "this", "which", "we", "so", "then", "and")
        ) or (subj == "" and "return" in m.group(0).lower()):
            subject_f = not _CALLISH.search(head[-60:] + m.group(0))
        claims.append(Claim(RETURN, text[m.start() : got[0]].strip(), got[1], subject_f=subject_f))
    return claims


def _iterations(text: str) -> list[tuple[int, str]]:
    """Every loop iteration a text names, as (ordinal, the words)."""
    out = []
    for m in _ITER_RE.finditer(text):
        n = (
            _ORDINALS[m.group("word").lower()]
            if m.group("word")
            else int(m.group("num") or m.group("num2"))
        )
        out.append((n, m.group(0)))
    return out


def _mask_code(text: str) -> str:
    """Blank out backticked source code (`count, i = 0, 1`) so its `=` is not read as a claim;
    a backticked name or literal (`x`, `[1, 2]`) stays."""

    def blank(m: re.Match[str]) -> str:
        inner = m.group(1)
        if re.fullmatch(r"\w+", inner) or is_literal(inner):
            return m.group(0)
        return " " * len(m.group(0))

    return re.sub(r"`([^`\n]*)`", blank, text)


def _split_at_iterations(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A sentence that moves on to another iteration midway ("x is 3, and in the second iteration
    i = 1") becomes two steps, so each claim is read in its own iteration."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        cuts = []
        for m in _ITER_RE.finditer(text, s, e):
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


def parse_prose(text: str, names: Iterable[str], conditions: Iterable[str] = ()) -> Chain:
    """Free prose -> reasoning steps with the claims read from each; `names` are the code's variables,
    `conditions` the source text of its `if`/`while` tests."""
    known = set(names)
    known_conds = list(conditions)
    answer = _ANSWER_RE.search(text)
    body_end = answer.start() if answer else len(text)
    steps: list[ReasoningStep] = []
    for s, e in _split_at_iterations(text, split_steps(text[:body_end])):
        chunk = text[s:e]
        step = ReasoningStep(len(steps), chunk, s, e)
        named = _iterations(chunk)
        # A sentence naming two iterations gives no single place to read its claims in.
        step.iteration = named[0][0] if len({n for n, _ in named}) == 1 else None
        step.after_loop = bool(_AFTER_LOOP_RE.search(chunk))
        step.at_call = bool(_AT_CALL_RE.search(chunk))
        if m := _LINE_REF_RE.search(chunk):
            step.line = int(m.group(1))
        step.code_refs = [
            c
            for c in re.findall(r"`([^`\n]{4,})`", chunk)
            if not is_literal(c) and not c.isidentifier()
        ]
        conds = _find_conditions(chunk, known_conds)
        masked = _mask_code(chunk)
        rets = _find_returns(masked, known)
        binds = [
            b for b in _find_bindings(masked, known) if not any(b.text in c.text for c in conds)
        ]
        claims = binds + conds + rets
        for n, words in dict(named).items():
            claims.insert(0, Claim(ITERATION, words, str(n), ordinal=n))
        if m := _LOOP_COUNT_RE.search(chunk):
            n = m.group("n").lower()
            claims.append(Claim(LOOP_COUNT, m.group(0), str(_COUNT_WORDS.get(n) or int(n))))
        # Keep the order in which claims are written: the first divergence is the first written.
        claims.sort(key=lambda c: max(chunk.find(c.text), 0))
        step.claims = claims
        steps.append(step)
    if answer:
        body = answer.group("body").strip()
        step = ReasoningStep(len(steps), answer.group(0).strip(), answer.start(), answer.end())
        am = _ASSERT_RE.search(body)
        if am and is_literal(am.group("out")):
            step.claims.append(Claim(RETURN, body, am.group("out").strip()))
        steps.append(step)
    return Chain(text, "prose", steps)


# --------------------------------------------------------------------------- scratchpad

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
        end = _scan_balanced(text, call.end() - 1)
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
    answer_chain = parse_prose(text[m.end() :], ())
    for st in answer_chain.steps:
        if st.text.startswith("[ANSWER]") and st.claims:
            steps.append(
                ReasoningStep(
                    len(steps), st.text, m.end() + st.start, m.end() + st.end, claims=st.claims
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


def parse_chain(text: str, code: str) -> Chain:
    """Parse a chain of thought for the function `code`: the scratchpad if there is one, else prose."""
    return parse_scratchpad(text) or parse_prose(text, code_names(code), code_conditions(code))
