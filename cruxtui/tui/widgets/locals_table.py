"""Locals of the current step's frame, in definition order, with changed variables marked.

A rendered Rich table rather than a DataTable: values are often long lists and must wrap inside
a narrow pane instead of scrolling sideways, and a changed variable shows what it was before.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from cruxtui.core.trace.steps import Step

CHANGED_MARK = "●"


class LocalsTable(Static):
    COMPONENT_CLASSES = {"locals-table--changed", "locals-table--before", "locals-table--header"}

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.rows: list[tuple[str, str, bool]] = []
        """(name, value, changed) as shown, for tests and other panes."""

    def show_step(self, step: Step | None, before: dict[str, str] | None = None) -> None:
        """Show `step`'s locals; names in `step.changed` get the mark, with their value in
        `before` (the frame's previous step) under the new one."""
        self.rows = [(n, v, n in step.changed) for n, v in step.locals] if step is not None else []
        changed = self.get_component_rich_style("locals-table--changed", partial=True)
        was = self.get_component_rich_style("locals-table--before", partial=True)
        header = self.get_component_rich_style("locals-table--header", partial=True)
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(width=1)
        table.add_column(no_wrap=True, max_width=16, overflow="ellipsis")
        table.add_column(ratio=1, overflow="fold")
        if self.rows:
            table.add_row("", Text("name", style=header), Text("value", style=header))
        for name, value, is_changed in self.rows:
            shown = Text(value, style=changed if is_changed else "")
            previous = (before or {}).get(name)
            if is_changed and previous is not None:
                shown.append(f"\nwas {previous}", style=was)
            table.add_row(
                Text(CHANGED_MARK if is_changed else "", style=changed),
                Text(name, style=changed if is_changed else ""),
                shown,
            )
        self.update(table)
