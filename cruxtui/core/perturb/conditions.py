"""Transforms of conditions: flip or mirror a comparison, negate a condition, swap if/else.

Sites are numbered in source order, from 1; `flip-compare:2` acts on the second comparison
operator of the code. Without a number the seed picks one.
"""

from __future__ import annotations

import libcst as cst

from cruxtui.core.perturb.sites import Condition, code_sites
from cruxtui.core.perturb.transform import (
    Choices,
    Subject,
    Transform,
    code_of,
    parse_site_params,
    pick_site,
    register,
    replaced,
)

_FLIP: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThan,
    cst.GreaterThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.GreaterThan,
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
}

_MIRROR: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.GreaterThan,
    cst.GreaterThan: cst.LessThan,
    cst.LessThanEqual: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThanEqual,
    cst.Equal: cst.Equal,
    cst.NotEqual: cst.NotEqual,
    cst.Is: cst.Is,
    cst.IsNot: cst.IsNot,
}
"""Operators with a converse; `in` has none (`a in b` is not `b contains a` written backwards)."""

_TWO_WORD = (cst.NotIn, cst.IsNot)

# Condition-bearing nodes and the field holding the whitespace before their test (which must
# not be empty when the test becomes `not ...`: `while(x)` -> `while not (x)`).
_TEST_SPACE = {
    cst.If: "whitespace_before_test",
    cst.While: "whitespace_after_while",
    cst.IfExp: "whitespace_after_if",
    cst.CompIf: "whitespace_before_test",
}


def _with_op(op: cst.BaseCompOp, new_type: type[cst.BaseCompOp]) -> cst.BaseCompOp:
    """A comparison operator of `new_type` keeping the old one's surrounding whitespace."""
    # Every concrete operator has both fields; the base class declares neither.
    kwargs = {name: getattr(op, name) for name in ("whitespace_before", "whitespace_after")}
    if new_type in _TWO_WORD:
        kwargs["whitespace_between"] = getattr(op, "whitespace_between", cst.SimpleWhitespace(" "))
    return new_type(**kwargs)


_NO_PARENS_NEEDED = (
    cst.UnaryOperation,
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.Integer,
    cst.Float,
    cst.SimpleString,
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
)


def negate(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`not (expr)`, or `expr`'s operand if it already is `not ...` (same truth value either way)."""
    if (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Not)
        and not expr.lpar
    ):
        return expr.expression
    if expr.lpar or isinstance(expr, _NO_PARENS_NEEDED):
        operand = expr
    else:
        operand = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(cst.Not(whitespace_after=cst.SimpleWhitespace(" ")), operand)


def _with_test(node: Condition, test: cst.BaseExpression, **changes: object) -> Condition:
    space_field = _TEST_SPACE[type(node)]
    space = getattr(node, space_field)
    if isinstance(space, cst.SimpleWhitespace) and not space.value:
        changes[space_field] = cst.SimpleWhitespace(" ")
    return node.with_changes(test=test, **changes)


def _flip(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, _ = parse_site_params(params)
    found = code_sites(subject.code)
    comparison, index = pick_site(found.operators, site, choices, "comparison operators")
    target = comparison.comparisons[index]
    op = _with_op(target.operator, _FLIP[type(target.operator)])
    targets = list(comparison.comparisons)
    targets[index] = target.with_changes(operator=op)
    new = comparison.with_changes(comparisons=targets)
    code = replaced(found.module, comparison, new).code
    return Subject(code, subject.input), f"`{code_of(comparison)}` -> `{code_of(new)}`"


def _mirror(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, _ = parse_site_params(params)
    found = code_sites(subject.code)
    sites = [
        c for c in found.comparisons if all(type(t.operator) in _MIRROR for t in c.comparisons)
    ]
    comparison = pick_site(
        sites, site, choices, "comparison with a converse (<, <=, >, >=, ==, !=, is)"
    )
    operands = [comparison.left] + [t.comparator for t in comparison.comparisons]
    ops = [_with_op(t.operator, _MIRROR[type(t.operator)]) for t in comparison.comparisons]
    operands.reverse()
    ops.reverse()
    new = comparison.with_changes(
        left=operands[0],
        comparisons=[
            cst.ComparisonTarget(op, right) for op, right in zip(ops, operands[1:], strict=True)
        ],
    )
    code = replaced(found.module, comparison, new).code
    return Subject(code, subject.input), f"`{code_of(comparison)}` -> `{code_of(new)}`"


def _negate(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, _ = parse_site_params(params)
    found = code_sites(subject.code)
    node = pick_site(
        found.conditions,
        site,
        choices,
        "condition (if, elif, while, conditional expression, comprehension if)",
    )
    test = node.test
    new_test = negate(test)
    code = replaced(found.module, node, _with_test(node, new_test)).code
    return Subject(code, subject.input), f"`{code_of(test)}` -> `{code_of(new_test)}`"


def _protect(expr: cst.BaseExpression) -> cst.BaseExpression:
    """Parenthesise an expression moving into the body slot of `A if c else B` if it would bind looser."""
    if not expr.lpar and isinstance(expr, cst.IfExp | cst.Lambda | cst.NamedExpr):
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _swap_if(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    site, _ = parse_site_params(params)
    found = code_sites(subject.code)
    node = pick_site(
        found.if_else,
        site,
        choices,
        "if/else (an `if` with an `else:` or a conditional expression)",
    )
    test = node.test
    new_test = negate(test)
    if isinstance(node, cst.IfExp):
        new = _with_test(node, new_test, body=_protect(node.orelse), orelse=node.body)
    else:
        assert isinstance(node, cst.If) and isinstance(node.orelse, cst.Else)
        new = _with_test(
            node, new_test, body=node.orelse.body, orelse=node.orelse.with_changes(body=node.body)
        )
    code = replaced(found.module, node, new).code
    return Subject(
        code, subject.input
    ), f"swapped the branches of `{code_of(test)}`, now `{code_of(new_test)}`"


SITE_HELP = "N: act on the N-th site in source order (default: the seed picks one)"

register(
    Transform(
        "flip-compare",
        False,
        "flip a comparison: < to >=, == to !=, in to not in, is to is not",
        SITE_HELP,
        _flip,
    )
)
register(
    Transform(
        "negate",
        False,
        "negate a condition of an if, elif, while, conditional expression or comprehension",
        SITE_HELP,
        _negate,
    )
)
register(
    Transform(
        "swap-if",
        True,
        "swap the branches of an if/else (or x if c else y) and negate its condition",
        SITE_HELP,
        _swap_if,
    )
)
register(
    Transform(
        "mirror-compare",
        True,
        "mirror a comparison: a < b to b > a (chains reversed whole)",
        SITE_HELP,
        _mirror,
    )
)
