from __future__ import annotations

from pathlib import Path

from agent.instructions.plan import (
    SPARSE_REMINDER_EVERY,
    PlanState,
    plan_file_path,
    plan_mode_reminder,
)
from agent.permissions.gate import PermissionGate


def test_plan_file_path(tmp_path: Path) -> None:
    assert plan_file_path(tmp_path, "abc-123") == tmp_path / "plans" / "abc-123.md"


def test_reminder_names_the_file_and_the_exit_tool(tmp_path: Path) -> None:
    path = tmp_path / "plans" / "s.md"
    fresh = plan_mode_reminder(path, exists=False)
    existing = plan_mode_reminder(path, exists=True)
    for text in (fresh, existing):
        assert "Plan mode is on" in text
        assert str(path) in text
        assert "ExitPlanMode" in text
        assert "read-only" in text
    assert "Write" in fresh and "no plan yet" in fresh
    assert "already exists" in existing and "already exists" not in fresh


def test_plan_state_content(tmp_path: Path) -> None:
    state = PlanState(tmp_path / "plans" / "s.md")
    assert not state.exists() and state.content() is None
    assert state.reminder() is None
    state.path.parent.mkdir()
    state.path.write_text("# Plan\n", encoding="utf-8")
    assert state.exists() and state.content() == "# Plan\n"
    state.enter()
    reminder = state.reminder()
    assert reminder is not None and "already exists" in reminder


def test_reminder_source_full_then_sparse_then_exit_note(tmp_path: Path) -> None:
    state = PlanState(tmp_path / "s.md")
    assert state.reminders() == []  # plan mode is off
    state.enter()
    first = state.reminders()
    assert len(first) == 1 and first[0].startswith("Plan mode is on")
    quiet = [state.reminders() for _ in range(SPARSE_REMINDER_EVERY - 1)]
    assert quiet == [[]] * (SPARSE_REMINDER_EVERY - 1)
    sparse = state.reminders()
    assert len(sparse) == 1 and sparse[0].startswith("Plan mode is still on")
    state.exit()
    assert not state.active
    off = state.reminders()
    assert len(off) == 1 and "Plan mode is off" in off[0]
    assert state.reminders() == []


def test_starting_in_plan_mode_announces_it(tmp_path: Path) -> None:
    state = PlanState(tmp_path / "s.md", active=True)
    assert state.reminders()[0].startswith("Plan mode is on")


def test_gate_lets_plan_mode_write_only_the_plan_file(tmp_path: Path) -> None:
    plan = plan_file_path(tmp_path / "config", "s1")
    gate = PermissionGate("plan", [], [], [], cwd=tmp_path, plan_file=plan)
    assert gate.check("Write", {"file_path": str(plan)}, True).behavior == "allow"
    other = str(tmp_path / "src.py")
    assert gate.check("Write", {"file_path": other}, True).behavior == "deny"
    assert gate.check("ExitPlanMode", {}, False).behavior == "allow"
    assert gate.check("Skill", {"skill": "x"}, False).behavior == "allow"
