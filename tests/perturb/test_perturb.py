"""Perturbations: every transform over all 800 samples (variants parse; behaviour-preserving ones
keep the output when run in the sandbox; renames never touch attributes, keywords or builtins),
exact rewrites on small functions, bad input (not applicable, unparsable, capture), rejection
reasons, stable ids, diffs and the `cruxtui perturb` command."""

from __future__ import annotations

import ast
import contextlib
import json
from collections import Counter
from collections.abc import Iterator

import libcst as cst
import pytest
from conftest import CRUXEVAL_JSONL

from cruxtui.cli.main import main
from cruxtui.cli.perturb_cmd import TRANSFORMS_HELP
from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.perturb import (
    CATALOGUE,
    Applied,
    NotApplicable,
    PerturbError,
    Rejection,
    SpecError,
    TransformSpec,
    UnparsableCode,
    Variant,
    VariantRejected,
    apply_chain,
    make_variant,
    parse_spec,
    transforms_in,
    verify,
)
from cruxtui.core.perturb.diff import side_by_side, unified
from cruxtui.core.perturb.survey import SURVEY_SPECS, survey
from cruxtui.core.sandbox.pool import Limits, Sandbox


@pytest.fixture(scope="module")
def box() -> Iterator[Sandbox]:
    with Sandbox() as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def all_variants(official: Dataset) -> dict[str, list[Applied]]:
    """Every surveyed transform applied (seed 0) to every sample it applies to; not executed."""
    out: dict[str, list[Applied]] = {}
    for text in SURVEY_SPECS:
        spec = parse_spec(text)
        out[text] = []
        for sample in official.samples:
            with contextlib.suppress(NotApplicable):
                out[text].append(apply_chain(sample, [spec]))
    return out


def one(code: str, spec: str, input_text: str = "1", seed: int = 0) -> Applied:
    return apply_chain(Sample("t", code, input_text, "None"), [parse_spec(spec, seed)])


def code_after(code: str, spec: str, seed: int = 0) -> str:
    return one(code, spec, seed=seed).subject.code


# --- all 800 samples --------------------------------------------------------------------------


def test_every_variant_of_every_sample_parses_and_changes_something(
    official: Dataset, all_variants: dict[str, list[Applied]]
) -> None:
    for text, applied in all_variants.items():
        assert len(applied) >= 50, f"{text} applies to only {len(applied)} samples"
        for a in applied:
            cst.parse_module(a.subject.code)  # libcst
            ast.parse(a.subject.code)  # and CPython
            ast.parse(f"f({a.subject.input})", mode="eval")
            assert (a.subject.code, a.subject.input) != (a.parent.code, a.parent.input), a.id
    # renaming by anonymizing applies to every sample (each has at least one parameter)
    assert len(all_variants["rename:anonymize"]) == len(official)


def test_variant_ids_read_back_into_their_transforms(
    official: Dataset, all_variants: dict[str, list[Applied]]
) -> None:
    """What `cruxtui stats --by transform` relies on, for every variant of every sample, seeded
    or not, chained, and with an explicit rename mapping."""
    for applied in all_variants.values():
        for a in applied:
            assert transforms_in(a.id) == tuple(step.spec.name for step in a.steps), a.id
    specs = ["rename:shuffle", "flip-compare", "rename:anonymize", "rename:x1=y"]
    chained = apply_chain(official["sample_2"], [parse_spec(s, 4) for s in specs])
    assert chained.id == "sample_2~shuffle-s4~flip-compare~anon~rename-x1=y"
    assert transforms_in(chained.id) == ("rename", "flip-compare", "rename", "rename")
    assert transforms_in("sample_3") == ()
    assert transforms_in("sample_3~made-up") == ("made-up",)


