"""`cruxtui serve` in a real browser: Playwright drives headless Chromium (Debian's package, which
.ci/run installs) on the served page, waits for the app to render, sends keys, and reads what
the terminal shows as text (xterm.js's buffer, not pixels).

Without Chromium the test is skipped on a developer's machine and fails in CI (CI=true), where
.ci/run must have installed it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cruxtui.testing.served import (
    ServedTui,
    chromium_path,
    launch_chromium,
    open_tab,
    terminal_text,
    wait_for_text,
)

playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if chromium_path() is None:
        message = "Chromium not installed (apt-get install chromium, or set $CRUXTUI_CHROMIUM)"
        if os.environ.get("CI"):
            pytest.fail(message + ": .ci/run installs it")
        pytest.skip(message)
    with playwright_api.sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


def test_the_served_tui_renders_and_answers_keys(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with ServedTui("--offline", "--no-step-counts") as served:
        started = time.perf_counter()
        page = open_tab(browser, served.url)
        # The Browse screen of the starter set, as a person sees it.
        first = wait_for_text(page, "starter_0", "40 of 40 shown")
        print(f"first screen in the browser after {time.perf_counter() - started:.2f} s")
        assert "cruxtui" in first and "starter_39" not in first  # a screenful, not all rows

        page.focus(".xterm-helper-textarea")  # where xterm.js takes the keyboard
        # One key at a time, each awaited on screen, as a person types (keys typed faster than
        # the app handles them may reach a widget before an earlier key has moved the focus).
        page.keyboard.press("o")  # sort by the next column
        resorted = wait_for_text(page, "sort: code", absent="sort: id")
        assert resorted != first

        page.keyboard.press("Enter")  # open the selected row (the cursor stayed on starter_0)
        sample = wait_for_text(page, "def f(text, ch):", "'programmer', 'm'")
        assert "of 40 shown" not in sample  # the Sample screen, not Browse
        page.keyboard.press("]")  # the next sample of the list, in code order
        wait_for_text(page, "def f(s, k):", "'rotation', 3", absent="def f(text, ch):")

        shot = tmp_path / "browser.png"
        page.screenshot(path=str(shot))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000

        page.keyboard.press("Escape")
        back = wait_for_text(page, "40 of 40 shown", "sort: code", absent="def f(")
        assert back.index("starter_2 ") < back.index("starter_0 ")  # still in code order

        # The tab is its own app: a second tab starts at the beginning, unaffected.
        other = open_tab(browser, served.url)
        assert "40 of 40 shown" in wait_for_text(other, "starter_0", "40 of 40 shown")
        assert "sort: code" in terminal_text(page) and "sort: id" in terminal_text(other)
        other.close()
        page.close()
    assert "Traceback" not in served.output, served.output


def test_the_tour_in_the_browser_moves_with_a_clickers_keys(browser) -> None:  # type: ignore[no-untyped-def]
    """PageDown / PageUp (what a presenter's clicker sends) and F2 reach the tour through xterm.js."""
    with ServedTui("--demo", "--no-step-counts") as served:
        page = open_tab(browser, served.url)
        wait_for_text(page, "Tour 1/5 · The benchmark", "starter functions")
        page.focus(".xterm-helper-textarea")
        page.keyboard.press("PageDown")
        # The replayed answers' cards render a moment after the summary line: wait for them too.
        failure = wait_for_text(
            page, "Tour 2/5 · A real failure", "10/10 new · pass@1 0%", "sample_12", "WRONG"
        )
        assert "sample_12" in failure and "WRONG" in failure
        page.keyboard.press("PageUp")
        wait_for_text(page, "Tour 1/5", absent="Tour 2/5")
        page.keyboard.press("F2")  # explore: the caption goes, the footer offers to resume
        wait_for_text(page, "Resume tour", absent="Tour 1/5")
        page.keyboard.press("F2")
        wait_for_text(page, "Tour 1/5", "Explore")
        page.close()
    assert "Traceback" not in served.output, served.output
