"""The transform catalogue: what a transform is, how it is looked up and how a chain is applied.

A transform maps (code, input, params, seed) to new code and/or a new input. It is a pure function
of those: the seed feeds a `random.Random` keyed by the spec, so the same chain always yields the
same variant (ids are derived from the chain and must mean one thing).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import libcst as cst

from cruxtui.core.perturb.spec import NotApplicable, SpecError, TransformSpec, UnparsableCode

T = TypeVar("T")
TreeT = TypeVar("TreeT", bound=cst.CSTNode)


@dataclass(frozen=True)
class Subject:
    """What a transform works on: the function's code and the call's argument text."""

    code: str
    input: str


@dataclass(frozen=True)
class Outcome:
    """A transform's result: the new subject, what changed in words, and whether the seed chose."""

    subject: Subject
    note: str
    seeded: bool = False


class Choices:
    """The random choices of one transform step, remembering whether any was actually made.

    A step whose params pin everything down (e.g. `flip-compare:2`) makes no random choice, so its
    variant id need not carry the seed; one that picked a site or a character does.
    """

    def __init__(self, spec: TransformSpec) -> None:
        self._rng = random.Random(f"{spec.name}|{spec.params}|{spec.seed}")
        self.used = False

    def choice(self, options: Sequence[T]) -> T:
        self.used = True
        return self._rng.choice(options)

    def randrange(self, n: int) -> int:
        self.used = True
        return self._rng.randrange(n)

    def shuffle(self, items: list[T]) -> None:
        self.used = True
        self._rng.shuffle(items)


TransformFn = Callable[[Subject, str, Choices], tuple[Subject, str]]
"""(subject, params, choices) -> (new subject, note); raises NotApplicable / SpecError."""


@dataclass(frozen=True)
class Transform:
    name: str
    preserving: bool
    """True if the transform never changes the output (the sandbox verifies it on every variant)."""
    summary: str
    params_help: str
    func: TransformFn
    slug: Callable[[str], str] | None = None
    """Short id fragment for given params (default: `name-params`)."""
    aliases: tuple[str, ...] = ()
    """Id fragments `slug` writes that do not start with the name (rename's `anon`), so an id can
    be read back into its transforms."""

    def id_fragment(self, params: str) -> str:
        if self.slug is not None:
            return self.slug(params)
        return f"{self.name}-{params}" if params else self.name


CATALOGUE: dict[str, Transform] = {}


def register(transform: Transform) -> Transform:
    CATALOGUE[transform.name] = transform
    return transform


def transform_of_fragment(fragment: str) -> str | None:
    """The transform whose id fragment this is (`flip-compare-2` -> `flip-compare`), or None."""
    for name in sorted(CATALOGUE, key=len, reverse=True):  # `input-char` before any `input`
        transform = CATALOGUE[name]
        if fragment in transform.aliases or fragment.split("-s")[0] in transform.aliases:
            return name
        if fragment == name or fragment.startswith(f"{name}-"):
            return name
    return None


def get_transform(name: str) -> Transform:
    try:
        return CATALOGUE[name]
    except KeyError:
        known = ", ".join(CATALOGUE)
        raise SpecError(f"unknown transform {name!r} (known: {known})") from None


def apply_spec(subject: Subject, spec: TransformSpec) -> Outcome:
    """Apply one transform step; the resulting code always compiles (checked here, for every step)."""
    transform = get_transform(spec.name)
    choices = Choices(spec)
    try:
        new, note = transform.func(subject, spec.params, choices)
    except RecursionError:  # libcst's visitors recurse: a tree nested a few hundred levels deep
        raise UnparsableCode("libcst cannot transform the code: it is nested too deeply") from None
    if new.code != subject.code:
        try:  # CPython's own parser: fast, and the judge of what will run
            compile(new.code, "<variant>", "exec", dont_inherit=True)
        except (RecursionError, MemoryError):
            raise UnparsableCode("the variant is nested too deeply to compile") from None
        except SyntaxError as exc:  # a bug in a transform, never the user's fault
            raise AssertionError(f"{spec} produced code that does not compile: {exc}") from exc
    return Outcome(new, note, choices.used)


@lru_cache(maxsize=4096)
def parse_code(code: str) -> cst.Module:
    """Parse once per distinct code: libcst trees are immutable, so transforms can share them."""
    try:
        return cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        raise UnparsableCode(f"libcst cannot parse the code: {_first_line(exc)}") from None
    except RecursionError:
        raise UnparsableCode("libcst cannot parse the code: it is nested too deeply") from None


@lru_cache(maxsize=4096)
def parse_call(input_text: str) -> cst.Call:
    """Parse the input as the argument list of `f(...)`."""
    try:
        expr = cst.parse_expression(f"f({input_text})")
    except cst.ParserSyntaxError as exc:
        raise UnparsableCode(
            f"libcst cannot parse the input as arguments: {_first_line(exc)}"
        ) from None
    if not isinstance(expr, cst.Call):  # e.g. input "1)(2"
        raise UnparsableCode("the input is not an argument list")
    return expr


def call_input(call: cst.Call) -> str:
    """The argument text of a `f(...)` call node (inverse of `parse_call`)."""
    code = cst.Module(body=[]).code_for_node(call)
    return code[len("f(") : -1]


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]


def replaced(tree: TreeT, old: cst.CSTNode, new: cst.CSTNode) -> TreeT:
    """`tree` with `old` (a node inside it, never `tree` itself) replaced by `new`."""
    out = tree.deep_replace(old, new)
    if not isinstance(out, type(tree)):  # only replacing the root could change its type
        raise TypeError(f"replacing inside a {type(tree).__name__} gave a {type(out).__name__}")
    return out


def code_of(node: cst.CSTNode) -> str:
    """Source text of a node (for notes such as "`a < b` -> `a >= b`")."""
    return cst.Module(body=[]).code_for_node(node)


def parse_site_params(
    params: str, ops: Sequence[str] = (), what: str = "site"
) -> tuple[int | None, str | None]:
    """Split `N[,OP]` params: a 1-based site number and/or one of `ops`; both optional."""
    site: int | None = None
    op: str | None = None
    for token in (t.strip() for t in params.split(",") if t.strip()):
        if token.isdigit() and site is None:
            site = int(token)
            if site < 1:
                raise SpecError(f"{what} numbers start at 1, got {token}")
        elif (token in ops or (token.startswith("=") and "=" in ops)) and op is None:
            op = token
        else:
            allowed = f"a {what} number" + (f" or one of {', '.join(ops)}" if ops else "")
            raise SpecError(f"unexpected parameter {token!r}: expected {allowed}")
    return site, op


def pick_site(sites: Sequence[T], site: int | None, choices: Choices, what: str) -> T:
    """The requested site (1-based), or one chosen by the seed if none was given."""
    if not sites:
        raise NotApplicable(f"does not apply: the sample has no {what}")
    if site is None:
        return sites[choices.randrange(len(sites))] if len(sites) > 1 else sites[0]
    if site > len(sites):
        raise NotApplicable(
            f"does not apply: site {site} requested but the sample has only {len(sites)} {what}"
        )
    return sites[site - 1]
