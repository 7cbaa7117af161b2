"""Tracing speed. Goals: trace all 800 samples, each isolated in the sandbox, in < 5 s; open the
Trace screen on a 1,000-step trace in < 200 ms.

Printed side by side in one run:
- all samples traced in the sandbox (2 workers, one forked child per sample), with the same
  tracing without the per-line sub-expression values, the same work in-process (no isolation)
  and the sandbox's plain `exec_call` over the same samples as yardsticks;
- opening the Trace screen on a prepared 1,000-step trace (mount + first step shown), next to
  opening a bare screen the same way (Pilot's own fixed cost), and one step forward on it.
Usage: python benchmarks/bench_trace.py [DATASET]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from textual.screen import Screen
from textual.widgets import Static

from cruxtui.core.data.dataset import Sample, load_dataset
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.sandbox.pool import Sandbox
from cruxtui.core.trace.steps import JOB, payload_for, trace, trace_many
from cruxtui.tui.app import CruxApp
from cruxtui.tui.screens.trace_screen import TraceScreen

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO.parent / "shared" / "data" / "cruxeval.jsonl"
LOOP = "def f(n, total=0):\n    for i in range(n):\n        total += i\n    return total"
"""Two line steps per iteration plus four: f(498) gives exactly 1,000 steps."""


def bench_all(samples: list[Sample]) -> None:
    items = [(s.code, s.call, s.output) for s in samples]
    started = time.perf_counter()
    with Sandbox() as box:
        ready = time.perf_counter()
        trace_many(items[:4], sandbox=box)  # load the job into the workers, as a running app has
        rounds = []
        for _ in range(2):  # two rounds: on a shared machine the spread says how noisy it is
            t0 = time.perf_counter()
            traces = trace_many(items, sandbox=box)
            rounds.append(time.perf_counter() - t0)
        sandboxed = min(rounds)
        bare_jobs = [
            (JOB, payload_for(c, k, expected=e) | {"line_values": False}) for c, k, e in items
        ]
        t0 = time.perf_counter()
        list(box.map(bare_jobs))
        no_values = time.perf_counter() - t0
        t0 = time.perf_counter()
        list(
            box.map(
                ("cruxtui.core.sandbox.jobs.checks:exec_call", {"code": c, "call": k})
                for c, k, _ in items
            )
        )
        plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    for code, call, expected in items:
        tracer.run(code, call, expected=expected)
    in_process = time.perf_counter() - t0
    t0 = time.perf_counter()
    for code, call, expected in items:
        tracer.run(code, call, expected=expected, line_values=False)
    in_process_bare = time.perf_counter() - t0
    steps = sum(len(t.steps) for t in traces)
    print(
        f"trace all {len(items)} samples, sandboxed: {sandboxed:.2f} s (goal < 5 s; rounds "
        f"{', '.join(f'{r:.2f}' for r in rounds)} s)  [{steps:,} steps; sandbox start "
        f"{ready - started:.2f} s not included]"
    )
    print(
        f"  same tracing without the sub-expression values: {no_values:.2f} s "
        f"(recording them adds {sandboxed / no_values:.2f}x)"
    )
    print(
        f"  same samples, plain exec_call in the sandbox: {plain:.2f} s "
        f"(tracing adds {sandboxed / plain:.2f}x)"
    )
    print(
        f"  same tracing in-process, not isolated: {in_process:.2f} s "
        f"({in_process_bare:.2f} s without the sub-expression values)"
    )


class _Bare(Screen[None]):
    def compose(self):  # type: ignore[no-untyped-def]
        yield Static("bare")


async def bench_open(samples: list[Sample], runs: int = 15) -> None:
    sample = Sample("bench_loop", LOOP, "498", "123753")
    with Sandbox(workers=1) as box:
        t0 = time.perf_counter()
        big = trace(sample.code, sample.call, sandbox=box)
        traced = time.perf_counter() - t0
    assert len(big.steps) == 1000, len(big.steps)
    app = CruxApp(load_dataset(samples_path(), offline=True))
    opening: list[float] = []
    bare: list[float] = []
    stepping: list[float] = []
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        for _ in range(runs):
            t0 = time.perf_counter()
            await app.push_screen(TraceScreen(app.state, sample, trace=big))
            await pilot.pause()
            opening.append((time.perf_counter() - t0) * 1000)
            screen = app.screen
            assert isinstance(screen, TraceScreen) and screen.index == 0
            t0 = time.perf_counter()
            screen.goto(500)
            for widget in (screen.query_one("#trace-code"), screen.query_one("#trace-timeline")):
                widget.render()
            stepping.append((time.perf_counter() - t0) * 1000)
            app.pop_screen()
            await pilot.pause()
            t0 = time.perf_counter()
            await app.push_screen(_Bare())
            await pilot.pause()
            bare.append((time.perf_counter() - t0) * 1000)
            app.pop_screen()
            await pilot.pause()
    print(
        f"open the Trace screen on a 1,000-step trace: median {statistics.median(opening):.0f} ms, "
        f"min {min(opening):.0f}, max {max(opening):.0f} ms over {runs} (goal < 200 ms)"
    )
    print(
        f"  a bare screen opened the same way: median {statistics.median(bare):.0f} ms, "
        f"min {min(bare):.0f} ms (Pilot's fixed cost)"
    )
    print(
        f"  jump to step 500 and render code + timeline: median {statistics.median(stepping):.1f} ms"
    )
    print(f"  tracing that call in the sandbox: {traced * 1000:.0f} ms")


def samples_path() -> str:
    return sys.argv[1] if len(sys.argv) > 1 else str(DEFAULT)


def main() -> None:
    samples = load_dataset(samples_path(), offline=True).samples
    bench_all(samples)
    asyncio.run(bench_open(samples))


if __name__ == "__main__":
    main()
