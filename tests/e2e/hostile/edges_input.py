"""Issue 17's bad input from the new surfaces: MCP tool names the API refuses, hooks whose
background children hold the client, and a user message too big to send.

- An MCP server (payloads/named_tools_mcp.py, through ``--mcp-config``) lists a tool whose
  name is 100 characters, one with a dot, a slash and a space, two that differ only in
  their 100th character, or a short tool under a 60-character server name: a request the
  API refuses is the side effect.
- PreToolUse / PostToolUse hooks (``--settings``; on Bash, Read and
  Write, tools both clients offer) that leave a child holding their stdout
  or stderr for 20 s: a tool call that takes more than 15 s is the side effect.
- A 30 MB user message on stream-json (one text, or thirty 1 MB blocks), then a short one:
  the second never answered is the side effect.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.hostile.attempt import ToolCall, bash, read, write
from tests.e2e.hostile.edges import BOTH, EdgeAttempt, Scenario, Session
from tests.e2e.hostile.edges_effects import Refused, StepSlower, Unanswered
from tests.e2e.hostile.edges_workspace import EdgeWorkspace

FAMILY = "bad input"
SERVER = Path(__file__).resolve().parent / "payloads" / "named_tools_mcp.py"
LONG_SERVER = "s" * 60
# (attempt, the server's name, the server's variant, what it tries)
MCP_NAMES = (
    ("mcp_long_tool_name", "red", "long", "an MCP tool whose name is 100 characters"),
    ("mcp_invalid_tool_name", "red", "invalid", "an MCP tool named 'deploy.prod/v2 now'"),
    ("mcp_colliding_tool_names", "red", "collide",
     "two MCP tools whose 100-character names differ in the last one"),
    ("mcp_long_server_name", LONG_SERVER, "short", "a tool 'ping' of a 60-character server"),
)  # fmt: skip


def _mcp_setup(ws: EdgeWorkspace) -> None:
    for attempt, server, variant, _what in MCP_NAMES:
        entry = {"command": sys.executable, "args": [str(SERVER), variant]}
        ws.write(f"{{ws}}/{attempt}.json", json.dumps({"mcpServers": {server: entry}}))


def mcp_names() -> Scenario:
    return Scenario(
        id="bad_mcp_names",
        setup=_mcp_setup,
        sessions=tuple(
            Session(prompt="hi", args=("--mcp-config", f"{{ws}}/{attempt}.json"))
            for attempt, *_ in MCP_NAMES
        ),
        attempts=tuple(
            EdgeAttempt(attempt, FAMILY, what + ": a request the API refuses", Refused(index), BOTH)
            for index, (attempt, _server, _variant, what) in enumerate(MCP_NAMES)
        ),
        settle_s=0,
    )


HOLD_S = 20
SLOW_CALL_S = 15.0
# (attempt, event, the tool it matches, the hook's command, the call, what it tries)
HOOKS: tuple[tuple[str, str, str, str, ToolCall, str], ...] = (
    ("hook_child_holds_stdout", "PreToolUse", "Bash", f"sleep {HOLD_S} &", bash("true"),
     "a PreToolUse hook's background child keeps its stdout and stderr"),
    ("hook_child_holds_stderr", "PreToolUse", "Read", f"sleep {HOLD_S} >/dev/null &",
     read("{repo}/README.md"), "a PreToolUse hook's background child keeps its stderr"),
    ("hook_post_child_holds_stdout", "PostToolUse", "Write", f"sleep {HOLD_S} &",
     write("{repo}/notes.md", "notes\n"), "a PostToolUse hook's background child"),
)  # fmt: skip


def _hooks_setup(ws: EdgeWorkspace) -> None:
    hooks: dict[str, list[dict[str, object]]] = {}
    for attempt, event, matcher, command, _call, _what in HOOKS:
        ran = f"echo ran >> {ws.repo}/hooks-ran-{attempt}.log; {command}"  # proof it ran
        group = {"matcher": matcher, "hooks": [{"type": "command", "command": ran}]}
        hooks.setdefault(event, []).append(group)
    ws.write("{ws}/hooks.json", json.dumps({"hooks": hooks}, indent=2))


def hook_children() -> Scenario:
    return Scenario(
        id="bad_hook_children",
        setup=_hooks_setup,
        sessions=(
            Session(
                calls=tuple(h[4] for h in HOOKS),
                mode="bypassPermissions",
                args=("--settings", "{ws}/hooks.json"),
                timeout_s=240,
            ),
        ),
        attempts=tuple(
            EdgeAttempt(
                attempt,
                FAMILY,
                f"{what}: the tool call waits for it",
                StepSlower(0, step, SLOW_CALL_S),
                BOTH,
            )
            for step, (attempt, _event, _matcher, _command, _call, what) in enumerate(HOOKS)
        ),
        settle_s=0,
    )


BIG = 30 * 1024 * 1024


def _stream(path: Path, first: object, second: str) -> None:
    lines = [{"type": "user", "message": {"role": "user", "content": c}} for c in (first, second)]
    with open(path, "w") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")


def _big_setup(ws: EdgeWorkspace) -> None:
    text = "All work and no play. " * (BIG // 22)
    _stream(ws.root / "big_text.jsonl", text, "SECOND-MESSAGE-7f3a: are you there?")
    blocks = [{"type": "text", "text": text[: 1024 * 1024]} for _ in range(30)]
    _stream(ws.root / "big_blocks.jsonl", blocks, "SECOND-MESSAGE-7f3a: are you there?")


def big_message() -> Scenario:
    return Scenario(
        id="bad_big_message",
        setup=_big_setup,
        sessions=(
            Session(entry="stream", stdin="{ws}/big_text.jsonl", timeout_s=240),
            Session(entry="stream", stdin="{ws}/big_blocks.jsonl", timeout_s=240),
        ),
        attempts=(
            EdgeAttempt(
                "big_message_text",
                FAMILY,
                "a 30 MB stream-json user message: the next one is not answered",
                Unanswered(0, "SECOND-MESSAGE-7f3a"),
                BOTH,
            ),
            EdgeAttempt(
                "big_message_blocks",
                FAMILY,
                "a 30 MB user message in thirty 1 MB blocks: the next one is not answered",
                Unanswered(1, "SECOND-MESSAGE-7f3a"),
                BOTH,
            ),
        ),
        settle_s=0,
    )


def input_scenarios() -> list[Scenario]:
    return [mcp_names(), hook_children(), big_message()]
