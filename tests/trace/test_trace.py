"""Tracing: every benchmark sample's traced return value equals its output, hand-checked step
sequences, code that misbehaves (raises, loops, recurses, prints), bounded reprs, the paper's
numsteps counting, and the `cruxtui trace` command."""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CRUXEVAL_JSONL

from cruxtui.cli.main import main
from cruxtui.core.data.dataset import Dataset, load_dataset, starter_path
from cruxtui.core.sandbox.pool import Outcome, Sandbox
from cruxtui.core.trace import numsteps
from cruxtui.core.trace.steps import Trace, from_outcome, trace, trace_many, trace_sample
from cruxtui.core.util.bounded_repr import bounded_call, bounded_repr, is_cut, shorten


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        yield sandbox


def same_value(got: str | None, expected: str) -> bool:
    """Equal reprs, or equal values where only the formatting differs (quotes, spacing)."""
    if got == expected:
        return True
    try:
        return got is not None and ast.literal_eval(got) == ast.literal_eval(expected)
    except (ValueError, SyntaxError):
        return False


def lines_of(t: Trace) -> list[tuple[str, int]]:
    return [(s.event, s.line) for s in t.steps]


# --- every benchmark sample -----------------------------------------------------------------


def test_all_samples_return_the_benchmark_output(official: Dataset, box: Sandbox) -> None:
    traces = trace_many([(s.code, s.call, s.output) for s in official.samples], sandbox=box)
    wrong = [
        (s.id, t.return_repr, s.output, t.ended)
        for s, t in zip(official.samples, traces, strict=True)
        if not same_value(t.return_repr, s.output)
    ]
    assert wrong == []
    assert all(
        t.steps and t.steps[0].event == "call" and t.steps[-1].event == "return" for t in traces
    )
    assert all(not (t.truncated or t.timeout or t.error or t.exception) for t in traces)
    # numsteps counts opcode events too, so it is always well above the line steps.
    assert all(t.numsteps > len(t.steps) for t in traces)


# --- hand-checked step sequences ------------------------------------------------------------


def test_loop_counts_sample_0(official: Dataset, box: Sandbox) -> None:
    s = official["sample_0"]  # for n in nums (6 items): output.append(...); then sort, return
    t = trace_sample(s, sandbox=box)
    loop = [("line", 3), ("line", 4)] * 6
    assert lines_of(t) == [
        ("call", 1),
        ("line", 2),
        *loop,
        ("line", 3),
        ("line", 5),
        ("line", 6),
        ("return", 6),
    ]
    visits = t.visits()
    assert len(visits[4]) == 6 and len(visits[3]) == 7 and visits[1] == [0]
    assert t.steps[0].locals == [("nums", "[1, 1, 3, 1, 3, 1]")] and t.steps[0].changed == ["nums"]
    # `n` is marked only when its value changes: 1, 1, 3, 1, 3, 1 -> 5 of the 6 iterations.
    n_changes = [st.index for st in t.steps if "n" in st.changed]
    assert n_changes == [3, 7, 9, 11, 13]
    assert t.return_repr == s.output


def test_list_mutation_and_definition_order(box: Sandbox) -> None:
    code = "def f(xs):\n    zed = len(xs)\n    xs.append(zed)\n    xs[0] = 9\n    alpha = xs\n    return alpha"
    t = trace(code, "f([5])", sandbox=box)
    by_line = {s.line: s for s in t.steps if s.event == "line"}
    assert by_line[3].changed == ["zed"] and dict(by_line[3].locals)["xs"] == "[5]"
    assert by_line[4].changed == ["xs"] and dict(by_line[4].locals)["xs"] == "[5, 1]"
    assert by_line[5].changed == ["xs"] and dict(by_line[5].locals)["xs"] == "[9, 1]"
    ret = t.steps[-1]
    assert ret.event == "return" and ret.value == "[9, 1]"
    assert [name for name, _ in ret.locals] == ["xs", "zed", "alpha"]  # the order they were bound
    assert t.effects(by_line[3].index) == [("xs", "[5, 1]")]  # what line 3 did
    assert t.return_repr == "[9, 1]"


