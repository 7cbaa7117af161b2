"""Command-palette provider: jump to any sample by id (or by a word of its first line)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from cruxtui.tui.messages import OpenSample
from cruxtui.tui.state import app_state


class SampleCommands(Provider):
    """`sample_123` or `rfind` in the palette lists matching samples; Enter opens one."""

    def _open(self, sample_id: str) -> Callable[[], object]:
        """The command that asks the app to open the sample (the message is made when chosen)."""
        return partial(self._post_open, sample_id)

    def _post_open(self, sample_id: str) -> None:
        self.app.post_message(OpenSample(sample_id))

    async def discover(self) -> Hits:
        for sample in app_state(self.app).dataset.samples[:10]:
            yield DiscoveryHit(f"Open {sample.id}", self._open(sample.id), help=sample.first_line)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for sample in app_state(self.app).dataset.samples:
            label = f"Open {sample.id}"
            score = matcher.match(f"{label} {sample.first_line}")
            if score > 0:
                yield Hit(
                    score, matcher.highlight(label), self._open(sample.id), help=sample.first_line
                )
