"""`cruxtui run` on the in-process vLLM backend, with a stand-in `vllm` module put on the
subprocess's path: 800 samples x n=10 go to the engine in chunks of 256 prompts (one request per
sample, each with n=10 and its own seed), never two engine calls at once, each chunk stored before
the next call. Killed with SIGKILL when the third call starts, the same command then asks the
engine for exactly the samples that were not stored, and nothing else.

The stand-in records every engine call (its prompts, their n and seed, start and end) in a log
file, and fails loudly if a call begins while another is running."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO

from cruxtui.core.data.dataset import Dataset
from cruxtui.core.models import ModelSpec, SamplingParams
from cruxtui.core.models.prompts import build_prompt
from cruxtui.core.models.vllm_offline import VllmBackend

N = 10
SEED = 5
CHUNK = 256

STANDIN = '''
"""A stand-in for vLLM's offline engine: answers at once and logs every call."""
import hashlib, json, os, signal, threading, time

_LOG = os.environ["VLLM_STANDIN_LOG"]
_KILL_AT = int(os.environ.get("VLLM_STANDIN_KILL_AT", "-1"))
_busy = threading.Lock()
_calls = [0]


def _log(entry):
    with open(_LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\\n")


def digest(item):
    return hashlib.sha1(json.dumps(item, sort_keys=True).encode()).hexdigest()[:16]


class SamplingParams:
    def __init__(self, n=1, temperature=1.0, top_p=1.0, max_tokens=16, stop=None, seed=None):
        self.n, self.seed, self.stop = n, seed, stop


class _Choice:
    def __init__(self, text):
        self.text, self.finish_reason, self.token_ids = text, "stop", [1, 2, 3]


class _Output:
    def __init__(self, choices):
        self.prompt_token_ids, self.outputs = [0] * 7, choices


class LLM:
    def __init__(self, model, **engine_args):
        _log({"event": "init", "model": model, "engine_args": engine_args})

    def _run(self, items, sampling):
        if not _busy.acquire(blocking=False):
            _log({"event": "overlap"})
            raise AssertionError("two engine calls at once")
        try:
            number = _calls[0]
            _calls[0] += 1
            params = sampling if isinstance(sampling, list) else [sampling] * len(items)
            assert len(params) == len(items), "one SamplingParams per prompt"
            _log({
                "event": "call", "number": number, "pid": os.getpid(), "start": time.time(),
                "requests": [[digest(item), p.n, p.seed] for item, p in zip(items, params)],
            })
            if number == _KILL_AT:
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(0.05)
            outputs = [
                _Output([_Choice(f"[ANSWER]\\nassert f(0) == {k % 3}\\n") for k in range(p.n)])
                for p in params
            ]
            _log({"event": "end", "number": number, "end": time.time()})
            return outputs
        finally:
            _busy.release()

    def chat(self, messages, sampling_params=None, use_tqdm=True):
        return self._run(messages, sampling_params)

    def generate(self, prompts, sampling_params=None, use_tqdm=True):
        return self._run(prompts, sampling_params)
'''

TORCH = "class cuda:\n    @staticmethod\n    def is_available():\n        return True\n"


def digest(item: object) -> str:
    return hashlib.sha1(json.dumps(item, sort_keys=True).encode()).hexdigest()[:16]


def standin(tmp_path: Path) -> Path:
    where = tmp_path / "standin"
    (where / "vllm").mkdir(parents=True)
    (where / "torch").mkdir()
    (where / "vllm" / "__init__.py").write_text(STANDIN)
    (where / "torch" / "__init__.py").write_text(TORCH)
    return where


def log_entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def stored(db: Path) -> dict[str, set[int]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out: dict[str, set[int]] = {}
        for sid, idx in con.execute("SELECT sample_id, idx FROM generations"):
            out.setdefault(sid, set()).add(idx)
        return out
    finally:
        con.close()


def test_a_vllm_run_goes_in_chunks_and_resumes_after_a_kill_between_them(
    official: Dataset, tmp_path: Path
) -> None:
    from conftest import CRUXEVAL_JSONL

    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text(
        textwrap.dedent(
            f"""
            [endpoints.gpu]
            backend = "vllm"
            model = "stand/in-coder"
            batch_size = {CHUNK}
            engine = {{ tensor_parallel_size = 2, data_parallel_size = 2, gpu_memory_utilization = 0.85 }}
            """
        )
    )
    log = tmp_path / "engine.jsonl"
    store = tmp_path / "runs.sqlite"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(standin(tmp_path)), str(REPO)]),
        "CRUXTUI_CONFIG_DIR": str(config),
        "VLLM_STANDIN_LOG": str(log),
    }
    cmd = [
        sys.executable, "-m", "cruxtui", "--dataset", str(CRUXEVAL_JSONL), "run",
        "--endpoint", "gpu", "-n", str(N), "--seed", str(SEED), "--store", str(store), "--json",
    ]  # fmt: skip
    by_digest = {
        digest(build_prompt(s, "output", "direct", "chat").messages): s.id for s in official.samples
    }

    killed = subprocess.run(
        cmd, cwd=REPO, env={**env, "VLLM_STANDIN_KILL_AT": "2"}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr[-2000:]
    first = log_entries(log)
    [init] = [e for e in first if e["event"] == "init"]
    assert init["model"] == "stand/in-coder"
    assert init["engine_args"] == {
        "tensor_parallel_size": 2,
        "data_parallel_size": 2,
        "gpu_memory_utilization": 0.85,
    }
    calls = [e for e in first if e["event"] == "call"]
    assert [len(c["requests"]) for c in calls] == [CHUNK, CHUNK, CHUNK]  # the third was killed
    assert all(n == N and seed == SEED for c in calls for _, n, seed in c["requests"])
    # The two chunks that returned were stored whole before the next call began; nothing else.
    before = stored(store)
    returned = {by_digest[d] for c in calls[:2] for d, _, _ in c["requests"]}
    assert set(before) == returned and all(v == set(range(N)) for v in before.values())
    assert len(returned) == 2 * CHUNK

    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    entries = log_entries(log)
    assert not [e for e in entries if e["event"] == "overlap"]
    resumed = [e for e in entries[len(first) :] if e["event"] == "call"]
    missing = {s.id for s in official.samples} - set(before)
    # Exactly the missing samples, each once, with all its n: in chunks of 256 (and the rest).
    asked = [by_digest[d] for c in resumed for d, _, _ in c["requests"]]
    assert sorted(asked) == sorted(missing)
    assert [len(c["requests"]) for c in resumed] == [CHUNK, len(missing) - CHUNK]
    assert all(n == N and seed == SEED for c in resumed for _, n, seed in c["requests"])
    after = stored(store)
    assert len(after) == len(official.samples) and all(v == set(range(N)) for v in after.values())
    assert summary["generations"] == len(official.samples) * N
    # One call at a time: each call began after the previous one ended.
    ends = {e["number"]: e["end"] for e in entries[len(first) :] if e["event"] == "end"}
    starts = [c["start"] for c in resumed]
    assert all(starts[i + 1] >= ends[resumed[i]["number"]] for i in range(len(resumed) - 1))


@pytest.fixture
def standin_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in imported in this process (a fresh copy for each test)."""
    where = standin(tmp_path)
    log = tmp_path / "engine.jsonl"
    monkeypatch.setenv("VLLM_STANDIN_LOG", str(log))
    monkeypatch.syspath_prepend(str(where))
    for name in ("vllm", "torch"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield log
    for name in ("vllm", "torch"):
        sys.modules.pop(name, None)


async def test_engine_calls_from_many_tasks_never_overlap(
    standin_engine: Path, official: Dataset
) -> None:
    """The TUI's one-sample requests and a run's chunks share the engine: 24 callers at once
    still make their calls one after another, on one thread."""
    import asyncio

    backend = VllmBackend(ModelSpec("vllm", "stand/in"), batch_size=8)
    prompts = [build_prompt(s, "output", "direct", "chat") for s in official.samples[:24]]
    results = await asyncio.gather(
        *(backend.complete(p, SamplingParams(n=2, seed=i)) for i, p in enumerate(prompts))
    )
    assert [len(r) for r in results] == [2] * 24
    assert [r[0].seed for r in results] == list(range(24))
    entries = log_entries(standin_engine)
    assert not [e for e in entries if e["event"] == "overlap"]
    assert len([e for e in entries if e["event"] == "call"]) == 24
