"""Every value a run held, by subject: what "the program never computes X" is checked against.

A subject is a variable of the frame (`var:name`), a sub-expression the tracer recorded on a
line or an expression the chain names, evaluated on the traced states (`expr:source`, spaces
removed), or f's result (`return`). The arguments are variables at the first position.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cruxtui.core.reasoning.frame_eval import ClaimValues
from cruxtui.core.reasoning.literal_scan import OPAQUE, literal_value, value_key
from cruxtui.core.reasoning.trace_positions import Positions

_EMPTIES = ("''", "[]", "()", "{}", "set()")


def squeeze(src: str) -> str:
    return src.replace(" ", "")


def distinctive(value: str) -> bool:
    """Strings and containers: a number or a truth value is held by many subjects by chance
    (counts, indices, lengths), so finding it elsewhere says nothing about which one was meant."""
    obj = literal_value(value)
    return not isinstance(obj, bool | int | float | complex) and obj is not None


class RunValues:
    """The value keys (`literal_scan.value_key`) each subject held anywhere in the run, and
    their types."""

    def __init__(self, trace: Any, pos: Positions, values: ClaimValues) -> None:
        self.by_subject: dict[str, set[object]] = {}
        self.types: dict[str, set[type]] = {}
        for env in pos.env:
            for name, rep in env.items():
                self._add(f"var:{name}", rep)
        for row in pos.computed:
            for src, rep in row.items():
                self._add(f"expr:{src}", rep)
        for expr, row_values in values.table.items():
            for held in row_values:
                if held is not None:
                    self._add(f"expr:{squeeze(expr)}", held)
        if trace.return_repr is not None:
            self._add("return", trace.return_repr)
        self.everything: set[object] = set().union(*self.by_subject.values())

    def _add(self, subject: str, rep: str) -> None:
        keys = self.by_subject.setdefault(subject, set())
        key = value_key(rep)
        if key is OPAQUE or key in keys:
            return
        keys.add(key)
        self.types.setdefault(subject, set()).add(type(literal_value(rep)))

    def held(self, want: object) -> bool:
        """Did anything in the run hold this value?"""
        return want in self.everything

    def held_by_others(self, want: object, own: Iterable[str]) -> bool:
        mine = set(own)
        return any(want in keys for s, keys in self.by_subject.items() if s not in mine)

    def any_empty_but(self, own: Iterable[str]) -> bool:
        mine = set(own)
        empties = {value_key(x) for x in _EMPTIES}
        return any(keys & empties for s, keys in self.by_subject.items() if s not in mine)