def test_behaviour_preserving_variants_keep_the_output_on_all_samples(
    official: Dataset, all_variants: dict[str, list[Applied]], box: Sandbox
) -> None:
    preserving = [a for applied in all_variants.values() for a in applied if a.preserving]
    assert {a.steps[0].spec.name for a in preserving} == {"rename", "swap-if", "mirror-compare"}
    assert len(preserving) > 1500
    results = verify(preserving, box, Limits(timeout=3.0))  # a busy machine must not fail this
    rejected = [(r.id, r.kind, r.reason) for r in results if isinstance(r, Rejection)]
    assert rejected == []
    # Every variant's output text equals the benchmark's recorded output for its parent.
    differ = {
        v.parent_id
        for v in results
        if isinstance(v, Variant) and v.sample.output != official[v.parent_id].output
    }
    assert differ == set()


def _attrs_and_keywords(code: str) -> tuple[Counter[str], Counter[str]]:
    tree = ast.parse(code)
    attrs = Counter(n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute))
    keywords = Counter(
        k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg
    )
    return attrs, keywords


def _free_names(code: str) -> Counter[str]:
    """Uses of names no function binds (builtins, globals such as `f` and module helpers)."""
    tree = ast.parse(code)
    bound = {
        a.arg
        for n in ast.walk(tree)
        if isinstance(n, ast.arguments)
        for a in [*n.posonlyargs, *n.args, *n.kwonlyargs, *filter(None, [n.vararg, n.kwarg])]
    }
    bound |= {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)
    }
    return Counter(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in bound)


def test_renaming_never_changes_attributes_keywords_builtins_or_globals(
    all_variants: dict[str, list[Applied]],
) -> None:
    with_attrs = with_keywords = 0
    for text in ("rename:anonymize", "rename:shuffle"):
        for a in all_variants[text]:
            old_attrs, old_keywords = _attrs_and_keywords(a.parent.code)
            new_attrs, new_keywords = _attrs_and_keywords(a.subject.code)
            assert new_attrs == old_attrs, a.id
            assert new_keywords == old_keywords, a.id
            assert _free_names(a.subject.code) == _free_names(a.parent.code), a.id
            assert a.subject.input == a.parent.input
            with_attrs += bool(old_attrs)
            with_keywords += bool(old_keywords)
    # the property is checked on many samples that have attributes and keyword arguments
    assert with_attrs > 500 and with_keywords > 20


def test_survey_counts_add_up(official: Dataset, box: Sandbox) -> None:
    samples = official.samples[:40]
    result = survey(samples, box)
    assert [r.spec for r in result.reports] == list(SURVEY_SPECS)
    for r in result.reports:
        assert r.applies == r.accepted + sum(r.rejected.values())
        assert r.applies <= r.samples == 40
    assert sum(r.accepted for r in result.reports) == len(result.variants)
    assert {r.kind for r in result.rejections} <= {"raises", "timeout"}
    assert result.rejections, "negating or flipping conditions in 40 samples rejects some variants"


# --- renaming, scope by scope -------------------------------------------------------------------


def test_anonymize_numbers_variables_in_order_of_first_appearance() -> None:
    code = "def f(text, n):\n    out = [c.upper() for c in text]\n    return ''.join(out)[:n]\n"
    assert code_after(code, "rename:anonymize") == (
        "def f(x1, x2):\n    x3 = [x4.upper() for x4 in x1]\n    return ''.join(x3)[:x2]\n"
    )


def test_comprehension_lambda_and_closure_scopes_are_kept_apart() -> None:
    code = (
        "def f(x):\n"
        "    y = [x for x in x]\n"
        "    g = lambda x: x + y[0]\n"
        "    def h(z):\n"
        "        return z + x\n"
        "    return g(1) + h(2)\n"
    )
    new = code_after(code, "rename:anonymize")
    assert new == (
        "def f(x1):\n"
        "    x2 = [x3 for x3 in x1]\n"
        "    x4 = lambda x5: x5 + x2[0]\n"
        "    def h(x6):\n"
        "        return x6 + x1\n"
        "    return x4(1) + h(2)\n"
    )


def test_rename_skips_globals_builtins_f_and_parameters_passed_by_keyword() -> None:
    code = (
        "LIMIT = 3\n"
        "def helper(key):\n"
        "    return key\n"
        "def f(items):\n"
        "    total = len(items) + LIMIT\n"
        "    return helper(key=total) + f.__name__.count('f')\n"
    )
    new = code_after(code, "rename:anonymize")
    assert "def helper(key):\n    return key" in new  # `key` is passed by keyword: kept
    assert (
        "def f(x1):\n    x2 = len(x1) + LIMIT\n    return helper(key=x2) + f.__name__.count('f')"
        in new
    )


