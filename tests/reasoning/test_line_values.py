"""The tracer records the values of each line's side-effect-free sub-expressions, and nothing it
records changes what the program does or how many steps it counts."""

from __future__ import annotations

from cruxtui.core.reasoning.alignment import align_text
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.trace.steps import Trace, from_wire


def run(code: str, call: str, **kw: object) -> Trace:
    return from_wire(code, call, tracer.run(code, call, **kw))  # type: ignore[arg-type]


def values_at(tr: Trace, line: int) -> list[dict[str, str]]:
    return [dict(s.values) for s in tr.steps if s.event == "line" and s.line == line]


def test_calls_subscripts_slices_and_comparisons_are_recorded() -> None:
    code = (
        "def f(nums, text):\n"
        "    c = nums.count(1)\n"
        "    if text[-1:] == ' ' and not text[0].isspace():\n"
        "        c += 1\n"
        "    return text.rfind('i'), text[5:8], c"
    )
    tr = run(code, "f([1, 1, 2, 1], 'ab c ')")
    assert values_at(tr, 2) == [{"nums.count(1)": "3"}]
    cond = values_at(tr, 3)[0]
    assert cond["text[-1:]"] == "' '" and cond["text[0].isspace()"] == "False"
    assert cond["text[-1:] == ' ' and not text[0].isspace()"] == "True"
    ret = values_at(tr, 5)[0]
    assert ret["text.rfind('i')"] == "-1" and ret["text[5:8]"] == "''"


def test_impure_calls_never_change_the_run_and_what_they_take_is_read_on_a_copy() -> None:
    """`d.popitem()`, `xs.pop()`: the value taken out is what the program computed there (a
    chain's "pop drops 'i'" is judged by it), read by making the call on a copy; the run's own
    containers are popped once, by the program."""
    code = "def f(d, xs):\n    k = d.popitem()\n    y = xs.pop() + len(xs)\n    return k, y, d, xs"
    tr = run(code, "f({'a': 1, 'k': 2}, [1, 2, 3])")
    assert tr.return_repr == "(('k', 2), 5, {'a': 1}, [1, 2])"
    assert values_at(tr, 2) == [{"d.popitem()": "('k', 2)"}]
    assert values_at(tr, 3)[0]["xs.pop()"] == "3"
    # len(xs) runs after the pop, on [1, 2]: the line's starting state would say 3.
    assert "len(xs)" not in values_at(tr, 3)[0]
    code = "def f(xs):\n    while xs:\n        xs.pop()\n    return xs.pop() if xs else xs"
    assert run(code, "f([1, 2])").return_repr == "[]"


def test_an_impure_calls_arguments_are_recorded_as_they_run_before_it() -> None:
    """`array.extend('x' * len(array))`: the argument is evaluated before extend runs, on the
    state the line starts from, so its parts are what the program computed there; after the
    first impure call of a line nothing is (`out.append(xs.pop()) or len(xs)`)."""
    code = (
        "def f(array, xs):\n"
        "    array.clear()\n"
        "    array.extend('x' * len(array))\n"
        "    xs.insert(1, xs[0] ** 2)\n"
        "    n = xs.pop() + len(xs)\n"
        "    return array, xs, n"
    )
    tr = run(code, "f([3, -2, 0], [3, 4])")
    assert tr.return_repr == "([], [3, 9], 6)"
    assert values_at(tr, 3) == [{"'x' * len(array)": "''", "len(array)": "0"}]
    assert values_at(tr, 4) == [{"xs[0] ** 2": "9", "xs[0]": "3"}]
    assert values_at(tr, 5) == [{"xs.pop()": "4"}]


def test_generators_functions_and_shadowed_builtins_are_left_alone() -> None:
    code = (
        "def g():\n"
        "    yield 1\n"
        "    yield 2\n"
        "def f(len):\n"
        "    it = g()\n"
        "    n = sorted(it)\n"
        "    return len(n)"
    )
    tr = run(code, "f(lambda x: 7)")
    assert tr.return_repr == "7"
    assert values_at(tr, 6) == [{}]  # `sorted(it)` would drain the generator
    assert values_at(tr, 7) == [{}]  # `len` is the sample's own function here


def test_loop_iterable_is_evaluated_on_entry_only_and_short_circuits_hold() -> None:
    code = (
        "def f(xs):\n"
        "    out = 0\n"
        "    for i in range(len(xs)):\n"
        "        if i > 0 and xs[i] // i > 1:\n"
        "            out += 1\n"
        "        xs.append(0) if i > 5 else None\n"
        "    return out"
    )
    tr = run(code, "f([3, 4, 9])")
    heads = values_at(tr, 3)
    assert heads[0] == {"range(len(xs))": "range(0, 3)", "len(xs)": "3"}
    assert all(h == {} for h in heads[1:])  # going round: the range is not evaluated again
    first, second = values_at(tr, 4)[:2]
    assert first["i > 0"] == "False" and "xs[i] // i > 1" not in first  # never ran
    assert second["xs[i] // i > 1"] == "True"


