"""No prediction of up to 20,000 characters crashes or hangs score, trace or the reasoning code.

Deep nesting is the way in: the parser accepts 350 `not`, 400 `1 if 1 else` or a 10,000-term sum,
and any recursive walk of that tree (the official splice's comparison, a canonical key, the
alignment's shape of the code) used to end in RecursionError, or in exponential memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cruxtui.core.data.dataset import Sample
from cruxtui.core.reasoning import alignment, chain_parse, literal_scan
from cruxtui.core.sandbox.jobs import tracer
from cruxtui.core.sandbox.pool import Limits, Sandbox
from cruxtui.core.scoring import answers
from cruxtui.core.scoring.strict_check import MAX_PREDICTION_CHARS
from cruxtui.core.scoring.verdicts import check, check_many
from cruxtui.core.trace.steps import from_wire
from cruxtui.core.util import safe_ast

SAMPLE = Sample("sample_0", "def f(s):\n    return s[::-1]", "'abc'", "'cba'")

NESTED = {
    # the three of the issue, inside a tuple
    "not": "(" + "not " * 350 + "1, 2)",
    "if-else": "(" + "1 if 1 else " * 400 + "1, 2)",
    "lambda": "(" + "lambda: " * 400 + "1, 2)",
    # the same without the tuple, and other ways to nest as deep as 20,000 characters allow
    "not-bare": "not " * 4990 + "1",
    "if-else-bare": "1 if 1 else " * 1600 + "1",
    "lambda-bare": "lambda: " * 2400 + "1",
    "sum": "1+" * 9999 + "1",
    "unary": "-" * 19999 + "1",
    "power": "2**" * 6000 + "1",
    "attributes": "a" + ".a" * 9999,
    "subscripts": "a" + "[0]" * 6000,
    "calls": "g" + "()" * 9000,
    "and": " and ".join(["1"] * 3000),
    "chained": " < ".join(["1"] * 4000),
    "brackets": "[" * 199 + "]" * 199,
    "dicts": "{1:" * 199 + "1" + "}" * 199,
    "tuple-not": "1, " + "not " * 4990 + "1",
}


def test_the_hostile_texts_are_within_the_limit() -> None:
    assert all(len(text) <= MAX_PREDICTION_CHARS for text in NESTED.values())


@pytest.fixture(scope="module")
def box() -> Sandbox:
    with Sandbox(workers=2, limits=Limits(timeout=2)) as sandbox:
        yield sandbox


@pytest.mark.parametrize("name", list(NESTED))
def test_deep_predictions_get_a_verdict_in_both_tasks(box: Sandbox, name: str) -> None:
    text = NESTED[name]
    start = time.monotonic()
    for task, prediction in (("output", text), ("input", f"f({text})"), ("input", text)):
        verdict = check(SAMPLE, task, prediction, box)
        assert not verdict.passed and verdict.reason, verdict
        assert verdict.official in (True, False)
    assert time.monotonic() - start < 60


def test_a_file_of_deep_predictions_is_scored_whole(box: Sandbox) -> None:
    pairs = [(SAMPLE, text) for text in NESTED.values()] + [(SAMPLE, "'cba'")]
    verdicts = check_many(pairs, "output", box)
    assert len(verdicts) == len(pairs)
    assert verdicts[-1].passed  # the good prediction after them is judged as usual


@pytest.mark.parametrize("name", list(NESTED))
def test_model_answers_and_chains_of_thought_never_raise(name: str) -> None:
    text = NESTED[name]
    answers.extract(f"[ANSWER]{text}[/ANSWER]", "output")
    answers.extract(f"[ANSWER]f({text})[/ANSWER]", "input")
    answers.extract(f"assert f('abc') == {text}", "output", "official")
    chain_parse.parse_chain(f"So x = {text} and the output is {text}", SAMPLE.code)
    chain_parse.parse_chain("x", f"def f(x):\n    return {text}")
    literal_scan.value_key(text)
    trace = from_wire(SAMPLE.code, SAMPLE.call, tracer.run(SAMPLE.code, SAMPLE.call))
    alignment.align_text(f"Here `{text}` is True, and s = {text}; f returns {text}.", trace)


def test_parse_turns_every_failure_into_a_syntax_error() -> None:
    for text in ("not " * 4990 + "1", "1+" * 9999 + "1", "a\0b"):
        try:
            safe_ast.parse(text, mode="eval")
        except SyntaxError as exc:
            assert exc.msg
    deep = "(" + "not " * 350 + "1, 2)"
    tree = safe_ast.parse(deep, mode="eval")
    assert safe_ast.same_tree(tree, safe_ast.parse(deep, mode="eval"))
    assert not safe_ast.same_tree(tree, safe_ast.parse(deep.replace("1, 2", "1, 3"), mode="eval"))


def _cruxtui(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cruxtui", *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=cwd,
    )


def test_cruxtui_score_writes_the_scored_file_for_deep_predictions(tmp_path: Path) -> None:
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps(SAMPLE.to_json()) + "\n")
    generations = tmp_path / "generations.json"
    predictions = [NESTED["not"], NESTED["if-else"], NESTED["lambda"], "'cba'"]
    generations.write_text(json.dumps({"sample_0": predictions}))
    out = tmp_path / "scored.json"
    done = _cruxtui(
        "score", str(generations), "--task", "output", "--dataset", str(dataset), "--out", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    scored = json.loads(out.read_text())
    assert scored["raw_scored_generations"]["sample_0"][3] is True
    assert len(scored["cruxtui"]["verdicts"]["sample_0"]) == 4


def test_cruxtui_trace_with_a_deep_call_is_one_line(tmp_path: Path) -> None:
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps(SAMPLE.to_json()) + "\n")
    for call in ("f(" + "not " * 4990 + "1)", "f(" + "1+" * 9990 + "1)"):
        done = _cruxtui(
            "trace", "sample_0", "--call", call, "--dataset", str(dataset), cwd=tmp_path
        )
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert done.returncode in (0, 1, 2)


def test_cruxtui_perturb_on_deeply_nested_code_is_one_line(tmp_path: Path) -> None:
    """Code the parser accepts but libcst's recursive visitors cannot walk: a one-line error,
    and `--all` surveys the rest of the dataset."""
    rows = [
        {"id": "sample_0", "code": "def f(x):\n    y = x\n    return " + "1+" * 900 + "x",
         "input": "1", "output": "901"},
        {"id": "sample_1", "code": "def f(x):\n    y = x\n    return y", "input": "1",
         "output": "1"},
    ]  # fmt: skip
    dataset = tmp_path / "data.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    one = _cruxtui(
        "--dataset", str(dataset), "perturb", "sample_0", "--apply", "rename:anonymize",
        cwd=tmp_path,
    )  # fmt: skip
    assert one.returncode == 2 and "Traceback" not in one.stderr, one.stderr[-2000:]
    assert one.stderr.startswith("cruxtui: error: sample_0:") and "nested too deeply" in one.stderr
    survey = _cruxtui("--dataset", str(dataset), "perturb", "--all", cwd=tmp_path)
    assert survey.returncode == 0 and "Traceback" not in survey.stderr, survey.stderr[-2000:]


def test_cruxtui_run_stores_a_verdict_for_a_deeply_nested_answer(tmp_path: Path) -> None:
    """Before, the crash was recorded as a failed request and retried on every resume."""
    import sqlite3

    from cruxtui.testing.fake_openai import FakeOpenAI, constant

    answer = f"[ANSWER]\nassert f('abc') == {NESTED['not']}\n[/ANSWER]"
    dataset = tmp_path / "data.jsonl"
    dataset.write_text(json.dumps(SAMPLE.to_json()) + "\n")
    store = tmp_path / "runs.sqlite"
    with FakeOpenAI(constant(answer)) as server:
        done = _cruxtui(
            "--dataset", str(dataset), "run", "--base-url", server.url, "--model", "fake-model",
            "--store", str(store), "-n", "2", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(store) as db:
        kinds = [k for (k,) in db.execute("SELECT kind FROM generations")]
        failures = db.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
    assert len(kinds) == 2 and failures == 0
    assert all(k != "pass" for k in kinds)


def test_parsing_untrusted_text_prints_no_warnings() -> None:
    """An invalid escape in a model's text (a SyntaxWarning since 3.12, a DeprecationWarning
    before) is no reason to print over the terminal or the TUI."""
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        safe_ast.parse('s = "\\d+"')
        safe_ast.parse('"a\\.b"', mode="eval")
    assert [str(w.message) for w in seen] == []
