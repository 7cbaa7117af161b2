"""Perturbations of samples with libcst, each variant's output re-derived by execution.

Import surface for the CLI, the TUI and other features:
- `CATALOGUE` / `get_transform`: the transforms (rename, flip-compare, negate, swap-if,
  mirror-compare, const, string, input-char, input-element, input-number);
- `parse_spec`, `TransformSpec`: the `NAME[:PARAMS]` syntax;
- `apply_chain`: code-level application (no execution);
- `make_variant` / `Variant`: a verified variant, a first-class `Sample` with a stable id;
- `diff`: unified and side-by-side diffs as data.
"""

from cruxtui.core.perturb import conditions, constants, inputs, rename  # noqa: F401  (register)
from cruxtui.core.perturb.chain import Applied, Step, apply_chain, transforms_in, variant_id
from cruxtui.core.perturb.spec import (
    NotApplicable,
    PerturbError,
    SpecError,
    TransformSpec,
    UnparsableCode,
    parse_spec,
)
from cruxtui.core.perturb.transform import CATALOGUE, Subject, Transform, get_transform
from cruxtui.core.perturb.variant import Rejection, Variant, VariantRejected, make_variant, verify

__all__ = [
    "CATALOGUE",
    "Applied",
    "Rejection",
    "Variant",
    "VariantRejected",
    "make_variant",
    "verify",
    "NotApplicable",
    "PerturbError",
    "SpecError",
    "Step",
    "Subject",
    "Transform",
    "TransformSpec",
    "UnparsableCode",
    "apply_chain",
    "get_transform",
    "parse_spec",
    "transforms_in",
    "variant_id",
]
