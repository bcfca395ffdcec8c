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

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.loop.tool_runner import PermissionRequest, Reply
from agent.permissions.rules import Rule

if TYPE_CHECKING:
    from tui.session.driver import RuleBehavior, SessionDriver

# Claude Code's /context colours, by category (the SDK passes them through).
COLORS = {
    "System prompt": "promptBorder",
    "Tools": "inactive",
    "MCP tools": "cyan_FOR_SUBAGENTS_ONLY",
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


PATH_KEYS = ("file_path", "notebook_path")  # the file tools' path parameters


def absolute_paths(tool_input: dict[str, Any], driver: SessionDriver | None) -> dict[str, Any]:
    """The call's input with its file path absolute, as Claude Code hands it to
    ``can_use_tool`` (the model may give it relative to the session's folder, and a client's
    rules compare absolute paths); the tool itself still gets what the model sent."""
    if driver is None:
        return tool_input
    shown = dict(tool_input)
    for key in PATH_KEYS:
        value = shown.get(key)
        if isinstance(value, str) and value:
            path = Path(value).expanduser()
            shown[key] = str(path if path.is_absolute() else Path(driver.cwd) / path)
    return shown


def suggestions(request: PermissionRequest) -> list[dict[str, Any]]:
    """permission_suggestions: the allow rule "always" would add, in the SDK's shape."""
    rule: dict[str, Any] = {"toolName": request.suggestion.tool}
    if request.suggestion.specifier is not None:
        rule["ruleContent"] = request.suggestion.specifier
    return [{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}]


def apply_updates(driver: SessionDriver, updates: Any) -> None:
    """The client's updatedPermissions: added rules (saved for localSettings), a new mode."""
    for update in updates if isinstance(updates, list) else ():
        if not isinstance(update, dict):
            continue
        if update.get("type") == "setMode" and isinstance(update.get("mode"), str):
            with contextlib.suppress(ValueError):  # a mode refused (bypass turned off) is not set
                driver.set_mode(update["mode"])
        if update.get("type") != "addRules":
            continue
        behavior = update.get("behavior")
        kind: RuleBehavior = behavior if behavior in ("allow", "deny") else "ask"
        save = update.get("destination") == "localSettings" and kind == "allow"
        for raw in update.get("rules") or ():
            rule = Rule(str(raw.get("toolName")), raw.get("ruleContent"), "the SDK client")
            driver.add_permission_rule(kind, rule, save=save)


def context_usage(driver: SessionDriver) -> dict[str, Any]:
    """``get_context_usage``: where the context's tokens go now, and how full it is."""
    usage = driver.context_usage()
    state = usage.state
    categories = [
        {"name": c.name, "tokens": c.tokens, "color": COLORS.get(c.name, "inactive")}
        for c in usage.breakdown.categories
    ]
    effective = state.threshold if state.auto_compact_enabled else state.window
    return {
        "categories": categories,
        "totalTokens": state.used,
        "maxTokens": effective,
        "rawMaxTokens": state.window,
        "percentage": round(state.percent_used, 2),
        "model": usage.model,
        "isAutoCompactEnabled": state.auto_compact_enabled,
        "memoryFiles": [
            {"path": str(m.path), "type": m.kind, "tokens": (m.chars + 3) // 4}
            for m in usage.memory_files
        ],
        "mcpTools": [],
        "agents": [
            {"agentType": name, "source": "sdk"} for name in driver.inventory().given_agents
        ],
    }


def rewind_files(driver: SessionDriver, user_message_id: str) -> dict[str, Any]:
    """Restore the files Edit and Write changed since that prompt; ValueError if it cannot."""
    return {"canRewind": True, "filesChanged": driver.rewind_files(user_message_id)}


def initialize_answer(driver: SessionDriver) -> dict[str, Any]:
    """What ``initialize`` returns: the commands (custom ones with their argument hints), the
    agents, the output styles."""
    offer = driver.inventory()
    hints = driver.argument_hints()
    commands = [
        {"name": name, "description": text, "argumentHint": hints.get(name, "")}
        for name, text in driver.commands()
    ]
    return {
        "commands": commands,
        "agents": [{"name": a.name, "description": a.description} for a in offer.agents],
        "hook_on_failure_supported": True,  # an SDK hook's onFailure "block" is honoured
        "hooks_applied": True,
        "output_style": offer.output_style,
        "available_output_styles": list(offer.output_styles),
        "models": [],
        "account": {},
        "pid": os.getpid(),
    }
