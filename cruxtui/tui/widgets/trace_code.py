"""The traced function's source with the current line highlighted and a gutter of visit counts.

A custom widget rather than a TextArea: the Trace screen re-renders it at every step, it needs a
per-line gutter (how often each line ran) and a click on a line means "go to that line's next
visit", not "move a cursor".
"""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget

EVENT_MARK = {"call": "→", "line": "▶", "return": "←", "exception": "✖"}


class TraceCode(Widget):
    """Source lines; `current` is highlighted; lines that never ran are dimmed."""

    COMPONENT_CLASSES = {
        "trace-code--current",
        "trace-code--exception",
        "trace-code--gutter",
        "trace-code--unvisited",
    }

    class LineClicked(Message):
        """The user clicked source line `line` (1-based)."""

        def __init__(self, code: TraceCode, line: int) -> None:
            super().__init__()
            self.code = code
            self.line = line

        @property
        def control(self) -> TraceCode:
            return self.code

    def __init__(self, code: str, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._lines: list[Text] = []
        self._visits: dict[int, int] = {}
        self.current: int | None = None
        self.event = "line"
        self.set_code(code)

    def set_code(self, code: str, visits: dict[int, int] | None = None) -> None:
        """Show `code`; `visits` maps line -> how many line steps ran it (None: not traced yet)."""
        syntax = Syntax(code, "python", theme="monokai", background_color="default")
        highlighted = syntax.highlight(code.rstrip("\n"))
        highlighted.rstrip()
        self._lines = list(highlighted.split("\n", allow_blank=True))
        self._visits = visits or {}
        self._traced = visits is not None
        self.refresh(layout=True)

    def show(self, line: int | None, event: str = "line") -> None:
        """Highlight `line` (1-based; None for no current line) as the step's `event`."""
        if (line, event) != (self.current, self.event):
            self.current, self.event = line, event
            self.refresh()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(len(self._lines), 1)

    def render(self) -> Text:
        gutter = self.get_component_rich_style("trace-code--gutter", partial=True)
        current = self.get_component_rich_style(
            "trace-code--exception" if self.event == "exception" else "trace-code--current",
            partial=True,
        )
        unvisited = self.get_component_rich_style("trace-code--unvisited", partial=True)
        out = Text(no_wrap=True, overflow="ellipsis", end="")
        for number, source in enumerate(self._lines, start=1):
            is_current = number == self.current
            mark = EVENT_MARK.get(self.event, "▶") if is_current else " "
            count = self._visits.get(number, 0)
            visits = f"{count}×" if count else ""
            out.append(f"{mark}{number:>3} {visits:>5} ", style=current if is_current else gutter)
            row = source.copy()
            if is_current:
                row.pad_right(max(0, self.size.width - 11 - row.cell_len))
                row.stylize(current)
            elif self._traced and not count:
                row.stylize(unvisited)
            out.append_text(row)
            if number < len(self._lines):
                out.append("\n")
        return out

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and 0 <= offset.y < len(self._lines):
            self.post_message(self.LineClicked(self, offset.y + 1))
