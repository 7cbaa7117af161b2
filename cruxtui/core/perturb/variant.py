"""Variants: perturbed samples whose output is re-derived by running them in the sandbox.

A variant is accepted only if its call returns plain data, the same data twice (two runs, each
from a fresh namespace, in one sandboxed child: `cruxtui.core.sandbox.jobs.perturb_check`), and, when every step
of its chain preserves behaviour, the parent sample's output (its recorded text, or else the value
of the parent run in the sandbox too, so both sides are measured the same way). Everything else
is a `Rejection` carrying the reason, so surveys can count why variants fail.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cruxtui.core.data.dataset import Sample
from cruxtui.core.perturb.chain import Applied, apply_chain
from cruxtui.core.perturb.spec import PerturbError, TransformSpec
from cruxtui.core.sandbox.pool import Limits, Outcome, Sandbox, default_sandbox
from cruxtui.core.util import values
from cruxtui.core.util.bounded_repr import bounded_repr

EXEC_JOB = "cruxtui.core.sandbox.jobs.checks:exec_call"
TWICE_JOB = "cruxtui.core.sandbox.jobs.perturb_check:exec_twice"

VARIANT_LIMITS = Limits(timeout=0.5)
"""Tighter than the benchmark's 3 s: a perturbed condition often makes a loop endless, and waiting
3 s for each of those would dominate a survey of all 800 samples. Every original sample runs in
under 0.1 s in the sandbox (most in a few ms), so 0.5 s still leaves a wide margin."""

REJECTION_KINDS = (
    "raises",
    "timeout",
    "memory",
    "crashed",
    "output-limit",
    "not-plain-data",
    "nondeterministic",
    "changed-output",
)
"""Why a variant can be rejected; `changed-output` only for chains that should preserve it."""

_STATUS_KIND = {
    "exception": "raises",
    "timeout": "timeout",
    "memory": "memory",
    "crashed": "crashed",
    "output_limit": "output-limit",
    "bad_result": "not-plain-data",
}


@dataclass(frozen=True)
class Variant:
    """A perturbed sample, usable wherever a `Sample` is (runs, traces, cases).

    `sample.id` is `<parent id>~<step>~<step>...`, `sample.output` the re-derived output (repr).
    """

    sample: Sample
    parent_id: str
    chain: list[TransformSpec]
    notes: list[str]
    preserving: bool
    parent_output: str

    @property
    def id(self) -> str:
        return self.sample.id

    def to_json(self) -> dict[str, Any]:
        return self.sample.to_json() | {
            "parent_id": self.parent_id,
            "chain": [
                spec.to_json() | {"note": note}
                for spec, note in zip(self.chain, self.notes, strict=True)
            ],
            "preserving": self.preserving,
            "parent_output": self.parent_output,
        }


@dataclass(frozen=True)
class Rejection:
    """A variant that was built but failed verification, with the reason."""

    applied: Applied
    kind: str
    reason: str

    @property
    def id(self) -> str:
        return self.applied.id


class VariantRejected(PerturbError):
    def __init__(self, rejection: Rejection) -> None:
        self.rejection = rejection
        super().__init__(f"variant {rejection.id} rejected ({rejection.kind}): {rejection.reason}")


def canonical(value: Any) -> str:
    """A text form equal for equal plain data, independent of set iteration order.

    Two runs may land on sandbox workers with different string hash seeds, so the same set can
    iterate (and print) in a different order: that is not non-determinism of the function.
    """
    return json.dumps(_canonical(values.encode(value)), separators=(",", ":"))


def _canonical(node: Any) -> Any:
    if isinstance(node, list) and node and node[0] in ("S", "F"):
        return [node[0], sorted(json.dumps(_canonical(x)) for x in node[1])]
    if isinstance(node, list):
        return [_canonical(x) for x in node]
    return node


def exec_payload(code: str, input_text: str) -> dict[str, str]:
    return {"code": code, "call": f"f({input_text})"}


def _literal(value: Any) -> str | None:
    try:
        return repr(value)
    except ValueError:  # e.g. an int past the digit limit for str()
        return None


def _describe(outcome: Outcome) -> str:
    return outcome.error or outcome.status


def judge(applied: Applied, runs: Outcome, parent: Outcome | None) -> Variant | Rejection:
    """Accept or reject one variant from its two runs (`runs.value` holds both results).

    `parent` is the parent's own run, needed only for a preserving chain whose output text
    differs from the parent's recorded output (then the values decide).
    """
    if not runs.ok:
        return Rejection(applied, _STATUS_KIND.get(runs.status, runs.status), _describe(runs))
    first, second = runs.value
    if canonical(first) != canonical(second):
        return Rejection(
            applied,
            "nondeterministic",
            f"two runs gave {bounded_repr(first, 80)} and {bounded_repr(second, 80)}",
        )
    output = _literal(first)
    if output is None:
        return Rejection(applied, "not-plain-data", "the output is too large to write as a literal")
    if applied.preserving and output != applied.parent.output:
        if parent is None or not parent.ok:
            why = _describe(parent) if parent else "not run"
            return Rejection(
                applied,
                "changed-output",
                f"the original sample itself failed in the sandbox: {why}",
            )
        if canonical(parent.value) != canonical(first):
            return Rejection(
                applied,
                "changed-output",
                f"a behaviour-preserving chain changed the output from "
                f"{bounded_repr(parent.value, 80)} to {bounded_repr(first, 80)}",
            )
    parent_sample = applied.parent
    sample = Sample(
        applied.id, applied.subject.code, applied.subject.input, output, origin=parent_sample.origin
    )
    return Variant(
        sample=sample,
        parent_id=parent_sample.id,
        chain=[step.spec for step in applied.steps],
        notes=[step.note for step in applied.steps],
        preserving=applied.preserving,
        parent_output=parent_sample.output,
    )


def verify(
    applied: Iterable[Applied], sandbox: Sandbox | None = None, limits: Limits = VARIANT_LIMITS
) -> list[Variant | Rejection]:
    """Run every variant twice in the sandbox (`TWICE_JOB`), across the workers, and judge it.

    `applied` may be a lazy iterable: the sandbox pulls from it as workers free up, so building
    variants (CPU in this process) overlaps with running them (other processes). The parent of a
    behaviour-preserving chain is run only when the variant's output does not read exactly as
    the parent's recorded output (then the values decide: set order, machine-dependent results).
    """
    sandbox = sandbox or default_sandbox()
    items: list[Applied] = []

    def jobs() -> Iterator[tuple[str, dict[str, str]]]:
        for a in applied:
            items.append(a)
            yield TWICE_JOB, exec_payload(a.subject.code, a.subject.input)

    runs = list(sandbox.map(jobs(), limits))
    parent_keys = list(
        dict.fromkeys(
            (a.parent.code, a.parent.input)
            for a, r in zip(items, runs, strict=True)
            if a.preserving and r.ok and _literal(r.value[0]) != a.parent.output
        )
    )
    parent_runs = sandbox.map(((EXEC_JOB, exec_payload(*key)) for key in parent_keys), limits)
    parents = dict(zip(parent_keys, parent_runs, strict=True))
    return [
        judge(a, r, parents.get((a.parent.code, a.parent.input)))
        for a, r in zip(items, runs, strict=True)
    ]


def make_variant(
    sample: Sample, specs: Sequence[TransformSpec], sandbox: Sandbox | None = None
) -> Variant:
    """Apply `specs` to `sample` and verify the result; raises PerturbError (incl. VariantRejected)."""
    if not specs:
        raise PerturbError("no transform given")
    [result] = verify([apply_chain(sample, specs)], sandbox)
    if isinstance(result, Rejection):
        raise VariantRejected(result)
    return result
