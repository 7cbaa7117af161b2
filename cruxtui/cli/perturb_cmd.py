"""`cruxtui perturb`: make a variant of a sample with libcst transforms, output re-derived.

cruxtui perturb sample_12 --apply rename:anonymize --apply flip-compare:1 --seed 3
cruxtui perturb sample_12 --apply const:1,=1000 --json
cruxtui perturb --all [--json]     # per transform: applies to / accepted / rejected by reason
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
    from cruxtui.core.perturb import Variant

# Kept here, not generated from the catalogue: importing libcst costs half a second and `--help`
# must stay instant. tests/perturb/test_perturb.py checks that every transform is documented here.
TRANSFORMS_HELP = """\
transforms (--apply NAME[:PARAMS]; N = the N-th applicable site in source order, counted
from 1; without N the --seed picks one; "preserving" ones must keep the output):
  rename:anonymize      variables become x1, x2, ... in order of first appearance (preserving)
  rename:shuffle        existing names permuted among the variables, misleading (preserving)
  rename:OLD=NEW[,...]  explicit mapping; refused if it would capture a name in use (preserving)
                        (scope-correct: parameters, locals, loop, comprehension and lambda
                        variables; never attributes, keyword arguments, builtins, globals, f)
  flip-compare[:N]      flip a comparison: < to >=, > to <=, == to !=, in to not in, is to is not
  negate[:N]            negate the condition of an if/elif/while/x if c else y/comprehension if
  swap-if[:N]           swap if/else branches and negate the condition (preserving)
  mirror-compare[:N]    mirror a comparison: a < b to b > a (preserving)
  const[:N][,OP]        change an integer constant in a comparison or range(); OP: +1, -1,
                        drop (a digit), digit (replace one), =VALUE (e.g. const:1,=1000)
  string[:N][,OP]       change a string literal; OP: replace, insert or delete one character
  input-char[:N][,OP]   edit a character of a string in the input (OP as for string)
  input-element[:N]     remove an element of a list, tuple, set or dict in the input
  input-number[:N][,OP] add (+1) or subtract (-1) one to a number in the input

