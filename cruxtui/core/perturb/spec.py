"""The text form of a transform, `NAME[:PARAMS]`, and the errors a transform can report.

One spec syntax serves the CLI (`--apply flip-compare:1`), the TUI and the JSON a variant records,
so a chain written down anywhere can be replayed anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class PerturbError(Exception):
    """A perturbation that cannot be made, with the reason in words for the user."""


class SpecError(PerturbError):
    """A transform spec that is malformed: unknown name or bad parameters."""


class NotApplicable(PerturbError):
    """The transform has nothing to act on in this sample (e.g. no comparison to flip)."""


class UnparsableCode(PerturbError):
    """The code (or input) is not something libcst can parse."""


_SPEC = re.compile(r"^(?P<name>[a-z][a-z-]*)(?::(?P<params>.*))?$")
_ID_UNSAFE = re.compile(r"[\s~/\\:]")


@dataclass(frozen=True)
class TransformSpec:
    """One step of a chain: a transform name, its parameter text and the seed it ran with.

    `params` stays text (as typed) because each transform owns its own little grammar; the seed
    matters only to transforms that make a random choice the params leave open.
    """

    name: str
    params: str = ""
    seed: int = 0

    def __str__(self) -> str:
        return f"{self.name}:{self.params}" if self.params else self.name

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "params": self.params, "seed": self.seed}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> TransformSpec:
        seed = data.get("seed") or 0
        if not isinstance(seed, int | float | str):
            raise TypeError(f"a transform's seed must be a number, got {type(seed).__name__}")
        return cls(str(data["name"]), str(data.get("params") or ""), int(seed))


def parse_spec(text: str, seed: int = 0) -> TransformSpec:
    """Parse `NAME[:PARAMS]` (e.g. `rename:anonymize`, `flip-compare:1`); names are checked later."""
    m = _SPEC.match(text.strip())
    if not m:
        raise SpecError(f"bad transform spec {text!r}: expected NAME[:PARAMS], e.g. flip-compare:1")
    return TransformSpec(m["name"], (m["params"] or "").strip(), seed)


def id_safe(text: str) -> str:
    """Make spec text usable inside a sample id (no spaces, `~`, `:` or slashes)."""
    return _ID_UNSAFE.sub("-", text)
