"""`cruxtui sweep SWEEP.toml`: run a grid of configurations over several endpoints, resumably.

Each cell is an ordinary stored run (see `cruxtui.core.runs.sweep`); the same command after a
kill asks only for what is missing. One progress line for the whole sweep on stderr (naming the
endpoints that are down), what each transform skipped, and which endpoints were still down at the
end; a summary (or `--json`, one object per cell) on stdout; tables with `--markdown` / `--csv` /
`--latex`. Exit 1 when some cells are incomplete (their endpoint kept failing): run the same
command again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import TYPE_CHECKING

from cruxtui.cli.errors import CliError
from cruxtui.cli.options import Subparsers, add_dataset_option
from cruxtui.cli.runs_cmd import add_store_option, open_store

if TYPE_CHECKING:
    from cruxtui.core.perturb.variant_set import VariantSet
    from cruxtui.core.runs.runner import Progress
    from cruxtui.core.runs.sweep import Cell, CellResult, SweepListener


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "sweep", help="run a grid of models x tasks x modes over endpoints (resumable)"
    )
    p.add_argument("file", metavar="SWEEP.toml", help="the sweep: endpoints and a grid")
    p.add_argument("--json", action="store_true", help="one JSON summary object per cell")
    p.add_argument("--markdown", metavar="OUT", help="write the table as Markdown")
    p.add_argument("--csv", metavar="OUT", help="write the table as CSV")
    p.add_argument("--latex", metavar="OUT", help="write the table as a LaTeX tabular")
    add_store_option(p)
    add_dataset_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cruxtui.cli.options import open_dataset
    from cruxtui.core.runs import sweep as sweeps

    try:
        sweep = sweeps.load_sweep(args.file)
    except sweeps.SweepError as exc:
        raise CliError(str(exc)) from None
    dataset = open_dataset(args)
    try:
        ids = sweep.sample_ids(dataset)
    except sweeps.SweepError as exc:
        raise CliError(f"{args.file}: {exc}") from None
    try:
        variants = sweeps.sweep_variants(sweep, dataset, ids)
    except sweeps.SweepError as exc:
        raise CliError(f"{args.file}: {exc}") from None
    for vs in variants.values():
        _report_variants(vs)
    with open_store(args) as store:
        total = sum(len(variants[c.transform].samples) * c.n for c in sweep.cells)
        progress = _SweepProgress(len(sweep.cells), total, sweep.attempts)
        with progress:
            results = asyncio.run(
                sweeps.run_sweep(sweep, store, dataset, ids, progress.listener, variants)
            )
    summaries = [r.summary() for r in results]
    t = sweeps.table(summaries)
    for out, render in (
        (args.markdown, sweeps.to_markdown),
        (args.csv, sweeps.to_csv),
        (args.latex, sweeps.to_latex),
    ):
        if out:
            _write(out, render(t))
    if args.json:
        for s in summaries:
            print(json.dumps(s))
    else:
        sys.stdout.write(sweeps.to_markdown(t))
    incomplete = [r for r in results if not r.complete]
    for r in incomplete:
        print(
            f"cruxtui: incomplete: {r.cell.label} (run {r.run_id or '-'}, {r.missing} missing"
            f" after {r.attempts} attempt(s)): {r.error}",
            file=sys.stderr,
        )
    down: dict[str, str] = {}
    for r in results:
        if r.endpoint_down is not None:
            down.setdefault(r.cell.endpoint, r.endpoint_down)
    for name, reason in down.items():
        cells = sum(1 for r in incomplete if r.cell.endpoint == name)
        print(
            f"cruxtui: endpoint {name} is down ({reason}): {cells} of its cells incomplete",
            file=sys.stderr,
        )
    if incomplete:
        print(
            f"cruxtui: {len(incomplete)} of {len(results)} cells incomplete; "
            "run the same command to resume them",
            file=sys.stderr,
        )
    return 1 if incomplete else 0


def _report_variants(vs: VariantSet) -> None:
    """What a transform made of the samples (on stderr, before the run starts)."""
    from cruxtui.core.perturb.variant_set import NONE, describe_skipped

    if vs.transform == NONE:
        return
    skipped = describe_skipped(vs)
    print(
        f"{vs.transform}: {len(vs.samples)} variants"
        + (f"; {skipped.split(': ', 1)[1]}" if skipped else ""),
        file=sys.stderr,
    )


def _write(path: str, text: str) -> None:
    from cruxtui.core.util.atomic import atomic_write_text

    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


class _SweepProgress:
    """One line for the whole sweep: cells done, generations done / total, rate, ETA, failures.

    A rich bar on a terminal; elsewhere (pipes, logs) a plain line every few seconds."""

    def __init__(self, cells: int, total: int, attempts: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
        from rich.progress import Progress as Bar

        self.cells, self.total, self.attempts = cells, total, attempts
        self.cells_done = 0
        self._per_cell: dict[Cell, Progress] = {}
        self._down: dict[str, float] = {}
        """Endpoints that are down -> when their cells try again (`time.monotonic()`)."""
        self._started = time.monotonic()
        self._last_line = 0.0
        self._console = Console(file=sys.stderr)
        self._bar = Bar(
            BarColumn(bar_width=16),
            MofNCompleteColumn(),
            TextColumn("{task.fields[line]}"),
            console=self._console,
            disable=not self._console.is_terminal,
        )
        self._task = self._bar.add_task("sweep", total=self.total, line="")
        self.listener = self._listener()

    def __enter__(self) -> _SweepProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._draw(force=True)
        self._bar.stop()

    def _listener(self) -> SweepListener:
        from cruxtui.core.runs.sweep import SweepListener

        outer = self

        class Listener(SweepListener):
            def on_cell_progress(self, cell: Cell, progress: Progress) -> None:
                outer._per_cell[cell] = progress
                outer._draw()

            def on_cell_wait(self, cell: Cell, reason: str, wait: float) -> None:
                if cell.endpoint not in outer._down:  # a cell's own failures, not an outage
                    outer._say(f"waiting {wait:.3g}s to retry {cell.label}: {reason}")

            def on_endpoint_down(
                self, endpoint: str, reason: str, wait: float, round_: int
            ) -> None:
                outer._down[endpoint] = time.monotonic() + wait
                outer._say(
                    f"endpoint {endpoint} is down ({reason}): its cells retry in {wait:.3g}s "
                    f"(round {round_ + 1} of {outer.attempts}); the others go on"
                )
                outer._draw(force=True)

            def on_endpoint_up(self, endpoint: str) -> None:
                outer._down.pop(endpoint, None)
                outer._say(f"endpoint {endpoint} answers again")

            def on_endpoint_given_up(self, endpoint: str, reason: str) -> None:
                outer._down[endpoint] = float("inf")
                outer._say(
                    f"endpoint {endpoint} is still down ({reason}) after {outer.attempts} "
                    "rounds: its cells left are not tried"
                )

            def on_cell_done(self, result: CellResult) -> None:
                outer.cells_done += 1
                outer._draw(force=True)

        return Listener()

    def _say(self, text: str) -> None:
        self._console.print(text, highlight=False, soft_wrap=True, markup=False)

    def _down_text(self) -> str:
        now = time.monotonic()
        parts = []
        for name, at in sorted(self._down.items()):
            left = at - now
            left = max(left, 0.0)
            state = (
                "given up"
                if left == float("inf")
                else f"retry in {left:.1f}s"
                if left < 10
                else f"retry in {left:.0f}s"
            )
            parts.append(f"{name} ({state})")
        return ", ".join(parts)

    def _draw(self, force: bool = False) -> None:
        cells = self._per_cell.values()
        done = sum(p.done for p in cells)
        before = sum(p.stored_before for p in cells)
        failed = sum(p.failed for p in cells)
        elapsed = time.monotonic() - self._started
        rate = done / elapsed if elapsed > 0 else 0.0
        left = max(self.total - before - done, 0)
        eta = f"{left / rate:.0f}s" if rate > 0 else "?"
        line = (
            f"cells {self.cells_done}/{self.cells}  {rate:.1f} gen/s  eta {eta}"
            + (f"  failed {failed}" if failed else "")
            + (f"  down: {self._down_text()}" if self._down else "")
        )
        self._bar.update(self._task, completed=before + done, line=line)
        now = time.monotonic()
        if not self._console.is_terminal and (force or now - self._last_line >= 5):
            self._last_line = now
            print(f"sweep: {before + done}/{self.total} generations  {line}", file=sys.stderr)
