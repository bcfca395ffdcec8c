"""The session-level hook events: UserPromptSubmit, Stop, SubagentStop, Notification, SessionEnd.

The runtime owns one ``SessionHooks``; the driver asks it about each prompt, the loop
about each stop, the permission prompt announces itself through it, and closing the
session ends with it. Tool hooks live in ``agent.loop.tool_hooks``. Notification and
SessionEnd are fire and forget: their outcome changes nothing, and each is bounded by a
timeout so that exiting never hangs on a hook.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent.core.events import EventSink, Notice
from agent.instructions.hooks import HookOutcome, HookRunner, additional_context_text
from agent.loop.tool_runner import Answer, AskPermission, PermissionRequest

log = logging.getLogger(__name__)

SESSION_END_TIMEOUT_S = 10.0  # at most this long per hook when ccx exits
NOTIFICATION_TIMEOUT_S = 30.0
IDLE_NOTIFICATION_S = 60.0  # as Claude Code: after a minute waiting for the next prompt
SESSION_END_REASONS = ("clear", "logout", "prompt_input_exit", "other")


@dataclass
class PromptCheck:
    blocked: bool = False
    reason: str = ""
    context: str = ""  # for the model, with the prompt


def _no_tasks() -> list[dict[str, Any]]:
    return []


@dataclass
class SessionHooks:
    hooks: HookRunner
    emit: EventSink
    end_timeout: float = SESSION_END_TIMEOUT_S
    # Stop's ``background_tasks``: the running background jobs (set once the jobs exist)
    background_tasks: Callable[[], list[dict[str, Any]]] = _no_tasks
    _background: set[asyncio.Task[None]] = field(default_factory=set)
    _idle: asyncio.TimerHandle | None = None

    async def prompt_submitted(self, prompt: str) -> PromptCheck:
        """UserPromptSubmit: a block (the prompt is not sent; the user reads why) or context."""
        self.hooks.prompt_id = str(uuid.uuid4())
        if not self.hooks.has("UserPromptSubmit"):
            return PromptCheck()
        outcome = await self.hooks.run("UserPromptSubmit", None, {"prompt": prompt})
        self._tell(outcome)
        if outcome.blocked or outcome.stop_turn:
            reason = outcome.block_reason or outcome.stop_reason or "(no reason given)"
            # As Claude Code: not an error (exit 0 headless); the prompt is given back, unsent.
            # Said as a notice too: front ends show a prompt's reply from its events.
            text = (
                f"A UserPromptSubmit hook blocked this prompt: {reason}\n\n"
                f"The prompt, not sent: {prompt}"
            )
            self.emit(Notice(text, "warning"))
            return PromptCheck(True, text)
        return PromptCheck(context=additional_context_text("UserPromptSubmit", outcome))

    async def stop(self, active: bool, last_text: str) -> str | None:
        """Stop: why the agent should go on, or None to let it stop."""
        return await self._stop_event("Stop", active, last_text)

    async def subagent_stop(
        self, active: bool, last_text: str, agent_id: str = "", agent_type: str = ""
    ) -> str | None:
        """SubagentStop, when a subagent would end: the same contract as ``stop``; the hook
        also reads which agent it is (``agent_id``, ``agent_type``)."""
        extra = {"agent_id": agent_id, "agent_type": agent_type}
        return await self._stop_event("SubagentStop", active, last_text, extra)

    async def _stop_event(
        self, event: str, active: bool, last_text: str, extra: dict[str, str] | None = None
    ) -> str | None:
        if not self.hooks.has(event):
            return None
        payload: dict[str, object] = {
            "stop_hook_active": active,
            "last_assistant_message": last_text,
            **(extra or {}),
        }
        if event in ("Stop", "SubagentStop"):  # Claude Code's keys; ccx has no crons
            payload.update(background_tasks=self.background_tasks(), session_crons=[])
        outcome = await self.hooks.run(event, None, payload)
        self._tell(outcome)
        if outcome.stop_turn or not outcome.blocked:
            return None
        return outcome.block_reason

    def notify(self, message: str, kind: str) -> None:
        """Notification, in the background: ccx waits for the user (a permission prompt...)."""
        if not self.hooks.has("Notification", kind):
            return
        payload = {"message": message, "notification_type": kind}
        run = self.hooks.run("Notification", kind, payload, timeout_cap=NOTIFICATION_TIMEOUT_S)
        task = asyncio.get_running_loop().create_task(self._quietly(run))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def waiting_for_input(self, delay: float = IDLE_NOTIFICATION_S) -> None:
        """The session waits for the user's next prompt: Notification if it still does later."""
        self.cancel_idle()
        if self.hooks.has("Notification", "idle_prompt"):
            self._idle = asyncio.get_running_loop().call_later(
                delay, self.notify, "ccx is waiting for your input", "idle_prompt"
            )

    def cancel_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def asking(self, ask: AskPermission | None) -> AskPermission | None:
        """``ask`` announcing each permission prompt to Notification hooks first."""
        if ask is None:
            return None

        async def ask_with_notice(request: PermissionRequest) -> Answer:
            self.notify(
                f"ccx needs your permission to use {request.tool_name}", "permission_prompt"
            )
            return await ask(request)

        return ask_with_notice

    async def session_end(self, reason: str = "other") -> None:
        """SessionEnd: run and waited for (bounded), so that it finishes before ccx exits."""
        self.cancel_idle()
        await asyncio.gather(*self._background, return_exceptions=True)
        if not self.hooks.has("SessionEnd", reason):
            return
        await self._quietly(
            self.hooks.run("SessionEnd", reason, {"reason": reason}, self.end_timeout)
        )

    async def _quietly(self, run: Awaitable[HookOutcome]) -> None:
        try:
            outcome = await run
        except Exception:  # a hook's trouble must never take the session down
            log.exception("a hook failed")
            return
        self._tell(outcome)

    def _tell(self, outcome: HookOutcome) -> None:
        for message in outcome.messages:
            self.emit(Notice(message, "warning"))
