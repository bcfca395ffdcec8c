"""The plain REPL (`ccx --plain`) driven through prompt_toolkit's pipe input, against the fake API."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import os
import re
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from agent.core.events import (
    SERVER_CLEARING,
    CompactionStarted,
    Event,
    Microcompacted,
    ModeChanged,
    ToolStarted,
)
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from compaction.thresholds import ContextLimits, context_state, warning_text
from tests.fake_env import use_fake_api
from tui.clipboard import copied_words, osc52
from tui.commands.slash import BLANK_PROMPT
from tui.fake_api import Drop, FakeApi, Reply, text_reply, tool_reply
from tui.plain.input import PipedSource, SlashCommandCompleter, toolbar_fragments
from tui.plain.render import PlainRenderer, meter_text
from tui.plain.repl import PlainRepl
from tui.session.options import RunOptions

ENTER = "\r"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeApi, Path]]:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "RETRY_LIMIT = 3\n\n\ndef main():\n    return RETRY_LIMIT\n"
    )
    (root / ".git").mkdir()
    (tmp_path / "home").mkdir()
    with FakeApi() as api:
        use_fake_api(api, tmp_path, monkeypatch)
        yield api, root


class Driver:
    """Types into the REPL and waits for it, as a user at a terminal would."""

    def __init__(self, repl: PlainRepl, pipe: PipeInput, out: io.StringIO):
        self.repl = repl
        self.pipe = pipe
        self.out = out
        self.events: list[Event] = []
        repl.observers.append(self.events.append)

    async def until(self, condition: Callable[[], Any], timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while not (value := condition()):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; output so far:\n{self.out.getvalue()}")
            await asyncio.sleep(0.01)
        return value

    async def type(self, text: str) -> None:
        """Send a line at the prompt and wait until the REPL asks for the next one."""
        await self.until(lambda: self.repl.waiting == "prompt")
        seen = self.repl.lines_read
        self.pipe.send_text(text)
        await self.until(lambda: self.repl.lines_read > seen and self.repl.waiting == "prompt")

    @property
    def text(self) -> str:
        return self.out.getvalue()


@contextlib.asynccontextmanager
async def plain_session(root: Path, **options: Any) -> AsyncIterator[Driver]:
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None)
    with create_pipe_input() as pipe:
        repl = PlainRepl(
            RunOptions(cwd=root, watch_files=False, **options),
            console=console,
            pt_input=pipe,
            pt_output=DummyOutput(),
            history_path=root.parent / "history",
        )
        driver = Driver(repl, pipe, out)
        task = asyncio.create_task(repl.run())
        driver.task = task  # type: ignore[attr-defined]
        try:
            await driver.until(lambda: repl.waiting == "prompt" or task.done())
            yield driver
        finally:
            if not task.done():
                pipe.send_text("/exit" + ENTER)
                await asyncio.wait_for(task, 10)


def transcript(config: Path) -> list[dict[str, Any]]:
    (path,) = sorted((config / "projects").glob("*/*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summary_reply(_request: Any) -> Reply:
    return text_reply(
        "<analysis>scratch</analysis>\n<summary>\n1. Primary request: read app.py.\n</summary>"
    )


async def test_prompt_tool_answer(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.add(
        tool_reply(("Read", {"file_path": str(root / "src/app.py")}), text="Let me look."),
        text_reply("It returns RETRY_LIMIT, which is 3."),
    )
    async with plain_session(root) as session:
        await session.type("what does src/app.py return?" + ENTER)
        assert "● Let me look." in session.text
        assert re.search(r"✓ Read src/app\.py · Read 5 lines", session.text)
        assert "● It returns RETRY_LIMIT, which is 3." in session.text
        assert "RETRY_LIMIT = 3" in api.requests[-1].all_text()
    assert api.errors == []


async def test_a_long_output_says_how_many_lines_its_summary_leaves_out(
    workspace: tuple[FakeApi, Path],
) -> None:
    api, root = workspace
    api.add(tool_reply(("Bash", {"command": "seq 1 300"})), text_reply("Counted."))
    async with plain_session(root) as session:
        await session.type("count to 300" + ENTER)
        assert re.search(r"✓ Bash seq 1 300 · 300 \(\+299 lines\)", session.text), session.text
    assert api.errors == []


async def test_copy_without_a_terminal_prints_the_last_reply(
    workspace: tuple[FakeApi, Path],
) -> None:
    api, root = workspace
    api.add(text_reply("Copy me, please."))
    async with plain_session(root) as session:
        await session.type("/copy" + ENTER)
        assert "There is no reply to copy yet." in session.text
        await session.type("say it" + ENTER)
        await session.type("/copy" + ENTER)
        assert session.text.count("Copy me, please.") == 2  # the reply, then /copy's print
        assert "Not a terminal: the reply is printed instead of copied." in session.text
    assert api.errors == []


def test_the_clipboard_sequence_carries_the_text_whole() -> None:
    text = "naïve\nsecond line ✓"
    sequence = osc52(text)
    assert sequence.startswith("\x1b]52;c;") and sequence.endswith("\a")
    assert base64.b64decode(sequence[len("\x1b]52;c;") : -1]).decode() == text
    assert copied_words(text) == "Copied the last reply to the clipboard (19 characters, 2 lines)."


async def test_compact_shows_progress_then_result(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.on(lambda r: SUMMARY_MARK in r.last_user_text(), summary_reply)
    api.add(text_reply("Hello, how can I help?"))
    async with plain_session(root) as session:
        await session.type("hi" + ENTER)
        await session.type("/compact keep the API notes" + ENTER)
        assert re.search(r"⟳ Compacting \(manual\): summarizing \d+ messages", session.text)
        assert re.search(r"Compacted \(manual\): \S+ → \S+ tokens in \d+\.\ds", session.text)
        assert "keep the API notes" in api.requests[-1].last_user_text()
        assert session.repl.driver is not None
        assert session.repl.driver.messages[0].kind == "summary"
    assert api.errors == []


async def test_ctrl_c_cancels_a_running_compaction(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.on(
        lambda r: SUMMARY_MARK in r.last_user_text(),
        text_reply("<summary>late</summary>", delay_s=20),
    )
    api.add(text_reply("Hello."))
    async with plain_session(root) as session:
        await session.type("hi" + ENTER)
        driver = session.repl.driver
        assert driver is not None
        before = list(driver.messages)
        seen = session.repl.lines_read
        session.pipe.send_text("/compact" + ENTER)
        await session.until(lambda: any(isinstance(e, CompactionStarted) for e in session.events))
        await asyncio.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)
        await session.until(lambda: session.repl.lines_read > seen and session.repl.waiting)
        assert "Compaction cancelled; the conversation is unchanged." in session.text
        assert list(driver.messages) == before


async def test_ctrl_c_during_an_automatic_compaction_says_it_was_cancelled(
    workspace: tuple[FakeApi, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    api, root = workspace
    monkeypatch.setenv("CCX_SESSION_MEMORY", "0")  # the compaction makes its summary request
    api.on(
        lambda r: SUMMARY_MARK in r.last_user_text(),
        text_reply("<summary>late</summary>", delay_s=20),
    )
    (root / "f.py").write_text("value = 1\n")
    words = [
        tool_reply(("Read", {"file_path": "f.py"}), text=f"step {i} " + "word " * 3000)
        for i in range(12)
    ]
    api.add(*words, text_reply("done"))
    async with plain_session(root, autocompact="30000") as session:
        seen = session.repl.lines_read
        session.pipe.send_text("read it again and again" + ENTER)
        await session.until(
            lambda: any(isinstance(e, CompactionStarted) for e in session.events), timeout=30
        )
        driver = session.repl.driver
        assert driver is not None
        before = [m.uuid for m in driver.messages]
        await asyncio.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)
        await session.until(lambda: session.repl.lines_read > seen and session.repl.waiting)
        assert "Compaction cancelled; the conversation is unchanged." in session.text
        assert [m.uuid for m in driver.messages][: len(before)] == before
        assert not [m for m in driver.messages if m.kind == "summary"]


async def test_context_cost_and_unknown_commands(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.add(text_reply("Hello."))
    async with plain_session(root) as session:
        await session.type("hi" + ENTER)
        await session.type("/context" + ENTER)
        assert "System prompt" in session.text
        assert "Free space" in session.text
        assert "A compaction now would keep:" in session.text
        await session.type("/cost" + ENTER)
        assert re.search(r"Total cost: \$\d+\.\d{4} over 1 requests", session.text)
        await session.type("/bogus" + ENTER)
        assert "Unknown command /bogus" in session.text
        await session.type("/help" + ENTER)
        assert "/undo-compact" in session.text and "/exit" in session.text


async def test_meter_line_and_toolbar(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.add(text_reply("Hello."))
    async with plain_session(root, model="claude-haiku-4-5") as session:
        await session.type("hi" + ENTER)
        meter = session.repl.meter_text()
        assert re.search(r"^[▰▱]{12} \S+ / 200K \(\d+%\) · \d+% until auto-compact$", meter)
        status = session.repl.status()
        assert status.startswith("claude-haiku-4-5 · default · ▰")
        toolbar = "".join(text for _style, text in session.repl.toolbar())
        assert "% until auto-compact" in toolbar


def test_meter_colors_by_level_and_shows_the_warning() -> None:
    limits = ContextLimits(200_000, 64_000)
    ok = context_state(50_000, limits, auto_enabled=True, compact_enabled=True)
    warning = context_state(150_000, limits, auto_enabled=True, compact_enabled=True)
    error = context_state(160_000, limits, auto_enabled=True, compact_enabled=True)
    assert (ok.level, warning.level, error.level) == ("ok", "warning", "error")
    text = meter_text(warning)
    assert re.search(r"\d+% until auto-compact$", text)
    fragments = toolbar_fragments("m", "default", text, warning.level, warning_text(warning))
    styles = {style for style, _ in fragments}
    assert "class:meter.warning" in styles
    assert any("ccx compacts at 167K; 17K to go" in part for _, part in fragments)
    red = toolbar_fragments("m", "default", meter_text(error), error.level, "x")
    assert "class:meter.error" in {style for style, _ in red}
    quiet = toolbar_fragments("m", "default", meter_text(ok), ok.level, None)
    assert "\n" not in "".join(part for _, part in quiet)


async def test_permission_deny_then_always(workspace: tuple[FakeApi, Path], tmp_path: Path) -> None:
    api, root = workspace
    touch = ("Bash", {"command": "touch made.txt", "description": "Make a file"})
    api.add(
        tool_reply(touch),
        text_reply("Understood, I will not."),
        tool_reply(touch),
        text_reply("Made it."),
    )
    async with plain_session(root) as session:
        await session.until(lambda: session.repl.waiting == "prompt")
        session.pipe.send_text("make a file" + ENTER)
        await session.until(lambda: session.repl.waiting == "permission")
        assert "? Allow Bash touch made.txt" in session.text
        session.pipe.send_text("n")
        await session.until(lambda: "Understood, I will not." in session.text)
        assert "→ denied" in session.text
        assert not (root / "made.txt").exists()
        assert "denied permission" in api.requests[1].all_text()

        await session.until(lambda: session.repl.waiting == "prompt")
        session.pipe.send_text("please, make it" + ENTER)
        await session.until(lambda: session.repl.waiting == "permission")
        session.pipe.send_text("a")
        await session.until(lambda: "Made it." in session.text)
        assert "→ always allowed: Bash(touch made.txt" in session.text
        assert (root / "made.txt").exists()
    settings = json.loads((root / ".claude" / "settings.local.json").read_text())
    assert any(r.startswith("Bash(touch made.txt") for r in settings["permissions"]["allow"])
    assert api.errors == []


async def test_a_permission_question_shows_every_line_that_would_run(
    workspace: tuple[FakeApi, Path],
) -> None:
    api, root = workspace
    sneaky = ("Bash", {"command": "echo ok\nrm -rf build", "description": "Say ok"})
    api.add(tool_reply(sneaky), text_reply("Fine."))
    async with plain_session(root) as session:
        await session.until(lambda: session.repl.waiting == "prompt")
        session.pipe.send_text("go" + ENTER)
        await session.until(lambda: session.repl.waiting == "permission")
        assert "? Allow Bash echo ok" in session.text
        assert "$ rm -rf build" in session.text  # not only the first line
        session.pipe.send_text("n")
        await session.until(lambda: "Fine." in session.text)
    assert api.errors == []


async def test_an_edit_or_write_question_shows_the_change(
    workspace: tuple[FakeApi, Path],
) -> None:
    api, root = workspace
    (root / "app.py").write_text("LIMIT = 3\n")
    content = "".join(f"line {n}\n" for n in range(1, 31))
    api.add(
        tool_reply(("Read", {"file_path": "app.py"})),
        tool_reply(
            ("Edit", {"file_path": "app.py", "old_string": "LIMIT = 3", "new_string": "LIMIT = 5"})
        ),
        tool_reply(("Write", {"file_path": "notes.txt", "content": content})),
        text_reply("Done."),
    )
    async with plain_session(root) as session:
        await session.until(lambda: session.repl.waiting == "prompt")
        session.pipe.send_text("change it" + ENTER)
        await session.until(lambda: session.repl.waiting == "permission")
        assert "? Allow Edit" in session.text
        assert "-LIMIT = 3" in session.text and "+LIMIT = 5" in session.text
        assert "@@ -1 +1 @@" in session.text
        session.pipe.send_text("y")
        await session.until(lambda: "? Allow Write" in session.text)
        await session.until(lambda: session.repl.waiting == "permission")
        assert "line 20" in session.text and "line 21" not in session.text
        assert "… 10 more lines" in session.text
        session.pipe.send_text("n")
        await session.until(lambda: "Done." in session.text)
    assert (root / "app.py").read_text() == "LIMIT = 5\n"
    assert not (root / "notes.txt").exists()
    assert api.errors == []


async def test_ctrl_c_interrupts_a_running_bash(
    workspace: tuple[FakeApi, Path], tmp_path: Path
) -> None:
    api, root = workspace
    api.add(
        tool_reply(("Bash", {"command": "sleep 30", "description": "Wait"}), text="Waiting."),
        text_reply("Still here."),
    )
    async with plain_session(root, permission_mode="bypassPermissions") as session:
        await session.until(lambda: session.repl.waiting == "prompt")
        seen = session.repl.lines_read
        started = time.monotonic()
        session.pipe.send_text("wait a bit" + ENTER)
        tool = await session.until(
            lambda: next((e for e in session.events if isinstance(e, ToolStarted)), None)
        )
        await asyncio.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)
        await session.until(lambda: session.repl.lines_read > seen and session.repl.waiting)
        assert time.monotonic() - started < 10
        assert "Interrupted. The conversation is intact" in session.text
        await session.type("are you there?" + ENTER)
        assert "Still here." in session.text
        assert tool.tool_use_id in api.requests[-1].tool_result_ids()
    results = [
        block
        for record in transcript(tmp_path / "config")
        if record.get("message", {}).get("role") == "user"
        for block in record["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert [r["tool_use_id"] for r in results] == [tool.tool_use_id]
    assert results[0]["is_error"] is True
    assert api.errors == []


@pytest.mark.parametrize("keys", ["/exit\r", "/quit\r", "\x04", "\x03"])
async def test_exit_ctrl_d_and_ctrl_c_at_an_empty_prompt_quit_with_0(
    workspace: tuple[FakeApi, Path], keys: str
) -> None:
    _api, root = workspace
    async with plain_session(root) as session:
        session.pipe.send_text(keys)
        assert await asyncio.wait_for(session.task, 10) == 0  # type: ignore[attr-defined]


async def test_ctrl_c_with_text_clears_the_line(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.add(text_reply("Hi."))
    async with plain_session(root) as session:
        await session.type("never mind\x03hello" + ENTER)
        assert api.requests[-1].last_user_text() == "hello"


async def test_multi_line_input(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.add(text_reply("One."), text_reply("Two."))
    async with plain_session(root) as session:
        await session.type("first line\\" + ENTER + "second line" + ENTER)
        assert api.requests[-1].last_user_text() == "first line\nsecond line"
        await session.type("alpha\x1b\rbeta" + ENTER)
        assert api.requests[-1].last_user_text() == "alpha\nbeta"


async def test_shift_tab_cycles_the_permission_mode(workspace: tuple[FakeApi, Path]) -> None:
    _api, root = workspace
    async with plain_session(root) as session:
        driver = session.repl.driver
        assert driver is not None
        session.pipe.send_text("\x1b[Z")
        await session.until(lambda: driver.mode == "acceptEdits")
        session.pipe.send_text("\x1b[Z")
        await session.until(lambda: driver.mode == "plan")
        session.pipe.send_text("\x1b[Z")
        await session.until(lambda: driver.mode == "default")
        assert " · default · " in session.repl.status()


def test_slash_commands_complete() -> None:
    completer = SlashCommandCompleter({"compact": "Summarize", "context": "Show", "cost": "$"})
    found = completer.get_completions(Document("/co"), CompleteEvent())
    assert [c.text for c in found] == ["/compact", "/context", "/cost"]
    found = completer.get_completions(Document("/com"), CompleteEvent())
    assert [c.text for c in found] == ["/compact"]
    assert list(completer.get_completions(Document("/compact now"), CompleteEvent())) == []
    assert list(completer.get_completions(Document("hello /co"), CompleteEvent())) == []


async def test_piped_lines_continue_with_a_backslash_and_end_with_eof() -> None:
    source = PipedSource(io.StringIO("one\\\ntwo\nthree\n"))
    assert await source.read_prompt() == "one\ntwo"
    assert await source.read_prompt() == "three"
    with pytest.raises(EOFError):
        await source.read_prompt()
    assert await PipedSource(io.StringIO("a\n")).read_permission() == "always"
    assert await PipedSource(io.StringIO("")).read_permission() == "deny"


async def test_history_is_written_under_the_config_dir(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.add(text_reply("Hi."))
    async with plain_session(root) as session:
        await session.type("remember me" + ENTER)
    assert "remember me" in (root.parent / "history").read_text()


async def test_options_that_cannot_be_honoured_end_with_1(
    workspace: tuple[FakeApi, Path],
) -> None:
    _api, root = workspace
    out = io.StringIO()
    with create_pipe_input() as pipe:
        repl = PlainRepl(
            RunOptions(cwd=root, resume="no-such-session", watch_files=False),
            console=Console(file=out, width=120, color_system=None),
            pt_input=pipe,
            pt_output=DummyOutput(),
        )
        assert await repl.run() == 1
    assert "No session with id 'no-such-session'" in out.getvalue()


async def test_a_plan_is_shown_and_approved_inline(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    plan = "# Plan\n\n1. Raise RETRY_LIMIT to 5."
    api.add(tool_reply(("ExitPlanMode", {"plan": plan})), text_reply("Starting."))
    async with plain_session(root, permission_mode="plan") as session:
        driver = session.repl.driver
        assert driver is not None
        session.pipe.send_text("plan the change" + ENTER)
        await session.until(lambda: session.repl.waiting == "permission")
        assert "? The plan is ready:" in session.text and "Raise RETRY_LIMIT to 5." in session.text
        session.pipe.send_text("y")
        await session.until(lambda: "Starting." in session.text)
        assert "→ approved" in session.text
        assert driver.mode == "default"
        modes = [(e.previous, e.mode) for e in session.events if isinstance(e, ModeChanged)]
        assert modes == [("plan", "default")]  # the approved plan said so on the channel
    assert api.errors == []


async def test_a_retried_response_says_the_partial_text_is_discarded(
    workspace: tuple[FakeApi, Path],
) -> None:
    api, root = workspace
    api.add(Drop(after_events=6), text_reply("The whole answer."))
    async with plain_session(root) as session:
        await session.type("hi" + ENTER)
        text = session.text
    partial = text.index("● This answer")
    note = text.index("(retrying; the partial reply above is discarded)")
    assert partial < note < text.index("● The whole answer.")


def test_clearing_by_ccx_and_by_the_api_read_differently() -> None:
    out = io.StringIO()
    renderer = PlainRenderer(Console(file=out, width=200))
    renderer.handle(Microcompacted("pressure", 3, 4_500))
    renderer.handle(Microcompacted(SERVER_CLEARING, 1, 34_000))
    local, server = out.getvalue().splitlines()
    assert (
        local.strip()
        == "Cleared 3 old tool results, freed 4.5K tokens (context was near the limit)"
    )
    assert server.strip().startswith("The API clears 1 old tool result from what the model sees")


async def test_a_transcript_that_cannot_be_written_is_said_once_and_each_turn_stops(
    workspace: tuple[FakeApi, Path], tmp_path: Path
) -> None:
    api, root = workspace
    (tmp_path / "config").write_text("a file where the config folder should be")
    async with plain_session(root) as session:
        await session.type("first" + ENTER)
        await session.type("second" + ENTER)
        text = session.text
    assert text.count("Could not write the session transcript") == 1  # the one notice
    assert text.count("The turn was stopped because the session transcript") == 2
    assert "Unexpected error" not in text
    assert api.requests == [], "no model call for a turn that cannot be saved"


async def test_a_line_of_whitespace_is_told_it_sent_nothing(
    workspace: tuple[FakeApi, Path],
) -> None:
    api, root = workspace
    api.add(text_reply("Hello."))
    async with plain_session(root) as session:
        await session.type(ENTER)  # an empty line: passed over in silence
        assert BLANK_PROMPT not in session.text
        await session.type("   \t" + ENTER)
        assert session.text.count(BLANK_PROMPT) == 1
        await session.type("hello" + ENTER)
        assert "● Hello." in session.text
    (request,) = api.requests
    assert request.last_user_text().startswith("hello")


@pytest.mark.parametrize("new_line", ["\x1b[13;2u", "\x1b[27;2;13~", "\x1b\r", "\n"])
async def test_shift_enter_alt_enter_and_ctrl_j_add_a_line(
    workspace: tuple[FakeApi, Path], new_line: str
) -> None:
    api, root = workspace
    api.add(text_reply("Two lines."))
    async with plain_session(root) as session:
        await session.type("alpha" + new_line + "beta" + ENTER)
        assert api.requests[-1].last_user_text() == "alpha\nbeta"


async def test_ctrl_r_finds_an_earlier_prompt(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.add(text_reply("One."), text_reply("Two."), text_reply("Again."))
    async with plain_session(root) as session:
        await session.type("fix the retry limit" + ENTER)
        await session.type("explain the parser" + ENTER)
        # ctrl+r, the query, Enter keeps the match; the next Enter sends it
        await session.type("\x12retry" + ENTER + ENTER)
        assert api.requests[-1].last_user_text() == "fix the retry limit"
