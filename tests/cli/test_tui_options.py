"""`cruxtui [flags]` with no subcommand: the flags become the TUI's typed options."""

from __future__ import annotations

from cruxtui.cli.main import build_parser, tui_options
from cruxtui.tui.state import TuiOptions


def test_every_tui_flag_reaches_the_options() -> None:
    args = build_parser().parse_args(
        [
            "--store",
            "runs.sqlite",
            "--endpoint",
            "local",
            "--model",
            "qwen",
            "--generations",
            "gen.json",
            "--task",
            "input",
            "--cases",
            "gallery",
            "--no-step-counts",
            "--demo",
            "--theme",
            "presentation",
        ]
    )
    assert tui_options(args) == TuiOptions(
        store="runs.sqlite",
        endpoint="local",
        model="qwen",
        generations="gen.json",
        task="input",
        cases="gallery",
        step_counts=False,
        demo=True,
        theme="presentation",
    )


def test_defaults_count_steps_at_start_up() -> None:
    """The command line counts numsteps in the background unless told not to; an app built
    without one (tests, embedding) does not."""
    assert tui_options(build_parser().parse_args([])) == TuiOptions(step_counts=True)
    assert TuiOptions().step_counts is False
