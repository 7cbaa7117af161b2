"""Slices: checked against an independent computation on the released Code Llama generations, and
the interval / delta / contingency maths on small sets whose answers are known exactly.

The independent side reads the raw files with `json` and works out every group's members and
numbers with plain Python (`ast` for the methods called), never calling cruxtui's slicing.
"""

from __future__ import annotations

import ast
import json
import math
import random
import statistics
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import CODELLAMA_OUTPUT, CRUXEVAL_JSONL

from cruxtui.core.data.dataset import Dataset, Sample, Source
from cruxtui.core.insights.dimensions import (
    NUMSTEPS_EDGES,
    MissingFacts,
    SampleFacts,
    gallery_tags,
    numsteps_bucket,
)
from cruxtui.core.insights.results import (
    InsightsError,
    Outcome,
    Results,
    from_counts,
    from_run,
    from_scored,
    pooled,
)
from cruxtui.core.insights.slices import ALL, contingency, slice_results
from cruxtui.core.scoring.passk import interval

# --------------------------------------------------------------------------------------------
# The released Code Llama generations, sliced two independent ways
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def raw() -> tuple[dict[str, dict[str, str]], dict[str, list[bool]]]:
    """The benchmark rows and the benchmark's own verdicts, straight from the files."""
    scored = CODELLAMA_OUTPUT / "scored.json"
    if not CRUXEVAL_JSONL.exists() or not scored.exists():
        pytest.skip(f"benchmark data not found at {CRUXEVAL_JSONL.parent}")
    rows = {}
    for line in CRUXEVAL_JSONL.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["id"]] = row
    verdicts = json.loads(scored.read_text(encoding="utf-8"))["raw_scored_generations"]
    return rows, verdicts


@pytest.fixture(scope="module")
def judged(official: Dataset) -> Results:
    """Our own scoring of generations.json in the sandbox, as `cruxtui stats --generations`."""
    from cruxtui.core.sandbox.pool import Sandbox
    from cruxtui.core.scoring.generations_file import load_generations
    from cruxtui.core.scoring.scored_file import score_generations

    generations = load_generations(CODELLAMA_OUTPUT / "generations.json")
    with Sandbox() as sandbox:
        scored = score_generations(official, generations, "output", sandbox=sandbox)
    return from_scored(scored, "codellama-7b")


@pytest.fixture(scope="module")
def step_counts(official: Dataset) -> dict[str, int]:
    from cruxtui.core.sandbox.pool import Sandbox
    from cruxtui.core.trace import numsteps

    with Sandbox() as sandbox:
        counts = numsteps.count(official.samples, sandbox=sandbox)
    assert len(counts) == 800
    return counts


_KNOWN = {n for t in (str, list, dict) for n in dir(t) if not n.startswith("_")}


def independent_groups(
    rows: dict[str, dict[str, str]], by: str, steps: dict[str, int]
) -> dict[str, list[str]]:
    """Group name -> sample ids, from the raw rows alone."""
    groups: dict[str, list[str]] = defaultdict(list)
    for sid, row in rows.items():
        if by == "method":
            calls = sorted(
                {
                    node.func.attr
                    for node in ast.walk(ast.parse(row["code"]))
                    if isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _KNOWN
                }
            )
            names = calls or ["(none)"]
        elif by == "type":
            try:
                names = [type(ast.literal_eval(row["output"])).__name__]
            except ValueError:
                names = ["expr"]
        elif by == "lines":
            names = [str(len(row["code"].strip("\n").split("\n")))]
        elif by == "numsteps":
            edges = [0, *NUMSTEPS_EDGES, math.inf]
            k = next(i for i in range(len(edges) - 1) if edges[i] <= steps[sid] < edges[i + 1])
            names = [
                f"<{edges[1]}"
                if k == 0
                else f">={edges[k]}"
                if edges[k + 1] == math.inf
                else f"{edges[k]}-{edges[k + 1] - 1}"
            ]
        else:
            names = {"transform": ["original"], "mode": ["imported"], "tag": ["(untagged)"]}[by]
        for name in names:
            groups[name].append(sid)
    return groups


