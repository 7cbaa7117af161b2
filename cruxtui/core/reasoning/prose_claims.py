"""Reading claims out of free prose, sentence by sentence.

Patterns fire only where a *subject* can be named with confidence — a variable of `f`, a Python
expression over its frame (`nums.count(1)`, `s[5:8]`, `len(text)`, a method call the code makes,
written with or without its receiver), a condition, the loop, f's result — followed by a
binding or result verb and a *Python literal* ending cleanly. "text is 5 characters long", "the
length of text is 5", "append const -> [...]", "sorts the list in place: [...]" claim nothing:
the words around a name decide whether it is the subject. An unread claim costs a missed
divergence, a misread one a false alarm on a correct chain, which is worse.

Code (blanked by `code_spans` before this runs) is never read; values are compared elsewhere.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from typing import Any

from cruxtui.core.reasoning.claim_types import (
    BINDING,
    CONDITION,
    EMPTY,
    EXPRESSION,
    ITERATION,
    LOOP_COUNT,
    LOOP_VALUES,
    RETURN,
    Claim,
    ReasoningStep,
)
from cruxtui.core.reasoning.code_facts import CHANGING, CodeFacts
from cruxtui.core.reasoning.final_answer import CONDITIONED, KIND_NOUNS, NUMBER_WORDS
from cruxtui.core.reasoning.frame_eval import BUILTIN_NAMES
from cruxtui.core.reasoning.literal_scan import (
    CLEAN_AFTER,
    claimed_value,
    is_literal,
    literal_value,
    scan_literal,
)
from cruxtui.core.util import safe_ast

_BIND_VERB = (
    r"(?:(?:is\s+|gets\s+|was\s+)?(?:incremented|decremented|increased|decreased|reduced|extended|"
    r"updated|changed|set|reset|grown|doubled|shortened|trimmed|converted|modified)\s+to"
    r"|(?:goes|go|went)\s+(?:up|down)\s+to|(?:increases|decreases|grows|shrinks|rises|drops)\s+to"
    r"|now\s+(?:reads|looks\s+like)|(?:is\s+(?:now\s+)?)?equal\s+to"
    r"|becomes|will\s+be|would\s+be|remains|stays|gets\s+set\s+to|equals|holds|contains"
    r"|(?:now\s+)?(?:refers|points)\s+to\s+(?:position|index)"
    r"|has\s+(?:the\s+)?value|(?:now\s+)?(?:becomes|equals|holds)|turns\s+into|changes\s+to"
    r"|(?:is|gets|was)\s+(?:re)?assigned(?:\s+to)?|ends\s+(?:up\s+)?(?:as|being)|finishes\s+as|:=|=(?!=)|->|→|:"
    r"|(?:now\s+)?is\s+(?:now\s+|then\s+|still\s+|set\s+to\s+|updated\s+to\s+|changed\s+to\s+|"
    r"equal\s+to\s+|initiali[sz]ed\s+to\s+|initially\s+|bound\s+to\s+|going\s+to\s+be\s+)?)"
)
_CHANGE_VERB = re.compile(
    r"becomes|\bnow\b|updated|changes|changed|set\s+to|:=|->|→|turns\s+into|incremented|decremented|"
    r"increased|decreased|reduced|extended|grown|doubled|shortened|trimmed|converted|modified|"
    r"(?:goes|go|went)\s+(?:up|down)|increases|decreases|grows|shrinks|rises|drops",
    re.I,
)
ORDINALS = {
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
_COUNT_WORDS = {"once": 1, "twice": 2, **{w: k for w, k in NUMBER_WORDS.items() if k}}
_COUNT_ALT = "|".join(sorted(_COUNT_WORDS, key=len, reverse=True))
"""Counts as people write them, in words: the longest first, so "seventeen" is not "seven"."""

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
    + r"\b|\s+(?P<truth3>holds|fails|does\s+not\s+hold|doesn't\s+hold)\b",
    re.I,
)
_THIS_TRUTH_RE = re.compile(
    r"\b(?:so\s+|hence\s+|thus\s+)(?:this|that)\s+(?:is|evaluates\s+to|comes\s+out(?:\s+as)?|gives)\s+"
    r"(?:therefore\s+|thus\s+)?`?" + _TRUTH + r"\b`?",
    re.I,
)
_THE_CONDITION = r"\bthe\s+(?:`?(?:if|while|elif)`?\s+|loop\s+)?condition\s+"
"""The code's test named by its role ("the condition", "the `if` condition"), not written out."""
_COND_HOLDS_RE = re.compile(
    _THE_CONDITION + r"(?:`[^`]*`\s+)?(?:is|evaluates\s+to|holds)\s+"
    r"(?:therefore\s+|thus\s+)?`?"
    + _TRUTH
    + r"\b|"
    + _THE_CONDITION
    + r"(?:(?P<neg>does\s+not\s+hold|doesn't\s+hold|fails|is\s+violated)|holds|passes|succeeds)\b",
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
    r"(?P<subj>\b(?:the|this|the\s+original|the\s+given)\s+function\s+(?:`?f`?\s+)?|\bfunction\s+`?f`?\s+"
    r"|\bthe\s+(?:original|given)\s+code\s+"
    r"|`?\bf\([^\n]*?\)`?\s+|\bf\s+|`f`\s+|\bit\s+|"
    r"\bthis\s+|\bwe\s+|\bso\s+|\bwhich\s+|\bthen\s+|\band\s+|\bthat\s+|^)"
    r"(?:will\s+|would\s+|should\s+|must\s+|finally\s+|therefore\s+|thus\s+|then\s+|now\s+)*"
    r"(?:returns?|gives\s+back|hands\s+back|(?<=function\s)(?:will\s+)?outputs?(?=\s+[-\[('\"`\d{]))\s+(?:the\s+value\s+)?"
    r"|(?:\bthe\s+(?:final\s+|expected\s+)?(?P<noun>output|answer)|\bthe\s+final\s+(?:result|value)"
    r"|\b(?:the\s+)?return(?:ed)?\s+value"
    r"|\bthe\s+result(?=\s+of\s+(?:the\s+)?(?:function|f\b|call|`?f\()))(?:\s+of\s+(?:the\s+)?"
    r"(?:function|f|call|`?f\([^\n]*?\)`?))?\s+(?:is|will\s+be|would\s+be|should\s+be|=)\s+"
    r"|\bf\([^\n]*?\)\s*==\s*|\bassert\s+f\([^\n]*?\)\s*==\s*"
    r"|`?\bf\([^\n]*?\)`?\s+(?:gives|yields|evaluates\s+to|outputs|produces|is)\s+",
    re.I | re.M,
)
_CALLISH = re.compile(r"[\w\]\)'\"]\.\w+\(|\b(?!f\()\w+\(")
_ANSWER_RE = re.compile(r"\[ANSWER\](?P<body>.*?)(?:\[/ANSWER\]|$)", re.S)
_ASSERT_RE = re.compile(r"assert\s+f\((?P<args>.*)\)\s*==\s*(?P<out>.+?)\s*$", re.S)


_ACTION_BEFORE = re.compile(
    r"\b(?:append(?:s|ed|ing)?|add(?:s|ed|ing)?|insert(?:s|ed|ing)?|remov(?:e|es|ed|ing)|"
    r"push(?:es|ed|ing)?|pop(?:s|ped|ping)?|extend(?:s|ed|ing)?|prepend(?:s|ed|ing)?|"
    r"concatenat\w*|join(?:s|ed|ing)?|multipl\w*|subtract\w*|divid\w*|plus|minus|times|by|"
    r"using|call(?:s|ed|ing)?|pass(?:es|ed|ing)?|replac\w*|delet\w*|strip\w*|split\w*|"
    r"sort(?:s|ed|ing)?|revers\w*|count(?:s|ed|ing)?|find(?:s|ing)?|search\w*|look\w*\s+(?:up|for)|"
    r"iterat\w*\s+over|loop\w*\s+over|over|through)\s+(?:the\s+)?(?:(?:list|string|dict|set|"
    r"variable|value|character|element|item|key)\s+)?$",
    re.I,
)
_EVENT_BEFORE = re.compile(r"\b(?:the|this|that|each|every)\s+[a-z]+\s+$", re.I)
"""An action word used as a noun ("after the sort mylist is [5, 8]"): an event, not an action
on the subject that follows."""
_PREP_BEFORE = re.compile(
    r"(?:\b(?:of|in|to|from|than|with|by|into|over|through|on|at|for)\s+(?:the\s+)?"
    r"(?:(?:string|list|variable|dict(?:ionary)?|tuple|set|array|value|argument|parameter)\s+)?"
    r"|\b(?:count|number|length|sum|total|list|set)\s+of\s+(?:the\s+)?(?:[a-z]+\s+)?"
    r"|[\w.'\"`(\[]|\bis\s+|\bequals\s+|\b(?:return|returned|output|final|its|their|a|an)\s+)$",
    re.I,
)
_OPERATOR_BEFORE = re.compile(r"[-+*/%<>=]\s*`?$")
_ARROW_BEFORE = re.compile(r"(?:->|=>|→)\s*`?$")
"""An arrow is no operator: "`temp = array[i]` -> `temp` = 4" states temp's value."""
_EMPTY_WORDS = re.compile(
    r"\s*(?:now\s+|still\s+|then\s+)?(?:an?\s+|the\s+)?(?P<what>empty(?:\s+(?P<type>list|string|str|"
    r"dict(?:ionary)?|set|tuple))?)\b(?!\s+(?:string|list)\s+(?:of|with))",
    re.I,
)
_EMPTY_TYPED = {"list": "[]", "string": "''", "str": "''", "dict": "{}", "dictionary": "{}"}
_EMPTY_TYPED |= {"set": "set()", "tuple": "()"}
_RESULT_VERB = re.compile(
    r"\s*`?\s*(?:,\s*)?(?:which\s+)?(?P<verb>returns|return|gives|give|yields|evaluates\s+to|"
    r"equals|is\s+equal\s+to|becomes|produces|results\s+in|outputs|removes|pops|would\s+be|"
    r"(?:is|gets)\s+(?:set|changed|updated|overwritten)\s+to|"
    r"leaves|gives\s+back|comes\s+to|"
    r"will\s+be|comes\s+out\s+(?:as|to)|is\s+(?:just|simply|only|still|now)|is|are|=|->|→|=>|:)(?![\w=])",
    re.I,
)
_EXPR_START = re.compile(r"[A-Za-z_(\[{'\"`.]")
_NEGATED = re.compile(r"\s*(?:not|never|no\s+longer|n't)\b", re.I)
_HEDGE_AFTER = re.compile(r"\s*(?:or|and\s+not|\?)\b", re.I)


def _stated(kind: str, text: str, start: int, got: tuple[int, str], **fields: Any) -> Claim:
    """A claim spanning from `start` to the end of the value `got` (end, value) stated there."""
    return Claim(kind, text[start : got[0]], got[1], start=start, end=got[0], **fields)


def _truth(word: str | None, negated: bool = False) -> str | None:
    if word is None:
        return None
    w = re.sub(r"\s+", " ", word.lower())
    val = w in ("true", "satisfied", "met", "fulfilled")
    return str(val != negated)


_TYPE_NOUN = re.compile(
    r"\s*(?:still\s+|now\s+|just\s+)?(?:the|an?)\s+(?P<noun>int(?:eger)?|number|str(?:ing)?|list|tuple|"
    r"dict(?:ionary)?|set|float|bool(?:ean)?|character|char|value)\s+(?=[-\d'\"\[({`TFN])",
    re.I,
)


def _value_at(text: str, i: int) -> tuple[int, str] | None:
    """The claimed value at text[i:]: a literal ending cleanly, or an "empty" in words. A type
    named before the literal ("is still the int 2", "becomes the string '2'") is the writer
    saying which kind of value they mean: "the string 2" is '2'."""
    typed = _TYPE_NOUN.match(text, i)
    if typed:
        got = claimed_value(text, typed.end())
        if got is None:
            return None
        noun = typed.group("noun").lower()
        if noun.startswith("str") and re.fullmatch(r"-?\d+(?:\.\d+)?", got[1]):
            return got[0], repr(got[1])
        return got
    got = claimed_value(text, i)
    if got is not None:
        return got
    m = _EMPTY_WORDS.match(text, i)
    if m and CLEAN_AFTER.match(text, m.end()):
        kind = (m.group("type") or "").lower()
        return m.end(), _EMPTY_TYPED.get(kind, EMPTY)
    return None


def find_bindings(text: str, names: set[str]) -> list[Claim]:
    """`x = 5`, "count becomes 3", "the value of out is [1]": a variable of f and its value."""
    claims: list[Claim] = []
    if not names:
        return claims
    alt = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
    pat = re.compile(
        r"(?P<pre>(?i:\bthe\s+(?:new\s+|current\s+|final\s+|updated\s+)?value\s+of\s+"
        r"(?:the\s+variable\s+)?)?)"
        r"(?P<q>`?)(?P<name>\b(?:" + alt + r"))(?P=q)(?![\w.\[(`'])"
        r"(?:\s*(?:'s\s+value|,|\s+itself|\s+also)\s*)?\s*(?P<verb>" + _BIND_VERB + r")",
    )
    for m in pat.finditer(text):
        start = m.start("q")
        before = text[max(0, start - 60) : start]
        verb = m.group("verb").strip()
        symbolic = verb in ("=", ":=", "->", "→", ":")
        if not m.group("pre"):
            if symbolic and re.search(r"[\w.'\"(\[]$|[^\s(]`$", before):
                continue  # "x.y = 5", "d['k'] = 1"; an opening backtick ("`x = 5`") is fine
            if not symbolic and _PREP_BEFORE.search(before):
                continue
            if (_ACTION_BEFORE.search(before) and not _EVENT_BEFORE.search(before)) or (
                _OPERATOR_BEFORE.search(before)
                and not _ARROW_BEFORE.search(before)
                and not _line_head(text, start)
            ):
                continue  # "append const -> [..]", "m = n + arr = [..]": not the subject
            if verb in (":", "->", "→") and re.search(r"\b(?:in|of|at|on|to)\s+$", before, re.I):
                continue  # "sorts the list in place: [..]" ("moves on to i = 1" names i)
        if verb == ":" and not (m.group("q") or _line_head(text, start)):
            continue  # "Output: 5" or "in place: [..]" are not bindings; "- count: 3" is
        if verb == ":" and not text[m.end() : m.end() + 1].isspace():
            continue
        if _NEGATED.match(text, m.end()):
            continue  # "nums is not empty"
        got = _value_at(text, m.end())
        if got is None:
            continue
        end, lit = got
        if _HEDGE_AFTER.match(text, end) and re.match(r"\s*or\b", text[end:], re.I):
            continue  # "x is 3 or 4"
        if _listing_goes_on(text, end, lit):
            continue  # "s = 'h','i','!'": its items spelled out, not s = 'h'
        change = bool(_CHANGE_VERB.search(verb))
        claims.append(
            Claim(BINDING, text[start:end].strip(), lit, name=m.group("name"), change=change)
        )
        claims[-1].start, claims[-1].end = start, end
    return claims


