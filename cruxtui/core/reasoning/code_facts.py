"""What the source of `f` says, for reading and judging a chain about it: its variable names,
its conditions and loops by line, and the method calls it makes (so "rfind('i') gives -1"
resolves to the code's `text.rfind('i')`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache

from cruxtui.core.util import safe_ast


@dataclass
class CodeFacts:
    lines: list[str]
    names: set[str] = field(default_factory=set)
    params: list[str] = field(default_factory=list)
    """f's parameters, in order."""
    body_line: int | None = None
    """The first line of f's body: where the arguments are as passed."""
    """Variable names (parameters, assignment/loop/with targets, comprehension variables)."""
    cond_body: dict[int, int | None] = field(default_factory=dict)
    """if/while test line -> first body line (None: on the same line)."""
    cond_text: dict[int, str] = field(default_factory=dict)
    loops: list[tuple[int, int, int]] = field(default_factory=list)
    """(header line, first body line, last line) of f's own loops."""
    for_targets: dict[int, set[str]] = field(default_factory=dict)
    """`for` header line -> the names its target binds."""
    for_iters: dict[int, str] = field(default_factory=dict)
    """`for` header line -> the source of what it iterates over (`range(len(s))`)."""
    single_loop: bool = False
    """Exactly one `for`/`while` loop in f (comprehensions not counted)."""
    loop_vars: set[str] = field(default_factory=set)
    """Names bound by for loops and comprehensions."""
    inline_exit: set[int] = field(default_factory=set)
    """`if c: return x` on one line: taken iff f returns or raises right there."""
    inline_else: dict[int, int] = field(default_factory=dict)
    """`if c: x += 1` with `else:` below: not taken iff the else runs next."""
    calls: dict[str, set[str]] = field(default_factory=dict)
    """Method name -> the receivers it is called on (`text.rfind(...)` -> {"text"})."""
    call_sources: dict[str, set[str]] = field(default_factory=dict)
    """Method name -> the whole calls as written (`text.rfind('i')`)."""
    call_lines: dict[str, set[int]] = field(default_factory=dict)
    """A whole method call as written, spaces removed (`text.pop(0)`) -> the lines making it."""
    method_lines: dict[str, set[int]] = field(default_factory=dict)
    """Method name -> the lines that call it (where "after the append" is)."""
    changed_twice: dict[str, set[int]] = field(default_factory=dict)
    """Variable -> lines changing it by two calls or more (`nums.insert(i, nums.pop(0) +
    nums.pop(0))`): its states between those calls are never seen by the tracer."""
    return_fstring: bool = False
    """f returns an f-string (so "the f-string gives X" speaks of f's result)."""
    source_lines: set[str] = field(default_factory=set)
    """Stripped lines of the code, for telling a quoted line of f from prose."""
    item_stores: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    """Receiver -> (line, index source, value source) of each `x[i*2] = v` the code makes, so
    "x[1] is set to v" can be held against the place the program really wrote."""
    slices: dict[str, set[int]] = field(default_factory=dict)
    """The slicing expressions of the code as written (`text[:req // 2:-req // 2]`) -> the lines
    computing them, so "the slice" speaks of its one slice, where the code takes it."""


CHANGING = frozenset(
    [
        "append",
        "extend",
        "insert",
        "remove",
        "update",
        "reverse",
        "sort",
        "clear",
        "add",
        "discard",
        "pop",
        "popitem",
        "popleft",
        "setdefault",
    ]
)
"""Methods that change their receiver."""


@lru_cache(maxsize=256)
def code_facts(code: str) -> CodeFacts:
    lines = code.splitlines()
    facts = CodeFacts(lines, source_lines={ln.strip() for ln in lines if len(ln.strip()) >= 4})
    try:
        tree = safe_ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return facts
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "f" and not facts.params:
            facts.params = [a.arg for a in node.args.args]
            facts.body_line = node.body[0].lineno
        if isinstance(node, ast.arg):
            facts.names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            facts.names.add(node.id)
        if isinstance(node, ast.If | ast.While):
            first = node.body[0].lineno
            facts.cond_body[node.lineno] = None if first == node.lineno else first
            if first == node.lineno and isinstance(node, ast.If):
                if isinstance(node.body[0], ast.Return | ast.Raise):
                    facts.inline_exit.add(node.lineno)
                elif node.orelse and node.orelse[0].lineno != node.lineno:
                    facts.inline_else[node.lineno] = node.orelse[0].lineno
            facts.cond_text[node.lineno] = ast.get_source_segment(code, node.test) or ""
        if isinstance(node, ast.For | ast.While):
            facts.loops.append((node.lineno, node.body[0].lineno, node.end_lineno or node.lineno))
        if isinstance(node, ast.For):
            facts.for_iters[node.lineno] = ast.get_source_segment(code, node.iter) or ""
            facts.for_targets[node.lineno] = {
                n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)
            }
        if isinstance(node, ast.For | ast.comprehension):
            facts.loop_vars.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = ast.get_source_segment(code, node.func.value)
            whole = ast.get_source_segment(code, node)
            if receiver and "\n" not in receiver:
                facts.calls.setdefault(node.func.attr, set()).add(receiver)
            if whole and "\n" not in whole:
                facts.call_sources.setdefault(node.func.attr, set()).add(whole)
                facts.call_lines.setdefault(whole.replace(" ", ""), set()).add(node.lineno)
            facts.method_lines.setdefault(node.func.attr, set()).add(node.lineno)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and isinstance(node.targets[0].value, ast.Name)
            and not isinstance(node.targets[0].slice, ast.Slice)
        ):
            index = ast.get_source_segment(code, node.targets[0].slice)
            value = ast.get_source_segment(code, node.value)
            if index and value:
                facts.item_stores.setdefault(node.targets[0].value.id, []).append(
                    (node.lineno, index, value)
                )
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            written = ast.get_source_segment(code, node)
            if written and "\n" not in written and isinstance(node.ctx, ast.Load):
                facts.slices.setdefault(written, set()).add(node.lineno)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.JoinedStr):
            facts.return_fstring = True
    changes: dict[tuple[str, int], int] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in CHANGING
        ):
            key = (node.func.value.id, node.lineno)
            changes[key] = changes.get(key, 0) + 1
    for (name, line), n in changes.items():
        if n >= 2:
            facts.changed_twice.setdefault(name, set()).add(line)
    # Comprehensions run in frames of their own: they do not blur which iteration of f's one
    # `for`/`while` loop a state belongs to.
    facts.single_loop = len(facts.loops) == 1
    return facts
