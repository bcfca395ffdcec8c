"""`ccx -p` with the real test MCP server: resources, prompts as slash commands, plan mode's
read-only tools, big outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Ccx
from tests.mcp.servers import stdio_entry
from tui.fake_api import text_reply, tool_reply

CONFIG = json.dumps({"mcpServers": {"calc": stdio_entry()}})


def results(request: Any) -> list[dict[str, Any]]:
    """The tool results of the last user message, in order."""
    last = request.messages[-1]["content"]
    return [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]


def text_of(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_the_model_lists_and_reads_resources(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("ListMcpResourcesTool", {})),
        tool_reply(
            ("ReadMcpResourceTool", {"server": "calc", "uri": "calc://notes"}),
            ("ReadMcpResourceTool", {"server": "calc", "uri": "calc://logo"}),
            ("ReadMcpResourceTool", {"server": "zzz", "uri": "calc://notes"}),
            ("ReadMcpResourceTool", {"server": "calc", "uri": "calc://nope"}),
        ),
        text_reply("Read them."),
    )
    run = ccx.run("-p", "what resources?", "--mcp-config", CONFIG, "--output-format", "json")
    assert run.returncode == 0, run.stderr
    first, second, third = ccx.api.requests
    tools = {t["name"]: t for t in first.body["tools"]}
    assert tools["ReadMcpResourceTool"]["input_schema"]["required"] == ["server", "uri"]
    assert "server" in tools["ListMcpResourcesTool"]["input_schema"]["properties"]
    (listing,) = results(second)
    listed = json.loads(listing["content"])
    assert {(r["uri"], r["server"]) for r in listed} == {
        ("calc://notes", "calc"),
        ("calc://big", "calc"),
        ("calc://logo", "calc"),
    }
    notes, logo, unknown, missing = results(third)
    assert json.loads(notes["content"])["contents"][0]["text"] == "Carry the one."
    (image,) = json.loads(logo["content"])["contents"]
    assert image["mimeType"] == "image/png"
    assert Path(image["blobSavedTo"]).read_bytes().startswith(b"\x89PNG")
    assert unknown.get("is_error") and 'Server "zzz" not found' in text_of(unknown)
    assert missing.get("is_error") and "calc://nope" in text_of(missing)


def test_plan_mode_runs_read_only_mcp_tools_and_denies_the_others(ccx: Ccx) -> None:
    ccx.api.add(
        tool_reply(("mcp__calc__peek", {}), ("mcp__calc__add", {"a": 1, "b": 2})),
        text_reply("Planned."),
    )
    run = ccx.run(
        "-p", "plan it", "--permission-mode", "plan", "--mcp-config", CONFIG,
        "--allowedTools", "mcp__calc", "--output-format", "json",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    peek, add = results(ccx.api.requests[-1])
    assert peek["content"] == '{"result":"peeked"}' and not peek.get("is_error")
    assert add.get("is_error") and "plan mode" in text_of(add)
    assert [d["tool_name"] for d in run.json()["permission_denials"]] == ["mcp__calc__add"]


def test_a_big_result_is_cut_with_a_note_and_saved_whole(ccx: Ccx) -> None:
    ccx.env["MAX_MCP_OUTPUT_TOKENS"] = "2000"
    ccx.api.add(
        tool_reply(
            ("mcp__calc__big", {"size": 20_000}),
            ("ReadMcpResourceTool", {"server": "calc", "uri": "calc://big"}),
        ),
        text_reply("Big."),
    )
    run = ccx.run("-p", "big", "--mcp-config", CONFIG, "--allowedTools", "mcp__calc")
    assert run.returncode == 0, run.stderr
    big, resource = results(ccx.api.requests[-1])
    assert "MCP output is limited to 8,000 characters" in text_of(resource)
    assert len(text_of(resource)) < 8_500
    text = text_of(big)
    assert len(text) < 8_500 and "END" not in text.split("(Output cut")[0]
    assert "MCP output is limited to 8,000 characters" in text
    saved = re.search(r"The whole output is in (\S+):", text)
    assert saved is not None
    assert json.loads(Path(saved.group(1)).read_text())["result"].endswith("\nEND")


def test_a_server_prompt_is_a_slash_command(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Reviewed."))
    run = ccx.run(
        "-p", "/mcp__calc__review the parser in depth", "--mcp-config", CONFIG,
        "--output-format", "stream-json", "--verbose",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    init = run.events()[0]
    assert init["subtype"] == "init" and "mcp__calc__review" in init["slash_commands"]
    assert ccx.api.requests[0].last_user_text().startswith("Review the, parser in depth.\n")
    missing = ccx.run("-p", "/mcp__calc__review", "--mcp-config", CONFIG)
    assert missing.returncode == 1 and "/mcp__calc__review needs topic" in missing.stderr
    unknown = ccx.run("-p", "/mcp__calc__nope x", "--mcp-config", CONFIG)
    assert unknown.returncode == 1 and "Unknown MCP prompt /mcp__calc__nope" in unknown.stderr
    assert len(ccx.api.requests) == 1  # neither reached the model


def test_a_resource_mention_brings_its_text_with_the_prompt(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Noted."))
    prompt = "what do @calc:calc://notes and @calc:calc://missing say? mail me@calc:x"
    run = ccx.run(
        "-p", prompt, "--mcp-config", CONFIG, "--output-format", "stream-json", "--verbose"
    )
    assert run.returncode == 0, run.stderr
    sent = ccx.api.requests[0].last_user_text()
    assert sent.startswith(prompt)
    assert (
        "The user mentioned the MCP resource calc://notes of the server calc:\nCarry the one."
        in sent
    )
    assert "calc://missing" not in sent.removeprefix(prompt)
    notices = [e for e in run.ccx_events() if e["type"] == "notice"]
    assert any("@calc:calc://missing was not read" in n["text"] for n in notices)
    assert not any("calc:x" in n["text"] for n in notices)  # an e-mail address is no mention