def test_step_count_is_the_same_with_and_without_values() -> None:
    code = "def f(s):\n    t = s.upper()\n    return [c for c in t if c.isalpha()]"
    with_values = tracer.run(code, "f('a1b')", expected="['A', 'B']")
    without = tracer.run(code, "f('a1b')", expected="['A', 'B']", line_values=False)
    assert with_values["numsteps"] == without["numsteps"] > 0
    assert with_values["steps"] != without["steps"]
    assert run(code, "f('a1b')", line_values=False).steps[1].values == []


def test_values_survive_the_json_round_trip() -> None:
    tr = run("def f(s):\n    return s.split()", "f('a b')")
    again = Trace.from_json(tr.to_json())
    assert again.steps[1].values == [("s.split()", "['a', 'b']")]


def test_a_subscript_written_with_a_value_is_the_one_the_line_read_with_a_variable() -> None:
    """`seen` has 200 slots, too big a state to rebuild; the program still read `seen[i]` with
    i = 3, and that is the `seen[3]` the chain speaks of."""
    code = (
        "def f(xs):\n"
        "    seen = [0] * 200\n"
        "    for x in xs:\n"
        "        seen[x] += 1\n"
        "    best = 0\n"
        "    for i in range(len(seen)):\n"
        "        if seen[i] > seen[best]:\n"
        "            best = i\n"
        "    return best\n"
    )
    tr = from_wire(code, "f([3, 7, 3])", tracer.run(code, "f([3, 7, 3])"))
    right = "After counting, seen[3] = 2 and seen[7] = 1, so the best slot is 3. f returns 3."
    assert align_text(right, tr).first_divergence is None
    wrong = "After counting, seen[3] = 1 and seen[7] = 1, so the first of them wins. f returns 3."
    div = align_text(wrong, tr).first_divergence
    assert div is not None and wrong[div.claim.start : div.claim.end] == "seen[3] = 1"
    assert div.true_value == "2"


CLEARED = (
    "def f(array):\n"
    "    array.reverse()\n"
    "    array.clear()\n"
    "    array.extend('x' * len(array))\n"
    "    array.reverse()\n"
    "    return array"
)


def test_an_expression_the_program_computes_once_is_judged_where_it_does() -> None:
    """ "`len(array)` is 3" of the extend line: the program computed len(array) there, once,
    and it was 0 (the list was cleared). That `array` had 3 items before is no excuse: the
    chain speaks of the value the line used."""
    tr = run(CLEARED, "f([3, -2, 0])")
    wrong = (
        "For the extend line, `len(array)` is 3 (the length of the list passed in), so it adds "
        "'xxx'. So f([3, -2, 0]) returns ['x', 'x', 'x']."
    )
    div = align_text(wrong, tr).first_divergence
    assert div is not None and wrong[div.claim.start : div.claim.end] == "len(array)` is 3"
    assert div.true_value == "0"
    right = "The list is cleared first, so `len(array)` is 0 and nothing is added: f returns []."
    assert align_text(right, tr).first_divergence is None
    # Said of another moment, it is judged there: before the clear the list has 3 items.
    before = "Before the clear, `len(array)` is 3. Then it is emptied, and f returns [1]."
    div = align_text(before, tr).first_divergence
    assert div is not None and div.claim.kind == "return"


def test_a_test_the_program_computes_once_is_judged_where_it_does() -> None:
    """ "name.islower() is True, which means we go into the if branch": f computes the test on
    its `if` line only, where it is False; that name.lower() later makes it True is no excuse."""
    code = (
        "def f(name):\n    if name.islower():\n        name = name.upper()\n"
        "    else:\n        name = name.lower()\n    return name"
    )
    tr = run(code, "f('Pinneaple')")
    wrong = (
        "The function checks name.islower() first; 'Pinneaple' is lowercase after the first "
        "letter, so name.islower() is True and f returns 'PINNEAPLE'."
    )
    div = align_text(wrong, tr).first_divergence
    assert div is not None and wrong[div.claim.start : div.claim.end] == "name.islower() is True"
    right = wrong.replace("is True and f returns 'PINNEAPLE'", "is False and f returns 'pinneaple'")
    assert align_text(right, tr).first_divergence is None
