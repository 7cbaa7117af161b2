"""Every menu (Select) of the app opens with its first entry in view whenever the whole menu fits
on the screen, and always with the chosen entry in view: Perturb's transform menu opened scrolled
down to its chosen last entry, its first one hidden (Textual's 12-line menus, an entry wrapping)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from conftest import REPO, wait_for
from textual.pilot import Pilot
from textual.widgets import Select
from textual.widgets._select import SelectOverlay

from cruxtui.core.data.dataset import Dataset
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.cases_screen import CasesScreen
from cruxtui.tui.screens.insights_screen import InsightsScreen
from cruxtui.tui.screens.perturb_screen import PerturbScreen
from cruxtui.tui.screens.sample_screen import SampleScreen
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.widgets.run_panel import RunPanel

Opener = Callable[[Pilot[int]], Awaitable[None]]


async def _browse(pilot: Pilot[int]) -> None:
    await pilot.pause()


async def _sample_run_panel(pilot: Pilot[int]) -> None:
    app = pilot.app
    assert isinstance(app, CruxApp)
    app.open_sample("sample_12")
    await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
    await pilot.press("r")
    await wait_for(pilot, lambda: bool(app.screen.query("#run-task")), what="the run panel")
    assert app.screen.query(RunPanel)


async def _perturb(pilot: Pilot[int]) -> None:
    app = pilot.app
    assert isinstance(app, CruxApp)
    app.open_sample("sample_12")
    await wait_for(pilot, lambda: isinstance(app.screen, SampleScreen), what="the sample")
    await pilot.press("p")
    await wait_for(pilot, lambda: isinstance(app.screen, PerturbScreen), what="Perturb")


async def _cases(pilot: Pilot[int]) -> None:
    await pilot.press("C")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CasesScreen), what="Cases")
    await wait_for(
        pilot,
        lambda: len(pilot.app.screen.query_one("#cases-tag", Select)._options) > 1,
        what="the cases' tags",
    )


async def _insights(pilot: Pilot[int]) -> None:
    await pilot.press("I")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, InsightsScreen), what="Insights")


OPENERS: dict[str, Opener] = {
    "browse": _browse,
    "run-panel": _sample_run_panel,
    "perturb": _perturb,
    "cases": _cases,
    "insights": _insights,
}


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("where", list(OPENERS))
async def test_every_menu_opens_with_its_first_entry_in_view(
    official: Dataset, where: str, size: tuple[int, int]
) -> None:
    app = CruxApp(official, TuiOptions(cases=str(REPO / "cases")))
    async with app.run_test(size=size) as pilot:
        await OPENERS[where](pilot)
        screen = app.screen
        menus = [s for s in screen.query(Select) if s.display and len(s._options) > 1]
        assert menus, f"no menu on {where}"
        for menu in menus:
            menu.focus()
            await pilot.pause()
            await pilot.press("space")  # (Enter on Perturb's menu adds the step)
            await wait_for(pilot, lambda m=menu: m.expanded, what=f"{menu.id} to open")
            await pilot.pause()
            overlay = menu.query_one(SelectOverlay)
            lines = overlay.virtual_size.height
            seen = overlay.scrollable_content_region.height
            top = round(overlay.scroll_y)
            if lines + 2 <= size[1] * 2 // 3:  # the whole menu fits in two thirds of the screen
                assert top == 0 and seen >= lines, (
                    f"{where}: {menu.id} opened scrolled by {top} ({seen} of {lines} lines shown)"
                )
            if overlay.highlighted is not None:
                line = overlay._index_to_line[overlay.highlighted]
                assert top <= line < top + seen, f"{where}: {menu.id}'s chosen entry is hidden"
            await pilot.press("escape")
            await wait_for(pilot, lambda m=menu: not m.expanded, what=f"{menu.id} to close")
            assert app.screen is screen
