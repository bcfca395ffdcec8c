"""Stop hooks as the loop sees them: "go on, because ..." or let the turn end, with a guard.

A Stop hook that blocks (exit 2, or ``decision: "block"`` with a ``reason``) sends the
agent on with its reason as the next user message, as in Claude Code; the hook sees
``stop_hook_active`` true while the agent runs on its word, so it can let go. A hook that
never lets go is stopped by ccx after ``MAX_STOP_HOOK_CONTINUES`` in a row, with a notice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent.core.events import EventSink, Notice

# A Stop hook: (stop_hook_active, the last assistant text) -> why to go on, or None to stop.
StopHook = Callable[[bool, str], Awaitable[str | None]]
MAX_STOP_HOOK_CONTINUES = 8


async def stop_hook_feedback(
    hook: StopHook, last_text: str, continues: int, emit: EventSink
) -> str | None:
    """The text that sends the agent on after ``continues`` earlier ones; None to stop."""
    reason = await hook(continues > 0, last_text)
    if not reason:
        return None
    if continues >= MAX_STOP_HOOK_CONTINUES:
        emit(
            Notice(
                f"Stop hooks asked to go on {continues} times in a row; stopping anyway.",
                "warning",
            )
        )
        return None
    return f"Stop hook feedback:\n{reason}"
