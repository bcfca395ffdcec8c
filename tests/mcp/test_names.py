"""MCP tool names the API takes: valid, at most 64 characters, unique, stable, and still matched
by the permission rules written with the long spelling."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from agent.mcp.names import MAX_NAME_CHARS, aliases, full_name, hashed_name, wire_names
from agent.mcp.tools import McpTool
from agent.permissions.gate import PermissionGate
from agent.permissions.rules import Rule

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
LONG_A = "n" * 100
LONG_B = "n" * 99 + "m"


def test_short_valid_names_are_claude_codes_spelling() -> None:
    names = wire_names([("calc", "add"), ("my.server x", "get-file v2")])
    assert names == {
        ("calc", "add"): "mcp__calc__add",
        ("my.server x", "get-file v2"): "mcp__my_server_x__get-file_v2",
    }


def test_a_long_name_is_cut_to_64_with_a_hash_of_the_real_names() -> None:
    name = wire_names([("red", LONG_A)])[("red", LONG_A)]
    assert VALID.fullmatch(name) and len(name) == MAX_NAME_CHARS
    assert name.startswith("mcp__red__nnnn")
    assert re.fullmatch(r"mcp__red__n+_[0-9a-f]{8}", name)
    assert name == hashed_name("red", LONG_A)


def test_two_long_names_sharing_their_start_stay_apart() -> None:
    names = wire_names([("red", LONG_A), ("red", LONG_B)])
    assert full_name("red", LONG_A)[:64] == full_name("red", LONG_B)[:64]
    assert len(set(names.values())) == 2
    assert all(VALID.fullmatch(name) for name in names.values())


def test_names_do_not_depend_on_the_other_tools_or_their_order() -> None:
    alone = wire_names([("red", LONG_A)])
    among = wire_names([("blue", "x"), ("red", LONG_B), ("red", LONG_A)])
    assert alone[("red", LONG_A)] == among[("red", LONG_A)]
    assert wire_names(reversed(list(among))) == among


def test_a_server_name_longer_than_the_limit_still_gives_valid_distinct_names() -> None:
    server = "s" * 80
    names = wire_names([(server, "a"), (server, "b")])
    assert len(set(names.values())) == 2
    assert all(VALID.fullmatch(name) for name in names.values())


def test_spellings_that_meet_are_told_apart_and_the_valid_one_keeps_its_name() -> None:
    names = wire_names([("srv", "a.b"), ("srv", "a_b"), ("srv", "a b")])
    assert names[("srv", "a_b")] == "mcp__srv__a_b"
    assert len(set(names.values())) == 3
    assert all(VALID.fullmatch(name) for name in names.values())
    # Two servers whose names meet: the tools of both are there, apart.
    servers = wire_names([("my.srv", "t"), ("my_srv", "t")])
    assert servers[("my_srv", "t")] == "mcp__my_srv__t"
    assert servers[("my.srv", "t")] != "mcp__my_srv__t"


def test_two_valid_spellings_that_meet_are_both_hashed() -> None:
    names = wire_names([("x__y", "z"), ("x", "y__z")])
    assert len(set(names.values())) == 2


def test_odd_characters_give_valid_names() -> None:
    for server, tool in [("", ""), ("é", "ü"), ("a/b", "c:d"), ("\ud800", "x"), (" ", "\n")]:
        name = wire_names([(server, tool)])[(server, tool)]
        assert VALID.fullmatch(name), name


def test_aliases_are_the_long_spellings() -> None:
    wire = hashed_name("red", LONG_A)
    assert aliases("red", LONG_A, wire) == (f"mcp__red__{LONG_A}",)
    assert aliases("my.srv", "a", "mcp__my_srv__a") == ("mcp__my.srv__a",)
    assert aliases("calc", "add", "mcp__calc__add") == ()


def _tool(server: str, tool: str) -> McpTool:
    connection = SimpleNamespace(name=server)
    spec = SimpleNamespace(name=tool, description="", input_schema={"type": "object"})
    return McpTool(connection, spec)  # type: ignore[arg-type]


def _gate(
    tmp_path: Path, allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()
) -> PermissionGate:
    return PermissionGate(
        "default",
        [Rule.parse(r) for r in allow],
        [Rule.parse(r) for r in deny],
        [],
        cwd=tmp_path,
        project_root=tmp_path,
    )


def _decide(gate: PermissionGate, tool: McpTool) -> str:
    return gate.check(tool.name, {}, True, False, tool.rule_aliases).behavior


def test_rules_match_a_shortened_tool_by_its_long_spelling(tmp_path: Path) -> None:
    tool = _tool("red", LONG_A)
    other = _tool("red", LONG_B)
    assert len(tool.name) == 64
    assert _decide(_gate(tmp_path, allow=(f"mcp__red__{LONG_A}",)), tool) == "allow"
    assert _decide(_gate(tmp_path, allow=(f"mcp__red__{LONG_A}",)), other) == "ask"
    assert _decide(_gate(tmp_path, allow=(tool.name,)), tool) == "allow"
    assert _decide(_gate(tmp_path, allow=("mcp__red",)), tool) == "allow"
    assert _decide(_gate(tmp_path, allow=("mcp__red__*",)), tool) == "allow"
    assert _decide(_gate(tmp_path, allow=("mcp__blue",)), tool) == "ask"
    denied = _gate(tmp_path, allow=("mcp__red",), deny=(f"mcp__red__{LONG_A}",))
    assert _decide(denied, tool) == "deny"
    assert _decide(denied, other) == "allow"


def test_a_server_rule_covers_tools_whose_server_part_was_cut(tmp_path: Path) -> None:
    server = "s" * 80
    tool = _tool(server, "a")
    assert not tool.name.startswith(f"mcp__{server}__")
    assert _decide(_gate(tmp_path, allow=(f"mcp__{server}",)), tool) == "allow"
    assert _decide(_gate(tmp_path, allow=("mcp__" + "s" * 79,)), tool) == "ask"


def test_a_rule_with_the_real_dotted_name_matches(tmp_path: Path) -> None:
    tool = _tool("my.srv", "get.file")
    assert tool.name == "mcp__my_srv__get_file"
    assert _decide(_gate(tmp_path, allow=("mcp__my_srv__get_file",)), tool) == "allow"
    assert _decide(_gate(tmp_path, allow=("mcp__my.srv__get.file",)), tool) == "allow"
    assert _decide(_gate(tmp_path, allow=("mcp__my.srv",)), tool) == "allow"