@pytest.mark.parametrize("by", ["method", "type", "lines", "numsteps", "transform", "mode", "tag"])
def test_codellama_slices_match_an_independent_computation(
    by: str,
    raw: tuple[dict[str, dict[str, str]], dict[str, list[bool]]],
    judged: Results,
    official: Dataset,
    step_counts: dict[str, int],
) -> None:
    rows, verdicts = raw
    expected = independent_groups(rows, by, step_counts)
    got = slice_results(judged, by, SampleFacts(official, step_counts))
    assert {g.name for g in got.groups} == set(expected)
    for group in got.groups:
        ids = expected[group.name]
        assert sorted(group.sample_ids) == sorted(ids)
        assert group.samples == len(ids)
        assert group.predictions == sum(len(verdicts[s]) for s in ids)
        want = 100 * statistics.fmean(sum(verdicts[s]) / len(verdicts[s]) for s in ids)
        assert group.pass_at_1 == pytest.approx(want, abs=1e-9)
        lo, hi = group.interval
        assert lo <= group.pass_at_1 <= hi
        if len(ids) >= 30:  # the normal approximation is close to the bootstrap here
            rates = [100 * sum(verdicts[s]) / len(verdicts[s]) for s in ids]
            half = 1.96 * statistics.pstdev(rates) / math.sqrt(len(ids))
            assert lo == pytest.approx(want - half, abs=0.15 * half + 0.3)
            assert hi == pytest.approx(want + half, abs=0.15 * half + 0.3)
    # The total counts each sample once, whatever the groups.
    assert got.total.samples == 800
    assert got.total.pass_at_1 == pytest.approx(34.2125, abs=1e-9)  # the benchmark's own figure


def test_methods_overlap_and_every_sample_is_in_some_group(
    raw: tuple[dict[str, dict[str, str]], dict[str, list[bool]]],
    judged: Results,
    official: Dataset,
) -> None:
    got = slice_results(judged, "method", SampleFacts(official))
    memberships = sum(g.samples for g in got.groups)
    assert memberships > 800  # samples calling several methods count in each
    covered = {sid for g in got.groups for sid in g.sample_ids}
    assert covered == set(raw[0])
    join = next(g for g in got.groups if g.name == "join")
    split = next(g for g in got.groups if g.name == "split")
    assert set(join.sample_ids) & set(split.sample_ids)  # e.g. "".join(s.split())


# --------------------------------------------------------------------------------------------
# The maths on sets whose answers are known
# --------------------------------------------------------------------------------------------


def test_interval_of_identical_values_is_that_value() -> None:
    assert interval([0.25] * 40) == (0.25, 0.25)
    assert interval([]) == (0.0, 0.0)


def test_interval_depends_on_the_values_not_their_order() -> None:
    rng = random.Random(1)
    values = [rng.random() for _ in range(300)]
    shuffled = random.Random(2).sample(values, len(values))
    assert interval(values, seed=5) == interval(shuffled, seed=5)
    assert interval(values, seed=5) != interval(values, seed=6)


def test_interval_width_matches_the_binomial_standard_error() -> None:
    """1,000 samples, 30% pass: the 95% interval is about +-1.96 * sqrt(p(1-p)/m)."""
    values = [1.0] * 300 + [0.0] * 700
    lo, hi = interval(values, resamples=4000)
    half = 1.96 * math.sqrt(0.3 * 0.7 / 1000)
    assert lo == pytest.approx(0.3 - half, abs=0.004)
    assert hi == pytest.approx(0.3 + half, abs=0.004)


def _results(label: str, rates: dict[str, tuple[int, int]], mode: str = "direct") -> Results:
    return from_counts(label, "output", ((s, n, c) for s, (n, c) in rates.items()), mode)


def _facts(samples: list[Sample]) -> SampleFacts:
    return SampleFacts(Dataset(samples, Source.PATH, "test.jsonl"))


def _sample(sid: str, code: str, output: str = "1") -> Sample:
    return Sample(sid, code, "1", output)


def test_paired_delta_interval_removes_the_spread_between_samples() -> None:
    """B passes exactly 1 more of 10 than A on every sample: the delta is -10 with no doubt at
    all, although each run's own interval is wide (the samples differ a lot)."""
    ids = [f"s{i}" for i in range(60)]
    a = _results("A", {s: (10, i % 9) for i, s in enumerate(ids)})
    b = _results("B", {s: (10, i % 9 + 1) for i, s in enumerate(ids)})
    facts = _facts([_sample(s, "def f(x):\n    return x") for s in ids])
    got = slice_results(a, "type", facts, against=b)
    total = got.total
    assert total.paired is not None
    assert total.paired.delta == pytest.approx(-10.0)
    assert total.paired.delta_interval == pytest.approx((-10.0, -10.0))
    assert total.interval[1] - total.interval[0] > 10  # unpaired: wide
    assert total.paired.pass_at_1 - total.pass_at_1 == pytest.approx(10.0)


