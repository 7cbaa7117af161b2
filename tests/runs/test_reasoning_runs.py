"""Runs of reasoning models and of servers that ignore `n`, end to end through the runner and the
store; and a run store made by the first release, opened and migrated in place."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.core.models import ModelSpec, RetryPolicy, SamplingParams, make_backend
from cruxtui.core.runs.runner import Runner, prepare_run
from cruxtui.core.runs.store import SCHEMA_VERSION, RunStore
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI

# The store as SQL text (a database file is not kept in git): `sqlite3 OLD.sqlite .dump` of the
# file the released code wrote, plus its user_version.
FIXTURE = Path(__file__).parent / "fixtures" / "store-0.1.0.sql"
FAST = RetryPolicy(attempts=2, base_delay=0.01)


@pytest.fixture(scope="module")
def starter() -> Dataset:
    return load_dataset(offline=True)


async def run(
    srv: FakeOpenAI,
    starter: Dataset,
    store: RunStore,
    ids: list[str],
    *,
    n: int,
    stream: bool,
    seed: int | None = 7,
    max_tokens: int = 512,
    mode: str = "direct",
) -> str:
    b = make_backend(ModelSpec("openai", "fake-model", srv.url, "chat"), timeout=5, retry=FAST)
    params = SamplingParams(temperature=0.8, n=n, seed=seed, max_tokens=max_tokens)
    info, plan = prepare_run(
        store,
        b,
        dataset_digest=starter.digest,
        task="output",
        mode=mode,
        style="chat",
        params=params,
    )
    try:
        summary = await Runner(
            plan, store, {s: starter[s] for s in ids}, concurrency=2, stream=stream
        ).run(ids)
    finally:
        await b.aclose()
    assert summary.failed == 0, summary.failures
    return info.id


@pytest.mark.parametrize("stream", [False, True])
async def test_a_server_that_ignores_n_gets_distinct_seeds_and_says_so(
    starter: Dataset, tmp_path: Path, stream: bool
) -> None:
    ids = [s.id for s in starter.samples[:3]]
    responder = CruxevalResponder(starter.samples, "mixed")
    with FakeOpenAI(responder, max_choices=1) as srv, RunStore(tmp_path / "r.sqlite") as store:
        run_id = await run(srv, starter, store, ids, n=3, stream=stream)
        gens = store.generations(run_id)
        seeds = [r.body.get("seed") for r in srv.log.requests]
    assert len(gens) == 9
    for sid in ids:
        mine = sorted((g for g in gens if g.sample_id == sid), key=lambda g: g.index)
        assert [g.seed for g in mine] == [7, 8, 9]  # generation i sampled with seed + i
        if stream:
            assert all(g.obtained == "own streamed request" for g in mine)
        else:
            assert mine[0].obtained == "choice 0 of a request for n=3"
            assert all("fewer choices" in (g.obtained or "") for g in mine[1:])
    # No request was ever repeated with the same seed for one sample.
    assert len(seeds) == 9 and sorted(seeds) == sorted([7, 8, 9] * 3)


async def test_resuming_a_batch_seeds_from_the_first_missing_index(
    starter: Dataset, tmp_path: Path
) -> None:
    """A batch that starts at generation 1 (0 was streamed before) must not repeat seed 7."""
    sid = starter.samples[0].id
    responder = CruxevalResponder(starter.samples, "mixed")
    with FakeOpenAI(responder) as srv, RunStore(tmp_path / "r.sqlite") as store:
        b = make_backend(ModelSpec("openai", "fake-model", srv.url, "chat"), timeout=5)
        params = SamplingParams(n=3, seed=7)
        _, plan = prepare_run(
            store,
            b,
            dataset_digest=starter.digest,
            task="output",
            mode="direct",
            style="chat",
            params=params,
        )
        samples = {sid: starter[sid]}
        runner = Runner(plan, store, samples, stream=True)
        await runner._run_jobs({sid: [0]})  # generation 0 alone, streamed and stored
        await Runner(plan, store, samples).run([sid])
        await b.aclose()
        seeds = [r.body.get("seed") for r in srv.log.requests]
        gens = store.generations(plan.run_id)
    assert seeds == [7, 8]
    assert [g.seed for g in gens] == [7, 8, 8]


@pytest.mark.parametrize("stream", [False, True])
async def test_thinking_is_stored_apart_and_a_cut_gets_its_reason(
    starter: Dataset, tmp_path: Path, stream: bool
) -> None:
    ids = [starter.samples[0].id]
    responder = CruxevalResponder(starter.samples, "correct")
    thought = "Let me trace f. [ANSWER]\nassert f(0) == 'nope' is wrong."
    with (
        FakeOpenAI(responder, think=thought, think_style="inline") as srv,
        RunStore(tmp_path / "r.sqlite") as store,
    ):
        run_id = await run(srv, starter, store, ids, n=1, stream=stream)
        [gen] = store.generations(run_id)
        srv.think = "hmm " * 400
        cut_id = await run(srv, starter, store, ids, n=1, stream=stream, max_tokens=64)
        [cut] = store.generations(cut_id)
    assert gen.passed and gen.reasoning is not None and "Let me trace f" in gen.reasoning
    assert "<think>" not in gen.raw and "nope" not in gen.raw
    assert cut.finish_reason == "length" and not cut.passed
    assert cut.reason.startswith("truncated while thinking")
    assert "--max-tokens" in cut.reason and cut.reasoning


def test_a_store_made_by_the_first_release_opens_and_migrates_in_place(tmp_path: Path) -> None:
    """tests/runs/fixtures/store-0.1.0.sql is the dump of a store written by the released code
    (commit 2359a2b, fixtures/make_old_store.py): every run, generation and failure survives, and
    the new columns are there, empty, for old rows."""
    path = tmp_path / "runs.sqlite"
    made = sqlite3.connect(path)
    made.executescript(FIXTURE.read_text())
    made.close()
    before = sqlite3.connect(path)
    old_rows = before.execute("SELECT * FROM generations ORDER BY sample_id, idx").fetchall()
    old_runs = before.execute("SELECT * FROM runs ORDER BY id").fetchall()
    assert before.execute("PRAGMA user_version").fetchone() == (1,)
    before.close()
    with RunStore(path) as store:
        runs = {r.id: r for r in store.runs()}
        assert len(runs) == 2 and sum(r.generations for r in runs.values()) == 3
        live = next(r for r in runs.values() if r.backend == "openai")
        gens = store.generations(live.id)
        assert [g.raw for g in gens][1].startswith("<think>")
        assert all(g.reasoning is None and g.seed is None for g in gens)
        assert store.failures(live.id) == [
            ("sample_1", None, "server error HTTP 500 from http://127.0.0.1:8000/v1")
        ]
        assert store.missing(live.id, ["sample_0", "sample_1"], 2) == {"sample_1": [0, 1]}
    after = sqlite3.connect(path)
    assert after.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    new_rows = after.execute("SELECT * FROM generations ORDER BY sample_id, idx").fetchall()
    assert [row[: len(old_rows[0])] for row in new_rows] == old_rows  # nothing lost or changed
    assert after.execute("SELECT * FROM runs ORDER BY id").fetchall() == old_runs
    after.close()
    with RunStore(path) as again:  # opening twice migrates nothing more
        assert len(again.runs()) == 2
