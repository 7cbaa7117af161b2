"""`cruxtui cases list` reads well in an 80-column terminal and lists cases in natural order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from cruxtui.core.cases.case_file import case_files
from cruxtui.core.util.natural import natural_key


def _list(width: int, cases_dir: Path) -> list[str]:
    env = {**os.environ, "COLUMNS": str(width), "CRUXTUI_CASES_DIR": str(cases_dir)}
    proc = subprocess.run(
        [sys.executable, "-m", "cruxtui", "cases", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("width", [80, 160])
def test_every_line_fits_and_each_case_takes_at_most_two(width: int) -> None:
    gallery = REPO / "cases"
    n = len(list(gallery.glob("*.json")))
    lines = _list(width, gallery)
    assert n >= 2 and lines[0] == f"{n} case(s)"
    assert all(len(line) <= width for line in lines), [ln for ln in lines if len(ln) > width]
    assert len(lines) <= 2 + 2 * n
    names = [ln.split()[0] for ln in lines[2:] if ln.startswith("sample_")]
    assert len(names) == n


def test_case_files_come_in_natural_order(tmp_path: Path) -> None:
    for name in (
        "sample_12--m--a.json",
        "sample_2--m--b.json",
        "sample_100--m--c.json",
        ".tmp.json",
    ):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in case_files(tmp_path)] == [
        "sample_2--m--b.json",
        "sample_12--m--a.json",
        "sample_100--m--c.json",
    ]


def test_natural_key_orders_numbers_as_numbers() -> None:
    ids = ["sample_10", "sample_9", "sample_12~anon", "sample_12", "starter_1", "sample_100"]
    assert sorted(ids, key=natural_key) == [
        "sample_9",
        "sample_10",
        "sample_12",
        "sample_12~anon",
        "sample_100",
        "starter_1",
    ]
