"""`cruxtui stats` as a real process, on the released Code Llama generations imported as runs.

Expected numbers come from the raw files (benchmark rows, the benchmark's own verdicts in
scored.json) with plain Python; the runs are made with `cruxtui runs --import`, as a user would.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CODELLAMA_OUTPUT, CRUXEVAL_JSONL, REPO

from cruxtui.core.runs.store import Generation, RunConfig, RunStore

KEYS = {"by", "group", "total", "samples", "predictions", "pass_at_1", "interval"}
AGAINST_KEYS = {
    "predictions_against",
    "pass_at_1_against",
    "interval_against",
    "delta",
    "delta_interval",
    "contingency",
}


class Env:
    """Paths shared by the tests of this module: the store with both runs, and their ids."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = root / "runs.sqlite"
        self.env = os.environ | {
            "CRUXTUI_OFFLINE": "1",
            "CRUXTUI_CACHE_DIR": str(root / "cache"),
            "CRUXTUI_DATA_DIR": str(root / "data"),
            "CRUXTUI_CONFIG_DIR": str(root / "config"),
        }
        self.run_a = ""
        self.run_b = ""

    def cli(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cruxtui", "--dataset", str(CRUXEVAL_JSONL), *args],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            cwd=self.root,
            env=env or self.env,
        )

    def stats(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.cli("stats", "--store", str(self.store), *args)


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, str]]:
    if not CRUXEVAL_JSONL.exists() or not (CODELLAMA_OUTPUT / "scored.json").exists():
        pytest.skip(f"benchmark data not found at {CRUXEVAL_JSONL.parent}")
    out = {}
    for line in CRUXEVAL_JSONL.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["id"]] = row
    return out


@pytest.fixture(scope="module")
def official_verdicts(rows: dict[str, dict[str, str]]) -> dict[str, list[bool]]:
    scored = json.loads((CODELLAMA_OUTPUT / "scored.json").read_text(encoding="utf-8"))
    return scored["raw_scored_generations"]


def better_generations(rows: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """Code Llama's generations, with the truth written into some and nonsense into others."""
    generations = json.loads((CODELLAMA_OUTPUT / "generations.json").read_text(encoding="utf-8"))
    out = {}
    for i, sid in enumerate(sorted(generations)):
        predictions = list(generations[sid])
        if i % 3 == 0:
            predictions[:6] = [rows[sid]["output"]] * 6
        if i % 7 == 0:
            predictions = ["None"] * len(predictions)
        out[sid] = predictions
    return out


def truth_of(
    rows: dict[str, dict[str, str]], generations: dict[str, list[str]]
) -> dict[str, list[bool]]:
    """Which predictions of `better_generations` pass, known by construction for the edits: the
    truth passes, `None` fails (no benchmark output is None), the rest keep the benchmark's
    verdict."""
    scored = json.loads((CODELLAMA_OUTPUT / "scored.json").read_text(encoding="utf-8"))
    original = json.loads((CODELLAMA_OUTPUT / "generations.json").read_text(encoding="utf-8"))
    out = {}
    for sid, predictions in generations.items():
        assert rows[sid]["output"] != "None"
        marks = []
        for i, p in enumerate(predictions):
            if p == original[sid][i]:
                marks.append(scored["raw_scored_generations"][sid][i])
            else:
                marks.append(p == rows[sid]["output"])
        out[sid] = marks
    return out


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, rows: dict[str, dict[str, str]]) -> Iterator[Env]:
    e = Env(tmp_path_factory.mktemp("stats"))
    better = e.root / "better" / "generations.json"
    better.parent.mkdir()
    better.write_text(json.dumps(better_generations(rows)), encoding="utf-8")
    for attr, path, name in (
        ("run_a", CODELLAMA_OUTPUT / "generations.json", "codellama-7b"),
        ("run_b", better, "better"),
    ):
        proc = e.cli("runs", "--store", str(e.store), "--import", str(path), "--name", name)
        assert proc.returncode == 0, proc.stderr
        setattr(e, attr, proc.stdout.split(" as run ")[1].split()[0])
    yield e


