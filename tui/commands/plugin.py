"""``/plugin``: the session's plugins and the marketplaces' ones, turning them on and off,
and declaring local marketplaces.

``/plugin`` (or ``/plugin list``) shows every plugin: loaded in this session, turned
on or off in the settings, and offered by a declared marketplace but not installed.
``/plugin enable ID`` (alias ``install``) and ``/plugin disable ID`` write
``enabledPlugins`` (``--scope user|project|local``); ``/plugin marketplace add PATH``,
``list`` and ``remove NAME`` manage ``extraKnownMarketplaces``
(agent.plugins.choices writes them). Plugins load when a session starts, so a
change applies from the next one.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from agent.permissions.settings import Settings, load_settings, read_settings_arg
from agent.plugins.choices import (
    SCOPES,
    PluginChoiceError,
    add_marketplace,
    remove_marketplace,
    set_enabled,
)
from agent.plugins.loader import enabled_ids, enabled_scope
from agent.plugins.marketplaces import declared
from tui.commands.registry import CommandResult, command

if TYPE_CHECKING:
    from tui.session.runtime import Runtime

USAGE = (
    "/plugin [list | enable ID | disable ID | install ID | marketplace add PATH | "
    "marketplace list | marketplace remove NAME] [--scope user|project|local]"
)
SHORT_USAGE = "/plugin [list|enable ID|disable ID|marketplace]"  # /help's column
NEXT_SESSION = "It applies from the next session (restart ccx, or continue with ccx -c)."


@command("plugin", SHORT_USAGE, "List plugins, enable or disable one, add a local marketplace")
async def _plugin(runtime: Runtime, args: str) -> CommandResult:
    try:
        words = shlex.split(args)
    except ValueError as exc:
        return CommandResult(f"/plugin: {exc}", is_error=True)
    scope, words = _scope(words)
    settings = _settings_now(runtime)
    try:
        if scope is not None and scope not in SCOPES:
            raise PluginChoiceError(f"Unknown scope {scope!r}; use {', '.join(SCOPES)}")
        if not words or words == ["list"]:
            return CommandResult(listing(runtime, settings))
        verb, rest = words[0], words[1:]
        if verb in ("enable", "install", "disable") and len(rest) == 1:
            return _switch(runtime, settings, rest[0], verb != "disable", scope)
        if verb == "marketplace" and rest:
            return _marketplace(runtime, settings, rest, scope)
    except PluginChoiceError as exc:
        return CommandResult(f"/plugin: {exc}", is_error=True)
    return CommandResult(f"Usage: {USAGE}", is_error=True)


def _scope(words: list[str]) -> tuple[str | None, list[str]]:
    """``--scope X`` (or ``--scope=X``) taken out of the words."""
    rest: list[str] = []
    scope = None
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--scope" and index + 1 < len(words):
            scope, index = words[index + 1], index + 2
            continue
        if word.startswith("--scope="):
            scope = word.partition("=")[2]
        else:
            rest.append(word)
        index += 1
    return scope, rest


def _settings_now(runtime: Runtime) -> Settings:
    """The settings as the files say now (an earlier /plugin may have changed them)."""
    options = runtime.options
    flag = None
    if options.settings is not None:
        try:
            flag = read_settings_arg(options.settings)
        except ValueError:
            flag = None
    return load_settings(
        runtime.cwd, trusted=options.project_trusted, sources=options.setting_sources, flag=flag
    )


def _switch(
    runtime: Runtime, settings: Settings, wanted: str, on: bool, scope: str | None
) -> CommandResult:
    inline = runtime.plugins.find(wanted)
    if inline is not None and inline.scope == "flag":
        raise PluginChoiceError(
            f"{inline.source} is loaded from --plugin-dir {inline.root} for this session only; "
            "start ccx without that flag to leave it out"
        )
    choice = set_enabled(settings, runtime.cwd, wanted, on, scope)
    word = "Enabled" if on else "Disabled"
    return CommandResult(
        f"{word} {choice.plugin_id} ({choice.scope} settings: {choice.path}). {NEXT_SESSION}",
        data={"plugin": choice.plugin_id, "enabled": on, "scope": choice.scope},
    )


def _marketplace(
    runtime: Runtime, settings: Settings, words: list[str], scope: str | None
) -> CommandResult:
    verb, rest = words[0], words[1:]
    if verb == "add" and len(rest) == 1:
        market, path = add_marketplace(Path(rest[0]), runtime.cwd, scope or "user")
        names = ", ".join(market.entries) or "no plugins"
        return CommandResult(
            f"Added the marketplace {market.name} ({market.root}; it offers {names}) to {path}. "
            f"Turn a plugin on with /plugin enable NAME@{market.name}."
        )
    if verb == "remove" and len(rest) == 1:
        path = remove_marketplace(settings, runtime.cwd, rest[0])
        return CommandResult(f"Removed the marketplace {rest[0]} from {path}. {NEXT_SESSION}")
    if verb == "list" and not rest:
        return CommandResult(_markets_text(runtime, settings) or "No marketplaces are declared.")
    return CommandResult(f"Usage: {USAGE}", is_error=True)


def listing(runtime: Runtime, settings: Settings) -> str:
    """Every plugin: this session's, the settings' choices, and the marketplaces' offers."""
    lines = ["Plugins:"]
    loaded = runtime.plugins
    chosen = enabled_ids(settings)
    for plugin in loaded.plugins:
        version = f" {plugin.version}" if plugin.version else ""
        where = "--plugin-dir" if plugin.scope == "flag" else f"enabled in {plugin.scope} settings"
        lines.append(f"  ✔ {plugin.source}{version}: loaded, {where} ({plugin.root})")
    shown = {p.source for p in loaded.plugins}
    for plugin_id, on in chosen.items():
        if plugin_id in shown:
            continue
        scope = enabled_scope(settings, plugin_id) or "user"
        state = f"enabled in {scope} settings" if on else f"disabled in {scope} settings"
        note = "; not loaded in this session" if on else ""
        lines.append(f"  {'✔' if on else '✘'} {plugin_id}: {state}{note}")
    if len(lines) == 1:
        lines.append("  none installed")
    markets = _markets_text(runtime, settings, offers=chosen)
    if markets:
        lines += ["", markets]
    problems = loaded.warnings
    if problems:
        lines += ["", "Not loaded at the start:", *(f"  {p}" for p in problems)]
    return "\n".join(lines)


def _markets_text(
    runtime: Runtime, settings: Settings, offers: dict[str, bool] | None = None
) -> str:
    warnings: list[str] = []
    markets = declared(settings, runtime.cwd, warnings)
    lines = []
    if markets:
        lines.append("Marketplaces:")
    for market in markets.values():
        lines.append(f"  {market.name} ({market.root}, {market.scope} settings)")
        for entry in market.entries.values():
            plugin_id = f"{entry.name}@{market.name}"
            state = "installed" if offers and plugin_id in offers else "not installed"
            if entry.problem:
                state = f"not available: {entry.problem}"
            about = f" - {entry.description}" if entry.description else ""
            lines.append(f"    {plugin_id}{about} ({state})")
    lines += [f"  {w}" for w in warnings]
    return "\n".join(lines)