_EQUALITY_RE = re.compile(r"`(?P<name>[A-Za-z_]\w*)\s*==\s*")
_TESTED_BEFORE = re.compile(
    r"\b(?:if|elif|when|whenever|whether|while|unless|until|assert\w*|check\w*|test\w*|"
    r"condition|evaluat\w*|compar\w*|is|does)\s+(?:that\s+|the\s+)?$",
    re.I,
)
_JUDGED_AFTER = re.compile(
    r"\s*(?:\?|is\b|was\b|evaluates|holds|fails|returns|gives|yields|->|→|=|:)", re.I
)


def find_equalities(text: str, names: set[str]) -> list[Claim]:
    """ "so after the loop `result == 'l \\nl '`": a backticked equality of a variable of f and a
    value, stated in prose, says the variable has that value. Not when the words test it ("if
    `x == 5`", "check `x == 5`") or judge it after ("`x == 5` is False", "`x == 5`?")."""
    claims: list[Claim] = []
    for m in _EQUALITY_RE.finditer(text):
        if m.group("name") not in names:
            continue
        got = scan_literal(text, m.end())
        if got is None or text[got[0] : got[0] + 1] != "`":
            continue
        end = got[0] + 1
        if _TESTED_BEFORE.search(text[max(0, m.start() - 40) : m.start()]):
            continue
        if _JUDGED_AFTER.match(text, end):
            continue
        claims.append(
            Claim(
                BINDING,
                text[m.start() : end],
                got[1],
                name=m.group("name"),
                start=m.start(),
                end=end,
            )
        )
    return claims


def _listing_goes_on(text: str, end: int, lit: str) -> bool:
    """Is the value the first of several listed ("s = 'h', 'i', '!'", "xs = 1, 2, 3")? The writer
    spells out the subject's items; its first one is not its value."""
    m = re.match(r"[ \t]*,[ \t]*(?:and[ \t]+)?", text[end:])
    if m is None:
        return False
    nxt = scan_literal(text, end + m.end())
    if nxt is None or not CLEAN_AFTER.match(text, nxt[0]) and text[nxt[0] : nxt[0] + 1] != ",":
        return False
    return type(literal_value(nxt[1])) is type(literal_value(lit))


def _line_head(text: str, i: int) -> bool:
    """Is text[i] the first word of its line (after a bullet, a number, `|` or `**`)?"""
    head = text[text.rfind("\n", 0, i) + 1 : i]
    return re.fullmatch(r"\s*(?:[-*+•]|\d+[.)]|\|)?\s*(?:\*\*|__)?\s*`?", head) is not None or bool(
        re.search(r"\|\s*$", head)
    )


_APPOSITIVE = re.compile(
    r"\s*(?:the|all|just|only|everything)\b[^,.;:\n\[\]'\"(){}`=]{0,40},\s*", re.I
)
"""Words that describe a value the writer then writes out, after a comma ("the first 9
characters, ['t', 'e', ...]")."""


def find_expressions(text: str, facts: CodeFacts) -> list[Claim]:
    """ "`nums.count(1)` returns 3", "text.rfind('i') gives -1", "s[5:8] is empty",
    "counts['7'] is 1", "len(nums) = 4", "index('C') is 4", "popitem() removes ('k', 1)": an
    expression over f's frame (or a method the code calls, written without its receiver) and the
    value it gives. The subject is resolved against the code here; judging happens later."""
    claims: list[Claim] = []
    for m in _RESULT_VERB.finditer(text):
        subject = _expression_before(text, m.start())
        if subject is None:
            continue
        s_start, src = subject
        if not _line_head(text, s_start) and _OPERAND_BEFORE.search(
            text[max(0, s_start - 12) : s_start]
        ):
            continue  # "text[0] == text[-1] is True": a part of a larger expression
        resolved = resolve_expression(src, facts)
        if resolved is None:
            continue
        verb = m.group("verb").lower()
        if verb in (":",) and not _line_head(text, s_start):
            continue
        if _NEGATED.match(text, m.end()):
            continue
        got = _value_at(text, m.end())
        if got is None and (said := _APPOSITIVE.match(text, m.end())) is not None:
            got = _value_at(text, said.end())  # "is the first 9 characters, ['t', ...]"
        if got is None:
            continue
        end, lit = got
        if verb in ("removes", "pops") and not re.search(r"pop", src):
            continue
        if re.match(r"`?\s+(?:is|was|evaluates\s+to)\s+`?(?:True|False)\b", text[end:]):
            continue  # "`c.isascii() is False` is False": a test written out, then judged
        kind = CONDITION if lit in ("True", "False") and _is_test(resolved) else EXPRESSION
        if re.search(r"\bdel\s+`?$", text[max(0, s_start - 6) : s_start]):
            continue  # "del result[1] -> {}": the dict after the deletion, not result[1]
        mutated = _mutated_receiver(resolved, facts)
        if mutated == "" or (mutated is not None and lit == "None"):
            if mutated == "":
                continue  # `lists[1].clear() -> ...`: which value is meant is unclear
        elif mutated is not None:
            # "`text.remove('p')` -> ['n']": the list after the call, not the call's None.
            claim = Claim(
                BINDING, text[s_start:end].strip(), lit, name=mutated, change=True, start=s_start
            )
            claim.end = end
            claims.append(claim)
            continue
        if re.match(r"range\(", resolved) and not (lit == EMPTY or lit.startswith(("[", "("))):
            continue  # "= range(2, 2, 3)", "gives 0, 1, 2": a repr, or the first of a list
        claim = Claim(kind, text[s_start:end].strip(), lit, name=_listed(resolved))
        claim.change = bool(re.fullmatch(r"becomes|(?:is|gets)\s+\w+\s+to", verb))
        if kind == CONDITION:
            claim.condition = resolved
        claim.start, claim.end = s_start, end
        claim.before_line = _changing_call_line(resolved, facts) or loop_entry_line(resolved, facts)
        claims.append(claim)
    return claims


_GIVES_AND_CHANGES = frozenset(["pop", "popitem", "setdefault", "popleft"])


def _changing_call_line(src: str, facts: CodeFacts) -> int | None:
    """`d.popitem()` gives a value and changes d: its value is the one it gave where the code
    calls it (the line, when there is one), not what it would give on a later state."""
    try:
        node = safe_ast.parse(src, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    if node.func.attr not in _GIVES_AND_CHANGES:
        return None
    lines = facts.call_lines.get(src.replace(" ", "")) or facts.method_lines.get(
        node.func.attr, set()
    )
    return next(iter(lines)) if len(lines) == 1 else None


def changes_state(claim: Claim) -> bool:
    """A claim about a call that gives a value and changes its receiver (`text.pop(0)`)."""
    return claim.kind == EXPRESSION and bool(
        re.search(r"\.(?:" + "|".join(_GIVES_AND_CHANGES) + r")\(", claim.name or "")
    )


def _names_in_expression(src: str) -> set[str]:
    try:
        tree = safe_ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _listed(src: str) -> str:
    """A `range(...)` is judged by the numbers it gives ("range(0, 2, 2) is empty" is false)."""
    return f"list({src})" if re.fullmatch(r"range\(.*\)", src) else src


_OPERAND_BEFORE = re.compile(r"(?:==|!=|<=|>=|[<>+\-*/%]|\b(?:in|is|not))\s*`?$")
MUTATORS = frozenset(
    ["append", "extend", "insert", "remove", "update", "reverse", "sort", "clear", "add", "discard"]
)


def _mutated_receiver(src: str, facts: CodeFacts) -> str | None:
    """`x.append(3)`, `d.update(e)`: the variable such a call changes (its result is None); ""
    for a mutating call on something else; None when `src` does not mutate."""
    try:
        node = safe_ast.parse(src, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr not in MUTATORS:
            return None
        if isinstance(node.func.value, ast.Name) and node.func.value.id in facts.names:
            return node.func.value.id
        return ""  # a mutation of something that is not a variable (`lists[1].clear()`)
    return None


def _is_test(src: str) -> bool:
    try:
        node = safe_ast.parse(src, mode="eval").body
    except SyntaxError:
        return False
    return (
        isinstance(node, ast.Compare | ast.BoolOp)
        or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))
        or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr.startswith(("is", "startswith", "endswith"))
        )
    )


def _expression_before(text: str, end: int) -> tuple[int, str] | None:
    """The Python expression written just before `end`: a backticked one, or one bare token
    (brackets and quotes may hold spaces). Returns (start, source) or None."""
    j = end
    while j > 0 and text[j - 1] in " \t":
        j -= 1
    if j > 0 and text[j - 1] == "`":
        k = text.rfind("`", 0, j - 1)
        if k < 0 or "\n" in text[k:j]:
            return None
        src = text[k + 1 : j - 1].strip()
        return (k, src) if _is_subject_expression(src) else None
    # A bare token: walk left over word chars, dots, and balanced brackets/quotes.
    k = j
    while k > 0:
        c = text[k - 1]
        if c in ")]}":
            opener = _matching_open(text, k - 1)
            if opener is None:
                return None
            k = opener
            continue
        if c in "'\"":
            q = text.rfind(c, 0, k - 1)
            if q < 0:
                return None
            k = q
            continue
        if c.isalnum() or c in "_.":
            k -= 1
            continue
        if c in "*+-/%" and 1 < k < j and _token_char(text[k - 2]) and _token_char(text[k]):
            k -= 1  # "new*len(old)", "i+1": an operator written without spaces
            continue
        break
    src = text[k:j]
    if not src or not _EXPR_START.match(src):
        return None
    return (k, src) if _is_subject_expression(src) else None


def _token_char(c: str) -> bool:
    return c.isalnum() or c in "_)]'\""


def _matching_open(text: str, close: int) -> int | None:
    pairs = {")": "(", "]": "[", "}": "{"}
    depth = 0
    j = close
    while j >= 0:
        c = text[j]
        if c in pairs:
            depth += 1
        elif c in "([{":
            depth -= 1
            if depth == 0:
                return j if pairs[text[close]] == c else None
        elif c == "\n":
            return None
        j -= 1
    return None


def _is_subject_expression(src: str) -> bool:
    """Worth a claim: a call, subscript, slice or operator expression (a bare name is a binding,
    a bare literal a value)."""
    if not src or len(src) > 120 or is_literal(src):
        return False
    lead = src.lstrip(".")
    try:
        node = safe_ast.parse(lead, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return isinstance(node, ast.Call | ast.Subscript | ast.Compare | ast.BinOp | ast.BoolOp) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    )


_PURE_NAMES = frozenset(
    [
        "len",
        "sorted",
        "sum",
        "min",
        "max",
        "abs",
        "str",
        "int",
        "float",
        "bool",
        "list",
        "tuple",
        "set",
        "dict",
        "range",
        "reversed",
        "ord",
        "chr",
        "enumerate",
        "zip",
        "any",
        "all",
        "round",
        "repr",
        "isinstance",
    ]
)


def resolve_expression(src: str, facts: CodeFacts) -> str | None:
    """The expression over f's frame that `src` names, or None when it does not resolve to one.

    Names must be f's variables or pure builtins; a method called without its receiver
    (`rfind('i')`, `.popitem()`) takes the one receiver the code calls that method on. An
    expression of literals only (`'abc'.upper()`) resolves to itself."""
    lead = src.strip().lstrip(".")
    try:
        node = safe_ast.parse(lead, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id not in _PURE_NAMES
        and node.func.id not in facts.names
    ):
        receivers = facts.calls.get(node.func.id, set())
        if len(receivers) != 1:
            return None
        lead = f"{next(iter(receivers))}.{lead}"
        try:
            node = safe_ast.parse(lead, mode="eval").body
        except SyntaxError:
            return None
    bound = {  # `[c for c in text if c.isupper()]`: c is the comprehension's own
        t.id
        for g in ast.walk(node)
        if isinstance(g, ast.comprehension)
        for t in ast.walk(g.target)
        if isinstance(t, ast.Name)
    }
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not (
            n.id in facts.names or n.id in _PURE_NAMES or n.id in bound
        ):
            return None
        if isinstance(n, ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom) or (
            isinstance(n, ast.Name) and n.id == "f"
        ):
            return None
        if isinstance(n, ast.Attribute) and n.attr.startswith("_"):
            return None
    return lead


def _parses_as_expression(src: str) -> bool:
    try:
        safe_ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _looks_like_condition(cond: str, known: Iterable[str]) -> bool:
    """A comparison or test, a closed expression, or one of the code's own conditions
    ("`result` evaluates to True" when the code says `if result:`)."""
    if not cond:
        return False
    if _COND_SHAPE.search(cond):
        try:
            safe_ast.parse(cond, mode="eval")
            return True
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return bool(re.fullmatch(r"[\w\s.'\"()\[\]<>=!%+\-*/,]+", cond))
    bare = cond.strip("`() ").replace(" ", "")
    return any(bare == k.replace(" ", "") for k in known)


_HEAD_TEST = re.compile(r"\s*(?:[-*+•]\s+|\d+[.)]\s+)?`(?P<test>[^`\n]+)`\s*:")
"""A line headed by a test in backticks and a colon, its working after ("- `x in s`: ...")."""


