"""`cruxtui generations RUN`: a stored run's generations, with their thinking, answers and verdicts.

`--json` prints one object per line (for jq and scripts): sample, index, text, reasoning (null when
the model had none), answer, verdict, reason, seed, finish_reason, latency_s, plus tokens and how
each generation was obtained.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cruxtui.cli.errors import CliError
from cruxtui.cli.runs_cmd import add_store_option, open_store


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "generations",
        help="print a stored run's generations (text, thinking, answer, verdict)",
        description="Print the generations of a stored run (see `cruxtui runs` for ids; a unique "
        "prefix is enough): each one's text, the model's thinking when it had any, the answer "
        "extracted from the text, and the verdict with its reason.",
    )
    p.add_argument("run", help="run id (or a unique prefix)")
    p.add_argument("--sample", metavar="ID", help="only this sample's generations")
    p.add_argument("--json", action="store_true", help="one JSON object per generation, per line")
    add_store_option(p)
    p.set_defaults(func=run)


def generation_json(gen: Any) -> dict[str, Any]:
    """One stored generation as the `--json` line says."""
    return {
        "sample": gen.sample_id,
        "index": gen.index,
        "text": gen.raw,
        "reasoning": gen.reasoning,
        "answer": gen.answer,
        "verdict": "pass" if gen.passed else gen.kind,
        "passed": gen.passed,
        "reason": gen.reason,
        "official": gen.official,
        "seed": gen.seed,
        "finish_reason": gen.finish_reason,
        "latency_s": None if gen.latency is None else round(gen.latency, 4),
        "tokens_in": gen.tokens_in,
        "tokens_out": gen.tokens_out,
        "obtained": gen.obtained,
    }


def run(args: argparse.Namespace) -> int:
    from cruxtui.core.runs.store import RunStoreError

    with open_store(args) as store:
        try:
            info = store.run(args.run)
        except RunStoreError as exc:
            raise CliError(str(exc)) from None
        gens = store.generations(info.id, args.sample)
    if args.sample and not gens:
        raise CliError(f"run {info.id} has no generations of {args.sample!r}")
    out = sys.stdout
    if args.json:
        for gen in gens:
            out.write(json.dumps(generation_json(gen), ensure_ascii=False) + "\n")
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.text import Text

    # The model's text is never read as Rich markup ("[ANSWER]").
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"[bold]run {escape(info.id)}[/]: {escape(info.label)}")
    for gen in gens:
        mark = ("PASS", "green") if gen.passed else (gen.kind.upper(), "red")
        head = Text.assemble(
            (f"{gen.sample_id} #{gen.index}  ", "bold"),
            (mark[0], f"bold {mark[1]}"),
            f"  {gen.reason}",
        )
        facts = [
            f"answer {gen.answer}" if gen.answer is not None else "no answer",
            f"seed {gen.seed}" if gen.seed is not None else "",
            f"finish {gen.finish_reason}" if gen.finish_reason else "",
            f"{gen.latency:.2f} s" if gen.latency is not None else "",
            f"{gen.tokens_out} tokens" if gen.tokens_out is not None else "tokens unknown",
            gen.obtained or "",
        ]
        console.print(head)
        console.print(Text("  " + " · ".join(f for f in facts if f), style="dim"))
        if gen.reasoning:
            console.print(Text("  thinking:", style="italic magenta"))
            console.print(Text(_indent(gen.reasoning), style="magenta"))
        console.print(Text(_indent(gen.raw or "(empty)")))
    if not gens:
        console.print("no generations stored yet")
    return 0


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip().splitlines())
