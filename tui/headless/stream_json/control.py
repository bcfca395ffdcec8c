"""The control protocol's answers that need the session's parts, in the Agent SDK's shapes.

- ``reply_of``: a ``can_use_tool`` answer (``behavior``, ``updatedInput``, ``message``,
  ``interrupt``) as the tool runner's Reply; ``suggestions`` and ``apply_updates``: the
  rule ccx would save for "always", and the client's ``updatedPermissions`` applied;
- ``context_usage``: ``get_context_usage``, ccx's own /context figures in the SDK's
  ContextUsageResponse shape;
- ``rewind_files``: the files back as they were at a user message (file checkpointing);
- ``initialize_answer``: what ``initialize`` returns (commands, styles, agents).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from agent.loop.tool_runner import PermissionRequest, Reply
from agent.permissions.rules import Rule
from compaction.breakdown import context_breakdown
from tui.session.sdk_setup import CHECKPOINTING_ENV, prompt_uuids

if TYPE_CHECKING:
    from tui.session.driver import SessionDriver

# Claude Code's /context colours, by category (the SDK passes them through).
COLORS = {
    "System prompt": "promptBorder",
    "Tools": "inactive",
    "Memory files": "claude",
    "Skills": "warning",
    "Messages": "purple_FOR_SUBAGENTS_ONLY",
}


def reply_of(answer: dict[str, Any]) -> Reply:
    """A can_use_tool answer as a Reply; anything but an allow is a denial."""
    if answer.get("behavior") == "allow":
        updated = answer.get("updatedInput")
        return Reply("allow", updated_input=updated if isinstance(updated, dict) else None)
    message = answer.get("message")
    return Reply(
        "deny",
        message=message if isinstance(message, str) else "",
        interrupt=answer.get("interrupt") is True,
    )


def suggestions(request: PermissionRequest) -> list[dict[str, Any]]:
    """permission_suggestions: the allow rule "always" would add, in the SDK's shape."""
    rule: dict[str, Any] = {"toolName": request.suggestion.tool}
    if request.suggestion.specifier is not None:
        rule["ruleContent"] = request.suggestion.specifier
    return [{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}]


def apply_updates(driver: SessionDriver, updates: Any) -> None:
    """The client's updatedPermissions: added rules (saved for localSettings), a new mode."""
    runtime = driver.runtime
    for update in updates if isinstance(updates, list) else ():
        if not isinstance(update, dict):
            continue
        if update.get("type") == "setMode" and isinstance(update.get("mode"), str):
            driver.set_mode(update["mode"])
        if update.get("type") != "addRules":
            continue
        for raw in update.get("rules") or ():
            rule = Rule(str(raw.get("toolName")), raw.get("ruleContent"), "the SDK client")
            if update.get("behavior") == "allow":
                runtime.gate.allow_always(rule)
            elif update.get("behavior") == "deny":
                runtime.gate.deny.append(rule)
            else:
                runtime.gate.ask.append(rule)
            if update.get("destination") == "localSettings" and update.get("behavior") == "allow":
                runtime.remember_rule(rule)


def context_usage(driver: SessionDriver) -> dict[str, Any]:
    """``get_context_usage``: where the context's tokens go now, and how full it is."""
    runtime = driver.runtime
    state = runtime.context.state(runtime.agent)
    breakdown = context_breakdown(
        system_blocks=runtime.system,
        memory_texts=runtime.memory_texts,
        skills_text=runtime.skills_text,
        tools_api=runtime.agent.tools_api,
        messages=list(runtime.agent.messages),
        limits=state.limits,
        used=state.used,
    )
    categories = [
        {"name": c.name, "tokens": c.tokens, "color": COLORS.get(c.name, "inactive")}
        for c in breakdown.categories
    ]
    effective = state.threshold if state.auto_compact_enabled else state.window
    return {
        "categories": categories,
        "totalTokens": state.used,
        "maxTokens": effective,
        "rawMaxTokens": state.window,
        "percentage": round(state.percent_used, 2),
        "model": runtime.agent.model,
        "isAutoCompactEnabled": state.auto_compact_enabled,
        "memoryFiles": [
            {"path": str(m.path), "type": str(m.kind), "tokens": (len(m.content) + 3) // 4}
            for m in runtime.memory_files
        ],
        "mcpTools": [],
        "agents": [{"agentType": name, "source": "sdk"} for name in runtime.options.agents],
    }


def rewind_files(driver: SessionDriver, user_message_id: str) -> dict[str, Any]:
    """Restore the files Edit and Write changed since that prompt; ValueError if it cannot."""
    checkpoints = driver.runtime.checkpoints
    if checkpoints is None:
        raise ValueError(f"file checkpointing is off: start ccx with {CHECKPOINTING_ENV}=true")
    restored = checkpoints.rewind(user_message_id, prompt_uuids(driver.runtime.agent.messages))
    return {"canRewind": True, "filesChanged": restored}


def initialize_answer(driver: SessionDriver) -> dict[str, Any]:
    """What ``initialize`` returns: the commands (custom ones with their argument hints), the
    agents, the output styles."""
    runtime = driver.runtime
    hints = driver.argument_hints()
    commands = [
        {"name": name, "description": text, "argumentHint": hints.get(name, "")}
        for name, text in driver.commands()
    ]
    agents = (
        [
            {"name": d.name, "description": d.description}
            for d in runtime.subagents.definitions.values()
        ]
        if runtime.options.subagents
        else []
    )
    return {
        "commands": commands,
        "agents": agents,
        "hook_on_failure_supported": True,  # an SDK hook's onFailure "block" is honoured
        "hooks_applied": True,
        "output_style": runtime.output_style.name,
        "available_output_styles": runtime.output_styles.names,
        "models": [],
        "account": {},
        "pid": os.getpid(),
    }
