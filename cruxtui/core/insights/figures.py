"""Figures of a slice for a paper or a talk: SVG or PNG, 16:9, fonts readable from the back row.

Three pictures, chosen by what was sliced:
- per-group pass@1 with its 95% interval (a dot per group, the overall pass@1 as a line);
- against a second run: both runs per group, and the paired difference with its interval;
- by numsteps: pass@1 against the number of steps, on a log axis (the paper's "failures on
  simple programs" question), one curve per run.

matplotlib is an optional extra (`pip install 'cruxtui[plots]'`) and is imported only here, only
when a figure is drawn. Figures are built on the Agg canvas directly, never through pyplot, so
drawing keeps no global state and works from any thread (the TUI's workers, tests in parallel).
"""

from __future__ import annotations

import io
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from cruxtui.core.insights.dimensions import base_id
from cruxtui.core.insights.results import InsightsError
from cruxtui.core.insights.slices import Group, Slice
from cruxtui.core.util.atomic import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FORMATS = ("svg", "png")
INSTALL_HINT = "figures need matplotlib: pip install 'cruxtui[plots]'"
MAX_GROUPS = 18
"""More rows than this do not fit a slide; the largest groups are kept (the title says so)."""

SIZE = (12.8, 7.2)
"""Inches: 16:9; PNGs are written at 150 dpi (1920 x 1080)."""
PNG_DPI = 150
BLUE, ORANGE, GREEN, RED, GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#666666"
"""Okabe-Ito colours: told apart with every common colour-vision deficiency."""

_STYLE = {
    "font.size": 16,
    "axes.titlesize": 20,
    "axes.labelsize": 17,
    "xtick.labelsize": 14,
    "ytick.labelsize": 14,
    "legend.fontsize": 14,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "cruxtui",  # the same figure gives the same SVG (screens/ stays diffable)
    "svg.fonttype": "path",  # text drawn as shapes: looks the same on machines without the font
}


_STEP_TICKS = (10, 25, 50, 100, 200, 400, 800, 1600, 3200)


class PlotsUnavailable(InsightsError):
    """matplotlib is not installed; the message says how to install it."""


