"""Parsing and comparing untrusted Python text without a way to crash the process.

`ast.parse` fails in more ways than SyntaxError: 350 nested `not`, 400 `lambda:` or a 10,000-term
sum raise RecursionError ("during ast construction") or MemoryError, a NUL byte ValueError. And
every recursive walk of the tree it returns (a structural comparison, `ast.unparse`, a recursive
evaluator) can hit the recursion limit again on a tree the parser accepted. So: parse untrusted
text only through `parse`, which turns all of these into SyntaxError, and walk trees with
`ast.walk` (iterative) or with the iterative `same_tree` below; a recursive walk must catch
RecursionError itself.
"""

from __future__ import annotations

import ast
import threading
import warnings
from typing import Any, Literal, overload

_PARSE_LOCK = threading.Lock()


@overload
def parse(text: str, mode: Literal["eval"]) -> ast.Expression: ...
@overload
def parse(text: str, mode: Literal["exec"] = "exec") -> ast.Module: ...
def parse(text: str, mode: str = "exec") -> ast.AST:
    """`ast.parse(text, mode=mode)`; every failure is a SyntaxError whose `msg` says why.

    Warnings about the text are not shown. One parse at a time in a process: CPython 3.11's
    parser keeps its recursion depth in shared state, so two threads parsing at once (scoring
    runs checks from a thread pool) can fail with "SystemError: AST constructor recursion depth
    mismatch" on ordinary text.
    """
    try:
        with _PARSE_LOCK, warnings.catch_warnings():
            # Untrusted text is not the user's code: an invalid escape in it ("\\d", a
            # SyntaxWarning since 3.12) must not be printed over the terminal or the TUI.
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return ast.parse(text, mode=mode)
    except SyntaxError:
        raise
    except RecursionError:
        raise SyntaxError("nested too deeply to parse") from None
    except MemoryError:
        raise SyntaxError("too large to parse") from None
    except ValueError as exc:  # NUL bytes
        raise SyntaxError(str(exc)[:200]) from None


def same_tree(a: Any, b: Any) -> bool:
    """Structural equality of two ASTs, positions ignored (what comparing `ast.dump`s says),
    with an explicit stack: no depth of nesting can exhaust the recursion limit."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            stack.extend((getattr(x, f, None), getattr(y, f, None)) for f in x._fields)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True
