"""Variable renaming with Python's scoping rules, via libcst's ScopeProvider.

A *binding* is a (scope, name) pair for a function, lambda or comprehension scope: every `Name`
that Python resolves to it is renamed together, so `[x for x in x]` or a lambda parameter that
shadows a local stay correct. Left alone, always: attributes and keyword-argument names (they are
not variables), builtins and globals (not bound in a function), `f`, names bound by def, class or
import, names declared `global`/`nonlocal`, and parameters whose name is also used as a keyword
argument somewhere (renaming them would break that call).
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

import libcst as cst
from libcst.metadata import (
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    GlobalScope,
    MetadataWrapper,
    Scope,
    ScopeProvider,
)

from cruxtui.core.perturb.spec import NotApplicable, PerturbError, SpecError
from cruxtui.core.perturb.transform import (
    Choices,
    Subject,
    Transform,
    parse_call,
    parse_code,
    register,
)


@dataclass
class Binding:
    name: str
    nodes: list[cst.Name] = field(default_factory=list)


@dataclass
class Bindings:
    """The renamable bindings in order of first appearance, and every name that must stay free."""

    module: cst.Module
    """The tree the bindings' nodes belong to (renaming matches nodes by identity)."""
    renamable: list[Binding]
    taken: set[str]
    """Names of all variable-like `Name` nodes that are not renamed (globals, builtins, skipped
    bindings, names in the input): a new name equal to one of these could capture or be captured.
    Attribute and keyword-argument names are not here: `s.count(count)` captures nothing."""


