"""Comparing two runs: pass@1 of each with bootstrap intervals, and the samples they disagree on.

Both runs are measured on the samples they *share*, so a run over 50 samples is not compared with
a run over 800 as if the sets were the same. The intervals resample samples (the unit the benchmark
averages over); the difference's interval resamples them in pairs, which is what says whether one
run is really better on this set.
"""

from __future__ import annotations

from dataclasses import dataclass

from cruxtui.core.runs.store import RunInfo, RunStore
from cruxtui.core.scoring.passk import paired_intervals
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


_RESAMPLES = 2000


def compare_runs(store: RunStore, ref_a: str, ref_b: str) -> Comparison:
    """Compare two stored runs (ids or unique id prefixes)."""
    a, b = store.run(ref_a), store.run(ref_b)
    counts_a, counts_b = store.counts(a.id), store.counts(b.id)
    shared = sorted(set(counts_a) & set(counts_b), key=natural_key)
    rates = [(counts_a[s][1] / counts_a[s][0], counts_b[s][1] / counts_b[s][0]) for s in shared]
    ra = [x for x, _ in rates]
    rb = [y for _, y in rates]
    interval_b, interval_a, interval_delta = paired_intervals(rb, ra, _RESAMPLES)
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
        interval_delta=interval_delta,
        disagreements=disagreements,
    )
