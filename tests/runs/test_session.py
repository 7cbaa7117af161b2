"""The one run session: `cruxtui run` and the run panel (`live_run`) open, find and fill the same
stored run the same way, against a real local server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cruxtui.cli.main import main
from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.core.runs.runner import RunListener
from cruxtui.core.runs.session import LiveRunError, RunSettings, live_run, open_session
from cruxtui.core.runs.store import Generation, RunStore
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI, Fault


@pytest.fixture(scope="module")
def starter() -> Dataset:
    return load_dataset(offline=True)


class Recorder(RunListener):
    def __init__(self) -> None:
        self.generations: list[Generation] = []
        self.retries: list[tuple[str, int]] = []

    def on_generation(self, gen: Generation) -> None:
        self.generations.append(gen)

    def on_retry(self, error: str, attempt: int, wait: float) -> None:
        self.retries.append((error, attempt))


async def test_the_panel_resumes_the_run_the_cli_stored(
    tmp_path: Path, starter: Dataset, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = starter.samples[0]
    store_path = tmp_path / "runs.sqlite"
    with FakeOpenAI(CruxevalResponder(starter.samples, "mixed")) as server:
        argv = ["run", "--base-url", server.url, "--model", "fake-model", "-n", "2"]
        argv += ["--seed", "0", "--samples", sample.id, "--store", str(store_path), "--json"]
        assert await asyncio.to_thread(main, argv) in (0, 1)  # the CLI runs its own loop
        report = json.loads(capsys.readouterr().out)
        asked = server.request_count
        settings = RunSettings(base_url=server.url, model="fake-model", n=2, seed=0)
        shown: list[Generation] = []
        with RunStore(store_path) as store:
            summary = await live_run(
                store, starter, sample, settings, listener=Recorder(), show_stored=shown.append
            )
            assert summary.run_id == report["run_id"] and summary.stored_before == 2
            assert summary.requested == 0 and server.request_count == asked
            assert [g.index for g in shown] == [0, 1]
            assert len(store.runs()) == 1


async def test_a_refused_run_is_discarded_and_retries_reach_the_listener(
    tmp_path: Path, starter: Dataset
) -> None:
    sample = starter.samples[0]
    with (
        FakeOpenAI(faults=[Fault("rate_limit", retry_after=0.01)]) as server,
        RunStore(tmp_path / "runs.sqlite") as store,
    ):
        listener = Recorder()
        good = RunSettings(base_url=server.url, model="fake-model")
        session = await open_session(store, starter, good)
        await session.run({sample.id: sample}, listener=listener)
        assert not session.discarded and len(listener.generations) == 1
        assert [attempt for _, attempt in listener.retries] == [1]
        wrong_model = RunSettings(base_url=server.url, model="no-such-model")
        session = await open_session(store, starter, wrong_model)
        summary = await session.run({sample.id: sample})
        assert summary.aborted and session.discarded
        assert [run.model for run in store.runs()] == ["fake-model"]


async def test_settings_that_name_no_model_fail_with_one_line(
    tmp_path: Path, starter: Dataset
) -> None:
    with RunStore(tmp_path / "runs.sqlite") as store:
        with pytest.raises(LiveRunError) as error:
            await open_session(store, starter, RunSettings(base_url="http://127.0.0.1:1/v1"))
        assert "no model name given" in str(error.value) and "\n" not in str(error.value)
        assert store.runs() == []
