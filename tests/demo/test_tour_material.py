"""What the tour is made of, resolved against what a session has: the shipped case on the
starter set, the benchmark's own row and the released generations when they are there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CODELLAMA_OUTPUT

from cruxtui.core.cases.case_file import load_gallery
from cruxtui.core.data.dataset import Dataset, Source, load_dataset
from cruxtui.core.demo.tour import (
    CASE,
    STOPS,
    TourUnavailable,
    build_tour,
    example_gallery,
    scratch_gallery,
)
from cruxtui.core.reasoning.alignment import align_text
from cruxtui.core.trace.steps import trace_sample


def test_offline_the_tour_comes_from_the_example_gallery() -> None:
    starter = load_dataset(offline=True)
    assert starter.source is Source.STARTER and CASE not in starter
    tour = build_tour(starter)
    assert not tour.from_benchmark and tour.sample.id == CASE
    assert tour.case.model.backend == "replay" and tour.model == "codellama-7b"
    assert tour.answers == [g.raw for g in tour.case.generations] and len(tour.answers) == 10
    assert tour.wrong == 10 and tour.answers_from == "recorded in the case"
    assert [tour.caption(i) for i in range(len(STOPS))]  # every stop has one
    assert "starter functions" in tour.caption(0)


def test_the_answer_shown_in_the_reasoning_pane_diverges_at_the_return() -> None:
    tour = build_tour(load_dataset(offline=True))
    trace = trace_sample(tour.sample)
    alignment = align_text(tour.reasoning, trace)
    divergence = alignment.first_divergence
    assert divergence is not None and divergence.claim.kind == "return"
    assert divergence.true_value == tour.sample.output


def test_with_the_benchmark_and_released_generations_it_uses_them(official: Dataset) -> None:
    generations = CODELLAMA_OUTPUT / "generations.json"
    if not generations.exists():
        pytest.skip(f"released generations not found at {generations}")
    tour = build_tour(official, str(generations))
    assert tour.from_benchmark and tour.sample is official[CASE]
    released = json.loads(generations.read_text())[CASE]
    assert tour.answers == released and tour.answers_from == "from generations.json"
    assert "the 800 CRUXEval functions" in tour.caption(0)


def test_a_generations_file_without_the_sample_falls_back_to_the_case(tmp_path: Path) -> None:
    other = tmp_path / "generations.json"
    other.write_text(json.dumps({"sample_0": ["1"]}))
    tour = build_tour(load_dataset(offline=True), str(other))
    assert tour.answers_from == "recorded in the case"
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert build_tour(load_dataset(offline=True), str(broken)).answers_from == (
        "recorded in the case"
    )


def test_the_scratch_gallery_is_a_fresh_copy(tmp_path: Path) -> None:
    copy = scratch_gallery()
    assert copy != example_gallery()
    shipped, _ = load_gallery(example_gallery())
    copied, errors = load_gallery(copy)
    assert errors == [] and [c.name for c in copied] == [c.name for c in shipped]
    (copy / next(iter(copy.iterdir())).name).unlink()  # damaging the copy...
    assert len(load_gallery(example_gallery())[0]) == len(shipped)  # ...leaves the shipped one


def test_a_missing_case_is_one_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import cruxtui.core.demo.tour as tour_module

    monkeypatch.setattr(tour_module, "example_gallery", lambda: tmp_path)
    with pytest.raises(TourUnavailable, match=f"{CASE}.*{tmp_path}"):
        build_tour(load_dataset(offline=True))
