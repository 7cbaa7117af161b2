"""A one-row picture of the whole trace: one bar per step (or per bucket of steps), its height the
line number, so loops show up as repeating saw teeth; the current step is reversed. Click to jump.
"""

from __future__ import annotations

from rich.text import Text
from textual.events import Click
from textual.message import Message
from textual.widget import Widget

BARS = "▁▂▃▄▅▆▇█"


class Timeline(Widget):
    COMPONENT_CLASSES = {
        "timeline--bar",
        "timeline--current",
        "timeline--exception",
        "timeline--nested",
    }

    class Jump(Message):
        """The user clicked the timeline at step `index`."""

        def __init__(self, timeline: Timeline, index: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.index = index

        @property
        def control(self) -> Timeline:
            return self.timeline

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._lines: list[int] = []
        self._kinds: list[str] = []  # per step: "exception", "nested" or "" (plain)
        self._top = 1
        self.current = 0

    def set_steps(self, lines: list[int], kinds: list[str]) -> None:
        self._lines, self._kinds = lines, kinds
        self._top = max(lines, default=1)
        self.current = 0
        self.refresh()

    def show(self, index: int) -> None:
        if index != self.current:
            self.current = index
            self.refresh()

    def _cells(self) -> int:
        return min(len(self._lines), max(self.size.width, 1))

    def _step_at(self, cell: int) -> int:
        return cell * len(self._lines) // self._cells()

    def render(self) -> Text:
        out = Text(no_wrap=True, end="")
        if not self._lines:
            return out
        styles = {
            "": self.get_component_rich_style("timeline--bar", partial=True),
            "nested": self.get_component_rich_style("timeline--nested", partial=True),
            "exception": self.get_component_rich_style("timeline--exception", partial=True),
        }
        current = self.get_component_rich_style("timeline--current", partial=True)
        cells = self._cells()
        here = self.current * cells // len(self._lines)
        for cell in range(cells):
            step = self._step_at(cell)
            level = (self._lines[step] - 1) * (len(BARS) - 1) // max(self._top - 1, 1)
            out.append(BARS[level], style=current if cell == here else styles[self._kinds[step]])
        return out

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and self._lines and 0 <= offset.x < self._cells():
            self.post_message(self.Jump(self, self._step_at(offset.x)))
