"""`cruxtui samples` run as a real process: JSON lines, --grep, --method, and bad dataset paths.

Each test starts `python -m cruxtui` (the same code as the `cruxtui` console script); the
isolated user dirs and CRUXTUI_OFFLINE=1 from conftest reach the child through the environment.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CRUXEVAL_JSONL


def cruxtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cruxtui", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def benchmark(shared_data: Path) -> list[dict[str, str]]:
    with CRUXEVAL_JSONL.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def ids_calling(rows: list[dict[str, str]], name: str) -> list[str]:
    """Ids of samples whose code calls `.name(...)`, found with `ast` (independent of cruxtui)."""
    return [
        r["id"]
        for r in rows
        if any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
            for n in ast.walk(ast.parse(r["code"]))
        )
    ]


def test_method_rfind_json_lists_the_rfind_samples(benchmark: list[dict[str, str]]) -> None:
    proc = cruxtui("samples", "--method", "rfind", "--json", "--dataset", str(CRUXEVAL_JSONL))
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    expected = ids_calling(benchmark, "rfind")
    assert len(expected) > 5
    assert [r["id"] for r in rows] == expected
    by_id = {r["id"]: r for r in benchmark}
    for row in rows:
        assert {k: row[k] for k in ("id", "code", "input", "output")} == by_id[row["id"]]
        assert "rfind" in row["methods"]
        assert row["lines"] == row["code"].count("\n") + 1
        assert isinstance(row["output_type"], str)
    assert proc.stderr == ""  # an explicit dataset needs no notice


def test_grep_plain_output(benchmark: list[dict[str, str]]) -> None:
    proc = cruxtui("samples", "--grep", "removeprefix", "--dataset", str(CRUXEVAL_JSONL))
    assert proc.returncode == 0, proc.stderr
    ids = [line.split("\t")[0] for line in proc.stdout.splitlines()]
    expected = [
        r["id"]
        for r in benchmark
        if any("removeprefix" in r[k].lower() for k in ("code", "input", "output"))
    ]
    assert ids == expected
    assert all(len(line.split("\t")) == 4 for line in proc.stdout.splitlines())


def test_grep_tolerates_a_typo(benchmark: list[dict[str, str]]) -> None:
    proc = cruxtui("samples", "--grep", "rfnid", "--json", "--dataset", str(CRUXEVAL_JSONL))
    assert proc.returncode == 0, proc.stderr
    found = [json.loads(line)["id"] for line in proc.stdout.splitlines()]
    assert set(ids_calling(benchmark, "rfind")) <= set(found)


def test_grep_and_method_combine(benchmark: list[dict[str, str]]) -> None:
    proc = cruxtui(
        "samples",
        "--grep",
        "text",
        "--method",
        "rfind",
        "--method",
        "find",
        "--json",
        "--dataset",
        str(CRUXEVAL_JSONL),
    )
    assert proc.returncode == 0, proc.stderr
    both = set(ids_calling(benchmark, "rfind")) & set(ids_calling(benchmark, "find"))
    expected = [r["id"] for r in benchmark if r["id"] in both and "text" in r["code"].lower()]
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == expected


@pytest.mark.shared_data
def test_top_level_dataset_option_reaches_the_subcommand() -> None:
    proc = cruxtui("--dataset", str(CRUXEVAL_JSONL), "samples", "--method", "rfind")
    assert proc.returncode == 0, proc.stderr
    assert all(line.startswith("sample_") for line in proc.stdout.splitlines())


def test_without_dataset_opens_the_starter_set_with_a_notice() -> None:
    proc = cruxtui("samples", "--json")
    assert proc.returncode == 0, proc.stderr
    ids = [json.loads(line)["id"] for line in proc.stdout.splitlines()]
    assert len(ids) >= 30 and all(i.startswith("starter_") for i in ids)
    assert proc.stderr.startswith("note: ")
    assert "cruxtui download" in proc.stderr


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("cruxtui: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


def test_missing_dataset_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    assert_one_line_error(
        cruxtui("samples", "--dataset", str(missing)), str(missing), "file not found"
    )


def test_missing_dataset_path_given_before_the_subcommand(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    assert_one_line_error(
        cruxtui("--dataset", str(missing), "samples"), str(missing), "file not found"
    )


def test_malformed_dataset_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    good = {"code": "def f(x):\n    return x", "input": "1", "output": "1", "id": "a"}
    bad.write_text(json.dumps(good) + "\n" + json.dumps(good | {"id": "b", "code": "x = 1"}) + "\n")
    assert_one_line_error(
        cruxtui("samples", "--json", "--dataset", str(bad)),
        f"{bad}:2:",
        "does not define a function `f`",
    )


def test_directory_as_dataset(tmp_path: Path) -> None:
    assert_one_line_error(cruxtui("samples", "--dataset", str(tmp_path)), "is a directory")


def test_dataset_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "env.jsonl"
    monkeypatch.setenv("CRUXTUI_DATASET", str(missing))
    assert_one_line_error(cruxtui("samples"), str(missing), "file not found")


def test_console_script_reports_errors_the_same_way(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "cruxtui"
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    missing = tmp_path / "nope.jsonl"
    proc = subprocess.run(
        [str(script), "samples", "--dataset", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert_one_line_error(proc, str(missing), "file not found")
