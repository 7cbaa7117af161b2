"""Palette entries of the Insights screen, and the name of the Browse filter a group sets.

Kept apart from the screen so start-up (the palette providers are registered when the app is
built) does not load the screen's table, plot and slicing code; they load when Insights opens.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.message import Message

from cruxtui.core.insights.dimensions import DIMENSIONS
from cruxtui.tui.messages import OpenInsights, SetFilter
from cruxtui.tui.state import AppState, app_state

FILTER_PREFIX = "insights: "
"""Browse filters set from Insights are named `insights: <dimension>=<group>`."""


def filter_names(state: AppState) -> list[str]:
    """The Browse filters Insights set (at most one: a new group replaces the old one)."""
    return [name for name in state.filters if name.startswith(FILTER_PREFIX)]


class InsightsCommands(Provider):
    """Palette: open Insights (by any dimension), clear its Browse filter."""

    def _ask(self, *messages: Message) -> Callable[[], None]:
        """A command that asks the app (which opens screens and holds the filters)."""

        def post() -> None:
            for message in messages:
                self.app.post_message(message)

        return post

    def _commands(self) -> list[tuple[str, Callable[[], None], str]]:
        commands = [
            (
                "Insights: where the model fails",
                self._ask(OpenInsights()),
                "pass@1 with intervals per method, type, lines, numsteps, transform, mode, tag",
            )
        ]
        commands += [
            (f"Insights by {by}", self._ask(OpenInsights(by=by)), f"pass@1 per {by} group")
            for by in DIMENSIONS
        ]
        names = filter_names(app_state(self.app))
        if names:
            clear = self._ask(*(SetFilter(name, None) for name in names))
            commands.append(("Clear the insights filter", clear, "show every sample again"))
        return commands

    async def discover(self) -> Hits:
        for label, command, help_text in self._commands():
            if label.startswith("Insights by"):  # found by typing; the list stays short
                continue
            yield DiscoveryHit(label, command, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for label, command, help_text in self._commands():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), command, help=help_text)
