"""pass@k as the benchmark reports it, and bootstrap intervals over samples as the paper plots them."""

from __future__ import annotations

import random
from collections.abc import Sequence

PERCENTILES = (2.5, 25.0, 50.0, 75.0, 97.5)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimator of pass@k from n generations with c correct (0..1), as the benchmark.

    `1 - prod(1 - k / i for i in n-c+1..n)`, the benchmark's formula (it agrees with its numpy
    version to the last bits). One deliberate difference: with no correct generation the answer is
    0 even when n < k, where the benchmark's shortcut says 1.
    """
    if c == 0:
        return 0.0
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def mean_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """pass@k averaged over samples, x100. `counts` holds (n, c) per sample."""
    if not counts:
        return 0.0
    return sum(pass_at_k(n, c, k) for n, c in counts) / len(counts) * 100


def bootstrap(
    counts: Sequence[tuple[int, int]],
    k: int,
    resamples: int = 1000,
    seed: int = 0,
    percentiles: Sequence[float] = PERCENTILES,
) -> dict[str, float]:
    """Percentiles of mean pass@k (x100) over `resamples` resamplings of the samples, with replacement.

    Keys are the percentiles as text ("2.5", "25", ...). Seeded, so a report is reproducible.
    """
    if not counts:
        return {_label(p): 0.0 for p in percentiles}
    per_sample = [pass_at_k(n, c, k) for n, c in counts]
    rng = random.Random(seed)
    size = len(per_sample)
    means = sorted(sum(rng.choices(per_sample, k=size)) / size * 100 for _ in range(resamples))
    return {_label(p): _percentile(means, p) for p in percentiles}


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _label(p: float) -> str:
    return f"{p:g}"
