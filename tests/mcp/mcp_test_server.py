"""A real MCP server (the ``mcp`` package's MCPServer, formerly FastMCP) for ccx's tests.

``python mcp_test_server.py [stdio|http PORT|sse PORT|garbage|exit]``
Tools: ``add`` (structured), ``echo`` (text), ``pixel`` (an image), ``picture`` (a PNG,
SVG or BMP between blank texts, or only blank text), ``fail``
(isError), ``crash`` (the process exits mid-call), ``exit_soon``, ``hang`` (never
answers), ``peek`` (annotated read-only), ``big`` (as many characters as asked).
Resources: ``calc://notes`` (text), ``calc://big`` and ``calc://logo`` (a PNG); a prompt ``review``.
``TEST_MCP_START_DELAY`` (seconds) delays the start, as a slow server would;
``TEST_MCP_TOOL_NAMES`` (a JSON list) adds a tool of each name that answers
``<name> got <text>`` (names the API would refuse as they are: long, dotted, spaced).
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

INSTRUCTIONS = os.environ.get(
    "TEST_MCP_INSTRUCTIONS", "Use the add tool for arithmetic; it is exact."
)
# A 1x1 transparent PNG.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000005000157a3a4530000000049454e44ae426082"
    )
).decode()

# Images the API does not take: an SVG and a 1x1 BMP.
SVG = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>').decode()
BMP = base64.b64encode(
    bytes.fromhex("424d3a0000000000000036000000280000000100000001000000010018000000000004000000")
    + bytes(16)
).decode()
PICTURES = {"png": ("image/png", PIXEL), "svg": ("image/svg+xml", SVG), "bmp": ("image/bmp", BMP)}

server = MCPServer(name="calc", instructions=INSTRUCTIONS)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back, with the value of TEST_MCP_SECRET if it is set."""
    return text + os.environ.get("TEST_MCP_SECRET", "")


@server.tool()
def pixel() -> ImageContent:
    """A tiny PNG image."""
    return ImageContent(type="image", data=PIXEL, mimeType="image/png")


@server.tool()
def picture(kind: str) -> list[TextContent | ImageContent]:
    """A picture ("png", "svg" or "bmp") between blank captions; "blank": only whitespace."""
    blank = [TextContent(type="text", text=" \n "), TextContent(type="text", text="")]
    if kind not in PICTURES:
        return blank
    mime, data = PICTURES[kind]
    return [blank[0], ImageContent(type="image", data=data, mimeType=mime), blank[1]]


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(reason)


@server.tool()
def crash() -> str:
    """The server process dies while answering."""
    os._exit(3)


@server.tool()
def exit_soon() -> str:
    """Answers, then the process exits a moment later."""
    threading.Timer(0.3, os._exit, (4,)).start()
    return "bye"


@server.tool()
def hang() -> str:
    """Never answers (sleeps an hour)."""
    time.sleep(3600)
    return "late"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def peek() -> str:
    """Reads nothing and changes nothing (annotated read-only)."""
    return "peeked"


@server.tool()
def big(size: int) -> str:
    """As many characters as asked: digits, then a last line END."""
    body = "".join(str(i % 10) for i in range(max(size - 4, 0)))
    return body + "\nEND"


def _named_tool(name: str) -> None:
    def answer(text: str) -> str:
        return f"{name} got {text}"

    server.add_tool(answer, name=name, description=f"Answers as {name}")


for _name in json.loads(os.environ.get("TEST_MCP_TOOL_NAMES", "[]")):
    _named_tool(_name)


@server.resource("calc://notes", name="notes", description="The calculator's notes")
def notes() -> str:
    return "Carry the one."


@server.resource("calc://big", name="big", description="Twenty thousand characters")
def big_notes() -> str:
    return "n" * 20_000 + "\nEND"


@server.resource("calc://logo", name="logo", mime_type="image/png")
def logo() -> bytes:
    return base64.b64decode(PIXEL)


@server.prompt(description="Ask for a review of a topic")
def review(topic: str, depth: str = "brief") -> str:
    return f"Review {topic}, {depth}."


def main(argv: list[str]) -> None:
    time.sleep(float(os.environ.get("TEST_MCP_START_DELAY", "0")))
    mode = argv[0] if argv else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=int(argv[1]))
    elif mode == "garbage":
        # Not MCP at all: a line that is not JSON-RPC, then silence.
        sys.stdout.write("hello, this is not json\n")
        sys.stdout.flush()
        time.sleep(3600)
    elif mode == "exit":
        sys.stderr.write("boom: cannot start\n")
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
