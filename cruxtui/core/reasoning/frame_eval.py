"""The value of each claim's subject at each position of the trace.

A binding's subject is a traced variable: its value is read from the position's locals. An
expression's (`nums.count(1)`, `s[5:8]`, `bool(count % 2 == 0)`) is the value the program
computed there when the tracer recorded that very sub-expression on the line (`Step.values`),
and otherwise the expression evaluated on the position's state — in the sandbox
(`cruxtui.core.sandbox.jobs.claim_eval`), because the expression comes from untrusted text, on
a fresh copy of the state per evaluation, under the scoring limits. All of a chain's expressions
go in one sandbox call; distinct states only (by the variables the expression reads).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any

from cruxtui.core.reasoning.claim_types import BINDING, CONDITION, EXPRESSION, Claim
from cruxtui.core.reasoning.literal_scan import OPAQUE, literal_value, value_key
from cruxtui.core.reasoning.trace_positions import Positions
from cruxtui.core.util import safe_ast

JOB = "cruxtui.core.sandbox.jobs.claim_eval:evaluate"
MAX_STATES = 400
"""Distinct states one expression is evaluated on at most (the rest: unknown)."""


def subject_expression(claim: Claim) -> str | None:
    """The expression whose value the claim states, or None for claims of another sort."""
    if claim.kind == EXPRESSION and claim.name:
        return claim.name
    if claim.kind == CONDITION and claim.condition and claim.name:
        return f"bool({claim.name})"
    return None


def _names(src: str) -> tuple[str, ...] | None:
    try:
        tree = safe_ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bound = {
        n.id
        for g in ast.walk(tree)
        if isinstance(g, ast.comprehension)
        for n in ast.walk(g.target)
        if isinstance(n, ast.Name)
    }
    return tuple(sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - bound))


class ClaimValues:
    """`at(claim, k)`: the repr of the claim's subject at position k, or None if unknown."""

    def __init__(self, claims: list[Claim], pos: Positions, sandbox: Any = None) -> None:
        self.pos = pos
        self.table: dict[str, list[str | None]] = {}
        self.errors: dict[str, str] = {}
        exprs = sorted({e for c in claims if (e := subject_expression(c)) is not None})
        if exprs:
            self._evaluate(exprs, sandbox)

    def at(self, claim: Claim, k: int) -> str | None:
        if claim.kind == BINDING or (claim.kind not in (EXPRESSION, CONDITION)):
            return self.pos.env[k].get(claim.name or "")
        expr = subject_expression(claim)
        if expr is None:
            return None
        row = self.table.get(expr)
        return None if row is None else row[k]

    def known(self, claim: Claim) -> bool:
        expr = subject_expression(claim)
        return expr is not None and expr in self.table

    def _evaluate(self, exprs: list[str], sandbox: Any) -> None:
        n = len(self.pos)
        states: list[dict[str, str]] = []
        state_ids: dict[tuple[tuple[str, str], ...], int] = {}
        pairs: list[list[int]] = []
        where: list[tuple[str, list[int]]] = []  # per pair: the expression and its positions
        for e_index, expr in enumerate(exprs):
            row: list[str | None] = [None] * n
            self.table[expr] = row
            inner = expr[5:-1] if expr.startswith("bool(") else expr
            names = _names(expr)
            if names is None:
                continue
            recorded = inner.replace(" ", "")
            written = _canonical(inner)
            groups: dict[int, list[int]] = {}
            for k in range(n):
                got = self.pos.computed[k].get(recorded) if self.pos.computed else None
                if got is None and self.pos.sources and written is not None:
                    got = _computed_as(written, self.pos.sources[k], self.pos.env[k])
                if got is not None and expr == inner:
                    row[k] = got
                    continue
                env = self.pos.env[k]
                if any(name not in env and name not in BUILTIN_NAMES for name in names):
                    continue
                state = tuple((name, env[name]) for name in names if name in env)
                if any(value_key(v) is OPAQUE for _, v in state):
                    continue  # a value that is not a literal cannot be rebuilt in the child
                sid = state_ids.get(state)
                if sid is None:
                    if len(state_ids) >= MAX_STATES * len(exprs):
                        continue
                    sid = state_ids[state] = len(states)
                    states.append(dict(state))
                groups.setdefault(sid, []).append(k)
            for sid, ks in list(groups.items())[:MAX_STATES]:
                pairs.append([e_index, sid])
                where.append((expr, ks))
        if not pairs:
            return
        results = _run(exprs, states, pairs, sandbox)
        for (expr, ks), result in zip(where, results, strict=True):
            status, text = result
            if status != "ok":
                self.errors.setdefault(expr, text)
                continue
            row = self.table[expr]
            for k in ks:
                row[k] = text


