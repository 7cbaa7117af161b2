"""Generations streaming in: one card per generation, text appended chunk by chunk, then its verdict.

A reasoning model's thinking streams into its own collapsible section of the card, above the
answer text and apart from it (as it is stored).

The view follows new text only while the user is at the bottom: scrolling up to read an earlier
generation is not undone by the next chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Collapsible, Static

from cruxtui.core.runs.store import Generation
from cruxtui.core.util.redact import live_redactor

_VERDICT_STYLE = {True: "bold green", False: "bold red"}


class GenerationCard(Vertical):
    """One generation: a title, the model's thinking (a collapsible section, when it thinks), its
    answer text, and (once scored) its verdict.

    While it streams, the card has a fixed height and shows the last `TAIL_LINES` lines of its
    text (and of its thinking), like a terminal: new text then only repaints the card, where a
    growing card would make the whole screen lay out again for every line (costly with several
    streams at once). When the generation is done the card opens to its full text.
    """

    TAIL_LINES = 8
    THINKING_TAIL_LINES = 4

    DEFAULT_CSS = """
    GenerationCard { height: auto; }
    GenerationCard > Static, GenerationCard Collapsible { height: auto; }
    """

    def __init__(self, sample_id: str, index: int, prefix: str = "") -> None:
        super().__init__(classes="generation-card -streaming")
        self.sample_id = sample_id
        self.index = index
        self.prefix = prefix
        self.parts: list[str] = [prefix] if prefix else []
        self.thinking_parts: list[str] = []
        self.verdict: Text | None = None
        self.border_title = f"{sample_id} #{index}"
        self._thinking_body = Static("", classes="thinking-body", markup=False)
        self._thinking = Collapsible(
            self._thinking_body, title="thinking", collapsed=False, classes="thinking"
        )
        self._body = Static("", classes="generation-body", markup=False)
        self._shown = live_redactor()
        """Keys out of what the card shows (a hostile server or model may echo one), as out of
        everything stored; the text itself (`text`) stays as it came, for the run to store."""

    def compose(self) -> ComposeResult:
        yield self._thinking
        yield self._body

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def thinking(self) -> str:
        return "".join(self.thinking_parts)

    @property
    def streaming(self) -> bool:
        return self.has_class("-streaming")

    def on_mount(self) -> None:
        self.repaint()

    def on_resize(self) -> None:
        if self.streaming:
            self.repaint()  # the tail was wrapped for the old width

    def append(self, chunk: str) -> None:
        """Add text without repainting (the stream repaints dirty cards a few times a second)."""
        self.parts.append(chunk)

    def append_thinking(self, chunk: str, moved: bool = False) -> None:
        """Add thinking without repainting. `moved`: the answer text so far was thinking."""
        if moved:
            self.parts = [self.prefix] if self.prefix else []
        self.thinking_parts.append(chunk)

    def restart(self, prefix: str, reason: str) -> None:
        """The stream broke off and starts over: drop the partial text, say why."""
        self.parts = [prefix] if prefix else []
        self.thinking_parts = []
        self.border_subtitle = f"restarted: {reason}"[:60]
        self.repaint()

    def set_generation(self, gen: Generation) -> None:
        self.parts = [gen.raw]
        self.thinking_parts = [gen.reasoning] if gen.reasoning else []
        mark = "PASS" if gen.passed else gen.kind.upper()
        self.verdict = Text.assemble(
            (f" {mark} ", _VERDICT_STYLE[gen.passed]),
            " ",
            (gen.reason or (gen.answer or ""), "dim"),
        )
        self.border_subtitle = mark
        self.set_class(gen.passed, "-passed")
        self.set_class(not gen.passed, "-failed")
        self._settle()

    def set_error(self, error: str) -> None:
        self.verdict = Text.assemble((" ERROR ", "bold yellow"), " ", error)
        self.border_subtitle = "ERROR"
        self.add_class("-error")
        self._settle()

    def _settle(self) -> None:
        self.remove_class("-streaming")
        self.repaint()

    def repaint(self) -> None:
        arriving = self.streaming
        thinking = self._shown(self.thinking, arriving)
        text = self._shown(self.text, arriving)
        self.set_class(bool(thinking), "-thinking")
        self._thinking.display = bool(thinking)
        if thinking:
            words = len(thinking.split())
            self._thinking.title = f"thinking ({words} words)"
        if self.streaming:
            if thinking:
                self._thinking_body.update(
                    self._tail(thinking, self.THINKING_TAIL_LINES, "italic"), layout=False
                )
            self._body.update(self._tail(text, self.TAIL_LINES), layout=False)
            return
        if thinking:
            self._thinking_body.update(Text(thinking.strip(), style="italic"))
        # The answer text after a thinking block usually starts with blank lines: not shown.
        body = Text((text.strip() if thinking else text.rstrip()) or "…")
        if self.verdict is not None:
            body = Text("\n").join([body, self.verdict])
        self._body.update(body)

    def _tail(self, text: str, lines: int, style: str = "") -> Text:
        """The last `lines` lines of `text` as wrapped at the card's width."""
        width = max(10, (self.content_size.width or 40) - 4)
        # Enough characters for the last lines even when every line is full.
        shown = Text(
            text[-(lines + 1) * width * 2 :].rstrip() or "…", style=style if text else "dim"
        )
        wrapped = shown.wrap(self.app.console, width)
        return Text("\n").join(wrapped[-lines:])


