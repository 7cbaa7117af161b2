"""Where the code transforms can act, found in one pass over the tree and cached per code.

Walking a libcst tree in Python costs about a millisecond per sample; collecting every kind of
site at once lets all the condition and constant transforms of a sample share one walk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst

from cruxtui.core.perturb.edits import is_text_literal
from cruxtui.core.perturb.transform import parse_code

Condition = cst.If | cst.While | cst.IfExp | cst.CompIf
"""A node with a `.test`: if (and elif), while, conditional expression, comprehension if."""


@dataclass
class CodeSites:
    module: cst.Module
    comparisons: list[cst.Comparison] = field(default_factory=list)
    operators: list[tuple[cst.Comparison, int]] = field(default_factory=list)
    """(comparison, index of its operator): one site per operator, chains included."""
    conditions: list[Condition] = field(default_factory=list)
    """If (and elif), While, IfExp and comprehension-if nodes: all have a `.test`."""
    if_else: list[cst.If | cst.IfExp] = field(default_factory=list)
    """If nodes with an `else:` block, and conditional expressions."""
    constants: list[cst.Integer] = field(default_factory=list)
    """Integer literals inside a comparison or the arguments of `range(...)`."""
    strings: list[cst.SimpleString] = field(default_factory=list)
    """Text string literals, docstrings excepted (they do not affect behaviour)."""


class _Collector(cst.CSTVisitor):
    def __init__(self, sites: CodeSites) -> None:
        self.sites = sites
        self.constant_depth = 0
        self.docstrings: set[int] = set()

    def _note_docstring(self, body: cst.BaseSuite | cst.Module) -> None:
        stmts = body.body if isinstance(body, cst.Module | cst.IndentedBlock) else ()
        if stmts and isinstance(stmts[0], cst.SimpleStatementLine):
            first = stmts[0].body[0]
            if isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString):
                self.docstrings.add(id(first.value))

    def visit_Module(self, node: cst.Module) -> None:
        self._note_docstring(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._note_docstring(node.body)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.sites.comparisons.append(node)
        self.sites.operators.extend((node, i) for i in range(len(node.comparisons)))
        self.constant_depth += 1

    def leave_Comparison(self, original_node: cst.Comparison) -> None:
        self.constant_depth -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if _is_range(node):
            self.constant_depth += 1

    def leave_Call(self, original_node: cst.Call) -> None:
        if _is_range(original_node):
            self.constant_depth -= 1

    def visit_Integer(self, node: cst.Integer) -> None:
        if self.constant_depth:
            self.sites.constants.append(node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if id(node) not in self.docstrings and is_text_literal(node):
            self.sites.strings.append(node)

    def visit_If(self, node: cst.If) -> None:
        self.sites.conditions.append(node)
        if isinstance(node.orelse, cst.Else):
            self.sites.if_else.append(node)

    def visit_While(self, node: cst.While) -> None:
        self.sites.conditions.append(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.sites.conditions.append(node)
        self.sites.if_else.append(node)

    def visit_CompIf(self, node: cst.CompIf) -> None:
        self.sites.conditions.append(node)


def _is_range(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Name) and node.func.value == "range"


@lru_cache(maxsize=1024)
def code_sites(code: str) -> CodeSites:
    """All sites of `code` (cached; callers must not mutate the lists)."""
    sites = CodeSites(parse_code(code))
    sites.module.visit(_Collector(sites))
    return sites
