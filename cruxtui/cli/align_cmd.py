"""`cruxtui align`: hold a chain of thought against the traced execution of a sample."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option
from cruxtui.cli.runs_cmd import add_store_option, open_store
from cruxtui.core.data.textfile import UnreadableFile, read_text

if TYPE_CHECKING:
    from cruxtui.core.reasoning.alignment import Alignment
    from cruxtui.core.reasoning.claim_types import Chain
    from cruxtui.core.reasoning.model_extract import Extraction
    from cruxtui.core.trace.steps import Trace


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "align",
        help="check a chain of thought against the real execution; show the first divergence",
        description="Parse a chain of thought (free prose or the scratchpad format; a reasoning "
        "model's thinking), align its steps with the traced execution of the sample and judge each "
        "claim (a variable, an expression over the frame, a condition, the loop, the answer): "
        "consistent, contradicted (with the true value) or unverifiable. Code in the chain is not "
        "a claim; self-corrections retract. The first contradicted claim is the first divergence.",
    )
    add_dataset_option(p)
    p.add_argument("sample", help="sample id, e.g. sample_3")
    p.add_argument(
        "--task",
        choices=("output", "input"),
        default="output",
        help="the task the chain answers (input: the call in its answer is traced); with --run, "
        "the run's task",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--cot", metavar="FILE", help="the chain of thought text; - for stdin")
    source.add_argument(
        "--run",
        metavar="RUN",
        help="take the chain from a stored generation of this run (see `cruxtui generations`): "
        "a reasoning model's thinking, then its answer text",
    )
    p.add_argument(
        "--index", type=int, default=0, metavar="I", help="which generation of --run (default 0)"
    )
    add_store_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--extract-with",
        metavar="ENDPOINT",
        help="also ask this model endpoint (a configured endpoint name or a base URL) to "
        "restate the chain as claims; cruxtui still judges every claim itself",
    )
    p.add_argument(
        "--extract-model",
        metavar="MODEL",
        help="the model to ask with --extract-with (default: the endpoint's, or the first listed)",
    )
    p.set_defaults(func=run)


def _chain_from_run(args: argparse.Namespace) -> str:
    """The stored generation's thinking and answer text, as one chain of thought."""
    from cruxtui.core.models.thinking import chain_of_thought
    from cruxtui.core.runs.store import RunStoreError

    with open_store(args) as store:
        try:
            info = store.run(args.run)
        except RunStoreError as exc:
            raise CliError(str(exc)) from None
        gens = [g for g in store.generations(info.id, args.sample) if g.index == args.index]
    if not gens:
        raise CliError(f"run {info.id} has no generation {args.index} of {args.sample!r}")
    gen = gens[0]
    args.task = info.config.task  # the chain answers the run's task
    # The stored text already begins with the prompt's response prefix (the runner keeps it).
    return chain_of_thought(gen.reasoning, gen.raw)


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

    text = _read_cot(args.cot) if args.cot is not None else _chain_from_run(args)
    if not text.strip():
        where = (
            args.cot if args.cot not in (None, "-") else ("stdin" if args.cot else "the generation")
        )
        raise CliError(f"{where}: the chain of thought is empty")
    dataset = open_dataset(args)
    sample = dataset.get(args.sample)
    if sample is None:
        raise CliError(f"no sample {args.sample!r} in {dataset.source}")
    call, why = call_to_trace(sample, text, args.task)
    tr = trace_sample(sample, call)
    if tr.error and not tr.steps:
        raise CliError(f"cannot trace {call}: {tr.error}")
    target = sample.output if args.task == "input" else None  # f(x) proposed claims the output
    extraction: list[Extraction] = []
    extract = None
    if args.extract_with:
        from cruxtui.core.reasoning.model_extract import extract_with

        def extract(chain: Chain) -> None:
            got = extract_with(args.extract_with, chain, tr.code, args.extract_model, target)
            extraction.append(got)

    result = align_text(text, tr, target=target, extract=extract)
    chain = result.chain
    if args.json:
        out = {
            "sample": sample.id,
            "task": args.task,
            "call": call,
            "ended": tr.ended,
        } | result.to_json()
        if extraction:
            out["extraction"] = {
                "endpoint": args.extract_with,
                "added": sum(c.source == "model" for c in chain.claims),
                "dropped": extraction[0].dropped,
                "problem": extraction[0].problem,
            }
        print(json.dumps(out, ensure_ascii=False))
        return 0
    _print_report(sample.id, call, why, tr, result)
    if extraction:
        added = sum(c.source == "model" for c in chain.claims)
        note = f"; {extraction[0].problem}" if extraction[0].problem else ""
        print(
            f"model-assisted extraction ({args.extract_with}): {added} claim(s) added, "
            f"{extraction[0].dropped} dropped{note}"
        )
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
            if j.claim.source == "model":
                cell.append("  [model]", style="cyan")
            if j.claim.retracted:
                cell.append("  (retracted)", style="dim")
            if j.verdict == "contradicted":
                shown = j.true_value if j.true_value is not None else j.note
                cell.append(f"  (true: {shown})", style="red")
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
            + (
                f"claims {div.claim.value}, but the true value is {div.true_value}."
                if div.true_value is not None
                else f"states {div.claim.value}: {div.note}."
            )
        )
        console.print(line)
