"""`cruxtui align`: hold a chain of thought against the traced execution of a sample."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option
from cruxtui.core.data.textfile import UnreadableFile, read_text

if TYPE_CHECKING:
    from cruxtui.core.reasoning.alignment import Alignment
    from cruxtui.core.trace.steps import Trace


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "align",
        help="check a chain of thought against the real execution; show the first divergence",
        description="Parse a chain of thought (free prose or the scratchpad format), align its steps "
        "with the traced execution of the sample and judge each claim: consistent, contradicted "
        "(with the true value) or unverifiable. The first contradicted claim is the first divergence.",
    )
    add_dataset_option(p)
    p.add_argument("sample", help="sample id, e.g. sample_3")
    p.add_argument(
        "--task",
        choices=("output", "input"),
        default="output",
        help="the task the chain answers (input: the call in its answer is traced)",
    )
    p.add_argument(
        "--cot", metavar="FILE", required=True, help="the chain of thought text; - for stdin"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _read_cot(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return read_text(path, "a text file with the chain of thought")
    except UnreadableFile as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from cruxtui.cli.options import open_dataset
    from cruxtui.core.reasoning.alignment import align_text, call_to_trace
    from cruxtui.core.trace.steps import trace_sample

    text = _read_cot(args.cot)
    if not text.strip():
        raise CliError(f"{'stdin' if args.cot == '-' else args.cot}: the chain of thought is empty")
    dataset = open_dataset(args)
    sample = dataset.get(args.sample)
    if sample is None:
        raise CliError(f"no sample {args.sample!r} in {dataset.source}")
    call, why = call_to_trace(sample, text, args.task)
    tr = trace_sample(sample, call)
    if tr.error and not tr.steps:
        raise CliError(f"cannot trace {call}: {tr.error}")
    result = align_text(text, tr)
    if args.json:
        out = {
            "sample": sample.id,
            "task": args.task,
            "call": call,
            "ended": tr.ended,
        } | result.to_json()
        print(json.dumps(out, ensure_ascii=False))
        return 0
    _print_report(sample.id, call, why, tr, result)
    return 0


def _print_report(sid: str, call: str, why: str, tr: Trace, result: Alignment) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    # Chains, calls and values are the model's text: never read them as Rich markup ("[ANSWER]").
    console = Console(highlight=False, soft_wrap=False)
    console.print(
        f"[bold]{escape(sid)}[/]  traced {escape(call)} ({escape(why)}); {escape(tr.ended)}"
    )
    if result.chain.problems:
        for problem in result.chain.problems:
            console.print(Text(f"scratchpad {problem}", style="yellow"))
    table = Table(show_lines=False, expand=False)
    table.add_column("#", justify="right")
    table.add_column("trace", justify="right")
    table.add_column("reasoning step", overflow="fold", max_width=60)
    table.add_column("claims", overflow="fold")
    style = {"consistent": "green", "contradicted": "bold red", "unverifiable": "dim"}
    mark = {"consistent": "✓", "contradicted": "✗", "unverifiable": "?"}
    for step in result.chain.steps:
        cell = Text()
        for j in result.judgements_of(step.index):
            if cell:
                cell.append("\n")
            cell.append(f"{mark[j.verdict]} {j.claim.describe()}", style=style[j.verdict])
            if j.verdict == "contradicted":
                cell.append(f"  (true: {j.true_value})", style="red")
        pos = result.positions[step.index]
        table.add_row(str(step.index), "" if pos is None else str(pos), Text(step.text), cell)
    console.print(table)
    c = result.counts()
    console.print(
        f"{c['consistent']} consistent, {c['contradicted']} contradicted, "
        f"{c['unverifiable']} unverifiable"
    )
    div = result.first_divergence
    if div is None:
        console.print("[green]No divergence found[/]: no claim contradicts the execution.")
    else:
        line = Text("First divergence", style="bold red")
        line.append(
            f" at reasoning step {div.step} (trace step {div.trace_step}): {div.claim.text!r} "
            f"claims {div.claim.value}, but the true value is {div.true_value}."
        )
        console.print(line)
