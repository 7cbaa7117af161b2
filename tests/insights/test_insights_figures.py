"""Figures and tables of a slice: what each figure draws, the files written, the exports' rows."""

from __future__ import annotations

import csv
import io
import json
import struct
import sys
from pathlib import Path

import pytest

from cruxtui.core.data.dataset import Dataset, Sample, Source
from cruxtui.core.insights import figures, tables
from cruxtui.core.insights.dimensions import SampleFacts
from cruxtui.core.insights.results import InsightsError, from_counts
from cruxtui.core.insights.slices import Slice, slice_results

pytest.importorskip("matplotlib", reason="the [plots] extra (part of [dev]) is not installed")

CODES = {
    "s1": "def f(s):\n    return s.split()",
    "s2": "def f(s):\n    return s.upper()",
    "s3": "def f(s):\n    return ' '.join(s.split())",
    "s4": "def f(s):\n    x = s\n    return x",
}


def _slice(by: str = "method", against: bool = False) -> Slice:
    dataset = Dataset([Sample(s, c, "'a b'", "'x'") for s, c in CODES.items()], Source.PATH, "t")
    a = from_counts("run-a", "output", [("s1", 4, 1), ("s2", 4, 4), ("s3", 4, 2), ("s4", 4, 0)])
    b = from_counts("run-b", "output", [("s1", 4, 3), ("s2", 4, 4), ("s3", 4, 0), ("s4", 4, 1)])
    steps = {"s1": 20, "s2": 45, "s3": 120, "s4": 300}
    facts = SampleFacts(dataset, steps)
    return slice_results(a, by, facts, against=b if against else None)


def _labels(fig: object, index: int = 0) -> list[str]:
    ax = fig.axes[index]  # type: ignore[attr-defined]
    return [t.get_text() for t in ax.get_yticklabels()]


def test_per_group_figure_has_one_row_per_group_top_down() -> None:
    slice_ = _slice()
    fig = figures.build_figure(slice_, slice_.groups)
    assert _labels(fig) == [f"{g.name}  (n={g.samples})" for g in slice_.groups]
    ticks = list(fig.axes[0].get_yticks())
    assert ticks == sorted(ticks, reverse=True)  # the first group is drawn on top
    dots = fig.axes[0].lines[0]
    xs = list(dots.get_xdata())
    assert xs == pytest.approx([g.pass_at_1 for g in slice_.groups])
    assert fig.get_size_inches() == pytest.approx(figures.SIZE)


def test_against_figure_draws_both_runs_and_the_paired_difference() -> None:
    slice_ = _slice("type", against=True)
    fig = figures.build_figure(slice_, slice_.groups)
    left, right = fig.axes
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["A: run-a", "B: run-b"]
    group = slice_.groups[0]
    assert group.paired is not None
    drawn = [line.get_xdata()[0] for line in right.lines if len(line.get_xdata()) == 1]
    assert drawn == pytest.approx([group.paired.delta])


def test_numsteps_figure_places_buckets_at_their_median_step_count() -> None:
    slice_ = _slice("numsteps", against=True)
    fig = figures.build_figure(slice_, slice_.groups, {"s1": 20, "s2": 45, "s3": 120, "s4": 300})
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    curve = next(line for line in ax.lines if len(line.get_xdata()) == len(slice_.groups))
    assert list(curve.get_xdata()) == [20, 45, 120, 300]
    assert list(curve.get_ydata()) == pytest.approx([g.pass_at_1 for g in slice_.groups])


