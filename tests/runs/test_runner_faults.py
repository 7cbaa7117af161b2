"""The runner against a real OpenAI-compatible server on 127.0.0.1 that misbehaves on purpose:
429 with Retry-After, 500, answers slower than the timeout, a stream cut mid-way, the server
killed mid-run; and the CLI's one-line errors for a wrong key, an unknown model, a dead endpoint."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, output_plan

from cruxtui.core.data.dataset import Dataset, load_dataset
from cruxtui.core.models import ModelSpec, RetryPolicy, SamplingParams, make_backend
from cruxtui.core.runs.runner import RunListener, Runner
from cruxtui.core.runs.store import DONE, INCOMPLETE, Generation, RunStore
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI, Fault

FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.02, max_delay=0.2, jitter=0.0)


@pytest.fixture(scope="module")
def starter() -> Dataset:
    return load_dataset(offline=True)  # the bundled 40-sample starter set: no external data needed


class Recorder(RunListener):
    def __init__(self) -> None:
        self.generations: list[Generation] = []
        self.failures: list[tuple[str, int | None, str]] = []
        self.restarts: list[tuple[str, int, str]] = []
        self.chunks = 0

    def on_generation(self, gen: Generation) -> None:
        self.generations.append(gen)

    def on_failure(self, sample_id: str, index: int | None, error: str) -> None:
        self.failures.append((sample_id, index, error))

    def on_restart(self, sample_id: str, index: int, prefix: str, reason: str) -> None:
        self.restarts.append((sample_id, index, reason))

    def on_chunk(self, sample_id: str, index: int, text: str) -> None:
        self.chunks += 1


async def run_once(
    server: FakeOpenAI,
    dataset: Dataset,
    store: RunStore,
    ids: list[str],
    *,
    n: int = 1,
    stream: bool = False,
    timeout: float = 5.0,
    concurrency: int = 2,
    retry: RetryPolicy = FAST_RETRY,
    api: str = "chat",
    listener: Recorder | None = None,
    on_retry=None,
):  # noqa: ANN001
    backend = make_backend(
        ModelSpec("openai", "fake-model", server.url, api),
        timeout=timeout,
        retry=retry,
        on_retry=on_retry,
    )
    try:
        plan = output_plan(
            store,
            backend,
            dataset.digest,
            SamplingParams(n=n, max_tokens=64, seed=7),
            style="chat" if api == "chat" else "completion",
        )
        runner = Runner(
            plan,
            store,
            {s: dataset[s] for s in ids},
            concurrency=concurrency,
            stream=stream,
            listener=listener or Recorder(),
        )
        return await runner.run(ids)
    finally:
        await backend.aclose()


@pytest.fixture
def store(tmp_path: Path):
    with RunStore(tmp_path / "runs.sqlite") as s:
        yield s


def ids(dataset: Dataset, k: int) -> list[str]:
    return [s.id for s in dataset.samples[:k]]


async def test_429_with_retry_after_is_waited_out_and_the_run_completes(starter, store) -> None:
    waits: list[tuple[str, float]] = []
    with FakeOpenAI(
        CruxevalResponder(starter.samples, "correct"), faults=[Fault("rate_limit", retry_after=0.6)]
    ) as server:
        t0 = time.monotonic()
        summary = await run_once(
            server,
            starter,
            store,
            ids(starter, 3),
            concurrency=1,
            retry=RetryPolicy(attempts=3, base_delay=0.02, max_delay=5.0, jitter=0.0),
            on_retry=lambda exc, attempt, wait: waits.append((exc.kind, wait)),
        )
        elapsed = time.monotonic() - t0
    assert server.log.faults == ["rate_limit"]
    assert summary.status == DONE and summary.completed == 3 and summary.failed == 0
    # the policy alone would have waited 0.02 s: the server's Retry-After (0.6 s) was honoured
    assert waits == [("rate_limited", 0.6)]
    assert elapsed >= 0.6
    assert server.request_count == 4
    assert all(g.passed for g in store.generations(summary.run_id))


async def test_500_is_retried(starter, store) -> None:
    with FakeOpenAI(
        CruxevalResponder(starter.samples, "correct"),
        faults=[Fault("server_error"), Fault("server_error", status=503)],
    ) as server:
        summary = await run_once(server, starter, store, ids(starter, 4), n=2)
    assert server.log.faults == ["server_error", "server_error"]
    assert (summary.status, summary.completed, summary.failed) == (DONE, 8, 0)
    assert store.counts(summary.run_id) == {s: (2, 2) for s in ids(starter, 4)}


async def test_slower_than_timeout_retries_then_records_failure_and_goes_on(starter, store) -> None:
    # Two attempts allowed. Requests 0 and 1 (both attempts for the first sample) are too slow: it
    # fails. Request 2 (the second sample) is slow once, its retry succeeds; the third is fine.
    faults = [Fault("slow", delay=2.0), Fault("slow", delay=2.0), Fault("slow", delay=2.0)]
    with FakeOpenAI(CruxevalResponder(starter.samples, "correct"), faults=faults) as server:
        t0 = time.monotonic()
        summary = await run_once(
            server,
            starter,
            store,
            ids(starter, 3),
            timeout=0.3,
            concurrency=1,
            retry=RetryPolicy(attempts=2, base_delay=0.01, jitter=0.0),
        )
        elapsed = time.monotonic() - t0
    assert elapsed < 3.0, "the client must give up at the timeout, not wait for the slow answer"
    assert summary.status == INCOMPLETE and summary.completed == 2 and summary.failed == 1
    [(sid, index, error)] = store.failures(summary.run_id)
    assert (sid, index) == (ids(starter, 3)[0], 0)
    assert "within 0.3 s" in error and "2 attempts" in error
    assert store.missing(summary.run_id, ids(starter, 3), 1) == {sid: [0]}


async def test_resume_after_failures_requests_only_the_failed_ones(starter, store) -> None:
    with FakeOpenAI(
        CruxevalResponder(starter.samples, "correct"), faults=[Fault("server_error")] * 3
    ) as server:
        first = await run_once(server, starter, store, ids(starter, 3), concurrency=1)
        assert first.failed == 1 and first.completed == 2
        before = server.request_count
        second = await run_once(server, starter, store, ids(starter, 3), concurrency=1)
        assert server.request_count - before == 1
    assert second.run_id == first.run_id
    assert (second.stored_before, second.completed, second.failed, second.status) == (2, 1, 0, DONE)


async def test_stream_cut_midway_restarts_the_generation(starter, store) -> None:
    rec = Recorder()
    with FakeOpenAI(
        CruxevalResponder(starter.samples, "correct"),
        chunk_chars=4,
        faults=[Fault("cut", after_chars=10)],
    ) as server:
        summary = await run_once(
            server, starter, store, ids(starter, 1), n=2, stream=True, listener=rec, concurrency=1
        )
    assert server.log.faults == ["cut"]
    assert len(rec.restarts) == 1 and "broke off" in rec.restarts[0][2]
    assert (summary.completed, summary.failed) == (2, 0)
    gens = store.generations(summary.run_id)
    assert all(g.passed and g.raw.startswith("[ANSWER]\nassert f(") for g in gens)
    assert rec.chunks > 4, "text must arrive in several chunks"


async def test_cut_non_streamed_body_is_retried(starter, store) -> None:
    with FakeOpenAI(CruxevalResponder(starter.samples, "correct"), faults=[Fault("cut")]) as server:
        summary = await run_once(server, starter, store, ids(starter, 2), api="completions")
    assert (summary.completed, summary.failed) == (2, 0)


def _serve_process(dataset_path: Path, latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cruxtui.testing.fake_openai",
            "--port",
            "0",
            "--latency",
            str(latency),
            "--mode",
            "correct",
            "--dataset",
            str(dataset_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


async def test_server_killed_mid_run_keeps_what_finished_and_stops_with_a_reason(
    starter, store
) -> None:
    from cruxtui.core.data.dataset import starter_path

    proc, url = _serve_process(starter_path(), latency=0.05)
    rec = Recorder()

    class KillAfterFive(Recorder):
        def on_generation(self, gen: Generation) -> None:
            rec.on_generation(gen)
            if len(rec.generations) == 5:
                proc.kill()

    backend = make_backend(
        ModelSpec("openai", "fake-model", url, "chat"), timeout=2.0, retry=FAST_RETRY
    )
    try:
        plan = output_plan(store, backend, starter.digest, SamplingParams(n=1, max_tokens=64))
        runner = Runner(
            plan, store, {s.id: s for s in starter.samples}, concurrency=2, listener=KillAfterFive()
        )
        summary = await runner.run([s.id for s in starter.samples])
    finally:
        await backend.aclose()
        proc.kill()
        proc.wait()
    assert summary.status == INCOMPLETE
    assert summary.aborted and "cannot connect" in summary.aborted
    stored = store.generations(summary.run_id)
    assert len(stored) >= 5 and len(stored) == summary.completed < 40
    assert {(g.sample_id, g.raw) for g in stored} == {(g.sample_id, g.raw) for g in rec.generations}
    assert all(g.passed for g in stored)


# -- CLI: clear one-line errors ----------------------------------------------------------------


def cli(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "cruxtui", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=60,
    )


def assert_one_clear_line(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("cruxtui: error:")]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


def test_cli_wrong_key(tmp_path: Path, starter) -> None:
    with FakeOpenAI(CruxevalResponder(starter.samples), api_key="right-key") as server:
        result = cli(
            "run",
            "--base-url",
            server.url,
            "--model",
            "fake-model",
            "--samples",
            "starter_0,starter_1",
            "--store",
            str(tmp_path / "s.sqlite"),
            env_extra={"OPENAI_API_KEY": "wrong-key"},
        )
    assert_one_clear_line(result, "rejected the API key")
    assert "wrong-key" not in result.stderr + result.stdout


def test_cli_unknown_model(tmp_path: Path, starter) -> None:
    with FakeOpenAI(CruxevalResponder(starter.samples)) as server:
        result = cli(
            "run",
            "--base-url",
            server.url,
            "--model",
            "no-such-model",
            "--samples",
            "starter_0",
            "--store",
            str(tmp_path / "s.sqlite"),
        )
    assert_one_clear_line(result, "unknown model 'no-such-model'", "fake-model")


def test_cli_dead_endpoint(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = cli(
        "run",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--model",
        "m",
        "--samples",
        "starter_0",
        "--store",
        str(tmp_path / "s.sqlite"),
        "--json",
        "--retries",
        "1",
    )
    assert_one_clear_line(result, "cannot connect", str(port))


def test_cli_bad_arguments(tmp_path: Path) -> None:
    result = cli(
        "run",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--samples",
        "sample_nope",
        "--store",
        str(tmp_path / "s.sqlite"),
    )
    assert_one_clear_line(result, "sample_nope")
    result = cli("run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "-n", "0")
    assert_one_clear_line(result, "-n must be at least 1")
    result = cli("run", "--endpoint", "nowhere", "--store", str(tmp_path / "s.sqlite"))
    assert_one_clear_line(result, "no endpoint named 'nowhere'")


async def test_every_request_failing_stops_the_run_instead_of_grinding_on(starter, store) -> None:
    with FakeOpenAI(
        CruxevalResponder(starter.samples, "correct"),
        fault_for=lambda number: Fault("server_error", status=502),
    ) as server:
        summary = await run_once(
            server, starter, store, ids(starter, 40), concurrency=2, retry=RetryPolicy(attempts=1)
        )
    assert summary.status == INCOMPLETE and summary.completed == 0
    assert summary.aborted and "stopped after 8 failed requests in a row" in summary.aborted
    assert "HTTP 502" in summary.aborted
    assert server.request_count < 12, "no grinding through all 40 samples"
    assert summary.failed == len(store.failures(summary.run_id)) >= 8
