"""Values of the sub-expressions a traced line computes, read off the live frame as the line starts.

A chain of thought states values ("`nums.count(1)` returns 3", "`text[-1:]` is ' '") that are
often not held by any variable: they are call results, subscripts, slices and comparisons the
program computes on its way. To hold such a value against what really ran, the tracer records,
at every `line` event of the sample's frames, the values of the line's *side-effect-free*
sub-expressions, evaluated on the frame's state just before the line runs (which is the state
the line itself starts from). `sys.monitoring` could report them as the line runs on Python
3.12+; on 3.11 this is the way, and it is cheap because each line's sub-expressions are found
and compiled once.

Side-effect free means: built only from names, constants, subscripts, slices, arithmetic,
comparisons, boolean logic, and calls of pure builtins (`len`, `sorted`, ...) or pure methods
(`str` methods, `count`, `index`, `get`, `keys`, ...), with no lambda, comprehension or walrus;
and at run time every name it reads holds a plain builtin value (no generator to drain, no
object whose methods are the sample's own code), in code that defines no class. Of a line's
impure calls (`pop`, `append`, ...) only the first is read, with its receiver and arguments:
what `pop`, `popitem` or `setdefault` gives is read by making the call on a copy of the
receiver; nothing after that call is recorded (it would see the state the call changes).

This runs in the sandbox child beside the tracer, so it imports nothing heavy.
"""

from __future__ import annotations

import ast
from types import CodeType, FrameType, FunctionType
from typing import Any

from cruxtui.core.util import safe_ast
from cruxtui.core.util.bounded_repr import bounded_repr

MAX_PER_LINE = 12
"""Sub-expressions recorded per line at most (the outermost first)."""

_PURE_FUNCS = frozenset(
    [
        "len",
        "sorted",
        "min",
        "max",
        "sum",
        "abs",
        "str",
        "int",
        "float",
        "bool",
        "list",
        "tuple",
        "set",
        "frozenset",
        "dict",
        "range",
        "enumerate",
        "zip",
        "reversed",
        "ord",
        "chr",
        "round",
        "any",
        "all",
        "isinstance",
        "repr",
        "divmod",
        "hex",
        "bin",
        "oct",
    ]
)
_PURE_METHODS = frozenset(
    [
        "isalpha",
        "isdigit",
        "isdecimal",
        "isnumeric",
        "isalnum",
        "isspace",
        "isupper",
        "islower",
        "istitle",
        "isascii",
        "isidentifier",
        "isprintable",
        "startswith",
        "endswith",
        "find",
        "rfind",
        "index",
        "rindex",
        "count",
        "upper",
        "lower",
        "strip",
        "lstrip",
        "rstrip",
        "split",
        "rsplit",
        "splitlines",
        "replace",
        "removeprefix",
        "removesuffix",
        "capitalize",
        "title",
        "swapcase",
        "join",
        "partition",
        "rpartition",
        "zfill",
        "center",
        "ljust",
        "rjust",
        "casefold",
        "expandtabs",
        "format",
        "get",
        "keys",
        "values",
        "items",
        "copy",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "issubset",
        "issuperset",
        "isdisjoint",
        "encode",
        "decode",
        "translate",
        "maketrans",
    ]
)
_PLAIN = (
    int,
    float,
    complex,
    bool,
    str,
    bytes,
    list,
    tuple,
    dict,
    set,
    frozenset,
    range,
    type(None),
)
_RECORDED = (ast.Call, ast.Subscript, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp)


