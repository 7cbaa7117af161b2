"""`cruxtui doctor`: the sandbox's enforcement found by trying, the paths, and the endpoints."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from cruxtui.testing.fake_openai import FakeOpenAI


def _doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cruxtui", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        check=False,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_doctor_json_names_each_mechanism_and_the_endpoints_that_answer() -> None:
    config = Path(os.environ["CRUXTUI_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    with FakeOpenAI(models=("fake-model",)) as server:
        (config / "config.toml").write_text(
            f'[endpoints.live]\nbase_url = "{server.url}"\nmodel = "fake-model"\n\n'
            f'[endpoints.dead]\nbase_url = "http://127.0.0.1:{_free_port()}/v1"\nmodel = "m"\n'
        )
        done = _doctor("--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    box = report["sandbox"]
    for key in ("network", "filesystem", "uid", "rlimits", "guard"):
        assert key in box
    assert isinstance(box["network"], str) and isinstance(box["filesystem"], str)
    assert box["guard"].startswith("audit hook")
    assert box["tried_without_guard"]["listener received"] == "nothing"
    assert box["rlimits"]["RLIMIT_NPROC"][0] == 1
    if sys.platform == "linux":  # this kernel family: Landlock, seccomp, network namespaces
        assert box["network"] != "none" and "seccomp" in box["network"]
        assert box["filesystem"].startswith("landlock")
        tried = box["tried_without_guard"]
        assert all(
            tried[k].startswith("refused")
            for k in (
                "connect to 127.0.0.1",
                "write in a world-writable folder",
                "read the scorer's /proc/PID/environ",
                "list the user's home folder",
            )
        ), tried
    statuses = {e["name"]: e["status"] for e in report["endpoints"]}
    assert statuses["live"].startswith("answers: 1 model(s)"), statuses
    assert statuses["dead"].startswith("does not answer"), statuses
    assert set(report["paths"]) == {"dataset", "config", "cases", "run store"}


@pytest.mark.skipif(sys.platform != "linux", reason="the kernel mechanisms are Linux's")
def test_doctor_text_says_what_is_in_force() -> None:
    done = _doctor()
    assert done.returncode == 0, done.stderr
    lines = {ln.split()[0]: ln for ln in done.stdout.splitlines() if ln.startswith("  ")}
    assert "netns" in lines["network"] or "seccomp" in lines["network"]
    assert "landlock" in lines["filesystem"]
    assert "endpoints" in done.stdout and "none configured" in done.stdout
