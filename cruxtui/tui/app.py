"""CruxApp: the Textual application. It owns the `AppState` (the open dataset, the options, what
features add to Browse, the scored set, step counts, variants, the run store), hands it to each
screen it builds, and is the one writer of its shared fields: screens ask by message
(`cruxtui.tui.messages`), the app updates the state and tells the screens (`BrowseChanged`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.worker import get_current_worker

from cruxtui.core.data.dataset import Dataset, Sample, Source
from cruxtui.core.sandbox.pool import Sandbox
from cruxtui.core.trace import numsteps
from cruxtui.tui import scored_set, step_counts, textual_fixes, themes
from cruxtui.tui.columns import Column
from cruxtui.tui.insights_commands import InsightsCommands
from cruxtui.tui.messages import (
    BrowseChanged,
    ClearStepFilter,
    CountSteps,
    FilterSteps,
    OpenInsights,
    OpenSample,
    ScoredSetReady,
    SetColumn,
    SetFilter,
    StepCountsReady,
    TaskFailed,
)
from cruxtui.tui.palette import SampleCommands
from cruxtui.tui.screens.browse_screen import BrowseScreen
from cruxtui.tui.screens.error_screen import ErrorScreen
from cruxtui.tui.state import AppState, TuiOptions
from cruxtui.tui.step_counts import StepCommands
from cruxtui.tui.workers import ReportsTaskErrors, app_sandbox

if TYPE_CHECKING:
    from cruxtui.tui.tour_driver import TourDriver


def demo_options(options: TuiOptions) -> TuiOptions:
    """The tour works in a scratch gallery (a fresh copy of the example cases) and a scratch run
    store unless --cases / --store say otherwise: a demo never writes into the shipped gallery
    or the user's runs, and every demo starts the same."""
    from dataclasses import replace

    from cruxtui.core.demo.tour import scratch_gallery

    cases = options.cases or str(scratch_gallery())
    store = options.store or str(Path(cases).parent / "runs.sqlite")
    return replace(options, cases=cases, store=store)


textual_fixes.apply()


