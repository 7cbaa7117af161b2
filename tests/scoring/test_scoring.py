"""Verdicts, official-compatible verdicts, pass@k, generations files and the `score` command."""

from __future__ import annotations

import ast
import json
import math
import sys
from pathlib import Path

import pytest
from conftest import CODELLAMA_OUTPUT, REPO

from cruxtui.cli.main import main
from cruxtui.core.data.dataset import Dataset, Sample
from cruxtui.core.sandbox.pool import Limits, Sandbox
from cruxtui.core.scoring.generations_file import (
    GenerationsError,
    check_sample_ids,
    load_generations,
)
from cruxtui.core.scoring.official_check import binds_tighter_than_eq, same_comparison
from cruxtui.core.scoring.passk import bootstrap, mean_pass_at_k, pass_at_k
from cruxtui.core.scoring.scored_file import score_generations
from cruxtui.core.scoring.verdicts import check

sys.path.insert(0, str(REPO / "benchmarks"))
import official_reference  # noqa: E402

TUPLE = Sample("t", "def f(a, b):\n    return (a, b)", "1, 2", "(1, 2)")
TEXT = Sample("s", "def f(s):\n    return s.upper()", "'abc'", "'ABC'")
DICT = Sample("d", "def f(n):\n    return {'x': n, 'y': n + 1}", "1", "{'x': 1, 'y': 2}")
ONE = Sample("o", "def f(n):\n    return n > 0", "5", "True")


@pytest.fixture(scope="module")
def box() -> Sandbox:
    with Sandbox(workers=2, limits=Limits(timeout=2.0)) as sandbox:
        yield sandbox


def test_reproduces_the_published_code_llama_scores_exactly(
    official: Dataset, box: Sandbox
) -> None:
    generations = load_generations(CODELLAMA_OUTPUT / "generations.json")
    reference = json.loads((CODELLAMA_OUTPUT / "scored.json").read_text())
    scored = score_generations(official, generations, "output", sandbox=box)
    document = scored.to_document()
    differ = [
        (sid, i)
        for sid, flags in reference["raw_scored_generations"].items()
        for i, flag in enumerate(flags)
        if document["raw_scored_generations"][sid][i] != flag
    ]
    assert scored.size == 8000 and differ == []
    assert round(document["pass_at_1"], 4) == 34.2125
    assert round(document["pass_at_5"], 4) == 40.2867
    assert math.isclose(document["pass_at_1"], reference["pass_at_1"], rel_tol=1e-12)
    assert math.isclose(document["pass_at_5"], reference["pass_at_5"], rel_tol=1e-12)
    kinds = scored.kinds()
    assert kinds["pass"] + kinds["wrong"] + kinds["unparsable"] == 8000
    intervals = scored.intervals(1)
    assert (
        intervals["2.5"] < intervals["25"] < intervals["50"] < intervals["75"] < intervals["97.5"]
    )
    assert abs(intervals["50"] - 34.2125) < 1.0


def test_input_task_matches_the_process_per_prediction_reference(
    official: Dataset, box: Sandbox
) -> None:
    rows = {s.id: s.to_json() for s in official.samples[::53]}  # 16 samples, 160 predictions
    generations = official_reference.synthetic_input_generations(rows)
    scored = score_generations(official, generations, "input", sandbox=box)
    reference = official_reference.score(generations, rows, "input")
    ours = {sid: [v.official for v in vs] for sid, vs in scored.verdicts.items()}
    assert ours == reference
    for verdicts in scored.verdicts.values():
        exact, reprinted, starred = verdicts[:3]
        assert exact.passed and exact.kind == "pass"
        assert reprinted.passed and starred.passed  # code in the arguments, evaluated apart from f
        assert verdicts[4].kind == "exception" and "TypeError" in verdicts[4].reason  # f()
        for spliced_false_pass in verdicts[6:8]:  # `f(x) or True`, `f(x) == output`
            assert spliced_false_pass.kind == "not_a_call" and spliced_false_pass.official is True
        assert verdicts[8].kind == "not_a_call" and verdicts[8].official is False  # no `f(`
        assert verdicts[9].passed  # a trailing comment is fine


