"""The README's table of keys is what the screens' bindings say, and what F1 shows on each screen:
one source (the `BINDINGS`), a generator (`python -m cruxtui.tui.keys_doc`), and this check."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, wait_for

from cruxtui.core.data.dataset import Dataset
from cruxtui.tui.app import CruxApp
from cruxtui.tui.keys_doc import KEYS_BEGIN, KEYS_END, main, sections
from cruxtui.tui.screens.help_screen import HelpScreen

README = REPO / "README.md"


def readme_rows() -> dict[str, set[str]]:
    """The README's table: screen -> its entries (`` `o` Sort ``), as written there."""
    text = README.read_text(encoding="utf-8")
    body = text[text.index(KEYS_BEGIN) + len(KEYS_BEGIN) : text.index(KEYS_END)]
    rows = {}
    for line in body.strip().splitlines()[2:]:
        screen, keys = line.strip("|").split("|")
        rows[screen.strip()] = {k.strip() for k in keys.split(" · ")}
    return rows


def test_readme_table_is_what_the_bindings_say() -> None:
    assert main(["--check"]) == 0, "run python -m cruxtui.tui.keys_doc"
    names = [name for name, _ in sections()]
    assert list(readme_rows()) == names
    assert {"Browse", "Sample", "Trace", "Perturb", "Runs", "Cases", "Insights"} <= set(names)


def test_check_fails_on_a_stale_table_and_the_generator_mends_it(tmp_path: Path) -> None:
    copy = tmp_path / "README.md"
    good = README.read_text(encoding="utf-8")
    copy.write_text(good.replace("`t` Trace", "`x` Trace", 1), encoding="utf-8")
    assert good != copy.read_text(encoding="utf-8")
    check = [sys.executable, "-m", "cruxtui.tui.keys_doc", "--check", str(copy)]
    stale = subprocess.run(check, capture_output=True, text=True, timeout=60, check=False)
    assert stale.returncode == 1 and "differs" in stale.stderr
    subprocess.run(check[:3] + [str(copy)], timeout=60, check=True)
    assert copy.read_text(encoding="utf-8") == good
    assert subprocess.run(check, timeout=60, check=False).returncode == 0


def help_entries(screen: HelpScreen) -> dict[str, set[str]]:
    """The help's key lists: heading -> entries written as in the README (`` `o` Sort ``)."""
    found: dict[str, set[str]] = {}
    heading = ""
    for line in screen.keys_text().splitlines():
        if line.startswith("## "):
            heading = line[3:].removeprefix("Keys: ")
            found[heading] = set()
        elif line.startswith("- "):
            keys, _, does = line[2:].rpartition("`: ")
            found[heading].add(f"{keys}` {does}")
    return found


@pytest.mark.parametrize(
    ("name", "keys"),
    [
        ("Browse", ()),
        ("Sample", ("enter",)),
        ("Trace", ("enter", "t")),
        ("Perturb", ("enter", "p")),
        ("Runs", ("R",)),
        ("Cases", ("C",)),
    ],
)
async def test_f1_lists_what_the_readme_says(
    official: Dataset, name: str, keys: tuple[str, ...]
) -> None:
    expected = readme_rows()
    app = CruxApp(official)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for key in keys:
            before = app.screen
            await pilot.press(key)
            await wait_for(
                pilot, lambda b=before: app.screen is not b, what=f"the screen after {key}"
            )
        under = type(app.screen)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen) and help_screen.under is under
        shown = help_entries(help_screen)
    assert shown["Keys on this screen"] == expected[name]
    assert shown["Everywhere"] == expected["Everywhere"]
    assert re.search(r"\bF1\b", " ".join(expected["Everywhere"]))
