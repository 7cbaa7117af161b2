"""What a new user tries in the first hour, as the help and README describe it."""

from __future__ import annotations

from conftest import wait_for
from textual.widgets import Input

from cruxtui.core.data.dataset import Dataset
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.browse_screen import BrowseScreen
from cruxtui.tui.widgets.sample_table import SampleTable

SIZE = (100, 30)


def status(app: CruxApp) -> str:
    return str(app.screen.query_one("#browse-status").render())


async def test_typing_in_browse_searches(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen.focused, SampleTable)
        await pilot.press(*"rfind")
        await pilot.pause()
        search = app.screen.query_one("#search", Input)
        focused: object = app.focused
        assert search.value == "rfind" and focused is search
        assert 0 < app.screen.query_one(SampleTable).row_count < 800
        await pilot.press("escape")  # clears, back to the table; its own keys work again
        await pilot.press("o")
        await pilot.pause()
        assert search.value == "" and isinstance(app.screen, BrowseScreen)
        assert app.screen.sort.key == "code"


async def test_numsteps_in_search_box_and_status_names_filters(official: Dataset) -> None:
    counts = {s.id: int(s.id.split("_")[1]) for s in official}  # known counts: id number
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app._show_step_counts(counts)
        search = app.screen.query_one("#search", Input)
        search.value = "numsteps<100"
        table = app.screen.query_one(SampleTable)
        await wait_for(pilot, lambda: table.row_count == 100, what="the numsteps filter")
        assert "numsteps<100" in status(app)
        search.value = "method:split type:list"
        await wait_for(pilot, lambda: table.row_count < 100, what="the method filter")
        text = status(app)
        assert "method:split" in text and "type:list" in text and "filters: none" not in text
        assert "numsteps" not in text  # the box no longer asks for it