def json_rows(proc: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def output_type(row: dict[str, str]) -> str:
    try:
        return type(ast.literal_eval(row["output"])).__name__
    except ValueError:
        return "expr"


def lines_of(row: dict[str, str]) -> str:
    return str(len(row["code"].strip("\n").split("\n")))


def test_by_type_json_matches_the_benchmark_verdicts(
    env: Env, rows: dict[str, dict[str, str]], official_verdicts: dict[str, list[bool]]
) -> None:
    got = json_rows(env.stats(env.run_a, "--by", "type", "--json"))
    groups: dict[str, list[str]] = defaultdict(list)
    for sid, row in rows.items():
        groups[output_type(row)].append(sid)
    assert [r["group"] for r in got[:-1]] == sorted(groups, key=lambda g: -len(groups[g]))
    for row in got:
        assert set(row) == KEYS
        assert row["by"] == "type"
        ids = list(rows) if row["total"] else groups[str(row["group"])]
        assert row["samples"] == len(ids)
        assert row["predictions"] == sum(len(official_verdicts[s]) for s in ids)
        want = 100 * statistics.fmean(
            sum(official_verdicts[s]) / len(official_verdicts[s]) for s in ids
        )
        assert row["pass_at_1"] == pytest.approx(want, abs=1e-9)
        lo, hi = row["interval"]  # type: ignore[misc]
        assert lo <= row["pass_at_1"] <= hi
    assert got[-1]["group"] == "(all)" and got[-1]["total"] is True
    assert got[-1]["pass_at_1"] == pytest.approx(34.2125)


def test_against_gives_per_group_deltas_and_the_contingency(
    env: Env, rows: dict[str, dict[str, str]]
) -> None:
    a = json.loads((CODELLAMA_OUTPUT / "scored.json").read_text())["raw_scored_generations"]
    b = truth_of(rows, better_generations(rows))
    got = json_rows(env.stats(env.run_b, "--against", env.run_a, "--by", "lines", "--json"))
    groups: dict[str, list[str]] = defaultdict(list)
    for sid, row in rows.items():
        groups[lines_of(row)].append(sid)
    assert [r["group"] for r in got[:-1]] == sorted(groups, key=int)

    def rate(marks: list[bool]) -> float:
        return sum(marks) / len(marks)

    for row in got:
        assert set(row) == KEYS | AGAINST_KEYS
        ids = list(rows) if row["total"] else groups[str(row["group"])]
        delta = 100 * statistics.fmean(rate(b[s]) - rate(a[s]) for s in ids)
        assert row["delta"] == pytest.approx(delta, abs=1e-9)
        assert row["pass_at_1"] == pytest.approx(100 * statistics.fmean(rate(b[s]) for s in ids))
        assert row["pass_at_1_against"] == pytest.approx(
            100 * statistics.fmean(rate(a[s]) for s in ids)
        )
        lo, hi = row["delta_interval"]  # type: ignore[misc]
        assert lo <= row["delta"] <= hi
        table = {
            "both": sum(rate(b[s]) >= 0.5 and rate(a[s]) >= 0.5 for s in ids),
            "a_only": sum(rate(b[s]) >= 0.5 > rate(a[s]) for s in ids),
            "b_only": sum(rate(a[s]) >= 0.5 > rate(b[s]) for s in ids),
            "neither": sum(rate(b[s]) < 0.5 and rate(a[s]) < 0.5 for s in ids),
        }
        assert row["contingency"] == table
    total = got[-1]
    assert total["contingency"]["a_only"] > 100  # type: ignore[index]  # what the edits fixed

    text = env.stats(env.run_b, "--against", env.run_a, "--by", "lines")
    assert text.returncode == 0, text.stderr
    counts = total["contingency"]
    assert f"A passes {counts['both']:>10} {counts['a_only']:>9}".split() == next(  # type: ignore[index]
        line.split() for line in text.stdout.splitlines() if line.strip().startswith("A passes")
    )
    assert "A only (" in text.stdout and "B only (" in text.stdout


def test_generations_file_writes_csv_markdown_and_a_figure(
    env: Env,
    rows: dict[str, dict[str, str]],
    official_verdicts: dict[str, list[bool]],
    tmp_path: Path,
) -> None:
    out_csv, out_md, out_svg = tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "t.svg"
    proc = env.cli(
        "stats",
        "--generations",
        str(CODELLAMA_OUTPUT / "generations.json"),
        "--task",
        "output",
        "--by",
        "method",
        "--min-samples",
        "20",
        "--csv",
        str(out_csv),
        "--markdown",
        str(out_md),
        "--plot",
        str(out_svg),
    )
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out_svg}" in proc.stdout
    table = list(csv.DictReader(out_csv.open(encoding="utf-8")))
    join_ids = [
        sid
        for sid, row in rows.items()
        if any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "join"
            for n in ast.walk(ast.parse(row["code"]))
        )
    ]
    join = next(r for r in table if r["group"] == "join")
    assert int(join["samples"]) == len(join_ids) == 131
    want = 100 * statistics.fmean(sum(official_verdicts[s]) / 10 for s in join_ids)
    assert float(join["pass_at_1"]) == pytest.approx(want, abs=1e-4)
    assert all(int(r["samples"]) >= 20 for r in table[:-1])
    assert table[-1]["group"] == "(all)" and table[-1]["samples"] == "800"
    assert "| join | 131 | 1310 |" in out_md.read_text(encoding="utf-8")
    assert out_svg.read_text(encoding="utf-8").startswith("<?xml")


