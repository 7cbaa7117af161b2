"""Helpers shared by subcommands: opening the dataset with CLI-friendly errors."""

from __future__ import annotations

import argparse
from typing import TypeAlias

from cruxtui.cli.errors import CliError
from cruxtui.core.data.dataset import Dataset, DatasetError, load_dataset

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What `main.py` hands each subcommand's `register` (argparse's own type, generic for mypy only)."""


def open_dataset(args: argparse.Namespace) -> Dataset:
    """Load the dataset named by `--dataset` / the environment, as a `CliError` on bad input."""
    try:
        return load_dataset(
            getattr(args, "dataset", None), offline=getattr(args, "offline", False) or None
        )
    except DatasetError as exc:
        raise CliError(str(exc)) from None


def add_dataset_option(parser: argparse.ArgumentParser) -> None:
    # default=SUPPRESS: a subcommand's parser must not overwrite `cruxtui --dataset X samples`
    # with its own default; `build_parser` sets the real defaults once, on the top parser.
    parser.add_argument(
        "--dataset",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="benchmark JSONL (fields id, code, input, output); default: $CRUXTUI_DATASET, "
        "the cached official file, a download, or the bundled starter set",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        default=argparse.SUPPRESS,
        help="never try to download the official dataset",
    )
