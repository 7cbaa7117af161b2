"""Write the README's table of keys from the screens' bindings, the source F1 shows them from.

    python -m cruxtui.tui.keys_doc            # rewrite the table between the markers in README.md
    python -m cruxtui.tui.keys_doc --check    # exit 1 (and say so) if the README's table is stale

The table sits between `KEYS_BEGIN` and `KEYS_END`; everything else in the file is kept as is.
A test runs the check, so a key added, removed or renamed in a screen's `BINDINGS` fails until
the README says the same.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cruxtui.tui.key_table import KeyRow, app_sections, key_rows, one_line, screen_owners

KEYS_BEGIN = "<!-- keys: written by `python -m cruxtui.tui.keys_doc` from the screens' bindings -->"
KEYS_END = "<!-- keys: end -->"
README = Path(__file__).resolve().parents[2] / "README.md"


def sections() -> list[tuple[str, list[KeyRow]]]:
    """Each place with keys of its own, in the order a new user meets them, with its keys."""
    from cruxtui.tui.app import CruxApp
    from cruxtui.tui.screens.browse_screen import BrowseScreen
    from cruxtui.tui.screens.case_form_screen import CaseFormScreen
    from cruxtui.tui.screens.cases_screen import CasesScreen
    from cruxtui.tui.screens.insights_screen import InsightsScreen
    from cruxtui.tui.screens.perturb_screen import PerturbScreen
    from cruxtui.tui.screens.runs_screen import RunsScreen
    from cruxtui.tui.screens.sample_screen import SampleScreen
    from cruxtui.tui.screens.trace_screen import TraceScreen
    from cruxtui.tui.widgets.reasoning_view import ReasoningPaste

    screens: list[tuple[str, type]] = [
        ("Browse", BrowseScreen),
        ("Sample", SampleScreen),
        ("Trace", TraceScreen),
        ("Reasoning (paste)", ReasoningPaste),
        ("Perturb", PerturbScreen),
        ("Save case", CaseFormScreen),
        ("Runs", RunsScreen),
        ("Cases", CasesScreen),
        ("Insights", InsightsScreen),
    ]
    everywhere, tour = app_sections(CruxApp)
    own = [(name, key_rows(screen_owners(screen))) for name, screen in screens]
    return [everywhere, *own, tour]


def table() -> str:
    """The README's table: one row per screen, its keys on one line."""
    lines = ["| screen | keys |", "| --- | --- |"]
    lines += [f"| {name} | {one_line(rows)} |" for name, rows in sections()]
    return "\n".join(lines)


def with_table(text: str) -> str:
    """`text` (the README) with the table between the markers replaced by the current one."""
    start, end = text.find(KEYS_BEGIN), text.find(KEYS_END)
    if start < 0 or end < start:
        raise ValueError(f"the markers {KEYS_BEGIN!r} ... {KEYS_END!r} are missing")
    head = text[: start + len(KEYS_BEGIN)]
    return f"{head}\n{table()}\n{text[end:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cruxtui.tui.keys_doc", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the file's table is stale")
    parser.add_argument("path", nargs="?", type=Path, default=README, help="default: README.md")
    args = parser.parse_args(argv)
    text = args.path.read_text(encoding="utf-8")
    try:
        fresh = with_table(text)
    except ValueError as exc:
        print(f"keys_doc: {args.path}: {exc}", file=sys.stderr)
        return 2
    if fresh == text:
        return 0
    if args.check:
        print(
            f"keys_doc: the key table in {args.path} differs from the screens' bindings; "
            "run python -m cruxtui.tui.keys_doc",
            file=sys.stderr,
        )
        return 1
    from cruxtui.core.util.atomic import atomic_write_text

    atomic_write_text(args.path, fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
