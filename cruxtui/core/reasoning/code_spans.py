"""Where a chain of thought is code rather than a statement about values.

Chains quote and rewrite `f`: fenced blocks, indented blocks, a re-printed `def f(text, lower=None):`
with its body, single lines of `f` (`return ''.join(out)`), the prompt's `assert f(...) == ??`.
None of that claims anything about the run — `return True` printed from `f` is not "f returns
True", a signature's defaults are not bindings — so those stretches are blanked before claims
are read. A value narrated in prose ("x = 5", a `- count: 3` bullet) is still a claim: a line is
code only when it is a Python statement that is not a plain report of values (`x = 5`,
`x = 5; y = 'a'`), or a line of `f` itself.
"""

from __future__ import annotations

import ast
import re

from cruxtui.core.reasoning.final_answer import call_end
from cruxtui.core.reasoning.python_lines import (
    parses,
    reads_as_code,
    repaired_body,
    reports_values,
    statement_group,
    strip_comment,
)
from cruxtui.core.util import safe_ast

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|[a-z][.)])\s")
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.)\s")
_QUESTION = re.compile(r"\?\?")
_HEADER = re.compile(r"(?:def|class|for|while|if|elif|else|try|except|finally|with)\b")


def code_spans(text: str, code: str = "") -> list[tuple[int, int]]:
    """(start, end) spans of `text` that are code, in order, not overlapping."""
    fences = [(m.start(), m.end(), _is_code_block(m.group(0))) for m in _FENCE.finditer(text)]
    spans = [(s, e) for s, e, code in fences if code]
    source_lines = {ln.strip() for ln in code.splitlines() if len(ln.strip()) >= 4}
    lines = _lines(text)
    i = 0
    while i < len(lines):
        start, end, line = lines[i]
        if _inside(spans, start):
            i += 1
            continue
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        # A block headed by `def`/`for`/`if ...:` (a re-printed or rewritten f) runs to its dedent.
        if _HEADER.match(stripped) and _heads_block(lines, i) and reads_as_code(stripped, indent):
            j = i + 1
            while j < len(lines) and (
                not lines[j][2].strip()
                or len(lines[j][2]) - len(lines[j][2].lstrip()) > indent
                and not _BULLET.match(lines[j][2])
            ):
                j += 1
            while j > i + 1 and not lines[j - 1][2].strip():
                j -= 1
            spans.append((start, lines[j - 1][1]))
            i = j
            continue
        # A statement spread over lines (a call whose arguments run on) is code as a whole.
        group = statement_group([ln for _s, _e, ln in lines], i)
        if group > 1 and not _BULLET.match(stripped):
            spans.append((start, lines[i + group - 1][1]))
            i += group
            continue
        if _is_code_line(stripped, indent, source_lines) or (
            stripped.startswith("#") and any(s <= start < e for s, e, _ in fences)
        ):
            spans.append((start, end))  # (a comment in a fence is code's, like the fence)
        i += 1
    spans += _listed_values(lines, spans)
    return _without_comments(text, _merged(spans), source_lines)


