"""The scoring process (`cruxtui.core.runs.offload`): calls run in a helper process and come back
with their result or exception; anything it cannot take, or a helper that dies, falls back to the
calling thread; it ignores Ctrl-C and leaves when its parent is killed; and a run scored there
stores exactly what a run scored in-thread stores."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import output_plan

from cruxtui.core.data.dataset import Sample, load_dataset
from cruxtui.core.models import ModelSpec, SamplingParams, make_backend
from cruxtui.core.runs.offload import Offload, shared_offload
from cruxtui.core.runs.runner import Runner, default_scorer
from cruxtui.core.runs.store import RunStore
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI


@pytest.fixture
def offload() -> Any:
    box = Offload()
    yield box
    box.close()


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # our own child: reap it, or it lingers as a zombie
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.05)
    return False


def test_a_call_runs_in_the_helper_and_its_exception_comes_back(offload: Offload) -> None:
    helper = offload.call(os.getpid)
    assert helper != os.getpid()
    assert offload.call(os.getpid) == helper  # one long-lived helper
    assert offload.call(sorted, [3, 1, 2]) == [1, 2, 3]
    with pytest.raises(ValueError, match="invalid literal"):
        offload.call(int, "x")


def test_what_cannot_be_sent_runs_in_the_caller(offload: Offload) -> None:
    assert offload.call(lambda: os.getpid()) == os.getpid()  # a lambda does not pickle
    lock = threading.Lock()
    assert offload.call(lambda held: held.locked(), lock) is False  # nor does a lock
    assert offload.call(os.getpid) != os.getpid()  # and the helper is still in step


def test_a_helper_killed_mid_call_falls_back_and_is_replaced(offload: Offload) -> None:
    first = offload.call(os.getpid)
    threading.Timer(0.3, os.kill, (first, signal.SIGKILL)).start()
    t0 = time.monotonic()
    assert offload.call(time.sleep, 1.0) is None  # finished here after the helper died
    assert time.monotonic() - t0 >= 1.0
    second = offload.call(os.getpid)
    assert second not in (first, os.getpid())


def test_start_boots_the_helper_before_the_first_call(offload: Offload) -> None:
    assert offload.pid is None
    offload.start()
    started = offload.pid
    assert started not in (None, os.getpid())
    assert offload.call(os.getpid) == started


def test_the_helper_ignores_ctrl_c(offload: Offload) -> None:
    helper = offload.call(os.getpid)
    os.kill(helper, signal.SIGINT)
    time.sleep(0.3)
    assert offload.call(os.getpid) == helper


def test_the_helper_leaves_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = (
        "import os, sys, time\n"
        "from cruxtui.core.runs.offload import Offload, shared_offload\n"
        "box = Offload()\n"
        "print(box.call(os.getpid), flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    assert parent.stdout is not None
    helper = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    assert _gone(helper), "the helper outlived its killed parent"


def _in_thread(pairs: Sequence[tuple[Sample, str]], task: str) -> list[Any]:
    return default_scorer(pairs, task)


async def _stored(tmp_path: Path, name: str, scorer: Any) -> list[tuple[Any, ...]]:
    dataset = load_dataset(offline=True)
    samples = dataset.samples[:60]
    with (
        FakeOpenAI(CruxevalResponder(samples, "mixed"), latency=0.0) as server,
        RunStore(tmp_path / f"{name}.sqlite") as store,
    ):
        backend = make_backend(ModelSpec("openai", "fake-model", server.url, "chat"), timeout=10)
        try:
            plan = output_plan(
                store, backend, dataset.digest, SamplingParams(n=4, max_tokens=64, seed=3)
            )
            runner = Runner(plan, store, {s.id: s for s in samples}, concurrency=8, scorer=scorer)
            summary = await runner.run([s.id for s in samples])
        finally:
            await backend.aclose()
        assert summary.failed == 0
        return sorted(
            (g.sample_id, g.index, g.raw, g.answer, g.kind, g.passed, g.reason, g.official)
            for g in store.generations(plan.run_id)
        )


def test_a_run_scored_in_the_helper_stores_what_one_scored_in_thread_stores(
    tmp_path: Path,
) -> None:
    shared_offload().close()
    helper = asyncio.run(_stored(tmp_path, "helper", None))  # the default: the helper
    assert shared_offload().pid not in (None, os.getpid())  # it was started for the run
    here = asyncio.run(_stored(tmp_path, "here", lambda p, t: _in_thread(p, t)))  # no pickle
    assert len(helper) == 4 * len(load_dataset(offline=True).samples[:60]) > 100
    assert {row[5] for row in helper} == {True, False}  # mixed answers: both verdicts occur
    assert helper == here
