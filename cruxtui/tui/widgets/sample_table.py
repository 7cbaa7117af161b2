"""A virtual table for the Browse screen: renders only the lines on screen.

Textual's DataTable measures every cell of every row whenever rows change (about 100 ms for the
800 samples here), which is too slow to rebuild on each search keystroke. This table takes
fixed column widths and draws each visible line on demand (Line API), so replacing all rows
costs microseconds and a frame costs only the ~30 lines shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass(frozen=True)
class TableColumn:
    key: str
    label: str
    width: int


class SampleTable(ScrollView, can_focus=True):
    """Rows are (key, cells); a header line stays on top. Enter or a double click selects."""

    COMPONENT_CLASSES = {
        "sample-table--header",
        "sample-table--cursor",
        "sample-table--even",
    }
    DEFAULT_CSS = """
    SampleTable { background: $surface; }
    SampleTable > .sample-table--header { background: $panel; color: $text; text-style: bold; }
    SampleTable > .sample-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    SampleTable:blur > .sample-table--cursor { background: $block-cursor-blurred-background; }
    SampleTable > .sample-table--even { background: $surface-lighten-1; }
    """
    BINDINGS = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "select", "Open", id="table.open"),
    ]

    cursor_row: reactive[int] = reactive(0)

    class RowSelected(Message):
        """Enter or a double click on the row of sample `key`."""

        def __init__(self, table: SampleTable, key: str) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> SampleTable:
            return self.table

    class HeaderSelected(Message):
        """A click on the header of column `column_key`."""

        def __init__(self, table: SampleTable, column_key: str) -> None:
            super().__init__()
            self.table = table
            self.column_key = column_key

        @property
        def control(self) -> SampleTable:
            return self.table

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns: list[TableColumn] = []
        self.keys: list[str] = []
        self._cells: list[Sequence[Text]] = []

    # Data ------------------------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self.keys)

    @property
    def cursor_key(self) -> str | None:
        return self.keys[self.cursor_row] if self.keys else None

    def set_data(
        self,
        columns: list[TableColumn],
        rows: Sequence[tuple[str, Sequence[Text]]],
        keep: str | None = None,
    ) -> None:
        """Replace columns and rows; keep the cursor on row `keep` if it is still there."""
        self.columns = columns
        self.keys = [k for k, _ in rows]
        self._cells = [c for _, c in rows]
        width = sum(c.width + 1 for c in columns)
        self.virtual_size = Size(width, len(self.keys) + 1)
        row = self.keys.index(keep) if keep in self.keys else 0
        self.set_reactive(SampleTable.cursor_row, row)
        self._scroll_cursor_into_view()
        self.refresh()

    # Rendering -------------------------------------------------------------------------
    def _line_text(self, cells: Sequence[Text]) -> Text:
        line = Text(no_wrap=True, end="")
        for col, cell in zip(self.columns, cells, strict=False):
            piece = cell.copy()
            piece.truncate(col.width, overflow="ellipsis", pad=True)
            line.append_text(piece)
            line.append(" ")
        return line

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self.rich_style
        if y == 0:
            style = base + self.get_component_rich_style("sample-table--header")
            text = self._line_text([Text(c.label) for c in self.columns])
        else:
            row = scroll_y + y - 1
            if row >= len(self.keys):
                return Strip.blank(width, base)
            if row == self.cursor_row:
                style = base + self.get_component_rich_style("sample-table--cursor")
            elif row % 2:
                style = base + self.get_component_rich_style("sample-table--even")
            else:
                style = base
            text = self._line_text(self._cells[row])
        segments = list(text.render(self.app.console))
        strip = Strip(segments).apply_style(style).extend_cell_length(scroll_x + width, style)
        return strip.crop(scroll_x, scroll_x + width).apply_style(Style())

    # Cursor ----------------------------------------------------------------------------
    def watch_cursor_row(self, old: int, new: int) -> None:
        self._scroll_cursor_into_view()
        self.refresh()

    def _scroll_cursor_into_view(self) -> None:
        visible = max(1, self.size.height - 1)
        top = int(self.scroll_offset.y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    def move_cursor(self, row: int) -> None:
        if self.keys:
            self.cursor_row = max(0, min(row, len(self.keys) - 1))

    def action_move(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self.size.height - 2))

    def action_jump(self, row: int) -> None:
        self.move_cursor(row if row >= 0 else len(self.keys) - 1)

    def action_select(self) -> None:
        if self.keys:
            self.post_message(self.RowSelected(self, self.keys[self.cursor_row]))

    # Mouse -----------------------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x = event.x + int(self.scroll_offset.x)
            for col in self.columns:
                if x <= col.width:
                    self.post_message(self.HeaderSelected(self, col.key))
                    return
                x -= col.width + 1
            return
        row = int(self.scroll_offset.y) + event.y - 1
        if 0 <= row < len(self.keys):
            self.move_cursor(row)
            if event.chain >= 2:
                self.action_select()
