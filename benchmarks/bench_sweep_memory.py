"""Memory over a long sweep: resident memory at 10k, 50k and 100k generations stays flat.

A sweep of 100,000 generations (the 800 samples x n=25 x 5 temperatures, one cell per
temperature, two cells at once) against the local test server (its own process, 5 ms latency,
answers a mix of right and wrong) into a fresh store, through `run_sweep`: the path `cruxtui sweep`
takes. The resident set (`/proc/self/statm`) is sampled as the sweep passes 10k, 50k and 100k
generations stored, next to the peak so far (`ru_maxrss`). Anything the runner kept per generation
(lists of results, of tasks, of failures, a progress history) would show as growth between the
samples. Goal: RSS at 100k within 10% (and 20 MiB) of RSS at 10k.

Usage: python benchmarks/bench_sweep_memory.py [--dataset cruxeval.jsonl] [--n 25] [--cells 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench_runner import DEFAULT_DATASET, start_server  # noqa: E402

from cruxtui.core.data.dataset import load_dataset  # noqa: E402
from cruxtui.core.runs.runner import Progress  # noqa: E402
from cruxtui.core.runs.store import RunStore  # noqa: E402
from cruxtui.core.runs.sweep import Cell, Sweep, SweepEndpoint, SweepListener, run_sweep  # noqa: E402

MARKS = (10_000, 50_000, 100_000)
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Sampler(SweepListener):
    """Sums the cells' progress; records RSS when the total passes each mark."""

    def __init__(self, marks: tuple[int, ...]) -> None:
        self.done: dict[Cell, int] = {}
        self.marks = list(marks)
        self.samples: list[tuple[int, float, float, float]] = []
        self.t0 = time.perf_counter()

    def on_cell_progress(self, cell: Cell, progress: Progress) -> None:
        self.done[cell] = progress.done
        total = sum(self.done.values())
        while self.marks and total >= self.marks[0]:
            self.samples.append(
                (self.marks.pop(0), rss_mib(), peak_mib(), time.perf_counter() - self.t0)
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--n", type=int, default=25)
    parser.add_argument("--cells", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    dataset = load_dataset(args.dataset, offline=True)
    total = len(dataset) * args.n * args.cells
    marks = tuple(m for m in MARKS if m <= total)
    proc, url = start_server("--latency", "0.005", "--mode", "mixed", "--dataset", args.dataset)
    try:
        endpoint = SweepEndpoint(
            "local", ("fake-model",), concurrency=args.concurrency, base_url=url
        )
        temps = [round(0.2 * (k + 1), 1) for k in range(args.cells)]
        cells = [
            Cell(
                endpoint="local",
                model="fake-model",
                task="output",
                mode="direct",
                temperature=t,
                n=args.n,
                seed=1,
            )
            for t in temps
        ]
        sweep = Sweep({"local": endpoint}, cells, None, retry_wait=0.1, attempts=1)
        sampler = Sampler(marks)
        print(
            f"sweep: {len(cells)} cells x {len(dataset)} samples x n={args.n} = {total} "
            f"generations; concurrency {args.concurrency}; RSS before {rss_mib():.1f} MiB"
        )
        with tempfile.TemporaryDirectory() as tmp, RunStore(Path(tmp) / "runs.sqlite") as store:
            results = asyncio.run(
                run_sweep(sweep, store, dataset, [s.id for s in dataset.samples], sampler)
            )
            stored = sum(sum(m for m, _ in r.counts.values()) for r in results)
    finally:
        proc.terminate()
        proc.wait()
    for mark, rss, peak, at in sampler.samples:
        print(f"  {mark:>7} generations: RSS {rss:7.1f} MiB, peak {peak:7.1f} MiB ({at:6.1f} s)")
    print(f"stored {stored} generations")
    first, last = sampler.samples[0][1], sampler.samples[-1][1]
    growth = last - first
    ok = growth <= 0.1 * first and growth <= 20
    print(
        f"growth from {marks[0]} to {marks[-1]} generations: {growth:+.1f} MiB "
        f"({100 * growth / first:+.1f}%)  (goal within 10% and 20 MiB: {'PASS' if ok else 'FAIL'})"
    )


if __name__ == "__main__":
    main()