def find_conditions(text: str, known: Iterable[str] = ()) -> list[Claim]:
    """ "`6173 < 1000` is False", "the condition holds", "we skip the if block"."""
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
        inner = list(re.finditer(r"\bis\s+(?:True|False)\s*(?:,\s*)?(?:and|but|while)\s+", cond))
        if inner:  # "a is False and b is True": two claims; this one is about b
            tail = cond[inner[-1].end() :].strip("` ")
            if tail and tail in text[cond_start:]:
                cond_start += text[cond_start:].find(tail)
                cond = tail
        if not _parses_as_expression(cond):
            # "isalnum() is False and '-' not in valid_chars is True": the condition is the
            # longest tail of the clause that is an expression.
            for cut in re.finditer(r"\s(?:and|but|so|while|yet)\s+|[,:;]\s+", cond):
                tail = cond[cut.end() :].strip("` ")
                if _parses_as_expression(tail) and _looks_like_condition(tail, known):
                    cond_start += text[cond_start:].find(tail) if tail in text[cond_start:] else 0
                    cond = tail
                    break
        worked = re.match(r"(?P<c>.+?)\s+is\s+(?P<w>\S.*)$", cond)
        if (
            worked
            and _COND_SHAPE.search(worked.group("w"))
            and _parses_as_expression(worked.group("w"))
            and not _names_in_expression(worked.group("w")) - BUILTIN_NAMES
            and _parses_as_expression(worked.group("c"))
        ):
            cond = worked.group("c")  # "length <= len(text) is 0 <= 7, which is True": worked
        if not _looks_like_condition(cond, known):
            continue
        if re.search(
            r"\b(?:if|elif|while)\s+`?$", text[max(0, cond_start - 8) : cond_start]
        ) and any(cond.replace(" ", "") == k.replace(" ", "") for k in known):
            continue  # "if c.isascii() is False": the code's own test, quoted
        head = _HEAD_TEST.match(text)
        if m.group("truth2") and head and cond_start >= head.end():
            # "- `'ab'.endswith('xb')`: ... and 'ab' != 'xb' → False": the arrow's verdict may be
            # the heading test's or the last comparison's; which is meant is unclear.
            continue
        held = m.group("truth3")
        truth = (
            str(held.lower() == "holds") if held else _truth(m.group("truth") or m.group("truth2"))
        )
        claims.append(
            Claim(
                CONDITION,
                text[cond_start : m.end()].strip(),
                truth or "",
                condition=cond,
                start=cond_start,
                end=m.end(),
            )
        )
        taken.append((cond_start, m.end()))
    for m in _COND_HOLDS_RE.finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        truth = _truth(m.group("truth")) if m.group("truth") else str(not m.group("neg"))
        claims.append(
            Claim(CONDITION, m.group(0), truth or "", condition=None, start=m.start(), end=m.end())
        )
        taken.append((m.start(), m.end()))
    if not claims:
        for m in _BRANCH_RE.finditer(text):
            truth = "True" if (m.group("enter") or m.group("taken")) else "False"
            # The condition may be written just before: "6173 < 1000, so the branch is taken".
            leading = _leading_condition(text[: m.start()], known)
            if leading is not None and not any(_same_shape(leading, k) for k in known):
                # "m is None, so the if body is skipped" (the code tests `if m:`): a premise of
                # the chain's, not the test the branch verdict is about.
                leading = None
            claims.append(
                Claim(CONDITION, m.group(0), truth, condition=leading, start=m.start(), end=m.end())
            )
            break
    return claims


def find_this_truth(text: str) -> list[Claim]:
    """ "First check: `str.isascii('234år')`. ... so this is `True`": a truth said of the test
    quoted last (see `name_quoted_conditions`), read only where no other reading names what
    "this" is; with no test quoted, unverifiable."""
    claims = []
    for m in _THIS_TRUTH_RE.finditer(text):
        truth = _truth(m.group("truth"))
        if truth is not None:
            claims.append(
                Claim(CONDITION, m.group(0), truth, condition=None, start=m.start(), end=m.end())
            )
    return claims


