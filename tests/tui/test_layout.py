"""Layout at the two sizes a new user tries first, 80x24 and 160x48: Browse fits every column at
80 and gives the code column the room at 160; snapshots of Browse, Sample and Trace at both."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import wait_for
from textual.pilot import Pilot

from cruxtui.core.data.dataset import Dataset
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.trace_screen import TraceScreen
from cruxtui.tui.widgets.sample_table import SampleTable

SIZES = {"80x24": (80, 24), "160x48": (160, 48)}


def with_step_counts(official: Dataset) -> CruxApp:
    """The app with a numsteps column (made-up counts: the layout, not the numbers, is tested;
    counting all 800 samples takes seconds)."""
    app = CruxApp(official)
    app.call_later(app._show_step_counts, {s.id: int(s.id.split("_")[1]) for s in official})
    return app


@pytest.mark.parametrize("size", list(SIZES))
async def test_browse_fits_every_column(official: Dataset, size: str) -> None:
    width, height = SIZES[size]
    app = with_step_counts(official)
    async with app.run_test(size=(width, height)) as pilot:
        table = app.screen.query_one(SampleTable)
        await wait_for(pilot, lambda: "numsteps" in [c.key for c in table.columns], what="numsteps")
        keys = [c.key for c in table.columns]
        assert keys[-2:] == ["type", "numsteps"]
        used = sum(c.width + 1 for c in table.columns)
        assert used <= width, f"{used} cells of columns in a {width}-column terminal"
        code = next(c for c in table.columns if c.key == "code")
        assert code.width >= (16 if width == 80 else 80)


def _ready(keys: list[str]) -> Any:
    """Press `keys`, then wait until the numsteps column (Browse) or the trace (Trace) is in."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        table = app.screen.query_one(SampleTable)
        await wait_for(pilot, lambda: "numsteps" in [c.key for c in table.columns], what="numsteps")
        await pilot.press(*keys)
        if "t" in keys:
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, TraceScreen) and app.screen.trace is not None,
                what="the trace",
            )
        await pilot.pause()

    return run_before


SCREENS = {"browse": [], "sample": ["enter"], "trace": ["enter", "t"]}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", list(SCREENS))
def test_layout_snapshots(snap_compare, official: Dataset, screen: str, size: str) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        with_step_counts(official), terminal_size=SIZES[size], run_before=_ready(SCREENS[screen])
    )
