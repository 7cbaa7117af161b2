"""The keys of a screen, read from the `BINDINGS` its classes declare: the one source the help
screen (F1) and the README's key table (`python -m cruxtui.tui.keys_doc`) are both made from, so
neither can list a key that does not exist or miss one that does.

A screen's keys are its own `BINDINGS`, then those of the widgets named in its `KEY_WIDGETS`
(e.g. Browse's table: Enter opens a sample). Bindings of one action are one row (`→` / `l`); a
binding without a description is an alias and is listed only beside a described one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from textual.binding import Binding

_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "colon": ":",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "left": "←",
    "right": "→",
    "up": "↑",
    "down": "↓",
    "space": "Space",
    "escape": "Escape",
    "enter": "Enter",
    "tab": "Tab",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
}


def key_name(key: str) -> str:
    """How a key is written for people: `ctrl+l` -> `Ctrl+L`, `f1` -> `F1`, `left` -> `←`."""
    *mods, base = key.split("+")
    name = _NAMES.get(base)
    if name is None:
        name = base.upper() if len(base) > 1 and base[0] == "f" and base[1:].isdigit() else base
    if mods:
        name = (
            "+".join(m.capitalize() for m in mods)
            + "+"
            + (name.upper() if len(name) == 1 else name)
        )
    return name


TOUR_ACTION = "tour_"
"""The app's actions of the guided tour (`--demo`): listed apart, they act only in the tour."""


def app_sections(app: type) -> list[tuple[str, list[KeyRow]]]:
    """The app's own keys: those of every screen, then the tour's."""
    return [
        ("Everywhere", key_rows([app], tour=False)),
        ("Tour (--demo)", key_rows([app], tour=True)),
    ]


@dataclass(frozen=True)
class KeyRow:
    """One thing a screen does on a key: `keys` (as written for people) and what it does."""

    keys: tuple[str, ...]
    does: str


def _bindings(owner: type) -> list[Binding]:
    """The bindings `owner` and its bases declare, bases first, leaving out those of Textual's
    own classes (Tab to move the focus and the like, the same on every screen)."""
    found = []
    for cls in reversed(owner.__mro__):
        if cls.__module__.split(".")[0] in ("textual", "builtins"):
            continue
        for item in cls.__dict__.get("BINDINGS", ()):
            found.append(item if isinstance(item, Binding) else Binding(*item))
    return found


def key_rows(owners: Iterable[type], tour: bool | None = None) -> list[KeyRow]:
    """The rows for the bindings of `owners`, in the order declared, one per action; `tour`:
    only the guided tour's keys (True), only the others (False), or all (None)."""
    order: list[str] = []
    keys: dict[str, list[str]] = {}
    does: dict[str, str] = {}
    for owner in owners:
        for binding in _bindings(owner):
            if tour is not None and binding.action.startswith(TOUR_ACTION) != tour:
                continue
            action = f"{id(owner)}.{binding.action}"
            if action not in keys:
                order.append(action)
                keys[action] = []
            for key in binding.key.split(","):
                shown = key_name(key.strip())
                if shown not in keys[action]:
                    keys[action].append(shown)
            if binding.description and action not in does:
                does[action] = binding.description
    return [KeyRow(tuple(keys[a]), does[a]) for a in order if a in does]


def screen_owners(screen: type) -> list[type]:
    """Where a screen's keys are declared: the screen, then the widgets it names in `KEY_WIDGETS`."""
    return [screen, *getattr(screen, "KEY_WIDGETS", ())]


def markdown_list(rows: Sequence[KeyRow]) -> str:
    """The rows as a Markdown list (`` - `o`: Sort ``), one line each, for the help screen (its
    Markdown drops a space right after inline code, hence the colon)."""
    return "\n".join(f"- {_entry(row, ': ')}" for row in rows)


def one_line(rows: Sequence[KeyRow]) -> str:
    """The rows on one line (`` `o` Sort · `O` Reverse ``), for the README's table of screens."""
    return " · ".join(_entry(row) for row in rows)


def _entry(row: KeyRow, between: str = " ") -> str:
    return f"{' / '.join(_code(k) for k in row.keys)}{between}{row.does}"


def _code(key: str) -> str:
    return f"`{key}`" if key != "`" else "`` ` ``"
