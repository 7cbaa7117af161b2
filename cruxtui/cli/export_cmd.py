"""`cruxtui export RUN --out generations.json`: a run in the benchmark's generations format."""

from __future__ import annotations

import argparse

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers
from cruxtui.cli.runs_cmd import add_store_option, open_store


def register(sub: Subparsers) -> None:
    p = sub.add_parser("export", help="write a run's answers as the benchmark's generations.json")
    p.add_argument("run_id", metavar="RUN", help="run id (or a unique prefix), see `cruxtui runs`")
    p.add_argument(
        "--out", required=True, metavar="PATH", help="file to write (replaced atomically)"
    )
    add_store_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cruxtui.core.runs.store import RunStoreError
    from cruxtui.core.scoring.generations_file import write_generations

    with open_store(args) as store:
        try:
            info = store.run(args.run_id)
        except RunStoreError as exc:
            raise CliError(str(exc)) from None
        data = store.export(info.id)
    try:
        write_generations(args.out, data)
    except OSError as exc:
        raise CliError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    total = sum(len(v) for v in data.values())
    print(f"wrote {total} generations of {len(data)} samples from run {info.id} to {args.out}")
    return 0
