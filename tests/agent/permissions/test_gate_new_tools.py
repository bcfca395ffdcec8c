"""The gate on Monitor (its command judged as Bash's, with Monitor's own rules), the worktree
tools (asked about, as anything that changes state), and writes inside a worktree made under
.claude/worktrees (judged as that tree's own files, not as .claude settings)."""

from __future__ import annotations

from pathlib import Path

from tests.agent.permissions.test_gate import gate


def monitor(g, command: str) -> str:  # type: ignore[no-untyped-def]
    return g.check("Monitor", {"description": "d", "command": command}, True).behavior


def test_monitor_commands_are_judged_as_bash(tmp_path: Path) -> None:
    g = gate(tmp_path)
    assert monitor(g, "tail -f app.log | grep --line-buffered ERROR") == "allow"
    assert monitor(g, "rm -rf build; tail -f log") == "ask"
    assert monitor(gate(tmp_path, deny=("Bash(tail *)",)), "tail -f app.log") == "deny"
    assert monitor(gate(tmp_path, mode="plan"), "touch x") == "deny"


def test_monitor_rules(tmp_path: Path) -> None:
    assert monitor(gate(tmp_path, deny=("Monitor",)), "tail -f app.log") == "deny"
    assert monitor(gate(tmp_path, allow=("Monitor",)), "make watch") == "allow"
    # A write to a protected path still asks, whatever the allow rule.
    protected = monitor(gate(tmp_path, allow=("Monitor",)), "echo x > .git/config")
    assert protected == "ask"


def test_worktree_tools_are_asked_about(tmp_path: Path) -> None:
    g = gate(tmp_path, mode="acceptEdits")
    assert g.check("EnterWorktree", {"name": "x"}, True).behavior == "ask"
    assert g.check("ExitWorktree", {"action": "remove"}, True).behavior == "ask"
    assert gate(tmp_path, allow=("EnterWorktree",)).check("EnterWorktree", {}, True).behavior == (
        "allow"
    )


def test_files_inside_a_claude_worktree_are_the_worktrees_own(tmp_path: Path) -> None:
    tree = tmp_path / ".claude" / "worktrees" / "fix"
    g = gate(tree, mode="acceptEdits")
    assert g.check("Edit", {"file_path": str(tree / "src" / "app.py")}, True).behavior == "allow"
    for inner in (".claude/settings.json", ".git/config", ".mcp.json"):
        assert g.check("Edit", {"file_path": str(tree / inner)}, True).behavior == "ask", inner
    outer = gate(tmp_path, mode="acceptEdits")
    assert outer.check("Edit", {"file_path": str(tmp_path / ".claude/x.json")}, True).behavior == (
        "ask"
    )
