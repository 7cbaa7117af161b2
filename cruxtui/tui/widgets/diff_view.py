"""A diff of two code texts, side by side (default) or unified; the data comes from core.

Rendering only: `cruxtui.core.perturb.diff` computes the rows, so the CLI and this widget always
show the same diff.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from cruxtui.core.perturb.diff import side_by_side, unified

_ROW_STYLE = {"equal": "", "replace": "on #3a3a10", "delete": "on #4a1515", "insert": "on #153f15"}


class DiffView(Static):
    """Original vs variant. `unified` switches between two columns and `diff -u` lines."""

    unified: reactive[bool] = reactive(False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self._texts: tuple[str, str, str, str] | None = None
        self._note = ""

    @property
    def texts(self) -> tuple[str, str, str, str] | None:
        """(old, new, old name, new name) on show, or None when a note is shown instead."""
        return self._texts

    def show_diff(self, old: str, new: str, old_name: str, new_name: str) -> None:
        self._texts = (old, new, old_name, new_name)
        self._note = ""
        self.update(self._render_diff())

    def show_note(self, note: str) -> None:
        """No diff to show (e.g. the transform does not apply): say why instead."""
        self._texts = None
        self._note = note
        self.update(Text(note, style="italic"))

    def watch_unified(self) -> None:
        if self._texts is not None:
            self.update(self._render_diff())

    def _render_diff(self) -> RenderableType:
        assert self._texts is not None
        old, new, old_name, new_name = self._texts
        if self.unified:
            lines = unified(old, new, old_name, new_name)
            text = Text()
            for line in lines or ["(code unchanged)"]:
                style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
                style = "bold " + style if line.startswith(("+++", "---")) else style
                text.append(line + "\n", style=style)
            return text
        table = Table(box=None, expand=True, pad_edge=False, show_edge=False, padding=(0, 1))
        table.add_column("", justify="right", style="dim", width=3, no_wrap=True)
        table.add_column(old_name, ratio=1, overflow="fold")
        table.add_column("", justify="right", style="dim", width=3, no_wrap=True)
        table.add_column(new_name, ratio=1, overflow="fold")
        for row in side_by_side(old, new):
            table.add_row(
                str(row.left_no or ""),
                Text(row.left),
                str(row.right_no or ""),
                Text(row.right),
                style=_ROW_STYLE[row.kind],
            )
        return table
