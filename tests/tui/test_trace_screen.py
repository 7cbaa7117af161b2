"""The Trace screen with Pilot: opened from a sample with `t`, stepping forward and back by key,
by line visit, by typed step number, by mouse on a code line and on the timeline; tracing a typed
call; a run that raises says so; the numsteps Browse column; and a snapshot."""

from __future__ import annotations

from conftest import wait_for
from textual.widgets import Input, Static

from cruxtui.core.data.dataset import Dataset, load_dataset, starter_path
from cruxtui.core.trace.steps import Trace, trace
from cruxtui.tui.app import CruxApp
from cruxtui.tui.messages import FilterSteps, StepChanged
from cruxtui.tui.screens.browse_screen import BrowseScreen, Sort
from cruxtui.tui.screens.trace_screen import TraceScreen
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.widgets.locals_table import LocalsTable
from cruxtui.tui.widgets.timeline import Timeline
from cruxtui.tui.widgets.trace_code import TraceCode

SIZE = (100, 32)


async def open_trace(pilot, sample_id: str = "sample_0") -> TraceScreen:  # type: ignore[no-untyped-def]
    pilot.app.open_sample(sample_id)
    await pilot.pause()
    await pilot.press("t")
    screen = pilot.app.screen
    assert isinstance(screen, TraceScreen)
    await wait_for(pilot, lambda: screen.trace is not None, what="the trace")
    assert screen.trace is not None and screen.trace.steps
    return screen


def current_line(screen: TraceScreen) -> int | None:
    return screen.query_one(TraceCode).current


def changed_rows(screen: TraceScreen) -> list[str]:
    return [name for name, _, changed in screen.query_one(LocalsTable).rows if changed]


async def test_step_forward_and_back(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_trace(pilot)
        steps = screen.trace.steps  # type: ignore[union-attr]
        assert screen.index == 0 and current_line(screen) == 1
        assert changed_rows(screen) == ["nums"]  # the call binds the argument

        await pilot.press("right", "right", "right")
        assert screen.index == 3 and current_line(screen) == steps[3].line == 4
        assert changed_rows(screen) == ["n"] and "step 3/" in str(
            screen.query_one("#trace-status", Static).render()
        )
        await pilot.press("left")
        assert screen.index == 2 and current_line(screen) == 3

        await pilot.press("down")  # next visit of line 3
        assert screen.index == 4 and steps[4].line == 3
        await pilot.press("down", "down", "up")
        assert screen.index == 6
        await pilot.press("end")
        assert screen.index == len(steps) - 1 and steps[-1].event == "return"
        await pilot.press("right")  # already at the end: stays
        assert screen.index == len(steps) - 1
        await pilot.press("home")
        assert screen.index == 0

        await pilot.press("colon", *"10", "enter")
        assert screen.index == 10
        await pilot.press("colon", *"999", "enter")  # out of range: a message, the prompt stays
        assert screen.index == 10 and screen.query_one("#trace-input", Input).has_focus
        await pilot.press("escape")
        assert not screen.query_one("#trace-input", Input).has_focus and isinstance(
            app.screen, TraceScreen
        )

        await pilot.press("escape")
        assert not isinstance(app.screen, TraceScreen)


async def test_mouse_on_code_and_timeline(official: Dataset) -> None:
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_trace(pilot)
        steps = screen.trace.steps  # type: ignore[union-attr]
        code = screen.query_one(TraceCode)
        # Click on line 5 (`output.sort(...)`, row 4 of the widget): its only visit.
        await pilot.click(TraceCode, offset=(14, 4))
        assert steps[screen.index].line == 5 and current_line(screen) == 5
        await pilot.click(TraceCode, offset=(14, 3))  # line 4: its next visit wraps to the first
        assert screen.index == steps.index(next(s for s in steps if s.line == 4))
        assert code.current == 4

        timeline = screen.query_one(Timeline)  # one cell per step, after one cell of padding
        await pilot.click(Timeline, offset=(1 + len(steps) - 1, 0))
        assert screen.index == len(steps) - 1
        await pilot.click(Timeline, offset=(1 + 2, 0))
        assert screen.index == 2
        assert timeline.current == 2


async def test_trace_a_typed_call_and_panes_hear_steps(official: Dataset) -> None:
    heard: list[int] = []

    class Pane(Static):
        def on_step_changed(self, message: StepChanged) -> None:
            heard.append(message.index)

    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_trace(pilot)
        screen.add_pane(Pane("reasoning", id="extra-pane"))
        await pilot.pause()
        await pilot.press("right")
        await wait_for(pilot, lambda: heard and heard[-1] == 1, what="the pane to hear step 1")

        await pilot.press("c")
        box = screen.query_one("#trace-input", Input)
        assert box.has_focus and box.value == "f([1, 1, 3, 1, 3, 1])"
        box.value = "f([2, 2"
        await pilot.press("enter")  # does not parse: stays open, nothing traced
        assert box.has_focus and screen.trace.call == "f([1, 1, 3, 1, 3, 1])"  # type: ignore[union-attr]
        box.value = "f([7, 5, 7])"
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: screen.trace is not None and screen.trace.call == "f([7, 5, 7])",
            what="the new trace",
        )
        assert screen.trace.return_repr == "[(2, 7), (2, 7), (1, 5)]"  # type: ignore[union-attr]
        assert screen.index == 0 and "returned [(2, 7)" in str(
            screen.query_one("#trace-end", Static).render()
        )


