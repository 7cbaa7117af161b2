"""A modal asking where to export the gallery; `.md` writes Markdown, anything else one HTML page."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static


class ExportScreen(ModalScreen[str | None]):
    """Returns the output path, or None when cancelled."""

    CSS_PATH = "case_form.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="case-export.cancel")]

    def __init__(self, count: int, default: str = "gallery.html") -> None:
        super().__init__()
        self.count = count
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="case-export"):
            yield Static(f"Export {self.count} case(s)", id="case-export-title", markup=False)
            yield Label("File (.html: one self-contained page, .md: Markdown)", markup=False)
            yield Input(self.default, id="case-export-path")
            with Horizontal(id="case-export-buttons"):
                yield Button("Export", variant="primary", id="case-export-go")
                yield Button("Cancel", id="case-export-cancel")

    def on_mount(self) -> None:
        self.query_one("#case-export-path", Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#case-export-go")
    def _go(self) -> None:
        path = self.query_one("#case-export-path", Input).value.strip()
        if not path:
            self.notify("Give a file name.", severity="error")
            return
        self.dismiss(path)

    @on(Button.Pressed, "#case-export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
