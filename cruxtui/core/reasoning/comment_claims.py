"""A value written as a comment on a line of `f`: the chain annotating the run.

Chains that quote `f` line by line often put what each line gives in a comment:
`s = s.replace('"', '')   # '"ab"' -> 'ab'`, `length = len(n) + 2   # 4`,
`if len(old) > 3:   # False`. The comment names no subject, but the line it sits on does: it
states the value the line's target holds once the line has run (an assignment's name, the
receiver of a changing call such as `revn.clear()`) or the truth of an `if`/`elif`/`while`
test. Only a comment that *ends in one value* is read so (the value alone, or after `->`, `=>`,
`→`, `=` or `:`); a comment in words ("# built from revn") or one naming its own subject
("# s = 'ab'", read by the prose reader already) is left as it is.

Only lines of `f` quoted as they are count, where the comment is left readable (`code_spans`):
a rewritten function's comments speak of that other code.
"""

from __future__ import annotations

import ast
import re

from cruxtui.core.reasoning.claim_types import BINDING, CONDITION, Claim
from cruxtui.core.reasoning.code_facts import CHANGING, CodeFacts
from cruxtui.core.reasoning.literal_scan import is_literal, scan_literal
from cruxtui.core.reasoning.python_lines import strip_comment
from cruxtui.core.util import safe_ast

_LEAD = re.compile(r"(?:.*(?:->|=>|→|(?<![=!<>])=(?!=)|:))?\s*`?", re.S)
_TRUTHS = ("True", "False")


def comment_claims(text: str, masked: str, facts: CodeFacts) -> list[Claim]:
    """The claims the value comments on lines of `f` make (see the module doc). `masked` is the
    chain with code blanked: a comment is read only where it was left readable there."""
    claims: list[Claim] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\n")
        code = strip_comment(line)
        hash_at = line.find("#", len(code))
        if hash_at >= 0 and code.strip() and masked[pos + hash_at : pos + len(line)].strip():
            claim = _claim_of(line, code.strip(), hash_at, facts)
            if claim is not None:
                claim.start += pos
                claim.end += pos
                claims.append(claim)
        pos += len(raw)
    return claims


def _claim_of(line: str, code: str, hash_at: int, facts: CodeFacts) -> Claim | None:
    at = [k + 1 for k, src in enumerate(facts.lines) if src.strip() == code]
    if len(at) != 1:
        return None  # not a line of f as written, or written on more than one line
    got = _stated_value(line, hash_at + 1)
    if got is None:
        return None
    start, end, value = got
    words = line[start:end]
    subject = _subject(code)
    if subject is None:
        return None
    kind, name = subject
    if kind == CONDITION:
        if value not in _TRUTHS:
            return None
        return Claim(CONDITION, words, value, condition=name, line=at[0], start=start, end=end)
    return Claim(BINDING, words, value, name=name, line=at[0], start=start, end=end)


def _stated_value(line: str, i: int) -> tuple[int, int, str] | None:
    """(start, end, literal) of the one value the comment at line[i:] ends in, or None; the
    claim's words run from the comment's first word to that value."""
    body = line[i:].rstrip().rstrip(".").rstrip()
    lead = _LEAD.match(body)
    j = lead.end() if lead else 0
    got = scan_literal(body, j)
    if got is None:
        return None
    end, lit = got
    if body[end:].strip("` ") or not is_literal(lit) or "..." in lit:
        return None
    start = i + len(body) - len(body.lstrip(" #"))
    return start, i + end, lit


def _subject(code: str) -> tuple[str, str] | None:
    """What a line of f gives a value to: (BINDING, name) or (CONDITION, test). Not f's result:
    a `return` line's comment restates the answer, which the chain gives in its words; a reader
    sent to the comment would land in code (`carried_values`)."""
    src = code[:-1] + ": pass" if code.endswith(":") else code
    if src.startswith(("elif ", "else")):
        src = "if" + src[4:] if src.startswith("elif ") else ""
    try:
        tree = safe_ast.parse(src)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1:
        return None
    node = tree.body[0]
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return (BINDING, target.id) if isinstance(target, ast.Name) else None
    if isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
        return BINDING, node.target.id
    if isinstance(node, ast.If | ast.While):
        return CONDITION, ast.unparse(node.test)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in CHANGING
            and isinstance(func.value, ast.Name)
        ):
            return BINDING, func.value.id  # `revn.clear()  # []`: the receiver, changed
    return None