def test_against_measures_both_runs_on_the_shared_samples_only() -> None:
    a = _results("A", {"s1": (2, 2), "s2": (2, 0), "s3": (2, 1)})
    b = _results("B", {"s2": (4, 4), "s3": (4, 0), "s9": (4, 4)})
    facts = _facts([_sample(s, "def f(x):\n    return x") for s in ("s1", "s2", "s3", "s9")])
    got = slice_results(a, "lines", facts, against=b)
    assert got.total.samples == 2
    assert set(got.total.sample_ids) == {"s2", "s3"}
    assert got.total.pass_at_1 == pytest.approx(25.0)  # (0 + 0.5) / 2
    assert got.total.paired is not None
    assert got.total.paired.pass_at_1 == pytest.approx(50.0)
    assert got.total.paired.predictions == 8
    assert got.total.paired.delta == pytest.approx(-25.0)
    none = _results("C", {"s7": (1, 1)})
    with pytest.raises(InsightsError, match="no sample in common"):
        slice_results(a, "lines", facts, against=none)


def test_contingency_counts_each_sample_by_majority_pass() -> None:
    pairs = [
        (Outcome("both", 10, 5), Outcome("both", 4, 4)),  # exactly half passes
        (Outcome("a", 10, 9), Outcome("a", 4, 1)),
        (Outcome("b", 10, 4), Outcome("b", 4, 2)),
        (Outcome("none1", 10, 0), Outcome("none1", 4, 1)),
        (Outcome("none2", 1, 0), Outcome("none2", 1, 0)),
    ]
    table = contingency(pairs)
    assert table.both == ("both",)
    assert table.a_only == ("a",)
    assert table.b_only == ("b",)
    assert table.neither == ("none1", "none2")
    assert table.to_json() == {"both": 1, "a_only": 1, "b_only": 1, "neither": 2}


def test_group_contingencies_partition_the_group() -> None:
    code = {"s1": "def f(s):\n    return s.split()", "s2": "def f(s):\n    return s.upper()"}
    code["s3"] = "def f(s):\n    return ' '.join(s.split())"
    facts = _facts([_sample(s, c) for s, c in code.items()])
    a = _results("A", {"s1": (1, 1), "s2": (1, 0), "s3": (1, 1)})
    b = _results("B", {"s1": (1, 0), "s2": (1, 1), "s3": (1, 1)})
    got = slice_results(a, "method", facts, against=b)
    split = next(g for g in got.groups if g.name == "split")
    assert split.samples == 2
    assert split.paired is not None
    assert split.paired.contingency.a_only == ("s1",)
    assert split.paired.contingency.both == ("s3",)
    assert got.total.paired is not None
    assert got.total.paired.contingency.to_json() == {
        "both": 1,
        "a_only": 1,
        "b_only": 1,
        "neither": 0,
    }


def test_groups_come_in_natural_order_with_catch_alls_last() -> None:
    samples = [
        _sample("s10", "def f(x):\n" + "    x += 1\n" * 9 + "    return x"),
        _sample("s2", "def f(x):\n    return x"),
        _sample("s3", "def f(x):\n    return x.upper()"),
        _sample("s4", "def f(x):\n    return x.upper()"),
    ]
    facts = _facts(samples)
    results = _results("A", {s.id: (1, 1) for s in samples} | {"ghost": (1, 0)})
    lines = slice_results(results, "lines", facts)
    assert [g.name for g in lines.groups] == ["2", "11", "(unknown)"]
    methods = slice_results(results, "method", facts)
    assert [g.name for g in methods.groups] == ["upper", "(none)", "(unknown)"]


def test_numsteps_buckets_and_missing_counts() -> None:
    assert numsteps_bucket(0) == "<30"
    assert numsteps_bucket(29) == "<30"
    assert numsteps_bucket(30) == "30-39"
    assert numsteps_bucket(249) == "150-249"
    assert numsteps_bucket(250) == ">=250"
    results = _results("A", {"s1": (1, 1)})
    samples = [_sample("s1", "def f(x):\n    return x")]
    with pytest.raises(MissingFacts, match="step count"):
        slice_results(results, "numsteps", _facts(samples))
    facts = SampleFacts(_facts(samples).dataset, {"s1": 120})
    assert [g.name for g in slice_results(results, "numsteps", facts).groups] == ["100-149"]


def test_variants_slice_by_transform_and_borrow_their_parent() -> None:
    samples = [_sample("s1", "def f(x):\n    return x.strip()", "'a'")]
    results = _results(
        "A",
        {"s1": (2, 2), "s1~anon": (2, 1), "s1~anon~flip-compare-1": (2, 0), "s1~swap-if": (2, 2)},
    )
    facts = _facts(samples)
    got = slice_results(results, "transform", facts)
    by_name = {g.name: g for g in got.groups}
    assert set(by_name) == {"original", "rename", "flip-compare", "swap-if"}
    assert by_name["rename"].samples == 2
    assert by_name["rename"].pass_at_1 == pytest.approx(25.0)
    assert by_name["flip-compare"].sample_ids == ("s1~anon~flip-compare-1",)
    types = slice_results(results, "type", facts)
    assert [(g.name, g.samples) for g in types.groups] == [("str", 4)]  # the parent's output


