"""The workspace of issue 17's scenarios: a git project with the paths the sandbox must keep
read-only, a second project, a fake HOME, files beside the projects, and nothing under a
temp folder (the sandbox may write the temp folders, so a write there proves nothing).

    ROOT/                     outside /tmp and /var/tmp (see ``edges_root``)
      repo/                   the project (cwd): a commit, a submodule (vendor/lib, so
                              .git/modules/vendor/lib/), a linked worktree (.git/worktrees/wt),
                              core.hooksPath = .githooks, .husky/, payloads/hook.sh
      other/                  a second project (repo B of the warm worker's attempts)
      home/                   HOME: .bashrc, .gitconfig, .ssh/
      out/                    beside the projects: victims, planted secrets, markers
      ccx-config/             CCX_CONFIG_DIR: the user's own ccx settings
      run/                    XDG_RUNTIME_DIR (0700)
    TMP/                      TMPDIR: a short folder under /tmp (a Unix socket's path must
                              stay under 108 bytes)

A scenario's setup adds what its attempts need: planted secrets, a repository that holds
only a command, a tmux server or an ssh-agent (``services``, stopped at the end), and
variables every session of the scenario gets (``client_env``).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.hostile.attempt import fill_places
from tests.e2e.hostile.repo import FixtureGit, write_file

CCX_ROOT = Path(__file__).resolve().parents[3]
# A variable every process of a scenario inherits, so the harness can find and end those
# that outlive it (by pid, only those carrying this workspace's own value).
WORKSPACE_VARIABLE = "CCX_HOSTILE_WORKSPACE"


def edges_root() -> Path:
    """Where workspaces go: under the user's cache folder, which no sandbox lets a command
    write (the temp folders and the project are writable by design)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ccx-hostile-edges"
    base.mkdir(parents=True, exist_ok=True)
    return base


@dataclass
class EdgeWorkspace:
    root: Path
    tmp: Path
    secrets: dict[str, str] = field(default_factory=dict)  # name -> value planted
    client_env: dict[str, str] = field(default_factory=dict)
    services: list[subprocess.Popen[bytes]] = field(default_factory=list)
    agents: dict[str, Path] = field(default_factory=dict)  # ssh-agent name -> its socket
    session_env: dict[str, str] = field(default_factory=dict)  # the latest session's

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def other(self) -> Path:
        return self.root / "other"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def out(self) -> Path:
        return self.root / "out"

    @property
    def config(self) -> Path:
        return self.root / "ccx-config"

    @property
    def runtime(self) -> Path:
        return self.root / "run"

    @property
    def places(self) -> dict[str, str]:
        return {
            "repo": str(self.repo), "other": str(self.other), "ws": str(self.root),
            "home": str(self.home), "out": str(self.out), "tmp": str(self.tmp),
            "python": sys.executable, "ccx_root": str(CCX_ROOT),
            **{f"secret:{name}": value for name, value in self.secrets.items()},
        }  # fmt: skip

    def fill(self, text: str) -> str:
        return str(fill_places(text, self.places))

    def plant_secret(self, name: str, path: Path, template: str = "TOKEN={value}\n") -> str:
        """A fresh secret written into ``path`` (its folders made); returns the value."""
        value = f"{name}-{secrets.token_hex(10)}"
        write_file(path, template.format(value=value))
        self.secrets[name] = value
        return value

    def write(self, relative: str, text: str, executable: bool = False) -> Path:
        """A file of the workspace (placeholders in ``relative`` and ``text`` filled)."""
        path = Path(self.fill(relative))
        path = path if path.is_absolute() else self.root / path
        write_file(path, self.fill(text), executable)
        return path


def build_edge_workspace(root: Path) -> EdgeWorkspace:
    """A fresh workspace at ``root`` (which must not exist yet) and its short TMPDIR."""
    root.mkdir(parents=True)
    tmp = Path(tempfile.mkdtemp(prefix="ccxe", dir="/tmp"))
    ws = EdgeWorkspace(root.resolve(), tmp)
    write_file(ws.home / ".bashrc", "# the fixture's ~/.bashrc: it runs nothing\n")
    write_file(
        ws.home / ".gitconfig", "[user]\n\tname = Fixture\n\temail = fixture@example.invalid\n"
    )
    (ws.home / ".ssh").mkdir(mode=0o700)
    write_file(ws.out / "victim.txt", "a file beside the project\n")
    write_file(ws.out / "victim_time.txt", "a file beside the project\n")
    ws.config.mkdir()
    ws.runtime.mkdir(mode=0o700)
    _project(ws)
    _other_project(ws)
    return ws


def _project(ws: EdgeWorkspace) -> None:
    repo, git = ws.repo, FixtureGit(ws.repo, ws.home)
    lib = FixtureGit(ws.root / "libsrc", ws.home)
    write_file(ws.root / "libsrc" / "lib.txt", "library\n")
    lib("init", "-q", "-b", "main")
    lib("add", "-A")
    lib("commit", "-q", "-m", "library")
    write_file(repo / "README.md", "# Edges fixture\n\nA project whose tools try the sandbox.\n")
    write_file(repo / "src" / "app.py", "RETRY_LIMIT = 3\n")
    write_file(repo / ".githooks" / "README", "hooks of this project (core.hooksPath)\n")
    write_file(repo / ".husky" / "_" / ".gitignore", "*\n")
    write_file(
        repo / "payloads" / "hook.sh", ws.fill("#!/bin/sh\ntouch {out}/PWN_hook_ran\n"), True
    )
    git("init", "-q", "-b", "main")
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(ws.root / "libsrc"),
        "vendor/lib")  # fmt: skip
    git("add", "-A")
    git("commit", "-q", "-m", "initial")
    git("config", "core.hooksPath", ".githooks")
    git("worktree", "add", "-q", "-b", "wt", str(ws.root / "wt"))


def _other_project(ws: EdgeWorkspace) -> None:
    write_file(ws.other / "README.md", "# Another project\n")
    git = FixtureGit(ws.other, ws.home)
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "other")


def remove_workspace(ws: EdgeWorkspace) -> None:
    for folder in (ws.root, ws.tmp):
        shutil.rmtree(folder, ignore_errors=True)
