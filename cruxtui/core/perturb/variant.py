"""Variants: perturbed samples whose output is re-derived by running them in the sandbox.

A variant is accepted only if its call returns plain data, the same data twice (two separate
sandboxed runs), and, when every step of its chain preserves behaviour, the same data as the
parent sample (itself run in the sandbox, so both sides are measured the same way). Everything
else is a `Rejection` carrying the reason, so surveys can count why variants fail.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cruxtui.core import values
from cruxtui.core.dataset import Sample
from cruxtui.core.perturb.chain import Applied, apply_chain
from cruxtui.core.perturb.spec import PerturbError, TransformSpec
from cruxtui.core.sandbox import Limits, Outcome, Sandbox, default_sandbox

EXEC_JOB = "cruxtui.core.sandbox:exec_call"

VARIANT_LIMITS = Limits(timeout=1.0)
"""Tighter than the benchmark's 3 s: every original sample runs in well under 0.1 s, and a
perturbed condition often makes a loop endless; waiting 3 s for each of those would dominate a
survey of all 800 samples. 1 s still leaves ten times the slowest original's run time."""

REJECTION_KINDS = (
    "raises", "timeout", "memory", "crashed", "output-limit", "not-plain-data",
    "nondeterministic", "changed-output",
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
            "chain": [spec.to_json() | {"note": note} for spec, note in zip(self.chain, self.notes, strict=True)],
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


def judge(
    applied: Applied, first: Outcome, second: Outcome | None, parent: Outcome | None
) -> Variant | Rejection:
    """Accept or reject one variant from its runs (and the parent's run if it must preserve).

    `second` may be None only when `first` failed (no second run is needed then).
    """
    for outcome in (first, second):
        if outcome is None:
            raise ValueError("a variant whose first run succeeded needs a second run")
        if not outcome.ok:
            return Rejection(applied, _STATUS_KIND.get(outcome.status, outcome.status), _describe(outcome))
    assert second is not None
    if canonical(first.value) != canonical(second.value):
        return Rejection(
            applied, "nondeterministic",
            f"two runs gave {values.bounded_repr(first.value, 80)} and {values.bounded_repr(second.value, 80)}",
        )
    output = _literal(first.value)
    if output is None:
        return Rejection(applied, "not-plain-data", "the output is too large to write as a literal")
    if applied.preserving:
        if parent is None or not parent.ok:
            why = _describe(parent) if parent else "not run"
            return Rejection(applied, "changed-output", f"the original sample itself failed in the sandbox: {why}")
        if canonical(parent.value) != canonical(first.value):
            return Rejection(
                applied, "changed-output",
                f"a behaviour-preserving chain changed the output from "
                f"{values.bounded_repr(parent.value, 80)} to {values.bounded_repr(first.value, 80)}",
            )
    parent_sample = applied.parent
    sample = Sample(applied.id, applied.subject.code, applied.subject.input, output, origin=parent_sample.origin)
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
    """Run every variant twice (and each parent of a preserving chain once) across the workers.

    `applied` may be a lazy iterable: the sandbox pulls from it as workers free up, so building
    variants (CPU in this process) overlaps with running them (other processes). The second run
    is made only for variants whose first run succeeded: a failure is already a verdict.
    """
    sandbox = sandbox or default_sandbox()
    items: list[Applied] = []
    owners: list[int | tuple[str, str]] = []  # per first-phase job: variant index or parent key
    parent_keys: set[tuple[str, str]] = set()

    def first_phase() -> Iterator[tuple[str, dict[str, str]]]:
        for a in applied:
            owners.append(len(items))
            items.append(a)
            yield EXEC_JOB, exec_payload(a.subject.code, a.subject.input)
            key = (a.parent.code, a.parent.input)
            if a.preserving and key not in parent_keys:
                parent_keys.add(key)
                owners.append(key)
                yield EXEC_JOB, exec_payload(*key)

    first: dict[int, Outcome] = {}
    parents: dict[tuple[str, str], Outcome] = {}
    for n, outcome in enumerate(sandbox.map(first_phase(), limits)):
        owner = owners[n]  # filled in by first_phase as the sandbox pulls jobs from it
        if isinstance(owner, int):
            first[owner] = outcome
        else:
            parents[owner] = outcome
    again = [i for i in range(len(items)) if first[i].ok]
    jobs = ((EXEC_JOB, exec_payload(items[i].subject.code, items[i].subject.input)) for i in again)
    second = dict(zip(again, sandbox.map(jobs, limits), strict=True))
    return [
        judge(a, first[i], second.get(i), parents.get((a.parent.code, a.parent.input)))
        for i, a in enumerate(items)
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
