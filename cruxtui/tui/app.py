"""CruxApp: the Textual application. It owns the open dataset and what features register on it
(extra Browse columns and filters); screens read that state and stay thin."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.worker import Worker, WorkerState

from cruxtui.core.data.dataset import Dataset, Sample, Source
from cruxtui.tui.columns import Column
from cruxtui.tui.insights_commands import InsightsCommands
from cruxtui.tui.palette import SampleCommands
from cruxtui.tui.scored_set import install as install_scored_set
from cruxtui.tui.step_counts import StepCommands
from cruxtui.tui.step_counts import install as install_step_counts

if TYPE_CHECKING:
    from cruxtui.core.perturb import Variant


class BrowseStateChanged(Message):
    """Columns or filters changed: the Browse screen rebuilds its table."""


class CruxApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "cruxtui"
    COMMANDS = App.COMMANDS | {StepCommands, SampleCommands, InsightsCommands}
    BINDINGS = [
        Binding("f1,question_mark", "help", "Help", id="help"),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True, show=False),
        Binding("R", "runs", "Runs", id="runs"),
        Binding("C", "cases", "Cases", id="cases"),
    ]

    def __init__(self, dataset: Dataset, options: argparse.Namespace | None = None) -> None:
        super().__init__()
        self.dataset = dataset
        self.options = options or argparse.Namespace()
        self.extra_columns: dict[str, Column] = {}
        self.extra_filters: dict[str, Callable[[Sample], bool]] = {}
        """Named row predicates every Browse row must pass (e.g. "failures only")."""
        self.variants: dict[str, Variant] = {}
        """Perturbed samples accepted on the Perturb screen, by id (`sample_12~anon`): `open_sample`
        and `find_sample` resolve them like dataset samples."""
        self.sub_title = dataset.description

    def on_mount(self) -> None:
        from cruxtui.tui.screens.browse_screen import BrowseScreen

        self.push_screen(BrowseScreen())
        self.call_after_refresh(install_step_counts, self)  # the dataset digest costs ~10 ms
        self.call_after_refresh(install_scored_set, self)  # --generations: judged in a worker
        if self.dataset.source is Source.STARTER:
            self.notify(self.dataset.notice, title="Starter set", severity="warning", timeout=15)
        elif self.dataset.notice:
            self.notify(self.dataset.notice, timeout=10)

    # Registry used by features ------------------------------------------------------------
    def set_column(self, column: Column | None, key: str | None = None) -> None:
        """Add or replace a Browse column (or remove it with `column=None, key=...`)."""
        if column is None:
            self.extra_columns.pop(key or "", None)
        else:
            self.extra_columns[column.key] = column
        self._browse_changed()

    def set_filter(self, name: str, predicate: Callable[[Sample], bool] | None) -> None:
        """Add, replace or (with None) remove a named Browse row filter."""
        if predicate is None:
            self.extra_filters.pop(name, None)
        else:
            self.extra_filters[name] = predicate
        self._browse_changed()

    def _browse_changed(self) -> None:
        for screen in self.screen_stack:
            screen.post_message(BrowseStateChanged())

    # Errors --------------------------------------------------------------------------------
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """One place that turns a failed background task into a clear message, not a traceback.

        Workers are started with `exit_on_error=False`; their error arrives here. Core code raises
        exceptions whose text is meant for users (DatasetError, ModelError, ...), so the text is
        shown as is, under the task's name.
        """
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            self.show_error(f"{event.worker.name or 'Background task'} failed", event.worker.error)

    def show_error(self, title: str, error: BaseException | str) -> None:
        from cruxtui.tui.screens.error_screen import ErrorScreen

        text = error if isinstance(error, str) else (str(error) or type(error).__name__)
        self.push_screen(ErrorScreen(title, text))

    # Navigation ----------------------------------------------------------------------------
    def open_sample(self, sample_id: str) -> None:
        """Show a sample (from the palette, a run comparison, a case...)."""
        from cruxtui.tui.screens.sample_screen import SampleScreen

        sample = self.find_sample(sample_id)
        if sample is None:
            self.notify(f"No sample {sample_id!r} in this dataset.", severity="error")
            return
        self.push_screen(SampleScreen(sample))

    def find_sample(self, sample_id: str) -> Sample | None:
        """A dataset sample, or a variant made on the Perturb screen, by id."""
        variant = self.variants.get(sample_id)
        return variant.sample if variant is not None else self.dataset.get(sample_id)

    def action_runs(self) -> None:
        """The Runs screen: stored model runs, comparisons, run columns for Browse."""
        from cruxtui.tui.screens.runs_screen import RunsScreen

        if not isinstance(self.screen, RunsScreen):
            self.push_screen(RunsScreen())

    def action_cases(self) -> None:
        """The Cases screen: the saved failures of the gallery folder."""
        from cruxtui.tui.screens.cases_screen import CasesScreen

        if not isinstance(self.screen, CasesScreen):
            self.push_screen(CasesScreen())

    def action_help(self) -> None:
        from cruxtui.tui.screens.help_screen import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