class GenerationStream(VerticalScroll):
    """The cards of a live run, newest last."""

    FLUSH_INTERVAL = 1 / 20
    """Streamed text is repainted at most this often: a server can send thousands of chunks a
    second, and repainting per chunk would starve the event loop (keys, scrolling)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cards: dict[tuple[str, int], GenerationCard] = {}
        self._dirty: set[GenerationCard] = set()
        self._flush_pending = False

    def card(self, sample_id: str, index: int) -> GenerationCard | None:
        return self._cards.get((sample_id, index))

    @property
    def cards(self) -> list[GenerationCard]:
        return list(self._cards.values())

    def clear(self) -> None:
        self._cards.clear()
        self._dirty.clear()
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
        card.append(chunk)
        self._dirty.add(card)
        if not self._flush_pending:
            self._flush_pending = True
            self.set_timer(self.FLUSH_INTERVAL, self._flush)

    def append_thinking(self, sample_id: str, index: int, chunk: str, moved: bool) -> None:
        card = self.begin(sample_id, index)
        card.append_thinking(chunk, moved)
        self._dirty.add(card)
        if not self._flush_pending:
            self._flush_pending = True
            self.set_timer(self.FLUSH_INTERVAL, self._flush)

    def _flush(self) -> None:
        self._flush_pending = False
        dirty, self._dirty = self._dirty, set()

        def repaint() -> None:
            for card in dirty:
                if card.is_attached:
                    card.repaint()

        self._follow(repaint)

    def restart(self, sample_id: str, index: int, prefix: str, reason: str) -> None:
        card = self.begin(sample_id, index)
        self._follow(lambda: card.restart(prefix, reason))

    def finish(self, gen: Generation) -> None:
        card = self.begin(gen.sample_id, gen.index)
        self._follow(lambda: card.set_generation(gen))

    def fail(self, sample_id: str, index: int | None, error: str) -> None:
        targets = (
            [self.begin(sample_id, index)]
            if index is not None
            else [c for c in self._cards.values() if c.sample_id == sample_id and c.verdict is None]
        )
        for card in targets:
            self._follow(partial(card.set_error, error))

    def _follow(self, change: Callable[[], object]) -> None:
        """Apply `change`; keep the newest text in view only if the view was at the bottom."""
        at_bottom = self.is_vertical_scroll_end
        change()
        if at_bottom:
            self.call_after_refresh(self._scroll_end_unless_moved, self.scroll_offset.y)

    def _scroll_end_unless_moved(self, offset: int) -> None:
        """Follow the new text, unless the user scrolled up since the change was made (a scroll
        between a chunk and its repaint must not be undone)."""
        if self.scroll_offset.y >= offset:
            self.scroll_end(animate=False, immediate=False)
