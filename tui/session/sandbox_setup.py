"""The Bash sandbox policy of a session, from the command line, the environment and settings.

On or off: ``--sandbox`` / ``--no-sandbox``, else ``CCX_SANDBOX=1|0``, else the
settings key ``sandbox.enabled`` (Claude Code's), else on — whenever a backend
works here. The network: ``--[no-]sandbox-network``, else
``CCX_SANDBOX_NETWORK=1|0``, else ``sandbox.allowNetwork`` (ccx's key: Claude
Code filters by domain through a proxy, ccx can only allow or refuse it all),
else allowed. ``sandbox.filesystem.allowWrite`` / ``denyRead`` (Claude Code's)
add writable trees and hidden paths (``//abs``, ``~/…``, absolute, or relative
to the project root); Read deny rules with a path hide what they match.
``sandbox.network.allowUnixSockets`` (paths) and ``allowAllUnixSockets``
(Claude Code's) let commands reach the user's Unix sockets, which are
otherwise refused. ``CCX_SANDBOX_BACKEND=bwrap|landlock`` picks a backend.

A repository's own settings may tighten the sandbox but never loosen it: the
``CCX_SANDBOX*`` variables are read from the environment ccx started in
(never from a settings file's ``env``), and turning it off, ``allowWrite`` and
the socket keys count only from the user's own settings file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.core.events import NoticeLevel
from agent.core.locations import config_dir
from agent.permissions.gate import PermissionGate
from agent.permissions.safe_git import hooks_path
from agent.permissions.settings import (
    MANAGED_ENV,
    Settings,
    managed_settings_file,
    project_root,
    user_settings_files,
)
from tools.sandbox import SandboxPolicy, choose_backend, landlock
from tui.session.options import RunOptions
from tui.warm import policy as warm

ENV_SWITCH = "CCX_SANDBOX"
ENV_NETWORK = "CCX_SANDBOX_NETWORK"
ENV_BACKEND = "CCX_SANDBOX_BACKEND"
# Read only from the environment ccx starts in: a settings file's env cannot set them.
LAUNCH_ONLY_VARIABLES = frozenset(
    {
        ENV_SWITCH,
        ENV_NETWORK,
        ENV_BACKEND,
        "CCX_CONFIG_DIR",
        "CCX_WARM",
        "CCX_WARM_IDLE_S",
        MANAGED_ENV,  # a settings file must not move the policy that binds it
    }
)
_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


@dataclass
class SandboxSetup:
    policy: SandboxPolicy
    requested: bool  # turned on explicitly (flag, env or settings), not just by default
    notices: list[tuple[str, NoticeLevel]] = field(default_factory=list)  # (text, level)


def build_sandbox(
    options: RunOptions,
    settings: Settings,
    gate: PermissionGate | None,
    cwd: Path,
    env: Mapping[str, str] = os.environ,
    user_settings: Path | None = None,
) -> SandboxSetup:
    """The policy for this session, and what to tell the user about it (each once).

    A project's settings may tighten the sandbox but not loosen it: turning it
    off and ``allowWrite`` count only from the user's own settings file
    (``user_settings``, default ``~/.claude/settings.json`` and ``~/.ccx/settings.json``)
    and the machine's managed file, so a repository cannot switch off what protects
    the user from it; the network is off if any file says so; ``denyRead`` adds up
    across files.
    """
    notices: list[tuple[str, NoticeLevel]] = []
    own = [user_settings] if user_settings else [*user_settings_files(), managed_settings_file()]
    objects = _sandbox_objects(settings, notices)
    user: dict[str, Any] = {}
    for path, obj in objects:  # lowest first: the later file's keys win
        if path in own:
            user = {**user, **obj}
    project = [obj for path, obj in objects if path not in own]
    enabled_setting = user.get("enabled")
    if any(obj.get("enabled") is True for obj in project) and enabled_setting is None:
        enabled_setting = True
    if any(obj.get("enabled") is False for obj in project):
        notices.append((_NOT_FROM_PROJECT.format(what="turn the Bash sandbox off"), "warning"))
    enabled, requested = _switch(
        options.sandbox, env, ENV_SWITCH, enabled_setting, "sandbox.enabled", notices
    )
    network_settings = [obj.get("allowNetwork") for _, obj in objects]
    network_setting = False if False in network_settings else user.get("allowNetwork")
    network, _ = _switch(
        options.sandbox_network, env, ENV_NETWORK, network_setting, "sandbox.allowNetwork",
        notices,
    )  # fmt: skip
    root = project_root(cwd)
    if any(_filesystem(obj).get("allowWrite") for obj in project):
        notices.append((_NOT_FROM_PROJECT.format(what="add writable paths"), "warning"))
    if any(_sockets_keys(obj) for obj in project):
        notices.append((_NOT_FROM_PROJECT.format(what="open Unix sockets"), "warning"))
    user_network = _object(user, "network")
    all_sockets = user_network.get("allowAllUnixSockets") is True
    sockets = _paths(user_network.get("allowUnixSockets"), root, "allowUnixSockets", notices)
    denied = [
        path
        for _, obj in objects
        for path in _paths(_filesystem(obj).get("denyRead"), root, "denyRead", notices)
    ]
    policy = SandboxPolicy(
        enabled=enabled,
        project_dirs=tuple(dict.fromkeys([cwd, root])),
        extra_writable=_paths(_filesystem(user).get("allowWrite"), root, "allowWrite", notices),
        denied_reads=tuple(dict.fromkeys(denied)),
        network=network,
        backend=_backend(env, notices),
        deny_read=_read_denied_by(gate) if gate is not None else None,
        extra_protected=tuple(p for p in [hooks_path(root), *ccx_code_paths()] if p is not None),
        hidden=(warm.socket_folder(),),
        allowed_sockets=sockets,
        all_sockets=all_sockets,
    )
    if enabled and landlock.unavailable_reason() is not None:  # else bwrap is probed later
        backend, reason = choose_backend(policy)
        if backend is None:
            level: NoticeLevel = "warning" if requested else "info"
            notices.append((f"Bash commands run without an OS sandbox: {reason}.", level))
    return SandboxSetup(policy, requested and enabled, notices)


def ccx_code_paths() -> list[Path]:
    """What in ccx's own folder a later ccx would run unsandboxed: the user's settings
    (hooks, status line, key helper) and the start-up caches (compiled modules and
    dataclass methods, the tools' schemas). Read-only to a sandboxed command when the
    folder lies in a tree it may write (a project at ``~``, ``CCX_CONFIG_DIR`` in the
    project or a temp folder); elsewhere it is so anyway. Files, not the cache folder: ccx
    itself writes others there while a command runs (the model's limits), which the sandbox
    would take for the command's."""
    from agent.core import code_bundle, dataclass_code
    from tui.session.tool_schema_cache import CACHE_FILE

    config = config_dir()
    ends = ("app", "headless")
    tables = [dataclass_code.cache_file(config, end) for end in ends]
    bundles = [code_bundle.cache_file(config, end) for end in ends]
    bundles += [code_bundle.stamp_file(bundle) for bundle in bundles]
    return [config / "settings.json", *tables, *bundles, config / CACHE_FILE]


_NOT_FROM_PROJECT = (
    "Ignoring a project's sandbox setting: project settings cannot {what}; use --no-sandbox, "
    "CCX_SANDBOX=0 or your own settings file"
)


def _sandbox_objects(
    settings: Settings, notices: list[tuple[str, NoticeLevel]]
) -> list[tuple[Path, dict[str, Any]]]:
    """Each settings file's ``sandbox`` object (the merged view would lose who set what)."""
    objects = []
    for path in settings.files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # load_settings has reported it
        value = data.get("sandbox") if isinstance(data, dict) else None
        if value is None:
            continue
        if not isinstance(value, dict):
            notices.append((f'Ignoring "sandbox" in {path}: expected an object', "warning"))
            continue
        objects.append((path, value))
    return objects


def _filesystem(config: dict[str, Any]) -> dict[str, Any]:
    return _object(config, "filesystem")


def _object(config: dict[str, Any], key: str) -> dict[str, Any]:
    value = config.get(key)
    return value if isinstance(value, dict) else {}


def _sockets_keys(config: dict[str, Any]) -> bool:
    network = _object(config, "network")
    return bool(network.get("allowUnixSockets")) or network.get("allowAllUnixSockets") is True


def _backend(env: Mapping[str, str], notices: list[tuple[str, NoticeLevel]]) -> str | None:
    raw = env.get(ENV_BACKEND, "").strip().lower()
    if not raw:
        return None
    names = {"bwrap": "bwrap", "bubblewrap": "bwrap", "landlock": "landlock"}
    if raw not in names:
        notices.append((f"Ignoring {ENV_BACKEND}={raw!r}: expected bwrap or landlock", "warning"))
        return None
    return names[raw]


def _switch(
    flag: bool | None,
    env: Mapping[str, str],
    variable: str,
    setting: Any,
    key: str,
    notices: list[tuple[str, NoticeLevel]],
) -> tuple[bool, bool]:
    """(value, set explicitly): the flag, else the variable, else the setting, else on."""
    if flag is not None:
        return flag, True
    raw = env.get(variable, "").strip()
    if raw:
        if raw.lower() in _ON or raw.lower() in _OFF:
            return raw.lower() in _ON, True
        notices.append((f"Ignoring {variable}={raw!r}: expected 1 or 0", "warning"))
    if isinstance(setting, bool):
        return setting, True
    if setting is not None:
        notices.append(
            (f"Ignoring the setting {key}={setting!r}: expected true or false", "warning")
        )
    return True, False


def _paths(
    value: Any, root: Path, key: str, notices: list[tuple[str, NoticeLevel]]
) -> tuple[Path, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        notices.append((f"Ignoring sandbox.filesystem.{key}: expected a list of paths", "warning"))
        return ()
    paths = []
    for text in value:
        if text.startswith("//"):
            paths.append(Path(text[1:]))
        elif text == "~" or text.startswith("~/"):
            paths.append(Path(text).expanduser())
        else:
            paths.append(root / text)  # an absolute path stays absolute
    return tuple(paths)


def _read_denied_by(gate: PermissionGate) -> Callable[[str], bool]:
    def denied(path: str) -> bool:
        decision = gate.check("Read", {"file_path": path}, False)
        rule = decision.rule
        return decision.behavior == "deny" and rule is not None and rule.specifier is not None

    return denied
