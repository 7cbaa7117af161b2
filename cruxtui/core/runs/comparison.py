"""Comparing two runs: pass@1 of each with bootstrap intervals, and the samples they disagree on.

Both runs are measured on the samples they *share*, so a run over 50 samples is not compared with
a run over 800 as if the sets were the same. The intervals resample samples (the unit the benchmark
averages over); the difference's interval resamples them in pairs, which is what says whether one
run is really better on this set.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from cruxtui.core.runs.store import RunInfo, RunStore
from cruxtui.core.scoring.passk import bootstrap
from cruxtui.core.util.natural import natural_key


@dataclass(frozen=True)
class Disagreement:
    sample_id: str
    rate_a: float
    rate_b: float
    """Fraction of each run's generations for the sample that passed."""

    @property
    def delta(self) -> float:
        return self.rate_b - self.rate_a


@dataclass(frozen=True)
class Comparison:
    a: RunInfo
    b: RunInfo
    shared: int
    pass_a: float
    pass_b: float
    interval_a: tuple[float, float]
    interval_b: tuple[float, float]
    interval_delta: tuple[float, float]
    disagreements: list[Disagreement]
    """Samples where one run's majority verdict is pass and the other's is fail, largest gap first."""

    def to_json(self) -> dict[str, object]:
        return {
            "a": self.a.id,
            "b": self.b.id,
            "shared_samples": self.shared,
            "pass_at_1_a": 100 * self.pass_a,
            "pass_at_1_b": 100 * self.pass_b,
            "interval_a": [100 * x for x in self.interval_a],
            "interval_b": [100 * x for x in self.interval_b],
            "interval_delta": [100 * x for x in self.interval_delta],
            "disagreements": [
                {"sample_id": d.sample_id, "rate_a": d.rate_a, "rate_b": d.rate_b}
                for d in self.disagreements
            ],
        }


def _paired_delta_interval(
    pairs: list[tuple[float, float]], resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    if not pairs:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(pairs)
    deltas = sorted(sum(b - a for a, b in rng.choices(pairs, k=n)) / n for _ in range(resamples))
    return deltas[int(0.025 * (resamples - 1))], deltas[int(0.975 * (resamples - 1))]


def _interval(counts: list[tuple[int, int]]) -> tuple[float, float]:
    """95% percentile bootstrap interval of pass@1 (0..1) over these samples' (n, c)."""
    pct = bootstrap(counts, 1, resamples=2000, percentiles=(2.5, 97.5))
    return pct["2.5"] / 100, pct["97.5"] / 100


def compare_runs(store: RunStore, ref_a: str, ref_b: str) -> Comparison:
    """Compare two stored runs (ids or unique id prefixes)."""
    a, b = store.run(ref_a), store.run(ref_b)
    counts_a, counts_b = store.counts(a.id), store.counts(b.id)
    shared = sorted(set(counts_a) & set(counts_b), key=natural_key)
    rates = [(counts_a[s][1] / counts_a[s][0], counts_b[s][1] / counts_b[s][0]) for s in shared]
    interval_a, interval_b = (
        _interval([counts[s] for s in shared]) for counts in (counts_a, counts_b)
    )
    ra = [x for x, _ in rates]
    rb = [y for _, y in rates]
    disagreements = [
        Disagreement(s, x, y)
        for s, (x, y) in zip(shared, rates, strict=True)
        if (x >= 0.5) != (y >= 0.5)
    ]
    disagreements.sort(key=lambda d: (-abs(d.delta), natural_key(d.sample_id)))
    return Comparison(
        a=a,
        b=b,
        shared=len(shared),
        pass_a=sum(ra) / len(ra) if ra else 0.0,
        pass_b=sum(rb) / len(rb) if rb else 0.0,
        interval_a=interval_a,
        interval_b=interval_b,
        interval_delta=_paired_delta_interval(rates),
        disagreements=disagreements,
    )
