"""The `cruxtui run` progress bar: done / total, rate, ETA and pass@1 so far, on stderr."""

from __future__ import annotations

import logging
import sys

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from cruxtui.core.runs.runner import Progress as RunProgress
from cruxtui.core.runs.runner import RunListener


class ProgressListener(RunListener):
    """Draws a rich progress bar while a run goes (only when stderr is a terminal)."""

    def __init__(self, title: str) -> None:
        console = Console(file=sys.stderr)
        # Fits 80 columns: the title goes on its own line above the bar.
        self._bar = Progress(
            BarColumn(bar_width=16),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:6.1f}/s"),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("pass@1 {task.fields[pass1]:5.1f}{task.fields[failed]}"),
            console=console,
            disable=not console.is_terminal,
            transient=False,
        )
        if console.is_terminal:
            console.print(Text(title, style="bold"))
        self._task = self._bar.add_task(title, total=None, rate=0.0, pass1=0.0, failed="")

    def __enter__(self) -> ProgressListener:
        # The backends log each retry; shown above the bar on a terminal, kept out of pipes and
        # scripts, where the summary (and one error line) say what happened.
        self._log = logging.getLogger("cruxtui.models")
        self._handler: logging.Handler = (
            RichHandler(
                console=self._bar.console, show_time=False, show_path=False, show_level=False
            )
            if self._bar.console.is_terminal
            else logging.NullHandler()
        )
        self._log.addHandler(self._handler)
        self._log.propagate = False
        self._level = self._log.level
        self._log.setLevel(logging.INFO)  # retries are logged at INFO
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()
        self._log.removeHandler(self._handler)
        self._log.propagate = True
        self._log.setLevel(self._level)

    def on_progress(self, progress: RunProgress) -> None:
        self._bar.update(
            self._task,
            total=progress.total,
            completed=progress.done + progress.failed,
            rate=progress.rate,
            pass1=100 * progress.pass1,
            failed=f"  failed {progress.failed}" if progress.failed else "",
        )

    def on_failure(self, sample_id: str, index: int | None, error: str) -> None:
        if self._bar.console.is_terminal:
            where = sample_id + (f"#{index}" if index is not None else "")
            self._bar.console.print(Text.assemble(("failed ", "yellow"), f"{where}: {error}"))
