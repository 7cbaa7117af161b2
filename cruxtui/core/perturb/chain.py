"""Applying a chain of transforms to a sample, and the variant id derived from the chain.

The id is a pure function of the parent id and the chain (`sample_12~anon~flip-compare-1`), with
the seed appended to a step only when that step made a random choice, so asking for the same
variant twice, from the CLI or the TUI, names it the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cruxtui.core.data.dataset import Sample
from cruxtui.core.perturb.spec import TransformSpec, id_safe
from cruxtui.core.perturb.transform import (
    Subject,
    apply_spec,
    get_transform,
    transform_of_fragment,
)


@dataclass(frozen=True)
class Step:
    """One applied transform: its spec, what it changed in words, and whether the seed chose."""

    spec: TransformSpec
    note: str
    seeded: bool

    @property
    def preserving(self) -> bool:
        return get_transform(self.spec.name).preserving

    @property
    def id_fragment(self) -> str:
        fragment = id_safe(get_transform(self.spec.name).id_fragment(self.spec.params))
        return f"{fragment}-s{self.spec.seed}" if self.seeded else fragment

    def to_json(self) -> dict[str, object]:
        return self.spec.to_json() | {"note": self.note, "seeded": self.seeded}


@dataclass(frozen=True)
class Applied:
    """A sample's code and input after a chain, before any execution."""

    parent: Sample
    subject: Subject
    steps: tuple[Step, ...]

    @property
    def id(self) -> str:
        return variant_id(self.parent.id, self.steps)

    @property
    def preserving(self) -> bool:
        """True if every step preserves behaviour: then the output must equal the parent's."""
        return all(step.preserving for step in self.steps)


def variant_id(parent_id: str, steps: Sequence[Step]) -> str:
    return "~".join([parent_id, *(step.id_fragment for step in steps)])


def transforms_in(sample_id: str) -> tuple[str, ...]:
    """The transforms a variant id names, in chain order (empty for an original sample).

    The inverse of `variant_id` as far as the transform names go: slicing a run by perturbation
    needs only the ids it stored. A fragment no transform wrote is returned as it is.
    """
    fragments = sample_id.split("~")[1:]
    return tuple(transform_of_fragment(f) or f for f in fragments)


def apply_chain(sample: Sample, specs: Sequence[TransformSpec]) -> Applied:
    """Apply `specs` in order; raises `PerturbError` (NotApplicable, SpecError, UnparsableCode)."""
    subject = Subject(sample.code, sample.input)
    steps: list[Step] = []
    for spec in specs:
        outcome = apply_spec(subject, spec)
        subject = outcome.subject
        steps.append(Step(spec, outcome.note, outcome.seeded))
    return Applied(sample, subject, tuple(steps))