def test_tags_come_from_the_gallery_by_benchmark_sample() -> None:
    cases = [
        SimpleNamespace(base_sample_id="s1", tags=["prefix", "strings"]),
        SimpleNamespace(base_sample_id="s1", tags=["prefix"]),
        SimpleNamespace(base_sample_id="s2", tags=["loops"]),
    ]
    tags = gallery_tags(cases)
    assert tags == {"s1": ("prefix", "strings"), "s2": ("loops",)}
    samples = [_sample(s, "def f(x):\n    return x") for s in ("s1", "s2", "s3")]
    facts = SampleFacts(_facts(samples).dataset, tags=tags)
    results = _results("A", {"s1": (1, 1), "s1~anon": (1, 0), "s2": (1, 0), "s3": (1, 1)})
    got = {g.name: g.samples for g in slice_results(results, "tag", facts).groups}
    assert got == {"prefix": 2, "strings": 2, "loops": 1, "(untagged)": 1}


def test_pooled_runs_slice_by_mode() -> None:
    samples = [_sample(s, "def f(x):\n    return x") for s in ("s1", "s2")]
    direct = _results("direct", {"s1": (1, 0), "s2": (1, 0)}, mode="direct")
    cot = _results("cot", {"s1": (1, 1), "s2": (1, 0)}, mode="cot")
    both = pooled([direct, cot])
    got = {
        g.name: (g.samples, g.pass_at_1)
        for g in slice_results(both, "mode", _facts(samples)).groups
    }
    assert got == {"direct": (2, 0.0), "cot": (2, 50.0)}
    with pytest.raises(InsightsError, match="one result per sample"):
        slice_results(both, "mode", _facts(samples), against=cot)
    other_task = Results("x", "input", ())
    with pytest.raises(InsightsError, match="different tasks"):
        pooled([direct, other_task])
    with pytest.raises(InsightsError, match="unknown dimension"):
        slice_results(direct, "colour", _facts(samples))


def test_a_stored_run_slices_like_its_counts(tmp_path: Path) -> None:
    from cruxtui.core.runs.store import Generation, RunConfig, RunStore

    config = RunConfig(
        spec={"backend": "replay", "model": "m"},
        task="output",
        mode="cot",
        style="chat",
        params={"n": 3},
        template_version="t",
        dataset_digest="d",
    )
    with RunStore(tmp_path / "runs.sqlite") as store:
        info = store.open_run(config)
        store.add_generations(
            info.id,
            [
                Generation("s1", i, "x", "x", "pass" if i < 2 else "wrong", i < 2, "")
                for i in range(3)
            ]
            + [Generation("s2", i, "x", "x", "wrong", False, "") for i in range(3)],
        )
        run, results = from_run(store, info.id[:6])
    assert run.id == info.id
    assert results.task == "output"
    assert {(o.sample_id, o.n, o.passed, o.mode) for o in results.outcomes} == {
        ("s1", 3, 2, "cot"),
        ("s2", 3, 0, "cot"),
    }
    samples = [_sample(s, "def f(x):\n    return x") for s in ("s1", "s2")]
    got = slice_results(results, "mode", _facts(samples))
    assert got.total.name == ALL
    assert got.total.pass_at_1 == pytest.approx(100 / 3)


def test_a_difference_is_called_only_on_groups_large_enough() -> None:
    """Every sample 1/1 against 0/1: clearly better on 12 samples, but one sample (a zero-width
    interval) or a group whose interval covers 0 is never called a difference."""
    ids = [f"s{i}" for i in range(12)]
    code = {s: "def f(x):\n    return x.upper()" for s in ids} | {"s11": "def f(x):\n    return x"}
    facts = _facts([_sample(s, c) for s, c in code.items()])
    a = _results("A", {s: (1, 1) for s in ids})
    b = _results("B", {s: (1, 0) for s in ids})
    got = slice_results(a, "method", facts, against=b)
    by_name = {g.name: g for g in got.groups}
    assert by_name["upper"].direction == 1
    assert by_name["(none)"].paired is not None
    assert by_name["(none)"].paired.delta_interval == (100.0, 100.0)
    assert by_name["(none)"].direction == 0  # one sample
    assert slice_results(b, "method", facts, against=a).total.direction == -1
    mixed = _results("C", {s: (1, i % 2) for i, s in enumerate(ids)})
    assert (
        slice_results(
            mixed,
            "method",
            facts,
            against=_results("D", {s: (1, (i + 1) % 2) for i, s in enumerate(ids)}),
        ).total.direction
        == 0
    )
    assert slice_results(a, "method", facts).total.direction == 0  # no comparison