def test_output_literals_compare_with_benchmark_semantics(box: Sandbox) -> None:
    assert check(ONE, "output", "1", box).passed  # True == 1, as the benchmark's assert
    assert check(DICT, "output", "{'y': 2, 'x': 1}", box).passed  # dict order ignored
    wrong = check(TEXT, "output", "'ABD'", box)
    assert (wrong.passed, wrong.kind, wrong.official) == (False, "wrong", False)
    assert wrong.reason == "got 'ABD', expected 'ABC'" and wrong.produced == "'ABD'"
    computed = check(
        TEXT, "output", "'abc'.upper()", box
    )  # not a literal: evaluated in the sandbox
    assert computed.passed and computed.official


def test_false_passes_and_false_fails_of_the_spliced_check_are_recorded(box: Sandbox) -> None:
    tuple_ok = check(TUPLE, "output", "1, 2", box)
    assert tuple_ok.passed and tuple_ok.official is False and tuple_ok.disagrees
    for trick in ("'x' or True", "0 or 1", "{9: 9} if 0 else 1"):
        verdict = check(TEXT, "output", trick, box)
        assert not verdict.passed and verdict.kind == "wrong", trick
        assert verdict.official is True, trick
    extra_statement = check(TEXT, "output", "'ABC'\nimport os", box)
    assert extra_statement.kind == "unparsable" and extra_statement.official is True


def test_shortcut_never_skips_a_splice_that_parses_differently(official: Dataset) -> None:
    """Where the scorer skips parsing `assert OUTPUT == PREDICTION`, parsing it agrees."""
    generations = load_generations(CODELLAMA_OUTPUT / "generations.json")
    tricky = [
        "1, 2",
        "0 or 1",
        "not 1",
        "1 if 0 else 2",
        "1 == 1",
        "-1",
        "~1",
        "lambda: 1",
        "x := 1",
        "'a' # c",
        "1\nimport os",
        "[1,\n2]",
        "f(1)[0]",
        "(1, 2)",
        "{1: 2}",
        "a.b(c)[d] ** -e",
        "await x",
        "*a",
        "1 < 2",
        "'a' 'b'",
        "f'{1}'",
        "b'x'",
        "1 in [1]",
        "yield 1",
    ]
    checked = 0
    for sample_id, predictions in generations.items():
        output = official[sample_id].output
        for prediction in [*predictions, *tricky]:
            if binds_tighter_than_eq(output) and binds_tighter_than_eq(prediction):
                spliced = ast.parse(f"assert {output} == {prediction}")
                assert same_comparison(spliced, output, prediction), (
                    sample_id,
                    prediction,
                )
                checked += 1
    assert checked > 7000
    for prediction in (
        "1, 2",
        "0 or 1",
        "not 1",
        "1 if 0 else 2",
        "1 == 1",
        "1\nimport os",
        "'a' # c",
    ):
        assert not binds_tighter_than_eq(prediction), prediction


def test_output_prediction_that_uses_f(box: Sandbox) -> None:
    verbatim = check(TEXT, "output", "f('abc')", box)
    assert verbatim.kind == "calls_f" and verbatim.official is False  # the benchmark's text filter
    spaced = check(TEXT, "output", "f( 'abc')", box)
    assert spaced.kind == "calls_f" and not spaced.passed
    assert spaced.official is True  # slips past the text filter and passes officially


