"""Locals of the current step's frame, in definition order, with changed variables marked."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from cruxtui.core.trace import Step

CHANGED_MARK = "●"


class LocalsTable(DataTable[Text]):
    """A read-only table (no focus: the arrow keys belong to stepping)."""

    can_focus = False

    COMPONENT_CLASSES = DataTable.COMPONENT_CLASSES | {"locals-table--changed"}

    def on_mount(self) -> None:
        self.cursor_type = "none"
        self.zebra_stripes = False
        self.add_column(" ", key="mark", width=1)
        self.add_column("name", key="name")
        self.add_column("value", key="value")

    def show_step(self, step: Step | None) -> None:
        """Replace the rows with `step`'s locals; names in `step.changed` get the mark and style."""
        self.clear()
        if step is None:
            return
        changed = set(step.changed)
        style = self.get_component_rich_style("locals-table--changed", partial=True)
        for name, value in step.locals:
            is_changed = name in changed
            self.add_row(
                Text(CHANGED_MARK if is_changed else "", style=style),
                Text(name, style=style if is_changed else ""),
                Text(value, style=style if is_changed else "", overflow="fold"),
                key=name,
            )
