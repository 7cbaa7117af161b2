"""Child process of bench_startup.py: import, load, compose the Browse screen, paint, then exit.

It prints one line, `painted <rows>`, as soon as the Browse table with all rows has been
rendered, so the parent can time process start to first paint from the outside.
"""

from __future__ import annotations

import sys


def main() -> None:
    from cruxtui.core.data.dataset import load_dataset
    from cruxtui.tui.app import CruxApp
    from cruxtui.tui.widgets.sample_table import SampleTable

    app = CruxApp(load_dataset(sys.argv[1] if len(sys.argv) > 1 else None, offline=True))

    async def auto_pilot(pilot) -> None:  # runs once the app is up
        await pilot.pause()
        rows = pilot.app.screen.query_one(SampleTable).row_count
        print(f"painted {rows}", flush=True)
        pilot.app.exit()

    app.run(headless=True, size=(110, 34), auto_pilot=auto_pilot)


if __name__ == "__main__":
    main()