def _computed_as(
    written: str, computed: tuple[tuple[str, str], ...], env: dict[str, str]
) -> str | None:
    """The value the line computed for a sub-expression that *is* the written one once its
    variables are given their values there: `counts[5]` is `counts[i]` where i is 5 (so a
    claim about a state too big to rebuild is still judged where the program read it)."""
    for src, value in computed:
        if _canonical_with(src, env) == written:
            return value
    return None


@lru_cache(maxsize=65536)
def _cached_names(src: str) -> tuple[str, ...] | None:
    return _names(src)


@lru_cache(maxsize=65536)
def _canonical(src: str) -> str | None:
    try:
        return ast.unparse(safe_ast.parse(src, mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _canonical_with(src: str, env: dict[str, str]) -> str | None:
    """`src` with each variable that holds a small int or a short string replaced by it."""
    names = _cached_names(src)
    if not names:
        return None
    bound = tuple(
        (name, env[name])
        for name in names
        if name in env and len(env[name]) <= 40 and isinstance(literal_value(env[name]), int | str)
    )
    if not bound:
        return None
    return _substituted(src, bound)


@lru_cache(maxsize=65536)
def _substituted(src: str, bound: tuple[tuple[str, str], ...]) -> str | None:
    values: dict[str, int | str] = {}
    for name, rep in bound:
        value = literal_value(rep)
        if isinstance(value, int | str):
            values[name] = value

    class Put(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in values and isinstance(node.ctx, ast.Load):
                return ast.copy_location(ast.Constant(values[node.id]), node)
            return node

    try:
        tree = safe_ast.parse(src, mode="eval")
        return ast.unparse(Put().visit(tree))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


BUILTIN_NAMES = frozenset(
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


def _run(
    exprs: list[str],
    states: list[dict[str, str]],
    pairs: list[list[int]],
    sandbox: Any,
    again: bool = True,
) -> list[tuple[str, str]]:
    """One sandbox call for all pairs; every pair fails alike if the sandbox cannot run it.
    A call that runs out of time (many pairs on a loaded machine) is made again once, in
    halves, so how loaded the machine is does not decide which claims are judged (once only:
    a chain cannot make the aligner wait more than three calls' time)."""
    try:
        if sandbox is None:
            from cruxtui.core.sandbox.pool import default_sandbox

            sandbox = default_sandbox()
        outcome = sandbox.run(JOB, {"exprs": exprs, "states": states, "pairs": pairs})
    except Exception as exc:  # noqa: BLE001 - no sandbox: every expression is unknown
        return [("error", f"sandbox: {exc}")] * len(pairs)
    if outcome.status == "timeout" and again and len(pairs) > 1:
        half = len(pairs) // 2
        return _run(exprs, states, pairs[:half], sandbox, False) + _run(
            exprs, states, pairs[half:], sandbox, False
        )
    value = outcome.value if outcome.status == "ok" else None
    if not isinstance(value, list) or len(value) != len(pairs):
        return [("error", f"sandbox: {outcome.status} {outcome.error}")] * len(pairs)
    out: list[tuple[str, str]] = []
    for item in value:
        if (
            isinstance(item, list)
            and len(item) == 2
            and all(isinstance(x, str) for x in item)
            and item[0] in ("ok", "error")
        ):
            out.append((item[0], item[1]))
        else:
            out.append(("error", "malformed answer from the sandbox"))
    return out
