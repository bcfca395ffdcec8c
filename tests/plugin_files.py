"""A plugin folder for the tests: a command, an agent, a skill, a hook and an MCP server.

``write_plugin(root)`` lays out Claude Code's plugin format under ``root``: the
manifest, ``commands/greet.md`` and ``commands/ops/deploy.md``, ``agents/reviewer.md``,
``skills/tidy/SKILL.md``, a ``UserPromptSubmit`` hook in ``hooks/hooks.json`` that
writes the plugin's folder (from ``${CLAUDE_PLUGIN_ROOT}`` and the environment) to
``hook_marker``, and ``.mcp.json`` starting the test MCP server copied into the plugin
(``${CLAUDE_PLUGIN_ROOT}/server.py``).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.mcp.servers import SERVER


def write_plugin(
    root: Path,
    name: str = "demo",
    hook_marker: Path | None = None,
    server: bool = True,
    server_marker: Path | None = None,
) -> Path:
    """The plugin at ``root``; ``server_marker``: a file the MCP server's start touches."""
    files = {
        ".claude-plugin/plugin.json": json.dumps(
            {"name": name, "version": "1.2.0", "description": "A plugin for the tests",
             "author": {"name": "Tests"}}
        ),
        "commands/greet.md": (
            "---\ndescription: Greets someone\nargument-hint: [name]\n---\n"
            "Greet $ARGUMENTS warmly. Helpers live in ${CLAUDE_PLUGIN_ROOT}/bin.\n"
        ),
        "commands/ops/deploy.md": "---\ndescription: Deploys\n---\nDeploy the app.\n",
        "agents/reviewer.md": (
            "---\nname: reviewer\ndescription: Reviews a change for bugs\ntools: Read, Grep\n"
            "---\nYou review changes. Report bugs only.\n"
        ),
        "skills/tidy/SKILL.md": (
            "---\nname: tidy\ndescription: Tidies a folder\n---\n"
            "Tidy the folder with ${CLAUDE_PLUGIN_ROOT}/bin/tidy.\n"
        ),
    }  # fmt: skip
    if hook_marker is not None:
        command = f'echo "${{CLAUDE_PLUGIN_ROOT}} $CLAUDE_PLUGIN_ROOT" > {hook_marker}'
        hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}
        files["hooks/hooks.json"] = json.dumps({"description": "test hooks", "hooks": hooks})
    if server:
        args = ["${CLAUDE_PLUGIN_ROOT}/server.py"]
        entry: dict[str, object] = {"command": sys.executable, "args": args}
        if server_marker is not None:
            script = f'touch {server_marker}; exec {sys.executable} "$0"'
            entry = {"command": "sh", "args": ["-c", script, "${CLAUDE_PLUGIN_ROOT}/server.py"]}
        files[".mcp.json"] = json.dumps({"mcpServers": {"tools": entry}})
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if server:
        shutil.copy(SERVER, root / "server.py")
    return root


def write_marketplace(root: Path, name: str, plugins: dict[str, str]) -> Path:
    """A local marketplace at ``root`` listing ``plugins`` (name -> relative source)."""
    listed = [{"name": n, "source": s, "description": f"{n} plugin"} for n, s in plugins.items()]
    path = root / ".claude-plugin" / "marketplace.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "owner": {"name": "Tests"}, "plugins": listed}))
    return root
