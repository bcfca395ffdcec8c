"""PreToolUse's permission answers against the real gate: allow means an allow rule, no more."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.loop.tool_hooks import PreToolVerdict, check_gate
from agent.permissions.gate import PermissionGate
from agent.permissions.rules import Rule
from tools.base import Tool
from tools.registry import default_tools


def tool(name: str) -> Tool:
    return next(t for t in default_tools() if t.name == name)


def gate(
    project: Path, mode: str = "default", deny: tuple[str, ...] = (), ask=()
) -> PermissionGate:
    return PermissionGate(
        mode,
        [],
        [Rule.parse(r, source="test") for r in deny],
        [Rule.parse(r, source="test") for r in ask],
        cwd=project,
        project_root=project,
    )


def decide(g: PermissionGate, name: str, tool_input: dict, hook: str | None) -> str:
    params = tool(name).parse(tool_input)
    assert not hasattr(params, "is_error"), params
    return check_gate(g, tool(name), tool_input, PreToolVerdict(params, hook)).behavior


@pytest.mark.parametrize(
    ("tool_input", "hook", "expected"),
    [
        ({"command": "echo hi > out.txt"}, None, "ask"),  # the gate alone asks
        ({"command": "echo hi > out.txt"}, "allow", "allow"),  # a hook's allow answers it
        ({"command": "echo hi > .git/config"}, "allow", "ask"),  # a protected path still asks
        ({"command": "rm -rf build"}, "allow", "deny"),  # a deny rule still refuses
        ({"command": "git push"}, "allow", "ask"),  # an ask rule still asks
        ({"command": "ls"}, "ask", "ask"),  # ask where the gate would allow
        ({"command": "rm -rf build"}, "ask", "deny"),  # but deny rules refuse first
    ],
)
def test_hook_decisions_on_bash(
    tmp_path: Path, tool_input: dict, hook: str | None, expected: str
) -> None:
    g = gate(tmp_path, deny=("Bash(rm *)",), ask=("Bash(git push)",))
    assert decide(g, "Bash", tool_input, hook) == expected
    assert [str(r) for r in g.allow] == []  # the hook's rule never outlives the check


def test_hook_allow_does_not_open_plan_mode_or_protected_files(tmp_path: Path) -> None:
    edit = {"file_path": str(tmp_path / "a.py"), "content": "x = 1\n"}
    assert decide(gate(tmp_path), "Write", edit, "allow") == "allow"
    assert decide(gate(tmp_path, mode="plan"), "Write", edit, "allow") == "deny"
    hooks_file = {"file_path": str(tmp_path / ".claude" / "settings.json"), "content": "{}"}
    assert decide(gate(tmp_path), "Write", hooks_file, "allow") == "ask"