def test_input_verdicts_and_reasons(box: Sandbox) -> None:
    assert check(TEXT, "input", "f('abc')", box).passed
    assert check(TEXT, "input", "f(s='abc')", box).passed
    assert check(TEXT, "input", "f('ab' + 'c')", box).passed
    wrong = check(TEXT, "input", "f('abd')", box)
    assert wrong.kind == "wrong" and wrong.reason == "f('abd') returned 'ABD', expected 'ABC'"
    raised = check(TEXT, "input", "f(1)", box)
    assert raised.kind == "exception" and "AttributeError" in raised.reason
    assert check(TEXT, "input", "'abc'", box).kind == "not_a_call"
    assert check(TEXT, "input", "g('abc')", box).kind == "not_a_call"
    assert check(TEXT, "input", "f('abc'", box).kind == "unparsable"
    long = check(TEXT, "input", "f('" + "a" * 30000 + "')", box)
    assert long.kind == "unparsable" and "longer than" in long.reason
    pure_error = check(TEXT, "input", "f(1/0)", box)  # operators on literals: evaluated with f
    assert pure_error.reason == "f(1/0) raised ZeroDivisionError: division by zero"
    arg_error = check(TEXT, "input", "f(int('x'))", box)  # code: evaluated in a child of its own
    assert (
        arg_error.kind == "exception"
        and "evaluating the arguments raised ValueError" in arg_error.reason
    )
    assert check(TEXT, "input", "f(str('abc'))", box).passed


def test_reasons_cut_long_values_with_the_one_marker(box: Sandbox) -> None:
    """A reason quotes at most 200 characters of a value and says how much it left out."""
    wrong = check(TEXT, "input", "f('" + "z" * 1000 + "')", box)
    assert wrong.kind == "wrong"
    assert wrong.reason == (
        "f('" + "z" * 116 + "…(+884 chars) returned '" + "Z" * 198 + "…(+802 chars), expected 'ABC'"
    )


def test_expected_output_that_is_not_a_literal(box: Sandbox) -> None:
    computed = Sample("c", "def f(a):\n    return {a}", "1", "set([1])")
    assert check(computed, "output", "{1}", box).passed
    assert check(computed, "input", "f(1)", box).passed
    broken = Sample("b", "def f(a):\n    return a", "1", "nope(1)")
    verdict = check(broken, "output", "1", box)
    assert (
        verdict.kind == "exception"
        and "expected output cannot be evaluated: NameError" in verdict.reason
    )
    assert verdict.official is False


def test_check_rejects_an_unknown_task() -> None:
    with pytest.raises(ValueError, match="task"):
        check(TEXT, "both", "'ABC'")


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    for n, c, k in [(10, 3, 1), (10, 3, 5), (10, 0, 5), (10, 10, 1), (10, 6, 5), (20, 7, 5)]:
        exact = 1 - math.comb(n - c, k) / math.comb(n, k)
        assert math.isclose(pass_at_k(n, c, k), exact, abs_tol=1e-12)
    assert mean_pass_at_k([(10, 10), (10, 0)], 1) == 50.0


