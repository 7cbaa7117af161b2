"""A slice as JSON lines, CSV and Markdown: one row per group, then the `(all)` row.

One column list serves CSV and Markdown so a spreadsheet and a paper's table say the same thing;
JSON lines carry the same numbers unrounded (`Group.to_json`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from cruxtui.core.insights.slices import Group, Slice


def columns(slice_: Slice) -> list[str]:
    head = ["group", "samples", "predictions", "pass_at_1", "interval_low", "interval_high"]
    if slice_.against is None:
        return head
    return [
        *head,
        "pass_at_1_against",
        "interval_against_low",
        "interval_against_high",
        "delta",
        "delta_low",
        "delta_high",
        "both",
        "a_only",
        "b_only",
        "neither",
    ]


def cells(group: Group) -> list[object]:
    row: list[object] = [
        group.name,
        group.samples,
        group.predictions,
        group.pass_at_1,
        group.interval[0],
        group.interval[1],
    ]
    if group.paired is not None:
        p = group.paired
        table = p.contingency.to_json()
        row += [p.pass_at_1, *p.interval, p.delta, *p.delta_interval]
        row += [table["both"], table["a_only"], table["b_only"], table["neither"]]
    return row


def json_lines(slice_: Slice, groups: Sequence[Group]) -> str:
    """One object per group, then the total (`"total": true`)."""
    return "".join(json.dumps(g.to_json(slice_.by)) + "\n" for g in [*groups, slice_.total])


def csv_text(slice_: Slice, groups: Sequence[Group]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns(slice_))
    for group in [*groups, slice_.total]:
        writer.writerow([f"{c:.4f}" if isinstance(c, float) else c for c in cells(group)])
    return out.getvalue()


def markdown(slice_: Slice, groups: Sequence[Group]) -> str:
    """A Markdown table (pass@1 x100 with 95% bootstrap intervals), titled with what was sliced."""
    title = f"pass@1 by {slice_.by}: {slice_.label} ({slice_.task} task)"
    head = ["group", "samples", "predictions", "pass@1", "95% interval"]
    if slice_.against is not None:
        title += f", against {slice_.against} on the samples both ran"
        head += ["against", "delta", "delta 95% interval", "this only", "other only"]
    lines = [f"**{_md(title)}**", "", _md_row(head), _md_row(["---"] + ["---:"] * (len(head) - 1))]
    for group in [*groups, slice_.total]:
        row = [
            _md(group.name),
            str(group.samples),
            str(group.predictions),
            f"{group.pass_at_1:.1f}",
            f"[{group.interval[0]:.1f}, {group.interval[1]:.1f}]",
        ]
        if group.paired is not None:
            p = group.paired
            row += [
                f"{p.pass_at_1:.1f}",
                f"{p.delta:+.1f}",
                f"[{p.delta_interval[0]:+.1f}, {p.delta_interval[1]:+.1f}]",
                str(len(p.contingency.a_only)),
                str(len(p.contingency.b_only)),
            ]
        lines.append(_md_row(row))
    return "\n".join(lines) + "\n"


def _md_row(cells_: Sequence[str]) -> str:
    return "| " + " | ".join(cells_) + " |"


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell (a tag or label could hold `|` or `*`)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")