def _shape(src: str) -> str | None:
    """An expression's form with every name and constant blanked: `6173 < 1000` and
    `num < 1000` have one form, `m is None` and `m` two."""
    try:
        tree = safe_ast.parse(src.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(
                    node,
                    name,
                    [ast.Name("_") if isinstance(v, ast.Name | ast.Constant) else v for v in value],
                )
            elif isinstance(value, ast.Name | ast.Constant):
                setattr(node, name, ast.Name("_"))
    return ast.dump(tree, annotate_fields=False)


def _same_shape(written: str, test: str) -> bool:
    """Is `written` the code's `test`, maybe with values for its variables?"""
    a, b = _shape(written), _shape(test)
    return a is not None and a == b


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


_ANSWER_FORMS = re.compile(
    r"(?:\*\*|__)?\b(?:(?:final\s+)?(?:answer|output)|final\s+result)(?:\s+is)?\s*(?:\*\*|__)?\s*[:=]\s*(?:\*\*|__)?"
    r"|\\boxed\{|<answer>\s*",
    re.I,
)
_RETURNED = re.compile(
    r"\b(?:that|this|which|it)\s+(?:\w+\s+){0,2}?(?:is|gets)\s+(?:what\s+(?:is|gets)\s+)?"
    r"returned\b|\bis\s+what\s+(?:f|the\s+function)\s+returns\b|\band\s+(?:that|this)\s+is\s+"
    r"(?:the\s+)?(?:return\s+value|output|answer|result)\b",
    re.I,
)
_NAMED_THEN_VALUE = re.compile(
    r"(?:an?|the|this|these|its|their)\s+(?![^:\n]*\b(?:if|when|unless|where)\b)"
    r"[^.:;!?\n()\[\]{}'\"`=<>#]{1,60}?:[ \t]*(?=\S)",
    re.I,
)
"""A result described, then given after a colon: "returns a new string like this: 'ab'"."""
_COLON = re.compile(r"[ \t]*:[ \t]*")
_FSTRING = re.compile(
    r"\bthe\s+f-?string\s+(?:gives|produces|evaluates\s+to|is|becomes|yields)\s+", re.I
)


def of_a_call_before(text: str, start: int, words: str) -> bool:
    """Is a result said as "it returns" ("so it returns -1") in a sentence that names a method
    or builtin call in a clause just before `start` (a semicolon ends a step, not a sentence)?
    Then "it" may be that call. ("so it is returned" still speaks of f.)"""
    if not re.match(
        r"(?:(?:so|and|then)\s+)?(?:it|which)\s+(?:returns|gives)\b", words.strip(), re.I
    ):
        return False
    head = text[max(0, start - 120) : start]
    since = max(head.rfind(". "), head.rfind("\n"))
    return bool(_CALLISH.search(head[since + 1 :]))


def find_returns(text: str, facts: CodeFacts) -> list[Claim]:
    """f's result: "the function returns 'ab'", "**Answer:** 'ab'", "the output is [1]",
    "`f('x') == 'ab'`", "That list is returned" (the value just written), "the f-string gives
    'a-b'" (when f returns an f-string)."""
    names = facts.names
    claims: list[Claim] = []
    for m in _RETURN_RE.finditer(text):
        if m.group("noun") and m.group("noun") in names:
            continue  # "the result is ..." speaks of the variable `result`
        got = _value_at(text, m.end())  # a literal, or "an empty list" in words
        if got is None and (named := _NAMED_THEN_VALUE.match(text, m.end())):
            got = _value_at(text, named.end())  # "returns a new list with these values: [1]"
        if got is None or CONDITIONED.match(text, got[0]):
            continue  # "returns True when every character is a digit": f's rule, not this run
        subj = (m.group("subj") or "").strip().lower()
        head = text[: m.start()]
        subject_f = True
        # "text.find('a') returns 2" / "it returns" next to a method call: maybe not f's value.
        if m.group(0).lower().lstrip().startswith(
            ("it", "this", "which", "we", "so", "then", "and")
        ) or (subj == "" and "return" in m.group(0).lower()):
            # The whole sentence so far: "Then index = text.rfind('j', 0, 0) searches the
            # slice text[0:0], which is empty, so it returns -1" speaks of rfind.
            since = max(head.rfind(". "), head.rfind("\n"), len(head) - 240)
            subject_f = not _CALLISH.search(head[since + 1 :] + m.group(0))
        claims.append(
            Claim(
                RETURN,
                text[m.start() : got[0]].strip(),
                got[1],
                subject_f=subject_f,
                start=m.start(),
                end=got[0],
            )
        )
    for m in _ANSWER_FORMS.finditer(text):
        if any(c.start <= m.start() < c.end for c in claims):
            continue
        got = claimed_value(text.replace("`", " "), m.end())
        if got is None:
            continue
        word = re.search(r"answer|output|result", m.group(0), re.I)
        if word and word.group(0).lower() in {n.lower() for n in names}:
            continue  # "output = []" speaks of the variable `output`
        claims.append(
            Claim(RETURN, text[m.start() : got[0]].strip(), got[1], start=m.start(), end=got[0])
        )
    for m in _RETURNED.finditer(text):
        # "..., so it is returned: [1, 2]": the value after the colon is the one returned.
        colon = _COLON.match(text, m.end())
        after = _value_at(text, colon.end()) if colon else None
        if after is not None:
            claims.append(_stated(RETURN, text, m.start(), after))
            continue
        if CONDITIONED.match(text, m.end()):
            continue  # "'Half Life' is returned whenever 0 < num < 1000": f's rule, not this run
        lit = last_literal(text, m.start())
        if lit is not None and _kind_fits(m.group(0), lit[2]):
            s, e, value = lit
            claims.append(Claim(RETURN, text[s : m.end()].strip(), value, start=s, end=m.end()))
    if facts.return_fstring:
        for m in _FSTRING.finditer(text):
            got = claimed_value(text, m.end())
            if got is not None:
                claims.append(_stated(RETURN, text, m.start(), got))
    return claims


def _kind_fits(words: str, value: str) -> bool:
    """ "[44, 15], 9 elements, and that same list is returned": the words say what kind of
    value is returned; the last value written before them must be of that kind."""
    for noun, kind in KIND_NOUNS.items():
        if kind is not None and re.search(rf"\b{noun}\b", words, re.I):
            got = literal_value(value)
            return isinstance(got, kind) and not isinstance(got, bool)
    return True


def last_literal(text: str, end: int | None = None) -> tuple[int, int, str] | None:
    """The last literal written before `end` in its sentence ("..., giving [1, 2]. That list is
    returned"): looks back over the current and the previous sentence."""
    end = len(text) if end is None else end
    lo = max(0, end - 400)
    best = None
    i = lo
    while i < end:
        c = text[i]
        if c in "'\"[({" or c.isdigit() or c == "-":
            got = scan_literal(text, i)
            marker = (
                got is not None
                and re.fullmatch(r"[ \t]*", text[text.rfind("\n", 0, i) + 1 : i])
                and text[got[0] : got[0] + 1] in (".", ")")
            )
            if got is not None and got[0] <= end and not marker:
                best = (i, got[0], got[1])
                i = got[0]
                continue
        i += 1
    return best


_LOOP_VALUES_RE = re.compile(
    r"(?P<q>`?)(?P<name>\bthe\s+loop(?:'s)?\s+(?:variable|counter|index)|\b[A-Za-z_]\w*)(?P=q)\s+"
    r"(?:takes|will\s+take|goes\s+through|runs\s+through|runs(?=\s+(?:over\s+)?-?\d)|"
    r"iterates\s+(?:over|through)|ranges\s+over|steps\s+through)\s+(?:on\s+)?(?:the\s+)?"
    r"(?:(?:\d+|" + _COUNT_ALT + r")\s+(?=values|numbers|elements|items|characters))?(?:values?|"
    r"numbers|elements|items|characters)?\s*(?P<vals>.+?)(?=[.;]\s|[.;]$|\n|$|\s+in\s+turn|\s+\(|,\s+so\b|"
    r"\s+in\s+order|,\s+and\b|\s+respectively|,\s+which\b|\s+one\s+after)",
    re.I,
)
_RANGE_RE = re.compile(
    r"(?P<q>`?)(?P<name>\b[A-Za-z_]\w*)(?P=q)\s+(?:goes|runs|ranges|iterates|counts|loops)\s+"
    r"(?:from|over)\s+(?P<a>-?\d+)\s+(?:to|through|up\s+to|\.\.)\s+(?P<b>-?\d+)"
    r"(?P<incl>\s*(?:inclusive|\(inclusive\)))?",
    re.I,
)
_V = r"(?:-?\d+|'[^'\n]{0,20}'|\"[^\"\n]{0,20}\")"
_NAME_VALUES_RE = re.compile(
    r"\b(?:for|with|gives|giving|yields|so|i\.e\.|namely|over|takes)\s+(?P<name>[A-Za-z_]\w*)\s*(?:=|goes|takes)\s*"
    r"(?P<vals>"
    + _V
    + r"(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s+then\s+)(?:[A-Za-z_]\w*\s*=\s*)?"
    + _V
    + r")+)"
    r"|(?<![\w`])`?(?P<name2>[A-Za-z_]\w*)`?\s+goes\s+(?P<vals2>"
    + _V
    + r"(?:\s*,\s*(?:and\s+)?"
    + _V
    + r")+)",
)
_RANGE_SPAN_RE = re.compile(
    r"`?(?P<expr>range\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))`?\s+(?:counts|goes|runs|steps|iterates)\s+"
    r"(?:upwards\s+|downwards\s+|up\s+|down\s+|backwards\s+)?from\s+(?P<a>-?\d+)\s+(?:down\s+|up\s+)?"
    r"(?:to|through)\s+(?P<b>-?\d+)",
    re.I,
)
_THROUGH_RE = re.compile(
    r"\b(?P<name>[A-Za-z_]\w*)\s*=\s*(?:(?P<a>-?\d+)\s+(?:through|to|up\s+to|down\s+to)\s+(?P<b>-?\d+)\b"
    r"|(?P<one>-?\d+|'[^'\n]*')\s+(?:once|only)\b)",
    re.I,
)
_RANGE_GIVES = re.compile(
    r"`?(?P<expr>range\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))`?(?:(?:,\s*which\s+|\s+)(?:gives|yields|produces|is|=|->|→|generates|covers)\s+"
    r"|\s*:\s+(?=-?\d))"
    r"(?:the\s+)?(?:values\s+|numbers\s+)?(?P<vals>.+?)(?=[.;]\s|[.;]$|\n|$|,\s+(?:so|and|but|then)\b|\s+\()",
    re.I,
)
_TIMES_RE = re.compile(
    r"\b(?:the\s+)?(?:loop|body|while\s+loop|for\s+loop|loop\s+body|it)\s+(?:therefore\s+|thus\s+|only\s+)?"
    r"(?:runs|executes|iterates|goes\s+round|repeats|is\s+executed|is\s+run|will\s+run|"
    r"will\s+execute|runs\s+for|ends\s+after)\s+(?:exactly\s+|only\s+|just\s+)?(?P<n>\d+|"
    + _COUNT_ALT
    + r")(?:\s+times?|\s+iterations?)?\b"
    r"|\b(?P<n2>\d+|" + _COUNT_ALT + r")\s+iterations\s+(?:in\s+total|"
    r"altogether|overall)\b|\bthere\s+(?:are|will\s+be)\s+(?P<n3>\d+|"
    + _COUNT_ALT
    + r")\s+iterations\b",
    re.I,
)


_RANGE_TIMES_RE = re.compile(
    r"`?(?P<expr>range\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))`?\s+(?:runs|iterates|executes|loops|repeats|"
    r"goes\s+round|has)\s+(?:exactly\s+|only\s+)?(?P<n>\d+|" + _COUNT_ALT + r")"
    r"(?:\s+(?:times?|iterations?|values|numbers|elements|steps))\b",
    re.I,
)


def loop_entry_line(src: str, facts: CodeFacts) -> int | None:
    """The `for` header iterating over `src` (a range is made once, as the loop starts)."""
    want = src.replace(" ", "")
    lines = [h for h, it in facts.for_iters.items() if it.replace(" ", "") == want]
    return lines[0] if len(lines) == 1 else None


def _leading_values(words: str) -> str | None:
    """ "6, 4, 2, 0, zeroing those": the numbers listed before the words go on (two at least)."""
    items: list[str] = []
    for part in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", words.strip()):
        part = part.strip().strip("`")
        if not re.fullmatch(r"-?\d+", part):
            break
        items.append(part)
    return "[" + ", ".join(items) + "]" if len(items) >= 2 else None


def _values_list(words: str) -> str | None:
    """ "1 and 2", "1, 2, and 3", "[1, 2]", "'a', 'b' and 'c'", "1..10" -> a list literal."""
    w = words.strip().strip("`").strip()
    w = re.sub(r"^(?:in\s+order\s+|successively\s+)", "", w)
    if w.startswith("["):
        got = scan_literal(w, 0)
        return got[1] if got and got[0] >= len(w.rstrip(",")) - 1 else None
    if m := re.fullmatch(r"(-?\d+)\s*(?:\.\.\.?|…|–|-|to|through)\s*(-?\d+)", w):
        a, b = int(m.group(1)), int(m.group(2))
        if a <= b and b - a <= 1000:
            return repr(list(range(a, b + 1)))
        return None
    parts = re.split(r"\s*,\s*(?:and\s+|then\s+)?|\s+(?:and|then)\s+", w)
    items: list[str] = []
    for k, part in enumerate(parts):
        part = part.strip().strip("`")
        if not part:
            continue
        if part in ("...", "…", "..", "etc", "etc."):
            last = parts[k + 1].strip().strip("`") if k + 1 < len(parts) else None
            rest_ok = k + 2 >= len(parts) or _CLAUSE_AFTER.match(" ".join(parts[k + 2 :]))
            filled = _filled_in(items, last) if rest_ok else None
            if filled is None:
                return None  # "'a', 'b', ...": what the dots stand for cannot be told
            items = filled
            break
        if not is_literal(part):
            # "0 and 1 and the body runs twice": the listing ends where a clause begins (words,
            # not "so on" or "others", which say the listing goes on).
            if k >= 2 and _CLAUSE_AFTER.match(" ".join(parts[k:])):
                break
            return None
        items.append(part)
    if len(items) < 2:
        return None
    return "[" + ", ".join(items) + "]"


_ELIDED = re.compile(
    r"\s*,?\s*(?:\.\.\.|…|\.\.|etc\.?)(?:\s*,?\s*(?:(?:and|up\s+to|through|to)\s+)?(?P<last>-?\d+)\b)?"
)
"""A listing that goes on unsaid: "1, 2, ..., 10", "'a', 'b', …", "0, 2, 4, etc"."""


def _filled_in(items: list[str], last: str | None) -> list[str] | None:
    """The numbers "1, 2, ..., 10" stands for (a step the listed numbers keep, up to the last
    one written), or None when what the dots stand for cannot be told."""
    if last is None or not all(re.fullmatch(r"-?\d+", v) for v in items):
        return None
    nums = [int(v) for v in items]
    step = nums[1] - nums[0]
    if step == 0 or any(b - a != step for a, b in zip(nums, nums[1:], strict=False)):
        return None
    stop = int(last)
    if (stop - nums[-1]) % step or (stop - nums[-1]) // step < 1 or (stop - nums[0]) // step > 1000:
        return None
    return [str(v) for v in range(nums[0], stop + step, step)]


def _listing_end(words: str, vals: str) -> int:
    """Where in `words` the listing read as `vals` ends: the claim is the listing, not the
    clause after it ("0 and 1 | and the body runs twice")."""
    for cut in re.finditer(r"\s*,\s*(?:and\s+|then\s+)?|\s+(?:and|then)\s+", words):
        if _values_list(words[: cut.start()]) == vals:
            return cut.start()
    return len(words)


_CLAUSE_AFTER = re.compile(
    r"(?!(?:so\s+on|so\s+forth|etc|more|others|the\s+rest|onwards|beyond|up|down)\b)"
    r"[A-Za-z_]\w*\s+[A-Za-z_]\w*",
    re.I,
)


_LOOP_ITSELF = re.compile(
    r"\b(?:loops?|iterat\w*|runs?|ran|goes|repeats?|body|range\([^()\n]*\))\W*(?:\w+\W+){0,3}$",
    re.I,
)


def _some_values(text: str, m: re.Match[str]) -> bool:
    """ "for i = 0, 2, 4" after a test or an action ("i % 2 == 0 for i = 0, 2, 4", "we
    uppercase for i = 0 and 2") names the iterations it holds for, not all the loop runs; only
    the loop itself said to run for them ("the loop runs for i = 0 and i = 1", "For i = 0, 1:" at
    the start of a clause) lists them all."""
    if not m.group(0).lower().startswith(("for", "with")):
        return False
    clause = re.split(r"[.;:!?\n]\s|,\s", text[max(0, m.start() - 120) : m.start()])[-1]
    return bool(clause.strip()) and not _LOOP_ITSELF.search(clause)


def find_loop_claims(text: str, facts: CodeFacts) -> list[Claim]:
    """What a loop ranges over and how often it runs: "k takes the values 1 and 2", "i goes
    from 0 to 4", "range(1, 11) gives 1..10", "the loop runs 9 times"."""
    claims: list[Claim] = []
    for m in (_RANGE_GIVES.match(text, r.start()) for r in re.finditer(r"`?range\(", text)):
        if m is None:
            continue
        words = m.group("vals")
        named = re.match(r"\s*(?:only\s+)?[A-Za-z_]\w*\s*=\s*", words)
        if named:  # "range(0, 0, -3) gives i = 0": the values of the loop variable
            rest = words[named.end() :].strip()
            one = re.fullmatch(r"(-?\d+)(?:\s+(?:once|only))?", rest)
            words = f"[{one.group(1)}]" if one else rest
        vals = _values_list(words) or _leading_values(words)
        if vals is None:
            continue
        expr = resolve_expression(m.group("expr"), facts)
        if expr is None:
            continue
        claim = Claim(
            EXPRESSION, m.group(0), vals, name=f"list({expr})", start=m.start(), end=m.end()
        )
        claim.before_line = loop_entry_line(expr, facts)
        claims.append(claim)
    ranges = len(claims)
    for m in _LOOP_VALUES_RE.finditer(text):
        name = m.group("name")
        if name.lower().startswith("the loop"):  # "the loop variable runs 1, 2": f's one loop's
            targets = list(facts.for_targets.values())
            only = facts.single_loop and len(targets) == 1 and len(targets[0]) == 1
            name = next(iter(targets[0])) if only else ""
        if name not in facts.loop_vars:
            continue
        vals = _values_list(m.group("vals"))
        if vals is None:
            continue
        end = m.start("vals") + _listing_end(m.group("vals"), vals)
        claims.append(
            Claim(LOOP_VALUES, text[m.start() : end], vals, name=name, start=m.start(), end=end)
        )
    for m in _NAME_VALUES_RE.finditer(text):
        name = m.group("name") or m.group("name2")
        if name not in facts.loop_vars or any(c.start <= m.start() < c.end for c in claims):
            continue
        parts = re.split(
            r"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s+then\s+)(?:" + re.escape(name) + r"\s*=\s*)?",
            m.group("vals") or m.group("vals2"),
        )
        items = [v.strip() for v in parts if v.strip()]
        if len(items) < 2 or not all(is_literal(v) for v in items):
            continue
        if len({type(literal_value(v)) for v in items}) > 1:
            continue  # "'X' for i = 0 and 'Y' for i = 1": values of two things, interleaved
        end = m.end()
        if (elided := _ELIDED.match(text, end)) is not None:
            filled = _filled_in(items, elided.group("last"))
            if filled is None:
                continue  # "c goes 'a', 'b', ...": the listing goes on unsaid
            items, end = filled, elided.end()
        claims.append(
            Claim(
                LOOP_VALUES,
                text[m.start() : end],
                "[" + ", ".join(items) + "]",
                name=name,
                start=m.start(),
                end=end,
                some=_some_values(text, m),
            )
        )
    for m in _RANGE_RE.finditer(text):
        name = m.group("name")
        if name not in facts.loop_vars or any(c.start <= m.start() < c.end for c in claims):
            continue
        a, b = int(m.group("a")), int(m.group("b"))
        if not (a <= b and b - a <= 1000):
            continue
        # "goes from 0 to 4": both ends are values it takes (writers say "to 4" for range(5)).
        vals = repr(list(range(a, b + 1)))
        claims.append(Claim(LOOP_VALUES, m.group(0), vals, name=name, start=m.start(), end=m.end()))
    for m in _RANGE_SPAN_RE.finditer(text):
        expr = resolve_expression(m.group("expr"), facts)
        a, b = int(m.group("a")), int(m.group("b"))
        if expr is None or abs(b - a) > 1000:
            continue
        span = list(range(a, b + 1)) if a <= b else list(range(a, b - 1, -1))
        claim = Claim(
            EXPRESSION, m.group(0), repr(span), name=f"list({expr})", start=m.start(), end=m.end()
        )
        claim.before_line = loop_entry_line(expr, facts)
        claims.append(claim)
    for m in _THROUGH_RE.finditer(text):
        name = m.group("name")
        if name not in facts.loop_vars or any(c.start <= m.start() < c.end for c in claims):
            continue
        if m.group("a") is not None:
            a, b = int(m.group("a")), int(m.group("b"))
            if abs(b - a) > 1000:
                continue
            vals = repr(list(range(a, b + 1)) if a <= b else list(range(a, b - 1, -1)))
        else:
            vals = f"[{m.group('one')}]"
        claims.append(Claim(LOOP_VALUES, m.group(0), vals, name=name, start=m.start(), end=m.end()))
    for m in _RANGE_TIMES_RE.finditer(text):
        # "`range(0, len(s))` runs 5 times": as many times as the range has numbers.
        expr = resolve_expression(m.group("expr"), facts)
        if expr is None or any(
            _overlaps(Claim(LOOP_COUNT, "", "", start=m.start(), end=m.end()), c) for c in claims
        ):
            continue
        claim = Claim(
            EXPRESSION,
            m.group(0),
            str(_count(m.group("n"))),
            name=f"len({expr})",
            start=m.start(),
            end=m.end(),
        )
        claim.before_line = loop_entry_line(expr, facts)
        claims.append(claim)
    for m in _TIMES_RE.finditer(text):
        n = (m.group("n") or m.group("n2") or m.group("n3")).lower()
        count = _COUNT_WORDS.get(n) or int(n)
        claims.append(Claim(LOOP_COUNT, m.group(0), str(count), start=m.start(), end=m.end()))
    # "range(2, 2, 3), which yields i = 2 once": the range's own numbers are the claim, whatever
    # loop (of several over `i`) runs over it.
    return claims[:ranges] + [
        c for c in claims[ranges:] if not any(_overlaps(c, r) for r in claims[:ranges])
    ]


def iterations(text: str) -> list[tuple[int, str, int, int]]:
    """Every loop iteration a text names, as (ordinal, the words, start, end)."""
    out = []
    for m in _ITER_RE.finditer(text):
        n = (
            ORDINALS[m.group("word").lower()]
            if m.group("word")
            else int(m.group("num") or m.group("num2"))
        )
        out.append((n, m.group(0), m.start(), m.end()))
    return out


_RESULT_WORDS = re.compile(
    r"(?:,\s*|\s+)(?:giving|leaving|resulting\s+in|so\s+we\s+(?:get|have)|we\s+(?:get|now\s+have|are\s+left\s+with)|"
    r"which\s+(?:gives|leaves)|and\s+(?:we\s+)?get|to\s+get|to\s+give|yielding|producing|"
    r"(?:now\s+)?(?:looks|reads)\s+like)\s*:?\s*",
    re.I,
)
_NAME_WORD = re.compile(r"`?\b([A-Za-z_]\w*)\b`?")


_MEMBER_RE = re.compile(
    r"(?P<item>'[^'\n]*'|\"[^\"\n]*\"|-?\d+)\s+(?P<neg>is\s+not|isn't|is)\s+(?:also\s+|indeed\s+)?"
    r"(?:in|one\s+of(?:\s+the\s+\w+\s+of)?)\s+`?(?P<box>[A-Za-z_]\w*|'[^'\n]*'|\"[^\"\n]*\")`?"
    r"|`?(?P<box2>[A-Za-z_]\w*|'[^'\n]*'|\"[^\"\n]*\")`?\s+(?P<neg2>does\s+not\s+contain|doesn't\s+contain|"
    r"contains|has)\s+(?P<item2>'[^'\n]*'|\"[^\"\n]*\"|-?\d+)(?:\s+in\s+it)?",
    re.I,
)


def find_membership(text: str, facts: CodeFacts) -> list[Claim]:
    """ "'.' is in chars", "'x.' is not one of its words" (no: unresolved), "'qwbnjrxs' has 'jr'
    in it": a membership test stated in words, as the condition `item in box`."""
    claims: list[Claim] = []
    for m in _MEMBER_RE.finditer(text):
        item = m.group("item") or m.group("item2")
        box = m.group("box") or m.group("box2")
        neg = m.group("neg") or m.group("neg2") or ""
        if not is_literal(box) and box not in facts.names:
            continue
        if m.group("neg2") and m.group("neg2").lower() == "has" and not m.group(0).endswith("it"):
            continue  # "text has 5" is a count, not membership
        expr = resolve_expression(f"{item} in {box}", facts)
        if expr is None:
            continue
        claims.append(_stated_test(m, expr, not re.search(r"not|n't", neg, re.I)))
    return claims


def _stated_test(m: re.Match[str], expr: str, holds: bool) -> Claim:
    """The condition `expr` stated (by the words `m` matched) to hold or not."""
    return Claim(
        CONDITION, m.group(0), str(holds), name=expr, condition=expr, start=m.start(), end=m.end()
    )


_STR_OPERAND = r"'[^'\n]*'|\"[^\"\n]*\"|[A-Za-z_]\w*"
_AFFIX_RE = re.compile(
    r"`?(?P<s>" + _STR_OPERAND + r")`?\s+(?P<neg>does\s+not\s+|doesn't\s+|does\s+|still\s+)?"
    r"(?P<verb>starts?|begins?|ends?)\s+(?:with|in)\s+`?(?P<affix>" + _STR_OPERAND + r")`?",
    re.I,
)


def find_affixes(text: str, facts: CodeFacts) -> list[Claim]:
    """ "'ababa' does end with 'ab'", "word doesn't start with 'x'": a prefix or suffix test
    stated in words, as the condition `s.endswith(affix)` (each side a string literal or a
    variable of f; a name that is neither, "the word ends with 'ab'", is no subject)."""
    claims: list[Claim] = []
    for m in _AFFIX_RE.finditer(text):
        s, affix = m.group("s"), m.group("affix")
        if any(not (is_literal(x) or x in facts.names) for x in (s, affix)):
            continue
        if not any(is_literal(x) for x in (s, affix)) and not m.group(0).startswith("`"):
            continue  # two bare names in prose ("the loop ends with i") are words, not a test
        method = "startswith" if m.group("verb").lower().startswith(("s", "b")) else "endswith"
        expr = resolve_expression(f"{s}.{method}({affix})", facts)
        if expr is None:
            continue
        neg = (m.group("neg") or "").lower()
        claims.append(_stated_test(m, expr, not re.search(r"not|n't", neg)))
    return claims


_ANAPHORA_RE = re.compile(
    r"\b(?:so\s+|and\s+)?(?:this|that|it|which)(?:'s|\s+is(?:\s+still|\s+now|\s+just)?|\s+gives|"
    r"\s+evaluates\s+to|\s+returns|\s+yields|\s+becomes|\s+comes\s+out\s+as)\s+",
    re.I,
)


def find_anaphora(text: str, facts: CodeFacts) -> list[Claim]:
    """ "`a and b` ..., so this is 'CJU'", "`r['c'] is r['d']`: ..., so this is True": a value
    for the expression the clause began with (the last one backticked before it in the line)."""
    claims: list[Claim] = []
    for m in _ANAPHORA_RE.finditer(text):
        got = _value_at(text, m.end())
        if got is None:
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        ticks = list(re.finditer(r"`([^`\n]+)`", text[line_start : m.start()]))
        subject = None
        for t in reversed(ticks):
            src = t.group(1).strip()
            if is_literal(src):
                continue
            if _is_subject_expression(src):
                subject = resolve_expression(src, facts)
            break
        if subject is None:
            continue
        end, lit = got
        kind = CONDITION if lit in ("True", "False") else EXPRESSION
        claim = Claim(kind, text[m.start() : end], lit, name=subject, start=m.start(), end=end)
        claim.inferred = True  # "this" is read as the line's expression: agree, never contradict
        if kind == CONDITION:
            claim.condition = subject
        claims.append(claim)
    return claims


_NUM = r"(?P<n>\d+|" + _COUNT_ALT + ")"
_HAS_LEN_RE = re.compile(
    r"`?(?P<box>[A-Za-z_]\w*)`?\s+(?:now\s+|then\s+|still\s+)?(?:has|contains|holds|is\s+made\s+of)\s+"
    + _NUM
    + r"\s+(?:elements|items|characters|chars|letters|entries|keys|values|numbers|strings|words|pairs)\b",
    re.I,
)
_UNITS = (
    r"characters|chars|letters|digits|elements|items|entries|numbers|values|words|strings|keys|"
    r"pairs|tuples|lists|integers|ints"
)
_LISTED_BEFORE = re.compile(r"(?:,|\band|\bthen)\s*`?$")
"""A value that ends a listing ("'1', two spaces, '3'"): a count after it is the listing's."""
_LIT_LEN_RE = re.compile(
    r"(?P<lit>'[^'\n]{0,400}'|\"[^\"\n]{0,400}\"|\[[^\]\n]{0,400}\])\s*(?:[-—–,:(]\s*)?(?:that's|that\s+is|which\s+is|"
    r"it\s+has|has|is|has\s+length|of\s+length)\s+" + _NUM + r"\s+(?:" + _UNITS + r"|long)\b",
    re.I,
)
# "list('hbtofdeiequ'), that's 10 characters": the count of what the expression before gives.
_THATS_LEN_RE = re.compile(
    r"\s*(?:,|-|—|–|:)\s*(?:that's|that\s+is|which\s+is|i\.e\.)\s+(?:only\s+|just\s+|exactly\s+)?"
    + _NUM
    + r"\s+(?:"
    + _UNITS
    + r")\b",
    re.I,
)
_APPEARS_RE = re.compile(
    r"(?P<item>'[^'\n]*'|\"[^\"\n]*\"|-?\d+)\s+(?:appears|occurs|shows\s+up|is\s+found)\s+"
    + _NUM
    + r"(?:\s+times?)?(?:\s+in\s+`?(?P<box>[A-Za-z_]\w*)`?)?",
    re.I,
)


_LENGTH_OF_RE = re.compile(
    r"\bthe\s+(?:length|size|len)\s+of\s+(?:the\s+(?:list|string|dict(?:ionary)?|tuple|set)\s+)?"
    r"`?(?P<box>[A-Za-z_]\w*)`?\s+(?:is|was|equals|becomes|=|->|→)\s+"
    r"|\bthe\s+number\s+of\s+(?:elements|items|characters|entries|keys|values|letters)\s+in\s+"
    r"`?(?P<box2>[A-Za-z_]\w*)`?\s+(?:is|was|equals|becomes|=)\s+",
    re.I,
)
_COUNT_OF_RE = re.compile(
    r"\bthe\s+(?:count|number)\s+of\s+(?:times\s+)?(?P<item>'[^'\n]*'|\"[^\"\n]*\"|-?\d+)s?"
    r"(?:\s+(?:appears|occurs))?(?:\s+in\s+`?(?P<box>[A-Za-z_]\w*)`?)?\s+(?:is|was|equals|=)\s+",
    re.I,
)


def _counted_box(facts: CodeFacts, named: str | None) -> str | None:
    """The sequence "5 appears 3 times" counts in: the one named, else the one the code counts
    in (`.count` on one receiver), else f's only argument."""
    if named is not None:
        return named if named in facts.names else None
    receivers = facts.calls.get("count", set())
    if len(receivers) == 1 and next(iter(receivers)) in facts.names:
        return next(iter(receivers))
    return facts.params[0] if len(facts.params) == 1 else None


_PARITY_RE = re.compile(
    r"\b(?:in\s+`?(?P<lit>'[^'\n]*'|\"[^\"\n]*\"|\[[^\]\n]*\])`?,?\s+)?(?:the\s+)?(?:letters|characters|chars|"
    r"elements|items|values|digits|numbers|entries)\s+at\s+(?:the\s+)?(?P<par>even|odd)(?:-numbered)?\s+"
    r"(?:indices|indexes|positions|places)(?:\s+(?:of|in)\s+`?(?P<box>[A-Za-z_]\w*)`?)?\s+(?:are|were)\s+"
    r"(?P<vals>(?:'[^'\n]*'|\"[^\"\n]*\"|-?\d+|[A-Za-z])(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+)"
    r"(?:'[^'\n]*'|\"[^\"\n]*\"|-?\d+|[A-Za-z]))+)\b",
    re.I,
)


def find_parity(text: str, facts: CodeFacts) -> list[Claim]:
    """ "in 'vsnlygltaw' the letters at even indices are s, l, g, t and w": what sits at the
    even (or odd) positions of a written value, a named variable or f's only argument."""
    claims: list[Claim] = []
    for m in _PARITY_RE.finditer(text):
        box = m.group("lit") or m.group("box")
        if box is None and len(facts.params) == 1:
            box = facts.params[0]
        if box is None or not (is_literal(box) or box in facts.names):
            continue
        items = [v for v in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", m.group("vals")) if v]
        if len(items) < 2:
            continue
        quoted = [repr(v) if re.fullmatch(r"[A-Za-z]", v) else v for v in items]
        if not all(is_literal(v) for v in quoted):
            continue
        start = 0 if m.group("par").lower() == "even" else 1
        claims.append(
            Claim(
                EXPRESSION,
                m.group(0),
                "[" + ", ".join(quoted) + "]",
                name=f"list({box}[{start}::2])",
                start=m.start(),
                end=m.end(),
            )
        )
    return claims


_CHAR_KINDS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "uppercase": ("_c.isupper()", str.isupper),
    "upper-case": ("_c.isupper()", str.isupper),
    "capital": ("_c.isupper()", str.isupper),
    "lowercase": ("_c.islower()", str.islower),
    "lower-case": ("_c.islower()", str.islower),
    "digit": ("_c.isdigit()", str.isdigit),
    "vowel": ("_c in 'aeiouAEIOU'", lambda c: c in "aeiouAEIOU"),
    "space": ("_c == ' '", lambda c: c == " "),
}
"""A kind of character named in words, as the test each character of a string is put to."""
_KIND = r"(?P<kind>upper-?case|capital|lower-?case|digit|vowel|space)"
_KIND_NOUN = r"(?:s|\s+(?:letters?|characters?|chars?|ones))?"
_CHAR = r"(?:'[^'\n]'|\"[^\"\n]\"|[A-Za-z0-9](?![\w'\"]))"
_CHARS = r"(?P<vals>" + _CHAR + r"(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+)" + _CHAR + r")*)"
_BOX = r"`?(?P<box>'[^'\n]{2,400}'|\"[^\"\n]{2,400}\"|[A-Za-z_]\w*)`?"
_KINDS_LISTED_RE = re.compile(
    r"(?:\bin\s+"
    + _BOX.replace("box", "lit")
    + r",?\s+)?\bthe\s+"
    + _KIND
    + _KIND_NOUN
    + r"(?:\s+(?:in|of)\s+"
    + _BOX
    + r")?\s+(?:are|were)\s+(?:just\s+|only\s+)?"
    + _CHARS
    + r"|^\s*(?:[-*]\s+)?"
    + _KIND.replace("kind", "kind2")
    + _KIND_NOUN
    + r"\s*:\s*"
    + _CHARS.replace("vals", "vals2")
    + r"\s*(?:[.;]|$)",
    re.I,
)
_KINDS_COUNTED_RE = re.compile(
    r"(?:" + _BOX + r"\s+|\b(?P<the>the\s+(?:string|input|text|word)|it)\s+)?"
    r"(?:has|contains|holds)\s+(?:only\s+|exactly\s+|just\s+)?"
    + _NUM
    + r"\s+"
    + _KIND
    + _KIND_NOUN
    + r"(?:\s+in\s+"
    + _BOX.replace("box", "box2")
    + r")?",
    re.I,
)
_SUBPART = re.compile(
    r"\b(?:in|of|among|from|within)\s+the\s+(?!string\b|input\b|text\b|word\b)\w+", re.I
)


def _kind_box(text: str, at: int, named: str | None, facts: CodeFacts) -> str | None:
    """The string a kind of character is counted in: the one named (a literal or a variable of
    f), else the one string literal written before in the sentence, else f's only argument, if
    the sentence does not narrow it to a part ("in the first word")."""
    if named is not None:
        return named if is_literal(named) or named in facts.names else None
    before = text[:at]
    quoted = re.finditer(r"'[^'\n]{0,400}'|\"[^\"\n]{0,400}\"", before)
    lits = {q.group(0) for q in quoted if len(q.group(0)) >= 4 and is_literal(q.group(0))}
    if len(lits) == 1:
        return lits.pop()
    if lits or _SUBPART.search(before) or len(facts.params) != 1:
        return None
    return facts.params[0]


def find_char_kinds(text: str, facts: CodeFacts) -> list[Claim]:
    """ "the uppercase letters are S and R", "Uppercase: P, I, O", "the string has 16 digits":
    which characters of a string are of a kind, or how many, judged by putting each character
    of that string to the kind's test. A listing is compared as a set (writers list each letter
    once or every occurrence), and each item listed must itself be of the kind ("the uppercase
    letters are a problem" lists nothing)."""
    claims: list[Claim] = []
    for m in _KINDS_LISTED_RE.finditer(text):
        kind = (m.group("kind") or m.group("kind2")).lower()
        vals = m.group("vals") or m.group("vals2")
        box = _kind_box(text, m.start(), m.group("lit") or m.group("box"), facts)
        if kind not in _CHAR_KINDS or kind == "space" or box is None:
            continue
        test, holds = _CHAR_KINDS[kind]
        items = [v.strip("'\"") for v in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", vals) if v]
        if not items or not all(holds(c) for c in items):
            continue
        start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        end = m.end("vals") if m.group("vals") else m.end("vals2")
        claims.append(
            Claim(
                EXPRESSION,
                text[start:end],
                repr(sorted(set(items))),
                name=f"sorted(set(_c for _c in {box} + '' if {test}))",
                start=start,
                end=end,
            )
        )
    for m in _KINDS_COUNTED_RE.finditer(text):
        kind = m.group("kind").lower()
        named = m.group("box") or m.group("box2")
        if named is not None and not (is_literal(named) or named in facts.names):
            continue
        if named is None and m.group("the") is None:
            continue
        box = _kind_box(text, m.start(), named, facts)
        if kind not in _CHAR_KINDS or box is None:
            continue
        test = _CHAR_KINDS[kind][0]
        claims.append(
            Claim(
                EXPRESSION,
                m.group(0),
                str(_count(m.group("n"))),
                name=f"sum(1 for _c in {box} + '' if {test})",
                start=m.start(),
                end=m.end(),
            )
        )
    return claims


def find_lengths(text: str, facts: CodeFacts) -> list[Claim]:
    """ "the length of nums is 5", "the number of keys in d is 2", "the count of 4 is 3": a
    length or count stated in words, as the expression `len(nums)` / `nums.count(4)`."""
    claims: list[Claim] = []
    for m in _LENGTH_OF_RE.finditer(text):
        box = m.group("box") or m.group("box2")
        got = _value_at(text, m.end())
        if box not in facts.names or got is None or not re.fullmatch(r"\d+", got[1]):
            continue
        claims.append(_stated(EXPRESSION, text, m.start(), got, name=f"len({box})"))
    for m in _COUNT_OF_RE.finditer(text):
        box = _counted_box(facts, m.group("box"))
        got = _value_at(text, m.end())
        if box is None or got is None or not re.fullmatch(r"\d+", got[1]):
            continue
        counted = resolve_expression(f"{box}.count({m.group('item')})", facts)
        if counted is None:
            continue
        claims.append(_stated(EXPRESSION, text, m.start(), got, name=counted))
    return claims


_CHAR_WORDS = {
    "comma": "','",
    "space": "' '",
    "dot": "'.'",
    "period": "'.'",
    "colon": "':'",
    "semicolon": "';'",
    "hyphen": "'-'",
    "dash": "'-'",
    "underscore": "'_'",
    "slash": "'/'",
    "backslash": "'\\\\'",
    "newline": "'\\n'",
    "tab": "'\\t'",
}
_POSITIONS_RE = re.compile(
    r"(?:(?P<q>`?)(?P<item>'[^'\n]*'|\"[^\"\n]*\"|-?\d+)(?P=q)|`(?P<bare>[^`\s'\"])`"
    r"|\bthe\s+(?:first\s+|only\s+)?(?P<word>" + "|".join(_CHAR_WORDS) + r"))\s+"
    r"(?:(?P<verb>appears|occurs|is|sits|lies|shows\s+up|is\s+found|can\s+be\s+found)\s+)?(?:only\s+)?at\s+"
    r"(?:positions|indices|indexes|index|position)\s+(?P<vals>-?\d+(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+)-?\d+)*)"
    r"(?:\s+(?:in|of)\s+`?(?P<box>[A-Za-z_]\w*)`?)?",
    re.I,
)


_ONE_PLACE = re.compile(r"\bat\s+(?:index|position)\s", re.I)
"""One place named in the singular: where one occurrence is, not where all of them are."""


def _count(word: str) -> int:
    w = word.lower()
    return _COUNT_WORDS.get(w) or int(w)


def holder(facts: CodeFacts, args: dict[str, object], item: str, reach: int = 0) -> str | None:
    """The one argument of f, as passed, that holds `item` (a character of a string argument, an
    item of a list) and is longer than `reach` (the furthest place the chain names): where a
    place or count of it is meant when the chain names no sequence and f takes several. None
    when no argument or more than one fits."""
    want = literal_value(item)
    found = []
    for name in facts.params:
        have = args.get(name)
        if isinstance(have, str | list | tuple) and len(have) > reach:
            try:
                if want in have:
                    found.append(name)
            except TypeError:
                continue
    return found[0] if len(found) == 1 else None


def find_counts(text: str, facts: CodeFacts, args: dict[str, object] | None = None) -> list[Claim]:
    """Counts and lengths: "ls has 8 elements", "'abcde' - that's 6 characters", "5 appears 3
    times in nums" (or in f's only argument when none is named, or the one argument holding
    the item)."""
    claims: list[Claim] = []
    for m in _HAS_LEN_RE.finditer(text):
        if m.group("box") not in facts.names:
            continue
        expr = f"len({m.group('box')})"
        claims.append(
            Claim(
                EXPRESSION,
                m.group(0),
                str(_count(m.group("n"))),
                name=expr,
                start=m.start(),
                end=m.end(),
            )
        )
    for m in _LIT_LEN_RE.finditer(text):
        if not is_literal(m.group("lit")):
            continue
        summary = re.search(r"\b(?:that's|that\s+is|which\s+is)\b", m.group(0), re.I)
        if summary and _LISTED_BEFORE.search(text[max(0, m.start() - 8) : m.start()]):
            continue  # "'1', two spaces, three tabs, '3' — that's 7": the whole listing's
        expr = f"len({m.group('lit')})"
        # The words of the count only: the literal may already be the value of another claim.
        at = (
            m.end("lit")
            + len(text[m.end("lit") : m.end()])
            - len(text[m.end("lit") : m.end()].lstrip(" ,:-—–("))
        )
        claims.append(
            Claim(
                EXPRESSION,
                text[at : m.end()],
                str(_count(m.group("n"))),
                name=expr,
                start=at,
                end=m.end(),
            )
        )
    for m in _THATS_LEN_RE.finditer(text):
        if any(c.start <= m.start() < c.end for c in claims):
            continue
        subject = _expression_before(text, m.start())
        if subject is None:
            continue
        s_start, src = subject
        if _LISTED_BEFORE.search(text[max(0, s_start - 8) : s_start]):
            continue  # "'1', two spaces, three tabs, '3' — that's 7": the whole listing's
        resolved = resolve_expression(src, facts)
        if resolved is None or _names_in_expression(resolved) & facts.names:
            continue  # only what the words before say, whatever the frame holds
        at = m.start() + len(m.group(0)) - len(m.group(0).lstrip(" ,:-—–"))
        claims.append(
            Claim(
                EXPRESSION,
                text[at : m.end()],
                str(_count(m.group("n"))),
                name=f"len({resolved})",
                start=at,
                end=m.end(),
            )
        )
    for m in _POSITIONS_RE.finditer(text):
        box = m.group("box")
        bare = m.group("bare")
        item = m.group("item") or (repr(bare) if bare else _CHAR_WORDS[m.group("word").lower()])
        if box is None and len(facts.params) == 1:
            box = facts.params[0]
        elif box is None and is_literal(item) and not _ONE_PLACE.search(m.group(0)):
            # "'e' at indices 0 and 8" of f(text, chars): the one argument holding 'e' that
            # reaches index 8. One place ("'6' is at position 7") may be of a local sequence.
            reach = max(int(v) for v in re.findall(r"-?\d+", m.group("vals")))
            box = holder(facts, args or {}, item, reach)
        if m.group("verb") is None and not (bare or _line_head(text, m.start())):
            continue  # "insert '*' at index 0" is an action; "- `e` at indices 0, 8" a place
        if box is None or box not in facts.names or not is_literal(item):
            continue
        found = [int(v) for v in re.findall(r"-?\d+", m.group("vals"))]
        if len(found) == 1 and _ONE_PLACE.search(m.group(0)):
            # "'/' is at index 7" (the first of two, maybe): that place holds it, no more.
            claims.append(
                Claim(
                    EXPRESSION,
                    m.group(0),
                    item,
                    name=f"{box}[{found[0]}]",
                    start=m.start(),
                    end=m.end(),
                )
            )
            continue
        expr = f"[_i for _i, _v in enumerate({box}) if _v == {item}]"
        claims.append(
            Claim(EXPRESSION, m.group(0), repr(found), name=expr, start=m.start(), end=m.end())
        )
    for m in _APPEARS_RE.finditer(text):
        box = _counted_box(facts, m.group("box"))
        if box is None:
            continue
        counted = resolve_expression(f"{box}.count({m.group('item')})", facts)
        if counted is None:
            continue
        claims.append(
            Claim(
                EXPRESSION,
                m.group(0),
                str(_count(m.group("n"))),
                name=counted,
                start=m.start(),
                end=m.end(),
            )
        )
    return claims


_MAKES_RE = re.compile(
    r"\b(?:makes|making|leaves|leaving|turns)\s+`?(?P<name>[A-Za-z_]\w*)`?\s+(?:into\s+)?", re.I
)
_APPENDS_RE = re.compile(
    r"`?(?P<call>[A-Za-z_]\w*\.(?P<method>append|add|insert|extend|remove|appendleft)\((?P<args>[^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\))`?"
    r"\s+(?:then\s+)?(?:appends|adds|inserts|extends\s+(?:it\s+)?with|removes|puts)\s+(?:the\s+value\s+)?",
    re.I,
)


_TURNS_RE = re.compile(
    r"`?\.?(?P<method>[a-z_]+)(?:\(\))?`?\s+(?:turns|converts|changes|makes|maps|transforms)\s+"
    r"(?P<lit>'[^'\n]*'|\"[^\"\n]*\")\s+(?:into|to)\s+",
    re.I,
)
_STR_METHODS = frozenset(
    [
        "upper",
        "lower",
        "casefold",
        "title",
        "capitalize",
        "swapcase",
        "strip",
        "lstrip",
        "rstrip",
        "split",
        "rsplit",
        "splitlines",
    ]
)


def find_transforms(text: str) -> list[Claim]:
    """ "casefold turns 'hELLO' into 'hello'": a string method applied to a written value, a
    closed expression whatever the frame holds."""
    claims: list[Claim] = []
    for m in _TURNS_RE.finditer(text):
        method = m.group("method").lower()
        if method not in _STR_METHODS or not is_literal(m.group("lit")):
            continue
        got = _value_at(text, m.end())
        if got is None:
            continue
        expr = f"{m.group('lit')}.{method}()"
        claims.append(_stated(EXPRESSION, text, m.start(), got, name=expr))
    return claims


_SETS_RE = re.compile(
    r"\b(?:sets|set|assigns|stores)\s+`?(?P<subj>[A-Za-z_]\w*(?:\[[^\]\n]{1,40}\])*)`?\s+(?:to|=)\s+",
    re.I,
)


def find_sets(text: str, facts: CodeFacts) -> list[Claim]:
    """ "it sets a['foo'] to 'bar'", "sets count to 3": the subject's value once it is set."""
    claims: list[Claim] = []
    for m in _SETS_RE.finditer(text):
        got = _value_at(text, m.end())
        if got is None:
            continue
        subj = m.group("subj")
        if subj in facts.names:
            claims.append(_stated(BINDING, text, m.start(), got, name=subj, change=True))
            continue
        expr = resolve_expression(subj, facts)
        if expr is not None and "[" in subj:
            claims.append(_stated(EXPRESSION, text, m.start(), got, name=expr))
    return claims


_ADDS_TO_RE = re.compile(
    r"\b(?:adds|appends|puts|pushes|inserts|places)\s+(?:the\s+(?:value|string|number|item|element)\s+)?"
    r"(?P<item>'[^'\n]*'|\"[^\"\n]*\"|-?\d+(?:\.\d+)?|\([^()\n]*\))\s+"
    r"(?:(?:on)?to|into|in|at\s+the\s+(?:end|back|front|start)\s+of)\s+(?:the\s+(?:end|back|front|start)\s+of\s+)?"
    r"`?(?P<box>[A-Za-z_]\w*)`?(?![\w.(\[])",
    re.I,
)


def _mutation_line(box: str, facts: CodeFacts) -> int | None:
    """The one line where the code changes `box` by a method call on it, if there is one."""
    from cruxtui.core.reasoning.code_facts import CHANGING

    lines: set[int] = set()
    for whole, at in facts.call_lines.items():
        head, _, rest = whole.partition(".")
        if head == box and rest.split("(", 1)[0] in CHANGING:
            lines |= at
    return next(iter(lines)) if len(lines) == 1 else None


def find_additions(text: str, facts: CodeFacts) -> list[Claim]:
    """ "extend adds 'nammo' to the end of total", "appends 7 to out": once the code's change of
    that variable has run, the value is in it (an element of a list or set, a key of a dict, a
    piece of a string); a number "added to" a number is arithmetic, and its test cannot run."""
    claims: list[Claim] = []
    for m in _ADDS_TO_RE.finditer(text):
        box, item = m.group("box"), m.group("item")
        if box not in facts.names or not is_literal(item):
            continue
        claim = Claim(
            EXPRESSION,
            m.group(0),
            "True",
            name=f"{item} in {box}",
            start=m.start(),
            end=m.end(),
        )
        written = [
            facts.call_lines.get(w.group(0).replace(" ", ""), set())
            for w in re.finditer(r"\b" + re.escape(box) + r"\.\w+\([^()\n]*\)", text[: m.start()])
        ]
        if written and len(written[-1]) == 1:
            claim.line = next(iter(written[-1]))  # "total.extend(arg) adds ...": that call
        else:
            claim.line = _mutation_line(box, facts)
        if claim.line is None:
            continue  # when the value gets there is not said
        claims.append(claim)
    return claims


_THE_SLICE_RE = re.compile(
    r"\b(?:the|that|this)\s+(?:resulting\s+|whole\s+)?slice\s+(?:then\s+|therefore\s+|thus\s+)?"
    r"(?:is|gives|returns|yields|evaluates\s+to|comes\s+out\s+as)(?!\s+(?:not|never)\b)\s+",
    re.I,
)


def find_the_slice(text: str, facts: CodeFacts) -> list[Claim]:
    """ "that slice is empty", "the slice gives 'bc'": with one slicing expression in the code,
    "the slice" is that one (with several, which is meant is unclear: no claim)."""
    if len(facts.slices) != 1:
        return []
    written, lines = next(iter(facts.slices.items()))
    subject = resolve_expression(written, facts)
    if subject is None:
        return []
    claims: list[Claim] = []
    for m in _THE_SLICE_RE.finditer(text):
        got = _value_at(text, m.end())
        if got is not None:
            claim = _stated(EXPRESSION, text, m.start(), got, name=subject)
            if len(lines) == 1:
                claim.before_line = next(iter(lines))  # as the line taking it starts
            claims.append(claim)
    return claims


_TYPE_TESTS = {
    "list": "list",
    "string": "str",
    "str": "str",
    "dictionary": "dict",
    "dict": "dict",
    "tuple": "tuple",
    "set": "set",
    "integer": "int",
    "int": "int",
}
_TAKES_RE = re.compile(
    r"\b(?:the\s+(?:python\s+)?function(?:\s+`?f`?)?|`?f`?|it)\s+(?:takes|accepts|receives|expects)\s+"
    r"(?:in\s+)?(?:a|an|one)\s+(?:single\s+)?(?P<type>list|string|str|dictionary|dict|tuple|set|integer|int)\b"
    r"(?:\s+of\s+\w+)?\s+as\s+(?:its\s+|an?\s+)?(?:input|argument|parameter)\b",
    re.I,
)


def find_input_types(text: str, facts: CodeFacts) -> list[Claim]:
    """ "The function takes a list of integers as input": of a function of one parameter, the
    type of the argument passed (judged as f starts; what the list holds is not judged)."""
    if len(facts.params) != 1 or facts.body_line is None:
        return []
    claims: list[Claim] = []
    for m in _TAKES_RE.finditer(text):
        kind = _TYPE_TESTS[m.group("type").lower()]
        claim = Claim(
            CONDITION,
            m.group(0),
            "True",
            name=f"isinstance({facts.params[0]}, {kind})",
            start=m.start(),
            end=m.end(),
        )
        claim.condition = claim.name
        claim.before_line = facts.body_line
        claims.append(claim)
    return claims


_LIT = r"'[^'\n]*'|\"[^\"\n]*\"|-?\d+(?:\.\d+)?"
_INSERTS_RE = re.compile(
    r"\binserts?\s+(?:the\s+(?:value|string|number|element|item)\s+)?(?P<val>" + _LIT + r")\s+"
    r"(?:at|into)\s+(?:the\s+)?(?:position|index|place|slot)\s+(?P<idx>-?\d+)\b"
    r"|(?P<val2>" + _LIT + r")\s+(?:is|gets|goes|will\s+be)\s+(?:inserted\s+)?(?:in\s+at|in|at)\s+"
    r"(?:position|index)\s+(?P<idx2>-?\d+)\b",
    re.I,
)


def find_inserts(text: str, facts: CodeFacts) -> list[Claim]:
    """ "the call inserts the value 0 at position 9", "15 is inserted at index 4": the code's one
    `insert` call (or the one written before), by its arguments as that line starts: the value
    passed, and the place — as passed, or where Python puts it (a negative index counts from the
    end, one past the end appends): either is what the writer may mean."""
    calls = facts.call_sources.get("insert", set())
    claims: list[Claim] = []
    for m in _INSERTS_RE.finditer(text):
        written = re.findall(
            r"\b[A-Za-z_]\w*\.insert\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)", text[: m.start()]
        )
        mine = [c for c in calls if written and c.replace(" ", "") == written[-1].replace(" ", "")]
        source = mine[0] if mine else (next(iter(calls)) if len(calls) == 1 else None)
        if source is None:
            continue
        try:
            call = safe_ast.parse(source, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if (
            not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute))
            or len(call.args) != 2
        ):
            continue
        box = ast.unparse(call.func.value)
        where, what = (ast.unparse(a) for a in call.args)
        lines = facts.call_lines.get(source.replace(" ", ""), set())
        if len(lines) != 1 or any(resolve_expression(x, facts) is None for x in (box, where, what)):
            continue
        val, idx = m.group("val") or m.group("val2"), m.group("idx") or m.group("idx2")
        if not is_literal(val):
            continue
        placed = f"min(max(({where}) + len({box}) if ({where}) < 0 else ({where}), 0), len({box}))"
        test = f"({what}) == {val} and {idx} in (({where}), {placed})"
        said = f"{source} puts {val} at {idx}"  # how the judgement reads
        claim = Claim(
            CONDITION, m.group(0), "True", name=test, condition=said, start=m.start(), end=m.end()
        )
        claim.before_line = next(iter(lines))
        claims.append(claim)
    return claims


_POSITIONS_GET_RE = re.compile(
    r"\b(?:positions|indices|indexes|indices)\s+(?P<vals>\d+(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+)\d+)+)"
    r"\s+(?:get|are|will\s+be|become|all\s+get)\s+(?P<verb>[a-z]+)\b",
    re.I,
)


def _participle_method(verb: str, facts: CodeFacts) -> str | None:
    """The method a participle names ("swapcased", "removed", "popped", "lowered")."""
    for cut in (1, 2, 3):
        stem = verb[:-cut]
        if verb.endswith(("d", "ed", "ped", "ted")) and stem in facts.method_lines:
            return stem
    return None


def find_branch_positions(text: str, facts: CodeFacts) -> list[Claim]:
    """ "positions 1, 3, 5, 7, 9 get swapcased": the places at which the code makes that call,
    as the values of the position variable of the `for` loop over a range around its one line."""
    claims: list[Claim] = []
    for m in _POSITIONS_GET_RE.finditer(text):
        method = _participle_method(m.group("verb").lower(), facts)
        if method is None or len(facts.method_lines[method]) != 1:
            continue
        line = next(iter(facts.method_lines[method]))
        loops = [
            h
            for h, _b, end in facts.loops
            if h < line <= end
            and facts.for_iters.get(h, "").startswith("range(")
            and len(facts.for_targets.get(h, set())) == 1
        ]
        if len(loops) != 1:
            continue
        name = next(iter(facts.for_targets[loops[0]]))
        found = [int(v) for v in re.findall(r"\d+", m.group("vals"))]
        claim = Claim(
            LOOP_VALUES, m.group(0), repr(found), name=name, line=line, start=m.start(), end=m.end()
        )
        claims.append(claim)
    return claims


def find_effects(text: str, facts: CodeFacts) -> list[Claim]:
    """ "which makes total [1, 2, 3]" (a variable's new value after an action), and
    "`s.append(len(s))` appends 4" (the value the call's argument has)."""
    claims: list[Claim] = []
    for m in _MAKES_RE.finditer(text):
        name = m.group("name")
        if name not in facts.names:
            continue
        got = _value_at(text, m.end())
        if got is None:
            continue
        claims.append(_stated(BINDING, text, m.start(), got, name=name, change=True))
    for m in _APPENDS_RE.finditer(text):
        got = _value_at(text, m.end())
        if got is None:
            continue
        try:
            call = safe_ast.parse(m.group("call"), mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(call, ast.Call) or not call.args:
            continue
        try:
            arg = ast.unparse(call.args[-1])
        except RecursionError:
            continue
        if is_literal(arg):
            continue
        expr = resolve_expression(arg, facts)
        if expr is None:
            continue
        claim = _stated(EXPRESSION, text, m.start(), got, name=expr)
        lines = facts.method_lines.get(m.group("method"), set())
        if len(lines) == 1:
            claim.before_line = next(iter(lines))  # the argument, as that line starts
        claims.append(claim)
    return claims


_ARITH_EQ = re.compile(
    r"\s*(?:=(?!=)|\b(?:is|equals|gives|evaluates\s+to|comes\s+to|makes)\b(?!\s+not\b))\s*(?=[-\d'\"\[(])"
)


def find_arithmetic(text: str) -> list[Claim]:
    """ "7 // 2 = 4", "'Mmo' + 'amt' = 'Mmoamt'", "(2 + 1) // 2 * -1 = -1": an expression of
    values only, worked out in the chain. Its truth does not depend on where it is placed."""
    claims: list[Claim] = []
    for m in _ARITH_EQ.finditer(text):
        got = claimed_value(text, m.end())
        if got is None:
            continue
        line_start = max(text.rfind("\n", 0, m.start()), text.rfind(": ", 0, m.start()) + 1, 0)
        line_start = max(
            line_start, m.start() - 120
        )  # worked arithmetic is short; bounds the search
        head = text[line_start : m.start()]
        best = None
        for k in range(len(head)):
            if k and (head[k - 1].isalnum() or head[k - 1] in "_'\"."):
                continue
            src = head[k:].strip().strip("`").strip()
            if not src or src[0] in "=":
                continue
            try:
                node = safe_ast.parse(src, mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            if any(isinstance(n, ast.Name | ast.Attribute | ast.Call) for n in ast.walk(node)):
                continue
            if not isinstance(node, ast.BinOp | ast.Subscript):
                continue
            at = line_start + k + (len(head[k:]) - len(head[k:].lstrip()))
            before = text[max(0, at - 3) : at].rstrip()
            if before and before[-1] in ")]}_.+-*/%":
                break  # "len(a) - 1 = 5": the tail of an expression over variables
            # (a word before it, "each key gets 4 * 3 = 13", is prose: the sum is worked out)

            best = (at, src)
            break
        if best is None:
            continue
        start, src = best
        claims.append(
            Claim(EXPRESSION, text[start : got[0]], got[1], name=src, start=start, end=got[0])
        )
    return claims


_WORKED_EQ = re.compile(
    r"\s*(?:(?<![=<>!])=(?!=)|->|→|\b(?:is|equals|gives|evaluates\s+to|comes\s+to)\b(?!\s+not\b))"
    r"\s*(?=[-\d'\"\[({`TFN])"
)
_AFTER_OPERAND = ")]}_.+-*/%=<>,"


def find_worked(text: str, facts: CodeFacts) -> list[Claim]:
    """ "len(nums) - 1 = 3", "counts[ele - 1] + 1 = 2", "text.count('a') * 2 -> 6": an expression
    over f's frame written out with spaces and its worked value (the whole expression: the
    longest tail of the clause that is one). A value of an assignment's right-hand side ("i =
    len(s) - 1 = 0") is the variable's, read as a binding."""
    claims: list[Claim] = []
    for m in _WORKED_EQ.finditer(text):
        got = claimed_value(text, m.end())
        compared = claimed_value(text, m.end(), then_compared=True)
        if got is None and compared is None:
            continue
        line_start = max(text.rfind("\n", 0, m.start()), text.rfind(": ", 0, m.start()) + 1, 0)
        line_start = max(line_start, m.start() - 120)
        head = text[line_start : m.start()]
        found = None
        for k in range(len(head)):
            if k and (head[k - 1].isalnum() or head[k - 1] in "_'\".`"):
                continue
            src = head[k:].strip().strip("`").strip()
            if not src or " " not in src:
                continue  # tight expressions are read by find_expressions
            try:
                node = safe_ast.parse(src, mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            tests = isinstance(node, ast.Compare | ast.BoolOp) and m.group(0).strip() in ("->", "→")
            if not (isinstance(node, ast.BinOp | ast.Subscript | ast.Call) or tests):
                break
            if not _names_in_expression(src) & facts.names:
                break  # values only: find_arithmetic's
            at = line_start + k + (len(head[k:]) - len(head[k:].lstrip(" `")))
            before = text[max(0, at - 3) : at].rstrip(" `")
            if before and before[-1] in _AFTER_OPERAND:
                break  # the tail of something larger, or an assignment's right-hand side
            resolved = resolve_expression(src, facts)
            if resolved is not None:
                found = (at, resolved)
            break
        if found is None:
            continue
        start, src = found
        got = got if _is_test(src) else compared
        if got is None:
            continue
        end, lit = got
        kind = CONDITION if lit in ("True", "False") and _is_test(src) else EXPRESSION
        if kind == EXPRESSION and _mutated_receiver(src, facts) is not None:
            continue
        claim = Claim(kind, text[start:end], lit, name=_listed(src), start=start, end=end)
        if kind == CONDITION:
            claim.condition = src
        claim.before_line = _changing_call_line(src, facts)
        claims.append(claim)
    return claims


def find_results(text: str, names: set[str]) -> list[Claim]:
    """ "... all 1s are removed from nums, giving [2, 3]": a result stated without its subject
    next to it. The subject is the one variable of f the clause speaks of that is not an
    argument of the action ("append const", "remove x"); none or several: nothing is claimed."""
    claims: list[Claim] = []
    for m in _RESULT_WORDS.finditer(text):
        got = _value_at(text, m.end())
        if got is None:
            continue
        clause_start = max(text.rfind(". ", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
        found: list[str] = []
        for nm in _NAME_WORD.finditer(text, clause_start, m.start()):
            name = nm.group(1)
            if name not in names:
                continue
            before = text[max(clause_start, nm.start() - 40) : nm.start()]
            if _ACTION_BEFORE.search(before) and not re.search(
                r"\b(?:to|from|onto|into|of|in)\s+(?:the\s+)?(?:\w+\s+)?`?$", before, re.I
            ):
                continue
            if name not in found:
                found.append(name)
        if len(found) != 1:
            continue
        claim = Claim(
            BINDING, text[m.start() : got[0]].strip(" ,"), got[1], name=found[0], change=True
        )
        claim.start, claim.end, claim.inferred = m.start(), got[0], True
        claims.append(claim)
    return claims


_METHOD_VERB = re.compile(
    r"\s*`?\s*(?P<verb>is|gives|returns|yields|produces|leaves|evaluates\s+to|comes\s+out\s+as|->|→)"
    r"(?![\w=])\s*",
    re.I,
)
_WHICH_GIVES = re.compile(
    r",\s*(?:which\s+(?:gives|returns|yields|produces|leaves)|giving|yielding|producing|(?P<left>leaving))"
    r"\s+(?:us\s+|back\s+)?",
    re.I,
)
_WRITTEN_CALL = re.compile(
    r"`?(?<![\w.])(?P<src>[A-Za-z_]\w*(?:\[[^\]\n]{1,30}\])?(?:\.[a-z_]\w*\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))+)`?"
)


def _result_after(
    text: str, at: int, facts: CodeFacts
) -> tuple[re.Match[str], tuple[int, str]] | None:
    """ "..., which gives V" / ", leaving V" later in the clause from `at`, with no comma and no
    other subject (a variable, a method of the code) in between."""
    which = _WHICH_GIVES.search(text, at, _clause_end_at(text, at))
    if which is None or "," in text[at : which.start()]:
        return None
    words = re.findall(r"[A-Za-z_]\w*", text[at : which.start()])
    if any(w in facts.names or w in facts.calls for w in words):
        return None  # another subject in between: which value is meant is unclear
    got = _value_at(text, which.end())
    return None if got is None else (which, got)


def find_call_results(text: str, facts: CodeFacts) -> list[Claim]:
    """ "text.strip() removes the space and tab, leaving '\\t'": a call written out, then what it
    gives further on in the clause. After a call that changes its receiver (`nums.remove(2)
    drops the first 2, leaving [1, 3]`) what is left is the receiver."""
    claims: list[Claim] = []
    for m in _WRITTEN_CALL.finditer(text):
        src = resolve_expression(m.group("src"), facts)
        if src is None:
            continue
        found = _result_after(text, m.end(), facts)
        if found is None:
            continue
        which, (end, lit) = found
        receiver = _mutated_receiver(src, facts)
        changing = receiver is not None or bool(re.search(r"\.(?:pop|popitem|popleft)\(", src))
        if changing:
            head = re.match(r"[A-Za-z_]\w*", src)
            name = receiver or (head.group(0) if head else "")
            if not which.group("left") or name not in facts.names:
                continue  # "which gives" after a pop: the popped value or the rest, unclear
            claim = Claim(BINDING, text[m.start() : end].strip(), lit, name=name, change=True)
            lines = facts.call_lines.get(src.replace(" ", ""), set())
            claim.line = next(iter(lines)) if len(lines) == 1 else None
        else:
            kind = CONDITION if lit in ("True", "False") and _is_test(src) else EXPRESSION
            claim = Claim(kind, text[m.start() : end].strip(), lit, name=_listed(src))
            if kind == CONDITION:
                claim.condition = src
        claim.start, claim.end, claim.by_method = m.start(), end, True
        claims.append(claim)
    return claims


_METHOD_WORD = re.compile(
    r"(?<![\w.`])`?\.?(?P<m>[a-z_][a-z0-9_]*)(?P<call>\([^()\n]*\))?`?(?![\w.(])"
)


def _method_subject(facts: CodeFacts, method: str, written: str | None) -> str | None:
    """The code's one call of `method` (a written argument list is kept: "rstrip('r')")."""
    if method in facts.names or method in _PURE_NAMES or method not in facts.calls:
        return None
    if written:
        return resolve_expression(method + written, facts)
    sources = facts.call_sources.get(method, set())
    if len(sources) != 1:
        return None
    return resolve_expression(next(iter(sources)), facts)


_PASS_YIELDS = re.compile(
    r"\b(?:yields|gives|produces|makes|we\s+get|you\s+get|comes\s+out\s+as)\s+", re.I
)


def _body_call(facts: CodeFacts) -> str | None:
    """The one call f's one loop makes in its body that gives a value (not a change like
    `append`): what "the third pass yields X" speaks of when it names nothing else."""
    if not facts.single_loop:
        return None
    h, b, end = facts.loops[0]
    try:
        tree = safe_ast.parse("\n".join(facts.lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = {
        ast.get_source_segment("\n".join(facts.lines), node) or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr not in CHANGING
        and b <= node.lineno <= end
    }
    return resolve_expression(next(iter(found)), facts) if len(found) == 1 else None


def find_pass_results(text: str, facts: CodeFacts) -> list[Claim]:
    """ "The third pass, num = 9, yields '00004327'": in a sentence about one iteration, a string
    or container the pass gives is the value of the loop body's one call there. Like a method
    named alone, it contradicts only with a value of that call's type, and never in a chain
    whose answer is right (the subject is not written)."""
    named = {n for n, *_ in iterations(text)}
    if len(named) != 1:
        return []
    subject = _body_call(facts)
    if subject is None:
        return []
    claims = []
    for m in _PASS_YIELDS.finditer(text):
        got = _value_at(text, m.end())
        if got is None or not got[1].startswith(("'", '"', "[", "(", "{")):
            continue
        end, lit = got
        claim = Claim(
            EXPRESSION, text[m.start() : end], lit, name=subject, start=m.start(), end=end
        )
        claim.by_method = True  # the code's one call there: contradicts only with its type
        claims.append(claim)
    return claims


def find_method_results(text: str, facts: CodeFacts) -> list[Claim]:
    """ "for the empty string istitle is True", "rsplit with maxsplit=2 cuts at both, which gives
    ['a', 'b']": a method named by itself, its receiver and arguments left to the code, which
    calls it in one place only. The value is the call's; no variable may come between."""
    claims: list[Claim] = []
    for m in _METHOD_WORD.finditer(text):
        method, written = m.group("m"), m.group("call")
        subject = _method_subject(facts, method, written)
        if subject is None:
            continue
        verb = _METHOD_VERB.match(text, m.end())
        got = None
        if verb is not None and not _NEGATED.match(text, verb.end()):
            got = _value_at(text, verb.end())
        if got is None:
            if _mutated_receiver(subject, facts) is not None or re.search(r"\.pop", subject):
                continue  # a changing call: its value or what is left, unclear
            found = _result_after(text, m.end(), facts)
            got = None if found is None else found[1]
        if got is None:
            continue
        end, lit = got
        kind = CONDITION if lit in ("True", "False") and _is_test(subject) else EXPRESSION
        if kind == EXPRESSION and _mutated_receiver(subject, facts) is not None:
            continue  # `append` and the like give None: the value is the changed variable's
        claim = Claim(kind, text[m.start() : end].strip(), lit, name=_listed(subject))
        claim.start, claim.end, claim.by_method = m.start(), end, True
        claim.before_line = _changing_call_line(subject, facts)
        if kind == CONDITION:
            claim.condition = subject
        claims.append(claim)
    return claims


def _clause_end_at(text: str, i: int) -> int:
    m = re.compile(r"\n|[.;!?](?:\s|$)").search(text, i)
    return m.start() if m else len(text)


def read_claims(text: str, facts: CodeFacts, args: dict[str, object] | None = None) -> list[Claim]:
    """Every claim of one step's text (code already blanked), in the order written; where two
    readings overlap, the more specific one (an expression over a binding of its receiver, a
    condition over a binding inside it) is kept. `args`: f's arguments as passed, by parameter
    (what "'e' sits at 0 and 8" counts in, when f takes several)."""
    conds = find_conditions(text, list(facts.cond_text.values()))
    for c in conds:
        if c.condition:
            c.name = resolve_expression(c.condition, facts)
    exprs = find_expressions(text, facts)
    binds = find_bindings(text, facts.names) + find_equalities(text, facts.names)
    rets = find_returns(text, facts)
    loops = find_loop_claims(text, facts)
    results = find_results(text, facts.names)
    members = (
        find_membership(text, facts)
        + find_affixes(text, facts)
        + find_char_kinds(text, facts)
        + find_additions(text, facts)
        + find_the_slice(text, facts)
        + find_input_types(text, facts)
        + find_inserts(text, facts)
        + find_branch_positions(text, facts)
        + find_counts(text, facts, args or {})
        + find_effects(text, facts)
        + find_arithmetic(text)
        + find_worked(text, facts)
        + find_lengths(text, facts)
        + find_questions(text, facts)
        + find_parity(text, facts)
        + find_transforms(text)
        + find_sets(text, facts)
    )
    anaphora = find_anaphora(text, facts)
    methods = find_method_results(text, facts) + find_call_results(text, facts)
    chosen: list[Claim] = []
    passes = find_pass_results(text, facts)
    this_truth = find_this_truth(text)
    groups = (loops, exprs, members, conds, rets, binds, methods, anaphora, results, passes)
    for group in (*groups, this_truth):
        for c in group:
            if c.start < 0:
                continue
            if any(_overlaps(c, k) for k in chosen):
                continue
            chosen.append(c)
    for n, words, s, e in iterations(text):
        if not any(_overlaps(Claim(ITERATION, words, str(n), start=s, end=e), k) for k in chosen):
            chosen.append(Claim(ITERATION, words, str(n), ordinal=n, start=s, end=e))
    chosen += _chained_bindings(text, chosen, facts)
    chosen = [c for c in chosen if not _conditional(text, c)]
    for c in chosen:
        c.asked = asked(text, c)
    chosen.sort(key=lambda c: c.start)
    return chosen


_CHAIN_HEAD = re.compile(r"`?(?P<name>[A-Za-z_]\w*)`?\s*=\s*`?$")


def _chained_bindings(text: str, chosen: list[Claim], facts: CodeFacts) -> list[Claim]:
    """ "st = st[2:] = 'bnjrxs'", "n = len(s) + k = 6": the line worked out in the chain, the
    variable it assigns given the value the right-hand side came to. The expression's claim
    stays; the variable's is added (its new value, once the line has run)."""
    out: list[Claim] = []
    for c in chosen:
        if c.kind != EXPRESSION or c.retracted:
            continue
        head = _CHAIN_HEAD.search(text, max(0, c.start - 40), c.start)
        if head is None or head.group("name") not in facts.names:
            continue
        before = text[: head.start()].rstrip()
        if before and before[-1] in "+-*/%=<>!&|^~([{,.":
            continue  # "len(st) + k = 3 + 2 = 6": k is an operand, not what is assigned
        out.append(
            Claim(
                BINDING,
                text[head.start() : c.end],
                c.value,
                name=head.group("name"),
                change=True,
                start=head.start(),
                end=c.end,
            )
        )
    return out


_IF_WORDS = re.compile(
    r"\b(?:if|when|whenever|unless|until|while|as\s+long\s+as|in\s+case)\s+"
    r"(?:the\s+(?:substring|string|value|item|character|list|number)\s+)?`?$",
    re.I,
)


def _conditional(text: str, claim: Claim) -> bool:
    """ "if c.isascii() is False, return False", "it loops while the substring 'ab' is in
    text": the code's logic described, not a claim."""
    if claim.kind not in (CONDITION, EXPRESSION, BINDING):
        return False
    own = text[claim.start : claim.end].lstrip(" `")
    if re.match(r"(?:if|when|whenever|unless|until|while)\s", own, re.I):
        return True
    return bool(_IF_WORDS.search(text[max(0, claim.start - 32) : claim.start]))


def asked(text: str, claim: Claim) -> bool:
    """ "Now, does 'mjqw...' start with 'mjs'?": a question asks, it does not state (its answer,
    when there is one, is read as the claim: `answer_questions`)."""
    return claim.kind != RETURN and bool(re.match(r"[`'\"\s]*\?", text[claim.end : claim.end + 4]))


def _overlaps(a: Claim, b: Claim) -> bool:
    return a.start < b.end and b.start < a.end


_QUESTION_RE = re.compile(
    r"\b(?:is|does)\s+(?P<cond>[^?\n]{3,80}?)\s*\?\s*(?P<ans>yes|yep|no|nope|true|false)\b", re.I
)


def find_questions(text: str, facts: CodeFacts) -> list[Claim]:
    """ "Is '3' in text[1:]? No, so ...": a test asked and answered, as a condition claim."""
    claims: list[Claim] = []
    for m in _QUESTION_RE.finditer(text):
        cond = m.group("cond").strip().strip("`").strip()
        if not _parses_as_expression(cond) or not _looks_like_condition(cond, ()):
            continue
        resolved = resolve_expression(cond, facts)
        if resolved is None or not _is_test(resolved):
            continue
        claims.append(_stated_test(m, resolved, m.group("ans").lower() in ("yes", "yep", "true")))
    return claims


_ASKED_RE = re.compile(r"\b(?:is|does)\s+(?P<cond>[^?\n]{3,80}?)\s*\?\s*$", re.I)
_ANSWERED_RE = re.compile(r"\s*(?P<ans>yes|yep|no|nope)\b", re.I)
_ANSWERED_LAST_RE = re.compile(
    r"(?:[,;:]|\s[-–—])\s*(?:so\s+|and\s+so\s+|hence\s+|thus\s+)?(?:the\s+answer\s+is\s+)?"
    r"(?P<ans>yes|no)\s*[.!]?\s*$",
    re.I,
)
"""The answer to a question as the last word of the next sentence ("target is 'box.', and 'x.'
is not one of its words, so no.")."""


def answer_questions(steps: list[ReasoningStep], facts: CodeFacts) -> None:
    """ "Is '3' in text[1:]? No, so a stays 0.": a test asked at the end of one sentence and
    answered at the start of the next is a condition claim, read in the answer's sentence."""
    for prev, step in zip(steps, steps[1:], strict=False):
        asked = _ASKED_RE.search(prev.text)
        said = _ANSWERED_RE.match(step.text) or _ANSWERED_LAST_RE.search(step.text)
        if asked is None or said is None:
            continue
        got = find_questions(f"is {asked.group('cond')}? {said.group('ans')}", facts)
        if not got:
            continue
        claim = got[0]
        if said.start() > 0:  # answered at the end: the claim is the clause the answer closes
            head = max(step.text.rfind(",", 0, said.start()), step.text.rfind(";", 0, said.start()))
            lo = head + 1 if head >= 0 else 0
            lo += len(step.text[lo:]) - len(step.text[lo:].lstrip())
            claim.start, claim.end = step.start + lo, step.start + said.end("ans")
            claim.text = step.text[lo : said.end("ans")]
            step.claims = [c for c in step.claims if not _overlaps(c, claim)]
        else:
            claim.start, claim.end = prev.start + asked.start(), step.start + said.end()
            claim.text = f"{prev.text[asked.start() :].strip()} {said.group('ans')}"
        step.claims.append(claim)
        step.claims.sort(key=lambda c: c.start)


_FOUND_AT_RE = re.compile(
    r"\b(?:finds|found|locates|hits|gets)\s+(?:the\s+|an?\s+)?(?:first\s+|last\s+|other\s+)?"
    r"(?P<item>'[^'\n]*'|\"[^\"\n]*\")\s+at\s+(?:index|position)\s+(?P<n>-?\d+)\b",
    re.I,
)
_SEARCH_CALL = re.compile(
    r"[A-Za-z_][\w.]*(?:\(\))?(?:\.[A-Za-z_]\w*\(\))*\.(?:find|rfind|index|rindex)\([^()\n]*\)"
)
_FOUND_LOOKBACK = 3
"""How many sentences back the search a "finds 'h' at index 0" reports on may be written."""


def found_at(steps: list[ReasoningStep], facts: CodeFacts) -> None:
    """ "Then st.lower().rindex('h', 1). ... so it finds the 'h' at index 0": a search reported
    by where it finds its item is the value of the search call written last before it (this
    sentence or a few back), when that call looks for that item."""
    for i, step in enumerate(steps):
        for m in _FOUND_AT_RE.finditer(step.text):
            texts = [step.text[: m.start()]] + [
                st.text for st in reversed(steps[max(0, i - _FOUND_LOOKBACK) : i])
            ]
            written = next((calls[-1] for t in texts if (calls := _SEARCH_CALL.findall(t))), None)
            if written is None:
                continue
            subject = resolve_expression(written, facts)
            try:
                call = safe_ast.parse(written, mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            if subject is None or not isinstance(call, ast.Call) or not call.args:
                continue
            if not isinstance(call.args[0], ast.Constant) or repr(call.args[0].value) != repr(
                literal_value(m.group("item"))
            ):
                continue  # a search for something else
            start, end = step.start + m.start(), step.start + m.end()
            if any(c.start < end and start < c.end for c in step.claims):
                continue
            step.claims.append(
                Claim(EXPRESSION, m.group(0), m.group("n"), name=subject, start=start, end=end)
            )
            step.claims.sort(key=lambda c: c.start)


_TEST_QUOTED = re.compile(
    r"\b(?:if|elif|while)\s+`?(?P<test>[^:`\n]+?)`?\s*(?::|\.(?:\s|$)|,|;|\?|$)"
    r"|\bthe\s+(?:`?(?:if|while)`?\s+)?(?:condition|test)\s+(?:is|reads|says)\s+`(?P<named>[^`\n]+)`"
    r"|\bcheck(?:ing|s)?\s*:?\s+`(?P<checked>[^`\n]+)`",
    re.M | re.I,
)


def _quoted_test(
    m: re.Match[str], tests: dict[str, str], facts: CodeFacts
) -> tuple[str, str | None] | None:
    """The test a quote names, as (condition, expression to evaluate or None): the code's own
    test (judged by the outcome of its `if`), or a test written with values only (evaluated)."""
    src = (m.group("test") or m.group("named") or m.group("checked") or "").strip()
    if (code_test := tests.get(_test_key(src))) is not None:
        return code_test, None
    if (
        _COND_SHAPE.search(src)
        and _parses_as_expression(src)
        and not (_names_in_expression(src) - BUILTIN_NAMES)
    ):
        expr = resolve_expression(src, facts)
        if expr is not None:
            return src, expr
    return None


def _test_key(src: str) -> str:
    """A test as written, compared however it is spaced or bracketed: `(xs.count(v)) % 2 == 0` is
    the code's `xs.count(v) % 2 == 0`."""
    try:
        return ast.unparse(safe_ast.parse(src.strip(), mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return src.replace(" ", "")


_REMEMBERED_STEPS = 3
"""How many steps on an unnamed "the condition" still speaks of the test last quoted."""


def name_quoted_conditions(steps: list[ReasoningStep], facts: CodeFacts) -> None:
    """ "First: if n < 0 or len(text) <= n. ... n < 0 is True ... the condition is False overall":
    a condition claim that names no test speaks of the code's test the chain quoted last, a few
    sentences back at most. A test quoted that is not the code's forgets it, unless it is written
    with values only ("First check: `str.isascii('234år')`. ... so this is `True`"): that one has
    a truth of its own, and the claim is judged by evaluating it."""
    tests = {_test_key(t): t for t in facts.cond_text.values() if t}
    current: tuple[str, str | None] | None = None
    age = 0
    for step in steps:
        quoted = [m for m in _TEST_QUOTED.finditer(step.text)]
        for c in step.claims:
            if c.kind == CONDITION and c.condition is None and c.name is None and c.line is None:
                before = [m for m in quoted if step.start + m.end() <= c.start]
                if before and (named := _quoted_test(before[-1], tests, facts)) is not None:
                    c.condition, c.name = named
                    continue
                if current is not None and age <= _REMEMBERED_STEPS:
                    c.condition, c.name = current
        if quoted:
            current = _quoted_test(quoted[-1], tests, facts)
            age = 0
        else:
            age += 1
        if current is None or not quoted:
            # The code's test written out word for word in the sentence ("we look at if a > 2
            # or b == 'z' first"), when it is the only one.
            squeezed = re.sub(r"[\s`]+", "", step.text)
            written = {
                t for t in tests.values() if len(k := t.replace(" ", "")) >= 5 and k in squeezed
            }
            if len(written) == 1:
                current, age = (written.pop(), None), 0
