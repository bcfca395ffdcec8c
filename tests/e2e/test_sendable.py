"""Nothing the API refuses leaves ccx, end to end: blank prompts and commands, MCP images and
blank results, response blocks of unknown types, a resumed transcript holding them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Ccx
from tests.e2e.test_mcp import approve_all, write_mcp_json
from tests.mcp.servers import stdio_entry
from tests.request_rules import refusals
from tui.fake_api import Reply, text_reply, tool_reply

BLANK = "Nothing to send: the prompt is empty or only whitespace."


def all_refusals(ccx: Ccx) -> list[str]:
    return [problem for request in ccx.api.requests for problem in refusals(request.body)]


def user_line(content: object) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"


def test_a_blank_prompt_with_p_sends_nothing_and_exits_1(ccx: Ccx) -> None:
    for prompt in ("   ", " \n\t "):
        run = ccx.run("-p", prompt, "--output-format", "json")
        assert run.returncode == 1
        assert BLANK in run.stderr and run.stdout == ""
    piped = ccx.run("-p", stdin="  \n \n")  # nothing but whitespace on stdin: no prompt at all
    assert piped.returncode == 2 and "needs a prompt" in piped.stderr
    assert ccx.api.requests == [] and ccx.transcripts() == []


def test_stream_json_answers_a_blank_message_with_an_error_and_goes_on(ccx: Ccx) -> None:
    ccx.api.add(text_reply("Hello there."))
    stdin = (
        user_line("   ")
        + user_line([{"type": "text", "text": " \n "}, {"type": "text", "text": ""}])
        + user_line("hello")
    )
    run = ccx.run(
        "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
        stdin=stdin,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    results = [e for e in run.events() if e["type"] == "result"]
    assert [(r["is_error"], r["result"]) for r in results] == [
        (True, BLANK),
        (True, BLANK),
        (False, "Hello there."),
    ]
    (request,) = ccx.api.requests
    assert [m["role"] for m in request.messages] == ["user"]  # the blank ones left no trace
    assert all_refusals(ccx) == []


def test_a_command_with_an_empty_body_is_refused_and_the_session_goes_on(ccx: Ccx) -> None:
    commands = ccx.repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "empty.md").write_text("")
    (commands / "blank.md").write_text("---\ndescription: nothing here\n---\n  \n\n")
    (commands / "ask.md").write_text("Answer: $ARGUMENTS")
    for line in ("/empty", "/blank"):
        run = ccx.run("-p", line, "--output-format", "json")
        assert run.returncode == 1
        name = line.lstrip("/")
        assert run.json()["result"] == (
            f"/{name}: nothing to send: the command's text is empty or only whitespace "
            f"({commands / f'{name}.md'})."
        )
    assert ccx.api.requests == []
    ccx.api.add(text_reply("42"))
    run = ccx.run("-p", "/ask  ", "--output-format", "json")  # blank arguments: no block
    assert run.returncode == 0, run.stderr
    assert all_refusals(ccx) == []


def test_an_empty_command_with_arguments_sends_the_arguments(ccx: Ccx) -> None:
    commands = ccx.repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "empty.md").write_text("\n")
    ccx.api.add(text_reply("ok"))
    run = ccx.run("-p", "/empty check the tests", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    (request,) = ccx.api.requests
    texts = [b["text"] for b in request.messages[-1]["content"] if b["type"] == "text"]
    assert any(text.strip() == "ARGUMENTS: check the tests" for text in texts)
    assert all_refusals(ccx) == []


def test_mcp_images_the_api_refuses_are_saved_and_later_requests_still_go(ccx: Ccx) -> None:
    write_mcp_json(ccx, calc=stdio_entry())
    approve_all(ccx)
    ccx.api.add(
        tool_reply(
            ("mcp__calc__picture", {"kind": "svg"}),
            ("mcp__calc__picture", {"kind": "bmp"}),
            ("mcp__calc__picture", {"kind": "png"}),
            ("mcp__calc__picture", {"kind": "blank"}),
        ),
        text_reply("Seen."),
        text_reply("Still here."),
    )
    args = ("--allowedTools", "mcp__calc", "--output-format", "json")
    run = ccx.run("-p", "show me the pictures", *args)
    assert run.returncode == 0, run.stderr
    again = ccx.run("-p", "-c", "and now?", *args)
    assert again.returncode == 0, again.stderr
    assert again.json()["result"] == "Still here."
    assert all_refusals(ccx) == [] and ccx.api.errors == []
    results = [b for b in ccx.api.requests[1].messages[-1]["content"] if b["type"] == "tool_result"]
    svg, bmp, png, blank = (r["content"] for r in results)
    assert blank == "(no output)"
    assert [b["type"] for b in png] == ["image"]
    assert png[0]["source"]["media_type"] == "image/png"
    for content, mime, suffix in ((svg, "image/svg+xml", ".svg"), (bmp, "image/bmp", ".bmp")):
        text = content if isinstance(content, str) else content[0]["text"]
        assert text.startswith(f"[An image from calc: {mime}, ")
        saved = Path(text.rsplit("saved to ", 1)[1].rstrip("]"))
        assert saved.suffix == suffix and saved.is_file()
        assert saved.is_relative_to(ccx.config / "projects")  # the session's folder


def test_response_blocks_of_unknown_types_are_never_sent_back(ccx: Ccx) -> None:
    ccx.api.add(
        Reply(
            content=[
                {"type": "text", "text": "Reading."},
                {"type": "fancy_future_block", "payload": {"x": 1}},
                {"type": "text", "text": "  \n"},
                {"type": "tool_use", "name": "Read", "input": {"file_path": "src/app.py"}},
            ],
            stop_reason="tool_use",
        ),
        Reply(content=[{"type": "fancy_future_block", "payload": {}}]),  # nothing ccx knows:
        text_reply("Read it."),  # an empty reply, asked again
        text_reply("Done."),
    )
    run = ccx.run("-p", "read it", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Read it."
    again = ccx.run("-p", "-c", "go on", "--output-format", "json")
    assert again.returncode == 0, again.stderr
    assert again.json()["result"] == "Done."
    assert all_refusals(ccx) == [] and ccx.api.errors == []
    sent = json.dumps([request.messages for request in ccx.api.requests])
    assert "fancy_future_block" not in sent
    assert "fancy_future_block" not in (ccx.transcripts()[0]).read_text()
    last = ccx.api.requests[-1].messages
    assert last[1]["content"][0] == {"type": "text", "text": "Reading."}
    assert [b["type"] for b in last[1]["content"]] == ["text", "tool_use"]
    assert last[3]["content"] == [{"type": "text", "text": "Read it."}]


def test_a_resumed_transcript_with_unknown_blocks_and_blank_text_sends_neither(ccx: Ccx) -> None:
    """A transcript an older ccx wrote (an unknown block kept, an empty command body): the
    session resumes and its requests go."""
    ccx.api.add(tool_reply(("Read", {"file_path": "src/app.py"})), text_reply("First."))
    assert ccx.run("-p", "read it").returncode == 0
    (path,) = ccx.transcripts()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        message = record.get("message") if record.get("type") == "message" else None
        if message is None:
            continue
        if message["role"] == "assistant":
            message["content"].insert(0, {"type": "fancy_future_block", "payload": 1})
        elif record.get("kind") == "prompt":
            message["content"].append({"type": "text", "text": ""})
        elif record.get("kind") == "tool_result":
            message["content"][0]["content"] = [{"type": "text", "text": " "}]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    ccx.api.add(text_reply("Resumed."))
    run = ccx.run("-p", "-c", "go on", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Resumed."
    assert all_refusals(ccx) == [] and ccx.api.errors == []
    request = ccx.api.requests[-1]
    assert "fancy_future_block" not in json.dumps(request.messages)
    assert request.messages[2]["content"][0]["content"] == "(no output)"
