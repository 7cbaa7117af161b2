"""Insights speed: every slice of a run of 800 samples x n=100 (80,000 generations). Goal: < 1 s.

A temporary run store gets two synthetic runs over the 800 benchmark samples, 100 generations
each (each sample has its own difficulty; the second run is a little better), written the way
`cruxtui runs --import` writes them. Then, as `cruxtui stats` does: read the run's counts from
the store and slice it by all seven dimensions, each group with its bootstrap interval (1,000
resamples); then the same against the second run (paired intervals and contingency tables too).

"cold" starts from a freshly loaded dataset, so it pays the samples' lazily derived metadata
(the methods called are found by parsing each function); "warm" is the median of 5 more rounds.
Side by side, the same slices with the pure-Python resampler this project used before numpy
(`random.choices`), for the ratio. Step counts come from the numsteps cache (counted once per
dataset, before timing, as the CLI does).

Usage: python benchmarks/bench_insights.py [DATASET]   (default: ../shared/data/cruxeval.jsonl)
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.core.insights import slices
from cruxtui.core.insights.dimensions import DIMENSIONS, SampleFacts
from cruxtui.core.insights.results import from_run
from cruxtui.core.runs.store import Generation, RunConfig, RunStore
from cruxtui.core.sandbox.pool import Sandbox
from cruxtui.core.scoring import passk
from cruxtui.core.trace import numsteps

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CRUXTUI_SHARED_DATA") or REPO.parent / "shared" / "data")
GOAL_S = 1.0
N = 100
WARM_ROUNDS = 5


def make_run(store: RunStore, dataset: Dataset, name: str, lift: float, seed: int) -> str:
    config = RunConfig(
        spec={"backend": "replay", "model": name},
        task="output",
        mode="direct" if lift == 0 else "cot",
        style="benchmark",
        params={"n": N},
        template_version="bench",
        dataset_digest=dataset.digest,
    )
    info = store.open_run(config)
    difficulty = random.Random(0)  # the same difficulty per sample in both runs
    draws = random.Random(seed)
    rows = []
    for sample in dataset.samples:
        p = min(1.0, difficulty.betavariate(0.6, 1.0) + lift)
        for i in range(N):
            passed = draws.random() < p
            rows.append(
                Generation(sample.id, i, "x", "x", "pass" if passed else "wrong", passed, "")
            )
    store.add_generations(info.id, rows)
    return info.id


def all_slices(
    store: RunStore, facts: SampleFacts, run: str, against: str | None
) -> list[slices.Slice]:
    """What `cruxtui stats` does for each `--by`, for all of them: read the run once, slice."""
    _, results = from_run(store, run)
    other = from_run(store, against)[1] if against else None
    return [slices.slice_results(results, by, facts, against=other) for by in DIMENSIONS]


def load_only(store: RunStore, run: str) -> float:
    return timed(lambda: from_run(store, run))


CPU: dict[str, float] = {}
"""CPU seconds of the last timed call by label: on a shared machine the wall clock also counts
the time other processes had the cores, the CPU time only this one's work."""


def timed(fn: Callable[[], object], label: str = "") -> float:
    """Wall seconds for one call, with the interval caches emptied first (nothing carried over)."""
    passk._interval.cache_clear()
    passk._paired.cache_clear()
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    if label:
        CPU[label] = time.process_time() - c0
    return time.perf_counter() - t0


def python_interval(
    values: Sequence[float], resamples: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """The previous resampler: `random.choices` in a Python loop (nearest-rank percentiles), and
    no cache."""
    if not values:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return means[int(0.025 * (resamples - 1))], means[int(0.975 * (resamples - 1))]


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED / "cruxeval.jsonl"
    dataset = load_dataset(path, offline=True)
    with Sandbox() as sandbox:
        counts = numsteps.load_or_count(dataset, sandbox=sandbox)
    assert counts is not None
    with tempfile.TemporaryDirectory() as tmp, RunStore(Path(tmp) / "runs.sqlite") as store:
        t0 = time.perf_counter()
        a = make_run(store, dataset, "bench-a", 0.0, 1)
        b = make_run(store, dataset, "bench-b", 0.1, 2)
        print(
            f"{dataset.description}; 2 runs x {len(dataset)} samples x n={N} "
            f"({store.run(a).generations:,} generations each) written in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        fresh = load_dataset(path, offline=True)  # metadata not derived yet
        cold = timed(lambda: all_slices(store, SampleFacts(fresh, counts), a, None), "cold")
        facts = SampleFacts(dataset, counts)
        all_slices(store, facts, a, None)
        warm = statistics.median(
            timed(lambda: all_slices(store, facts, a, None), "warm") for _ in range(WARM_ROUNDS)
        )
        paired = statistics.median(
            timed(lambda: all_slices(store, facts, a, b), "paired") for _ in range(WARM_ROUNDS)
        )
        reading = statistics.median(load_only(store, a) for _ in range(WARM_ROUNDS))
        groups = sum(len(s.groups) + 1 for s in all_slices(store, facts, a, None))
        numpy_interval = slices.interval
        slices.interval = python_interval  # type: ignore[assignment]
        try:
            baseline = timed(lambda: all_slices(store, facts, a, None), "baseline")
        finally:
            slices.interval = numpy_interval
    print(f"all {len(DIMENSIONS)} slices ({groups} groups with intervals), from the store:")
    print(f"  reading the run's counts (part of each) {reading:6.3f} s wall")
    rows = (
        ("cold (fresh dataset: methods parsed)", cold, "cold"),
        (f"warm (median of {WARM_ROUNDS})", warm, "warm"),
        ("against a second run (paired, warm)", paired, "paired"),
        ("previous Python resampler, no cache", baseline, "baseline"),
    )
    for name, wall, label in rows:
        print(f"  {name:<39} {wall:6.3f} s wall  {CPU[label]:6.3f} s CPU")
    print(
        f"  goal < {GOAL_S:.1f} s (cold, wall); numpy vs the Python resampler: {baseline / warm:.1f}x"
    )
    load = os.getloadavg()[0]
    print(f"  load average {load:.1f} on {os.cpu_count()} cores while measuring")
    ok = cold < GOAL_S
    print("goal met" if ok else "GOAL MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