class _NameCollector(cst.CSTVisitor):
    """All Name nodes in source order, minus the ones that are never variables."""

    def __init__(self) -> None:
        self.names: list[cst.Name] = []
        self.not_variables: set[int] = set()
        self.keywords: set[str] = set()
        self.declared: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_variables.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_variables.add(id(node.keyword))
            self.keywords.add(node.keyword.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.declared.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared.update(item.name.value for item in node.names)


class _ScopeProvider(ScopeProvider):
    """libcst's ScopeProvider with its visitor methods looked up once per class.

    libcst finds a batchable visitor's `visit_*`/`leave_*` methods with `inspect.getmembers` on
    every resolve, a quarter of the scope analysis of a CRUXEval-sized function; the methods of a
    class never change, so `get_visitors` (a public hook) caches their names.
    """

    _method_names: ClassVar[tuple[str, ...] | None] = None

    def get_visitors(self) -> Mapping[str, Callable[[cst.CSTNode], None]]:
        cls = type(self)
        if cls._method_names is None:
            cls._method_names = tuple(super().get_visitors())
        return {name: getattr(self, name) for name in cls._method_names}


def _local_kinds(scope: Scope) -> dict[str, set[type]]:
    kinds: dict[str, set[type]] = {}
    for assignment in scope.assignments:
        node = getattr(assignment, "node", None)
        kinds.setdefault(assignment.name, set()).add(type(node))
    return kinds


@lru_cache(maxsize=1024)
def find_bindings(code: str, input_text: str = "") -> Bindings:
    """Resolve every Name in `code` to its binding, Python-style, and list the renamable ones.

    Cached: scope analysis is the slowest step of any transform, and anonymize and shuffle of
    the same sample share it. Callers must not mutate the result.
    """
    module = parse_code(code)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(_ScopeProvider)
    collector = _NameCollector()
    module.visit(collector)
    if input_text:
        parse_call(input_text).visit(collector)  # keyword arguments of the benchmark call count too
    kinds_cache: dict[int, dict[str, set[type]]] = {}

    def kinds(scope: Scope) -> dict[str, set[type]]:
        key = id(scope)
        if key not in kinds_cache:
            kinds_cache[key] = _local_kinds(scope)
        return kinds_cache[key]

    def resolve(node: cst.Name) -> Scope | None:
        """The scope whose local `node.value` is, or None for globals/builtins/non-variables."""
        scope = scopes.get(node)
        first = True
        while scope is not None and not isinstance(scope, GlobalScope):
            # A class body's names are not visible from the functions nested in it.
            if (first or not isinstance(scope, ClassScope)) and node.value in kinds(scope):
                return scope
            first = False
            scope = scope.parent
        return None

    by_key: dict[tuple[int, str], Binding] = {}
    order: list[Binding] = []
    unrenamed: set[str] = set()
    for node in collector.names:
        name = node.value
        if id(node) in collector.not_variables:
            continue  # an attribute or keyword name lives in another namespace: nothing to capture
        if node not in scopes:
            unrenamed.add(name)
            continue
        scope = resolve(node)
        if scope is None or not _renamable(scope, name, kinds(scope), collector):
            unrenamed.add(name)
            continue
        key = (id(scope), name)
        binding = by_key.get(key)
        if binding is None:
            binding = by_key[key] = Binding(name)
            order.append(binding)
        binding.nodes.append(node)
    return Bindings(module, order, unrenamed)


def _renamable(scope: Scope, name: str, kinds: dict[str, set[type]], names: _NameCollector) -> bool:
    if not isinstance(scope, FunctionScope | ComprehensionScope):
        return False
    if name == "f" or name in names.declared:
        return False
    bound_by = kinds.get(name, set())
    if not bound_by or not bound_by <= {cst.Name, cst.Param}:
        return False  # def / class / import bindings are not variables
    return not (cst.Param in bound_by and name in names.keywords)


class _Renamer(cst.CSTTransformer):
    def __init__(self, new_names: dict[int, str]) -> None:
        self.new_names = new_names

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.new_names.get(id(original_node))
        return updated_node.with_changes(value=new) if new is not None else updated_node


def _rename(bindings: Bindings, plan: list[tuple[Binding, str]]) -> str:
    new_names = {id(node): new for binding, new in plan for node in binding.nodes}
    return bindings.module.visit(_Renamer(new_names)).code


def _check_identifier(name: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise SpecError(f"{name!r} is not a valid Python variable name")


def anonymize(bindings: Bindings) -> list[tuple[Binding, str]]:
    """x1, x2, ... in order of first appearance, skipping names already taken in the code."""
    plan: list[tuple[Binding, str]] = []
    n = 0
    for binding in bindings.renamable:
        n += 1
        while f"x{n}" in bindings.taken:
            n += 1
        plan.append((binding, f"x{n}"))
    return plan


def shuffle(bindings: Bindings, choices: Choices) -> list[tuple[Binding, str]]:
    """Permute the existing names among the variables so that no name stays (misleading names).

    A permutation of names (not of bindings) keeps which bindings share a name, so shadowing is
    unchanged and nothing is captured.
    """
    names = sorted({b.name for b in bindings.renamable} - bindings.taken)
    if len(names) < 2:
        raise NotApplicable("does not apply: fewer than two variable names to shuffle")
    target = list(names)
    while any(a == b for a, b in zip(names, target, strict=True)):
        choices.shuffle(target)
    mapping = dict(zip(names, target, strict=True))
    return [(b, mapping[b.name]) for b in bindings.renamable if b.name in mapping]


def parse_mapping(params: str) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for item in (t.strip() for t in params.split(",") if t.strip()):
        old, sep, new = (s.strip() for s in item.partition("="))
        if not sep or not old or not new:
            raise SpecError(f"bad rename mapping item {item!r}: expected OLD=NEW")
        _check_identifier(new)
        if old in mapping:
            raise SpecError(f"{old!r} is mapped twice")
        mapping[old] = new
    return mapping


def explicit(bindings: Bindings, mapping: dict[str, str]) -> list[tuple[Binding, str]]:
    """Rename as asked, refusing any renaming that would capture a name in use or merge two names."""
    present = {b.name for b in bindings.renamable}
    for old in mapping:
        if old not in present:
            why = "is not a renamable variable" if old in bindings.taken else "does not occur"
            raise NotApplicable(f"does not apply: {old!r} {why} in this sample")
    targets: dict[str, str] = {}
    for old, new in mapping.items():
        if new in targets:
            raise PerturbError(f"refused: {targets[new]!r} and {old!r} would both become {new!r}")
        targets[new] = old
        kept = new in present and new not in mapping
        if new in bindings.taken or kept:
            raise PerturbError(
                f"refused: renaming {old!r} to {new!r} would capture the name {new!r} already in use"
            )
    return [(b, mapping[b.name]) for b in bindings.renamable if b.name in mapping]


def _rename_transform(subject: Subject, params: str, choices: Choices) -> tuple[Subject, str]:
    mode = params.strip() or "anonymize"
    bindings = find_bindings(subject.code, subject.input)
    if not bindings.renamable:
        raise NotApplicable("does not apply: no renamable variables")
    if mode in ("anonymize", "anon"):
        plan = anonymize(bindings)
    elif mode == "shuffle":
        plan = shuffle(bindings, choices)
    elif "=" in mode:
        plan = explicit(bindings, parse_mapping(mode))
    else:
        raise SpecError(
            f"bad rename parameter {mode!r}: expected anonymize, shuffle or OLD=NEW,..."
        )
    plan = [(b, new) for b, new in plan if new != b.name]
    if not plan:
        raise NotApplicable("does not apply: the renaming changes no name")
    pairs = dict.fromkeys(f"{b.name}->{new}" for b, new in plan)
    return Subject(_rename(bindings, plan), subject.input), "renamed " + ", ".join(pairs)


def _rename_slug(params: str) -> str:
    mode = params.strip() or "anonymize"
    if mode in ("anonymize", "anon"):
        return "anon"
    if mode == "shuffle":
        return "shuffle"
    return f"rename-{mode.replace(' ', '')}"


register(
    Transform(
        name="rename",
        preserving=True,
        summary="rename variables (scope-correct; never attributes, keywords, builtins, globals, f)",
        params_help="anonymize (x1, x2, ... in order of first appearance; the default) | "
        "shuffle (existing names permuted among the variables; seeded) | OLD=NEW[,OLD=NEW...]",
        func=_rename_transform,
        slug=_rename_slug,
        aliases=("anon", "shuffle"),
    )
)
