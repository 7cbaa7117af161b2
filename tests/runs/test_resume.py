"""Kill `cruxtui run` with SIGKILL mid-batch, then run the same command again: every generation
stored before the kill is intact, and the resumed run requests none of them again (requests are
counted by the server)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import REPO

from cruxtui.core.data.dataset import load_dataset
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI, FakeRequest

N = 3


class CountingResponder(CruxevalResponder):
    """Answers like `CruxevalResponder` ("mixed") and records, per request number, which sample
    was asked for and how many generations (`n`)."""

    def __init__(self, samples) -> None:  # noqa: ANN001
        super().__init__(samples, "mixed", accuracy=0.5)
        self.asked: dict[int, tuple[str, int]] = {}
        self._lock = threading.Lock()

    def __call__(self, request: FakeRequest) -> str:
        found = self._find(request.prompt)
        assert found is not None, "every prompt names a known sample"
        with self._lock:
            self.asked[request.number] = (found[0].id, int(request.body.get("n") or 1))
        return super().__call__(request)


def rows(db: Path) -> dict[tuple[str, int], tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            (r[0], r[1]): r[2:]
            for r in con.execute(
                "SELECT sample_id, idx, raw, answer, kind, passed, reason, created FROM generations"
            )
        }
    finally:
        con.close()


def test_sigkill_mid_batch_then_resume(tmp_path: Path) -> None:
    dataset = load_dataset(offline=True)
    ids = [s.id for s in dataset.samples]
    store = tmp_path / "runs.sqlite"
    responder = CountingResponder(dataset.samples)
    with FakeOpenAI(responder, latency=0.1) as server:
        cmd = [
            sys.executable,
            "-m",
            "cruxtui",
            "run",
            "--base-url",
            server.url,
            "--model",
            "fake-model",
            "--task",
            "output",
            "--mode",
            "direct",
            "-n",
            str(N),
            "--seed",
            "3",
            "--concurrency",
            "2",
            "--store",
            str(store),
            "--json",
        ]
        proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        deadline = time.monotonic() + 30
        stored = 0
        while stored < 4 * N and time.monotonic() < deadline:
            time.sleep(0.05)
            if store.exists():
                try:
                    stored = len(rows(store))
                except sqlite3.OperationalError:
                    stored = 0  # the schema is being created
        assert proc.poll() is None, f"the run ended before the kill: {proc.communicate()}"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        time.sleep(
            0.3
        )  # requests that were in flight reach the server (and are answered into a dead socket)
        before = rows(store)
        first_phase = server.request_count
        assert 4 * N <= len(before) < len(ids) * N, "killed mid-batch"

        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)

    after = rows(store)
    # Everything stored before the kill is still there, byte for byte.
    assert {k: after[k] for k in before} == before
    assert len(after) == len(ids) * N and summary["generations"] == len(ids) * N
    assert summary["stored_before"] == len(before) and summary["completed"] == len(after) - len(
        before
    )

    # The resumed run asked for exactly what was missing: per sample, N minus what was stored.
    stored_per_sample = {sid: sum(1 for (s, _) in before if s == sid) for sid in ids}
    asked_after: dict[str, int] = {}
    for number, (sid, n) in responder.asked.items():
        if number >= first_phase:
            asked_after[sid] = asked_after.get(sid, 0) + n
    assert asked_after == {sid: N - k for sid, k in stored_per_sample.items() if k < N}
    # Whole samples done before the kill were never asked again.
    assert not {sid for sid, k in stored_per_sample.items() if k == N} & set(asked_after)
    assert summary["pass@1"] > 0 and summary["run_id"]
