"""A run's rounds settled in the scoring process (`cruxtui.core.runs.settle`): read, scored and
committed there through its own connection, reported here only once committed, with this
process's keys redacted from what it stores, and counted right when only counts come back."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import output_plan

from cruxtui.core.data.dataset import load_dataset
from cruxtui.core.models import ModelSpec, SamplingParams, make_backend
from cruxtui.core.runs.offload import shared_offload
from cruxtui.core.runs.runner import Progress, RunListener, Runner
from cruxtui.core.runs.store import Generation, RunStore
from cruxtui.core.util.redact import MARK, register
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI, constant

COMMIT_ROWS = 16


class Reader(RunListener):
    """Shows generations: reads each reported one back through a connection of its own."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.reported: list[tuple[str, int]] = []
        self.unseen: list[tuple[str, int]] = []
        self.last: Progress | None = None

    def on_generation(self, gen: Generation) -> None:
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            row = con.execute(
                "SELECT 1 FROM generations WHERE sample_id = ? AND idx = ?",
                (gen.sample_id, gen.index),
            ).fetchone()
        finally:
            con.close()
        self.reported.append((gen.sample_id, gen.index))
        if row is None:
            self.unseen.append((gen.sample_id, gen.index))


class Counter(RunListener):
    """Shows only progress: the round's counts come back, not its generations."""

    def __init__(self) -> None:
        self.last: Progress | None = None

    def on_progress(self, progress: Progress) -> None:
        self.last = progress


@pytest.fixture
def commits_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many rows this process's own stores commit (the scoring process's are not seen)."""
    seen: list[int] = []
    original = RunStore.add_generations

    def counted(self: RunStore, run_id: str, gens: Any) -> int:
        gens = list(gens)
        seen.append(len(gens))
        return original(self, run_id, gens)

    monkeypatch.setattr(RunStore, "add_generations", counted)
    return seen


async def _run(server: FakeOpenAI, db: Path, listener: RunListener, n: int = 4) -> Any:
    dataset = load_dataset(offline=True)
    with RunStore(db) as store:
        backend = make_backend(ModelSpec("openai", "fake-model", server.url, "chat"), timeout=10)
        try:
            plan = output_plan(
                store, backend, dataset.digest, SamplingParams(n=n, max_tokens=64, seed=5)
            )
            runner = Runner(
                plan,
                store,
                {s.id: s for s in dataset.samples},
                concurrency=8,
                listener=listener,
                commit_rows=COMMIT_ROWS,
            )
            summary = await runner.run([s.id for s in dataset.samples])
        finally:
            await backend.aclose()
        return summary, store.generations(plan.run_id)


def test_rounds_are_committed_by_the_scoring_process_and_reported_after(
    tmp_path: Path, commits_here: list[int]
) -> None:
    db = tmp_path / "runs.sqlite"
    reader = Reader(db)
    with FakeOpenAI(CruxevalResponder(load_dataset(offline=True).samples, "mixed")) as server:
        summary, stored = asyncio.run(_run(server, db, reader))
    assert shared_offload().pid is not None
    assert commits_here == []  # every row came through the scoring process's connection
    assert summary.failed == 0 and summary.completed == len(stored) > 20
    assert {g.passed for g in stored} == {True, False}
    assert sorted(reader.reported) == sorted((g.sample_id, g.index) for g in stored)
    assert reader.unseen == []  # committed before it was reported
    groups: dict[float | None, int] = {}
    for g in stored:  # one commit, one timestamp
        groups[g.created] = groups.get(g.created, 0) + 1
    assert max(groups.values()) <= COMMIT_ROWS


def test_counts_alone_come_back_when_no_listener_shows_generations(
    tmp_path: Path, commits_here: list[int]
) -> None:
    counter = Counter()
    with FakeOpenAI(CruxevalResponder(load_dataset(offline=True).samples, "mixed")) as server:
        summary, stored = asyncio.run(_run(server, tmp_path / "runs.sqlite", counter, n=3))
    assert commits_here == []
    assert counter.last is not None and counter.last.done == len(stored) == summary.completed
    by_sample: dict[str, list[bool]] = {}
    for g in stored:
        by_sample.setdefault(g.sample_id, []).append(g.passed)
    pass1 = sum(sum(v) / len(v) for v in by_sample.values()) / len(by_sample)
    assert 0 < pass1 < 1
    assert counter.last.pass1 == pytest.approx(pass1)


def test_a_key_of_this_process_is_redacted_by_the_scoring_process_too(
    tmp_path: Path, commits_here: list[int]
) -> None:
    secret = "sk-live-settle-test-0123456789"
    register(secret)  # as an endpoint's key is, in this process only
    leak = f"[ANSWER]\nassert f('{secret}') == '{secret}'\n[/ANSWER]"
    with FakeOpenAI(constant(leak)) as server:
        summary, stored = asyncio.run(_run(server, tmp_path / "runs.sqlite", Counter(), n=1))
    assert commits_here == [] and stored and summary.failed == 0
    with sqlite3.connect(tmp_path / "runs.sqlite") as con:
        texts = [t for row in con.execute("SELECT raw, answer FROM generations") for t in row]
    assert texts and all(secret not in (t or "") for t in texts)
    assert any(MARK in (t or "") for t in texts)


def test_a_store_named_relative_to_where_the_run_is_started_is_the_one_written(
    tmp_path: Path, commits_here: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    shared_offload().start()  # the scoring process already runs, in another directory
    monkeypatch.chdir(tmp_path)
    with FakeOpenAI(CruxevalResponder(load_dataset(offline=True).samples, "mixed")) as server:
        summary, stored = asyncio.run(_run(server, Path("runs.sqlite"), Counter(), n=1))
    assert commits_here == [] and summary.failed == 0
    with sqlite3.connect(tmp_path / "runs.sqlite") as con:
        (count,) = con.execute("SELECT COUNT(*) FROM generations").fetchone()
    assert count == len(stored) == summary.completed > 0


def test_the_same_configuration_in_another_store_is_scored_afresh(tmp_path: Path) -> None:
    """Verdicts are remembered per run, and a run is its id in its store: a second store file
    with the same configuration (the same run id) asks the scorer again."""
    from cruxtui.core.runs.runner import default_scorer

    calls: list[int] = []
    scorer = lambda pairs, task: calls.append(len(pairs)) or default_scorer(pairs, task)  # noqa: E731 - a lambda: scored in this process, where the calls are seen
    dataset = load_dataset(offline=True)

    async def run(db: Path) -> str:
        with RunStore(db) as store:
            backend = make_backend(ModelSpec("openai", "fake-model", server.url, "chat"))
            try:
                plan = output_plan(
                    store, backend, dataset.digest, SamplingParams(n=2, max_tokens=64, seed=5)
                )
                samples = {s.id: s for s in dataset.samples}
                runner = Runner(plan, store, samples, concurrency=4, scorer=scorer)
                await runner.run(list(samples))
            finally:
                await backend.aclose()
            return plan.run_id

    with FakeOpenAI(CruxevalResponder(dataset.samples, "mixed")) as server:
        first = asyncio.run(run(tmp_path / "a.sqlite"))
        scored_first = sum(calls)
        second = asyncio.run(run(tmp_path / "b.sqlite"))
    assert first == second and scored_first > 0
    assert sum(calls) == 2 * scored_first