def _listed_values(
    lines: list[tuple[int, int, str]], spans: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Lines like `x = 5` written among lines of code (no blank line between) are that code's
    assignments (a listing: `out = [0]` / `for c in text:` / `return out`), not a narrated state.
    Only real code marks its neighbours: a `return 'ab'` is as much a report as `x = 5`."""
    kind: list[str] = []
    for start, _end, line in lines:
        stripped = line.strip()
        if not stripped:
            kind.append("blank")
        elif _inside(spans, start):
            kind.append("code" if _is_statement_of_names(stripped) else "quiet")
        elif not _BULLET.match(stripped) and parses(stripped) and _all_reports(stripped):
            kind.append("report")
        else:
            kind.append("prose")
    changed = True
    while changed:
        changed = False
        for k, what in enumerate(kind):
            if what != "report":
                continue
            near = [kind[j] for j in (k - 1, k + 1) if 0 <= j < len(kind)]
            if "code" in near or "listed" in near:
                kind[k] = "listed"
                changed = True
    return [(s, e) for (s, e, _), what in zip(lines, kind, strict=True) if what == "listed"]


def _all_reports(stripped: str, states_only: bool = False) -> bool:
    """Is every statement a report of values? `states_only`: bindings only (`x = 5`,
    `counts[2] = 3`), not an assertion (a test) or a comparison."""
    try:
        body = safe_ast.parse(stripped).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    kinds = (ast.Assign, ast.AnnAssign) if states_only else (ast.stmt,)
    return bool(body) and all(reports_values(n) and isinstance(n, kinds) for n in body)


def _is_statement_of_names(stripped: str) -> bool:
    """A line of code that computes from names (`for c in text:`, `out.append(c)`, `return
    out`), unlike `return 'ab'`: only such a line shows a listing of code."""
    body = repaired_body(stripped)
    if not body or all(reports_values(n) for n in body):
        return False
    return any(
        isinstance(n, ast.Name | ast.Call | ast.Attribute) for b in body for n in ast.walk(b)
    )


_COMMENT = re.compile(
    r"#\s*(?=(?:output|result|returns?|prints?|gives|->|→|=>|==)\b|(?:->|→|=>|==))", re.I
)
_ANY_COMMENT = re.compile(r"(?<![\w'\"])#[ \t]*(?=\S)")


def _without_comments(
    text: str, spans: list[tuple[int, int]], source_lines: set[str]
) -> list[tuple[int, int]]:
    """A comment inside code that states a result (`print(f(x))  # output: [3, 11]`) is the
    chain's words, not code: it is left readable. So is every comment on lines of `f` quoted
    as they are (`if len(old) > 3:  # len('va') = 2 -> False`): the chain annotating the run;
    a rewritten function's comments speak of that other code."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        cur = s
        quoted = _quotes_f(text[s:e], source_lines)
        pattern = _ANY_COMMENT if quoted else _COMMENT
        for m in pattern.finditer(text, s, e):
            if not quoted and not _annotates_f(text, m.start()):
                continue  # `print(g())  # Output: 128`: the result of other code
            line_end = text.find("\n", m.start(), e)
            line_end = e if line_end < 0 else line_end
            if m.start() > cur:
                out.append((cur, m.start()))
            cur = line_end
        if cur < e:
            out.append((cur, e))
    return out


_CALLS_F = re.compile(r"(?<![\w.])f\s*\(")


def _annotates_f(text: str, hash_at: int) -> bool:
    """Does the result comment at `hash_at` annotate a call of f — the call itself, maybe
    printed — on its own line or, for a comment alone on its line, on the line above?"""
    line_start = text.rfind("\n", 0, hash_at) + 1
    code = text[line_start:hash_at]
    if not code.strip() and line_start > 0:
        prev_start = text.rfind("\n", 0, line_start - 1) + 1
        code = text[prev_start : line_start - 1]
    m = _CALLS_F.search(code)
    if m is None or code[: m.start()].strip() not in ("", "print(", ">>>", ">>> print("):
        return False
    close = call_end(code, m.end() - 1)
    # the call itself, maybe printed: `f(x).strip()  # ...` gives the value of more than f
    return close is not None and re.fullmatch(r"[\s)]*", code[close:]) is not None


def _quotes_f(code: str, source_lines: set[str]) -> bool:
    """Is every statement of this stretch of code a line of `f` as written?"""
    lines = [ln.split("  #")[0].split("\t#")[0].strip() for ln in code.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("#", "```", "~~~", "..."))]
    return bool(lines) and bool(source_lines) and all(ln in source_lines for ln in lines)


_MARKUP = re.compile(r"\s*(?:(?:<\s*/?\s*[A-Za-z_]\w*\s*>|\[\s*/?\s*[A-Z_]+\s*[\]>]|\?\?+)\s*)+")


