"""Transforms of the sample's input: a character of a string, an element of a container, a number.

The code is unchanged; the output is re-derived by running `f` on the edited input.
"""

from __future__ import annotations

import libcst as cst

from cruxtui.core.perturb.edits import (
    STRING_OPS,
    applicable_number_ops,
    edit_number,
    edit_text,
    is_text_literal,
    string_literal,
    text_value,
)
from cruxtui.core.perturb.transform import (
    Choices,
    Subject,
    Transform,
    call_input,
    code_of,
    parse_call,
    parse_site_params,
    pick_site,
    register,
    replaced,
)

Container = cst.List | cst.Tuple | cst.Set | cst.Dict


class _InputCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.strings: list[cst.SimpleString] = []
        self.numbers: list[cst.Integer | cst.Float] = []
        self.elements: list[tuple[Container, int]] = []

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if is_text_literal(node):
            self.strings.append(node)

    def visit_Integer(self, node: cst.Integer) -> None:
        self.numbers.append(node)

    def visit_Float(self, node: cst.Float) -> None:
        self.numbers.append(node)

    def _container(self, node: Container) -> None:
        self.elements.extend((node, i) for i in range(len(node.elements)))

    def visit_List(self, node: cst.List) -> None:
        self._container(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._container(node)

    def visit_Set(self, node: cst.Set) -> None:
        self._container(node)

    def visit_Dict(self, node: cst.Dict) -> None:
        self._container(node)


def _collect(input_text: str) -> tuple[cst.Call, _InputCollector]:
    call = parse_call(input_text)
    found = _InputCollector()
    for arg in call.args:  # not `call.visit`: the callee name `f` is not part of the input
        arg.visit(found)
    return call, found


def _replaced(call: cst.Call, old: cst.CSTNode, new: cst.CSTNode) -> str:
    return call_input(replaced(call, old, new))


def without_element(container: Container, index: int) -> cst.BaseExpression:
    """The container minus one element, with commas fixed (and `set()` for an emptied set)."""
    elements: list[cst.BaseElement | cst.BaseDictElement] = list(container.elements)
    del elements[index]
    if not elements and isinstance(container, cst.Set):
        return cst.Call(cst.Name("set"), lpar=container.lpar, rpar=container.rpar)
    if elements and index == len(elements):  # removed the last: the new last keeps no stray comma
        had_trailing = not isinstance(container.elements[index].comma, cst.MaybeSentinel)
        if not had_trailing:
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    if isinstance(container, cst.Tuple):
        if len(elements) == 1:
            elements[0] = elements[0].with_changes(comma=cst.Comma())
        if not container.lpar:
            return container.with_changes(
                elements=elements, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
            )
    return container.with_changes(elements=elements)


def _input_char(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, op = parse_site_params(params, STRING_OPS)
    call, found = _collect(subject.input)
    node = pick_site(found.strings, site, choices, "string in its input")
    new = string_literal(edit_text(text_value(node), op, choices), node)
    return Subject(
        subject.code, _replaced(call, node, new)
    ), f"input string {node.value} -> {new.value}"


def _input_number(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, op = parse_site_params(params, ("+1", "-1"))
    call, found = _collect(subject.input)
    node = pick_site(found.numbers, site, choices, "number in its input")
    if op is None:
        op = choices.choice([o for o in applicable_number_ops(node) if o in ("+1", "-1")])
    new = edit_number(node, op, choices)
    return Subject(
        subject.code, _replaced(call, node, new)
    ), f"input number {node.value} -> {new.value}"


def _input_element(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, _ = parse_site_params(params)
    call, found = _collect(subject.input)
    container, index = pick_site(
        found.elements, site, choices, "list, tuple, set or dict element in its input"
    )
    removed = container.elements[index]
    new = without_element(container, index)
    shown = code_of(removed).rstrip(", ")
    return Subject(
        subject.code, _replaced(call, container, new)
    ), f"input element {shown} removed from {code_of(container)}"


SITE = "[N][,OP]: the N-th {what} of the input (default: the seed picks)"

register(
    Transform(
        "input-char",
        False,
        "edit one character of a string in the input",
        SITE.format(what="string") + "; OP one of replace, insert, delete",
        _input_char,
    )
)
register(
    Transform(
        "input-element",
        False,
        "remove one element of a list, tuple, set or dict in the input",
        "[N]: the N-th element (default: the seed picks)",
        _input_element,
    )
)
register(
    Transform(
        "input-number",
        False,
        "add or subtract 1 to a number in the input",
        SITE.format(what="number") + "; OP +1 or -1",
        _input_number,
    )
)
