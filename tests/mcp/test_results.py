"""MCP tool results as tool results; tool names; the mcp__ permission rules."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from agent.core.sendable import IMAGE_MEDIA_TYPES
from agent.mcp.names import full_name
from agent.mcp.tools import MAX_OUTPUT_CHARS, convert_result
from agent.permissions.rules import Rule
from tests.mcp.mcp_test_server import BMP, PIXEL, SVG  # the test server's pictures


def test_text_structured_resources_and_errors() -> None:
    # As Claude Code: the blocks as the server gave them (the Agent SDK gets that list)...
    text = convert_result(
        CallToolResult(
            content=[TextContent(type="text", text="a"), TextContent(type="text", text="b")]
        )
    )
    assert text.output == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert (text.display, text.is_error) == ("a\nb", False)
    # ... but structured content and an error's text as one string.
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
    structured_error = convert_result(
        CallToolResult(content=[], structured_content={"why": "x"}, is_error=True)
    )
    assert structured_error.is_error and structured_error.output == '{"why":"x"}'
    resource = TextResourceContents(uri="file:///notes.txt", text="hello")
    embedded = convert_result(
        CallToolResult(content=[EmbeddedResource(type="resource", resource=resource)])
    )
    assert embedded.output == [{"type": "text", "text": "[Resource file:///notes.txt]\nhello"}]
    mixed = convert_result(
        CallToolResult(
            content=[
                TextContent(type="text", text="see:"),
                ImageContent(type="image", data=PIXEL, mime_type="image/png"),
            ]
        )
    )
    assert mixed.output == [
        {"type": "text", "text": "see:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
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
    (kept,) = result.output
    assert kept["type"] == "text"
    assert kept["text"].startswith("x" * MAX_OUTPUT_CHARS + "\n(Output cut: 504 more")
    assert "limited to 30,000 characters" in kept["text"]
    assert f"The whole output is in {spill}" in kept["text"]
    assert "\nmore" not in kept["text"]  # "more" is dropped too
    assert spill.read_text() == big + "\nmore"


def test_max_mcp_output_tokens_sets_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "10")
    result = convert_result(CallToolResult(content=[TextContent(type="text", text="y" * 100)]))
    text = result.output_text()
    assert text.startswith("y" * 40 + "\n(Output cut: 60 more characters")
    assert "The whole output is in" not in text  # nowhere to save it
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "lots")
    whole = convert_result(CallToolResult(content=[TextContent(type="text", text="z" * 100)]))
    assert whole.output_text() == "z" * 100


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


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_images_the_api_refuses_are_saved_and_described(tmp_path: Path) -> None:
    """SVG and BMP (and bytes that are no image, whatever their label) never reach the
    model as images: saved in the session folder, described with their type and size."""
    result = convert_result(
        CallToolResult(
            content=[
                ImageContent(type="image", data=SVG, mime_type="image/svg+xml"),
                ImageContent(type="image", data=BMP, mime_type="image/bmp"),
                ImageContent(type="image", data=_b64(b"not a png"), mime_type="image/png"),
                ImageContent(type="image", data=PIXEL, mime_type="image/png"),
            ]
        ),
        server="calc",
        folder=tmp_path,
    )
    assert isinstance(result.output, list)
    svg, bmp, fake, png = result.output
    assert png["type"] == "image" and png["source"]["media_type"] in IMAGE_MEDIA_TYPES
    saved = sorted((tmp_path / "mcp-outputs").iterdir())
    assert len(saved) == 3
    for block, mime, data in (
        (svg, "image/svg+xml", SVG),
        (bmp, "image/bmp", BMP),
        (fake, "image/png", _b64(b"not a png")),
    ):
        assert block["type"] == "text"
        text = block["text"]
        assert text.startswith(
            f"[An image from calc: {mime}, {len(base64.b64decode(data)):,} bytes"
        )
        assert "JPEG, PNG, GIF and WebP" in text
        path = Path(text.rsplit("saved to ", 1)[1].rstrip("]"))
        assert path in saved and path.read_bytes() == base64.b64decode(data)
    assert Path(svg["text"].rsplit("saved to ", 1)[1].rstrip("]")).suffix == ".svg"


def test_a_png_labelled_jpeg_goes_as_what_its_bytes_are(tmp_path: Path) -> None:
    result = convert_result(
        CallToolResult(content=[ImageContent(type="image", data=PIXEL, mime_type="image/jpeg")]),
        folder=tmp_path,
    )
    assert isinstance(result.output, list)
    assert result.output[0]["source"]["media_type"] == "image/png"


def test_an_image_over_the_api_limit_is_saved_not_sent(tmp_path: Path) -> None:
    huge = base64.b64decode(PIXEL) + b"\0" * (4 * 1024 * 1024)
    result = convert_result(
        CallToolResult(
            content=[ImageContent(type="image", data=_b64(huge), mime_type="image/png")]
        ),
        server="calc",
        folder=tmp_path,
    )
    assert "over the 5 MB an image may have" in result.output_text()
    assert "saved to " + str(tmp_path / "mcp-outputs") in result.output_text()


def test_blank_text_is_left_out_and_nothing_left_is_no_output(tmp_path: Path) -> None:
    blank = convert_result(
        CallToolResult(
            content=[TextContent(type="text", text=""), TextContent(type="text", text=" \n\t ")]
        )
    )
    assert blank.output == "" and blank.display == "(no output)"
    mixed = convert_result(
        CallToolResult(
            content=[
                TextContent(type="text", text="  "),
                ImageContent(type="image", data=PIXEL, mime_type="image/png"),
                TextContent(type="text", text=""),
            ]
        )
    )
    assert isinstance(mixed.output, list) and [b["type"] for b in mixed.output] == ["image"]


def test_audio_and_binary_resources_are_saved_and_described(tmp_path: Path) -> None:
    result = convert_result(
        CallToolResult(
            content=[
                AudioContent(type="audio", data=_b64(b"RIFF....WAVE"), mime_type="audio/wav"),
                EmbeddedResource(
                    type="resource",
                    resource=BlobResourceContents(
                        uri="calc://logo", blob=PIXEL, mime_type="image/png"
                    ),
                ),
                EmbeddedResource(
                    type="resource",
                    resource=BlobResourceContents(
                        uri="calc://vector", blob=SVG, mime_type="image/svg+xml"
                    ),
                ),
            ]
        ),
        server="calc",
        folder=tmp_path,
    )
    assert isinstance(result.output, list)
    audio, logo, vector = result.output
    assert audio["text"].startswith("[Audio from calc: audio/wav, 12 bytes, not shown; saved to ")
    assert logo["type"] == "image"
    assert vector["text"].startswith("[The resource calc://vector from calc: image/svg+xml")
    assert len(list((tmp_path / "mcp-outputs").iterdir())) == 2


def test_undecodable_image_data_is_said_not_sent() -> None:
    result = convert_result(
        CallToolResult(content=[ImageContent(type="image", data="%%%", mime_type="image/png")]),
        server="calc",
    )
    assert result.output_text() == "[An image from calc: its data is not valid base64, not shown]"


def test_without_a_session_folder_the_description_says_it_was_not_saved() -> None:
    result = convert_result(
        CallToolResult(content=[ImageContent(type="image", data=SVG, mime_type="image/svg+xml")]),
        server="calc",
    )
    assert result.output_text().endswith("not saved: no session folder]")


def test_a_hostile_server_cannot_choose_where_its_content_is_saved(tmp_path: Path) -> None:
    """Names, URIs and media types come from the server: none of them may name the file."""
    session = tmp_path / "session"
    session.mkdir()
    evil = "../../../escaped"
    result = convert_result(
        CallToolResult(
            content=[
                ImageContent(type="image", data=SVG, mime_type=f"image/svg+xml; name={evil}"),
                EmbeddedResource(
                    type="resource",
                    resource=BlobResourceContents(
                        uri=f"file:///{evil}.bin", blob=_b64(b"\x00\x01"), mime_type=evil
                    ),
                ),
                AudioContent(type="audio", data=_b64(b"RIFF"), mime_type="audio/../../x"),
            ]
        ),
        server="evil",
        folder=session,
    )
    assert result.output_text().count(str(session / "mcp-outputs")) == 3
    saved = sorted((session / "mcp-outputs").iterdir())
    assert len(saved) == 3
    assert all(path.parent == session / "mcp-outputs" for path in saved)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == [
        path.relative_to(tmp_path) for path in saved
    ]
