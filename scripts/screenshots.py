"""Write an SVG screenshot of each screen into screens/, made by the app itself.

Run: `python scripts/screenshots.py` (uses ../shared/data/cruxeval.jsonl or $CRUXTUI_DATASET, else
the starter set). Each entry drives the app with Pilot to the screen it shows; features add theirs
to SHOTS. Screenshots are deterministic (fixed size, no cursor blink, workers awaited).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cruxtui.core.dataset import Dataset, load_dataset  # noqa: E402
from cruxtui.tui.app import CruxApp  # noqa: E402

SIZE = (110, 34)
Drive = Callable[[Pilot], Awaitable[None]]


async def browse(pilot: Pilot) -> None:
    await pilot.pause()


async def browse_search(pilot: Pilot) -> None:
    await pilot.press("slash", *"rfind")
    await pilot.pause()


async def sample(pilot: Pilot) -> None:
    await pilot.press("enter")
    await pilot.pause()


SHOTS: dict[str, Drive] = {
    "browse": browse,
    "browse-search": browse_search,
    "sample": sample,
}


def default_dataset() -> Dataset:
    shared = REPO.parent / "shared" / "data" / "cruxeval.jsonl"
    path = os.environ.get("CRUXTUI_DATASET") or (str(shared) if shared.exists() else None)
    return load_dataset(path, offline=True)


async def shoot(name: str, drive: Drive, out: Path) -> Path:
    app = CruxApp(default_dataset())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await drive(pilot)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        path = out / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
    return path


async def main(names: list[str]) -> None:
    out = REPO / "screens"
    out.mkdir(exist_ok=True)
    for name in names or list(SHOTS):
        print(await shoot(name, SHOTS[name], out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
