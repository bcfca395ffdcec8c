"""`ccx -p` with a real MCP server whose tool and server names the API would refuse as they are:
every request carries valid, unique names, the fake API accepts them, each call reaches its
tool, the names hold across sessions, and rules written with the long names still apply."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tests.e2e.conftest import Ccx
from tests.e2e.test_mcp import approve_all, send_whole, write_mcp_json
from tests.mcp.servers import stdio_entry
from tui.fake_api import text_reply, tool_reply
from tui.fake_api.recording import RecordedRequest
from tui.fake_api.script import Reply

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
LONG_A = "n" * 100  # the attempt of issue 17: ccx sent mcp__red__nnnn... (110 characters)
LONG_B = "n" * 99 + "m"  # shares LONG_A's first 99 characters
NAMES = json.dumps([LONG_A, LONG_B, "dot.ted"])


def serve(ccx: Ccx) -> None:
    """Two servers with the same odd tools: ``red`` and ``my.srv x`` (a dot and a space)."""
    env = {"TEST_MCP_TOOL_NAMES": NAMES}
    write_mcp_json(ccx, red=stdio_entry(env=env), **{"my.srv x": stdio_entry(env=env)})
    approve_all(ccx)
    send_whole(ccx)


def named(request: RecordedRequest, prefix: str, tool: str) -> str:
    """The name the request gives the tool ``tool`` of the server whose names start with
    ``prefix``, found as a model finds it: by its description."""
    (name,) = [
        t["name"]
        for t in request.body["tools"]
        if t["name"].startswith(prefix) and t.get("description") == f"Answers as {tool}"
    ]
    return name


def calling(*calls: tuple[str, str, str]) -> Callable[[RecordedRequest], Reply]:
    """A model turn that calls each (server prefix, tool, text) by the name the request gives."""

    def reply(request: RecordedRequest) -> Reply:
        uses = [(named(request, prefix, tool), {"text": text}) for prefix, tool, text in calls]
        return tool_reply(*uses)

    return reply


def results(request: RecordedRequest) -> list[Any]:
    return [
        block["content"]
        for message in request.messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def tool_names(request: RecordedRequest) -> list[str]:
    return [tool["name"] for tool in request.body["tools"]]


def assert_valid_names(requests: list[RecordedRequest]) -> None:
    for request in requests:
        assert request.status == 200, request.error
        names = tool_names(request)
        assert [n for n in names if not VALID.fullmatch(n)] == []
        assert len(names) == len(set(names))
        assert sum(n.startswith("mcp__") for n in names) >= 6 + 6  # calc's tools, ours, twice


def test_long_dotted_and_spaced_names_are_valid_and_each_call_reaches_its_tool(ccx: Ccx) -> None:
    serve(ccx)
    ccx.api.add(
        calling(
            ("mcp__red__", LONG_A, "a"),
            ("mcp__red__", LONG_B, "b"),
            ("mcp__my_srv_x__", "dot.ted", "c"),
            ("mcp__my_srv_x__", LONG_A, "d"),
        ),
        text_reply("All answered."),
    )
    run = ccx.run(
        "-p", "call them", "--allowedTools", "mcp__red,mcp__my_srv_x", "--output-format", "json"
    )
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "All answered."
    assert_valid_names(ccx.api.requests)
    first, second = ccx.api.requests
    assert "mcp__my_srv_x__dot_ted" in tool_names(first)  # Claude Code's spelling, kept
    assert results(second) == [
        f'{{"result":"{LONG_A} got a"}}',
        f'{{"result":"{LONG_B} got b"}}',
        '{"result":"dot.ted got c"}',
        f'{{"result":"{LONG_A} got d"}}',
    ]


def test_names_hold_across_sessions_and_a_resumed_session_calls_the_tool_again(
    ccx: Ccx,
) -> None:
    serve(ccx)
    ccx.api.add(calling(("mcp__red__", LONG_A, "first")), text_reply("Done once."))
    args = ("--allowedTools", "mcp__red", "--output-format", "json")
    first = ccx.run("-p", "call it", *args)
    assert first.returncode == 0, first.stderr
    session = first.json()["session_id"]
    used = ccx.api.requests[1].messages[1]["content"][0]["name"]  # as the transcript holds it

    ccx.api.add(tool_reply((used, {"text": "again"})), text_reply("Done twice."))
    again = ccx.run("-p", "once more", "-r", session, *args)
    assert again.returncode == 0, again.stderr
    assert again.json()["result"] == "Done twice."
    assert_valid_names(ccx.api.requests)
    assert tool_names(ccx.api.requests[2]) == tool_names(ccx.api.requests[0])
    assert results(ccx.api.requests[-1])[-1] == f'{{"result":"{LONG_A} got again"}}'


def test_rules_written_with_the_long_names_still_apply(ccx: Ccx) -> None:
    serve(ccx)
    ccx.api.add(
        calling(
            ("mcp__red__", LONG_A, "allowed"),
            ("mcp__red__", LONG_B, "denied"),
            ("mcp__red__", "dot.ted", "asked"),
        ),
        text_reply("Some ran."),
    )
    run = ccx.run(
        "-p",
        "call them",
        "--allowedTools",
        f"mcp__red__{LONG_A}",
        "--disallowedTools",
        f"mcp__red__{LONG_B}",
        "--output-format",
        "json",
    )
    assert run.returncode == 0, run.stderr
    assert_valid_names(ccx.api.requests)
    first, second = ccx.api.requests
    a, b, dotted = results(second)
    assert a == f'{{"result":"{LONG_A} got allowed"}}'
    assert "got" not in json.dumps(b) and "deny rule" in json.dumps(b)
    assert "got" not in json.dumps(dotted)  # no rule: asked, and -p cannot ask
    denied = [d["tool_name"] for d in run.json()["permission_denials"]]
    assert denied == [named(first, "mcp__red__", LONG_B), "mcp__red__dot_ted"]
