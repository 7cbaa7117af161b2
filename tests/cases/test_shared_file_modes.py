"""Files meant to be shared follow the umask; the run store and caches stay private."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cruxtui.core.cases.case_file import save_case
from cruxtui.core.runs.store import RunStore
from cruxtui.core.scoring.generations_file import write_scored
from cruxtui.core.util.atomic import atomic_write_text, write_shared_text
from tests.cases.test_cases import make_case

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")


@pytest.fixture(params=[0o022, 0o027, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_shared_outputs_follow_the_umask(tmp_path: Path, umask: int) -> None:
    write_shared_text(tmp_path / "gallery.md", "# g\n")
    write_scored(tmp_path / "scored.json", {"pass_at_1": 1.0})
    case = save_case(make_case(), tmp_path / "cases")
    for path in (tmp_path / "gallery.md", tmp_path / "scored.json", case):
        assert _mode(path) == 0o666 & ~umask, (path, oct(_mode(path)))


def test_private_files_stay_private(tmp_path: Path, umask: int) -> None:
    atomic_write_text(tmp_path / "cache.json", "{}")
    assert _mode(tmp_path / "cache.json") == 0o600
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert store.path.exists()
    assert _mode(tmp_path / "runs.sqlite") == 0o600
