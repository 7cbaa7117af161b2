"""Command line: `cruxtui` opens the TUI; subcommands do the same work headless, for scripts.

argparse (stdlib) keeps start-up fast: each subcommand lives in `cruxtui/cli/<name>_cmd.py`
with `register(subparsers)`, and imports its heavy dependencies only when it runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from cruxtui import __version__
from cruxtui.cli.errors import CliError
from cruxtui.cli.options import add_dataset_option
from cruxtui.cli.redacting_stream import RedactingStream
from cruxtui.core.util import redact
from cruxtui.core.util.hardening import hide_from_command_line, make_non_dumpable

if TYPE_CHECKING:
    from cruxtui.tui.state import TuiOptions

# Subcommand modules `cruxtui.cli.<name>_cmd`; each defines `register(subparsers) -> None`
# and sets `func=` on its parser. Order here is the order in `--help`.
COMMANDS = (
    "samples",
    "download",  # the data
    "score",
    "trace",
    "align",  # judging and explaining
    "run",
    "runs",
    "generations",
    "compare",
    "stats",
    "export",  # live models and stored runs
    "perturb",
    "cases",  # variants and the failure gallery
    "doctor",  # what this machine enforces
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cruxtui",
        description="A terminal failure explorer for CRUXEval. Without a subcommand, opens the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"cruxtui {__version__}")
    add_dataset_option(parser)
    parser.set_defaults(dataset=None, offline=False)
    add_tui_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"cruxtui.cli.{name}_cmd").register(sub)
    return parser


def add_tui_options(parser: argparse.ArgumentParser) -> None:
    """Options of the TUI itself (no subcommand). Later features add theirs here."""
    parser.add_argument(
        "--store",
        metavar="PATH",
        help="run store (SQLite) for model runs; default: runs.sqlite in the user data folder",
    )
    parser.add_argument(
        "--endpoint",
        metavar="NAME_OR_URL",
        help="endpoint (config.toml name or base URL) the run panel starts with",
    )
    parser.add_argument("--model", metavar="NAME", help="model the run panel starts with")
    parser.add_argument(
        "--no-step-counts",
        dest="step_counts",
        action="store_false",
        help="do not count every sample's numsteps in the background at start-up",
    )
    parser.add_argument(
        "--generations",
        metavar="FILE",
        help="score a benchmark generations (or scored) JSON file: Browse gains a pass "
        "column and F (failures only); the Sample screen lists each verdict",
    )
    parser.add_argument(
        "--task",
        choices=("output", "input"),
        default="output",
        help="the task of --generations (default: output)",
    )
    parser.add_argument(
        "--cases",
        metavar="DIR",
        help="gallery folder for saved failure cases (default: $CRUXTUI_CASES_DIR, else ./cases)",
    )


def open_tui(args: argparse.Namespace) -> int:
    from cruxtui.core.data.dataset import DatasetError, load_dataset

    try:
        dataset = load_dataset(args.dataset, offline=args.offline or None)
    except DatasetError as exc:
        raise CliError(str(exc)) from None
    from cruxtui.tui.app import CruxApp

    app = CruxApp(dataset, tui_options(args))
    app.run()
    return app.return_code or 0


def tui_options(args: argparse.Namespace) -> TuiOptions:
    """The TUI's typed options from the flags `add_tui_options` defines (the TUI never reads
    the command line itself)."""
    from cruxtui.tui.state import TuiOptions

    return TuiOptions(
        store=args.store,
        endpoint=args.endpoint,
        model=args.model,
        generations=args.generations,
        task=args.task,
        cases=args.cases,
        step_counts=args.step_counts,
    )


def main(argv: Sequence[str] | None = None) -> int:
    make_non_dumpable()  # keys in this process: no same-uid process may read its /proc files
    parser = build_parser()
    args = parser.parse_args(argv)
    key = getattr(args, "api_key", None)
    if key:
        redact.register(key)
        hide_from_command_line(key)
    func = getattr(args, "func", open_tui)
    if func is open_tui:  # the TUI draws on the terminal itself
        return _run(func, args)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(sys.stdout), RedactingStream(sys.stderr)
    try:
        return _run(func, args)
    finally:
        sys.stdout, sys.stderr = streams


def _run(func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    try:
        return int(func(args) or 0)
    except CliError as exc:
        print(f"cruxtui: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cruxtui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `cruxtui samples | head` closes the pipe early; that is not an error.
        sys.stderr.close()
        return 0
