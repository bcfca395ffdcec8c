"""Running git in a repository without running anything the repository configures.

A repository's own config (``.git/config``, ``config.worktree`` and what they
include) can name programs that git runs on its own: ``core.fsmonitor`` on
every ``git status``, clean/smudge filters and textconv drivers wired up by
``.gitattributes``, an external diff, hooks, a pager. Cloning a hostile
repository must not mean running its code, so whenever ccx runs git for
itself (the start-up snapshot) or lets a read-only git command run without
asking, those keys are overridden from the command line, which beats every
config file:

- keys that are always neutralized, whoever set them: ``core.fsmonitor``
  (false) and ``core.hooksPath`` (/dev/null: hooks are repository content);
- keys that the repository itself sets (scope ``local`` or ``worktree``,
  found with ``git config --list --show-scope``, which runs nothing) and
  whose value is a command: drivers get a harmless stand-in (``cat`` for a
  textconv, ccx's own unified diff for an external diff, an empty filter),
  pagers become ``cat``, editors and helpers ``false``.

The user's own (global and system) settings stay in force. Overrides travel
in ``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n``, which
git also passes on to the git processes it starts for submodules.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

CONFIG_TIMEOUT_S = 2.0
# A stand-in external diff: git calls it with path old-file old-hex old-mode new-file ...
SAFE_DIFF = (
    'ccx_diff() { diff -u --label "a/$1" --label "b/$1" -- "$2" "$5"; [ $? -le 1 ]; }; ccx_diff'
)
ALWAYS = {"core.fsmonitor": "false", "core.hookspath": "/dev/null"}
# Repository-set keys whose value git runs, and what replaces each (matched lower-case).
_COMMAND_KEYS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), value)
    for pattern, value in (
        (r"core\.fsmonitor", "false"),
        (r"core\.hookspath", "/dev/null"),
        (r"core\.pager|pager\..+", "cat"),
        (r"diff\.external|diff\..+\.command", SAFE_DIFF),
        (r"diff\..+\.textconv", "cat"),
        (r"filter\..+\.(clean|smudge|process)", ""),
        (r"filter\..+\.required", "false"),
        (r"merge\..+\.driver", "false"),
        (r"(core|sequence)\.editor", "false"),
        (r"core\.(sshcommand|gitproxy|askpass|alternaterefscommand)", "false"),
        (r"gpg\.program|gpg\..+\.program", "false"),
        (r"credential\.helper|credential\..+\.helper", ""),
        (r"remote\..+\.(uploadpack|receivepack)", "false"),
        (r"log\.showsignature", "false"),
    )
)
_REPO_SCOPES = ("local", "worktree")


def git_executable() -> str | None:
    return shutil.which("git")


def repository_overrides(directories: Iterable[str | os.PathLike[str]]) -> dict[str, str]:
    """The config overrides that keep git from running what the repositories around
    ``directories`` configure (each directory's repository and its submodules)."""
    overrides = dict(ALWAYS)
    executable = git_executable()
    if executable is None:
        return overrides
    for directory in dict.fromkeys(os.fspath(d) for d in directories):
        if not os.path.isdir(directory):
            continue
        for key in _repository_keys(executable, directory):
            value = neutral_value(key)
            if value is not None:
                overrides[key] = value
    return overrides


def neutral_value(key: str) -> str | None:
    """What replaces a config key's value, or None when the key runs nothing."""
    lowered = key.lower()
    for pattern, value in _COMMAND_KEYS:
        if pattern.fullmatch(lowered):
            return value
    return None


def override_env(
    overrides: dict[str, str], base: dict[str, str] | os._Environ[str] | None = None
) -> dict[str, str]:
    """Environment variables that apply ``overrides`` to git and the gits it starts.

    Overrides already in ``base`` (default: this process's environment) are kept
    and ours are numbered after them, so they win.
    """
    base = os.environ if base is None else base
    try:
        first = max(0, int(base.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        first = 0
    env = {"GIT_CONFIG_COUNT": str(first + len(overrides)), "GIT_OPTIONAL_LOCKS": "0"}
    for index, (key, value) in enumerate(overrides.items(), start=first):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def safe_git_env(directories: Iterable[str | os.PathLike[str]]) -> dict[str, str]:
    """``override_env`` for the repositories around ``directories``."""
    return override_env(repository_overrides(directories))


def env_for_command(command: str, cwd: str | os.PathLike[str]) -> dict[str, str]:
    """For the Bash tool: the overrides when every git the command runs is a reading one
    (status, log, diff, show... with whatever options: those need no hooks or drivers), else
    nothing (an approved ``git commit`` keeps its hooks)."""
    from agent.shell.split import iter_all_parts

    if "git" not in command:
        return {}
    parts = iter_all_parts(command)
    gits = [p for p in parts if p.words and os.path.basename(p.words[0]) == "git"]
    if not gits or not all(_reading_git(p.words[1:]) for p in gits):
        return {}
    directories = [os.fspath(cwd)]
    for part in parts:  # `cd sub && git status` reads sub's repository
        if len(part.words) > 1 and part.words[0] in ("cd", "pushd"):
            directories.append(os.path.join(os.fspath(cwd), os.path.expanduser(part.words[1])))
    return safe_git_env(directories)


def _reading_git(args: tuple[str, ...]) -> bool:
    """``git ARGS`` runs one of git's reading subcommands (its options aside)."""
    from agent.shell.git_rules import SAFE_GLOBAL_OPTIONS, SUBCOMMANDS

    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] not in SAFE_GLOBAL_OPTIONS:
            return False
        i += 1
    return i < len(args) and args[i] in SUBCOMMANDS


def hooks_path(directory: str | os.PathLike[str]) -> Path | None:
    """The folder ``core.hooksPath`` names for the repository at ``directory`` (whoever set
    it: system, user or repository), resolved as git does (relative to the top of the
    working tree, ``~`` expanded); None when it is not set or git is missing."""
    executable = git_executable()
    if executable is None or not os.path.isdir(directory):
        return None
    output = _run([executable, "config", "--list", "--show-scope", "-z"], os.fspath(directory))
    value = None
    fields = (output or "").split("\0")
    for index in range(0, len(fields) - 1, 2):
        scope, entry = fields[index], fields[index + 1]
        key, _, found = entry.partition("\n")
        if key.lower() == "core.hookspath" and scope != "command":  # ccx's own override
            value = found
    if not value:
        return None
    path = Path(os.path.expanduser(value))
    if not path.is_absolute():
        top = _run([executable, "rev-parse", "--show-toplevel"], os.fspath(directory))
        if not top or not top.strip():
            return None
        path = Path(top.strip()) / path
    return path


def _repository_keys(executable: str, directory: str) -> list[str]:
    """Config keys set by the repository at ``directory`` and by its submodules."""
    keys = _config_keys([executable, "config", "--list", "--show-scope", "-z"], directory)
    git_dir = _git_dir(executable, directory)
    if git_dir is not None:
        for config in _submodule_configs(git_dir):
            keys += _config_keys(
                [executable, "config", "--file", str(config), "--list", "-z"],
                directory,
                scoped=False,
            )
    return keys


def _config_keys(command: list[str], cwd: str, scoped: bool = True) -> list[str]:
    output = _run(command, cwd)
    if output is None:
        return []
    keys = []
    fields = output.split("\0")
    step = 2 if scoped else 1
    for index in range(0, len(fields) - step + 1, step):
        scope = fields[index] if scoped else "local"
        entry = fields[index + step - 1]
        if scope in _REPO_SCOPES and entry:
            keys.append(entry.split("\n", 1)[0])
    return keys


def _git_dir(executable: str, directory: str) -> Path | None:
    output = _run([executable, "rev-parse", "--absolute-git-dir"], directory)
    if not output or not output.strip():
        return None
    return Path(output.strip())


def _submodule_configs(git_dir: Path, limit: int = 50) -> list[Path]:
    modules = git_dir / "modules"
    if not modules.is_dir():
        return []
    found: list[Path] = []
    for root, dirs, files in os.walk(modules):
        if "config" in files and "HEAD" in files:
            found.append(Path(root) / "config")
            dirs[:] = [d for d in dirs if d == "modules"]  # only nested submodules below
        if len(found) >= limit:
            break
    return found


def _run(command: list[str], cwd: str) -> str | None:
    """Run a git command that reads config only; its output, or None."""
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=CONFIG_TIMEOUT_S,
            env=_quiet_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def _quiet_env() -> dict[str, str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    env.update(override_env(dict(ALWAYS)))
    return env