def test_anonymize_skips_names_already_in_use() -> None:
    code = "def f(a):\n    b = x1(a)\n    return b\n"
    assert code_after(code, "rename:anonymize") == "def f(x2):\n    x3 = x1(x2)\n    return x3\n"


def test_shuffle_moves_every_name_and_is_deterministic() -> None:
    code = "def f(a, b, c):\n    return a - b * c\n"
    first = one(code, "rename:shuffle", seed=1)
    assert first.subject == one(code, "rename:shuffle", seed=1).subject
    tree = ast.parse(first.subject.code).body[0]
    params = [p.arg for p in tree.args.args]  # type: ignore[attr-defined]
    assert sorted(params) == ["a", "b", "c"] and all(
        p != q for p, q in zip(params, "abc", strict=True)
    )
    assert first.id == "t~shuffle-s1"
    seeds = {one(code, "rename:shuffle", seed=s).subject.code for s in range(8)}
    assert len(seeds) == 2  # the two derangements of three names


def test_explicit_mapping_renames_and_swaps() -> None:
    code = "def f(s, x):\n    return s.count(x)\n"
    assert (
        code_after(code, "rename:s=text,x=sub") == "def f(text, sub):\n    return text.count(sub)\n"
    )
    assert code_after(code, "rename:s=x,x=s") == "def f(x, s):\n    return x.count(s)\n"
    # an attribute's name is no variable: renaming to it captures nothing
    assert code_after(code, "rename:x=count") == "def f(s, count):\n    return s.count(count)\n"


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("rename:s=x", PerturbError, "would capture the name 'x'"),
        ("rename:s=len", PerturbError, "would capture the name 'len'"),
        ("rename:s=z,x=z", PerturbError, "would both become 'z'"),
        ("rename:len=n", NotApplicable, "'len' is not a renamable variable"),
        ("rename:q=n", NotApplicable, "'q' does not occur"),
        ("rename:s=2x", SpecError, "not a valid Python variable name"),
        ("rename:s=class", SpecError, "not a valid Python variable name"),
        ("rename:s", SpecError, "bad rename parameter"),
    ],
)
def test_explicit_mapping_refusals(spec: str, error: type[Exception], message: str) -> None:
    code = "def f(s, x):\n    return len(s.count(x))\n"
    with pytest.raises(error, match=message.replace("(", r"\(")):
        one(code, spec)


# --- conditions and constants ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "spec", "expected"),
    [
        ("a < b", "flip-compare:1", "a >= b"),
        ("a == b", "flip-compare", "a != b"),
        ("x in y", "flip-compare", "x not in y"),
        ("x not in y", "flip-compare", "x in y"),
        ("x is None", "flip-compare", "x is not None"),
        ("a < b <= c", "flip-compare:2", "a < b > c"),
        ("a < b", "mirror-compare", "b > a"),
        ("a < b <= c", "mirror-compare", "c >= b > a"),
        ("x % 2 == 0", "mirror-compare", "0 == x % 2"),
        ("6173 < 1000", "const:1,=7", "7 < 1000"),
        ("6173 < 1000", "const:2,+1", "6173 < 1001"),
        ("6173 < 1000", "const:2,-1", "6173 < 999"),
        ("len(s) > 5", "const:1,-1", "len(s) > 4"),
    ],
)
def test_comparison_rewrites(code: str, spec: str, expected: str) -> None:
    new = code_after(f"def f(a, b, c, x, y, s):\n    return {code}\n", spec)
    assert new == f"def f(a, b, c, x, y, s):\n    return {expected}\n"


def test_mirror_has_no_site_for_in() -> None:
    with pytest.raises(NotApplicable, match="does not apply"):
        one("def f(x, y):\n    return x in y\n", "mirror-compare")