Every variant runs twice in the sandbox; it is rejected if it raises, times out (0.5 s), is not
deterministic, or a preserving chain changes the output. Variant ids name the chain, e.g.
sample_12~anon~flip-compare-1 (with -sSEED when the seed made a choice)."""


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "perturb",
        help="make a variant of a sample (rename, flip a comparison, edit the input...) and re-derive its output",
        description="Apply libcst transforms to a sample, run the variant in the sandbox to derive its "
        "output, and show the diff with the old and new outputs.",
        epilog=TRANSFORMS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_dataset_option(p)
    p.add_argument("sample", nargs="?", metavar="SAMPLE_ID", help="e.g. sample_12")
    p.add_argument(
        "--apply",
        action="append",
        default=[],
        metavar="NAME[:PARAMS]",
        help="a transform to apply (repeatable: applied in order); see below",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed for the choices the params leave open (default 0)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="survey every transform over every sample: applies / rejected and why",
    )
    p.add_argument("--side-by-side", action="store_true", help="show the diff in two columns")
    p.add_argument(
        "--json",
        action="store_true",
        help="JSON: the variant's id, code, input, output and chain (with --all: the counts)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.all and (args.sample or args.apply):
        raise CliError(
            "--all surveys every transform on every sample: give no SAMPLE_ID or --apply"
        )
    if not args.all and not args.sample:
        raise CliError("give a SAMPLE_ID with one or more --apply NAME[:PARAMS], or --all")
    if not args.all and not args.apply:
        raise CliError("give at least one --apply NAME[:PARAMS] (e.g. --apply rename:anonymize)")
    dataset = open_dataset(args)
    if dataset.notice:
        print(f"note: {dataset.notice}", file=sys.stderr)

    from cruxtui.core.perturb import PerturbError, make_variant, parse_spec
    from cruxtui.core.sandbox.pool import Sandbox

    if args.all:
        return _survey(dataset.samples, args)
    sample = dataset.get(args.sample)
    if sample is None:
        raise CliError(
            f"unknown sample id {args.sample!r} (the dataset has {len(dataset)} samples)"
        )
    try:
        specs = [parse_spec(text, args.seed) for text in args.apply]
        with Sandbox() as sandbox:
            variant = make_variant(sample, specs, sandbox)
    except PerturbError as exc:
        raise CliError(f"{sample.id}: {exc}") from None
    if args.json:
        print(json.dumps(variant.to_json()))
    else:
        _print_variant(variant, sample.code, sample.input, side_by_side=args.side_by_side)
    return 0


def _print_variant(variant: Variant, old_code: str, old_input: str, *, side_by_side: bool) -> None:
    from rich.console import Console
    from rich.text import Text

    from cruxtui.core.perturb.diff import unified

    console = Console(highlight=False)
    console.print(Text(f"{variant.id}  (from {variant.parent_id})", style="bold"))
    for n, (spec, note) in enumerate(zip(variant.chain, variant.notes, strict=True), start=1):
        console.print(f"  {n}. {spec}: {note}", markup=False)
    if side_by_side:
        console.print(
            _side_by_side_table(old_code, variant.sample.code, variant.parent_id, variant.id)
        )
    else:
        lines = unified(old_code, variant.sample.code, variant.parent_id, variant.id)
        for line in lines or ["(code unchanged)"]:
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
            console.print(Text(line, style=style))
    if variant.sample.input != old_input:
        console.print(Text(f"input:  {old_input}", style="red"))
        console.print(Text(f"     -> {variant.sample.input}", style="green"))
    else:
        console.print(f"input:  {old_input}", markup=False)
    changed = variant.sample.output != variant.parent_output
    console.print(Text(f"output: {variant.parent_output}", style="red" if changed else ""))
    console.print(
        Text(
            f"     -> {variant.sample.output}" + ("" if changed else "  (unchanged)"),
            style="green" if changed else "",
        )
    )


def _side_by_side_table(old: str, new: str, old_name: str, new_name: str) -> Any:
    from rich.table import Table

    from cruxtui.core.perturb.diff import side_by_side

    styles = {"equal": "", "replace": "yellow", "delete": "red", "insert": "green"}
    table = Table(show_lines=False, box=None, pad_edge=False)
    for header in ("", old_name, "", new_name):
        table.add_column(header, overflow="fold")
    for row in side_by_side(old, new):
        style = styles[row.kind]
        table.add_row(
            str(row.left_no or ""), row.left, str(row.right_no or ""), row.right, style=style
        )
    return table


def _survey(samples: list[Any], args: argparse.Namespace) -> int:
    from cruxtui.core.perturb.survey import survey
    from cruxtui.core.sandbox.pool import Sandbox

    start = time.monotonic()
    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    with Sandbox() as sandbox:
        result = survey(samples, sandbox, seed=args.seed, progress=progress)
    elapsed = time.monotonic() - start
    if args.json:
        print(
            json.dumps(
                {
                    "samples": len(samples),
                    "seed": args.seed,
                    "elapsed": round(elapsed, 2),
                    "transforms": [r.to_json() for r in result.reports],
                }
            )
        )
        return 0
    print(f"{'transform':<18} {'applies':>8} {'accepted':>9} {'rejected':>9}  reasons")
    for r in result.reports:
        reasons = ", ".join(f"{kind} {n}" for kind, n in r.rejected.most_common())
        errors = sum(r.errors.values())
        if errors:
            reasons += f"{', ' if reasons else ''}not tried (error) {errors}"
        rejected = sum(r.rejected.values())
        print(
            f"{r.spec:<18} {r.applies:>4}/{r.samples:<3} {r.accepted:>9} {rejected:>9}  {reasons}"
        )
    print(
        f"{len(result.variants)} variants accepted, {len(result.rejections)} rejected, "
        f"{elapsed:.1f} s",
        file=sys.stderr,
    )
    return 0
