"""pass@k as the benchmark reports it, and bootstrap intervals over samples as the paper plots them."""

from __future__ import annotations

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
    means = resampled_means([pass_at_k(n, c, k) * 100 for n, c in counts], resamples, seed)
    return {_label(p): _percentile(means, p) for p in percentiles}


def interval(values: Sequence[float], resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The 2.5 and 97.5 percentiles of the mean of `values` over bootstrap resamplings.

    `values` are per-sample numbers (a pass rate, or the difference of two runs' rates on the
    same sample: resampling those differences is the paired bootstrap). (0, 0) for no values.
    """
    if not len(values):
        return (0.0, 0.0)
    means = resampled_means(values, resamples, seed)
    return (_percentile(means, 2.5), _percentile(means, 97.5))


_CELLS_PER_BLOCK = 4_000_000
"""Resampled indices drawn at once: bounds memory (32 MB) for pooled sets of many samples."""


def resampled_means(values: Sequence[float], resamples: int = 1000, seed: int = 0) -> list[float]:
    """Sorted means of `resamples` resamplings of `values` with replacement (seeded).

    The values are put in order first, so the result depends on the values alone, not on the
    order a file or a run listed its samples in (`score` and `stats` agree on the same set).
    numpy draws the indices: the insights slice every run many ways, and drawing 800 indices a
    thousand times per group in Python would take about a second for one run.
    """
    import numpy as np

    data = np.sort(np.asarray(values, dtype=np.float64))
    size = len(data)
    rng = np.random.default_rng(seed)
    block = max(1, _CELLS_PER_BLOCK // size)
    parts = []
    for start in range(0, resamples, block):
        rows = min(block, resamples - start)
        parts.append(data[rng.integers(0, size, size=(rows, size))].mean(axis=1))
    means = np.sort(np.concatenate(parts)) if parts else np.zeros(0)
    return [float(m) for m in means]


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _label(p: float) -> str:
    return f"{p:g}"
