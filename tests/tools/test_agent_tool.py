"""The Agent tool's schema (Claude Code 2.1.328's fields), its alias, label and the launch."""

from __future__ import annotations

from pathlib import Path

from tests.tools.helpers import assert_schema_matches_snapshot
from tools.agent import AgentParams, AgentTool
from tools.base import CURRENT_TOOL_USE, ToolContext, ToolResult
from tools.file_state import FileStateCache


def test_schema_is_claude_codes() -> None:
    assert_schema_matches_snapshot(AgentTool)
    schema = AgentTool.input_schema()
    assert set(schema["properties"]) == {
        "description",
        "prompt",
        "subagent_type",
        "model",
        "run_in_background",
    }
    assert schema["required"] == ["description", "prompt"]
    assert schema["properties"]["model"]["enum"] == ["sonnet", "opus", "haiku"]
    assert AgentTool.aliases == ("Task",) and not AgentTool.is_mutating


async def test_the_description_lists_the_agents_and_run_launches_with_the_call_id(
    tmp_path: Path,
) -> None:
    launched: list[tuple[AgentParams, str]] = []

    async def launch(params: AgentParams, tool_use_id: str) -> ToolResult:
        launched.append((params, tool_use_id))
        return ToolResult("report")

    tool = AgentTool(launch, lambda: "Available agent types:\n- x: y")
    assert tool.to_api()["description"].endswith("Available agent types:\n- x: y")
    params = tool.parse({"description": "d", "prompt": "p", "subagent_type": "x"})
    assert isinstance(params, AgentParams)
    assert tool.label(params) == "Agent x: d"
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    token = CURRENT_TOOL_USE.set("toolu_1")
    try:
        result = await tool.run(params, ctx)
    finally:
        CURRENT_TOOL_USE.reset(token)
    assert result.output == "report" and launched == [(params, "toolu_1")]
    blank = tool.parse({"description": "d", "prompt": "  "})
    assert isinstance(blank, AgentParams)
    assert (await tool.run(blank, ctx)).is_error and len(launched) == 1
    bad = tool.parse({"description": "d", "prompt": "p", "model": "gpt"})
    assert isinstance(bad, ToolResult) and bad.is_error