class CruxApp(ReportsTaskErrors, App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses elsewhere find it
    TITLE = "cruxtui"
    COMMANDS = App.COMMANDS | {StepCommands, SampleCommands, InsightsCommands}
    BINDINGS = [
        Binding("f1,question_mark", "help", "Help", id="help"),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True, show=False),
        # q quits from any screen (a text field takes it as a letter; Help closes on it).
        Binding("q", "quit", "Quit", id="quit.q", show=False),
        Binding("R", "runs", "Runs", id="runs"),
        Binding("C", "cases", "Cases", id="cases"),
        # The guided tour (--demo); shown and active only while it runs. PageDown/PageUp are
        # what a presenter's clicker sends; priority, so no table or pane scrolls instead.
        Binding("pagedown", "tour_next", "Next stop", id="tour.next", priority=True),
        Binding("pageup", "tour_prev", "Prev stop", id="tour.prev", priority=True),
        Binding("f2", "tour_leave", "Explore", id="tour.leave"),
        Binding("f2", "tour_resume", "Resume tour", id="tour.resume"),
    ]

    def __init__(self, dataset: Dataset, options: TuiOptions | None = None) -> None:
        super().__init__()
        options = options or TuiOptions()
        if options.demo:
            options = demo_options(options)
        self.state = AppState(dataset, options)
        self.sub_title = dataset.description
        self.tour: TourDriver | None = None
        """The guided tour, when --demo started one."""
        self._theme_problem = themes.install(self, options.theme)  # UnknownTheme for --theme

    def on_mount(self) -> None:
        self.push_screen(BrowseScreen(self.state))
        self.call_after_refresh(self._start_step_counts)  # the dataset digest costs ~10 ms
        if self.state.options.generations:  # judged in a worker
            options = self.state.options
            self.call_after_refresh(self.load_generations, options.generations, options.task)
        dataset = self.state.dataset
        if self.state.options.demo:
            self._start_tour()
        elif dataset.source is Source.STARTER:
            self.notify(dataset.notice, title="Starter set", severity="warning", timeout=15)
        elif dataset.notice:
            self.notify(dataset.notice, timeout=10)
        themes.remember_changes(self)
        if self._theme_problem:
            self.notify(self._theme_problem, title="Theme", severity="warning")

    # The guided tour (--demo) ----------------------------------------------------------------
    def _start_tour(self) -> None:
        from cruxtui.core.demo.tour import TourUnavailable, build_tour
        from cruxtui.tui.tour_driver import TourDriver

        try:
            tour = build_tour(self.state.dataset, self.state.options.generations)
        except TourUnavailable as exc:
            self.notify(str(exc), title="No tour", severity="error", timeout=15)
            return
        self.tour = TourDriver(self, tour)
        self.call_after_refresh(self.tour.go, 0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        tour = self.tour
        if action == "tour_next":
            return tour is not None and tour.active and tour.index < tour.stop_count - 1
        if action == "tour_prev":
            return tour is not None and tour.active and tour.index > 0
        if action == "tour_leave":
            return tour is not None and tour.active
        if action == "tour_resume":
            return self.tour is not None and not self.tour.active
        return True

    def action_tour_next(self) -> None:
        if self.tour is not None:
            self.tour.go(self.tour.index + 1)

    def action_tour_prev(self) -> None:
        if self.tour is not None:
            self.tour.go(self.tour.index - 1)

    def action_tour_leave(self) -> None:
        if self.tour is not None:
            self.tour.leave()

    def action_tour_resume(self) -> None:
        if self.tour is not None:
            self.tour.resume()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification is plain text: messages quote errors, typed calls and model output,
        in which `[...]` must show as written, never be read (or fail) as Rich markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    # Browse columns and filters --------------------------------------------------------------
    def set_column(self, column: Column | None, key: str = "") -> None:
        """Add or replace a Browse column (or remove it with `column=None, key=...`)."""
        if column is None:
            self.state.columns.pop(key, None)
        else:
            self.state.columns[column.key] = column
        self._browse_changed()

    def set_filter(self, name: str, predicate: Callable[[Sample], bool] | None) -> None:
        """Add, replace or (with None) remove a named Browse row filter."""
        if predicate is None:
            self.state.filters.pop(name, None)
        else:
            self.state.filters[name] = predicate
        self._browse_changed()

    def _browse_changed(self) -> None:
        for screen in self.screen_stack:
            screen.post_message(BrowseChanged())

    @on(SetColumn)
    def _set_column(self, message: SetColumn) -> None:
        self.set_column(message.column, message.key)

    @on(SetFilter)
    def _set_filter(self, message: SetFilter) -> None:
        self.set_filter(message.name, message.predicate)

    # Scored generations (--generations) ------------------------------------------------------
    def load_generations(self, path: str, task: str) -> None:
        """Read and judge `path` in a thread worker; Browse and the Sample screen show it."""
        name = Path(path).name
        self.notify(f"Scoring {name} ({task} task)…", timeout=4)
        self.run_worker(
            partial(self._score, path, task, app_sandbox()),
            thread=True,
            name=f"Scoring {name}",
            group=scored_set.KEY,
            exclusive=True,
            exit_on_error=False,
        )

    def _score(self, path: str, task: str, sandbox: Sandbox) -> None:
        scored = scored_set.score_file(self.state.dataset, path, task, sandbox)
        if not get_current_worker().is_cancelled:
            self.post_message(ScoredSetReady(scored, path))

    def on_scored_set_ready(self, message: ScoredSetReady) -> None:
        scored = message.scored
        self.state.scored, self.state.scored_path = scored, Path(message.path)
        self.set_column(scored_set.pass_column(scored))
        if scored_set.FILTER in self.state.filters:
            self.set_filter(scored_set.FILTER, scored_set.failing(scored))
        name = Path(message.path).name
        self.notify(scored_set.summary(scored, name), title="Scored", timeout=8)

    # Step counts (numsteps) ------------------------------------------------------------------
    def _start_step_counts(self) -> None:
        """On start-up: show cached counts now; otherwise count in a worker if the options say so."""
        cached = numsteps.load_cached(self.state.dataset)
        if cached is not None:
            self._show_step_counts(cached)
        elif self.state.options.step_counts:
            self.count_steps()

    def count_steps(self, then: FilterSteps | None = None) -> None:
        """Count every sample's steps in a thread worker, then add the column (and `then`)."""
        self._count(app_sandbox(), then)

    @work(
        thread=True,
        name="Counting steps",
        group=step_counts.KEY,
        exclusive=True,
        exit_on_error=False,
    )
    def _count(self, sandbox: Sandbox, then: FilterSteps | None) -> None:
        worker = get_current_worker()
        counts = numsteps.load_or_count(
            self.state.dataset, sandbox=sandbox, progress=lambda done: not worker.is_cancelled
        )
        if counts is not None and not worker.is_cancelled:
            self.post_message(StepCountsReady(counts, then))

    def on_step_counts_ready(self, message: StepCountsReady) -> None:
        self._show_step_counts(message.counts)
        if message.then is not None:
            self.filter_steps(message.then.op, message.then.bound)

    def _show_step_counts(self, counts: dict[str, int]) -> None:
        self.state.step_counts = counts
        self.set_column(step_counts.column(counts))

    def filter_steps(self, op: str, bound: int) -> None:
        """Keep only samples whose numsteps compares `op` to `bound` (counting first if needed)."""
        counts = self.state.step_counts
        if counts is None:
            self.notify("Counting steps for every sample first…", timeout=4)
            self.count_steps(then=FilterSteps(op, bound))
            return
        self.clear_step_filter()  # one numsteps filter at a time: a new bound replaces the old one
        self.set_filter(*step_counts.step_filter(counts, op, bound))

    def clear_step_filter(self) -> None:
        for name in step_counts.filter_names(self.state):
            self.set_filter(name, None)

    def on_count_steps(self, message: CountSteps) -> None:
        self.count_steps()

    def on_filter_steps(self, message: FilterSteps) -> None:
        self.filter_steps(message.op, message.bound)

    def on_clear_step_filter(self, message: ClearStepFilter) -> None:
        self.clear_step_filter()

    # Errors ----------------------------------------------------------------------------------
    def on_task_failed(self, message: TaskFailed) -> None:
        """The one place a failed background task is shown: in words, on the error screen."""
        self.show_error(message.title, message.error)

    def show_error(self, title: str, error: BaseException | str) -> None:
        text = error if isinstance(error, str) else (str(error) or type(error).__name__)
        self.push_screen(ErrorScreen(title, text))

    # Navigation ------------------------------------------------------------------------------
    # The screens below are imported when first opened, for start-up speed: together they cost
    # about 150 ms of imports (the code editor, Markdown, tables, the run store) the first paint
    # of Browse does not need. None of them imports this module.
    def on_open_sample(self, message: OpenSample) -> None:
        self.open_sample(message.sample_id)

    def open_sample(self, sample_id: str) -> None:
        """Show a sample (from the palette, a run comparison, a case...)."""
        from cruxtui.tui.screens.sample_screen import SampleScreen

        sample = self.state.find_sample(sample_id)
        if sample is None:
            self.notify(f"No sample {sample_id!r} in this dataset.", severity="error")
            return
        self.push_screen(SampleScreen(self.state, sample))

    def action_runs(self) -> None:
        """The Runs screen: stored model runs, comparisons, run columns for Browse."""
        from cruxtui.tui.screens.runs_screen import RunsScreen

        if not isinstance(self.screen, RunsScreen):
            self.push_screen(RunsScreen(self.state))

    def action_cases(self) -> None:
        """The Cases screen: the saved failures of the gallery folder."""
        from cruxtui.tui.screens.cases_screen import CasesScreen

        if not isinstance(self.screen, CasesScreen):
            self.push_screen(CasesScreen(self.state))

    def action_insights(self) -> None:
        """Insights on the scored set (else the newest run): where the model fails."""
        self.open_insights()

    def on_open_insights(self, message: OpenInsights) -> None:
        self.open_insights(message.source, message.against, message.by or "method")

    def open_insights(
        self, source: str | None = None, against: str | None = None, by: str = "method"
    ) -> None:
        """The Insights screen (replacing one already on top, so the choice is the new one)."""
        from cruxtui.tui.screens.insights_screen import InsightsScreen

        if isinstance(self.screen, InsightsScreen):
            self.pop_screen()
        self.push_screen(InsightsScreen(self.state, source, against, by))

    def action_help(self) -> None:
        from cruxtui.tui.screens.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(type(self.screen)))
