"""An MCP server (the ``mcp`` package's MCPServer, over stdio) whose tool names a client must
make valid before it sends them to the API (issue 17: ``^[A-Za-z0-9_-]{1,64}$``).

    python named_tools_mcp.py long|invalid|collide|short

long: one tool named with 100 characters; invalid: a name with a dot, a slash and a
space; collide: two 100-character names equal in their first 99; short: one tool
called ``ping`` (served under a long server name by the scenario).
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

NAMES = {
    "long": ["n" * 100],
    "invalid": ["deploy.prod/v2 now"],
    "collide": ["c" * 99 + "a", "c" * 99 + "b"],
    "short": ["ping"],
}


def ping() -> str:
    """Answers pong."""
    return "pong"


if __name__ == "__main__":
    server = MCPServer(name="red")
    for name in NAMES[sys.argv[1]]:
        server.add_tool(ping, name=name, description="Answers pong.")
    server.run("stdio")
