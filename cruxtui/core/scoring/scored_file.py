"""Verdicts for a whole generations file: pass@k both ways, intervals, and the scored file."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cruxtui.core.data.dataset import Dataset
from cruxtui.core.sandbox.pool import Sandbox
from cruxtui.core.scoring.generations_file import Generations
from cruxtui.core.scoring.passk import bootstrap, mean_pass_at_k
from cruxtui.core.scoring.verdicts import KINDS, Verdict, check_many


@dataclass
class ScoredSet:
    """Verdicts for a whole generations file: per sample, one verdict per prediction, in order."""

    task: str
    generations: Generations
    verdicts: dict[str, list[Verdict]]

    def counts(self, official: bool = False) -> list[tuple[int, int]]:
        """(n, c) per sample: generations and how many passed (ours, or the official check's)."""
        return [
            (len(vs), sum(bool(v.official) if official else v.passed for v in vs))
            for vs in self.verdicts.values()
        ]

    def pass_at(self, k: int, official: bool = False) -> float | None:
        """Mean pass@k x100; None if some sample has fewer than k generations."""
        counts = self.counts(official)
        if not counts or min(n for n, _ in counts) < k:
            return None
        return mean_pass_at_k(counts, k)

    def intervals(self, k: int, official: bool = False) -> dict[str, float] | None:
        """Bootstrap percentiles (2.5 / 25 / 50 / 75 / 97.5) of pass@k x100 over samples."""
        counts = self.counts(official)
        if not counts or min(n for n, _ in counts) < k:
            return None
        return bootstrap(counts, k)

    def pass_rate(self, sample_id: str) -> float | None:
        """Fraction of this sample's predictions that pass (ours); None if it has none."""
        verdicts = self.verdicts.get(sample_id)
        if not verdicts:
            return None
        return sum(v.passed for v in verdicts) / len(verdicts)

    def kinds(self) -> Counter[str]:
        """How many predictions ended in each verdict kind."""
        return Counter(v.kind for vs in self.verdicts.values() for v in vs)

    def disagreements(self) -> list[tuple[str, int, Verdict]]:
        """(sample id, index, verdict) wherever the official spliced check judges differently."""
        return [
            (sample_id, index, verdict)
            for sample_id, vs in self.verdicts.items()
            for index, verdict in enumerate(vs)
            if verdict.disagrees
        ]

    @property
    def size(self) -> int:
        return sum(len(vs) for vs in self.verdicts.values())

    def summary(self) -> dict[str, Any]:
        """The machine-readable summary (`cruxtui score --json`)."""
        scores: dict[str, Any] = {}
        for name, official in (("strict", False), ("official", True)):
            scores[name] = {f"pass_at_{k}": self.pass_at(k, official) for k in (1, 5)} | {
                f"pass_at_{k}_intervals": self.intervals(k, official) for k in (1, 5)
            }
        kinds = self.kinds()
        return {
            "task": self.task,
            "samples": len(self.verdicts),
            "predictions": self.size,
            "scores": scores,
            "kinds": {kind: kinds[kind] for kind in KINDS if kinds[kind]},
            "disagreements": [
                {
                    "sample": sample_id,
                    "index": index,
                    "official": v.official,
                    "strict": v.passed,
                    "kind": v.kind,
                    "reason": v.reason,
                }
                for sample_id, index, v in self.disagreements()
            ],
        }

    def to_document(self) -> dict[str, Any]:
        """The scored file: the benchmark's keys (official-compatible), ours under "cruxtui"."""
        official = {sid: [bool(v.official) for v in vs] for sid, vs in self.verdicts.items()}
        return {
            "raw_generations": self.generations,
            "raw_scored_generations": official,
            "pass_at_1": self.pass_at(1, official=True),
            "pass_at_5": self.pass_at(5, official=True),
            "cruxtui": {
                "task": self.task,
                "summary": self.summary(),
                "verdicts": {sid: [v.to_json() for v in vs] for sid, vs in self.verdicts.items()},
            },
        }


def score_generations(
    dataset: Dataset,
    generations: Generations,
    task: str,
    sandbox: Sandbox | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ScoredSet:
    """Judge every prediction of a generations file (ids must exist in `dataset`)."""
    pairs = [(dataset[sid], p) for sid, predictions in generations.items() for p in predictions]
    flat = check_many(pairs, task, sandbox=sandbox, progress=progress)
    verdicts: dict[str, list[Verdict]] = {}
    position = 0
    for sample_id, predictions in generations.items():
        verdicts[sample_id] = flat[position : position + len(predictions)]
        position += len(predictions)
    return ScoredSet(task, generations, verdicts)
