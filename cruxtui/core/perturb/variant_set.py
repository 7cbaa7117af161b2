"""One transform applied to many samples: the verified variants, and what was skipped and why.

What a sweep's `transforms` axis runs and what `cases from-run --transform` rebuilds: variants
made exactly as `cruxtui perturb --apply` and the Perturb screen make them (`apply_chain`, then
`verify` runs each twice in the sandbox and re-derives its output), so a variant id stored by a
sweep is the one the TUI names, and its generations are found there (and vice versa).

Building is deterministic (the spec's seed is fixed), so a resumed sweep rebuilds the same ids
and the store asks only for what is missing. A sample the transform does not apply to (nothing to
act on, code libcst cannot parse) or whose variant is rejected (raises, times out, changes the
output of a preserving chain, ...) is skipped and counted by reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cruxtui.core.data.dataset import Sample
from cruxtui.core.perturb.chain import Applied, apply_chain
from cruxtui.core.perturb.spec import NotApplicable, SpecError, UnparsableCode, parse_spec
from cruxtui.core.perturb.transform import get_transform
from cruxtui.core.perturb.variant import Rejection, Variant, verify

if TYPE_CHECKING:
    from cruxtui.core.sandbox.pool import Sandbox

NONE = "none"
"""The grid's name for the original samples (no transform)."""

TRANSFORM_SEED = 0
"""The seed of every sweep transform (as `cruxtui perturb`'s default): where the params leave a
choice open, the same file always makes the same variants."""


class TransformError(Exception):
    """A transform name or its parameters are wrong (one line for the user)."""


@dataclass
class VariantSet:
    """One transform's samples for a sweep: what runs, and what was skipped and why."""

    transform: str
    samples: dict[str, Sample] = field(default_factory=dict)
    """Variant id -> variant sample (truth re-derived), in the order of the parent samples."""
    variants: dict[str, Variant] = field(default_factory=dict)
    """Variant id -> the variant with its chain (what `cases_from_run` records)."""
    skipped: Counter[str] = field(default_factory=Counter)
    """Why samples were left out: `not-applicable`, `unparsable` or a rejection kind."""

    @property
    def total(self) -> int:
        return len(self.samples) + sum(self.skipped.values())


def check_transform(text: str) -> str:
    """The canonical text of a grid transform (`none` or `NAME[:PARAMS]`, what `cruxtui perturb
    --apply` takes); `TransformError` for an unknown name or a malformed spec."""
    text = text.strip()
    if text == NONE:
        return NONE
    try:
        spec = parse_spec(text, TRANSFORM_SEED)
        get_transform(spec.name)
    except SpecError as exc:
        hint = f" (did you mean rename:{text}?)" if text in ("anon", "anonymize", "shuffle") else ""
        raise TransformError(f"{exc}{hint}") from None
    return str(spec)


def build_variants(
    transform: str, samples: Sequence[Sample], sandbox: Sandbox | None = None
) -> VariantSet:
    """Apply one transform to every sample and verify the variants (in the sandbox, across its
    workers). Blocking; `TransformError` when the parameters are wrong for this transform."""
    result = VariantSet(transform)
    if transform == NONE:
        result.samples = {s.id: s for s in samples}
        return result
    spec = parse_spec(transform, TRANSFORM_SEED)
    applied: list[Applied] = []
    for sample in samples:
        try:
            applied.append(apply_chain(sample, [spec]))
        except NotApplicable:
            result.skipped["not-applicable"] += 1
        except UnparsableCode:
            result.skipped["unparsable"] += 1
        except SpecError as exc:  # the params are wrong for this transform: wrong everywhere
            raise TransformError(f"{transform}: {exc}") from None
    for outcome in verify(applied, sandbox):
        if isinstance(outcome, Rejection):
            result.skipped[outcome.kind] += 1
        else:
            result.samples[outcome.id] = outcome.sample
            result.variants[outcome.id] = outcome
    return result


def describe_skipped(vs: VariantSet) -> str | None:
    """`rename:anonymize: 3 of 24 samples skipped (not-applicable 2, raises 1)`, or None."""
    if not vs.skipped:
        return None
    reasons = ", ".join(f"{kind} {n}" for kind, n in vs.skipped.most_common())
    return f"{vs.transform}: {sum(vs.skipped.values())} of {vs.total} samples skipped ({reasons})"