def test_exception_ends_the_trace(box: Sandbox) -> None:
    t = trace("def f(x):\n    y = 10\n    return y // x", "f(0)", sandbox=box)
    assert lines_of(t) == [("call", 1), ("line", 2), ("line", 3), ("exception", 3), ("return", 3)]
    assert t.steps[3].value == "ZeroDivisionError: integer division or modulo by zero"
    assert t.steps[4].value is None  # unwinding, not `return None`
    assert t.exception == "ZeroDivisionError: integer division or modulo by zero"
    assert t.return_repr is None and not t.ok and "raised ZeroDivisionError" in t.ended


def test_caught_exception_still_returns(box: Sandbox) -> None:
    code = "def f(x):\n    try:\n        return 1 // x\n    except ZeroDivisionError:\n        return None"
    t = trace(code, "f(0)", sandbox=box)
    assert [s.event for s in t.steps].count("exception") == 1
    assert t.return_repr == "None" and t.exception is None and t.ok


def test_depth_of_helpers_lambdas_and_comprehensions(box: Sandbox) -> None:
    code = (
        "def f(xs):\n"
        "    def g(k):\n"
        "        return k + 1\n"
        "    ys = [g(x) for x in xs]\n"
        "    return sorted(ys, key=lambda v: -v)"
    )
    t = trace(code, "f([1, 2])", sandbox=box)
    funcs = {(s.func, s.depth) for s in t.steps}
    comprehension = "<listcomp>" if sys.version_info < (3, 12) else "f"  # 3.12 inlines them
    assert {("f", 0), ("<lambda>", 1), (comprehension, 1 if comprehension != "f" else 0)} <= funcs
    assert ("g", 2 if comprehension != "f" else 1) in funcs
    assert all(not name.startswith(".") for s in t.steps for name, _ in s.locals)
    assert t.return_repr == "[3, 2]"


def test_generator_expression_and_recursion_depth(box: Sandbox) -> None:
    t = trace("def f(s):\n    return ''.join(c.upper() for c in s)", "f('ab')", sandbox=box)
    assert {s.func for s in t.steps if s.depth == 1} == {"<genexpr>"}
    assert t.return_repr == "'AB'"
    t = trace("def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)", "f(3)", sandbox=box)
    assert max(s.depth for s in t.steps) == 3 and t.return_repr == "3"


def test_only_sample_code_is_traced(box: Sandbox) -> None:
    """The call text's own lambda is not part of the sample and shows no steps."""
    t = trace("def f(g):\n    return g(2)", "f(lambda v: v * 10)", sandbox=box)
    assert {s.func for s in t.steps} == {"f"} and t.return_repr == "20"


# --- bad input ------------------------------------------------------------------------------


def test_infinite_loop_hits_the_step_cap(box: Sandbox) -> None:
    t = trace("def f(x):\n    while True:\n        x += 1", "f(0)", sandbox=box, max_steps=500)
    assert t.truncated and len(t.steps) == 500 and not t.timeout
    assert t.return_repr is None and t.exception is None and "step cap" in t.ended


def test_slow_steps_time_out_with_the_steps_so_far(box: Sandbox) -> None:
    code = "def f(x):\n    while True:\n        x = sum(range(200000))"
    t = trace(code, "f(0)", sandbox=box, timeout=0.5)
    assert t.timeout and t.steps and not t.truncated and t.ended == "timed out"


def test_stuck_in_a_builtin_times_out(box: Sandbox) -> None:
    t = trace("def f(x):\n    return sum(range(10 ** 12))", "f(0)", sandbox=box, timeout=0.3)
    assert t.timeout and t.steps == [] and t.return_repr is None


def test_deep_recursion_ends_with_recursion_error(box: Sandbox) -> None:
    t = trace("def f(n):\n    return f(n + 1)", "f(0)", sandbox=box)
    assert t.exception is not None and t.exception.startswith("RecursionError")
    assert max(s.depth for s in t.steps) > 500 and not t.truncated


