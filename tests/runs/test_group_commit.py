"""Grouped commits: responses that come back while a round is being scored are stored together in
the next round (one transaction), no round is larger than `commit_rows`, and a generation is
reported to the listener only once it is committed (another connection can read it then)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from conftest import output_plan

from cruxtui.core.data.dataset import Dataset, Sample, load_dataset
from cruxtui.core.models import ModelSpec, SamplingParams, make_backend
from cruxtui.core.runs.runner import RunListener, Runner, default_scorer
from cruxtui.core.runs.store import Generation, RunStore
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

COMMIT_ROWS = 8


class CountingStore(RunStore):
    """A real store that records the size of every group of generations it commits."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.groups: list[int] = []

    def add_generations(self, run_id: str, gens: Iterable[Generation]) -> int:
        gens = list(gens)
        added = super().add_generations(run_id, gens)
        self.groups.append(len(gens))
        return added


class CommittedCheck(RunListener):
    """On each reported generation, reads the store through its own connection."""

    def __init__(self, db: Path, run_id: str) -> None:
        self.db, self.run_id = db, run_id
        self.reported: list[tuple[str, int]] = []
        self.unseen: list[tuple[str, int]] = []

    def on_generation(self, gen: Generation) -> None:
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            row = con.execute(
                "SELECT 1 FROM generations WHERE run = ? AND sample_id = ? AND idx = ?",
                (self.run_id, gen.sample_id, gen.index),
            ).fetchone()
        finally:
            con.close()
        self.reported.append((gen.sample_id, gen.index))
        if row is None:
            self.unseen.append((gen.sample_id, gen.index))


def slow_scorer(pairs: Sequence[tuple[Sample, str]], task: str) -> list[Any]:
    """The real scorer, 50 ms slower per round (a busy sandbox): responses pile up meanwhile."""
    time.sleep(0.05)
    return default_scorer(pairs, task)


async def test_responses_are_committed_in_groups_and_reported_after_the_commit(
    tmp_path: Path,
) -> None:
    dataset: Dataset = load_dataset(offline=True)
    ids = [s.id for s in dataset.samples]
    db = tmp_path / "runs.sqlite"
    with (
        FakeOpenAI(CruxevalResponder(dataset.samples, "mixed"), latency=0.01) as server,
        CountingStore(db) as store,
    ):
        backend = make_backend(ModelSpec("openai", "fake-model", server.url, "chat"), timeout=10)
        try:
            plan = output_plan(
                store, backend, dataset.digest, SamplingParams(n=2, max_tokens=64, seed=1)
            )
            check = CommittedCheck(db, plan.run_id)
            runner = Runner(
                plan,
                store,
                {s.id: s for s in dataset.samples},
                concurrency=8,
                listener=check,
                scorer=slow_scorer,
                commit_rows=COMMIT_ROWS,
            )
            summary = await runner.run(ids)
        finally:
            await backend.aclose()
        stored = store.generations(plan.run_id)
    assert summary.failed == 0 and summary.completed == 2 * len(ids) == len(stored)
    assert sorted(check.reported) == sorted((g.sample_id, g.index) for g in stored)
    assert check.unseen == []  # every generation was committed before it was reported
    assert sum(store.groups) == len(stored)
    assert max(store.groups) <= COMMIT_ROWS  # a round never goes past commit_rows
    # Requests went on while rounds were scored: far fewer transactions than responses.
    assert len(store.groups) <= len(ids) // 2, store.groups


async def test_a_response_that_cannot_be_scored_is_a_recorded_failure_and_the_rest_is_stored(
    tmp_path: Path,
) -> None:
    dataset: Dataset = load_dataset(offline=True)
    ids = [s.id for s in dataset.samples]
    bad = ids[3]

    def scorer(pairs: Sequence[tuple[Sample, str]], task: str) -> list[Any]:
        time.sleep(0.02)  # responses pile up: rounds hold several, the bad one among them
        if any(sample.id == bad for sample, _ in pairs):
            raise RuntimeError("the sandbox could not start")
        return default_scorer(pairs, task)

    with (
        FakeOpenAI(CruxevalResponder(dataset.samples, "mixed"), latency=0.01) as server,
        CountingStore(tmp_path / "runs.sqlite") as store,
    ):
        backend = make_backend(ModelSpec("openai", "fake-model", server.url, "chat"), timeout=10)
        try:
            plan = output_plan(
                store, backend, dataset.digest, SamplingParams(n=2, max_tokens=64, seed=1)
            )
            runner = Runner(
                plan, store, {s.id: s for s in dataset.samples}, concurrency=8, scorer=scorer
            )
            summary = await runner.run(ids)
        finally:
            await backend.aclose()
        stored = {(g.sample_id, g.index) for g in store.generations(plan.run_id)}
        left = store.missing(plan.run_id, ids, 2)
    assert summary.aborted is None and summary.failed == 2
    assert summary.failures == [(bad, 0, "the sandbox could not start")] + [
        (bad, 1, "the sandbox could not start")
    ]
    assert left == {bad: [0, 1]}  # asked again on resume
    assert len(stored) == 2 * (len(ids) - 1)