async def test_a_raising_call_says_so(official: Dataset) -> None:
    sample = official["sample_0"]
    result = trace(sample.code, "f(5)")  # int is not iterable
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(TraceScreen(app.state, sample, result.call, trace=result))
        await pilot.pause()
        screen = app.screen
        end = screen.query_one("#trace-end", Static)
        assert "raised TypeError" in str(end.render()) and end.has_class("-failed")
        await pilot.press("end")
        assert screen.trace.steps[screen.index].event == "return"  # type: ignore[union-attr]
        await pilot.press("left")
        assert screen.query_one(TraceCode).event == "exception"


async def test_step_cap_and_timeout_are_said(official: Dataset) -> None:
    sample = official["sample_0"]
    capped = trace("def f(x):\n    while True:\n        x += 1", "f(0)", max_steps=300)
    stuck = Trace(
        sample.code, "f(big)", [], None, None, truncated=False, timeout=True, error=None, numsteps=0
    )
    app = CruxApp(official)
    async with app.run_test(size=SIZE) as pilot:
        for result, says in ((capped, "stopped after 300 steps (step cap)"), (stuck, "timed out")):
            await app.push_screen(TraceScreen(app.state, sample, result.call, trace=result))
            await pilot.pause()
            end = app.screen.query_one("#trace-end", Static)
            assert says in str(end.render()) and end.has_class("-failed")
            await pilot.press("end", "left")  # stepping works (or does nothing) without errors
            status = str(app.screen.query_one("#trace-status", Static).render())
            assert ("no steps recorded" in status) == (not result.steps)
            app.pop_screen()
            await pilot.pause()


async def test_numsteps_column_sorts_and_filters() -> None:
    starter = load_dataset(starter_path())
    app = CruxApp(starter, TuiOptions(step_counts=True))
    async with app.run_test(size=SIZE) as pilot:
        # counting runs in a worker after start-up
        await wait_for(pilot, lambda: "numsteps" in app.state.columns, what="the numsteps column")
        counts = app.state.step_counts
        assert counts is not None and set(counts) == {s.id for s in starter.samples}
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        browse.sort = Sort("numsteps")
        shown = [counts[i] for i in browse.visible_ids]
        assert shown == sorted(shown)
        below = sum(1 for v in counts.values() if v < 60)
        app.post_message(FilterSteps("<", 60))  # what the palette's `numsteps<60` sends
        await wait_for(pilot, lambda: len(browse.visible_ids) == below, what="the filter")
        assert browse.visible_ids and all(counts[i] < 60 for i in browse.visible_ids)
        assert list(app.state.filters) == ["numsteps<60"]


def test_trace_screen_snapshot(snap_compare, official: Dataset) -> None:
    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await open_trace(pilot)
        await pilot.press("right", "right", "right", "right", "right")
        await pilot.pause()

    assert snap_compare(CruxApp(official), terminal_size=SIZE, run_before=run_before)


async def test_palette_numsteps_filter_counts_first() -> None:
    """`numsteps<60` in the palette with no counts yet: the app counts, then filters."""
    from textual.widgets import OptionList

    starter = load_dataset(starter_path())
    app = CruxApp(starter)  # no counting at start-up without the CLI's default
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.state.step_counts is None and "numsteps" not in app.state.columns
        await pilot.press("ctrl+p", *"numsteps<60")
        hits = app.screen.query_one(OptionList)
        await wait_for(
            pilot,
            lambda: (
                hits.option_count and "numsteps < 60" in str(hits.get_option_at_index(0).prompt)
            ),
            what="the palette's command",
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: "numsteps<60" in app.state.filters, what="the filter")
        counts = app.state.step_counts
        assert counts is not None and "numsteps" in app.state.columns
        browse = app.screen
        assert isinstance(browse, BrowseScreen)
        await wait_for(
            pilot,
            lambda: len(browse.visible_ids) == sum(1 for v in counts.values() if v < 60),
            what="Browse to show the filtered rows",
        )
        assert all(counts[i] < 60 for i in browse.visible_ids)
