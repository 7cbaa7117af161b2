"""Palette entries of the Insights screen, and the Browse filter a group sets.

Kept apart from the screen so start-up (the palette providers are registered when the app is
built) does not load the screen's table, plot and slicing code; they load when Insights opens.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from cruxtui.core.insights.dimensions import DIMENSIONS

if TYPE_CHECKING:
    from cruxtui.tui.app import CruxApp

FILTER_PREFIX = "insights: "
"""Browse filters set from Insights are named `insights: <dimension>=<group>`."""


def clear_filter(app: CruxApp) -> None:
    for name in [n for n in app.extra_filters if n.startswith(FILTER_PREFIX)]:
        app.set_filter(name, None)


def open_insights(
    app: CruxApp, source: str | None = None, against: str | None = None, by: str = "method"
) -> None:
    """Push the Insights screen (replacing one already on top)."""
    from cruxtui.tui.screens.insights_screen import InsightsScreen

    if isinstance(app.screen, InsightsScreen):
        app.pop_screen()
    app.push_screen(InsightsScreen(source, against, by))


class InsightsCommands(Provider):
    """Palette: open Insights (by any dimension), clear its Browse filter."""

    @property
    def _app(self) -> CruxApp:
        return self.app  # type: ignore[return-value]

    def _commands(self) -> list[tuple[str, Any, str]]:
        app = self._app
        commands: list[tuple[str, Any, str]] = [
            (
                "Insights: where the model fails",
                partial(open_insights, app),
                "pass@1 with intervals per method, type, lines, numsteps, transform, mode, tag",
            )
        ]
        commands += [
            (f"Insights by {by}", partial(open_insights, app, by=by), f"pass@1 per {by} group")
            for by in DIMENSIONS
        ]
        if any(n.startswith(FILTER_PREFIX) for n in app.extra_filters):
            commands.append(
                ("Clear the insights filter", partial(clear_filter, app), "show every sample")
            )
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
