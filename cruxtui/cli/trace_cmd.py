"""`cruxtui trace`: run a sample (or a typed call) step by step and show what happened.

cruxtui trace sample_3                     # a table: step, line, source, changed variables, return
cruxtui trace sample_3 --call "f('abc')"   # any call, e.g. a model's predicted input
cruxtui trace --all --jsonl OUT.jsonl      # one line per sample: id, steps, numsteps, return / error
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option, open_dataset

if TYPE_CHECKING:
    from cruxtui.core.trace.steps import Trace


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "trace",
        help="trace a sample's execution step by step (or every sample, as JSON lines)",
        description="Run f under a tracer in the sandbox and show each step: the line, the "
        "variables it changed and the return value.",
    )
    add_dataset_option(p)
    p.add_argument("sample", nargs="?", metavar="SAMPLE_ID", help="e.g. sample_3")
    p.add_argument(
        "--call", metavar="CALL", help="trace this call instead of the sample's, e.g. \"f('abc')\""
    )
    p.add_argument("--all", action="store_true", help="trace every sample of the dataset")
    p.add_argument(
        "--jsonl", metavar="OUT", help="with --all: write one JSON line per sample to OUT"
    )
    p.add_argument(
        "--json", action="store_true", help="print the whole trace of one sample as JSON"
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=10_000,
        metavar="N",
        help="stop recording after N steps (default 10000)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    _check_args(args)
    dataset = open_dataset(args)
    if dataset.notice:
        print(f"note: {dataset.notice}", file=sys.stderr)
    if args.all:
        return _trace_all(dataset, args)
    sample = dataset.get(args.sample)
    if sample is None:
        raise CliError(
            f"unknown sample id {args.sample!r} (the dataset has {len(dataset)} samples)"
        )

    from cruxtui.core.trace.steps import trace_sample

    result = trace_sample(sample, args.call, max_steps=args.max_steps)
    if result.error and not result.steps and not result.timeout:
        raise CliError(f"--call: {result.error}" if args.call is not None else result.error)
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        _print_table(result, sample.id)
    return 0


def _check_args(args: argparse.Namespace) -> None:
    if args.max_steps < 1:
        raise CliError("--max-steps must be at least 1")
    if args.all:
        if args.sample or args.call is not None or args.json:
            raise CliError("--all traces every sample: give no SAMPLE_ID, --call or --json with it")
        if not args.jsonl:
            raise CliError("--all needs --jsonl OUT.jsonl (where to write one line per sample)")
        return
    if args.jsonl:
        raise CliError("--jsonl goes with --all (use --json for one sample)")
    if not args.sample:
        raise CliError(
            "name a sample (e.g. `cruxtui trace sample_3`) or use --all --jsonl OUT.jsonl"
        )
    if args.call is not None:
        from cruxtui.core.sandbox.jobs.tracer import problem_with

        problem = problem_with(args.call, "--call")
        if problem:
            raise CliError(f"{problem} (expected a call such as \"f('abc')\")")


def jsonl_row(sample_id: str, result: Trace) -> dict[str, Any]:
    """The `--all --jsonl` line for one sample: `return` is the repr, or null with `error` set."""
    error = None
    if result.error:
        error = result.error
    elif result.timeout:
        error = "timed out"
    elif result.truncated:
        error = f"step cap reached after {len(result.steps)} steps"
    elif result.exception:
        error = result.exception
    return {
        "id": sample_id,
        "steps": len(result.steps),
        "numsteps": result.numsteps,
        "return": result.return_repr if error is None else None,
        "error": error,
    }


def _trace_all(dataset: Any, args: argparse.Namespace) -> int:
    from cruxtui.core.trace.steps import trace_many
    from cruxtui.core.util.atomic import write_shared_text

    started = time.perf_counter()
    items = [(s.code, s.call, s.output) for s in dataset.samples]
    results = trace_many(items, max_steps=args.max_steps)
    rows = [jsonl_row(s.id, r) for s, r in zip(dataset.samples, results, strict=True)]
    try:
        write_shared_text(args.jsonl, "".join(json.dumps(r) + "\n" for r in rows))
    except OSError as exc:
        raise CliError(f"cannot write {args.jsonl}: {exc.strerror or exc}") from None
    failed = sum(1 for r in rows if r["error"])
    print(
        f"traced {len(rows)} samples in {time.perf_counter() - started:.1f} s "
        f"({failed} without a return value) -> {args.jsonl}",
        file=sys.stderr,
    )
    return 0


def _print_table(result: Trace, sample_id: str) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    lines = result.code.splitlines()
    table = Table(title=Text(f"{sample_id}: {result.call}"), title_justify="left", expand=False)
    table.add_column("step", justify="right", style="dim")
    table.add_column("line", justify="right")
    table.add_column("source", no_wrap=True, overflow="ellipsis", max_width=48)
    table.add_column("changed variables", overflow="fold")  # by running this line
    table.add_column("return", overflow="fold")
    for step in result.steps:
        source = lines[step.line - 1].rstrip() if 0 < step.line <= len(lines) else ""
        if step.depth:
            source = f"{'  ' * step.depth}[{step.func}] {source.strip()}"
        changed = ", ".join(f"{name} = {text}" for name, text in result.effects(step.index))
        value = Text("")
        if step.event == "return" and step.value is not None:
            value = Text(step.value, style="green")
        elif step.event == "exception":
            value = Text(f"raise {step.value}", style="red")
        table.add_row(str(step.index), str(step.line), Text(source), Text(changed), value)
    console = Console()
    console.print(table)
    style = "green" if result.ok else "red"
    console.print(Text(result.ended, style=style))
    if result.stdout:
        console.print(Text(f"printed: {result.stdout}", style="dim"), soft_wrap=True)
    console.print(Text(f"{len(result.steps)} steps · numsteps {result.numsteps}", style="dim"))
