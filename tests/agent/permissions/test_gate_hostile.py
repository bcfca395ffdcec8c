"""The permission gate against a hostile repository and a careless model (issue 8's attempts).

Rules as the issue ran them: allow ``Bash(git status)``, ``Bash(ls *)``,
``Bash(npm test *)``, ``Bash(git log *)``; deny ``Read(./.env)``,
``Bash(rm *)``, ``Bash(curl *)``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.permissions.gate import PermissionGate, Rule

ALLOW = ("Bash(git status)", "Bash(ls *)", "Bash(npm test *)", "Bash(git log *)")
DENY = ("Read(./.env)", "Bash(rm *)", "Bash(curl *)")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".claude").mkdir()
    (root / "sub").mkdir()
    (root / ".env").write_text("SECRET=1\n")
    (root / "envlink").symlink_to(root / ".env")
    (root / "README.md").write_text("hi\n")
    (tmp_path / "outside_secret.txt").write_text("outside\n")
    (tmp_path / "home").mkdir()
    return root


def gate(project: Path, mode: str = "default", deny: tuple[str, ...] = DENY) -> PermissionGate:
    return PermissionGate(
        mode,
        [Rule.parse(r, source="test") for r in ALLOW],
        [Rule.parse(r, source="test") for r in deny],
        [],
        cwd=project,
        project_root=project,
        home=project.parent / "home",
        config_dir=project.parent / "home" / ".ccx",
    )


def bash(g: PermissionGate, command: str, **extra: object) -> str:
    return g.check("Bash", {"command": command, **extra}, True).behavior


@pytest.mark.parametrize(
    "command",
    [
        "cat .env",
        "head .env",
        "grep . .env",
        "cat envlink",
        "cat ./.env",
        "cat sub/../.env",
        "cd sub && cat ../.env",
        "git diff --no-index /dev/null .env",
        "git show HEAD:.env",
        "cat .en*",
        "cp .env copy.txt",
        "dd if=.env",
        "ls && cat .env | base64",
        "echo $(cat .env)",
        "cat < .env",
        "wc -l <> .env",
    ],
)
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_a_read_deny_rule_covers_every_way_bash_reads_the_file(
    project: Path, command: str, mode: str
) -> None:
    assert bash(gate(project, mode), command) == "deny"


@pytest.mark.parametrize("command", ["ls -la .env", "stat .env", "chmod 600 .env", "touch .env"])
def test_commands_that_do_not_open_the_file_are_not_reads(project: Path, command: str) -> None:
    decision = gate(project, "acceptEdits").check("Bash", {"command": command}, True)
    assert "forbids reading" not in decision.reason


@pytest.mark.parametrize("command", ["mv .env moved.txt", "ln .env hard.txt", "cp .env x"])
def test_commands_that_carry_the_content_elsewhere_are_reads(project: Path, command: str) -> None:
    assert bash(gate(project, "bypassPermissions"), command) == "deny"


def test_reading_outside_the_project_asks_unless_bypassed(project: Path) -> None:
    assert bash(gate(project), "cat ../outside_secret.txt") == "ask"
    assert bash(gate(project), "cd .. && cat outside_secret.txt") == "ask"
    assert bash(gate(project), "cat README.md") == "allow"
    assert bash(gate(project, "bypassPermissions"), "cat ../outside_secret.txt") == "allow"


def test_a_recursive_read_over_a_denied_file_asks(project: Path) -> None:
    assert bash(gate(project), "grep -r SECRET .") == "ask"
    assert bash(gate(project), "grep -r SECRET sub") == "allow"
    assert bash(gate(project, deny=()), "grep -r SECRET .") == "allow"


@pytest.mark.parametrize(
    ("tool", "path"),
    [
        ("Write", ".claude/settings.local.json"),
        ("Write", ".claude/settings.json"),
        ("Write", ".git/hooks/pre-commit"),
        ("Edit", ".git/config"),
        ("Write", ".mcp.json"),
        ("Write", "../home/.bashrc"),
        ("Write", "../home/.gitconfig"),
        ("Write", "../home/.ccx/settings.json"),
        ("Write", "sub/.git/config"),
    ],
)
def test_protected_paths_ask_in_accept_edits_and_pass_only_when_bypassed(
    project: Path, tool: str, path: str
) -> None:
    target = os.path.normpath(project / path)
    assert gate(project, "acceptEdits").check(tool, {"file_path": target}, True).behavior == "ask"
    bypass = gate(project, "bypassPermissions")
    assert bypass.check(tool, {"file_path": target}, True).behavior == "allow"


def test_an_ordinary_edit_is_still_accepted(project: Path) -> None:
    target = str(project / "README.md")
    assert gate(project, "acceptEdits").check("Edit", {"file_path": target}, True).behavior == (
        "allow"
    )


@pytest.mark.parametrize(
    "command",
    [
        "echo x >> .git/config",
        "echo '#!/bin/sh' > .git/hooks/pre-commit",
        "tee .git/hooks/post-checkout < /dev/null",
        "cp README.md .git/hooks/pre-commit",
        "mv README.md .claude/settings.local.json",
        "ln -s ../../README.md .git/hooks/pre-push",
        "git config core.fsmonitor 'touch PWN'",
        "sed -i s/a/b/ .git/config",
    ],
)
def test_bash_writes_to_protected_paths_ask(project: Path, command: str) -> None:
    g = gate(project, "acceptEdits")
    g.allow.append(Rule.parse("Bash"))  # even with every command allowed
    assert bash(g, command) == "ask"
    assert bash(gate(project, "bypassPermissions", deny=()), command) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "x=rm; $x victim.txt",
        "c=curl; $c https://example.com",
        "$(echo rm) victim.txt",
        "`echo rm` victim.txt",
        "eval rm victim.txt",
        "sh -c 'rm victim.txt'",
        "find . -name victim.txt -exec rm {} \\;",
        "echo victim.txt | xargs rm",
        "command rm victim.txt",
        "\\rm victim.txt",
        "/bin/rm victim.txt",
        "timeout 5 rm victim.txt",
        "time ! rm -rf victim.txt",
        "! time rm victim.txt",
        "time -p ! rm victim.txt",
        "! ! rm victim.txt",
    ],
)
def test_deny_rules_hold_in_bypass_permissions(project: Path, command: str) -> None:
    assert bash(gate(project, "bypassPermissions"), command) == "deny"


def test_without_deny_rules_bypass_runs_a_computed_program(project: Path) -> None:
    assert bash(gate(project, "bypassPermissions", deny=()), "x=ls; $x") == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor=touch PWN'\" git status",
        "GIT_EXTERNAL_DIFF=./evil.sh git log -p",
        "PAGER='touch PWN' git log",
        "npm test --script-shell=./evil.sh",
        "npm test --script-sh=./evil.sh",
        "git log --output=PWN",
        "git log --outp=PWN",
        "git -c core.pager=x log",
        "git --exec-path=. log",
    ],
)
def test_allow_rules_do_not_vouch_for_prefixes_or_code_running_options(
    project: Path, command: str
) -> None:
    assert bash(gate(project), command) == "ask"


@pytest.mark.parametrize("command", ["git status", "git log --oneline -5", "npm test", "ls -la"])
def test_allow_rules_still_allow_what_they_say(project: Path, command: str) -> None:
    assert bash(gate(project), command) == "allow"


def test_turning_the_sandbox_off_is_never_automatic(project: Path) -> None:
    g = gate(project, "acceptEdits")
    assert bash(g, "ls", dangerouslyDisableSandbox=True) == "ask"
    bypass = gate(project, "bypassPermissions")
    assert bash(bypass, "ls", dangerouslyDisableSandbox=True) == "ask"  # in every mode
    assert bash(bypass, "ls") == "allow"
    bypass.sandbox_enabled = False  # no sandbox to leave: the flag changes nothing
    assert bash(bypass, "ls", dangerouslyDisableSandbox=True) == "allow"


def test_grep_and_glob_results_leave_denied_files_out(project: Path) -> None:
    g = gate(project)
    assert g.read_denied(str(project / ".env"))
    assert g.read_denied(str(project / "envlink"))
    assert not g.read_denied(str(project / "README.md"))
