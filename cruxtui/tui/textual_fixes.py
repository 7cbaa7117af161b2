"""Work-arounds for Textual bugs a key can trigger, applied once when the app module loads.

Each one is the smallest guard that turns a crash into "the key does nothing yet"; delete it once
the Textual version pinned in pyproject.toml fixes the bug (the key-fuzz test will say).
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from textual import work
from textual.command import CommandList, CommandPalette
from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.events import Mount
from textual.widgets import Header, OptionList
from textual.widgets._header import HeaderTitle


def guard_option_list_paging() -> None:
    """PageUp / PageDown in an OptionList whose lines are not laid out yet (the command palette's
    list while it fills) raise KeyError in Textual 8 (`_index_to_line` is still empty)."""
    original = OptionList._move_page
    if getattr(original, "_cruxtui_guard", False):
        return

    def _move_page(self: OptionList, direction: Any) -> None:
        if not self._lines or (self.highlighted or 0) not in self._index_to_line:
            return
        original(self, direction)

    _move_page._cruxtui_guard = True  # type: ignore[attr-defined]
    OptionList._move_page = _move_page  # type: ignore[method-assign]


def guard_palette_closing() -> None:
    """The command palette's search worker can finish after the palette was dismissed (Escape
    right after typing): its `_list_visible` watcher then queries children already removed and
    raises NoMatches in Textual 8."""
    original = CommandPalette._watch__list_visible
    if getattr(original, "_cruxtui_guard", False):
        return

    def _watch__list_visible(self: CommandPalette) -> None:
        if self.query(CommandList):
            original(self)

    _watch__list_visible._cruxtui_guard = True  # type: ignore[attr-defined]
    CommandPalette._watch__list_visible = _watch__list_visible  # type: ignore[method-assign]

    # The search worker itself can start after the palette's children are gone.
    gather = CommandPalette._gather_commands.__wrapped__  # type: ignore[attr-defined]

    @work(exclusive=True, group=CommandPalette._GATHER_COMMANDS_GROUP)
    async def _gather_commands(self: CommandPalette, search_value: str) -> None:
        if self.query(CommandList):
            await gather(self, search_value)

    CommandPalette._gather_commands = _gather_commands  # type: ignore[method-assign]


def guard_header_title() -> None:
    """A Header re-titles itself from a watcher that can run after its screen began removing
    its children (a key burst that opens and closes a screen at once on a busy machine): the
    `HeaderTitle` query then raises NoMatches in Textual 8, which only catches NoScreen."""
    if getattr(Header._on_mount, "_cruxtui_guard", False):
        return

    def _on_mount(self: Header, _: Mount) -> None:
        async def set_title() -> None:
            # The header may be going away with its screen: then there is nothing to title.
            with suppress(NoScreen, NoMatches):
                self.query_one(HeaderTitle).update(self.format_title())

        self.watch(self.app, "title", set_title)
        self.watch(self.app, "sub_title", set_title)
        self.watch(self.screen, "title", set_title)
        self.watch(self.screen, "sub_title", set_title)

    _on_mount._cruxtui_guard = True  # type: ignore[attr-defined]
    Header._on_mount = _on_mount  # type: ignore[method-assign]


def apply() -> None:
    guard_option_list_paging()
    guard_palette_closing()
    guard_header_title()