def test_numsteps_counts_steps_once_and_draws_the_curve(env: Env, tmp_path: Path) -> None:
    png = tmp_path / "steps.png"
    got = json_rows(
        env.stats(
            env.run_b, "--against", env.run_a, "--by", "numsteps", "--json", "--plot", str(png)
        )
    )
    names = [r["group"] for r in got[:-1]]
    assert names == ["<30", "30-39", "40-49", "50-69", "70-99", "100-149", "150-249", ">=250"]
    assert sum(int(r["samples"]) for r in got[:-1]) == 800  # type: ignore[call-overload]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list((env.root / "cache").glob("numsteps-*.json"))  # counted once, cached


def test_pooled_runs_slice_by_mode(env: Env, tmp_path: Path) -> None:
    store_path = tmp_path / "modes.sqlite"
    ids = []
    with RunStore(store_path) as store:
        for mode, passing in (("direct", 1), ("cot", 3)):
            info = store.open_run(
                RunConfig(
                    spec={"backend": "replay", "model": "m"},
                    task="output",
                    mode=mode,
                    style="chat",
                    params={"n": 4},
                    template_version="t",
                    dataset_digest="elsewhere",
                )
            )
            store.add_generations(
                info.id,
                [
                    Generation(f"sample_{s}", i, "x", "x", "pass", i < passing, "")
                    for s in range(10)
                    for i in range(4)
                ],
            )
            ids.append(info.id)
    proc = env.cli("stats", "--store", str(store_path), *ids, "--by", "mode", "--json")
    got = {r["group"]: r for r in json_rows(proc)}
    assert got["direct"]["pass_at_1"] == pytest.approx(25.0)
    assert got["cot"]["pass_at_1"] == pytest.approx(75.0)
    assert got["(all)"]["samples"] == 20
    text = env.cli("stats", "--store", str(store_path), ids[1], "--by", "mode")
    assert "made on another dataset" in text.stderr  # the digest says so; still sliced
    assert text.returncode == 0


def test_by_tag_reads_the_gallery(env: Env) -> None:
    gallery = REPO / "cases"
    tags: dict[str, set[str]] = defaultdict(set)
    for path in gallery.glob("*.json"):
        case = json.loads(path.read_text(encoding="utf-8"))
        base = case.get("base_sample_id") or case["sample_id"].split("~")[0]
        for tag in case["tags"]:
            tags[tag].add(base)
    assert tags
    got = {
        r["group"]: r
        for r in json_rows(env.stats(env.run_a, "--by", "tag", "--cases", str(gallery), "--json"))
    }
    assert set(got) == set(tags) | {"(untagged)", "(all)"}
    for tag, samples in tags.items():
        assert got[tag]["samples"] == len(samples)
    tagged = set().union(*tags.values())
    assert got["(untagged)"]["samples"] == 800 - len(tagged)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a RUN id"),
        (("RUN_A", "--generations", "x.json", "--task", "output"), "not both"),
        (("--generations", "x.json"), "needs --task"),
        (("RUN_A", "RUN_B", "--against", "RUN_A"), "a single RUN"),
        (("RUN_A", "--plot", "fig.pdf"), "fig.pdf: a figure is written as .svg or .png"),
        (("nosuchrun",), "no run 'nosuchrun'"),
        (("--generations", "missing.json", "--task", "output"), "missing.json: file not found"),
        (("RUN_A", "--min-samples", "0"), "--min-samples must be at least 1"),
    ],
)
def test_bad_input_is_one_error_line(env: Env, args: tuple[str, ...], message: str) -> None:
    real = [env.run_a if a == "RUN_A" else env.run_b if a == "RUN_B" else a for a in args]
    proc = env.stats(*real, "--by", "type")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("cruxtui: error: ")
    assert message in lines[0]
    assert proc.stdout == ""


def test_without_matplotlib_the_cli_says_how_to_install(env: Env, tmp_path: Path) -> None:
    fake = tmp_path / "nomatplotlib" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    no_plots = env.env | {"PYTHONPATH": str(fake.parent)}
    proc = env.cli(
        "stats",
        "--store",
        str(env.store),
        env.run_a,
        "--by",
        "type",
        "--plot",
        "f.svg",
        env=no_plots,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == "cruxtui: error: figures need matplotlib: pip install 'cruxtui[plots]'"
    )
    ok = env.cli("stats", "--store", str(env.store), env.run_a, "--by", "type", env=no_plots)
    assert ok.returncode == 0, ok.stderr  # everything else works without it
