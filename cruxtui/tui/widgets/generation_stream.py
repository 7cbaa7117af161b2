"""Generations streaming in: one card per generation, text appended chunk by chunk, then its verdict.

The view follows new text only while the user is at the bottom: scrolling up to read an earlier
generation is not undone by the next chunk.
"""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from cruxtui.core.runs import Generation

_VERDICT_STYLE = {True: "bold green", False: "bold red"}


class GenerationCard(Static):
    """One generation: a title line, its text so far, and (when scored) its verdict."""

    def __init__(self, sample_id: str, index: int, prefix: str = "") -> None:
        super().__init__(classes="generation-card")
        self.sample_id = sample_id
        self.index = index
        self.parts: list[str] = [prefix] if prefix else []
        self.verdict: Text | None = None
        self.border_title = f"{sample_id} #{index}"

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def on_mount(self) -> None:
        self._render_card()

    def append(self, chunk: str) -> None:
        self.parts.append(chunk)
        self._render_card()

    def restart(self, prefix: str, reason: str) -> None:
        """The stream broke off and starts over: drop the partial text, say why."""
        self.parts = [prefix] if prefix else []
        self.border_subtitle = f"restarted: {reason}"[:60]
        self._render_card()

    def set_generation(self, gen: Generation) -> None:
        self.parts = [gen.raw]
        mark = "PASS" if gen.passed else gen.kind.upper()
        self.verdict = Text.assemble((f" {mark} ", _VERDICT_STYLE[gen.passed]), " ",
                                     (gen.reason or (gen.answer or ""), "dim"))
        self.border_subtitle = mark
        self.set_class(gen.passed, "-passed")
        self.set_class(not gen.passed, "-failed")
        self._render_card()

    def set_error(self, error: str) -> None:
        self.verdict = Text.assemble((" ERROR ", "bold yellow"), " ", error)
        self.border_subtitle = "ERROR"
        self.add_class("-error")
        self._render_card()

    def _render_card(self) -> None:
        body = Text(self.text.rstrip() or "…", style="" if self.parts else "dim")
        if self.verdict is not None:
            body = Text("\n").join([body, self.verdict])
        self.update(body)


class GenerationStream(VerticalScroll):
    """The cards of a live run, newest last."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._cards: dict[tuple[str, int], GenerationCard] = {}

    def card(self, sample_id: str, index: int) -> GenerationCard | None:
        return self._cards.get((sample_id, index))

    @property
    def cards(self) -> list[GenerationCard]:
        return list(self._cards.values())

    def clear(self) -> None:
        self._cards.clear()
        self.remove_children()

    def begin(self, sample_id: str, index: int, prefix: str = "") -> GenerationCard:
        card = self._cards.get((sample_id, index))
        if card is None:
            card = GenerationCard(sample_id, index, prefix)
            self._cards[(sample_id, index)] = card
            self._follow(lambda: self.mount(card))
        return card

    def append(self, sample_id: str, index: int, chunk: str) -> None:
        card = self.begin(sample_id, index)
        self._follow(lambda: card.append(chunk))

    def restart(self, sample_id: str, index: int, prefix: str, reason: str) -> None:
        card = self.begin(sample_id, index)
        self._follow(lambda: card.restart(prefix, reason))

    def finish(self, gen: Generation) -> None:
        card = self.begin(gen.sample_id, gen.index)
        self._follow(lambda: card.set_generation(gen))

    def fail(self, sample_id: str, index: int | None, error: str) -> None:
        targets = ([self.begin(sample_id, index)] if index is not None else
                   [c for c in self._cards.values() if c.sample_id == sample_id and c.verdict is None])
        for card in targets:
            self._follow(lambda c=card: c.set_error(error))

    def _follow(self, change: object) -> None:
        """Apply `change`; keep the newest text in view only if the view was at the bottom."""
        at_bottom = self.is_vertical_scroll_end
        change()  # type: ignore[operator]
        if at_bottom:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=False)
