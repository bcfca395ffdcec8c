"""MCP tool results as tool results; tool names; the mcp__ permission rules."""

from __future__ import annotations

from mcp_types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from agent.mcp.tools import MAX_OUTPUT_CHARS, convert_result, tool_name
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


def test_long_output_is_cut_at_the_tool_output_cap() -> None:
    big = "x" * (MAX_OUTPUT_CHARS + 500)
    result = convert_result(
        CallToolResult(
            content=[TextContent(type="text", text=big), TextContent(type="text", text="more")]
        )
    )
    assert isinstance(result.output, str)
    assert result.output.startswith("x" * MAX_OUTPUT_CHARS + "\n(Output cut: 500 more")
    assert result.output.endswith("MCP output is limited to 30,000)")  # "more" is dropped too
    assert "\nmore" not in result.output


def test_names_as_claude_code_builds_them() -> None:
    assert tool_name("calc", "add") == "mcp__calc__add"
    assert tool_name("my.server", "get-file v2") == "mcp__my_server__get-file_v2"


def test_server_rules_cover_its_tools_only() -> None:
    assert Rule.parse("mcp__calc").covers("mcp__calc__add")
    assert Rule.parse("mcp__calc__*").covers("mcp__calc__add")
    assert Rule.parse("mcp__calc__add").covers("mcp__calc__add")
    assert not Rule.parse("mcp__calc__add").covers("mcp__calc__echo")
    assert not Rule.parse("mcp__calc").covers("mcp__calculator__add")
    assert not Rule.parse("mcp__calc").covers("Bash")
