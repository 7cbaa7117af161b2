"""Small literal edits shared by code and input transforms: numbers and strings.

Each edit works on a literal's value and writes it back as a literal, so the result always parses;
the choice of position or replacement character comes from the step's seeded `Choices`.
"""

from __future__ import annotations

import string as _string

import libcst as cst

from cruxtui.core.perturb.spec import NotApplicable, SpecError
from cruxtui.core.perturb.transform import Choices

NUMBER_OPS = ("+1", "-1", "drop", "digit", "=")
"""+1 / -1; drop a digit; replace a digit; `=VALUE` sets the literal (e.g. `=1000`)."""

STRING_OPS = ("replace", "insert", "delete")


def integer_value(node: cst.Integer) -> int:
    return int(node.value, 0)


def applicable_number_ops(node: cst.Integer | cst.Float) -> list[str]:
    if isinstance(node, cst.Float):
        return ["+1", "-1"] if float(node.value) >= 1 else ["+1"]
    value = integer_value(node)
    ops = ["+1"]
    if value >= 1:
        ops.append("-1")
    if node.value.isdigit():
        ops.append("digit")
        if len(node.value) >= 2:
            ops.append("drop")
    return ops


def edit_number(
    node: cst.Integer | cst.Float, op: str | None, choices: Choices
) -> cst.Integer | cst.Float:
    """The literal changed by `op` (+1, -1, drop, digit, =VALUE), or by one the seed picks.

    Works on the literal itself: in `-5` the literal is `5`, so "+1" gives `-6`.
    """
    ops = applicable_number_ops(node)
    if op is None:
        op = choices.choice(ops)
    if op.startswith("="):
        text = op[1:].strip()
        if not text.isdigit():
            raise SpecError(f"=VALUE needs a non-negative whole number, got {text!r}")
        return cst.Integer(str(int(text)), lpar=node.lpar, rpar=node.rpar)
    if op not in ops:
        raise NotApplicable(
            f"does not apply: cannot {op} the literal {node.value} (possible: {', '.join(ops)})"
        )
    if isinstance(node, cst.Float):
        value = float(node.value) + (1 if op == "+1" else -1)
        return cst.Float(repr(value), lpar=node.lpar, rpar=node.rpar)
    digits = node.value
    if op == "+1":
        new = integer_value(node) + 1
    elif op == "-1":
        new = integer_value(node) - 1
    elif op == "drop":
        i = choices.randrange(len(digits))
        new = int(digits[:i] + digits[i + 1 :])
    else:  # digit
        i = choices.randrange(len(digits))
        pool = [
            d
            for d in _string.digits
            if d != digits[i] and not (i == 0 and d == "0" and len(digits) > 1)
        ]
        new = int(digits[:i] + choices.choice(pool) + digits[i + 1 :])
    return cst.Integer(str(new), lpar=node.lpar, rpar=node.rpar)


def is_text_literal(node: cst.SimpleString) -> bool:
    """A str literal (not bytes) whose value libcst can evaluate."""
    return "b" not in node.prefix.lower() and isinstance(node.evaluated_value, str)


def text_value(node: cst.SimpleString) -> str:
    """The text a str literal holds (the sites collected are `is_text_literal` ones)."""
    value = node.evaluated_value
    if not isinstance(value, str):
        raise NotApplicable("does not apply: a bytes literal holds no text")
    return value


def _other_char(c: str, choices: Choices) -> str:
    for pool in (_string.ascii_lowercase, _string.ascii_uppercase, _string.digits):
        if c in pool:
            return choices.choice([x for x in pool if x != c])
    return choices.choice(_string.ascii_lowercase)


def edit_text(value: str, op: str | None, choices: Choices) -> str:
    """Replace, insert or delete one character (position and character chosen by the seed)."""
    ops = list(STRING_OPS) if value else ["insert"]
    if op is None:
        op = choices.choice(ops)
    if op not in ops:
        raise NotApplicable(f"does not apply: cannot {op} a character of an empty string")
    if op == "insert":
        i = choices.randrange(len(value) + 1)
        return value[:i] + choices.choice(_string.ascii_lowercase) + value[i:]
    i = choices.randrange(len(value))
    if op == "delete":
        return value[:i] + value[i + 1 :]
    return value[:i] + _other_char(value[i], choices) + value[i + 1 :]


def string_literal(value: str, like: cst.SimpleString) -> cst.SimpleString:
    """A literal for `value`, keeping `like`'s double quotes when that needs no escaping."""
    text = repr(value)
    if (
        like.quote.startswith('"')
        and text.startswith("'")
        and '"' not in value
        and "'" not in value
    ):
        text = f'"{text[1:-1]}"'
    return cst.SimpleString(text, lpar=like.lpar, rpar=like.rpar)