def figure_format(path: str | Path) -> str:
    """`svg` or `png` from the file name; `InsightsError` for anything else."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise InsightsError(
            f"{path}: a figure is written as .svg or .png (not {suffix or 'no suffix'!r})"
        )
    return suffix


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_figure(
    slice_: Slice,
    groups: Sequence[Group],
    path: str | Path,
    numsteps: Mapping[str, int] | None = None,
) -> Path:
    """Draw the figure that fits `slice_` and write it to `path` (.svg or .png).

    `numsteps` (step counts by sample id) places the numsteps buckets on a real step axis.
    """
    fmt = figure_format(path)
    fig = build_figure(slice_, groups, numsteps)
    out = Path(path)
    metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {"Software": None}
    buffer = io.BytesIO()
    import matplotlib

    with matplotlib.rc_context(cast(Any, _STYLE)):  # the SVG ids are salted when saving
        fig.savefig(buffer, format=fmt, dpi=PNG_DPI, metadata=metadata)
    try:
        atomic_write_bytes(out, buffer.getvalue())  # an interrupted write leaves no half figure
    except OSError as exc:
        raise InsightsError(f"cannot write {out}: {exc.strerror or exc}") from None
    return out


def build_figure(
    slice_: Slice, groups: Sequence[Group], numsteps: Mapping[str, int] | None = None
) -> Figure:
    """The matplotlib figure for `slice_` (see the module docstring for which one)."""
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotsUnavailable(INSTALL_HINT) from None
    if not groups:
        raise InsightsError("no group to draw (lower --min-samples?)")
    with matplotlib.rc_context(cast(Any, _STYLE)):
        fig = Figure(figsize=SIZE, layout="constrained")
        FigureCanvasAgg(fig)
        if slice_.by == "numsteps":
            _numsteps(fig, slice_, groups, numsteps)
        elif slice_.against is not None:
            _against(fig, slice_, _largest(groups))
        else:
            _groups(fig, slice_, _largest(groups))
    return fig


def _largest(groups: Sequence[Group]) -> list[Group]:
    if len(groups) <= MAX_GROUPS:
        return list(groups)
    keep = {g.name for g in sorted(groups, key=lambda g: -g.samples)[:MAX_GROUPS]}
    return [g for g in groups if g.name in keep]


def _title(slice_: Slice, shown: int, total: int) -> str:
    title = f"pass@1 by {slice_.by}"
    if shown < total:
        title += f" ({shown} largest of {total} groups)"
    return title


def _subtitle(slice_: Slice) -> str:
    text = f"{slice_.label} · {slice_.task} task · {slice_.total.samples} samples"
    if slice_.against is not None:
        text = f"{slice_.label} against {slice_.against} · {slice_.total.samples} shared samples"
    return text + " · 95% bootstrap intervals"


def _titles(fig: Figure, ax: Axes, title: str, slice_: Slice) -> None:
    """The title says what is drawn; the line under it says of what (run, task, samples)."""
    fig.suptitle(title, x=0.01, ha="left", fontsize=22)
    ax.set_title(_subtitle(slice_), loc="left", fontsize=13, color=GREY)


def _row_labels(groups: Sequence[Group]) -> list[str]:
    return [f"{g.name}  (n={g.samples})" for g in groups]


def _groups(fig: Figure, slice_: Slice, groups: list[Group]) -> None:
    ax = fig.add_subplot()
    ys = list(range(len(groups)))[::-1]  # first group on top
    _dots(ax, groups, ys, [(g.pass_at_1, g.interval) for g in groups], BLUE, None)
    ax.axvline(
        slice_.total.pass_at_1,
        color=GREY,
        linestyle="--",
        linewidth=1.5,
        label=f"all samples: {slice_.total.pass_at_1:.1f}",
    )
    _group_axis(ax, groups, ys)
    ax.set_xlabel("pass@1 (%)")
    ax.legend(loc="lower right", frameon=False)
    _titles(fig, ax, _title(slice_, len(groups), len(slice_.groups)), slice_)


def _against(fig: Figure, slice_: Slice, groups: list[Group]) -> None:
    left, right = fig.subplots(1, 2, sharey=True, width_ratios=(3, 2))
    ys = list(range(len(groups)))[::-1]
    this = [(g.pass_at_1, g.interval) for g in groups]
    other = [(g.paired.pass_at_1, g.paired.interval) for g in groups if g.paired]
    _dots(left, groups, [y + 0.17 for y in ys], this, BLUE, "A: " + _short(slice_.label))
    _dots(left, groups, [y - 0.17 for y in ys], other, ORANGE, "B: " + _short(slice_.against or ""))
    _group_axis(left, groups, ys)
    left.set_xlabel("pass@1 (%)")
    left.legend(loc="lower right", frameon=False)
    _titles(fig, left, _title(slice_, len(groups), len(slice_.groups)), slice_)

    for g, y in zip(groups, ys, strict=True):
        if g.paired is None:
            continue
        lo, hi = g.paired.delta_interval
        color = {1: GREEN, -1: RED}.get(g.direction, GREY)
        right.plot([lo, hi], [y, y], color=color, linewidth=3, solid_capstyle="round")
        right.plot([g.paired.delta], [y], "o", color=color, markersize=9)
    right.axvline(0, color="black", linewidth=1)
    right.set_xlabel("A − B (points)")
    right.grid(axis="x", color="#dddddd", linewidth=1)
    right.set_axisbelow(True)
    right.tick_params(axis="y", left=False)


def _numsteps(
    fig: Figure, slice_: Slice, groups: Sequence[Group], numsteps: Mapping[str, int] | None
) -> None:
    ax = fig.add_subplot()
    buckets = [g for g in groups if not g.name.startswith("(")]
    if not buckets:
        raise InsightsError("no numsteps bucket to draw")
    xs = [_steps_position(g, i, numsteps) for i, g in enumerate(buckets)]
    series = [(_short(slice_.label), BLUE, [(g.pass_at_1, g.interval) for g in buckets])]
    if slice_.against is not None:
        series.append(
            (
                _short(slice_.against),
                ORANGE,
                [(g.paired.pass_at_1, g.paired.interval) for g in buckets if g.paired],
            )
        )
    for label, color, points in series:
        ax.fill_between(
            xs, [lo for _, (lo, _) in points], [hi for _, (_, hi) in points], color=color, alpha=0.2
        )
        ax.plot(xs, [p for p, _ in points], "o-", color=color, linewidth=2.5, markersize=8)
        ax.plot([], [], "o-", color=color, label=label)
    if numsteps is not None:
        ax.set_xscale("log")
        ticks = [t for t in _STEP_TICKS if min(xs) / 1.3 <= t <= max(xs) * 1.3]
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.set_xticks([], minor=True)
        ax.set_xlabel("numsteps (median of each bucket, log scale)")
    else:
        ax.set_xticks(xs, [g.name for g in buckets])
        ax.set_xlabel("numsteps bucket")
    for x, g in zip(xs, buckets, strict=True):
        ax.annotate(
            f"n={g.samples}",
            (x, 0),
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            fontsize=11,
            color=GREY,
        )
    ax.set_ylim(0, 100)
    ax.set_ylabel("pass@1 (%)")
    ax.legend(loc="upper right", frameon=False)
    _titles(fig, ax, "pass@1 against the number of execution steps", slice_)


def _steps_position(group: Group, index: int, numsteps: Mapping[str, int] | None) -> float:
    if numsteps is None:
        return float(index)
    steps = [numsteps.get(s, numsteps.get(base_id(s), 0)) for s in group.sample_ids]
    return float(statistics.median(steps)) if steps else float(index)


def _dots(
    ax: Axes,
    groups: Sequence[Group],
    ys: Sequence[float],
    points: Sequence[tuple[float, tuple[float, float]]],
    color: str,
    label: str | None,
) -> None:
    xs = [p for p, _ in points]
    errors = [[p - lo for p, (lo, _) in points], [hi - p for p, (_, hi) in points]]
    ax.errorbar(
        xs,
        ys[: len(xs)],
        xerr=errors,
        fmt="o",
        color=color,
        ecolor=color,
        elinewidth=2.5,
        capsize=0,
        markersize=9,
        label=label,
    )


def _group_axis(ax: Axes, groups: Sequence[Group], ys: Sequence[float]) -> None:
    ax.set_yticks(list(ys), _row_labels(groups))
    ax.set_xlim(0, 100)
    ax.set_ylim(-0.7, len(groups) - 0.3)
    ax.grid(axis="x", color="#dddddd", linewidth=1)
    ax.set_axisbelow(True)


def _short(label: str, limit: int = 40) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"
