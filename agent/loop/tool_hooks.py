"""PreToolUse and PostToolUse hooks around one tool call, and what their answers do.

PreToolUse runs after the input is validated and before the permission gate:
- exit 2, ``decision: "block"`` or ``permissionDecision: "deny"``: the call does not run;
  the model gets the reason as the tool's error.
- ``updatedInput``: the call's input is replaced (and validated again); the gate then
  judges the rewritten input, never the original.
- ``permissionDecision: "ask"``: the user is asked even where the gate would allow (deny
  rules still refuse first).
- ``permissionDecision: "allow"``: means exactly what an allow rule for the tool means in
  ccx and Claude Code, for this one call: it skips the "needs approval" question, but deny
  rules, ask rules, protected paths (.git, .claude...) and running outside the sandbox
  still refuse or ask, and plan mode still forbids changes. A hook can never make a call
  run unasked that an explicit ``--allowedTools Tool`` would not.
PostToolUse runs after a call that succeeded: ``additionalContext`` and a block's reason
go to the model with the results. ``continue: false`` from either ends the turn after
this response's tool calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.core.events import EventSink, Notice
from agent.core.messages import ToolUseBlock
from agent.instructions.hooks import HookOutcome, HookRunner
from agent.permissions.gate import PermissionGate
from agent.permissions.rules import Decision, Rule
from tools.base import Tool, ToolParams, ToolResult

HOOK_RULE_SOURCE = "a PreToolUse hook"


@dataclass
class PreToolVerdict:
    params: ToolParams
    decision: str | None = None  # "allow" or "ask"
    reason: str = ""


@dataclass
class ToolHooks:
    """The session's hooks as the tool runner uses them, and what they left for later."""

    hooks: HookRunner
    emit: EventSink
    notes: list[str] = field(default_factory=list)  # for the model, with the tool results
    stop_reason: str | None = None  # continue: false

    async def before(
        self, tool: Tool[Any], use: ToolUseBlock, params: ToolParams
    ) -> PreToolVerdict | ToolResult:
        if not self.hooks.has("PreToolUse", tool.name):
            return PreToolVerdict(params)
        tool_input = params.model_dump(by_alias=True, exclude_none=True)
        outcome = await self.hooks.run(
            "PreToolUse",
            tool.name,
            {"tool_name": tool.name, "tool_input": tool_input, "tool_use_id": use["id"]},
        )
        self._common(outcome)
        if outcome.blocked or outcome.permission_decision == "deny":
            reason = outcome.block_reason or outcome.permission_reason or "(no reason given)"
            return ToolResult.error(f"A PreToolUse hook blocked this {tool.name} call: {reason}")
        if outcome.updated_input is not None:
            parsed = tool.parse(outcome.updated_input)
            if isinstance(parsed, ToolResult):
                return ToolResult.error(
                    f"A PreToolUse hook rewrote the {tool.name} input into one that is not "
                    f"valid: {parsed.output_text()}"
                )
            params = parsed
            self.emit(Notice(f"A PreToolUse hook rewrote this {tool.name} call's input", "info"))
        if outcome.permission_decision == "allow" and outcome.permission_reason:
            self.emit(Notice(f"A PreToolUse hook allowed {tool.name}: {outcome.permission_reason}"))
        return PreToolVerdict(params, outcome.permission_decision, outcome.permission_reason)

    async def after(
        self,
        tool: Tool[Any],
        use: ToolUseBlock,
        params: ToolParams,
        result: ToolResult,
        duration_ms: int = 0,
    ) -> None:
        if result.is_error or not self.hooks.has("PostToolUse", tool.name):
            return
        outcome = await self.hooks.run(
            "PostToolUse",
            tool.name,
            {
                "tool_name": tool.name,
                "tool_input": params.model_dump(by_alias=True, exclude_none=True),
                "tool_response": tool_response(result),
                "tool_use_id": use["id"],
                "duration_ms": duration_ms,
            },
        )
        self._common(outcome)
        if outcome.blocked:
            self.notes.append(f"PostToolUse hook feedback on {tool.name}: {outcome.block_reason}")
        for context in outcome.additional_context:
            self.notes.append(f"PostToolUse hook context for {tool.name}: {context}")

    def drain_notes(self) -> list[str]:
        out, self.notes = self.notes, []
        return out

    def take_stop(self) -> str | None:
        out, self.stop_reason = self.stop_reason, None
        return out

    def _common(self, outcome: HookOutcome) -> None:
        for message in outcome.messages:
            self.emit(Notice(message, "warning"))
        if outcome.stop_turn and self.stop_reason is None:
            self.stop_reason = outcome.stop_reason


def check_gate(
    gate: PermissionGate, tool: Tool, tool_input: dict[str, Any], verdict: PreToolVerdict
) -> Decision:
    """The gate's decision, with a PreToolUse hook's "allow" or "ask" applied (see above)."""
    if verdict.decision == "allow":
        rule = Rule(tool.name, None, HOOK_RULE_SOURCE)
        gate.allow.append(rule)  # for this one synchronous check only
        try:
            return _check(gate, tool, tool_input)
        finally:
            gate.allow.remove(rule)
    decision = _check(gate, tool, tool_input)
    if verdict.decision == "ask" and decision.behavior == "allow":
        return Decision("ask", verdict.reason or "a PreToolUse hook asks for the user's approval")
    return decision


def _check(gate: PermissionGate, tool: Tool, tool_input: dict[str, Any]) -> Decision:
    return gate.check(
        tool.name, tool_input, tool.is_mutating, tool.declares_read_only, tool.rule_aliases
    )


def tool_response(result: ToolResult) -> dict[str, Any]:
    """A tool's result as PostToolUse hooks read it."""
    response: dict[str, Any] = {"output": result.output_text()}
    if "exit_code" in result.meta:  # Bash: Claude Code's keys too (ccx merges the streams)
        response.update(
            stdout=result.output_text(),
            stderr="",
            interrupted=bool(result.meta.get("timed_out")),
            isImage=False,
            noOutputExpected=False,
        )
    for key, value in result.meta.items():
        if isinstance(value, str | int | float | bool) or value is None:
            response.setdefault(key, value)
    return response
