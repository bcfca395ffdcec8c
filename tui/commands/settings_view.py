"""/config and /status: the settings in force and where each came from, and the session's
state at a glance; lines of at most 80 columns.

``settings_lines`` is shared with ``ccx doctor``: the sources that were read
(lowest priority first), then each effective top-level value with the source
that set it, each permission rule with its own, and the keys ccx does not act on.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.permissions.settings import Settings
from agent.permissions.settings_keys import key_warnings
from tui.commands.registry import CommandResult, command

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

WIDTH = 80
KEY_WIDTH = 22
VALUE_WIDTH = 24


def fit(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` characters (cut with "…")."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def short_source(label: str, cwd: Path | None = None) -> str:
    """A source's label as shown: ``~`` for the home folder, relative inside ``cwd``."""
    if label.startswith("--"):
        return label
    path = Path(label)
    if cwd is not None and path.is_relative_to(cwd):
        return str(path.relative_to(cwd))
    home = Path.home()
    if path.is_relative_to(home):
        return "~/" + str(path.relative_to(home))
    return label


def _row(key: str, value: str, source: str) -> str:
    room = WIDTH - 2 - KEY_WIDTH - 1 - VALUE_WIDTH - 1
    line = f"  {fit(key, KEY_WIDTH):<{KEY_WIDTH}} {fit(value, VALUE_WIDTH):<{VALUE_WIDTH}} "
    return (line + _left_fit(source, room)).rstrip()


def _left_fit(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def settings_lines(settings: Settings, cwd: Path | None = None) -> list[str]:
    """The sources, the effective values with their source, and what is ignored."""
    lines = ["Settings sources (lowest priority first):"]
    if not settings.sources:
        lines.append("  none: every value is ccx's default")
    for source in settings.sources:
        lines.append(fit(f"  {source.kind:<8} {short_source(source.label, cwd)}", WIDTH))
    values = [(k, v) for k, v in sorted(settings.raw.items()) if k not in ("permissions", "hooks")]
    if values or settings.raw.get("permissions") or settings.hooks:
        lines += ["", "Effective values (the source that set each):"]
    for key, value in values:
        lines.append(_row(key, _shown(value), _origin(settings, key, cwd)))
    for behavior in ("allow", "ask", "deny"):
        for rule in getattr(settings, behavior):
            where = short_source(rule.source, cwd) if rule.source else ""
            lines.append(_row(f"permissions.{behavior}", str(rule), where))
    permissions = settings.raw.get("permissions")
    for key, value in sorted(permissions.items()) if isinstance(permissions, dict) else ():
        if key not in ("allow", "ask", "deny"):
            lines.append(_row(f"permissions.{key}", _shown(value), _origin(settings, key, cwd)))
    for event, groups in sorted(settings.hooks.items()):
        count = len(groups) if isinstance(groups, list) else 0
        lines.append(_row(f"hooks.{event}", f"{count} group(s)", ""))
    if (hooks_off := settings.hooks_disabled_by) is not None:
        where = short_source(hooks_off, cwd)
        lines.append(fit(f"  hooks off: disableAllHooks in {where}", WIDTH))
    if (bypass_off := settings.bypass_disabled_by) is not None:
        where = short_source(bypass_off, cwd)
        lines.append(fit(f"  bypassPermissions mode off: set in {where}", WIDTH))
    ignored = key_warnings((s.label, s.written) for s in settings.sources)
    if ignored:
        lines += ["", "Ignored:"] + [fit("  " + line, WIDTH) for line in ignored]
    for path in settings.untrusted_ignored:
        where = short_source(str(path), cwd)
        lines.append(fit(f"  {where}: only its harmless keys (folder not trusted)", WIDTH))
    return lines


def _origin(settings: Settings, key: str, cwd: Path | None) -> str:
    origin = settings.origins.get(key)
    if key in ("defaultMode", "additionalDirectories", "disableBypassPermissionsMode"):
        origin = _permission_origin(settings, key)
    return short_source(origin, cwd) if origin else ""


def _permission_origin(settings: Settings, key: str) -> str | None:
    for source in reversed(settings.sources):
        permissions = source.data.get("permissions")
        if isinstance(permissions, dict) and key in permissions:
            return source.label
    return None


def auth_source(runtime: Runtime) -> str:
    """Where the session's API credential comes from, in a few words (never the key)."""
    from agent.model.api_key_helper import ApiKeyHelper
    from tui.session.credentials import key_source

    helper = runtime.agent.client.key_helper
    origin = None
    if isinstance(helper, ApiKeyHelper):
        origin = short_source(runtime.settings.origins.get("apiKeyHelper", "settings"), runtime.cwd)
    return key_source(origin)


def model_source(runtime: Runtime) -> str:
    if runtime.options.model:
        return "--model"
    if runtime.settings.model:
        return short_source(runtime.settings.origins.get("model", ""), runtime.cwd)
    if os.environ.get("ANTHROPIC_MODEL"):
        return "ANTHROPIC_MODEL"
    return "default"


@command("config", "/config", "Show the settings in force and the file each came from")
async def _config(runtime: Runtime, _args: str) -> CommandResult:
    settings = runtime.settings
    lines = settings_lines(settings, runtime.cwd)
    data = {
        "sources": [{"kind": s.kind, "path": s.label} for s in settings.sources],
        "values": {
            k: {"value": v, "source": settings.origins.get(k)} for k, v in settings.raw.items()
        },
    }
    return CommandResult("\n".join(lines), data={"config": data})


@command("status", "/status", "Show the version, session, model, account and settings sources")
async def _status(runtime: Runtime, _args: str) -> CommandResult:
    from agent import __version__

    rows = [
        ("Version", f"ccx {__version__}"),
        ("Session", runtime.session.id),
        ("Folder", str(runtime.cwd)),
        *([("Working in", str(runtime.directory.current))] if runtime.worktrees.active else []),
        ("Model", f"{runtime.model} (from {model_source(runtime)})"),
        ("Permission mode", runtime.gate.mode),
        ("API credential", auth_source(runtime)),
    ]
    sources = ", ".join(short_source(s.label, runtime.cwd) for s in runtime.settings.sources)
    rows.append(("Settings", sources or "none (defaults)"))
    if runtime.settings.hooks_disabled_by is not None:
        rows.append(("Hooks", "off (disableAllHooks)"))
    lines = [fit(f"  {name:<16} {value}", WIDTH) for name, value in rows]
    data = {name.lower().replace(" ", "_"): value for name, value in rows}
    return CommandResult("\n".join(lines), data={"status": data})
