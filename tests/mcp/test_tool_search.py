"""Tool search's rules: Claude Code's ENABLE_TOOL_SEARCH values, matching a query, the tool's
result as tool_reference blocks, and what the model is told."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent.core.messages import Message, tool_result_block, user_text
from agent.mcp.tool_search import (
    ToolSearchTool,
    defers,
    defers_builtins,
    match,
    names_reminder,
    search_threshold,
)
from tools.base import ToolContext
from tools.file_state import FileStateCache
from tools.registry import default_tools
from tui.session.mcp_setup import referenced_tools

CATALOG = [
    {"name": "mcp__cal__create_event", "description": "Create a calendar event"},
    {"name": "mcp__cal__list_events", "description": "List events of a day"},
    {"name": "mcp__slack__send", "description": "Send a message to a channel"},
    {"name": "mcp__slack__read_channel", "description": "Read a channel's messages"},
]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 0.0),
        ("true", 0.0),
        ("false", None),
        ("auto", 0.10),
        ("auto:5", 0.05),
        ("auto:0", 0.0),
        ("nonsense", 0.0),
    ],
)
def test_enable_tool_search_values(value: str | None, expected: float | None) -> None:
    env = {} if value is None else {"ENABLE_TOOL_SEARCH": value}
    assert search_threshold(env) == expected


def test_defers_by_threshold_and_never_for_haiku() -> None:
    tools = [{"name": f"mcp__s__t{i}", "description": "x" * 396} for i in range(10)]  # ~1,100
    assert defers(tools, 200_000, "claude-opus-5-5", {})
    assert not defers(tools, 200_000, "claude-opus-5-5", {"ENABLE_TOOL_SEARCH": "auto"})
    assert defers(tools, 10_000, "claude-opus-5-5", {"ENABLE_TOOL_SEARCH": "auto"})
    assert not defers(tools, 200_000, "claude-haiku-4-5", {})
    assert not defers([], 200_000, "claude-opus-5-5", {})


def test_rare_built_in_tools_are_deferred_when_search_is_always_on() -> None:
    deferred = {t.name for t in default_tools() if t.deferred}
    assert {"NotebookEdit", "WebFetch", "WebSearch"} <= deferred
    assert not deferred & {"Read", "Write", "Edit", "Bash", "Glob", "Grep"}
    model = "claude-sonnet-4-5"
    assert defers_builtins(model, {}) and defers_builtins(model, {"ENABLE_TOOL_SEARCH": "true"})
    assert not defers_builtins(model, {"ENABLE_TOOL_SEARCH": "false"})
    assert not defers_builtins(model, {"ENABLE_TOOL_SEARCH": "auto"})  # auto weighs MCP tools
    assert not defers_builtins("claude-haiku-4-5", {})


def test_tools_a_conversation_loaded_are_found_in_it() -> None:
    reference = [{"type": "tool_reference", "tool_name": "WebSearch"}]
    messages = [
        user_text("look it up"),
        Message("assistant", [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {}}]),
        Message("user", [tool_result_block("t1", reference)]),
        Message("user", [tool_result_block("t2", "plain text")]),
    ]
    assert referenced_tools(messages) == {"WebSearch"}
    assert referenced_tools(messages[:1]) == set()


def test_select_keywords_and_required_words() -> None:
    assert match("select:mcp__slack__send,MCP__CAL__LIST_EVENTS,nope", CATALOG, 5) == [
        "mcp__slack__send",
        "mcp__cal__list_events",
    ]
    assert match("calendar event", CATALOG, 5)[0] == "mcp__cal__create_event"
    assert match("+slack channel", CATALOG, 5) == [
        "mcp__slack__read_channel",
        "mcp__slack__send",
    ]
    assert match("+slack channel", CATALOG, 1) == ["mcp__slack__read_channel"]
    assert match("weather", CATALOG, 5) == []


async def test_the_tool_loads_and_answers_with_references(tmp_path: Path) -> None:
    loaded: list[str] = []
    tool = ToolSearchTool(lambda: CATALOG, loaded.extend)
    ctx = ToolContext(cwd=tmp_path, file_state=FileStateCache())
    params: Any = tool.parse({"query": "select:mcp__cal__create_event"})
    result = await tool.run(params, ctx)
    assert result.output == [{"type": "tool_reference", "tool_name": "mcp__cal__create_event"}]
    assert loaded == ["mcp__cal__create_event"]
    missing = await tool.run(tool.parse({"query": "weather"}), ctx)  # type: ignore[arg-type]
    assert "No deferred tool matches 'weather'" in missing.output_text()
    assert loaded == ["mcp__cal__create_event"]
    assert "max_results" in tool.to_api()["input_schema"]["properties"]


def test_the_model_is_told_every_name_then_what_changed() -> None:
    first = names_reminder(["mcp__a__x", "mcp__a__y"], [], first=True)
    assert "ToolSearch" in first and first.endswith("mcp__a__x\nmcp__a__y")
    later = names_reminder(["mcp__b__z"], ["mcp__a__y"], first=False)
    assert "mcp__b__z" in later and "gone" in later and "mcp__a__y" in later
