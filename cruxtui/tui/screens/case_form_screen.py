"""A modal asking for a case's tags and note: used when saving a failure and when editing a case."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from cruxtui.core.cases.case_file import merge_tags


def parse_tags(text: str) -> list[str]:
    """`prefix, loop  strings` -> ["prefix", "loop", "strings"]: commas or spaces separate tags."""
    return merge_tags([], text.replace(",", " ").split())


class CaseFormScreen(ModalScreen[tuple[list[str], str] | None]):
    """Returns (tags, note), or None when cancelled."""

    CSS_PATH = "case_form.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="case-form.cancel"),
        Binding("ctrl+s", "save", "Save", id="case-form.save"),
    ]

    def __init__(
        self, title: str, summary: str, tags: list[str] | None = None, note: str = ""
    ) -> None:
        super().__init__()
        self.heading = title
        self.summary = summary
        self.tags = tags or []
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="case-form"):
            yield Static(self.heading, id="case-form-title", markup=False)
            yield Static(self.summary, id="case-form-summary", markup=False)
            yield Label("Tags (separated by spaces or commas)", markup=False)
            yield Input(
                " ".join(self.tags), placeholder="e.g. prefix string-methods", id="case-tags"
            )
            yield Label("Note", markup=False)
            yield Input(
                self.note, placeholder="what is interesting about this failure", id="case-note"
            )
            with Horizontal(id="case-form-buttons"):
                yield Button("Save", variant="primary", id="case-form-save")
                yield Button("Cancel", id="case-form-cancel")

    def on_mount(self) -> None:
        self.query_one("#case-tags", Input).focus()

    @on(Input.Submitted, "#case-tags")
    def _next_field(self) -> None:
        self.query_one("#case-note", Input).focus()

    @on(Input.Submitted, "#case-note")
    @on(Button.Pressed, "#case-form-save")
    def action_save(self) -> None:
        try:
            tags = parse_tags(self.query_one("#case-tags", Input).value)
        except ValueError as exc:
            self.notify(str(exc), severity="error")
            return
        self.dismiss((tags, self.query_one("#case-note", Input).value.strip()))

    @on(Button.Pressed, "#case-form-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
