"""`cruxtui stats RUN --by method|type|...`: pass@1 per group with intervals, tables and figures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option
from cruxtui.cli.runs_cmd import add_store_option, open_store
from cruxtui.core.insights.dimensions import DIMENSIONS
from cruxtui.core.insights.slices import SORTS

if TYPE_CHECKING:
    from rich.console import Console

    from cruxtui.core.data.dataset import Dataset
    from cruxtui.core.insights.results import Results
    from cruxtui.core.insights.slices import Group, Slice


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "stats",
        help="where a model fails: pass@1 per method, type, lines, numsteps, ... with intervals",
        description="Slice a stored run (or a generations file, judged in the sandbox) by one "
        "dimension and print each group's samples, predictions and pass@1 with a 95%% bootstrap "
        "interval. With --against, both runs on the samples they share: the difference per "
        "group with a paired interval, and how many samples pass in one run and fail in the "
        "other. A sample calling several methods counts in each of their groups.",
    )
    p.add_argument(
        "runs",
        nargs="*",
        metavar="RUN",
        help="run id (or unique prefix), see `cruxtui runs`; several are pooled (e.g. --by mode)",
    )
    p.add_argument("--generations", metavar="FILE", help="a generations (or scored) JSON file")
    p.add_argument("--task", choices=("output", "input"), help="the task of --generations")
    p.add_argument("--by", choices=DIMENSIONS, required=True, help="what to group samples by")
    p.add_argument(
        "--against", metavar="RUN_B", help="compare with this run, per group, on shared samples"
    )
    p.add_argument("--sort", choices=SORTS, default="natural", help="row order (default: natural)")
    p.add_argument(
        "--min-samples",
        type=int,
        default=1,
        metavar="N",
        help="leave out groups of fewer samples (the total still counts them)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per group, per line")
    p.add_argument("--csv", metavar="OUT", help="write the table as CSV")
    p.add_argument("--markdown", metavar="OUT", help="write the table as Markdown")
    p.add_argument(
        "--plot",
        metavar="OUT.svg|OUT.png",
        help="write a figure (needs matplotlib: pip install 'cruxtui[plots]')",
    )
    p.add_argument(
        "--cases",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="gallery whose case tags --by tag uses (default: $CRUXTUI_CASES_DIR, else ./cases)",
    )
    add_store_option(p)
    add_dataset_option(p)
    p.set_defaults(func=run)


def _check_args(args: argparse.Namespace) -> None:
    if args.generations and args.runs:
        raise CliError("give RUN ids or --generations FILE, not both")
    if not args.generations and not args.runs:
        raise CliError(
            "give a RUN id (see `cruxtui runs`) or --generations FILE --task output|input"
        )
    if args.generations and not args.task:
        raise CliError("--generations needs --task output|input")
    if args.against and len(args.runs) > 1:
        raise CliError("--against compares one run with another: give a single RUN")
    if args.min_samples < 1:
        raise CliError("--min-samples must be at least 1")
    if args.plot:
        from cruxtui.core.insights import figures
        from cruxtui.core.insights.results import InsightsError

        try:
            figures.figure_format(args.plot)
        except InsightsError as exc:
            raise CliError(str(exc)) from None
        if not figures.available():
            raise CliError(figures.INSTALL_HINT)


def run(args: argparse.Namespace) -> int:
    _check_args(args)
    from rich.console import Console

    from cruxtui.cli.options import open_dataset
    from cruxtui.core.insights.results import InsightsError
    from cruxtui.core.insights.slices import slice_results

    err = Console(stderr=True)
    dataset = open_dataset(args)
    if dataset.notice and not args.json:
        err.print(f"note: {dataset.notice}", highlight=False)
    results, against = _load(args, dataset, err)
    facts = _facts(args, dataset, err)
    try:
        slice_ = slice_results(results, args.by, facts, against=against)
    except InsightsError as exc:
        raise CliError(str(exc)) from None
    groups = slice_.sorted(args.sort, args.min_samples)
    _write_files(args, slice_, groups, facts.numsteps)
    if args.json:
        from cruxtui.core.insights.tables import json_lines

        sys.stdout.write(json_lines(slice_, groups))
        return 0
    # Piped or redirected output is read in files and pagers: no need to squeeze it into 80 columns.
    _print_table(Console(width=None if sys.stdout.isatty() else 120), slice_, groups, args)
    return 0


def _load(
    args: argparse.Namespace, dataset: Dataset, err: Console
) -> tuple[Results, Results | None]:
    from cruxtui.core.insights.results import InsightsError, pooled
    from cruxtui.core.runs.store import RunStoreError

    if args.generations:
        results = _judge_file(args, dataset, err)
        if not args.against:
            return results, None
    with open_store(args) as store:
        try:
            if not args.generations:
                results = pooled([_run(store, ref, dataset, err, args) for ref in args.runs])
            against = _run(store, args.against, dataset, err, args) if args.against else None
        except RunStoreError as exc:
            raise CliError(str(exc)) from None
        except InsightsError as exc:
            raise CliError(str(exc)) from None
    return results, against


def _run(store: Any, ref: str, dataset: Dataset, err: Console, args: argparse.Namespace) -> Results:
    from cruxtui.core.insights.results import from_run

    info, results = from_run(store, ref)
    if not results.outcomes:
        raise CliError(f"run {info.id} has no generations yet")
    if info.config.dataset_digest != dataset.digest and not args.json:
        err.print(
            f"note: run {info.id} was made on another dataset than {dataset.description}; "
            "samples it does not have are grouped as (unknown)",
            highlight=False,
        )
    return results


def _judge_file(args: argparse.Namespace, dataset: Dataset, err: Console) -> Results:
    from cruxtui.cli.score_cmd import score_with_progress
    from cruxtui.core.insights.results import from_scored
    from cruxtui.core.sandbox.pool import Sandbox, SandboxError
    from cruxtui.core.scoring.generations_file import (
        GenerationsError,
        check_sample_ids,
        load_generations,
    )

    try:
        generations = load_generations(args.generations)
        check_sample_ids(generations, dataset, args.generations)
    except GenerationsError as exc:
        raise CliError(str(exc)) from None
    try:
        with Sandbox() as sandbox:
            scored = score_with_progress(dataset, generations, args.task, sandbox, err)
    except SandboxError as exc:
        raise CliError(str(exc)) from None
    path = Path(args.generations)
    label = path.parent.name if path.stem in ("generations", "scored") else path.stem
    return from_scored(scored, label or path.name)


def _facts(args: argparse.Namespace, dataset: Dataset, err: Console) -> Any:
    from cruxtui.core.insights.dimensions import SampleFacts, gallery_tags

    numsteps = None
    if args.by == "numsteps":
        numsteps = _step_counts(dataset, err)
    tags: dict[str, tuple[str, ...]] = {}
    if args.by == "tag":
        from cruxtui.core.cases.case_file import cases_dir, load_gallery

        folder = cases_dir(getattr(args, "cases", None))
        cases, errors = load_gallery(folder)
        for problem in errors:
            err.print(f"note: skipped {problem}", highlight=False)
        if not cases and not args.json:
            err.print(f"note: no saved cases in {folder}: every sample is (untagged)")
        tags = gallery_tags(cases)
    return SampleFacts(dataset, numsteps, tags)


def _step_counts(dataset: Dataset, err: Console) -> dict[str, int]:
    from cruxtui.core.sandbox.pool import Sandbox, SandboxError
    from cruxtui.core.trace import numsteps

    cached = numsteps.load_cached(dataset)
    if cached is not None:
        return cached
    from rich.progress import Progress

    try:
        with (
            Sandbox() as sandbox,
            Progress(console=err, transient=True) as progress,
        ):
            bar = progress.add_task("counting steps (once per dataset)", total=len(dataset))

            def advance(done: int) -> bool:
                progress.update(bar, completed=done)
                return True

            counts = numsteps.load_or_count(dataset, sandbox=sandbox, progress=advance)
    except SandboxError as exc:
        raise CliError(str(exc)) from None
    if counts is None:  # pragma: no cover - only when progress() asks to stop
        raise CliError("counting steps was stopped")
    return counts


def _write_files(
    args: argparse.Namespace, slice_: Slice, groups: list[Group], numsteps: Any
) -> None:
    from cruxtui.core.insights import tables
    from cruxtui.core.insights.results import InsightsError
    from cruxtui.core.util.atomic import atomic_write_text

    for path, render in ((args.csv, tables.csv_text), (args.markdown, tables.markdown)):
        if path:
            try:
                atomic_write_text(path, render(slice_, groups))
            except OSError as exc:
                raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    if args.plot:
        from cruxtui.core.insights.figures import write_figure

        try:
            write_figure(slice_, groups, args.plot, numsteps)
        except InsightsError as exc:
            raise CliError(str(exc)) from None


def _print_table(
    out: Console, slice_: Slice, groups: list[Group], args: argparse.Namespace
) -> None:
    from rich import box
    from rich.table import Table

    total = slice_.total
    paired = total.paired is not None
    name = "A" if paired else ""
    head = f"{name + ' = ' if name else ''}[bold]{slice_.label}[/]  task [bold]{slice_.task}[/]  "
    head += f"{total.samples} samples, {total.predictions} predictions"
    if paired:
        head += f"\nB = [bold]{slice_.against}[/] (both measured on the samples they share)"
    out.print(head, highlight=False)
    title = f"pass@1 x100 by {slice_.by}, 95% bootstrap intervals"
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column(slice_.by, no_wrap=True, overflow="ellipsis", max_width=24)
    table.add_column("samples", justify="right", no_wrap=True)
    if not paired:
        table.add_column("predictions", justify="right", no_wrap=True)
    for label in ("A", "A 95%") if paired else ("pass@1", "95% interval"):
        table.add_column(label, justify="right", no_wrap=True)
    if paired:
        for label in ("B", "A-B", "A-B 95%", "A only", "B only"):
            table.add_column(label, justify="right", no_wrap=True)
    for group in [*groups, total]:
        row = [group.name, str(group.samples)]
        if not paired:
            row.append(str(group.predictions))
        row += [f"{group.pass_at_1:.1f}", f"[{group.interval[0]:.1f}, {group.interval[1]:.1f}]"]
        if group.paired is not None:
            p = group.paired
            lo, hi = p.delta_interval
            style = {1: "green", -1: "red"}.get(group.direction, "")
            row += [
                f"{p.pass_at_1:.1f}",
                f"[{style}]{p.delta:+.1f}[/]" if style else f"{p.delta:+.1f}",
                f"[{lo:+.1f}, {hi:+.1f}]",
                str(len(p.contingency.a_only)),
                str(len(p.contingency.b_only)),
            ]
        table.add_row(*row, end_section=bool(groups) and group is groups[-1])
    out.print(table)
    hidden = len(slice_.groups) - len(groups)
    if hidden:
        out.print(f"{hidden} groups of fewer than {args.min_samples} samples not shown.")
    if paired:
        _print_contingency(out, slice_)
    for path in (args.csv, args.markdown, args.plot):
        if path:
            out.print(f"wrote {path}", highlight=False)


def _print_contingency(out: Console, slice_: Slice) -> None:
    from rich import box
    from rich.table import Table

    assert slice_.total.paired is not None
    cells = slice_.total.paired.contingency
    table = Table(
        title="samples passed (at least half their generations pass)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("", no_wrap=True)
    table.add_column("B passes", justify="right")
    table.add_column("B fails", justify="right")
    table.add_row("A passes", str(len(cells.both)), str(len(cells.a_only)))
    table.add_row("A fails", str(len(cells.b_only)), str(len(cells.neither)))
    out.print(table)
    for what, ids in (("A only", cells.a_only), ("B only", cells.b_only)):
        if ids:
            shown = ", ".join(ids[:12]) + (f", ... {len(ids) - 12} more" if len(ids) > 12 else "")
            out.print(f"{what} ({len(ids)}): {shown}", highlight=False)