def test_negate_wraps_or_unwraps_and_keeps_a_space_after_while() -> None:
    assert code_after("def f(a, b):\n    if a and b:\n        return 1\n", "negate") == (
        "def f(a, b):\n    if not (a and b):\n        return 1\n"
    )
    assert (
        code_after("def f(a):\n    if not a:\n        return 1\n", "negate")
        == "def f(a):\n    if a:\n        return 1\n"
    )
    assert code_after("def f(a):\n    while(a):\n        a -= 1\n", "negate") == (
        "def f(a):\n    while not (a):\n        a -= 1\n"
    )
    assert code_after("def f(a):\n    return [x for x in a if x > 1]\n", "negate") == (
        "def f(a):\n    return [x for x in a if not (x > 1)]\n"
    )


def test_swap_if_swaps_blocks_and_conditional_expressions() -> None:
    code = "def f(a):\n    if a > 1:\n        return 'big'\n    else:\n        return 'small'\n"
    assert code_after(code, "swap-if") == (
        "def f(a):\n    if not (a > 1):\n        return 'small'\n    else:\n        return 'big'\n"
    )
    # an unparenthesised nested conditional moving into the body slot is protected
    expr = "def f(a, b):\n    return 1 if a else 2 if b else 3\n"
    assert (
        code_after(expr, "swap-if:1")
        == "def f(a, b):\n    return (2 if b else 3) if not a else 1\n"
    )
    # elif with an else is a site; a bare if is not
    assert one("def f(a):\n    if a:\n        a = 2\n    return a\n", "negate").id == "t~negate"
    with pytest.raises(NotApplicable, match="no if/else"):
        one("def f(a):\n    if a:\n        a = 2\n    return a\n", "swap-if")


def test_constant_digit_edits_are_seeded_and_deterministic() -> None:
    code = "def f(n):\n    return n < 6173\n"
    dropped = code_after(code, "const:1,drop", seed=4)
    assert dropped in {f"def f(n):\n    return n < {v}\n" for v in ("173", "673", "613", "617")}
    assert code_after(code, "const:1,drop", seed=4) == dropped
    replaced = {code_after(code, "const:1,digit", seed=s) for s in range(10)}
    assert len(replaced) > 3
    for new in replaced:
        value = new.split("< ")[1].strip()
        assert len(value) == 4 and sum(a != b for a, b in zip(value, "6173", strict=True)) == 1


def test_const_applies_to_range_arguments() -> None:
    code = "def f(s):\n    for i in range(len(s) - 1):\n        s += s[i]\n    return s\n"
    assert code_after(code, "const:1,+1") == code.replace("len(s) - 1", "len(s) - 2")


def test_string_edit_changes_exactly_one_character_not_the_docstring() -> None:
    code = 'def f(s):\n    """Doc."""\n    return s.replace("a", "bcd")\n'
    for seed in range(6):
        new = code_after(code, "string:2,replace", seed=seed)
        assert '"""Doc."""' in new and '"a"' in new
        literal = ast.literal_eval(new.split('"a", ')[1].split(")")[0])
        assert len(literal) == 3 and sum(x != y for x, y in zip(literal, "bcd", strict=True)) == 1


# --- inputs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("input_text", "spec", "expected"),
    [
        ("[1, 2, 3], 'ab'", "input-element:3", "[1, 2], 'ab'"),
        ("[1, 2, 3], 'ab'", "input-element:1", "[2, 3], 'ab'"),
        ("(1, 2)", "input-element:1", "(2,)"),
        ("{5}", "input-element:1", "set()"),
        ("{'a': 1, 'b': 2}", "input-element:2", "{'a': 1}"),
        ("[1, 2, 3], 'ab'", "input-number:2,+1", "[1, 3, 3], 'ab'"),
        ("-4, 2.5", "input-number:1,-1", "-3, 2.5"),
        ("-4, 2.5", "input-number:2,+1", "-4, 3.5"),
        ("'ab', \"c\"", "input-char:2,delete", "'ab', \"\""),
    ],
)
def test_input_edits(input_text: str, spec: str, expected: str) -> None:
    applied = one("def f(*a):\n    return a\n", spec, input_text)
    assert applied.subject.input == expected
    assert applied.subject.code == applied.parent.code