def test_printing_a_lot_is_captured_and_bounded(box: Sandbox) -> None:
    code = "def f(n):\n    for i in range(n):\n        print('x' * 1000)\n    return n"
    t = trace(code, "f(3000)", sandbox=box)  # 3 MB printed: far beyond the sandbox's output cap
    assert t.return_repr == "3000" and t.ok
    assert t.stdout.startswith("x" * 100) and is_cut(t.stdout) and len(t.stdout) < 10_000


def test_huge_values_are_cut_with_a_marker(box: Sandbox) -> None:
    t = trace("def f(n):\n    s = 'ab' * n\n    return s", "f(10 ** 6)", sandbox=box)
    assert is_cut(t.return_repr or "") and len(t.return_repr or "") < 30_000
    s_repr = dict(t.steps[-1].locals)["s"]
    assert is_cut(s_repr) and len(s_repr) < 300


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        ("f(1", "call does not parse"),
        ("x = f(1)", "call does not parse"),
        ("", "call does not parse"),
    ],
)
def test_bad_call_text_is_an_error_not_a_crash(call: str, problem: str) -> None:
    t = trace("def f(x):\n    return x", call)  # rejected before any process starts
    assert t.error is not None and problem in t.error and t.steps == []


def test_code_that_does_not_parse(box: Sandbox) -> None:
    t = trace("def f(x)\n    return x", "f(1)", sandbox=box)
    assert t.error is not None and t.error.startswith("code does not parse")


def test_wrong_arguments_raise_before_f_runs(box: Sandbox) -> None:
    t = trace("def f(a, b):\n    return a", "f(1)", sandbox=box)
    assert t.steps == [] and t.exception is not None and t.exception.startswith("TypeError")


@pytest.mark.parametrize(
    "steps",
    [
        '[["call", "1", 0, "f", 0, [], [], null]]',
        '[["jump", 1, 0, "f", 0, [], [], null]]',
        '[["line", 1, 0, "f", 0, [["x", 1]], [], null]]',
        '{"a": 1}',
        "[" * 100_000,
        "not json",
    ],
)
def test_a_malformed_result_from_the_child_is_an_error(steps: str) -> None:
    """The child also ran untrusted code, which could have tampered with what it sends back."""
    wire = {
        "steps": steps,
        "return_repr": None,
        "exception": None,
        "truncated": False,
        "timeout": False,
        "error": None,
        "numsteps": 3,
        "stdout": "",
    }
    t = from_outcome("def f(x):\n    return x", "f(1)", Outcome("ok", wire, "", 0.0))
    assert t.error is not None and t.error.startswith("malformed trace") and t.steps == []


# --- bounded reprs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "it's",
        b"\x00b",
        [1, (2,), {3: "x"}],
        set(),
        frozenset({1}),
        {"a": [None, True]},
        (),
        1.5,
        -3,
        {1, 2},
        [[], {}],
        "\n\t",
    ],
)
def test_bounded_repr_matches_repr_when_it_fits(value: object) -> None:
    assert bounded_repr(value) == repr(value)


def test_bounded_repr_plain_repr_shortcut_keeps_the_guarantees() -> None:
    """Flat builtin values take plain `repr()`; subclasses, long or nested values do not, so a
    hostile `__repr__` still cannot raise and a long value is still cut."""

    class Loud(str):
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert bounded_repr(Loud("x")) == "<repr failed: RuntimeError>"
    assert bounded_repr([Loud("x")]) == "<repr failed: RuntimeError>"
    assert bounded_repr({"k": Loud("x")}) == "<repr failed: RuntimeError>"
    assert bounded_repr("\x00" * 10, 20).endswith("chars)")  # short text, long repr: cut
    assert bounded_repr(list(range(40)), 500) == repr(list(range(40)))  # past the flat size
    assert bounded_repr([2**70, "ab", None, 1.5]) == repr([2**70, "ab", None, 1.5])


