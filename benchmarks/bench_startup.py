"""Process start to first paint of the Browse screen with all 800 samples. Goal: < 1.0 s.

Runs `python benchmarks/_first_paint.py DATASET` several times and times, from the parent,
the span from spawning the process to the child reporting that the full table was painted.
Usage: python benchmarks/bench_startup.py [DATASET] [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO.parent / "shared" / "data" / "cruxeval.jsonl"


def once(dataset: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "benchmarks" / "_first_paint.py"), dataset],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    elapsed = time.perf_counter() - t0
    proc.wait()
    return elapsed, line


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", nargs="?", default=str(DEFAULT))
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    once(args.dataset)  # warm the OS file cache and .pyc files
    times = []
    for _ in range(args.runs):
        t, line = once(args.dataset)
        if not line.startswith("painted"):
            sys.exit(f"child did not paint: {line!r}")
        times.append(t)
    print(
        f"start-up to first paint ({line}): median {statistics.median(times):.3f} s, "
        f"min {min(times):.3f} s, max {max(times):.3f} s over {args.runs} runs (goal < 1.0 s)"
    )


if __name__ == "__main__":
    main()
