"""The `shared_data` mark: without the benchmark data its tests skip, and in CI a skip fails the run.

Each check runs a real pytest session on one marked test of this suite, with the data folder
pointed at a path that does not exist.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO

MARKED_BY_HAND = "tests/data/test_dataset.py::test_official_file_matches_the_pinned_checksum"
MARKED_BY_FIXTURE = "tests/data/test_dataset.py::test_digest_identifies_the_content"


def run_pytest(*args: str, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["CRUXTUI_SHARED_DATA"] = str(REPO / "no-such-data-folder")
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("test", [MARKED_BY_HAND, MARKED_BY_FIXTURE])
def test_without_the_data_a_marked_test_skips_with_the_reason(test: str) -> None:
    proc = run_pytest(test, "-rs", ci=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 skipped" in proc.stdout and "benchmark data not found" in proc.stdout


@pytest.mark.parametrize("test", [MARKED_BY_HAND, MARKED_BY_FIXTURE])
def test_in_ci_a_skipped_shared_data_test_fails_the_run(test: str) -> None:
    proc = run_pytest(test, ci=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "shared_data tests skipped in CI" in proc.stdout and test in proc.stdout


def test_both_kinds_of_test_carry_the_mark() -> None:
    proc = run_pytest("--collect-only", "-m", "shared_data", "tests/data/test_dataset.py", ci=False)
    assert MARKED_BY_HAND in proc.stdout and MARKED_BY_FIXTURE in proc.stdout, proc.stdout
    assert "test_starter_set_uses_the_methods_the_benchmark_is_about" not in proc.stdout
