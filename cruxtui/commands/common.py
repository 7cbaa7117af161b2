"""Helpers shared by subcommands: opening the dataset with CLI-friendly errors."""

from __future__ import annotations

import argparse

from cruxtui.cli import CliError
from cruxtui.core.dataset import Dataset, DatasetError, load_dataset


def open_dataset(args: argparse.Namespace) -> Dataset:
    """Load the dataset named by `--dataset` / the environment, as a `CliError` on bad input."""
    try:
        return load_dataset(getattr(args, "dataset", None), offline=getattr(args, "offline", False) or None)
    except DatasetError as exc:
        raise CliError(str(exc)) from None
