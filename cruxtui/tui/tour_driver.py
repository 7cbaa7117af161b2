"""The guided tour (`--demo`) on screen: each stop of `cruxtui.core.demo.tour` set up on the real
screens, with its caption.

Going to a stop rebuilds the screen stack from Browse (so forward, back and resume all land on
the same screens, whatever was done in between) and then does what a person would: open the
sample, run the model (the replay backend serving the recorded answers), trace, show the answer
in the reasoning pane and jump to the first divergence, pick a perturbation, open the gallery and
replay the case. Each step waits for the screen to be ready, with a deadline: a stop that cannot
be prepared says why in its caption instead of hanging.

Keys (app bindings, in the footer): PageDown / PageUp move (what a presenter's clicker sends),
F2 leaves the tour to explore and, pressed again, resumes it at the stop it left.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from rich.text import Text
from textual.app import App
from textual.css.query import DOMQuery
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from cruxtui.core.demo.tour import PERTURBATION, Tour
from cruxtui.tui.screens.browse_screen import BrowseScreen
from cruxtui.tui.state import app_state

if TYPE_CHECKING:
    from cruxtui.tui.screens.sample_screen import SampleScreen

T = TypeVar("T")
W = TypeVar("W", bound=Widget)
S = TypeVar("S", bound=Screen[Any])

READY_TIMEOUT = 60.0
"""Seconds a stop may take to prepare (a trace, a replay) before its caption says it could not."""


class TourCaption(Static):
    """The caption of the current stop, docked above the footer of the screen it describes."""

    DEFAULT_CSS = """
    TourCaption {
        dock: bottom;
        height: auto;
        max-height: 6;
        margin-bottom: 1;
        padding: 0 1;
        background: $primary;
        color: $text;
        text-style: bold;
    }
    """


class TourDriver:
    """Which stop the tour is at, whether it is showing, and the way to each stop."""

    def __init__(self, app: App[Any], tour: Tour) -> None:
        self.app = app
        self.state = app_state(app)
        self.tour = tour
        self.index = 0
        self.active = True
        """False while the presenter explores on their own (F2); the stop is kept."""
        self.problem: str | None = None
        """Why the current stop could not be fully prepared (shown in its caption)."""
        self.ready = False
        """The current stop is prepared and captioned (tests and scripts wait for it)."""

    @property
    def stop_count(self) -> int:
        return len(self.tour.stops)

    # Moving ----------------------------------------------------------------------------------
    def go(self, index: int) -> None:
        """Show stop `index` (clamped to the tour), from a clean screen stack."""
        self.index = max(0, min(index, self.stop_count - 1))
        self.active = True
        self.ready = False
        self.app.refresh_bindings()
        self.app.run_worker(
            self._enter(self.index), group="tour", exclusive=True, name="Tour", exit_on_error=False
        )

    def leave(self) -> None:
        """Explore freely from here: the caption goes, the screens stay."""
        self.active = False
        self.app.refresh_bindings()
        for screen in self.app.screen_stack:
            screen.query(TourCaption).remove()
        self.app.notify("Exploring on your own: F2 resumes the tour.", timeout=4)

    def resume(self) -> None:
        self.go(self.index)

    async def _enter(self, index: int) -> None:
        stop = self.tour.stops[index]
        self.problem = None
        await self._back_to_browse()
        try:
            await getattr(self, f"_stop_{stop.key}")()
        except Exception as exc:  # noqa: BLE001 - on stage, a stop that fails says so and the tour goes on
            self.problem = str(exc) or type(exc).__name__
        await self._caption()
        self.ready = True

    async def _caption(self) -> None:
        screen = self.app.screen
        for old in [c for s in self.app.screen_stack for c in s.query(TourCaption)]:
            await old.remove()  # Browse keeps the caption of an earlier visit
        stop = self.tour.stops[self.index]
        text = Text(f"Tour {self.index + 1}/{self.stop_count} · {stop.title}\n", style="bold")
        text.append(self.tour.caption(self.index), style="not bold")
        if self.problem:
            text.append(f"\n(this stop is not complete: {self.problem})", style="italic")
        keys = "PgDn next · PgUp back · F2 explore"
        if self.index == self.stop_count - 1:
            keys = "PgUp back · F2 explore · end of the tour"
        text.append(f"\n{keys}", style="not bold italic")
        await screen.mount(TourCaption(text, id="tour-caption"))

    # The stops -------------------------------------------------------------------------------
    async def _back_to_browse(self) -> None:
        while not isinstance(self.app.screen, BrowseScreen) and len(self.app.screen_stack) > 1:
            await self.app.pop_screen()

    async def _push(self, screen: S) -> S:
        await self.app.push_screen(screen)
        await until(lambda: mounted(screen), "the screen to open")
        return screen

    async def _sample_screen(self) -> SampleScreen:
        from cruxtui.tui.screens.sample_screen import SampleScreen

        return await self._push(SampleScreen(self.state, self.tour.sample))

    async def _stop_browse(self) -> None:
        from cruxtui.tui.widgets.sample_table import SampleTable

        if self.tour.from_benchmark:  # the cursor on the row the tour follows
            table = self.app.screen.query_one(SampleTable)
            await until(lambda: table.row_count, "the table")
            if self.tour.sample.id in table.keys:
                table.move_cursor(table.keys.index(self.tour.sample.id))

    async def _stop_failure(self) -> None:
        from cruxtui.core.models.backend import ModelSpec
        from cruxtui.core.models.recorded import ReplayBackend
        from cruxtui.tui.widgets.run_panel import RunForm, RunPanel

        screen = await self._sample_screen()
        screen.action_run_panel()
        panel = await until(lambda: _first(screen.query(RunPanel)), "the run panel")
        await until(lambda: mounted(panel), "the run panel's form")
        case, tour = self.tour.case, self.tour
        backend = ReplayBackend(
            {tour.sample.id: tour.answers},
            spec=ModelSpec("replay", tour.model, api=case.model.api, path=str(case.path)),
        )
        form = RunForm(
            endpoint="replay",
            model=tour.model,
            task=case.task,
            mode=case.mode,
            n=str(len(tour.answers)),
            temperature=str(case.sampling.temperature),
            seed="",
        )
        panel.start(form, backend=backend)
        run = panel.current_run
        if run is not None:
            await asyncio.wait_for(run.wait(), READY_TIMEOUT)
        stream = panel.query_one("#run-stream")
        stream.focus()  # the answers, not the form, have the keys
        # From the first answer, after the stream's own scrolling to the newest has run.
        stream.call_after_refresh(stream.scroll_home, animate=False)

    async def _stop_trace(self) -> None:
        from cruxtui.tui.screens.trace_screen import TraceScreen
        from cruxtui.tui.widgets.reasoning_view import ReasoningView

        await self._sample_screen()
        screen = await self._push(TraceScreen(self.state, self.tour.sample))
        await until(lambda: screen.trace is not None, "the trace")
        view = screen.show_reasoning(self.tour.reasoning, f"{self.tour.model}'s answer")
        if view is None:
            raise TimeoutError("the trace has no steps to align the answer with")
        await until(
            lambda: _aligned(view) and view.query(".reasoning-step"),
            "the answer to be aligned with the trace",
        )
        assert isinstance(view, ReasoningView)
        view.action_first_divergence()

    async def _stop_perturb(self) -> None:
        from textual.widgets import Input, Select

        from cruxtui.tui.screens.perturb_screen import PerturbScreen

        await self._sample_screen()
        screen = await self._push(PerturbScreen(self.state, self.tour.sample))
        name, params = PERTURBATION
        screen.query_one("#perturb-transform", Select).value = name
        await until(lambda: not screen.query_one("#perturb-params", Input).value, "the form")
        # Left as the step being picked (not added): the preview shows it with its new truth.
        screen.query_one("#perturb-params", Input).value = params
        await until(lambda: screen.variant is not None and not screen.previewing, "the variant")

    async def _stop_gallery(self) -> None:
        from textual.widgets import DataTable

        from cruxtui.tui.screens.cases_screen import CasesScreen

        screen = await self._push(CasesScreen(self.state))
        names = [c.sample_id for c in screen.shown]
        if self.tour.case.sample_id not in names:
            raise TimeoutError(f"{self.tour.case.sample_id} is not in this gallery")
        table = screen.query_one("#cases-table", DataTable)
        table.move_cursor(row=names.index(self.tour.case.sample_id))
        # The row's highlight shows the case (and clears a replay): let it land first.
        await processed(table, screen)
        screen.action_replay()
        await until(lambda: screen.last_replay is not None, "the replay")
        await scrolled_to_end(screen.query_one("#case-detail"))  # the replay's verdict


def _first(results: DOMQuery[W]) -> W | None:
    """The first of a query's results, or None."""
    return results.first() if results else None


