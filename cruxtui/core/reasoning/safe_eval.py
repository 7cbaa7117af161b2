"""Evaluate a condition a chain of thought wrote with the values filled in, without running code.

Models often write a condition with the values substituted ("'Boolean'.isalpha() is False",
"[46, 47, 48][0] % 2 == 0", "len([1, 2, 3]) < 4"). Such a claim can be checked on its own, exactly,
whatever the alignment says. Only literals, arithmetic, comparisons, boolean logic, subscripts, a
few pure builtins and pure methods of str/list/tuple/dict are allowed, with size guards so a
claim like `'a' * 10**9` cannot eat the machine. Anything else: None (cannot tell).
"""

from __future__ import annotations

import ast
import operator
from typing import Any

_MAX_LEN = 10_000
_MAX_INT_BITS = 256

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_CMPOPS = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_FUNCS: dict[str, Any] = {
    "len": len,
    "abs": abs,
    "min": min,
    "max": max,
    "sum": sum,
    "sorted": sorted,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "ord": ord,
    "chr": chr,
    "list": list,
    "tuple": tuple,
    "set": set,
    "type": type,
    "reversed": lambda x: list(reversed(x)),
    "isinstance": isinstance,
}
_TYPES = {
    "list": list,
    "str": str,
    "dict": dict,
    "int": int,
    "tuple": tuple,
    "set": set,
    "float": float,
    "bool": bool,
}
_STR_METHODS = {
    "isalpha",
    "isdigit",
    "isdecimal",
    "isnumeric",
    "isalnum",
    "isspace",
    "isupper",
    "islower",
    "istitle",
    "isascii",
    "isidentifier",
    "startswith",
    "endswith",
    "find",
    "rfind",
    "index",
    "rindex",
    "count",
    "upper",
    "lower",
    "strip",
    "lstrip",
    "rstrip",
    "split",
    "rsplit",
    "replace",
    "removeprefix",
    "removesuffix",
    "capitalize",
    "title",
    "swapcase",
    "join",
    "partition",
    "rpartition",
    "zfill",
    "center",
    "ljust",
    "rjust",
    "casefold",
}
_SEQ_METHODS = {"count", "index"}
_DICT_METHODS = {"get", "keys", "values", "items"}


class _Refuse(Exception):
    """The expression uses something outside the allowed subset."""


def _size_ok(value: Any) -> Any:
    if isinstance(value, str | bytes | list | tuple | set | dict) and len(value) > _MAX_LEN:
        raise _Refuse
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value.bit_length() > _MAX_INT_BITS
    ):
        raise _Refuse
    return value


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items = [_eval(e) for e in node.elts]
        kind = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)]
        return _size_ok(kind(items))
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _Refuse
        return {_eval(k): _eval(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.Name) and node.id in _TYPES:
        return _TYPES[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand)
        if isinstance(node.op, ast.Not):
            return not v
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return +v
        raise _Refuse
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and (not isinstance(right, int) or abs(right) > 64):
            raise _Refuse
        if (
            isinstance(node.op, ast.Mult)
            and isinstance(left, int)
            and isinstance(right, str | list | tuple)
        ):
            left, right = right, left
        if (
            isinstance(node.op, ast.Mult)
            and isinstance(left, str | list | tuple)
            and isinstance(right, int)
            and len(left) * max(right, 0) > _MAX_LEN
        ):
            raise _Refuse
        return _size_ok(_BINOPS[type(node.op)](left, right))
    if isinstance(node, ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        result: Any = None
        for value in node.values:
            result = _eval(value)
            if bool(result) != is_and:
                return result
        return result
    if isinstance(node, ast.Compare):
        left = _eval(node.left)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = _eval(comp)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Subscript):
        target = _eval(node.value)
        if isinstance(node.slice, ast.Slice):
            parts = [
                None if p is None else _eval(p)
                for p in (node.slice.lower, node.slice.upper, node.slice.step)
            ]
            return target[slice(*parts)]
        return target[_eval(node.slice)]
    if isinstance(node, ast.Call) and not node.keywords:
        args = [_eval(a) for a in node.args]
        if isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
            return _size_ok(_FUNCS[node.func.id](*args))
        if isinstance(node.func, ast.Attribute):
            obj = _eval(node.func.value)
            name = node.func.attr
            allowed = (
                (isinstance(obj, str) and name in _STR_METHODS)
                or (isinstance(obj, list | tuple) and name in _SEQ_METHODS)
                or (isinstance(obj, dict) and name in _DICT_METHODS)
            )
            if allowed:
                if (
                    name in ("center", "ljust", "rjust", "zfill")
                    and args
                    and isinstance(args[0], int)
                    and args[0] > _MAX_LEN
                ):
                    raise _Refuse
                result = getattr(obj, name)(*args)
                if name in ("keys", "values", "items"):
                    result = list(result)
                return _size_ok(result)
    raise _Refuse


def evaluate_condition(text: str) -> bool | None:
    """The truth value of `text` if it is a closed expression in the safe subset, else None."""
    text = text.strip().strip("`").strip()
    if not text or len(text) > 500:
        return None
    try:
        node = ast.parse(text, mode="eval").body
        return bool(_eval(node))
    except (
        _Refuse,
        SyntaxError,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        ZeroDivisionError,
        OverflowError,
        RecursionError,
        MemoryError,
    ):
        return None
