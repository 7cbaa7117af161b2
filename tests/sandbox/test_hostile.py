"""Hostile predictions: each is a failure with the right reason, and the scorer survives unharmed.

After every check: no process of the sandbox's private uids is left, no file appears outside the
check's temp dir, and the next check still works.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

from cruxtui.core.data.dataset import Sample
from cruxtui.core.sandbox.pool import Limits, Sandbox
from cruxtui.core.scoring.verdicts import check

SAMPLE = Sample("h", "def f(s):\n    return s[::-1]", "'abc'", "'cba'")
STRAY = Path("/tmp") / f"cruxtui-hostile-{uuid.uuid4().hex}"
SECRET = "hunter2-" + uuid.uuid4().hex

# (prediction, expected kind, text the reason must contain)
OUTPUT_CASES = [
    ("next(filter(None, iter(int, 1)))", "timeout", "within"),
    ("10**10**10", ("timeout", "memory"), ""),
    ("'x' * 10**11", "memory", "out of memory"),
    ("bytearray(2**40)", "memory", "out of memory"),
    ("__import__('os').fork()", "exception", "blocked by the cruxtui sandbox: os.fork"),
    ("__import__('posix').system('touch ' + STRAY)", "exception", "os.system"),
    # As root the private uid cannot read an interpreter installed under /root, and the worker no
    # longer loads subprocess: the import itself fails. Either way nothing runs.
    (
        "__import__('subprocess').run(['touch', STRAY])",
        "exception",
        ("blocked", "No module named 'subprocess'"),
    ),
    ("open(STRAY, 'w').write('pwned')", "exception", "for writing"),
    ("__import__('os').environ['CRUXTUI_HOSTILE_SECRET']", "exception", "KeyError"),
    ("__import__('os').environ.get('CRUXTUI_HOSTILE_SECRET')", "wrong", "got None"),
    ("__import__('sys').exit(0)", "exception", "SystemExit"),
    ("__import__('os')._exit(0)", "crashed", "without a result"),
    ("(_ for _ in ()).throw(KeyboardInterrupt)", "exception", "KeyboardInterrupt"),
    (
        "__import__('ctypes').string_at(0)",
        "exception",
        ("blocked by the cruxtui sandbox", "import of ctypes halted"),
    ),
    ("__import__('faulthandler')._sigsegv()", "crashed", "SIGSEGV"),
    ("__import__('os').kill(__import__('os').getppid(), 9)", "exception", "os.kill"),
    ("__import__('os').killpg(0, 9)", "exception", "os.killpg"),
    ("[print('x' * 10**6) for _ in range(10**4)]", "output_limit", "printed more than"),
    (
        "__import__('sys').stdout.close() or __import__('os').close(1) or 'abc'",
        "wrong",
        "got 'abc'",
    ),
    ("__import__('os').close(3) or 'cba'", "crashed", "without a result"),
    (
        "type('E', (), {'__eq__': lambda s, o: True, '__hash__': None})()",
        "bad_value",
        "not plain data",
    ),
    ("type('D', (dict,), {'__eq__': lambda s, o: True})()", "bad_value", "not plain data"),
    ("type('S', (str,), {'__eq__': lambda s, o: True})('x')", "bad_value", "not plain data"),
    ("0 or 1", "wrong", "got 1"),
    ("{9: 9} if 0 else 1", "wrong", "got 1"),
    ("f('abc')", "calls_f", "uses f"),
    ("f(*'abc'[:3])", "calls_f", "uses f"),
    ("globals()['f']('abc')", "exception", "KeyError"),
    ("eval('f')('abc')", "exception", "NameError"),
    ("__import__('sys')._getframe(1).f_globals.get('f', str)('abc')", "wrong", "got 'abc'"),
]


@pytest.fixture(scope="module")
def box() -> Sandbox:
    os.environ["CRUXTUI_HOSTILE_SECRET"] = (
        SECRET  # set before the workers start: must not reach them
    )
    try:
        with Sandbox(workers=2, limits=Limits(timeout=1.5)) as sandbox:
            yield sandbox
    finally:
        del os.environ["CRUXTUI_HOSTILE_SECRET"]


def _processes_of(uids: list[int]) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            line = next(ln for ln in status.read_text().splitlines() if ln.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if int(line.split()[1]) in uids:
            found.append(int(status.parent.name))
    return found


def _children_of(pids: list[int]) -> list[int]:
    kids: list[int] = []
    for pid in pids:
        try:
            kids += [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            continue
    return kids


@pytest.mark.parametrize(
    ("prediction", "kind", "reason"), OUTPUT_CASES, ids=[c[0][:40] for c in OUTPUT_CASES]
)
def test_hostile_output_prediction_fails_safely(
    box: Sandbox, prediction: str, kind: object, reason: str | tuple[str, ...]
) -> None:
    prediction = prediction.replace("STRAY", repr(str(STRAY)))
    verdict = check(SAMPLE, "output", prediction, box)
    assert not verdict.passed
    assert verdict.kind in (kind if isinstance(kind, tuple) else (kind,)), verdict
    reasons = reason if isinstance(reason, tuple) else (reason,)
    assert any(r in verdict.reason for r in reasons), verdict
    assert SECRET not in verdict.reason and SECRET not in (verdict.produced or "")
    assert not STRAY.exists()
    if sys.platform == "linux":
        assert _processes_of(box.uids) == []
        assert _children_of(box.pids) == []
    assert check(SAMPLE, "output", "'cba'", box).passed  # the scorer is unharmed


def test_spliced_false_passes_are_recorded(box: Sandbox) -> None:
    """The benchmark's own check would pass these; the verdict says so in `official`."""
    for prediction in (
        "0 or 1",
        "{9: 9} if 0 else 1",
        "type('E', (), {'__eq__': lambda s, o: True})()",
        "globals()['f']('abc')",  # runs f: the spliced program has it, our evaluation does not
    ):
        verdict = check(SAMPLE, "output", prediction, box)
        assert not verdict.passed and verdict.official is True, prediction


INPUT_CASES = [
    # A forged result from the argument-evaluating child can only change the arguments.
    (
        'f(__import__(\'os\').write(3, b\'{"status":"ok","value":["s","cba"]}\') and __import__(\'os\')._exit(0))',
        "bad_value",
    ),
    (
        'f(__import__(\'os\').write(3, b\'{"status":"ok","value":["l",[["l",[["s","xyz"]]],["d",[]]]]}\') and __import__(\'os\')._exit(0))',
        "wrong",
    ),
    # Frame tricks in the arguments: there is no result of f in that child to tamper with.
    (
        "f(__import__('sys')._getframe(0).f_globals.__setitem__('f', lambda s: 'cba') or 'zzz')",
        "wrong",
    ),
    ("f(type('E', (str,), {'__eq__': lambda s, o: True})('x'))", "bad_value"),
    ("f(__import__('os').killpg(0, 9))", "exception"),
    ("f('cba') or True", "not_a_call"),
    ("f(next(filter(None, iter(int, 1))))", "timeout"),
]


@pytest.mark.parametrize(("prediction", "kind"), INPUT_CASES, ids=[c[0][:40] for c in INPUT_CASES])
def test_hostile_input_prediction_fails_safely(box: Sandbox, prediction: str, kind: str) -> None:
    verdict = check(SAMPLE, "input", prediction, box)
    assert not verdict.passed and verdict.kind == kind, verdict
    if sys.platform == "linux":
        assert _processes_of(box.uids) == []
    assert check(SAMPLE, "input", "f('abc')", box).passed
