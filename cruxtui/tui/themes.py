"""The presentation theme, and the theme the app remembers between sessions.

A terminal cannot make its text larger, so the presentation theme does what a projector needs
instead: pure black behind near-white text, saturated colours that survive a washed-out beam, and
bold text everywhere (`App.-presentation` in app.tcss). It is registered like Textual's own themes,
so the palette's "Change theme" lists it; `--theme NAME` picks one for a session. A theme chosen in
the app is remembered in the config folder (`cruxtui.core.util.prefs`); one given by `--theme` is
for that session only.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.theme import Theme

from cruxtui.core.util.prefs import load_prefs, save_pref

PRESENTATION = "presentation"

PRESENTATION_THEME = Theme(
    name=PRESENTATION,
    primary="#2F81F7",  # white and red text both stay legible on it, even at 40%
    secondary="#00D7FF",
    accent="#FFD000",
    warning="#FFD000",
    error="#FF4D4D",
    success="#33E070",
    foreground="#FFFFFF",
    background="#000000",
    surface="#0A0A0A",
    panel="#1C1C1C",
    dark=True,
    text_alpha=1.0,  # no see-through text: full contrast
    variables={
        "footer-key-foreground": "#FFD000",
        "block-cursor-text-style": "bold",
        "block-cursor-foreground": "#000000",
        "block-cursor-background": "#FFD000",
        "input-selection-background": "#FFD000 40%",
    },
)


class UnknownTheme(ValueError):
    """`--theme` names no theme the app has."""


def install(app: App[Any], chosen: str | None) -> str | None:
    """Register the presentation theme and apply `chosen` (`--theme`), else the remembered one.

    Returns a problem to tell the user (an unreadable or stale remembered theme), or None.
    Raises UnknownTheme for a `chosen` name the app does not have.
    """
    app.register_theme(PRESENTATION_THEME)
    problem = None
    if chosen is not None:
        if chosen not in app.available_themes:
            names = ", ".join(sorted(app.available_themes))
            raise UnknownTheme(f"unknown theme {chosen!r} (one of: {names})")
        app.theme = chosen
    else:
        prefs, problem = load_prefs()
        remembered = prefs.get("theme")
        if remembered in app.available_themes:
            app.theme = remembered
        elif remembered:
            problem = f"the remembered theme {remembered!r} is not available"
    mark_presentation(app)
    return problem


def remember_changes(app: App[Any]) -> None:
    """From now on (the app is running), remember every change of theme in the config."""
    initial = [app.theme]  # the theme applied at start-up is no change worth remembering

    def changed(theme: Theme) -> None:
        mark_presentation(app)
        if initial and theme.name == initial[0]:
            return
        initial.clear()
        try:
            save_pref("theme", theme.name)
        except OSError as exc:
            app.notify(f"Could not remember the theme: {exc}", severity="warning")

    app.theme_changed_signal.subscribe(app, changed)


def mark_presentation(app: App[Any]) -> None:
    """The app.tcss rules of the presentation theme (bold text) follow this class."""
    app.set_class(app.theme == PRESENTATION, "-presentation")
