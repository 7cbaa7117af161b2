"""The app's run store: opened once, on first use, from `--store` or the user data folder."""

from __future__ import annotations

from typing import Any

from cruxtui.core.runs.store import RunStore

_ATTR = "_crux_run_store"


def app_store(app: Any) -> RunStore:
    """The RunStore shared by the run panel, the Runs screen and the Browse run column."""
    store = getattr(app, _ATTR, None)
    if store is None:
        store = RunStore(getattr(app.options, "store", None))
        setattr(app, _ATTR, store)
    return store
