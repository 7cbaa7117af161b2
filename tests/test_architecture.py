"""The core package never imports Textual: the CLI, scripts and tests use it without a terminal UI.

Two checks: importing every module under `cruxtui.core` in a fresh interpreter leaves `textual`
out of `sys.modules` (catches indirect imports too), and no source file under `cruxtui/core`
names textual in an import statement (catches imports hidden inside functions).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from conftest import REPO

CORE = REPO / "cruxtui" / "core"

# pkgutil walks regular packages; modules named on argv (every .py on disk) are imported too, so
# a sub-folder without __init__.py (a namespace package, which pkgutil skips) is not missed.
_IMPORT_ALL = r"""
import importlib, json, pkgutil, sys
import cruxtui.core as core
names = ["cruxtui.core"]
for info in pkgutil.walk_packages(core.__path__, prefix="cruxtui.core."):
    importlib.import_module(info.name)
    names.append(info.name)
for name in sys.argv[1:]:
    if name not in names:
        importlib.import_module(name)
        names.append(name)
textual = sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))
print(json.dumps({"imported": names, "textual": textual}))
"""


def core_modules_on_disk() -> list[str]:
    return sorted(
        ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for p in CORE.rglob("*.py")
    )


def test_importing_every_core_module_never_loads_textual() -> None:
    on_disk = core_modules_on_disk()
    assert "cruxtui.core.data.dataset" in on_disk
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, *on_disk],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert set(on_disk) <= set(report["imported"])
    assert report["textual"] == []


def textual_imports(source: str) -> list[int]:
    """Line numbers of `import textual...` / `from textual... import` statements."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(n == "textual" or n.startswith("textual.") for n in names):
            lines.append(node.lineno)
    return lines


def test_textual_imports_finder_sees_all_forms() -> None:
    src = "import os\nimport textual\ndef g():\n    from textual.widgets import Input\nimport textualize\n"
    assert textual_imports(src) == [2, 4]


def test_no_core_source_imports_textual() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert files
    offenders = {
        str(p.relative_to(REPO)): found
        for p in files
        if (found := textual_imports(p.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_no_two_modules_share_a_basename() -> None:
    """A feature is found in one guess: `trace.py` and `tracer.py`, or two `replay.py`, are not."""
    seen: dict[str, list[str]] = {}
    for p in (REPO / "cruxtui").rglob("*.py"):
        if p.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(p.stem, []).append(str(p.relative_to(REPO)))
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}


def test_no_import_cycle_between_modules() -> None:
    """Imports form a DAG: a module-level or deferred import that closes a loop fails here.

    grimp (import-linter's graph) sees every import statement, those inside functions too, so a
    deferred import that only hides a cycle from Python is still a cycle.
    """
    import grimp

    graph = grimp.build_graph("cruxtui")
    modules = sorted(graph.modules)
    index = {m: i for i, m in enumerate(modules)}
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    # Tarjan's strongly connected components: any component of two or more modules is a cycle.
    counter = [0]
    low: dict[str, int] = {}
    num: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        num[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in num:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], num[w])
        if low[v] == num[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for m in modules:
        if m not in num:
            visit(m)
    assert index and cycles == []
