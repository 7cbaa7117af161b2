"""The Sample screen's list of a scored set's generations: each with its verdict and reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

if TYPE_CHECKING:
    from cruxtui.core.scoring.scored_file import ScoredSet

_STYLES = {"pass": "bold green", "wrong": "bold red"}
_PREDICTION_CHARS = 160


class VerdictList(Static):
    """`n ✓ kind  prediction`, then the reason (and the official check's verdict where it differs)."""

    def show(self, scored: ScoredSet | None, sample_id: str) -> None:
        self.update(render_verdicts(scored, sample_id))
        self.display = bool(scored and scored.verdicts.get(sample_id))


def render_verdicts(scored: ScoredSet | None, sample_id: str) -> Text:
    text = Text()
    if scored is None or not scored.verdicts.get(sample_id):
        return text
    verdicts = scored.verdicts[sample_id]
    predictions = scored.generations[sample_id]
    passed = sum(v.passed for v in verdicts)
    text.append(f"{passed}/{len(verdicts)} pass · {scored.task} task\n", style="dim")
    for index, (prediction, verdict) in enumerate(zip(predictions, verdicts, strict=True), start=1):
        mark = "✓" if verdict.passed else "✗"
        text.append(f"{index:>2} {mark} ", style=_STYLES.get(verdict.kind, "bold yellow"))
        text.append(f"{verdict.kind:<8}", style=_STYLES.get(verdict.kind, "bold yellow"))
        shown = (
            prediction
            if len(prediction) <= _PREDICTION_CHARS
            else prediction[:_PREDICTION_CHARS] + "…"
        )
        text.append(" ".join(shown.split()) + "\n")
        if not verdict.passed:
            text.append(f"     {verdict.reason}\n", style="dim")
        if verdict.disagrees:
            official = "pass" if verdict.official else "fail"
            text.append(
                f"     the benchmark's spliced check says {official}\n", style="italic yellow"
            )
    return text
