"""An interrupt that was asked for stays asked for: the check before the next wait starts.

A Ctrl-C or a signal stops the session by cancelling the task that runs the line.
Code that waits on something else (a background update, a child task) can catch
that cancellation on its way and go on, and the task would then carry on with
the work the user stopped: more requests, more tools. ``asyncio`` keeps a count
of the cancellations asked of a task until it takes one back
(``Task.uncancel``, which ``asyncio.timeout`` and task groups do for their own),
so a place about to start new work can tell that the user's one was lost and
raise it again.
"""

from __future__ import annotations

import asyncio


def raise_if_cancelling() -> None:
    """Raise CancelledError when the current task was asked to stop and went on anyway."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError()
