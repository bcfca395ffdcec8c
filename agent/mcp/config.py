"""Where MCP servers are configured, read the way Claude Code reads them.

Scopes, lowest priority first: the user's (``~/.claude.json`` ``mcpServers``
and ccx's own ``settings.json`` ``mcpServers``), the project's ``.mcp.json``,
the local one (``~/.claude.json`` ``projects[<dir>].mcpServers``), then
``--mcp-config`` files or JSON. A server's strings take ``${VAR}`` and
``${VAR:-default}`` from the environment; a variable that is unset with no
default makes that server fail with a message naming it. A broken file is a
warning, never a crash. A server's name may hold any printable characters (a dot, a
space): its tools' names are made valid for the API by ``agent.mcp.names``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRANSPORTS = ("stdio", "http", "sse", "sdk")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# Any printable name, as Claude Code takes: ``agent.mcp.names`` makes the tools' names valid.
_NAME = re.compile(r"[^\x00-\x1f\x7f]+")


@dataclass
class ServerConfig:
    name: str
    transport: str  # "stdio", "http", "sse" or "sdk" (the Agent SDK's in-process server)
    scope: str  # "user", "project", "local", "dynamic" (--mcp-config) or "plugin"
    source: str  # the file (or "--mcp-config") it came from
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # a configuration problem: the server is shown failed, never started


@dataclass
class McpConfig:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def load_mcp_config(
    project_dir: Path,
    ccx_config_dir: Path,
    extra: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> McpConfig:
    """Every configured server by name; later scopes replace earlier ones of the same name."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    config = McpConfig()
    claude_json = _read_json(home / ".claude.json", config.warnings, quiet_missing=True)
    _add(config, claude_json.get("mcpServers"), "user", str(home / ".claude.json"), env)
    ccx_settings = ccx_config_dir / "settings.json"
    _add(
        config,
        _read_json(ccx_settings, config.warnings, True).get("mcpServers"),
        "user",
        str(ccx_settings),
        env,
    )
    mcp_json = project_dir / ".mcp.json"
    _add(
        config,
        _read_json(mcp_json, config.warnings, True).get("mcpServers"),
        "project",
        str(mcp_json),
        env,
    )
    projects = claude_json.get("projects")
    local = projects.get(str(project_dir)) if isinstance(projects, dict) else None
    if isinstance(local, dict):
        _add(config, local.get("mcpServers"), "local", str(home / ".claude.json"), env)
    add_mcp_config_values(config, extra or [], env)
    return config


def add_mcp_config_values(config: McpConfig, values: list[str], env: Mapping[str, str]) -> None:
    """The servers of ``--mcp-config``'s values (files or JSON), scope "dynamic", in order."""
    for value in values:
        raw, source = _mcp_config_argument(value, config.warnings)
        _add(config, raw.get("mcpServers"), "dynamic", source, env)


def _mcp_config_argument(value: str, warnings: list[str]) -> tuple[dict[str, Any], str]:
    """``--mcp-config`` takes a file or the JSON itself."""
    if value.lstrip().startswith("{"):
        try:
            raw = json.loads(value)
        except json.JSONDecodeError as exc:
            warnings.append(f"--mcp-config: not valid JSON ({exc}); no servers taken from it")
            return {}, "--mcp-config"
        return (raw if isinstance(raw, dict) else {}), "--mcp-config"
    path = Path(value).expanduser()
    if not path.is_file():
        warnings.append(f"--mcp-config: {path} is not a file; no servers taken from it")
        return {}, str(path)
    return _read_json(path, warnings, False), str(path)


def _read_json(path: Path, warnings: list[str], quiet_missing: bool) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if not quiet_missing:
            warnings.append(f"{path}: not found")
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{path}: cannot be read ({exc}); its MCP servers are skipped")
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(f"{path}: not valid JSON ({exc}); its MCP servers are skipped")
        return {}
    if not isinstance(raw, dict):
        warnings.append(f"{path}: not a JSON object; its MCP servers are skipped")
        return {}
    return raw


def add_servers(
    config: McpConfig, servers: Any, scope: str, source: str, env: Mapping[str, str] | None = None
) -> None:
    """More servers (a plugin's ``mcpServers``), each in ``scope``, read as the files' are."""
    _add(config, servers, scope, source, os.environ if env is None else env)


def _add(config: McpConfig, servers: Any, scope: str, source: str, env: Mapping[str, str]) -> None:
    if servers is None:
        return
    if not isinstance(servers, dict):
        config.warnings.append(f"{source}: mcpServers is not an object; skipped")
        return
    for name, raw in servers.items():
        if not _NAME.fullmatch(str(name)):
            config.warnings.append(
                f"{source}: MCP server name {name!r} is empty or holds control characters; skipped"
            )
            continue
        config.servers[name] = parse_server(str(name), raw, scope, source, env)


def parse_server(
    name: str, raw: Any, scope: str, source: str, env: Mapping[str, str]
) -> ServerConfig:
    """One ``mcpServers`` entry; what is wrong with it lands in ``error``."""
    server = ServerConfig(name, "stdio", scope, source)
    if not isinstance(raw, dict):
        server.error = "its configuration is not an object"
        return server
    kind = raw.get("type") or ("stdio" if "command" in raw else "http" if "url" in raw else None)
    if kind == "streamable-http":
        kind = "http"
    if kind is None:
        server.error = "it needs a command (stdio) or a url (http, sse)"
        return server
    if kind not in TRANSPORTS:
        server.error = f"unknown transport type {raw.get('type')!r} (use stdio, http or sse)"
        return server
    server.transport = kind
    missing: list[str] = []
    if kind == "sdk":  # served by the Agent SDK through the control protocol: nothing to start
        return server
    if kind == "stdio":
        if not isinstance(raw.get("command"), str) or not raw["command"]:
            server.error = "a stdio server needs a command"
            return server
        server.command = expand(raw["command"], env, missing)
        server.args = [expand(str(a), env, missing) for a in _list(raw.get("args"))]
        server.env = {
            str(k): expand(str(v), env, missing) for k, v in _dict(raw.get("env")).items()
        }
    else:
        if not isinstance(raw.get("url"), str) or not raw["url"]:
            server.error = f"an {kind} server needs a url"
            return server
        server.url = expand(raw["url"], env, missing)
        server.headers = {
            str(k): expand(str(v), env, missing) for k, v in _dict(raw.get("headers")).items()
        }
    if missing:
        names = ", ".join(sorted(set(missing)))
        server.error = f"missing environment variables: {names}"
    return server


def expand(text: str, env: Mapping[str, str], missing: list[str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` from ``env``; unset names without a default go to
    ``missing`` (and stay as written)."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        missing.append(name)
        return match.group(0)

    return _VAR.sub(one, text)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}
