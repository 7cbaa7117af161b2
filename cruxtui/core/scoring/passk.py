"""pass@k as the benchmark reports it, and bootstrap intervals over samples as the paper plots them."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

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
    values = tuple(sorted(pass_at_k(n, c, k) * 100 for n, c in counts))
    means = _resampled_means(((v,) for v in values), resamples, seed)[0]
    return {_label(p): _percentile(means, p) for p in percentiles}


Interval = tuple[float, float]


def interval(values: Sequence[float], resamples: int = 1000, seed: int = 0) -> Interval:
    """The 2.5 and 97.5 percentiles of the mean of `values` over bootstrap resamplings.

    `values` are per-sample numbers (e.g. each sample's pass rate). (0, 0) for no values.
    """
    if not len(values):
        return (0.0, 0.0)
    return _interval(tuple(sorted(values)), resamples, seed)


def paired_intervals(
    a: Sequence[float], b: Sequence[float], resamples: int = 1000, seed: int = 0
) -> tuple[Interval, Interval, Interval]:
    """Intervals of the mean of `a`, of `b` and of `a - b`, resampling the samples in pairs.

    `a[i]` and `b[i]` are two runs' numbers for the same sample. Each resampling picks samples,
    not values, so what varies from sample to sample (most of it: some programs are just hard)
    cancels out of the difference; that is what says whether one run is really better.
    """
    if len(a) != len(b):
        raise ValueError(f"paired values differ in length ({len(a)} and {len(b)})")
    if not len(a):
        return ((0.0, 0.0), (0.0, 0.0), (0.0, 0.0))
    return _paired(tuple(sorted(zip(a, b, strict=True))), resamples, seed)


@functools.lru_cache(maxsize=256)
def _interval(ordered: tuple[float, ...], resamples: int, seed: int) -> Interval:
    """Cached: slicing one run seven ways meets the same group (all samples) seven times."""
    means = _resampled_means(((v,) for v in ordered), resamples, seed)[0]
    return (_percentile(means, 2.5), _percentile(means, 97.5))


@functools.lru_cache(maxsize=256)
def _paired(
    pairs: tuple[tuple[float, float], ...], resamples: int, seed: int
) -> tuple[Interval, Interval, Interval]:
    mean_a, mean_b = _resampled_means(pairs, resamples, seed)
    delta = mean_a - mean_b
    return (
        (_percentile(mean_a, 2.5), _percentile(mean_a, 97.5)),
        (_percentile(mean_b, 2.5), _percentile(mean_b, 97.5)),
        (_percentile(delta, 2.5), _percentile(delta, 97.5)),
    )


_CELLS_PER_BLOCK = 4_000_000
"""Resampled indices drawn at once: bounds memory (32 MB) for pooled sets of many samples."""


def _resampled_means(rows: Iterable[Sequence[float]], resamples: int, seed: int) -> list[Any]:
    """For each column of `rows` (one row per sample), the means of `resamples` resamplings of
    the samples with replacement: the same resamplings for every column, so index i of each
    column's means comes from the same resampled samples (what pairing needs).

    Callers put the samples in a canonical order first, so the result depends on the values
    alone, not on the order a file or a run listed its samples in (`score` and `stats` agree).
    numpy draws the indices: slicing a run many ways with a thousand resamplings per group would
    take seconds in Python (`benchmarks/bench_insights.py` measures both).
    """
    import numpy as np

    data = np.asarray(list(rows), dtype=np.float64)
    size = len(data)
    rng = np.random.default_rng(seed)
    block = max(1, _CELLS_PER_BLOCK // size)
    parts = []
    for start in range(0, resamples, block):
        picks = rng.integers(0, size, size=(min(block, resamples - start), size))
        parts.append(data[picks].mean(axis=1))  # (resamples, columns)
    return list(np.concatenate(parts).T)


def _percentile(values: Any, q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    import numpy as np

    return float(np.percentile(values, q))


def _label(p: float) -> str:
    return f"{p:g}"
