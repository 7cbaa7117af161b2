"""User files are read bounded: FIFOs and devices refused without blocking, size capped, and
JSON that Python cannot hold (too deep, a 100,000-digit number) is one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from cruxtui.core.data.textfile import MAX_BYTES, UnreadableFile, read_text
from cruxtui.core.scoring.generations_file import GenerationsError, load_generations

ROW = {"id": "a", "code": "def f(x):\n    return x", "input": "1", "output": "1"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cruxtui", *args],
        capture_output=True, text=True, timeout=60, cwd=REPO, check=False,
    )  # fmt: skip


def _bad_files(tmp: Path) -> dict[str, Path]:
    fifo = tmp / "fifo.jsonl"
    os.mkfifo(fifo)
    sparse = tmp / "sparse.jsonl"
    with sparse.open("wb") as fh:
        fh.truncate(2 * 1024**3)  # 2 GB, no blocks
    deep = tmp / "deep.jsonl"
    deep.write_text(json.dumps(ROW)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    digits = tmp / "digits.jsonl"
    digits.write_text(json.dumps(ROW)[:-1] + ', "n": ' + "9" * 100_000 + "}\n")
    return {
        "fifo": fifo,
        "device": Path("/dev/zero"),
        "sparse": sparse,
        "deep": deep,
        "digits": digits,
    }


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero")
def test_every_bad_dataset_file_is_one_line(tmp_path: Path) -> None:
    expected = {
        "fifo": "is a FIFO",
        "device": "is a device",
        "sparse": "too large",
        "deep": "nested too deeply",
        "digits": "more digits than Python reads",
    }
    for name, path in _bad_files(tmp_path).items():
        done = _cli("--dataset", str(path), "samples")
        assert done.returncode == 2, (name, done.stderr[-2000:])
        assert "Traceback" not in done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cruxtui: error:"), lines
        assert expected[name] in lines[0], (name, lines[0])


def test_generations_files_are_bounded_too(tmp_path: Path) -> None:
    files = _bad_files(tmp_path)
    for name in ("fifo", "device", "sparse"):
        with pytest.raises(GenerationsError):
            load_generations(files[name])
    digits = tmp_path / "gen.json"
    digits.write_text('{"sample_0": [' + "9" * 100_000 + "]}")
    with pytest.raises(GenerationsError, match="more digits"):
        load_generations(digits)


def test_the_size_cap_is_checked_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(UnreadableFile, match="too large"):
        read_text(big, max_bytes=1024)
    assert read_text(big, max_bytes=4096) == "x" * 2048
    assert MAX_BYTES >= 64 * 1024 * 1024
