"""`cruxtui score GENERATIONS.json --task output|input`: pass@k with intervals and why predictions failed."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option

if TYPE_CHECKING:
    from rich.console import Console

    from cruxtui.core.scoring.scored_file import ScoredSet


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "score",
        help="score a benchmark generations file (pass@1, pass@5, reasons)",
        description='Judge every prediction of a generations file ({"sample_0": ["...", ...]}) '
        "in the sandbox. Prints pass@1 and pass@5 with bootstrap intervals, ours and the "
        "benchmark's own (official) where they differ, and a table of failure reasons.",
    )
    p.add_argument(
        "generations", metavar="GENERATIONS.json", help="generations (or scored) JSON file"
    )
    p.add_argument("--task", choices=("output", "input"), required=True, help="which CRUXEval task")
    add_dataset_option(p)
    p.add_argument(
        "--out", metavar="SCORED.json", help="write the scored file (benchmark format + reasons)"
    )
    p.add_argument("--json", action="store_true", help="print one machine-readable summary object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from cruxtui.cli.options import open_dataset
    from cruxtui.core.sandbox.pool import Sandbox, SandboxError
    from cruxtui.core.scoring.generations_file import (
        GenerationsError,
        check_sample_ids,
        load_generations,
        write_scored,
    )

    try:
        generations = load_generations(args.generations)
    except GenerationsError as exc:
        raise CliError(str(exc)) from None
    dataset = open_dataset(args)
    try:
        check_sample_ids(generations, dataset, args.generations)
    except GenerationsError as exc:
        raise CliError(str(exc)) from None
    err = Console(stderr=True)
    if dataset.notice and not args.json:
        err.print(f"note: {dataset.notice}", highlight=False)
    try:
        with Sandbox() as sandbox:
            scored = score_with_progress(dataset, generations, args.task, sandbox, err)
    except SandboxError as exc:
        raise CliError(str(exc)) from None
    if args.out:
        try:
            write_scored(args.out, scored.to_document())
        except OSError as exc:
            raise CliError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    if args.json:
        summary = scored.summary() | {
            "generations": args.generations,
            "dataset": dataset.description,
        }
        if args.out:
            summary["out"] = args.out
        sys.stdout.write(json.dumps(summary) + "\n")
        return 0
    out = Console()
    _print_report(out, scored, args)
    return 0


def score_with_progress(
    dataset: Any, generations: Any, task: str, sandbox: Any, err: Console
) -> ScoredSet:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from cruxtui.core.scoring.scored_file import score_generations

    columns = (
        TextColumn("scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("distinct predictions"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as progress:
        bar = progress.add_task("scoring", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(bar, completed=done, total=total)

        return score_generations(dataset, generations, task, sandbox=sandbox, progress=advance)


def _fmt(value: float | None) -> str:
    return "n/a (< k generations)" if value is None else f"{value:.4f}"


def _print_report(out: Console, scored: ScoredSet, args: argparse.Namespace) -> None:
    from rich.table import Table

    from cruxtui.core.scoring.verdicts import KINDS

    out.print(
        f"[bold]{args.generations}[/]  task [bold]{scored.task}[/]  "
        f"{len(scored.verdicts)} samples, {scored.size} predictions",
        highlight=False,
    )
    differ = bool(scored.disagreements())
    table = Table(title="pass@k x100 with bootstrap percentiles over samples")
    table.add_column("metric", no_wrap=True, min_width=12)
    table.add_column("value", justify="right", no_wrap=True, min_width=7)
    for label in ("2.5%", "25%", "50%", "75%", "97.5%"):
        table.add_column(label, justify="right", no_wrap=True, min_width=5)
    scorers = (("cruxtui", False), ("official", True)) if differ else (("", False),)
    for k in (1, 5):
        for name, official in scorers:
            value = scored.pass_at(k, official=official)
            intervals = scored.intervals(k, official=official) or {}
            row = [f"pass@{k} {name}".rstrip(), _fmt(value)]
            row += [
                f"{intervals[key]:.1f}" if intervals else ""
                for key in ("2.5", "25", "50", "75", "97.5")
            ]
            table.add_row(*row)
    out.print(table)
    if differ:
        out.print(
            "cruxtui: parsed, sandboxed, exact-type comparison. official: the benchmark's spliced "
            "`assert output == prediction`.",
            highlight=False,
        )
    else:
        out.print("The benchmark's own spliced check agrees on every prediction.")

    kinds = scored.kinds()
    examples: dict[str, str] = {}
    for verdicts in scored.verdicts.values():
        for verdict in verdicts:
            examples.setdefault(verdict.kind, verdict.reason)
    reasons = Table(title="Verdicts")
    reasons.add_column("verdict", no_wrap=True, min_width=12)
    reasons.add_column("predictions", justify="right", no_wrap=True, min_width=11)
    reasons.add_column("share", justify="right", no_wrap=True, min_width=6)
    reasons.add_column("example reason", overflow="ellipsis", no_wrap=True, max_width=36)
    for kind in KINDS:
        if kinds[kind]:
            reasons.add_row(
                kind, str(kinds[kind]), f"{kinds[kind] / scored.size:.1%}", examples[kind]
            )
    out.print(reasons)

    if differ:
        disagreements = scored.disagreements()
        table = Table(title=f"Where the official spliced check differs ({len(disagreements)})")
        table.add_column("sample", no_wrap=True)
        table.add_column("#", justify="right", no_wrap=True)
        table.add_column("prediction", overflow="ellipsis", no_wrap=True, ratio=1)
        table.add_column("official", no_wrap=True)
        table.add_column("cruxtui", no_wrap=True)
        table.add_column("reason", overflow="ellipsis", no_wrap=True, ratio=1)
        for sample_id, index, verdict in disagreements[:20]:
            table.add_row(
                sample_id,
                str(index),
                scored.generations[sample_id][index],
                "pass" if verdict.official else "fail",
                "pass" if verdict.passed else "fail",
                verdict.reason,
            )
        out.print(table)
    if args.out:
        out.print(f"wrote {args.out}", highlight=False)
