"""MCP tool results as tool results; tool names; the mcp__ permission rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from agent.mcp.names import full_name
from agent.mcp.tools import MAX_OUTPUT_CHARS, convert_result
from agent.permissions.rules import Rule


def test_text_structured_resources_and_errors() -> None:
    text = convert_result(CallToolResult(content=[TextContent(type="text", text="a")]))
    assert (text.output, text.is_error) == ("a", False)
    structured = convert_result(CallToolResult(content=[], structured_content={"n": 1}))
    assert structured.output == '{"n":1}'
    both = convert_result(  # as Claude Code: the structured JSON stands for the text
        CallToolResult(content=[TextContent(type="text", text="1")], structured_content={"é": 1})
    )
    assert both.output == '{"é":1}'
    error = convert_result(
        CallToolResult(content=[TextContent(type="text", text="bad")], is_error=True)
    )
    assert error.is_error and error.output == "bad"
    resource = TextResourceContents(uri="file:///notes.txt", text="hello")
    embedded = convert_result(
        CallToolResult(content=[EmbeddedResource(type="resource", resource=resource)])
    )
    assert embedded.output == "[Resource file:///notes.txt]\nhello"
    mixed = convert_result(
        CallToolResult(
            content=[
                TextContent(type="text", text="see:"),
                ImageContent(type="image", data="AAAA", mime_type="image/png"),
            ]
        )
    )
    assert mixed.output == [
        {"type": "text", "text": "see:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
    ]


def test_long_output_is_cut_at_the_tool_output_cap_and_saved_whole(tmp_path: Path) -> None:
    big = "x" * (MAX_OUTPUT_CHARS + 500)
    spill = tmp_path / "tool-outputs" / "mcp-calc-big.txt"
    result = convert_result(
        CallToolResult(
            content=[TextContent(type="text", text=big), TextContent(type="text", text="more")]
        ),
        spill,
    )
    assert isinstance(result.output, str)
    assert result.output.startswith("x" * MAX_OUTPUT_CHARS + "\n(Output cut: 504 more")
    assert "limited to 30,000 characters" in result.output
    assert f"The whole output is in {spill}" in result.output
    assert "\nmore" not in result.output  # "more" is dropped too
    assert spill.read_text() == big + "\nmore"


def test_max_mcp_output_tokens_sets_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "10")
    result = convert_result(CallToolResult(content=[TextContent(type="text", text="y" * 100)]))
    assert isinstance(result.output, str)
    assert result.output.startswith("y" * 40 + "\n(Output cut: 60 more characters")
    assert "The whole output is in" not in result.output  # nowhere to save it
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "lots")
    assert (
        convert_result(CallToolResult(content=[TextContent(type="text", text="z" * 100)])).output
        == "z" * 100
    )


def test_names_as_claude_code_builds_them() -> None:
    assert full_name("calc", "add") == "mcp__calc__add"
    assert full_name("my.server", "get-file v2") == "mcp__my_server__get-file_v2"


def test_server_rules_cover_its_tools_only() -> None:
    assert Rule.parse("mcp__calc").covers("mcp__calc__add")
    assert Rule.parse("mcp__calc__*").covers("mcp__calc__add")
    assert Rule.parse("mcp__calc__add").covers("mcp__calc__add")
    assert not Rule.parse("mcp__calc__add").covers("mcp__calc__echo")
    assert not Rule.parse("mcp__calc").covers("mcp__calculator__add")
    assert not Rule.parse("mcp__calc").covers("Bash")
