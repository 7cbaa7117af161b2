"""The presentation theme: picked in the palette like Textual's own themes or with --theme, and
remembered in the config folder (tui.toml) when changed in the app; a bad or stale file never
stops the app; `--theme` with an unknown name is one clear line."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
from conftest import Note, NotingApp, wait_for

from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.core.util.prefs import load_prefs, prefs_path, save_pref
from cruxtui.tui.app import CruxApp
from cruxtui.tui.state import TuiOptions
from cruxtui.tui.themes import PRESENTATION, UnknownTheme

SIZE = (100, 30)


@pytest.fixture
def starter() -> Dataset:
    return load_dataset(offline=True)


async def test_the_palette_picks_the_presentation_theme_and_it_is_remembered(
    starter: Dataset,
) -> None:
    app = CruxApp(starter)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme != PRESENTATION and not prefs_path().exists()
        await pilot.press("ctrl+p")
        await pilot.press(*"theme")
        await pilot.pause()
        await pilot.press("enter")  # Textual's own "Change theme" lists every registered theme
        await pilot.pause()
        await pilot.press(*PRESENTATION)
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == PRESENTATION, what="the theme")
        await wait_for(pilot, prefs_path().exists, what="the config file")
        assert app.has_class("-presentation")
    assert tomllib.loads(prefs_path().read_text())["theme"] == PRESENTATION

    again = CruxApp(starter)  # the next session starts in it
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == PRESENTATION and again.has_class("-presentation")
        again.theme = "nord"  # and a change away from it is remembered too
        await wait_for(pilot, lambda: load_prefs()[0].get("theme") == "nord", what="nord saved")
        assert not again.has_class("-presentation")


async def test_a_theme_given_on_the_command_line_is_for_that_session(starter: Dataset) -> None:
    save_pref("theme", "nord")
    app = CruxApp(starter, TuiOptions(theme=PRESENTATION))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == PRESENTATION
    assert load_prefs()[0] == {"theme": "nord"}


async def test_a_broken_or_stale_config_file_only_costs_a_notice(starter: Dataset) -> None:
    path = prefs_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('theme = "unclosed\n')
    app = NotingApp(starter)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: theme_notes(app), what="a notice")
        assert app.theme == "textual-dark"
        (note,) = theme_notes(app)
        assert str(path) in note.message and note.severity == "warning"

    path.write_text('theme = "no-such-theme"\n')
    app = NotingApp(starter)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: theme_notes(app), what="a notice")
        assert app.theme == "textual-dark"
        assert "no-such-theme" in theme_notes(app)[0].message


def theme_notes(app: NotingApp) -> list[Note]:
    return [n for n in app.notes if n.title == "Theme"]


def test_an_unknown_theme_is_refused(starter: Dataset) -> None:
    with pytest.raises(UnknownTheme, match="unknown theme 'neon'.*presentation"):
        CruxApp(starter, TuiOptions(theme="neon"))
    proc = subprocess.run(
        [sys.executable, "-m", "cruxtui", "--theme", "neon"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("cruxtui: error: unknown theme 'neon' (one of: ")
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("value", ["presentation", 'a "quoted" \\ name', "é\n\t\x00\x7f😀", ""])
def test_remembered_values_survive_the_file(value: str) -> None:
    save_pref("theme", value)
    assert load_prefs() == ({"theme": value}, None)
    assert prefs_path().read_text().startswith("# Written by cruxtui")


def test_only_known_string_choices_are_read() -> None:
    path = prefs_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('theme = 3\nother = "x"\n')
    assert load_prefs() == ({}, None)
    with pytest.raises(ValueError, match="not a remembered choice"):
        save_pref("other", "x")
