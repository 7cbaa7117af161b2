"""Does a line of a chain read as Python or as English? One classifier for all code in chains.

Chains hold code of every quality: `f` re-printed, rewritten functions, tests, and — from small
models — code that is broken the way generated code breaks: a bracket left open (or one too
many) on a line, a call spread over several lines, a `<value>` placeholder where a value should
be, a header without its colon. None of it claims anything about the run. Lists of special
cases fitted to chains seen so far do not carry to new ones; what does is asking Python itself:
a line is code when it parses as a statement — as written, or after the few repairs that undo
those breakages — and is not a plain report of values (`x = 5`, `count: 3`, `x == 5`: a chain
narrating a state writes exactly that). English never parses after those repairs (two words
side by side are a syntax error in Python), and a narrated value that does not parse
(`len(s) = 3`, `total = 3 + 5 = 8`) is not mended into code by them: no repair touches `=`.
"""

from __future__ import annotations

import ast
import functools
import io
import keyword
import re
import tokenize

from cruxtui.core.util import safe_ast

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_PLACEHOLDER = re.compile(r"<\s*/?\s*[A-Za-z_][\w ]{0,30}>|\?\?+")
_COMPOUND = re.compile(r"(?:def|class|for|while|if|elif|else|try|except|finally|with)\b")
_ASSIGNS = re.compile(r"[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[-+*/%|&]|//)?=(?!=)")
_LEADS = {"else": "if 1: pass\n", "elif": "if 1: pass\n", "except": "try: pass\n"}
_LEADS["finally"] = _LEADS["except"]
_STATEMENT = re.compile(
    r"(?:def|class|for|while|if|elif|else|try|except|finally|with|return|yield|raise|import|from"
    r"|assert|del|pass|break|continue|lambda|print\s*\()\b"
)


def parses(source: str) -> bool:
    try:
        safe_ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _body(source: str) -> list[ast.stmt] | None:
    try:
        return safe_ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def strip_comment(line: str) -> str:
    """The line without its trailing `# ...` comment (a `#` inside a string is kept)."""
    if "#" not in line:
        return line
    quote: str | None = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#":
            return line[:i].rstrip()
        i += 1
    return line


_LONG = 1000
"""Lines longer than this are judged as written, without repairs: no line of real code is, and
untrusted text must not make each line cost many tokenizer passes."""


@functools.lru_cache(maxsize=4096)
def bracket_depth(line: str) -> tuple[int, tuple[str, ...]]:
    """How many brackets the line leaves open (negative: closes more than it opens), and the
    stack of openers still open at its end (strings and comments skipped)."""
    stack: list[str] = []
    extra = 0
    for tok in _tokens_so_far(line):
        if tok.type != tokenize.OP:
            continue
        if tok.string in _OPENERS:
            stack.append(tok.string)
        elif tok.string in _CLOSERS:
            if stack and stack[-1] == _CLOSERS[tok.string]:
                stack.pop()
            elif stack:
                stack.pop()  # a mismatched closer: it still closes something
            else:
                extra += 1
    return len(stack) - extra, tuple(stack)


def _tokens_so_far(line: str) -> list[tokenize.TokenInfo]:
    out: list[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            out.append(tok)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def _repairs(src: str) -> list[str]:
    """`src` and the versions of it with the usual breakages of generated code undone: the
    template's placeholders (`<value>`, `??`) as a value, brackets balanced (closers added for
    what is left open, surplus closers at the end dropped), a header's missing colon and body."""
    out = [src]
    if len(src) > _LONG:
        return out
    filled = _PLACEHOLDER.sub("None", src)
    if filled != src:
        out.append(filled)
    more = []
    for cand in out:
        depth, stack = bracket_depth(cand)
        if depth > 0:
            more.append(cand + "".join(_OPENERS[o] for o in reversed(stack)))
        elif depth < 0:
            trimmed = cand.rstrip()
            for _ in range(-depth):
                if trimmed and trimmed[-1] in _CLOSERS:
                    trimmed = trimmed[:-1].rstrip()
            more.append(trimmed)
    out += more
    headers = []
    for cand in out:
        if m := _COMPOUND.match(cand):
            body = cand if cand.rstrip().endswith(":") else cand.rstrip() + ":"
            # A clause that continues a statement (`else:`) parses after the one it continues.
            lead = _LEADS.get(m.group(0), "")
            headers.append(lead + body + " pass")
    return out + headers


def repaired_body(stripped: str) -> list[ast.stmt] | None:
    """The statements of a line as written or once repaired (`_repairs`), comment dropped;
    None when no version of it is Python."""
    src = strip_comment(stripped).strip()
    for cand in _repairs(src) if src else []:
        body = _body(cand)
        if body is not None:
            return body
    return None


def reports_values(node: ast.stmt) -> bool:
    """`x = 5`, `a, b = 1, 2`: names bound to literals; `count: 3`; `x == 5`; an assertion of a
    literal result (the answer form). A chain narrating a state writes exactly these."""
    if isinstance(node, ast.Assign):
        targets_ok = all(
            _named(t) or isinstance(t, ast.Tuple) and all(_named(e) for e in t.elts)
            for t in node.targets
        )
        return targets_ok and is_literal_node(node.value)
    if isinstance(node, ast.AnnAssign):
        return node.value is None and isinstance(node.target, ast.Name)  # "count: 3", "Output: 'a'"
    if isinstance(node, ast.Assert):
        test = node.test
        return (
            isinstance(test, ast.Compare)
            and len(test.comparators) == 1
            and is_literal_node(test.comparators[0])
        )
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Compare)


