"""`cruxtui runs`: list stored runs, or import a benchmark generations file as a run."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option

if TYPE_CHECKING:  # imported when a store is opened, so `cruxtui --help` stays fast
    from cruxtui.core.runs.store import RunStore


def add_store_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: `cruxtui --store X runs` (top-level option) must not be overwritten by a default.
    parser.add_argument(
        "--store",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="run store (SQLite) to use; default: runs.sqlite in the user data folder",
    )


def open_store(args: argparse.Namespace) -> RunStore:
    from cruxtui.core.runs.store import RunStore, RunStoreError

    try:
        return RunStore(getattr(args, "store", None))
    except RunStoreError as exc:
        raise CliError(str(exc)) from None


def register(sub: Subparsers) -> None:
    p = sub.add_parser("runs", help="list stored model runs (or import a generations file as one)")
    add_store_option(p)
    p.add_argument("--json", action="store_true", help="one JSON object per run, one per line")
    p.add_argument(
        "--import",
        dest="import_path",
        metavar="FILE",
        help="import a benchmark generations.json (or scored.json) as a replay run",
    )
    p.add_argument(
        "--task",
        choices=("output", "input"),
        default="output",
        help="task of the imported generations (default: output)",
    )
    p.add_argument(
        "--name", help="model name to show for the imported run (default: file's folder)"
    )
    add_dataset_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.import_path:
        return _import(args)
    from cruxtui.core.runs.store import RunStoreError

    with open_store(args) as store:
        try:
            runs = store.runs()
        except RunStoreError as exc:
            raise CliError(str(exc)) from None
    if args.json:
        for info in runs:
            sys.stdout.write(json.dumps(info.to_json()) + "\n")
        return 0
    if not runs:
        print(f"no runs in {store.path}")
        return 0
    print(
        f"{'id':<10}  {'created':<16}  {'status':<11}  {'pass@1':>6}  {'gens':>6}  {'fail':>4}"
        f"  {'api':<11}  run  (served by)"
    )
    for info in runs:
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.created))
        print(
            f"{info.id:<10}  {created:<16}  {info.status:<11}  {100 * info.pass1:6.1f}  {info.generations:>6}"
            f"  {info.failures:>4}  {served_api(info):<11}  {info.label}  ({served_by(info)})"
        )
    return 0


def served_api(info: Any) -> str:
    """`chat` / `completions` for a live server; the backend's name otherwise (vllm, replay)."""
    spec = info.config.spec
    if spec.get("backend") == "openai":
        return str(spec.get("api") or "chat")
    return str(spec.get("backend") or "?")


def served_by(info: Any) -> str:
    """Where the generations came from: the base URL, or the replayed file."""
    spec = info.config.spec
    if spec.get("backend") == "openai":
        return str(spec.get("base_url") or "OpenAI (default base URL)")
    if spec.get("backend") == "replay":
        return str(spec.get("path") or "a generations file")
    return "in-process"


def _import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cruxtui.cli.options import open_dataset
    from cruxtui.core.runs.import_generations import import_generations
    from cruxtui.core.scoring.generations_file import GenerationsError

    dataset = open_dataset(args)
    path = Path(args.import_path)
    with open_store(args) as store:
        try:
            info = import_generations(store, path, dataset, task=args.task, name=args.name)
        except GenerationsError as exc:
            raise CliError(str(exc)) from None
    print(
        f"imported {info.generations} generations of {info.samples} samples as run {info.id} "
        f"(pass@1 {100 * info.pass1:.1f})"
    )
    return 0