class LineTable:
    """Per line of the sample: the sources of its pure sub-expressions, and one function per
    line that evaluates them all (compiled once for the whole sample, in one `compile`)."""

    def __init__(self, code: str) -> None:
        self.sources: dict[int, list[str]] = {}
        self.functions: dict[int, CodeType] = {}
        self.loop_body: dict[int, tuple[int, int]] = {}
        """`for` header line -> its body's lines: the iterable is evaluated on entering only."""
        try:
            tree = safe_ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        self._lines = code.splitlines()
        self._facts: dict[int, tuple[bool, bool, frozenset[str]]] = {}
        try:
            self._analyse(tree)
        except RecursionError:
            return
        if self._has_class:
            return  # an object of the sample's own class may run code on `len()` or `==`
        bodies: list[ast.stmt] = []
        for stmt in ast.walk(tree):
            if isinstance(stmt, ast.stmt) and not isinstance(
                stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            ):
                found = self._statement(stmt)
                if found:
                    line = stmt.lineno
                    have = self.sources.setdefault(line, [])
                    for src, expr in found[: MAX_PER_LINE - len(have)]:
                        have.append(src)
                        self._pending.setdefault(line, []).append(expr)
        for line, exprs in self._pending.items():
            # def _line_N(): return [_try(lambda: e0), _try(lambda: e1), ...]
            calls: list[ast.expr] = [
                ast.Call(
                    ast.Name(_TRY, ast.Load()),
                    [ast.Lambda(_NO_ARGS, e)],
                    [],
                )
                for e in exprs
            ]
            bodies.append(
                ast.FunctionDef(
                    f"_line_{line}",
                    _NO_ARGS,
                    [ast.Return(ast.List(calls, ast.Load()))],
                    [],
                    None,
                )
            )
        if not bodies:
            return
        module = ast.fix_missing_locations(ast.Module(bodies, []))
        try:
            compiled = compile(module, "<line-values>", "exec")
        except (SyntaxError, ValueError, TypeError, RecursionError):
            self.sources.clear()
            return
        for const in compiled.co_consts:
            if isinstance(const, CodeType) and const.co_name.startswith("_line_"):
                self.functions[int(const.co_name[6:])] = const

    _pending: dict[int, list[ast.expr]]
    _has_class = False
    _changed = False
    """An impure call of the statement being read has run: nothing after it is recorded."""

    def _analyse(self, tree: ast.AST) -> None:
        """One post-order pass: per expression node, (unsafe, pure, names read)."""
        self._pending = {}

        def visit(node: ast.AST) -> tuple[bool, bool, frozenset[str]]:
            unsafe = isinstance(node, _UNSAFE)
            pure = True
            names: set[str] = set()
            if isinstance(node, ast.ClassDef):
                self._has_class = True
            for child in ast.iter_child_nodes(node):
                u, p, n = visit(child)
                unsafe |= u
                pure &= p
                names |= n
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Call):
                pure &= _pure_call(node)
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                pure = False
            facts = (unsafe, pure, frozenset(names))
            if isinstance(node, ast.expr):
                self._facts[id(node)] = facts
            return facts

        visit(tree)

    def _statement(self, stmt: ast.stmt) -> list[tuple[str, ast.expr]]:
        roots: list[ast.expr]
        if isinstance(stmt, ast.For):
            roots = [stmt.iter]
            self.loop_body[stmt.lineno] = (stmt.lineno + 1, stmt.end_lineno or stmt.lineno)
        elif isinstance(stmt, ast.If | ast.While):
            roots = [stmt.test]
        elif isinstance(stmt, ast.With | ast.Try):
            return []
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            # The value is evaluated before the targets (`xs[i] = ys.pop()`).
            value = [stmt.value] if stmt.value is not None else []
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            roots = [*value, *targets]
        else:
            roots = [n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.expr)]
        found: list[tuple[str, ast.expr]] = []
        seen: set[str] = set()
        self._changed = False
        for root in roots:
            self._collect(root, None, found, seen)
        return found

    def _source(self, node: ast.expr) -> str | None:
        if node.end_lineno != node.lineno or node.end_col_offset is None:
            return None
        raw = self._lines[node.lineno - 1].encode()
        return raw[node.col_offset : node.end_col_offset].decode(errors="replace")

    def _collect(
        self,
        node: ast.expr,
        guard: ast.expr | None,
        found: list[tuple[str, ast.expr]],
        seen: set[str],
    ) -> None:
        """Outermost pure sub-expressions first, then their parts, in the order Python evaluates
        them. Values are read as the line starts, so only what runs before the line's first
        impure call is recorded: the receiver and arguments of that call (evaluated before it
        runs: `array.extend('x' * len(array))`), never the call itself or anything after it
        (`xs.pop() + len(xs)`: `len` sees the list once popped). `guard`: when the node runs
        at all (an operand after `and`/`or`, a branch of `x if c else y`)."""
        unsafe, pure, names = self._facts.get(id(node), (True, False, frozenset()))
        if unsafe:
            return
        if isinstance(node, ast.Call) and not _pure_call(node):
            parts = [
                *([node.func.value] if isinstance(node.func, ast.Attribute) else [node.func]),
                *node.args,
                *(k.value for k in node.keywords),
            ]
            for part in parts:
                self._collect(part, guard, found, seen)
            if not self._changed:
                self._taken(node, guard, found, seen)
            self._changed = True
            return
        if self._changed:
            return
        loads = not isinstance(getattr(node, "ctx", ast.Load()), ast.Store | ast.Del)
        if loads and names and pure and isinstance(node, _RECORDED):
            src = self._source(node)
            if src and src not in seen:
                seen.add(src)
                body: ast.expr = node
                if guard is not None:
                    body = ast.IfExp(guard, node, ast.Name(_SKIP, ast.Load()))
                found.append((src, body))
        if isinstance(node, ast.BoolOp):  # an operand runs only if the ones before did not decide
            for k, operand in enumerate(node.values):
                before: ast.expr | None = None
                if k:
                    prefix = node.values[:k]
                    joined = prefix[0] if k == 1 else ast.BoolOp(type(node.op)(), list(prefix))
                    before = (
                        joined if isinstance(node.op, ast.And) else ast.UnaryOp(ast.Not(), joined)
                    )
                self._collect(operand, _both(guard, before), found, seen)
            return
        if isinstance(node, ast.IfExp):
            self._collect(node.test, guard, found, seen)
            self._collect(node.body, _both(guard, node.test), found, seen)
            self._collect(node.orelse, _both(guard, ast.UnaryOp(ast.Not(), node.test)), found, seen)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._collect(child, guard, found, seen)

    def _taken(
        self,
        node: ast.Call,
        guard: ast.expr | None,
        found: list[tuple[str, ast.expr]],
        seen: set[str],
    ) -> None:
        """What the line's first changing call takes out (`new_text.pop(length - 1)`,
        `d.popitem()`, `d.setdefault(k, [])`): its result, read by making the same call on a
        copy of the receiver as the line starts, so the run itself is never changed."""
        func = node.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in _TAKERS
            and isinstance(func.value, ast.Name)
            and all(self._facts.get(id(a), (True, False))[1] for a in node.args)
            and not node.keywords
        ):
            return
        src = self._source(node)
        if not src or src in seen:
            return
        seen.add(src)
        copied = ast.Call(ast.Name(_COPY, ast.Load()), [func.value], [])
        body: ast.expr = ast.Call(ast.Attribute(copied, func.attr, ast.Load()), node.args, [])
        if guard is not None:
            body = ast.IfExp(guard, body, ast.Name(_SKIP, ast.Load()))
        found.append((src, body))

    def values(self, frame: FrameType, line: int, previous: int | None) -> list[list[Any]]:
        """`[[k, repr], ...]` for the line's sub-expressions that evaluate on `frame` now.
        `previous`: the line this frame ran before (a `for` header reached from its own body is
        the loop going round, where the iterable is not evaluated again)."""
        function = self.functions.get(line)
        if function is None:
            return []
        body = self.loop_body.get(line)
        if body is not None and previous is not None and body[0] <= previous <= body[1]:
            return []
        # The expressions see only plain builtin values: a generator would be drained, a
        # function or an object could run the sample's code. Anything else reads as unbound.
        scope: dict[str, Any] = {
            name: value
            for name, value in (*frame.f_globals.items(), *frame.f_locals.items())
            if type(value) in _PLAIN
        }
        for name in _PURE_FUNCS:
            if name in frame.f_locals or name in frame.f_globals:
                scope[name] = _SHADOWED  # the sample's own `len`: never the builtin's value
        scope["__builtins__"] = _BUILTINS
        scope[_TRY] = _try
        scope[_SKIP] = _SKIPPED
        scope[_COPY] = _copy_of
        try:
            results = FunctionType(function, scope)()
        except Exception:  # noqa: BLE001 - never let recording disturb the traced run
            return []
        return [[k, bounded_repr(r, 200)] for k, r in enumerate(results) if r is not _SKIPPED]