def _narrated_return(body: list[ast.stmt]) -> bool:
    """`count: 3; total: 6; return 6`: values reported, then the literal returned — a terse
    chain narrating the run on one line, not code (a quoted `return True` alone still is)."""
    last = body[-1]
    return (
        len(body) > 1
        and all(reports_values(n) for n in body[:-1])
        and isinstance(last, ast.Return)
        and last.value is not None
        and is_literal_node(last.value)
    )


def _named(target: ast.expr) -> bool:
    """A name, or an item of one at a literal key (`counts[5]`): what a narrated state binds."""
    if isinstance(target, ast.Subscript):
        return isinstance(target.value, ast.Name) and is_literal_node(target.slice)
    return isinstance(target, ast.Name)


def is_literal_node(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False
    return True


def _english_pairs(src: str) -> int:
    """Two words side by side (`the list`), which Python never writes: keywords aside
    (`for x in y`, `not in`, `return x`)."""
    pairs = 0
    prev: tokenize.TokenInfo | None = None
    for tok in _tokens_so_far(src):
        if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER):
            continue
        if (
            prev is not None
            and tok.type == tokenize.NAME
            and prev.type == tokenize.NAME
            and not keyword.iskeyword(tok.string)
            and not keyword.iskeyword(prev.string)
            and tok.string not in ("print",)
        ):
            pairs += 1
        prev = tok
    return pairs


@functools.lru_cache(maxsize=4096)
def reads_as_code(stripped: str, indent: int = 0) -> bool:
    """Is this line (stripped, with its indentation given) Python rather than English?

    Code when some repair of it (`_repairs`) parses as statements that are not all reports of
    values; a bare expression only when it is a call or indented as code. A line whose
    brackets do not match (`return min((x[0], x[1])` with one `)` short, a closer in the
    wrong place) and that has no two words side by side and starts as a statement does is
    broken code too."""
    src = strip_comment(stripped).strip()
    if not src or keyword.iskeyword(src.rstrip(":")) and not src.endswith(":"):
        return False  # "the `else` branch": a construct named, not written
    for cand in _repairs(src):
        body = _body(cand)
        if body is None:
            continue
        if body and cand != src and _PLACEHOLDER.search(src) and isinstance(body[0], ast.Assert):
            return True  # the prompt's `assert f(...) == <value>`: a template, no value
        if not body or all(reports_values(n) for n in body) or _narrated_return(body):
            return False
        if all(isinstance(n, ast.Expr) for n in body):
            calls = any(isinstance(n.value, ast.Call) for n in body if isinstance(n, ast.Expr))
            return indent >= 4 or calls
        return True
    if len(src) > _LONG:
        return False
    depth, _stack = bracket_depth(src)
    broken_brackets = depth != 0 or _mismatched(src)
    return bool(
        broken_brackets
        and (_STATEMENT.match(src) or _ASSIGNS.match(src))
        and _english_pairs(src) == 0
        and not re.search(r"(?:=|->|→)\s*\S+\s*$", src)
        or re.match(r"(?:def|class)\s+[A-Za-z_]\w*\s*\(", src)
    )


def _mismatched(src: str) -> bool:
    stack: list[str] = []
    for tok in _tokens_so_far(src):
        if tok.type != tokenize.OP:
            continue
        if tok.string in _OPENERS:
            stack.append(tok.string)
        elif tok.string in _CLOSERS and (not stack or stack.pop() != _CLOSERS[tok.string]):
            return True
    return False


def statement_group(lines: list[str], i: int, limit: int = 12) -> int:
    """How many lines from `lines[i]` form one statement: a line that leaves a bracket open
    runs on until the bracket closes (a call spread over lines), if the joined text parses
    (after repairs). 1 when it stands alone."""
    if len(lines[i]) > _LONG or not any(c in lines[i] for c in "([{"):
        return 1
    depth, _ = bracket_depth(strip_comment(lines[i]))
    if depth <= 0:
        return 1
    for j in range(i + 1, min(len(lines), i + limit)):
        if len(lines[j]) > _LONG:
            return 1
        depth += bracket_depth(strip_comment(lines[j]))[0]
        if depth <= 0:
            one = " ".join(strip_comment(ln).strip() for ln in lines[i : j + 1])
            return j - i + 1 if any(parses(c) for c in _repairs(one)) else 1
    return 1