def test_many_groups_keep_the_largest_and_say_so() -> None:
    codes = {f"s{i}": f"def f(s):\n    return s.{m}()" for i, m in enumerate(sorted(dir(str)))}
    codes = {s: c for s, c in codes.items() if "__" not in c}
    dataset = Dataset([Sample(s, c, "'a'", "'a'") for s, c in codes.items()], Source.PATH, "t")
    counts = [(s, 2, i % 3) for i, s in enumerate(codes)] + [("s_big", 2, 1)]
    dataset.samples.append(Sample("s_big", "def f(s):\n    return s.upper().lower()", "'a'", "'a'"))
    dataset.__post_init__()
    slice_ = slice_results(from_counts("r", "output", counts), "method", SampleFacts(dataset))
    assert len(slice_.groups) > figures.MAX_GROUPS
    fig = figures.build_figure(slice_, slice_.groups)
    labels = _labels(fig)
    assert len(labels) == figures.MAX_GROUPS
    assert any(label.startswith("upper  (n=2)") for label in labels)
    assert "largest of" in fig._suptitle.get_text()  # noqa: SLF001 - the one place it is kept


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_written_files_are_svg_or_png_at_slide_size(tmp_path: Path) -> None:
    slice_ = _slice()
    png = figures.write_figure(slice_, slice_.groups, tmp_path / "f.png")
    assert _png_size(png.read_bytes()) == (1920, 1080)
    svg = figures.write_figure(slice_, slice_.groups, tmp_path / "f.svg")
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<?xml") and "<svg" in text
    again = figures.write_figure(slice_, slice_.groups, tmp_path / "g.svg")
    assert again.read_bytes() == svg.read_bytes()  # reproducible: screens/ diffs stay readable
    with pytest.raises(InsightsError, match=r"\.svg or \.png"):
        figures.write_figure(slice_, slice_.groups, tmp_path / "f.pdf")
    with pytest.raises(InsightsError, match="cannot write"):
        figures.write_figure(slice_, slice_.groups, tmp_path / "f.png" / "inside.png")
    assert not list(tmp_path.glob(".*"))  # no temp file left behind


def test_without_matplotlib_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    assert not figures.available()
    slice_ = _slice()
    with pytest.raises(figures.PlotsUnavailable, match=r"pip install 'cruxtui\[plots\]'"):
        figures.build_figure(slice_, slice_.groups)


def test_json_csv_and_markdown_carry_the_same_rows() -> None:
    slice_ = _slice("method", against=True)
    groups = slice_.sorted("pass")
    assert [g.pass_at_1 for g in groups] == sorted(g.pass_at_1 for g in groups)
    rows = [json.loads(line) for line in tables.json_lines(slice_, groups).splitlines()]
    assert [r["group"] for r in rows] == [g.name for g in groups] + ["(all)"]
    assert [r["total"] for r in rows] == [False] * len(groups) + [True]
    for row in rows:
        assert set(row) >= {"group", "samples", "predictions", "pass_at_1", "interval", "delta"}
        assert row["interval"][0] <= row["pass_at_1"] <= row["interval"][1]
        assert row["delta"] == pytest.approx(row["pass_at_1"] - row["pass_at_1_against"])
    parsed = list(csv.DictReader(io.StringIO(tables.csv_text(slice_, groups))))
    assert [r["group"] for r in parsed] == [r["group"] for r in rows]
    for got, want in zip(parsed, rows, strict=True):
        assert float(got["pass_at_1"]) == pytest.approx(want["pass_at_1"], abs=1e-4)
        assert float(got["delta_low"]) == pytest.approx(want["delta_interval"][0], abs=1e-4)
        assert int(got["a_only"]) == want["contingency"]["a_only"]
    md = tables.markdown(slice_, groups).splitlines()
    assert md[2].startswith("| group | samples |")
    assert len(md) == 4 + len(rows)
    assert md[-1].startswith("| (all) | 4 | 16 |")


def test_markdown_escapes_what_would_break_a_table() -> None:
    from cruxtui.core.insights.results import Outcome, Results

    dataset = Dataset([Sample("s1", CODES["s1"], "'a'", "'a'")], Source.PATH, "t")
    results = Results("a|b_*c", "output", (Outcome("s1", 1, 1, "x|y"),))
    slice_ = slice_results(results, "mode", SampleFacts(dataset))
    md = tables.markdown(slice_, slice_.groups)
    assert "| x\\|y |" in md
    assert "a\\|b\\_\\*c" in md
