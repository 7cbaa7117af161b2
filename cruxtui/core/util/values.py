"""Plain builtin data: a safe wire encoding and exact-type checks (reprs: `bounded_repr`).

Values cross process boundaries (parent <-> sandbox worker <-> untrusted child) as JSON with
type tags, never as pickle or marshal: decoding can only ever build `None`, `bool`, `int`, `float`,
`complex`, `str`, `bytes`, `list`, `tuple`, `dict`, `set` and `frozenset` of exactly those types,
so a hostile child cannot smuggle an object whose `__eq__` lies into the trusted process.

Encoding of one value: `["N"]`, `["b", true]`, `["i", "-0x1f"]` (hex: no digit limit), `["f", hex]`,
`["c", real_hex, imag_hex]`, `["s", text]`, `["y", hex]`, `["l"|"t"|"S"|"F", [items]]`,
`["d", [[key, value], ...]]`.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 100
"""Nesting deeper than this is refused (also catches self-containing lists)."""

MAX_NODES = 2_000_000
"""More values than this in one result is refused: a result must stay cheap to compare."""

_SEQUENCES: dict[type, str] = {list: "l", tuple: "t", set: "S", frozenset: "F"}
_BUILDERS: dict[str, type] = {"l": list, "t": tuple, "S": set, "F": frozenset}


class NotPlainData(ValueError):
    """A value that is not plain builtin data (a subclass, a function, a cycle, too deep...)."""


def is_plain(value: Any) -> bool:
    """True if `value` is plain builtin data of exact builtin types (no subclasses), finitely nested."""
    try:
        encode(value)
    except NotPlainData:
        return False
    return True


def encode(value: Any) -> Any:
    """Tagged JSON-ready form of `value`; raises `NotPlainData` for anything else.

    Checks `type(x) is T` (not isinstance), so a `dict` subclass with a lying `__eq__` is refused.
    """
    budget = [MAX_NODES]
    return _encode(value, 0, budget)


def _encode(value: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise NotPlainData(f"more than {MAX_NODES:,} values")
    if depth > MAX_DEPTH:
        raise NotPlainData(f"nested deeper than {MAX_DEPTH} levels (or contains itself)")
    kind = type(value)
    if value is None:
        return ["N"]
    if kind is bool:
        return ["b", value]
    if kind is int:
        return ["i", hex(value)]
    if kind is float:
        return ["f", value.hex()]
    if kind is complex:
        return ["c", value.real.hex(), value.imag.hex()]
    if kind is str:
        return ["s", value]
    if kind is bytes:
        return ["y", value.hex()]
    if kind in _SEQUENCES:
        return [_SEQUENCES[kind], [_encode(item, depth + 1, budget) for item in value]]
    if kind is dict:
        return [
            "d",
            [
                [_encode(k, depth + 1, budget), _encode(v, depth + 1, budget)]
                for k, v in value.items()
            ],
        ]
    raise NotPlainData(f"a value of type {_type_name(value)} is not plain builtin data")


def decode(data: Any) -> Any:
    """Inverse of `encode`, checking every node's shape; raises `NotPlainData` on anything malformed."""
    try:
        return _decode(data, 0)
    except NotPlainData:
        raise
    except (TypeError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        raise NotPlainData(f"malformed value: {type(exc).__name__}: {exc}") from None


def _decode(data: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise NotPlainData(f"nested deeper than {MAX_DEPTH} levels")
    if type(data) is not list or not data or type(data[0]) is not str:
        raise NotPlainData("malformed value: not a tagged list")
    tag, args = data[0], data[1:]
    if tag == "N" and not args:
        return None
    if len(args) == 1:
        (arg,) = args
        if tag == "b" and type(arg) is bool:
            return arg
        if tag == "i" and type(arg) is str:
            return int(arg, 16)
        if tag == "f" and type(arg) is str:
            return float.fromhex(arg)
        if tag == "s" and type(arg) is str:
            return arg
        if tag == "y" and type(arg) is str:
            return bytes.fromhex(arg)
        if tag in _BUILDERS and type(arg) is list:
            return _BUILDERS[tag](_decode(item, depth + 1) for item in arg)
        if tag == "d" and type(arg) is list:
            out = {}
            for pair in arg:
                if type(pair) is not list or len(pair) != 2:
                    raise NotPlainData("malformed value: dict entry is not a pair")
                out[_decode(pair[0], depth + 1)] = _decode(pair[1], depth + 1)
            return out
    if tag == "c" and len(args) == 2 and all(type(a) is str for a in args):
        return complex(float.fromhex(args[0]), float.fromhex(args[1]))
    raise NotPlainData(f"malformed value: unknown tag {tag[:20]!r} or wrong arguments")


def dumps(value: Any) -> bytes:
    """`encode` then compact JSON bytes."""
    return json.dumps(encode(value), separators=(",", ":")).encode()


def loads(blob: bytes) -> Any:
    """JSON bytes then `decode`; raises `NotPlainData` for anything malformed."""
    try:
        data = json.loads(blob)
    except (ValueError, RecursionError) as exc:
        raise NotPlainData(f"malformed JSON: {exc}") from None
    return decode(data)


def _type_name(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "")
    name = getattr(kind, "__qualname__", "?")
    return name if module in ("builtins", "", None) else f"{module}.{name}"