def _is_code_block(block: str) -> bool:
    """A fenced block is code when it is Python (as a whole, or most of its lines, broken code
    included): a trace table or a list of `value -> value` lines in a fence is read like prose,
    line by line."""
    lines = block.splitlines()[1:]
    if lines and re.match(r"\s*(```|~~~)", lines[-1]):
        lines = lines[:-1]
    body = "\n".join(lines).replace("??", "None")
    if not body.strip():
        return True
    if parses(body):
        # Only values stated, nothing computed (`counts[2] = 3` / `counts[5] = 1`): a trace
        # written in a fence, read like prose.
        return not _all_reports(body, states_only=True)
    code = total = 0
    k = 0
    while k < len(lines):
        line = lines[k]
        if not line.strip() or _MARKUP.fullmatch(line) or line.lstrip().startswith("#"):
            k += 1  # blank, a comment, or only the prompt's markup (`<value> [/ANSWER]`)
            continue
        group = statement_group(lines, k)
        indent = len(line) - len(line.lstrip())
        src = line.strip().replace("??", "None")
        if group > 1 or parses(src) or reads_as_code(src, indent) or _HEADER.match(src):
            code += group
        total += group
        k += group
    return code * 2 > total


def _heads_block(lines: list[tuple[int, int, str]], i: int) -> bool:
    """A header ends with its colon, or (broken code) has its body indented under it."""
    line = lines[i][2]
    if strip_comment(line).rstrip().endswith(":"):
        return True
    nxt = next((ln for _s, _e, ln in lines[i + 1 :] if ln.strip()), None)
    indent = len(line) - len(line.lstrip())
    return nxt is not None and len(nxt) - len(nxt.lstrip()) > indent


def _is_code_line(stripped: str, indent: int, source_lines: set[str]) -> bool:
    if stripped in source_lines:
        return True  # a line of f, quoted
    if _PROMPT.match(stripped) or (_QUESTION.search(stripped) and "assert" in stripped):
        return True
    return not _BULLET.match(stripped) and reads_as_code(stripped, indent)


def _lines(text: str) -> list[tuple[int, int, str]]:
    out = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        out.append((pos, pos + len(line), line))
        pos += len(raw)
    return out


def _inside(spans: list[tuple[int, int]], i: int) -> bool:
    return any(s <= i < e for s, e in spans)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with the spans replaced by spaces (newlines kept), so offsets stay the same."""
    chars = list(text)
    for s, e in spans:
        for k in range(s, e):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)


_INLINE = re.compile(r"`([^`\n]+)`")


def inline_code(text: str, source_lines: set[str]) -> list[tuple[int, int]]:
    """Backticked code within prose that is a statement, not a value or a subject: `x += 1`,
    `return ''.join(out)`, `def f(a, b=2)`. A backticked name, literal, expression (`s[5:8]`)
    or narrated assignment of a literal (`i = 2`) stays readable."""
    out = []
    for m in _INLINE.finditer(text):
        inner = m.group(1).strip()
        if _whole_cell(text, m.start(), m.end()):
            continue  # a table's cell: the table says what it is (`| `size = len(text)` | 8 |`)
        if inner in source_lines and ("=" in inner or inner.startswith(("return", "for", "if"))):
            out.append((m.start(), m.end()))
            continue
        try:
            safe_ast.parse(inner, mode="eval")
            continue  # an expression: a subject or a value
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        if reads_as_code(inner) or (
            not parses(inner) and re.match(r"(?:def|for|while|if|elif|return|lambda)\b", inner)
        ):
            out.append((m.start(), m.end()))
    return out


def _whole_cell(text: str, start: int, end: int) -> bool:
    """Is text[start:end] the whole of a cell of a `| a | b |` table row?"""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    if not (line.lstrip().startswith("|") and line.rstrip().endswith("|")):
        return False
    return text[line_start:start].rstrip(" \t").endswith("|") and text[end:].lstrip(
        " \t"
    ).startswith("|")


_CALL_OF_F = re.compile(r"(?<![\w.])f\s*\(")
_KEYWORD = re.compile(r"(?<![\w.=!<>])([A-Za-z_]\w*)\s*=(?!=)")


def call_keywords(text: str) -> list[tuple[int, int]]:
    """The `name=` of keyword arguments written in a call of f (`f(text, lower=3)`): an
    argument of some call, or a default, not a statement that the variable has that value."""
    out = []
    for m in _CALL_OF_F.finditer(text):
        depth, j = 0, m.end() - 1
        stop = min(len(text), j + 2000)
        while j < stop and text[j] != "\n":
            c = text[j]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0:
                    break
            elif (
                depth == 1
                and (k := _KEYWORD.match(text, j))
                and (j == 0 or not text[j - 1].isalnum())
            ):
                out.append((k.start(), k.end()))
            j += 1
    return out
