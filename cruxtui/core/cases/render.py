"""A case as Rich renderables: what `cruxtui cases show` prints and the Cases screen displays.

One rendering for both keeps the terminal and the TUI telling the same story: code, truth,
answers with verdicts, the reasoning with its first divergence marked, tags and note.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from cruxtui.core.cases.case_file import FailureCase
from cruxtui.core.cases.gallery import (
    Divergence,
    answer_counts,
    model_line,
    shown_generation,
    split_at_claim,
    truth_line,
)


def case_header(case: FailureCase) -> Text:
    text = Text()
    text.append(case.name, style="bold")
    text.append("\n")
    rows = [
        (
            "sample",
            f"{case.sample_id} · task {case.task} · mode {case.mode} "
            f"(template {case.template_version})",
        ),
        ("model", model_line(case)),
        ("failed", f"{case.failures} of {len(case.generations)} response(s)"),
        ("tags", ", ".join(case.tags) or "(none)"),
        (
            "saved",
            f"{case.created} · cruxtui {case.cruxtui_version} · Python {case.python_version}",
        ),
    ]
    if case.origin:
        rows.append(("from", case.origin))
    if case.perturbations:
        chain = " → ".join(
            str(p.get("name", "?")) + (f":{p['params']}" if p.get("params") else "")
            for p in case.perturbations
        )
        rows.append(("variant", f"of {case.base_sample_id}: {chain}"))
    if case.trace is not None:
        t = case.trace
        end = f"returns {t.return_repr}" if t.exception is None else f"raises {t.exception}"
        rows.append(("execution", f"{t.steps} steps, {end}"))
    for name, value in rows:
        text.append(f"{name:<10}", style="dim")
        text.append(f"{value}\n")
    if case.note:
        text.append("note      ", style="dim")
        text.append(case.note + "\n", style="italic")
    return text


def answers_table(case: FailureCase) -> Table:
    table = Table(show_edge=False, expand=False)
    table.add_column("answer", overflow="fold")
    table.add_column("n", justify="right")
    table.add_column("verdict", overflow="fold")
    for answer, count, passed, verdict in answer_counts(case):
        table.add_row(
            answer or "(none extracted)",
            str(count),
            Text(verdict, style="green" if passed else "red"),
        )
    return table


def reasoning_text(case: FailureCase) -> Text:
    gi = shown_generation(case)
    if gi is None:
        return Text("(no responses recorded)", style="dim")
    raw = case.generations[gi].chain
    div = Divergence.of(case.first_divergence)
    parts = split_at_claim(raw, div.claim) if div else None
    text = Text()
    if parts:
        text.append(parts[0])
        text.append(parts[1], style="bold reverse red")
        text.append(parts[2])
    else:
        text.append(raw or "(empty)")
    if div:
        text.append("\n\n" + div.sentence(), style="bold red")
    return text


def render_case(case: FailureCase) -> RenderableType:
    div = Divergence.of(case.first_divergence)
    code = Syntax(
        case.code,
        "python",
        line_numbers=True,
        word_wrap=True,
        highlight_lines={div.line} if div and div.line else None,
    )
    gi = shown_generation(case)
    title = f"Reasoning (response {gi + 1})" if gi is not None else "Reasoning"
    return Group(
        case_header(case),
        code,
        Text(f"\nTruth  {truth_line(case)}\n", style="bold green"),
        answers_table(case),
        Text(f"\n{title}", style="bold"),
        reasoning_text(case),
    )