def test_bootstrap_is_reproducible_and_ordered() -> None:
    counts = [(10, c % 11) for c in range(200)]
    first = bootstrap(counts, 1, resamples=300, seed=3)
    assert first == bootstrap(counts, 1, resamples=300, seed=3)
    assert list(first) == ["2.5", "25", "50", "75", "97.5"]
    assert first["2.5"] < first["50"] < first["97.5"]
    assert abs(first["50"] - mean_pass_at_k(counts, 1)) < 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"sample_0": "f(1)"}', "entry 'sample_0': expected a list of predictions, got a string"),
        ('{"sample_0": ["f(1)", 7]}', "entry 'sample_0'[1]: expected a string, got a number"),
        (
            '{"raw_generations": {"sample_1": [null]}}',
            "entry raw_generations.'sample_1'[0]: expected a string, got null",
        ),
        ("{}", "has no samples"),
    ],
)
def test_bad_generations_files_name_the_entry(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "gen.json"
    path.write_text(text)
    with pytest.raises(GenerationsError) as error:
        load_generations(path)
    assert message in str(error.value) and str(path) in str(error.value)


def test_unknown_sample_id_is_named(official: Dataset, tmp_path: Path) -> None:
    with pytest.raises(GenerationsError, match="entry 'sample_9999': no such sample"):
        check_sample_ids({"sample_1": ["1"], "sample_9999": ["1"]}, official, tmp_path / "g.json")


def _dataset_file(tmp_path: Path) -> Path:
    path = tmp_path / "mini.jsonl"
    path.write_text(
        "".join(
            json.dumps(s.to_json() | {"id": sid}) + "\n"
            for sid, s in (("sample_0", TEXT), ("sample_1", TUPLE))
        )
    )
    return path


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"sample_0": "f(1)"}', "entry 'sample_0': expected a list of predictions, got a string"),
        ("{}", "has no samples"),
        ('{"sample_0": ["1"], "sample_7": ["1"], "x": []}', "entry 'sample_7': no such sample"),
        (
            '{"raw_generations": {"sample_0": ["1"]}, "raw_scored_generations": {"sample_0": [1]}}',
            "entry raw_scored_generations.'sample_0': expected a list of true/false verdicts",
        ),
        (b"\xff{}", "not UTF-8 text"),
    ],
)
def test_score_import_and_replay_read_a_file_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | bytes, problem: str
) -> None:
    """One reader: `score`, `runs --import` and a replay endpoint refuse a file with one message."""
    from cruxtui.core.models import ModelError
    from cruxtui.core.models.recorded import load_generations as replay_load

    dataset = _dataset_file(tmp_path)
    gens = tmp_path / "gens.json"
    gens.write_bytes(text if isinstance(text, bytes) else text.encode())
    common = ["--dataset", str(dataset)]
    store = ["--store", str(tmp_path / "runs.sqlite")]
    lines = []
    for argv in (
        ["score", str(gens), "--task", "output", *common],
        ["runs", "--import", str(gens), "--task", "output", *common, *store],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and problem in err, err
        lines.append(err)
    assert lines[0] == lines[1]
    if "no such sample" not in problem:  # a replay endpoint has no dataset to check ids against
        with pytest.raises(ModelError) as error:
            replay_load(gens)
        assert lines[0] == f"cruxtui: error: {error.value}"


def test_score_command_report_json_and_scored_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = _dataset_file(tmp_path)
    gens = tmp_path / "gens.json"
    gens.write_text(
        json.dumps(
            {
                "sample_0": ["'ABC'", "'abc'", "0 or 1", "'A", "'ABC'"],
                "sample_1": ["(1, 2)", "1, 2", "(2, 1)", "(1, 2)", "[1, 2]"],
            }
        )
    )
    out = tmp_path / "scored.json"
    assert (
        main(["score", str(gens), "--task", "output", "--dataset", str(dataset), "--out", str(out)])
        == 0
    )
    report = capsys.readouterr().out
    assert "pass@1 cruxtui" in report and "pass@5 official" in report and "50.0000" in report
    assert "unparsable" in report and "wrong" in report
    document = json.loads(out.read_text())
    assert document["raw_scored_generations"] == {
        "sample_0": [True, False, True, False, True],
        "sample_1": [True, False, False, True, False],
    }
    assert document["cruxtui"]["verdicts"]["sample_1"][1]["passed"] is True
    assert main(["score", str(gens), "--task", "output", "--dataset", str(dataset), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["predictions"] == 10
    assert summary["scores"]["strict"]["pass_at_1"] == pytest.approx(50.0)
    assert summary["scores"]["official"]["pass_at_1"] == pytest.approx(50.0)
    assert set(summary["scores"]["strict"]["pass_at_1_intervals"]) == {
        "2.5",
        "25",
        "50",
        "75",
        "97.5",
    }
    assert len(summary["disagreements"]) == 2


def test_score_command_errors_leave_no_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = _dataset_file(tmp_path)
    gens = tmp_path / "gens.json"
    gens.write_text(json.dumps({"sample_0": ["'ABC'"], "sample_7": ["1"]}))
    out = tmp_path / "scored.json"
    assert (
        main(["score", str(gens), "--task", "output", "--dataset", str(dataset), "--out", str(out)])
        == 2
    )
    assert "entry 'sample_7': no such sample" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.glob("*.tmp")) == []
    gens.write_text('{"sample_0": [1]}')
    assert (
        main(["score", str(gens), "--task", "input", "--dataset", str(dataset), "--out", str(out)])
        == 2
    )
    assert "entry 'sample_0'[0]: expected a string" in capsys.readouterr().err
    assert not out.exists()
