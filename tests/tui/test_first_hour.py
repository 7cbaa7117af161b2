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
        await pilot.press("down", "down", "enter")  # ↓ from the box to the hits, the second
        await wait_for(pilot, lambda: not isinstance(app.screen, BrowseScreen), what="a sample")
        order = app.state.browse_order
        assert order is not None and getattr(app.screen, "sample", None) == official[order[1]]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen), what="Browse")
        await pilot.press("slash")
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


async def test_sample_keys_work_whatever_has_focus(official: Dataset) -> None:
    """t r p s [ ] are the screen's keys: after typing, with focus on any widget of the screen
    that does not take text (the read-only code view, the right column), they still act."""
    from cruxtui.tui.screens.sample_screen import SampleScreen
    from cruxtui.tui.screens.trace_screen import TraceScreen

    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        app.open_sample("sample_13")
        await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
        screen = app.screen
        focusable = [w for w in screen.focus_chain]
        assert len(focusable) >= 2
        for widget in focusable:
            widget.focus()
            await pilot.press(*"xyz", "right_square_bracket")
            await pilot.pause()
            assert isinstance(app.screen, SampleScreen) and app.screen.sample.id == "sample_14"
            await pilot.press("left_square_bracket", "t")
            await wait_for(pilot, lambda: isinstance(app.screen, TraceScreen), what="the trace")
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen, what="the sample again")


def test_no_text_widget_reads_markup() -> None:
    """Help texts, statuses and errors quote code, model output and `[SCRATCHPAD]`: every Static
    and Label of the TUI is built with markup=False (a Rich renderable styles what needs it)."""
    import ast
    from pathlib import Path

    import cruxtui.tui

    missing = []
    for path in Path(cruxtui.tui.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("Static", "Label")
                and not any(
                    k.arg == "markup"
                    and isinstance(k.value, ast.Constant)
                    and k.value.value is False
                    for k in node.keywords
                )
            ):
                missing.append(f"{path.name}:{node.lineno}")
    assert not missing, f"Static/Label reading markup: {missing}"


async def test_notifications_show_brackets_as_written(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        app.notify("bad call f('[/ANSWER]') and [SCRATCHPAD]")
        await pilot.pause()
        (note,) = app._notifications
        assert not note.markup


async def test_trace_numbers_steps_one_way(official: Dataset) -> None:
    """The status's `step i/last` and the ending's step range use the same (0-based) numbers."""
    from textual.widgets import Static

    from cruxtui.tui.screens.trace_screen import TraceScreen

    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        app.open_sample("sample_13")
        await pilot.pause()
        await pilot.press("t")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, TraceScreen) and app.screen.trace is not None,
            what="the trace",
        )
        screen = app.screen
        assert isinstance(screen, TraceScreen) and screen.trace is not None
        await pilot.press("end")
        await pilot.pause()
        last = len(screen.trace.steps) - 1
        assert f"step {last}/{last}" in str(screen.query_one("#trace-status", Static).render())
        assert f"steps 0–{last}" in str(screen.query_one("#trace-end", Static).render())


async def test_reasoning_pane_is_on_screen_at_80_columns(official: Dataset) -> None:
    """Code, locals and reasoning side by side fit 80 columns (their minimum widths once added up
    to more, and Textual then laid the row out several screens wide, the reasoning off-screen)."""
    from cruxtui.tui.screens.trace_screen import TraceScreen

    app = CruxApp(official)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_sample("sample_35")
        await pilot.pause()
        await pilot.press("t")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, TraceScreen) and app.screen.trace is not None,
            what="the trace",
        )
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        assert screen.show_reasoning("result starts as []. The answer is [1].") is not None
        await pilot.pause()
        panes = list(screen.query("#trace-panes > *"))
        assert [p.id for p in panes] == ["trace-code-pane", "trace-locals-pane", "trace-reasoning"]
        for pane in panes:
            assert pane.region.width >= 16 and pane.region.right <= 80, (pane.id, pane.region)
