"""Every transform over every sample: where each applies and why its variants get rejected.

Backs `cruxtui perturb --all` and the benchmark. Each transform runs with its default parameters
(the seed picks the site), so the counts describe the catalogue as a researcher first meets it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from cruxtui.core.data.dataset import Sample
from cruxtui.core.perturb.chain import Applied, apply_chain
from cruxtui.core.perturb.spec import NotApplicable, PerturbError, parse_spec
from cruxtui.core.perturb.variant import Rejection, Variant, verify
from cruxtui.core.sandbox.pool import Sandbox

SURVEY_SPECS = (
    "rename:anonymize",
    "rename:shuffle",
    "flip-compare",
    "negate",
    "swap-if",
    "mirror-compare",
    "const",
    "string",
    "input-char",
    "input-element",
    "input-number",
)
"""One spec per transform (two for rename); explicit renames need a mapping, so are not surveyed."""


@dataclass
class TransformReport:
    spec: str
    samples: int = 0
    applies: int = 0
    accepted: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    """One example reason per rejection kind (first seen), for the report."""
    errors: Counter[str] = field(default_factory=Counter)
    """Samples the transform could not even be tried on (e.g. code libcst cannot parse)."""

    def to_json(self) -> dict[str, object]:
        return {
            "transform": self.spec,
            "samples": self.samples,
            "applies": self.applies,
            "accepted": self.accepted,
            "rejected": dict(self.rejected),
            "rejected_total": sum(self.rejected.values()),
            "examples": self.examples,
            "errors": dict(self.errors),
        }


@dataclass
class Survey:
    reports: list[TransformReport]
    variants: list[Variant]
    rejections: list[Rejection]


def survey(
    samples: Sequence[Sample],
    sandbox: Sandbox,
    specs: Sequence[str] = SURVEY_SPECS,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> Survey:
    """Apply each spec to each sample, verify every variant in the sandbox, and tally."""
    reports = [TransformReport(text, samples=len(samples)) for text in specs]
    applied: list[tuple[TransformReport, Applied]] = []

    def build() -> Iterator[Applied]:
        for report in reports:
            spec = parse_spec(report.spec, seed)
            for sample in samples:
                try:
                    variant = apply_chain(sample, [spec])
                except NotApplicable:
                    continue
                except PerturbError as exc:
                    report.errors[str(exc)] += 1
                    continue
                report.applies += 1
                applied.append((report, variant))
                yield variant
            if progress:
                progress(f"{report.spec}: applies to {report.applies} of {len(samples)}")

    results = verify(build(), sandbox)
    variants: list[Variant] = []
    rejections: list[Rejection] = []
    for (report, _), result in zip(applied, results, strict=True):
        if isinstance(result, Rejection):
            report.rejected[result.kind] += 1
            report.examples.setdefault(result.kind, f"{result.id}: {result.reason}")
            rejections.append(result)
        else:
            report.accepted += 1
            variants.append(result)
    return Survey(reports, variants, rejections)
