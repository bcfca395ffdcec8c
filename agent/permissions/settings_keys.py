"""Which settings keys ccx honours, which of Claude Code's it does not, and the one warning
that names the rest.

A user coming from Claude Code brings a settings file written for it. Every key
ccx acts on is in ``HONOURED`` (with ``PERMISSION_KEYS`` for the ``permissions``
object); a key Claude Code knows that ccx does not act on is in
``NOT_SUPPORTED``; anything else is unknown (a typo, or a newer version's key).
``key_warnings`` names the last two kinds once per session, with the file each
came from, so nothing a user wrote is dropped without a word.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

HONOURED = frozenset(
    {
        "$schema",
        "model",
        "fallbackModel",
        "env",
        "hooks",
        "permissions",
        "disableAllHooks",
        "allowManagedHooksOnly",
        "apiKeyHelper",
        "alwaysThinkingEnabled",
        "effortLevel",
        "includeCoAuthoredBy",
        "attribution",
        "cleanupPeriodDays",
        "respectGitignore",
        "companyAnnouncements",
        "forceLoginMethod",
        "outputStyle",
        "statusLine",
        "sandbox",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "disabledMcpjsonServers",
        "enabledPlugins",
        "extraKnownMarketplaces",
        "worktree",  # baseRef (EnterWorktree)
        # ccx's own
        "autoCompactWindow",
        "serverContextEditing",
        "warmWorker",
        "theme",
        "mcpServers",
    }
)
PERMISSION_KEYS = frozenset(
    {"allow", "deny", "ask", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode"}
)
# Claude Code 2.1.328's keys that ccx reads but does not act on.
NOT_SUPPORTED = frozenset(
    {
        "additionalMarketplaces", "advisorModel", "agent", "allowAllClaudeAiMcps",
        "allowManagedMcpServersOnly", "allowManagedPermissionRulesOnly",
        "allowedHttpHookUrls", "allowedMcpServers", "askUserQuestionTimeout",
        "autoMemoryDirectory", "autoMemoryEnabled", "autoUpdatesChannel", "availableModels",
        "awaySummaryEnabled", "awsAuthRefresh", "awsCredentialExport", "bashOutputMaxChars",
        "blockedMarketplaces", "channelsEnabled", "claudeMdExcludes", "defaultShell",
        "deniedMcpServers", "disableAutoMode", "disableBundledSkills",
        "disableSkillShellExecution", "fastMode",
        "fileSuggestion", "forceLoginOrgUUID", "gcpAuthRefresh", "httpHookAllowedEnvVars",
        "includeGitInstructions", "language", "maxEffortLevel", "minimumVersion",
        "modelOverrides", "otelHeadersHelper", "plansDirectory", "prefersReducedMotion",
        "promptSuggestionEnabled", "proxyAuthHelper", "showThinkingSummaries",
        "showTurnDuration", "skillOverrides", "skipWebFetchPreflight", "spinnerTipsEnabled",
        "spinnerTipsOverride", "spinnerVerbs", "strictKnownMarketplaces",
        "subagentStatusLine", "terminalProgressBarEnabled", "timeFormat", "viewMode",
    }
)  # fmt: skip
NOT_SUPPORTED_PERMISSIONS = frozenset(
    {
        "disableAutoMode",
        "blockReadsOutsideWorkingDirectories",
        "blockWritesOutsideWorkingDirectories",
    }
)
# Values ccx honours for keys whose other values it cannot.
LOGIN_METHODS = ("console",)  # ccx signs in with API keys only: a console account's


def unhonoured_keys(data: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(Claude Code's keys ccx does not act on, unknown keys) of one settings object, as
    dotted names for the ``permissions`` object's."""
    unsupported: list[str] = []
    unknown: list[str] = []
    for key, value in data.items():
        if key == "permissions" and isinstance(value, dict):
            for inner in value:
                name = f"permissions.{inner}"
                if inner in NOT_SUPPORTED_PERMISSIONS:
                    unsupported.append(name)
                elif inner not in PERMISSION_KEYS:
                    unknown.append(name)
        elif key == "forceLoginMethod" and value not in (None, *LOGIN_METHODS):
            unsupported.append(f"forceLoginMethod={value!r}")
        elif key in NOT_SUPPORTED:
            unsupported.append(key)
        elif key not in HONOURED:
            unknown.append(key)
    return unsupported, unknown


def key_warnings(sources: Iterable[tuple[str, dict[str, Any]]]) -> list[str]:
    """One line per source (label, object as written) holding a key ccx does not act on."""
    lines = []
    for label, data in sources:
        unsupported, unknown = unhonoured_keys(data)
        parts = []
        if unsupported:
            parts.append(f"not supported by ccx: {', '.join(unsupported)}")
        if unknown:
            parts.append(f"unknown: {', '.join(unknown)}")
        if parts:
            lines.append(f"Settings in {label} ignored ({'; '.join(parts)})")
    return lines
