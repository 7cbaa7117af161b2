"""`cruxtui run` on a full disk: one `cruxtui: error:` line that says how to resume.

The store lives on a real 160 KiB tmpfs, mounted in a private mount namespace (`unshare -rm`:
an unprivileged user namespace, so this needs no root and touches no mount of the machine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO

from cruxtui.core.data.dataset import load_dataset
from cruxtui.testing.fake_openai import CruxevalResponder, FakeOpenAI


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    with tempfile.TemporaryDirectory() as where:
        done = subprocess.run(
            ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k none {where}"],
            capture_output=True, timeout=30, check=False,
        )  # fmt: skip
    return done.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="no user+mount namespace to mount a tmpfs in")
def test_a_full_disk_is_one_line_that_says_how_to_resume(tmp_path: Path) -> None:
    starter = load_dataset(None, offline=True)
    where = tmp_path / "small"
    where.mkdir()
    with FakeOpenAI(CruxevalResponder(starter.samples, "correct")) as server:
        count = (
            f"import sqlite3; print('stored', sqlite3.connect('{where}/runs.sqlite')"
            ".execute('SELECT COUNT(*) FROM generations').fetchone()[0])"
        )
        script = (
            f"mount -t tmpfs -o size=160k none {where} || exit 99; {sys.executable} -m cruxtui run "
            f"--base-url {server.url} --model fake-model --store {where}/runs.sqlite -n 10; "
            f'echo "status $?"; {sys.executable} -c "{count}"'
        )
        done = subprocess.run(
            ["unshare", "-rm", "sh", "-c", script],
            capture_output=True, text=True, timeout=300, cwd=REPO, check=False,
            env={**os.environ, "CRUXTUI_OFFLINE": "1"},
        )  # fmt: skip
    assert "status 2" in done.stdout, (done.stdout[-2000:], done.stderr[-3000:])
    assert "Traceback" not in done.stderr and "ExceptionGroup" not in done.stderr
    stored = int(done.stdout.split("stored")[-1])
    assert stored > 0  # what was done before the disk filled up is kept
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("cruxtui: error:")]
    assert len(errors) == 1, done.stderr[-3000:]
    assert "full" in errors[0] and "run the same command again to resume" in errors[0]
