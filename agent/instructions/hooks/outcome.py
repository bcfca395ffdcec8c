"""What hooks' exits and outputs mean, per event, with Claude Code's semantics.

Exit 0 is success: stdout may be JSON with Claude Code's fields, else plain text (context
for the model on SessionStart and UserPromptSubmit). Exit 2 blocks the events that can be
blocked, its stderr the reason: PreToolUse (the call does not run; the model reads why),
PostToolUse (the model reads it), UserPromptSubmit (the prompt is not sent; the user
reads why), Stop / SubagentStop (the agent goes on, told why), PreCompact. Any other exit
is reported to the user and ignored. JSON fields: ``continue: false`` + ``stopReason``
(end the turn), ``decision: "block"`` + ``reason``, ``systemMessage`` (for the user),
``suppressOutput`` (its stdout is not shown to the user, as ``shown_output`` would),
and ``hookSpecificOutput`` (``additionalContext``;
PreToolUse's ``permissionDecision`` / ``permissionDecisionReason`` / ``updatedInput``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agent.instructions.hooks.config import HookCommand

BLOCKING_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact"}
)
# Events whose plain stdout (exit 0, not JSON) becomes context for the model.
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
# Events whose hookSpecificOutput.additionalContext reaches the model.
ADDITIONAL_CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse"})
PERMISSION_DECISIONS = ("deny", "ask", "allow")  # the strictest of several hooks wins
MAX_OUTPUT_CHARS = 10_000
SHOWN_CHARS = 300  # of a hook's stdout, shown to the user


@dataclass
class HookOutcome:
    blocked: bool = False
    block_reason: str = ""
    additional_context: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # for the user, not the model
    ran: int = 0
    permission_decision: str | None = None  # PreToolUse: "allow", "ask" or "deny"
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None  # PreToolUse: the call's rewritten input
    stop_turn: bool = False  # continue: false
    stop_reason: str = ""
    suppress_output: bool = False


@dataclass
class HookResult:
    hook: HookCommand
    exit_code: int | None  # None: it did not run or timed out
    stdout: str = ""
    stderr: str = ""
    problem: str = ""


def shown_output(event: str, result: HookResult) -> str | None:
    """What the user is shown of a successful hook's stdout (one dim line), or None: nothing
    printed, a failure (reported otherwise), plain context for the model, or a JSON answer
    with ``suppressOutput: true``."""
    if result.exit_code != 0 or not result.stdout:
        return None
    output = json_output(result.stdout)
    if output is None and event in CONTEXT_EVENTS:
        return None
    if output is not None and output.get("suppressOutput") is True:
        return None
    text = " ".join(result.stdout.split())
    text = text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
    return f"{event} hook `{_short(result.hook.command)}`: {text}"


def interpret(event: str, result: HookResult, outcome: HookOutcome) -> None:
    """Fold one hook's result into the event's outcome."""
    label = f"{event} hook `{_short(result.hook.command)}`"
    if result.exit_code is None:
        outcome.messages.append(f"{label} {result.problem}")
        return
    outcome.ran += 1
    if result.exit_code == 2:
        reason = result.stderr or "(no reason given)"
        if event in BLOCKING_EVENTS:
            block(outcome, reason)
        else:
            outcome.messages.append(f"{label} exited with 2: {reason}")
        return
    if result.exit_code != 0:
        detail = f": {result.stderr}" if result.stderr else ""
        outcome.messages.append(f"{label} failed with exit code {result.exit_code}{detail}")
        return
    output = json_output(result.stdout)
    if output is None:
        if event in CONTEXT_EVENTS and result.stdout:
            outcome.additional_context.append(result.stdout)
        return
    apply_json(event, label, output, outcome)


def apply_json(event: str, label: str, output: dict[str, Any], outcome: HookOutcome) -> None:
    if isinstance(output.get("systemMessage"), str) and output["systemMessage"].strip():
        outcome.messages.append(output["systemMessage"].strip())
    if output.get("suppressOutput") is True:
        outcome.suppress_output = True
    if output.get("continue") is False:
        outcome.stop_turn = True
        stop_reason = _text(output.get("stopReason"))
        outcome.stop_reason = outcome.stop_reason or stop_reason or f"stopped by the {label}"
        if event == "PreCompact":  # stopping there means not compacting
            block(outcome, outcome.stop_reason)
    decision = output.get("decision")
    reason = _text(output.get("reason"))
    if decision == "block":
        if event in BLOCKING_EVENTS:
            block(outcome, reason or "(no reason given)")
        else:
            outcome.messages.append(f"{label} asked to block: {reason or '(no reason given)'}")
    specific = output.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if event == "PreToolUse":
        _pre_tool_use(specific, decision, reason, outcome)
    context = specific.get("additionalContext")
    if event in ADDITIONAL_CONTEXT_EVENTS and isinstance(context, str) and context.strip():
        outcome.additional_context.append(context.strip()[:MAX_OUTPUT_CHARS])


def _pre_tool_use(
    specific: dict[str, Any], decision: Any, reason: str, outcome: HookOutcome
) -> None:
    chosen = specific.get("permissionDecision")
    why = _text(specific.get("permissionDecisionReason"))
    if chosen not in PERMISSION_DECISIONS and decision == "approve":  # the older spelling
        chosen, why = "allow", why or reason
    if chosen in PERMISSION_DECISIONS:
        current = outcome.permission_decision
        if current is None or PERMISSION_DECISIONS.index(chosen) < PERMISSION_DECISIONS.index(
            current
        ):
            outcome.permission_decision, outcome.permission_reason = chosen, why
    updated = specific.get("updatedInput")
    if isinstance(updated, dict):
        outcome.updated_input = updated  # the whole new input, as Claude Code takes it


def block(outcome: HookOutcome, reason: str) -> None:
    outcome.blocked = True
    outcome.block_reason = (
        reason if not outcome.block_reason else f"{outcome.block_reason}\n{reason}"
    )


def json_output(stdout: str) -> dict[str, Any] | None:
    """Stdout as Claude Code's JSON hook output, or None when it is plain text."""
    if not stdout.startswith("{"):
        return None
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def additional_context_text(event: str, outcome: HookOutcome) -> str:
    """The hooks' context as one block for a system reminder; "" when there is none."""
    if not outcome.additional_context:
        return ""
    return f"{event} hook output:\n" + "\n\n".join(outcome.additional_context)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _short(command: str, limit: int = 60) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"
