"""The TUI's messages: requests that bubble up to the app, what the app tells the screens, and
the results of background work.

Textual's rule holds here: state goes down (the app hands `AppState` to the screens it builds),
messages go up. A screen or widget that wants another screen to change asks the app with one of
the requests below; the app updates the state and posts `BrowseChanged` to its screens. Workers
post their result as a message to the node that started them (thread workers may: posting is
thread-safe), never a callback; a failed worker ends as `TaskFailed` at the app, which shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message
from textual.widget import Widget

from cruxtui.core.data.dataset import Sample
from cruxtui.tui.columns import Column

if TYPE_CHECKING:
    from cruxtui.core.insights.slices import Slice
    from cruxtui.core.perturb import Rejection, TransformSpec, Variant
    from cruxtui.core.reasoning.alignment import Alignment
    from cruxtui.core.scoring.scored_file import ScoredSet
    from cruxtui.core.trace.steps import Step, Trace


# Requests to the app -------------------------------------------------------------------------
class OpenSample(Message):
    """Show a sample (or a variant made on the Perturb screen) on the Sample screen."""

    def __init__(self, sample_id: str) -> None:
        super().__init__()
        self.sample_id = sample_id


class OpenInsights(Message):
    """Show the Insights screen: slices of `source` (the scored set, a run id, or None for the
    scored set else the newest run) by `by`, against the run `against` if given."""

    def __init__(self, source: str | None = None, against: str | None = None, by: str = "") -> None:
        super().__init__()
        self.source = source
        self.against = against
        self.by = by


class SetColumn(Message):
    """Add or replace a Browse column, or (with `column=None`) remove the one keyed `key`."""

    def __init__(self, column: Column | None, key: str = "") -> None:
        super().__init__()
        self.column = column
        self.key = column.key if column is not None else key


class SetFilter(Message):
    """Add or replace a named Browse row filter, or (with `predicate=None`) remove it."""

    def __init__(self, name: str, predicate: Callable[[Sample], bool] | None) -> None:
        super().__init__()
        self.name = name
        self.predicate = predicate


class CountSteps(Message):
    """Count every sample's numsteps in the background (then the Browse column appears)."""


class FilterSteps(Message):
    """Keep only samples whose numsteps compares `op` to `bound` (counting first if needed)."""

    def __init__(self, op: str, bound: int) -> None:
        super().__init__()
        self.op = op
        self.bound = bound


class ClearStepFilter(Message):
    """Drop the numsteps filter: every sample shows again."""


class TaskFailed(Message):
    """A background task failed: the app shows `error` under `title` on the error screen."""

    def __init__(self, title: str, error: BaseException | str) -> None:
        super().__init__()
        self.title = title
        self.error = error


# From the app to its screens ----------------------------------------------------------------
class BrowseChanged(Message, bubble=False):
    """Browse columns, filters or the scored set changed: screens showing them redraw."""


# Worker results --------------------------------------------------------------------------------
class ScoredSetReady(Message):
    """The generations file named at start-up (or loaded later) is judged."""

    def __init__(self, scored: ScoredSet, path: str) -> None:
        super().__init__()
        self.scored = scored
        self.path = path


class StepCountsReady(Message):
    """Every sample's numsteps is known; `then` is the filter that asked for the counting."""

    def __init__(self, counts: dict[str, int], then: FilterSteps | None = None) -> None:
        super().__init__()
        self.counts = counts
        self.then = then


class SliceReady(Message):
    """The Insights screen's slice is computed, or (`problem`) could not be."""

    def __init__(self, slice_: Slice | None, problem: str = "") -> None:
        super().__init__()
        self.slice = slice_
        self.problem = problem


class TraceReady(Message):
    """A trace the Trace screen asked for is done."""

    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace


class PreviewReady(Message):
    """The Perturb screen's preview of `specs` is built and verified."""

    def __init__(self, specs: list[TransformSpec], result: Variant | Rejection | str) -> None:
        super().__init__()
        self.specs = specs
        self.result = result


class AlignmentReady(Message):
    """A reasoning pane's chain of thought is aligned with a trace (`control`: the pane)."""

    def __init__(self, view: Widget, alignment: Alignment) -> None:
        super().__init__()
        self.view = view
        self.alignment = alignment

    @property
    def control(self) -> Widget:
        return self.view


# The Trace screen and its panes ---------------------------------------------------------------
class StepChanged(Message):
    """The Trace screen's current step changed (sent to every pane added with `add_pane`)."""

    def __init__(self, trace: Trace, index: int) -> None:
        super().__init__()
        self.trace = trace
        self.index = index

    @property
    def step(self) -> Step:
        return self.trace.steps[self.index]


class GotoStep(Message):
    """A pane asks the Trace screen to make step `index` current."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index
