"""What the benchmark's own scorer would say of a prediction, run as little as possible.

The benchmark splices `assert OUTPUT == PREDICTION` into source, runs it whole, and counts "no
exception" as a pass. Where that spliced source parses to exactly our comparison the verdict is
derived from ours; otherwise the spliced program itself runs in the sandbox.
"""

from __future__ import annotations

import ast
from collections.abc import Generator

from cruxtui.core.data.dataset import Sample
from cruxtui.core.sandbox.pool import Limits, Outcome
from cruxtui.core.scoring.check_jobs import OFFICIAL_CHECK, Job
from cruxtui.core.scoring.strict_check import StrictVerdict, is_pure, parse_prediction
from cruxtui.core.util import safe_ast
from cruxtui.core.util.safe_ast import same_tree

MAX_OFFICIAL_CHARS = 1_000_000
"""Longer predictions are not even run through the official check (counted as its failure)."""

_OFFICIAL_LIMITS = Limits(output_bytes=256 * 1024 * 1024)
"""The official harness swallows any amount of printing; so does our run of it."""


def official_prefilter(sample: Sample, task: str, prediction: str) -> bool:
    """The benchmark's text pre-filters: True if it fails the prediction without running it."""
    if task == "input":
        return "f(" not in prediction
    return f"f({sample.input})" in prediction


SAME = "same comparison"


def official_plan(sample: Sample, task: str, prediction: str) -> bool | Job | str:
    """What the official check needs: decided already (bool), its own run (the job), or, when the
    spliced text parses to exactly our comparison, derivation from our verdict (`SAME`)."""
    if official_prefilter(sample, task, prediction) or len(prediction) > MAX_OFFICIAL_CHARS:
        return False
    if binds_tighter_than_eq(sample.output) and binds_tighter_than_eq(prediction):
        return SAME  # no need to parse the splice: see `binds_tighter_than_eq`
    splice = f"assert {sample.output} == {prediction}"
    try:
        spliced = safe_ast.parse(splice)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False  # the whole program fails to compile: an exception, so a failure
    if same_comparison(spliced, sample.output, prediction):
        return SAME
    return _official_job(sample, splice, spliced)


_TIGHT = (
    ast.Constant, ast.Name, ast.List, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp,
    ast.GeneratorExp, ast.Call, ast.Attribute, ast.Subscript, ast.JoinedStr, ast.BinOp,
)  # fmt: skip


def binds_tighter_than_eq(text: str) -> bool:
    """True if `text` is one expression on one line that binds tighter than `==`.

    Then `assert A == B` with both sides such texts can only parse as `Compare(A, [Eq], [B])`:
    arithmetic, calls, subscripts, displays and unary `-`/`+`/`~` all bind tighter than comparison,
    and `' == '` keeps the tokens apart. Tuples without brackets, `not`, `and`/`or`, `if`-`else`,
    `lambda`, comparisons (which would chain), comments and line breaks get the full check.
    """
    if any(c in text for c in "\n\r\x0c#"):
        return False
    tree = parse_prediction(text)
    if isinstance(tree, str):
        return False
    body = tree.body
    return isinstance(body, _TIGHT) or (
        isinstance(body, ast.UnaryOp) and not isinstance(body.op, ast.Not)
    )


def _official_job(sample: Sample, splice: str, spliced: ast.Module) -> Job:
    payload = {"code": sample.code, "assertion": splice}
    if is_pure(spliced):  # only literals, operators and f: cannot print, may share a child
        return Job(OFFICIAL_CHECK, payload, batchable=True)
    return Job(OFFICIAL_CHECK, payload, _OFFICIAL_LIMITS)


def official_passed(outcome: Outcome) -> bool:
    return outcome.ok and outcome.value is True


def derived_official(
    sample: Sample, prediction: str, strict: StrictVerdict
) -> Generator[Job, Outcome, bool]:
    """The official verdict of a prediction whose splice is exactly our comparison."""
    # The same evaluation, too: literals, or operators on literals (and calls of f in the input
    # task), which evaluate alike anywhere. Other code ran apart from f (input-task arguments) or
    # without the sample's code (output task), so the spliced program itself must run.
    if strict.settled and strict.literal:
        return strict.passed
    splice = f"assert {sample.output} == {prediction}"
    outcome = yield _official_job(sample, splice, safe_ast.parse(splice))
    return official_passed(outcome)


def same_comparison(spliced: ast.Module, output: str, prediction: str) -> bool:
    """True if `assert OUTPUT == PREDICTION` parses to exactly `OUTPUT == (PREDICTION parsed alone)`."""
    if len(spliced.body) != 1 or not isinstance(spliced.body[0], ast.Assert):
        return False
    statement = spliced.body[0]
    test = statement.test
    if statement.msg is not None or not isinstance(test, ast.Compare):
        return False
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    alone = parse_prediction(prediction)
    expected = parse_prediction(output)
    if isinstance(alone, str) or isinstance(expected, str):
        return False
    return same_tree(test.left, expected.body) and same_tree(test.comparators[0], alone.body)
