"""Command-palette provider: jump to any sample by id (or by a word of its first line)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from cruxtui.tui.app import CruxApp


class SampleCommands(Provider):
    """`sample_123` or `rfind` in the palette lists matching samples; Enter opens one."""

    @property
    def _app(self) -> CruxApp:
        return self.app  # type: ignore[return-value]

    async def discover(self) -> Hits:
        for sample in self._app.dataset.samples[:10]:
            yield DiscoveryHit(
                f"Open {sample.id}",
                partial(self._app.open_sample, sample.id),
                help=sample.first_line,
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for sample in self._app.dataset.samples:
            label = f"Open {sample.id}"
            score = matcher.match(f"{label} {sample.first_line}")
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(label),
                    partial(self._app.open_sample, sample.id),
                    help=sample.first_line,
                )
