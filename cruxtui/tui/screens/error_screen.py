"""Error: a modal that explains what went wrong in words, instead of a traceback."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ErrorScreen(ModalScreen[None]):
    """Shown by the app when background work fails; Escape or Enter closes it."""

    BINDINGS = [Binding("escape,enter", "dismiss", "Close", id="error.close")]

    def __init__(self, title: str, message: str) -> None:
        super().__init__()
        self.title_text = title
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="error-box"):
            yield Static(self.title_text, id="error-title", markup=False)
            yield Static(self.message, id="error-message", markup=False)
            yield Button("Close", variant="primary", id="error-close")

    def on_button_pressed(self) -> None:
        self.dismiss()
