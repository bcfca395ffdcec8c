"""Paths whose change would run code or loosen ccx's own checks: never written without asking.

Writing ``.git/hooks/pre-commit``, ``.git/config`` (``core.fsmonitor``,
drivers), ``.claude/settings.local.json`` (``"allow": ["Bash"]``), ``.mcp.json``,
a shell rc file or ``~/.gitconfig`` is how a careless or misled model turns
one approved edit into arbitrary commands later. Such writes ask in every
mode but bypassPermissions, whatever allow rule or acceptEdits would say, and
by any route (Write, Edit, a redirection, ``tee``, ``cp``/``mv``/``ln``).
"""

from __future__ import annotations

import os

# Any path with one of these components (the repository's own and nested ones).
PROTECTED_COMPONENTS = {
    ".git": "git's hooks and config run commands",
    ".claude": "Claude Code / ccx settings, hooks and commands live there",
    ".husky": "git hooks live there",
}
PROTECTED_NAMES = {
    ".mcp.json": "it starts MCP servers",
    ".envrc": "direnv runs it on entering the folder",
    ".gitmodules": "it points git at other repositories",
}
# Relative to the home directory.
HOME_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc",
    ".inputrc", ".gitconfig", ".git-credentials", ".npmrc", ".pypirc", ".netrc",
)  # fmt: skip
HOME_DIRS = (".ssh", ".config/git", ".config/fish", ".gnupg", ".ccx", ".claude")


def protected_reason(path: str, home: str, config_dir: str | None = None) -> str | None:
    """Why writing ``path`` (absolute, normalized) must be asked about; None when it need not."""
    for candidate in dict.fromkeys([path, os.path.realpath(path)]):
        reason = _reason(candidate, home, config_dir)
        if reason is not None:
            return reason
    return None


def _reason(path: str, home: str, config_dir: str | None) -> str | None:
    parts = path.split(os.sep)
    for part in _own_tree(parts):
        if part in PROTECTED_COMPONENTS:
            return f"{path} is protected ({PROTECTED_COMPONENTS[part]})"
    name = parts[-1] if parts else ""
    if name in PROTECTED_NAMES:
        return f"{path} is protected ({PROTECTED_NAMES[name]})"
    for base in dict.fromkeys([home, os.path.realpath(home)]):
        rel = _relative(path, base)
        if rel is None:
            continue
        if rel in HOME_FILES:
            return f"{path} is protected (a shell or tool start-up file)"
        if any(rel == d or rel.startswith(d + "/") for d in HOME_DIRS):
            return f"{path} is protected (user configuration)"
    if config_dir and _relative(path, os.path.normpath(config_dir)) is not None:
        return f"{path} is protected (ccx's own settings)"
    return None


def _own_tree(parts: list[str]) -> list[str]:
    """The components that matter: inside a worktree under ``.claude/worktrees/NAME`` (where
    EnterWorktree makes them), those below it; the worktree is a project of its own."""
    for i in range(len(parts) - 4, -1, -1):
        if parts[i] == ".claude" and parts[i + 1] == "worktrees":
            return parts[i + 3 :]
    return parts


def _relative(path: str, base: str) -> str | None:
    base = base.rstrip("/")
    if path.startswith(base + "/"):
        return path[len(base) + 1 :]
    return None
