from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.conftest import Call
from tests.tools.helpers import assert_schema_matches_snapshot
from tools.exit_plan_mode import ExitPlanModeTool


def test_schema_snapshot() -> None:
    assert_schema_matches_snapshot(ExitPlanModeTool)


def test_api_shape() -> None:
    api = ExitPlanModeTool.to_api()
    assert api["name"] == "ExitPlanMode"
    assert len(api["description"]) > 200
    assert "required" not in api["input_schema"]
    assert ExitPlanModeTool.is_mutating is False


class Approver:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def __call__(self, plan: str) -> bool:
        self.asked.append(plan)
        return self.answer


@pytest.fixture
def plan_path(tmp_path: Path) -> Path:
    return tmp_path / "config" / "plans" / "session-1.md"


def make_tool(plan_path: Path, approve: Approver | None) -> tuple[ExitPlanModeTool, list[str]]:
    exits: list[str] = []
    tool = ExitPlanModeTool(lambda: plan_path, approve, lambda: exits.append("exit"))
    return tool, exits


async def test_approved_plan_from_param_is_saved_and_exits(call: Call, plan_path: Path) -> None:
    approve = Approver(True)
    tool, exits = make_tool(plan_path, approve)

    result = await call(tool, plan="1. Change a\n2. Test b\n")

    assert not result.is_error
    assert plan_path.read_text(encoding="utf-8") == "1. Change a\n2. Test b\n"
    assert approve.asked == ["1. Change a\n2. Test b"]
    assert exits == ["exit"]
    text = result.output_text()
    assert "approved" in text and "plan mode is off" in text
    assert str(plan_path) in text and text.endswith("1. Change a\n2. Test b")
    assert result.meta["approved"] is True


async def test_plan_from_the_file_when_no_param(call: Call, plan_path: Path) -> None:
    plan_path.parent.mkdir(parents=True)
    plan_path.write_text("# Plan\nDo it\n", encoding="utf-8")
    approve = Approver(True)
    tool, exits = make_tool(plan_path, approve)
    result = await call(tool)
    assert approve.asked == ["# Plan\nDo it"]
    assert exits == ["exit"] and not result.is_error


async def test_rejected_stays_in_plan_mode(call: Call, plan_path: Path) -> None:
    approve = Approver(False)
    tool, exits = make_tool(plan_path, approve)
    result = await call(tool, plan="the plan")
    assert exits == []
    assert not result.is_error
    assert "wants changes" in result.output_text()
    assert "plan mode stays on" in result.output_text()
    assert result.meta["approved"] is False


async def test_headless_records_plan_and_does_not_exit(call: Call, plan_path: Path) -> None:
    tool, exits = make_tool(plan_path, None)
    result = await call(tool, plan="headless plan")
    assert exits == []
    assert plan_path.read_text(encoding="utf-8") == "headless plan"
    text = result.output_text()
    assert str(plan_path) in text and "switching the permission mode" in text
    assert result.meta["approved"] is False


@pytest.mark.parametrize("file_text", [None, "", "  \n"])
async def test_no_plan_is_an_error(call: Call, plan_path: Path, file_text: str | None) -> None:
    if file_text is not None:
        plan_path.parent.mkdir(parents=True)
        plan_path.write_text(file_text, encoding="utf-8")
    approve = Approver(True)
    tool, exits = make_tool(plan_path, approve)
    result = await call(tool, plan="   ")
    assert result.is_error
    assert str(plan_path) in result.output_text()
    assert approve.asked == [] and exits == []


async def test_outside_plan_mode_is_an_error(call: Call, plan_path: Path) -> None:
    approve = Approver(True)
    tool = ExitPlanModeTool(lambda: plan_path, approve, lambda: None, in_plan_mode=lambda: False)
    result = await call(tool, plan="p")
    assert result.is_error and approve.asked == []
    assert not plan_path.exists()