def test_input_edit_output_is_re_derived(official: Dataset, box: Sandbox) -> None:
    variant = make_variant(official["sample_12"], [parse_spec("input-char:2,replace", 3)], box)
    assert variant.sample.input != official["sample_12"].input
    # re-derive independently: the same function on the new input
    namespace: dict[str, object] = {}
    exec(official["sample_12"].code, namespace)
    assert variant.sample.output == repr(eval(f"f({variant.sample.input})", namespace))


# --- bad input -----------------------------------------------------------------------------------


def test_a_transform_that_does_not_apply_says_so() -> None:
    with pytest.raises(NotApplicable, match="does not apply: the sample has no comparison"):
        one("def f(a):\n    return a\n", "flip-compare")
    with pytest.raises(NotApplicable, match="site 3 requested but the sample has only 1"):
        one("def f(a):\n    return a < 1\n", "flip-compare:3")
    with pytest.raises(NotApplicable, match="no string in its input"):
        one("def f(a):\n    return a\n", "input-char", "3")


def test_code_libcst_cannot_parse_gives_a_clear_error() -> None:
    with pytest.raises(UnparsableCode, match="libcst cannot parse the code"):
        one("def f(a):\n    return a +\n", "rename")
    with pytest.raises(UnparsableCode, match="cannot parse the input"):
        one("def f(a):\n    return a\n", "input-number", "1,,")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nonsense", "unknown transform 'nonsense'"),
        ("Flip!", "bad transform spec"),
        ("flip-compare:x", "unexpected parameter 'x'"),
        ("flip-compare:0", "start at 1"),
        ("const:1,times2", "unexpected parameter 'times2'"),
    ],
)
def test_bad_specs(text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        apply_chain(Sample("t", "def f(a):\n    return a < 1\n", "1", "False"), [parse_spec(text)])


# --- verification in the sandbox -----------------------------------------------------------------


def _rejection(code: str, spec: str, input_text: str, box: Sandbox) -> Rejection:
    sample = Sample("t", code, input_text, "None")
    with pytest.raises(VariantRejected) as info:
        make_variant(sample, [parse_spec(spec)], box)
    return info.value.rejection


def test_rejections_carry_their_reason(box: Sandbox) -> None:
    raises = _rejection(
        "def f(a):\n    return 10 // (a - 1) if a != 1 else 0\n", "flip-compare", "1", box
    )
    assert (raises.kind, raises.reason) == (
        "raises",
        "ZeroDivisionError: integer division or modulo by zero",
    )
    loops = _rejection(
        "def f(a):\n    while a != 0:\n        a -= 2\n    return a\n", "const:1,+1", "4", box
    )
    assert loops.kind == "timeout"
    clock = "def f(a):\n    import time\n    return time.time_ns() + a\n"
    assert _rejection(clock, "input-number", "1", box).kind == "nondeterministic"
    # evaluation order matters when both sides have effects: "preserving" mirror is caught
    popper = "def f(xs):\n    return xs.pop() < xs.pop()\n"
    changed = _rejection(popper, "mirror-compare", "[1, 2]", box)
    assert changed.kind == "changed-output" and "False to True" in changed.reason


def test_variant_is_a_sample_with_a_stable_id_and_recorded_chain(
    official: Dataset, box: Sandbox
) -> None:
    specs = [parse_spec("rename:anonymize", 3), parse_spec("flip-compare:1", 3)]
    variant = make_variant(official["sample_12"], specs, box)
    assert variant.id == variant.sample.id == "sample_12~anon~flip-compare-1"
    assert variant.parent_id == "sample_12" and variant.chain == specs and not variant.preserving
    again = make_variant(official["sample_12"], specs, box)
    assert again.sample == variant.sample
    assert variant.sample.code.startswith("def f(x1, x2):") and "!= x2" in variant.sample.code
    data = variant.to_json()
    assert {"id", "code", "input", "output", "chain"} <= set(data)
    assert TransformSpec.from_json(data["chain"][1]) == specs[1]
    # the seed shows in the id only when it chose something
    seeded = make_variant(official["sample_12"], [parse_spec("flip-compare", 5)], box)
    assert seeded.id == "sample_12~flip-compare-s5"


# --- diffs ---------------------------------------------------------------------------------------


def test_diffs_as_data() -> None:
    old, new = "a\nb\nc\n", "a\nB\nc\nd\n"
    assert unified(old, new, "x", "y")[:2] == ["--- x", "+++ y"]
    assert "-b" in unified(old, new) and "+B" in unified(old, new) and "+d" in unified(old, new)
    rows = side_by_side(old, new)
    assert [(r.kind, r.left_no, r.left, r.right_no, r.right) for r in rows] == [
        ("equal", 1, "a", 1, "a"),
        ("replace", 2, "b", 2, "B"),
        ("equal", 3, "c", 3, "c"),
        ("insert", None, "", 4, "d"),
    ]
    assert unified(old, old) == []


# --- CLI -----------------------------------------------------------------------------------------


@pytest.mark.shared_data
def test_cli_json_variant(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "perturb",
        "--dataset",
        str(CRUXEVAL_JSONL),
        "sample_12",
        "--apply",
        "rename:anonymize",
        "--apply",
        "flip-compare:1",
        "--seed",
        "3",
        "--json",
    ]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == "sample_12~anon~flip-compare-1"
    assert [c["name"] for c in data["chain"]] == ["rename", "flip-compare"]
    assert data["output"] == "'e a happy life! Daniel'"
    assert data["input"] == "'If you want to live a happy life! Daniel', 'Daniel'"


@pytest.mark.shared_data
def test_cli_text_shows_diff_and_both_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            ["perturb", "--dataset", str(CRUXEVAL_JSONL), "sample_12", "--apply", "flip-compare:1"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "--- sample_12\n+++ sample_12~flip-compare-1\n" in out
    assert "-    while s[:len(x)] == x and count < len(s)-len(x):\n" in out
    assert "+    while s[:len(x)] != x and count < len(s)-len(x):\n" in out
    assert (
        "output: 'If you want to live a happy life! Daniel'\n     -> 'e a happy life! Daniel'\n"
        in out
    )
    assert (
        main(
            [
                "perturb",
                "--dataset",
                str(CRUXEVAL_JSONL),
                "sample_12",
                "--apply",
                "mirror-compare:2",
            ]
        )
        == 0
    )
    assert "(unchanged)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sample_12", "--apply", "swap-if"], "sample_12: does not apply"),
        (["sample_12", "--apply", "rename:s=x"], "would capture the name 'x'"),
        (["sample_12", "--apply", "negate:1"], "rejected (timeout)"),
        (["sample_12", "--apply", "bogus"], "unknown transform 'bogus'"),
        (["sample_9999", "--apply", "rename"], "unknown sample id"),
        (["sample_12"], "give at least one --apply"),
        (["--all", "sample_12"], "give no SAMPLE_ID"),
    ],
)
@pytest.mark.shared_data
def test_cli_errors_are_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["perturb", "--dataset", str(CRUXEVAL_JSONL), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_all_reports_per_transform(
    tmp_path: pytest.TempPathFactory, official: Dataset, capsys: pytest.CaptureFixture[str]
) -> None:
    small = tmp_path / "small.jsonl"  # type: ignore[operator]
    small.write_text("".join(json.dumps(s.to_json()) + "\n" for s in official.samples[:12]))
    assert main(["perturb", "--dataset", str(small), "--all", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["samples"] == 12
    rows = {r["transform"]: r for r in data["transforms"]}
    assert list(rows) == list(SURVEY_SPECS)
    assert rows["rename:anonymize"]["applies"] == 12
    for r in rows.values():
        assert r["applies"] == r["accepted"] + r["rejected_total"]
    assert main(["perturb", "--dataset", str(small), "--all"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:4] == ["transform", "applies", "accepted", "rejected"]
    assert "rename:anonymize" in text and " 12/12 " in text


def test_help_documents_every_transform() -> None:
    for name in CATALOGUE:
        assert f"\n  {name}" in TRANSFORMS_HELP, name
    for text in SURVEY_SPECS:
        assert text in TRANSFORMS_HELP
