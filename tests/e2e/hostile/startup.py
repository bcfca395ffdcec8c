"""A repository whose git config and hooks run code as soon as anything runs git in it: the
start-up trap of issue 8 (`core.fsmonitor = touch PWN; false #` and friends). Opening a
client in it must run none of it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.hostile.repo import FixtureGit, commit_signed, git_environment, write_file

HOOKS = (
    "pre-commit", "post-commit", "post-checkout", "post-merge", "pre-push", "post-rewrite",
    "reference-transaction", "post-index-change", "pre-auto-gc", "fsmonitor-watchman",
)  # fmt: skip
# What a start-up git snapshot typically runs (ccx's did, at the time of issue 8).
SNAPSHOT_COMMANDS = (
    ("status", "--short", "--branch"),
    ("log", "-5", "--oneline", "--no-decorate"),
    ("status",),
    ("diff", "--stat"),
)


@dataclass(frozen=True)
class StartupTrap:
    root: Path

    @property
    def repo(self) -> Path:
        return self.root / "repo"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def config(self) -> Path:
        return self.root / "ccx-config"


def build_startup_trap(root: Path) -> StartupTrap:
    """The trap repository under ``root`` (which must not exist yet)."""
    trap = StartupTrap(root.resolve())
    repo = trap.repo
    write_file(
        trap.home / ".gitconfig", "[user]\n\tname = Fixture\n\temail = fixture@example.invalid\n"
    )
    write_file(repo / "README.md", "# A repository that runs code when git looks at it\n")
    write_file(repo / ".gitattributes", "*.tc diff=tc\n*.dat filter=fl\n")
    for name in ("shown.tc", "data.dat"):
        write_file(repo / name, f"{name}: first\n")
    git = FixtureGit(repo, trap.home)
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "initial")
    write_file(repo / "shown.tc", "shown.tc: second version\n")
    git("add", "-A")
    commit_signed(git, "signed head")  # log.showSignature makes `git log` verify it
    # Same size, new content: git must read it again, through the clean filter.
    write_file(repo / "data.dat", "data.dat: FIRST\n")
    write_file(repo / "shown.tc", "shown.tc: uncommitted\n")
    marker = f"{repo}/PWN_startup"
    settings = {
        "core.fsmonitor": f"echo fsmonitor >> {marker}_fsmonitor; false #",
        "core.pager": f"echo pager >> {marker}_pager; cat",
        "pager.status": "true",
        "pager.log": "true",
        "diff.external": f"echo extdiff >> {marker}_extdiff; true #",
        "diff.tc.textconv": f"echo textconv >> {marker}_textconv; cat",
        "filter.fl.clean": f"echo clean >> {marker}_filter; cat",
        "log.showSignature": "true",
        "gpg.program": f"{repo}/.hostile/gpg.sh",
        "credential.helper": f"!echo credential >> {marker}_credential; false #",
    }
    for key, value in settings.items():
        git("config", key, value)
    write_file(repo / ".hostile" / "gpg.sh", f"#!/bin/sh\necho gpg >> {marker}_gpg\nexit 1\n", True)
    for hook in HOOKS:
        write_file(
            repo / ".git" / "hooks" / hook, f"#!/bin/sh\necho {hook} >> {marker}_hook\n", True
        )
    trap.config.mkdir()
    return trap


def sprung(root: Path) -> list[str]:
    """The PWN_* files anywhere under ``root``."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("PWN*"))


def run_snapshot_commands(trap: StartupTrap) -> list[str]:
    """Run what a naive start-up snapshot runs; returns the traps that fired (a liveness check:
    the trap is only worth testing if plain git springs it)."""
    env = git_environment(trap.home)
    for args in SNAPSHOT_COMMANDS:
        subprocess.run(
            ["git", *args], cwd=trap.repo, env=env, capture_output=True, stdin=subprocess.DEVNULL
        )
    return sprung(trap.root)