def test_bounded_repr_cuts_and_says_how_much() -> None:
    assert bounded_repr("a" * 1000, 20) == "'" + "a" * 18 + "…(+982 chars)"
    assert bounded_repr(list(range(1000)), 30).endswith("…(+991 items)")
    loop: list[object] = [1]
    loop.append(loop)
    assert bounded_repr(loop) == repr(loop)
    assert bounded_repr(10**5000).startswith("<int with")
    assert bounded_repr(10**40, 50) == repr(10**40)
    assert bounded_repr(10**4000, 50) == "<int with about 4,000 digits>"  # never converted
    assert shorten("abcdef", 6) == "abcdef" and shorten("abcdefgh", 3) == "abc…(+5 chars)"
    assert bounded_call("f", [1, "a"], {"k": (2,)}) == "f(1, 'a', k=(2,))"
    assert bounded_call("f", list(range(100)), {"k": 1}, 20) == "f(0, 1, 2, 3, 4, …(+96 items)"

    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert bounded_repr([Hostile()]) == "<repr failed: RuntimeError>"


# --- numsteps as the paper counted it -------------------------------------------------------


def _paper_numsteps(code: str) -> int:
    """The counting loop of CRUXEval's data/filter/analyze_ops.py: every trace event of every
    frame with opcode tracing on, while exec'ing `code` plus its assert line."""
    count = 0

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal count
        frame.f_trace_opcodes = True
        count += 1
        return tracer

    sys.settrace(tracer)
    try:
        scope: dict[str, object] = {}
        exec(compile(code, "<string>", "exec", optimize=0), scope, scope)  # noqa: S102
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("sample_id", ["sample_0", "sample_1", "sample_50", "sample_799"])
def test_numsteps_matches_the_papers_counting(
    official: Dataset, box: Sandbox, sample_id: str
) -> None:
    s = official[sample_id]
    expected = _paper_numsteps(f"{s.code}\nassert {s.call} == {s.output}")
    assert trace_sample(s, sandbox=box).numsteps == expected


def test_numsteps_cached_per_dataset(box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    starter = load_dataset(starter_path())
    counts = numsteps.load_or_count(starter, sandbox=box)
    assert counts is not None and set(counts) == {s.id for s in starter.samples}
    assert numsteps.cache_path(starter.digest).exists()

    def no_counting(*args: object, **kwargs: object) -> dict[str, int]:
        raise AssertionError("should have been read from the cache")

    monkeypatch.setattr(numsteps, "count", no_counting)
    assert numsteps.load_or_count(starter) == counts
    numsteps.cache_path(starter.digest).write_text("{broken", encoding="utf-8")
    assert numsteps.load_cached(starter) is None


def test_trace_json_round_trip(official: Dataset, box: Sandbox) -> None:
    t = trace_sample(official["sample_0"], sandbox=box)
    again = Trace.from_json(json.loads(json.dumps(t.to_json())))
    assert again == t


# --- the command line -----------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["trace", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def dataset_arg(shared_data: Path) -> list[str]:
    return ["--dataset", str(CRUXEVAL_JSONL)]


def test_cli_table_for_a_sample(capsys: pytest.CaptureFixture[str], dataset_arg: list[str]) -> None:
    code, out, _ = _cli(capsys, "sample_3", *dataset_arg)
    assert code == 0
    assert all(h in out for h in ("step", "line", "source", "changed variables", "return"))
    assert "text_list = list(text)" in out and "returned 'bcksrutq'" in out


def test_cli_typed_call_and_bad_call(
    capsys: pytest.CaptureFixture[str], dataset_arg: list[str]
) -> None:
    code, out, _ = _cli(capsys, "sample_3", "--call", "f('ab', 'c')", *dataset_arg)
    assert code == 0 and "returned 'abc'" in out
    code, out, err = _cli(capsys, "sample_3", "--call", "f('abc'", *dataset_arg)
    assert code == 2 and "--call does not parse" in err and "Traceback" not in err + out


def test_cli_all_jsonl(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    out_file = tmp_path / "traces.jsonl"
    code, _, err = _cli(capsys, "--all", "--jsonl", str(out_file), "--dataset", str(starter_path()))
    assert code == 0 and "traced 40 samples" in err
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    starter = load_dataset(starter_path())
    assert [r["id"] for r in rows] == [s.id for s in starter.samples]
    for row, s in zip(rows, starter.samples, strict=True):
        assert set(row) == {"id", "steps", "numsteps", "return", "error"}
        assert row["error"] is None and same_value(row["return"], s.output)
        assert row["numsteps"] > row["steps"] > 0