_TAKERS = frozenset(["pop", "popitem", "setdefault"])
_COPY = "__cruxtui_copy__"


def _copy_of(value: Any) -> Any:
    """A shallow copy of a plain list, dict or set (anything else is not read)."""
    if type(value) not in (list, dict, set, bytearray):
        raise TypeError("not a plain container")
    return value.copy()


_SKIP = "__cruxtui_not_run__"
_TRY = "__cruxtui_try__"
_SKIPPED = object()
_SHADOWED = object()
_NO_ARGS = ast.arguments([], [], None, [], [], None, [])
_UNSAFE = (
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.NamedExpr,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
    ast.Starred,
)


def _try(thunk: Any) -> Any:
    try:
        return thunk()
    except Exception:  # noqa: BLE001 - the line may raise there itself; nothing to record
        return _SKIPPED


def _both(a: ast.expr | None, b: ast.expr | None) -> ast.expr | None:
    if a is None or b is None:
        return a or b
    return ast.BoolOp(ast.And(), [a, b])


def _pure_call(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Name):
        ok = func.id in _PURE_FUNCS
    elif isinstance(func, ast.Attribute):
        ok = func.attr in _PURE_METHODS
    else:
        ok = False
    # A keyword argument may only be a constant or a pure builtin (`key=len`), never a function
    # of the sample's that would run its code.
    return ok and all(
        isinstance(k.value, ast.Constant)
        or (isinstance(k.value, ast.Name) and k.value.id in _PURE_FUNCS)
        for k in node.keywords
    )


def _builtins() -> dict[str, Any]:
    import builtins

    return {name: getattr(builtins, name) for name in _PURE_FUNCS}


_BUILTINS = _builtins()
