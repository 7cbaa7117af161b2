"""Background work in the TUI: the shared sandbox, and one path for a failed worker's error.

Every worker is started with `exit_on_error=False` (a failure must never end the app with a
traceback). Textual then reports the failure only to the node that started the worker, in a
`Worker.StateChanged` that does not bubble; `ReportsTaskErrors` turns it into a `TaskFailed`
that does, so the app shows every failure in one place (`CruxApp.on_task_failed`).
"""

from __future__ import annotations

from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState

from cruxtui.core.sandbox.pool import Sandbox, default_sandbox
from cruxtui.tui.messages import TaskFailed


class ReportsTaskErrors(MessagePump):
    """Mix into a screen or widget that runs workers (first in the bases): their errors reach
    the app's error screen. Core code raises exceptions whose text is meant for users
    (DatasetError, ModelError, ...), so the text is shown as is, under the worker's name."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        error = event.worker.error
        if event.state is WorkerState.ERROR and error is not None:
            self.post_message(TaskFailed(f"{event.worker.name or 'Background task'} failed", error))


def app_sandbox(sandbox: Sandbox | None = None) -> Sandbox:
    """`sandbox`, else the shared one, created HERE on the app's thread: sandbox workers die with
    the thread that started them (PDEATHSIG), so a thread worker must never be first to ask."""
    return sandbox if sandbox is not None else default_sandbox()
