"""No key sequence may crash the app: random keys (fixed seeds) from every screen, under Pilot.

Keys are sent in bursts straight to the driver, as a terminal delivers them when a user types
fast: the next key arrives before the screen or panel the previous one opened has mounted, which
is where crashes hid (the run panel focused a field that was not there yet). Between bursts the
app settles. Any unhandled exception fails the test (Pilot re-raises it at the end of
`run_test`); a key that quits the app (q on Browse, Ctrl+Q) starts it again from the same screen.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot

from cruxtui.core.data.dataset import Dataset
from cruxtui.tui.app import CruxApp
from cruxtui.tui.state import TuiOptions

SIZE = (100, 30)
KEYS_PER_RUN = 300
SEEDS = (1,)
SAMPLE = "sample_13"

PRINTABLE = list("abcdefghijklmnopqrstuvwxyzCFGOR0123456789 :/[]<>=~_.,?-")
NAMED = [
    "escape", "enter", "tab", "shift+tab", "up", "down", "left", "right", "home", "end",
    "pageup", "pagedown", "backspace", "delete", "space", "f1",
    "ctrl+l", "ctrl+o", "ctrl+t", "ctrl+r", "ctrl+z", "ctrl+s", "ctrl+p", "ctrl+q",
]  # fmt: skip


def key_stream(seed: int, count: int) -> list[str]:
    """`count` keys: mostly typing, with enough navigation and screen keys to move around."""
    rng = random.Random(seed)
    return [rng.choice(PRINTABLE if rng.random() < 0.55 else NAMED) for _ in range(count)]


def _key_event(key: str) -> events.Key:
    if len(key) == 1:
        names = {" ": "space", "[": "left_square_bracket", "]": "right_square_bracket"}
        return events.Key(names.get(key, key), key)
    return events.Key(key, None)


async def _open_sample(app: CruxApp, pilot: Pilot[int]) -> None:
    app.open_sample(SAMPLE)
    await pilot.pause()


async def _open_run_panel(app: CruxApp, pilot: Pilot[int]) -> None:
    await _open_sample(app, pilot)
    await pilot.press("r")


async def _open_trace(app: CruxApp, pilot: Pilot[int]) -> None:
    await _open_sample(app, pilot)
    await pilot.press("t")


async def _open_perturb(app: CruxApp, pilot: Pilot[int]) -> None:
    await _open_sample(app, pilot)
    await pilot.press("p")


async def _browse(app: CruxApp, pilot: Pilot[int]) -> None:
    await pilot.pause()


async def _runs(app: CruxApp, pilot: Pilot[int]) -> None:
    app.action_runs()
    await pilot.pause()


async def _cases(app: CruxApp, pilot: Pilot[int]) -> None:
    app.action_cases()
    await pilot.pause()


async def _help(app: CruxApp, pilot: Pilot[int]) -> None:
    app.action_help()
    await pilot.pause()


START: dict[str, Callable[[CruxApp, Pilot[int]], Awaitable[None]]] = {
    "browse": _browse,
    "sample": _open_sample,
    "trace": _open_trace,
    "perturb": _open_perturb,
    "runs": _runs,
    "cases": _cases,
    "help": _help,
    "run_panel": _open_run_panel,
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("start", list(START))
async def test_random_keys_never_crash(
    official: Dataset,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    start: str,
    seed: int,
) -> None:
    monkeypatch.chdir(tmp_path)  # an export or a saved case lands here, never in the checkout
    options = TuiOptions(store=str(tmp_path / "runs.sqlite"), cases=str(tmp_path / "cases"))
    keys = key_stream(seed * 1000 + list(START).index(start), KEYS_PER_RUN)
    rng = random.Random(seed)
    sent: list[str] = []
    try:
        while keys:
            app = CruxApp(official, options)
            async with app.run_test(size=SIZE) as pilot:
                await START[start](app, pilot)
                while keys and app.is_running:
                    size = rng.randint(1, 8)
                    burst, keys = keys[:size], keys[size:]
                    sent.extend(burst)
                    assert app._driver is not None
                    for key in burst:  # all at once: the app handles them after the burst
                        app._driver.send_message(_key_event(key))
                    await pilot.pause()
    except Exception as exc:  # Pilot re-raises the app's unhandled exception on closing
        raise AssertionError(f"crashed after opening {start}; last keys: {sent[-30:]}") from exc
