"""The `numsteps` Browse column and filter: how much work each sample does, as the benchmark's
filter measured it, so the table can sort by it and the palette can narrow it (`numsteps<100`).

Counting traces all samples in the sandbox (seconds), so it never delays the first paint: cached
counts (per dataset digest) show at once, otherwise a worker counts after start-up when the CLI
asked for it (the default; `--no-step-counts` turns it off), or when the palette command runs.
An app built without CLI options (embedding, tests) does no background counting by itself.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.worker import get_current_worker

from cruxtui.core.trace import numsteps
from cruxtui.tui.columns import Column

if TYPE_CHECKING:
    from cruxtui.core.sandbox.pool import Sandbox
    from cruxtui.tui.app import CruxApp

KEY = "numsteps"
_ATTR = "_crux_numsteps"
_QUERY = re.compile(r"^\s*(?:num)?steps\s*(<=|>=|<|>|==|=)\s*(\d+)\s*$", re.IGNORECASE)
_OPS: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=": operator.eq,
    "==": operator.eq,
}


def counts_of(app: Any) -> dict[str, int] | None:
    """The step counts the app holds (None until loaded or counted)."""
    return getattr(app, _ATTR, None)


def install(app: CruxApp) -> None:
    """On start-up: show cached counts now; otherwise count in a worker if the options say so."""
    cached = numsteps.load_cached(app.dataset)
    if cached is not None:
        _show(app, cached)
    elif getattr(app.options, "step_counts", False):
        start_counting(app)


def app_sandbox(sandbox: Sandbox | None = None) -> Sandbox:
    """`sandbox`, else the shared one, created HERE on the app's thread: sandbox workers die with
    the thread that started them (PDEATHSIG), so a thread worker must never be first to ask."""
    if sandbox is not None:
        return sandbox
    from cruxtui.core.sandbox.pool import default_sandbox

    return default_sandbox()


def start_counting(app: CruxApp, then: Callable[[], None] | None = None) -> None:
    """Count every sample's steps in a thread worker, then add the column (and run `then`)."""
    app.run_worker(
        partial(_count, app, app_sandbox(), then),
        thread=True,
        name="Counting steps",
        group=KEY,
        exclusive=True,
        exit_on_error=False,
    )


def _count(app: CruxApp, sandbox: Sandbox, then: Callable[[], None] | None) -> None:
    worker = get_current_worker()
    counts = numsteps.load_or_count(
        app.dataset, sandbox=sandbox, progress=lambda done: not worker.is_cancelled
    )
    if counts is not None and not worker.is_cancelled:
        app.call_from_thread(_show, app, counts)
        if then is not None:
            app.call_from_thread(then)


def _show(app: CruxApp, counts: dict[str, int]) -> None:
    setattr(app, _ATTR, counts)
    app.set_column(
        Column(
            KEY,
            "numsteps",
            value=lambda s: str(counts[s.id]) if s.id in counts else "",
            sort_key=lambda s: counts.get(s.id, -1),
            width=9,
        )
    )


def set_filter(app: CruxApp, op: str, bound: int) -> None:
    """Keep only samples whose numsteps compares `op` to `bound` (counting first if needed)."""
    counts = counts_of(app)
    if counts is None:
        app.notify("Counting steps for every sample first…", timeout=4)
        start_counting(app, then=partial(set_filter, app, op, bound))
        return
    compare = _OPS[op]
    clear_filter(app)  # one numsteps filter at a time: a new bound replaces the old one
    app.set_filter(
        f"numsteps{op}{bound}", lambda s: s.id in counts and compare(counts[s.id], bound)
    )


def clear_filter(app: CruxApp) -> None:
    for name in [n for n in app.extra_filters if n.startswith(KEY)]:
        app.set_filter(name, None)


class StepCommands(Provider):
    """Palette: `numsteps<100` (also `steps>=50`, `=`) filters Browse; counting on demand."""

    @property
    def _app(self) -> CruxApp:
        return self.app  # type: ignore[return-value]

    def _fixed(self) -> list[tuple[str, Callable[[], None], str]]:
        app = self._app
        commands = []
        if counts_of(app) is None:
            commands.append(
                (
                    "Count steps (numsteps) for every sample",
                    partial(start_counting, app),
                    "adds a sortable numsteps column to Browse",
                )
            )
        if any(n.startswith(KEY) for n in app.extra_filters):
            commands.append(
                ("Clear the numsteps filter", partial(clear_filter, app), "show every sample again")
            )
        return commands

    async def discover(self) -> Hits:
        for label, command, help_text in self._fixed():
            yield DiscoveryHit(label, command, help=help_text)

    async def search(self, query: str) -> Hits:
        found = _QUERY.match(query)
        if found:
            op, bound = found.group(1), int(found.group(2))
            yield Hit(
                1.0,
                f"Show samples with numsteps {op} {bound}",
                partial(set_filter, self._app, op, bound),
                help="a Browse filter on the step count",
            )
            return
        matcher = self.matcher(query)
        for label, command, help_text in self._fixed():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), command, help=help_text)
