"""The `numsteps` Browse column and filter: how much work each sample does, as the benchmark's
filter measured it, so the table can sort by it and the palette can narrow it (`numsteps<100`).

Counting traces all samples in the sandbox (seconds), so it never delays the first paint: cached
counts (per dataset digest) show at once, otherwise the app counts in a worker after start-up when
the options ask for it (`TuiOptions.step_counts`), or when a palette command needs the counts.
This module holds the pieces and the palette provider; `CruxApp` wires them.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.message import Message

from cruxtui.core.data.dataset import Sample
from cruxtui.tui.columns import Column
from cruxtui.tui.messages import ClearStepFilter, CountSteps, FilterSteps
from cruxtui.tui.state import AppState, app_state

KEY = "numsteps"
_QUERY = re.compile(r"^\s*(?:num)?steps\s*(<=|>=|<|>|==|=)\s*(\d+)\s*$", re.IGNORECASE)
_OPS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=": operator.eq,
    "==": operator.eq,
}


def parse(text: str) -> tuple[str, int] | None:
    """`numsteps<100` (or `steps>=50`...) as (op, bound); None if `text` is not such a query.
    The palette and the Browse search box read the same syntax."""
    found = _QUERY.match(text)
    return (found.group(1), int(found.group(2))) if found else None


def column(counts: dict[str, int]) -> Column:
    """The Browse column: each sample's numsteps, sorted with unknown counts first."""
    return Column(
        KEY,
        "numsteps",
        value=lambda s: str(counts[s.id]) if s.id in counts else "",
        sort_key=lambda s: counts.get(s.id, -1),
        width=9,
    )


def step_filter(
    counts: dict[str, int], op: str, bound: int
) -> tuple[str, Callable[[Sample], bool]]:
    """The named Browse filter keeping samples whose numsteps compares `op` to `bound`."""
    compare = _OPS[op]
    return f"{KEY}{op}{bound}", lambda s: s.id in counts and compare(counts[s.id], bound)


def filter_names(state: AppState) -> list[str]:
    """The numsteps filters in place (at most one: a new bound replaces the old one)."""
    return [name for name in state.filters if name.startswith(KEY)]


class StepCommands(Provider):
    """Palette: `numsteps<100` (also `steps>=50`, `=`) filters Browse; counting on demand."""

    def _ask(self, message: Message) -> Callable[[], object]:
        """A command that asks the app (which holds the counts and the filters)."""
        return partial(self.app.post_message, message)

    def _fixed(self) -> list[tuple[str, Callable[[], object], str]]:
        state = app_state(self.app)
        commands: list[tuple[str, Callable[[], object], str]] = []
        if state.step_counts is None:
            commands.append(
                (
                    "Count steps (numsteps) for every sample",
                    self._ask(CountSteps()),
                    "adds a sortable numsteps column to Browse",
                )
            )
        if filter_names(state):
            commands.append(
                (
                    "Clear the numsteps filter",
                    self._ask(ClearStepFilter()),
                    "show every sample again",
                )
            )
        return commands

    async def discover(self) -> Hits:
        for label, command, help_text in self._fixed():
            yield DiscoveryHit(label, command, help=help_text)

    async def search(self, query: str) -> Hits:
        found = parse(query)
        if found:
            op, bound = found
            yield Hit(
                1.0,
                f"Show samples with numsteps {op} {bound}",
                self._ask(FilterSteps(op, bound)),
                help="a Browse filter on the step count",
            )
            return
        matcher = self.matcher(query)
        for label, command, help_text in self._fixed():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), command, help=help_text)