async def processed(*nodes: Widget) -> None:
    """Wait until each of `nodes`, in turn, has handled every message already queued for it (and
    so what it bubbled on to the next)."""
    for node in nodes:
        done = asyncio.Event()
        node.call_later(done.set)
        await done.wait()


async def scrolled_to_end(widget: Widget, settle: int = 3) -> None:
    """Scroll `widget` to its end and keep it there until its height has stopped growing (text
    that just arrived is laid out over the next refreshes)."""
    steady, height = 0, -1
    deadline = time.monotonic() + READY_TIMEOUT
    while steady < settle and time.monotonic() < deadline:
        widget.scroll_end(animate=False, immediate=True)
        steady = steady + 1 if widget.max_scroll_y == height else 0
        height = widget.max_scroll_y
        await asyncio.sleep(0.05)


def mounted(node: Widget) -> bool:
    """`node` and everything in it so far is mounted (a form's values can be set)."""
    return node.is_mounted and all(child.is_mounted for child in node.query("*"))


def _aligned(view: object) -> bool:
    return getattr(view, "alignment", None) is not None


async def until(condition: Callable[[], T | None], what: str, timeout: float = READY_TIMEOUT) -> T:
    """Wait (yielding to the app) until `condition()` is truthy; its value. TimeoutError names
    `what` was awaited."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        await asyncio.sleep(0.02)
    return value
