"""Diffs of original and variant as data: unified lines and side-by-side rows.

Core returns plain data so the CLI (rich) and the TUI (a widget) render the same diff their own way.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

RowKind = Literal["equal", "replace", "delete", "insert"]


@dataclass(frozen=True)
class Row:
    """One side-by-side line pair; a missing side has `None` number and empty text."""

    kind: RowKind
    left_no: int | None
    left: str
    right_no: int | None
    right: str


def unified(
    old: str, new: str, old_name: str = "original", new_name: str = "variant", context: int = 3
) -> list[str]:
    """`diff -u` lines (without trailing newlines); empty if the texts are equal."""
    return list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), old_name, new_name, n=context, lineterm=""
        )
    )


def side_by_side(old: str, new: str) -> list[Row]:
    """Every line of both texts, aligned: changed lines paired, insertions/deletions opposite a gap."""
    a, b = old.splitlines(), new.splitlines()
    rows: list[Row] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [
                Row("equal", i + 1, a[i], j + 1, b[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        left, right = list(range(i1, i2)), list(range(j1, j2))
        for k in range(max(len(left), len(right))):
            li = left[k] if k < len(left) else None
            rj = right[k] if k < len(right) else None
            kind: RowKind = (
                "replace"
                if li is not None and rj is not None
                else ("delete" if li is not None else "insert")
            )
            rows.append(
                Row(
                    kind,
                    li + 1 if li is not None else None,
                    a[li] if li is not None else "",
                    rj + 1 if rj is not None else None,
                    b[rj] if rj is not None else "",
                )
            )
    return rows
