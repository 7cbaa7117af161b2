"""The TUI shell with Pilot: searching narrows the table, Enter opens a sample, Escape returns,
the palette jumps to a sample, help opens and closes; plus snapshots of the main screens."""

from __future__ import annotations

import pytest
from conftest import NotingApp, wait_for
from textual.widgets import Input, OptionList, Static, TextArea

from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.tui.app import CruxApp
from cruxtui.tui.columns import Column
from cruxtui.tui.screens.browse_screen import BrowseScreen
from cruxtui.tui.screens.error_screen import ErrorScreen
from cruxtui.tui.screens.help_screen import HelpScreen
from cruxtui.tui.screens.sample_screen import SampleScreen
from cruxtui.tui.widgets.sample_table import SampleTable

SIZE = (100, 30)


def rows(app: CruxApp) -> int:
    return app.screen.query_one(SampleTable).row_count


async def test_browse_lists_every_sample(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, BrowseScreen)
        assert rows(app) == 800


async def test_typing_narrows_enter_opens_escape_returns(official: Dataset) -> None:
    expected = sorted(
        (s.id for s in official if ".rfind(" in s.code), key=lambda i: int(i.split("_")[1])
    )
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"rfind")
        await pilot.pause()
        assert app.screen.query_one("#search", Input).value == "rfind"
        assert sorted(app.screen.visible_ids, key=lambda i: int(i.split("_")[1])) == expected
        assert rows(app) == len(expected)
        await pilot.press("enter")  # in the search box: opens the selected (top) hit
        await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
        order = app.state.browse_order
        assert order is not None and app.screen.sample.id == order[0]
        code = app.screen.query_one("#sample-code", TextArea)
        assert ".rfind(" in code.text and code.read_only and code.language == "python"
        await pilot.press("right_square_bracket")
        assert app.screen.sample.id == order[1]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BrowseScreen)
        assert rows(app) == len(expected)  # the search survives the round trip


async def test_typo_still_finds_and_method_filter(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"rfnid")
        await pilot.pause()
        assert "sample_35" in app.screen.visible_ids
        search = app.screen.query_one("#search", Input)
        search.value = "method:rfind type:list"
        await pilot.pause()
        assert app.screen.visible_ids
        assert all(
            "rfind" in official[i].methods and official[i].output_type == "list"
            for i in app.screen.visible_ids
        )


async def test_sort_by_header_click_and_key(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("o")  # id -> code
        await pilot.press("o")  # code -> lines
        await pilot.pause()
        lines = [official[i].lines for i in app.screen.visible_ids]
        assert lines == sorted(lines)
        await pilot.press("O")
        await pilot.pause()
        lines = [official[i].lines for i in app.screen.visible_ids]
        assert lines == sorted(lines, reverse=True)


async def test_registered_column_and_filter(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.set_column(Column("chars", "chars", lambda s: str(s.chars), lambda s: s.chars))
        app.set_filter("short", lambda s: s.lines <= 3)
        short = sum(1 for s in official if s.lines <= 3)
        await wait_for(pilot, lambda: rows(app) == short, what="the filter")
        table = app.screen.query_one(SampleTable)
        assert "chars" in [c.key for c in table.columns]
        app.set_filter("short", None)
        await wait_for(pilot, lambda: rows(app) == 800, what="every sample again")


async def test_palette_jumps_to_sample(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"sample_123")
        hits = app.screen.query_one(OptionList)
        await wait_for(
            pilot,
            lambda: hits.option_count and "sample_123" in str(hits.get_option_at_index(0).prompt),
            what="the palette's hit",
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
        assert app.screen.sample.id == "sample_123"


async def test_help_opens_and_closes(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)


async def test_starter_set_opens_with_notice() -> None:
    dataset = load_dataset(offline=True)
    app = NotingApp(dataset)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert rows(app) == len(dataset) >= 30
        assert any("cruxtui download" in n.message for n in app.notes)
        status = str(app.screen.query_one("#browse-status").render())
        assert "starter set, not CRUXEval" in status and "cruxtui download" in status


async def test_quit_cleanly(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
    assert app.return_code in (0, None)


@pytest.mark.parametrize(
    ("keys", "screen"),
    [((), BrowseScreen), (("enter",), SampleScreen), (("f1",), HelpScreen)],
    ids=["browse", "sample", "help"],
)
def test_snapshots(snap_compare, official: Dataset, keys: tuple[str, ...], screen: type) -> None:
    async def run_before(pilot) -> None:  # noqa: ANN001
        await pilot.press(*keys)
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, screen), what=screen.__name__)

    assert snap_compare(CruxApp(official), terminal_size=SIZE, run_before=run_before)


def test_snapshot_80x24(snap_compare, official: Dataset) -> None:
    assert snap_compare(CruxApp(official), terminal_size=(80, 24), press=["slash", *"rfind"])


def boom() -> None:
    raise RuntimeError("endpoint http://127.0.0.1:9 refused the connection")


async def test_failed_worker_shows_error_modal_not_traceback(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        worker = app.run_worker(boom, name="Model run", thread=True, exit_on_error=False)
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen), what="the error")
        assert worker.is_finished
        assert "Model run failed" in str(app.screen.query_one("#error-title", Static).render())
        assert "refused the connection" in str(
            app.screen.query_one("#error-message", Static).render()
        )
        await pilot.press("escape")
        assert isinstance(app.screen, BrowseScreen)
    assert app.return_code in (0, None)


async def test_a_screens_failed_worker_reaches_the_error_modal(official: Dataset) -> None:
    """Textual tells only the node that started a worker that it failed; a screen's failure
    must still reach the one error screen."""
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        app.open_sample("sample_0")
        await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
        app.screen.run_worker(boom, name="Tracing", thread=True, exit_on_error=False)
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen), what="the error")
        assert "Tracing failed" in str(app.screen.query_one("#error-title", Static).render())
        await pilot.press("escape")
        assert isinstance(app.screen, SampleScreen)


async def test_mouse_header_click_sorts_and_double_click_opens(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.screen.query_one(SampleTable)
        lines_x = sum(c.width + 1 for c in table.columns[:2]) + 1  # inside the "lines" header
        await pilot.click(SampleTable, offset=(lines_x, 0))
        await pilot.pause()
        lines = [official[i].lines for i in app.screen.visible_ids]
        assert lines == sorted(lines) and app.screen.sort.key == "lines"
        # The cursor stayed on the same sample through the sort, so the view scrolled to it.
        row = int(table.scroll_offset.y) + 2
        await pilot.click(SampleTable, offset=(2, 3))  # third line on screen: highlight only
        await pilot.pause()
        assert table.cursor_row == row and isinstance(app.screen, BrowseScreen)
        await pilot.double_click(SampleTable, offset=(2, 3))
        await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
        order = app.state.browse_order
        assert order is not None and app.screen.sample.id == order[row]
