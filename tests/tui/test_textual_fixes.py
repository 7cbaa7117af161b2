"""The guards in `cruxtui.tui.textual_fixes` turn Textual races a key burst can hit into no-ops.

Each test drives the race directly, so it fails (the app crashes) if a guard is dropped while the
pinned Textual still has the bug.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Header
from textual.widgets._header import HeaderTitle

from cruxtui.tui import textual_fixes


class _HeaderApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Header()


async def test_header_retitled_after_its_title_was_removed_does_not_crash() -> None:
    """A title change that reaches a Header whose children are already gone (its screen closing
    in the same key burst) is ignored, not a NoMatches crash."""
    textual_fixes.apply()
    app = _HeaderApp()
    async with app.run_test() as pilot:
        await app.query_one(HeaderTitle).remove()
        app.title = "a new title"  # the header's watcher runs with no HeaderTitle to update
        await pilot.pause()
        assert app.is_running
    assert app.return_code in (0, None)
