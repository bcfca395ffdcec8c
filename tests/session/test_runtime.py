"""The composition root: what it tells the user, and what it rebuilds when the session changes."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event, Notice
from agent.core.messages import user_text
from agent.model.catalog import ModelLimits
from agent.sessions.session import TranscriptWriteError
from tests.fake_env import use_fake_api
from tui.commands import builtin as commands
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions, StartupError
from tui.session.runtime import Runtime


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


@pytest.fixture
def events() -> list[Event]:
    return []


def make_runtime(repo: Path, events: list[Event], **kwargs: Any) -> Runtime:
    options = RunOptions(cwd=repo, watch_files=False, headless=False)
    return assemble_runtime(options, events.append, **kwargs)


def notices(events: list[Event], level: str | None = None) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and (level is None or e.level == level)]


def system_text(runtime: Runtime) -> str:
    return "\n".join(block["text"] for block in runtime.agent.system)


async def test_an_always_rule_that_cannot_be_saved_still_applies(
    api: FakeApi, repo: Path, events: list[Event]
) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text("{not json")
    api.add(
        tool_reply(("Bash", {"command": "touch made.txt"})),
        tool_reply(("Bash", {"command": "touch made.txt"})),
        text_reply("touched twice"),
    )
    asked: list[str] = []

    async def always(request: Any) -> str:
        asked.append(request.tool_name)
        return "always"

    runtime = make_runtime(repo, events, ask=always)
    try:
        outcome = await runtime.agent.submit("make a file")
    finally:
        await runtime.aclose()
    assert outcome.result == "touched twice"
    assert asked == ["Bash"]  # the second call was allowed by the rule kept in memory
    assert any("Could not save the rule" in text for text in notices(events))
    results = [m.content[0] for m in runtime.agent.messages if m.kind == "tool_result"]
    assert len(results) == 2 and not any(block.get("is_error") for block in results)
    assert (repo / "made.txt").exists()
    assert (repo / ".claude" / "settings.local.json").read_text() == "{not json"
    assert api.errors == []


async def test_clear_rebuilds_the_system_prompt_from_the_memory_files(
    api: FakeApi, repo: Path, events: list[Event]
) -> None:
    (repo / "CLAUDE.md").write_text("Indent with tabs.\n")
    runtime = make_runtime(repo, events)
    try:
        before = runtime.agent.system
        assert "Indent with tabs." in system_text(runtime)
        (repo / "CLAUDE.md").write_text("Indent with four spaces.\n")
        result = await commands.run_command(runtime, "/clear")
    finally:
        await runtime.aclose()
    assert not result.is_error
    assert runtime.agent.system is runtime.system and runtime.system is not before
    assert "Indent with four spaces." in system_text(runtime)
    assert "Indent with tabs." not in system_text(runtime)
    assert runtime.memory_texts == ["Indent with four spaces.\n"]


async def test_model_switch_renames_the_model_in_the_system_prompt(
    api: FakeApi, repo: Path, events: list[Event]
) -> None:
    runtime = make_runtime(repo, events)
    try:
        before = runtime.agent.system
        assert "Model: claude-opus-5-5" in system_text(runtime)
        result = await commands.run_command(runtime, "/model haiku")
    finally:
        await runtime.aclose()
    assert result.text == "Model set to claude-haiku-5-5 (effort medium)."
    assert runtime.model == runtime.agent.model == "claude-haiku-5-5"
    assert runtime.agent.system is runtime.system and runtime.system is not before
    assert "Model: claude-haiku-5-5" in system_text(runtime)
    assert "claude-opus-5-5" not in system_text(runtime)


async def test_what_the_user_switches_changes_parts_never_the_runtimes_fields(
    api: FakeApi, repo: Path, events: list[Event]
) -> None:
    """/model, /output-style, plan mode and /clear change the session through its parts: every
    field of the runtime is the object it was assembled with, and none can be bound again."""
    runtime = make_runtime(repo, events)
    assembled = {f.name: getattr(runtime, f.name) for f in dataclasses.fields(runtime)}
    first_session = runtime.session
    try:
        for line in ("/model haiku", "/output-style Explanatory", "/plan", "/plan", "/clear"):
            assert not (await commands.run_command(runtime, line)).is_error, line
    finally:
        await runtime.aclose()
    assert runtime.model == "claude-haiku-5-5" and runtime.output_style.name == "Explanatory"
    assert runtime.session is not first_session and runtime.agent.policy is runtime.context
    changed = [n for n, part in assembled.items() if getattr(runtime, n) is not part]
    assert changed == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        runtime.agent = runtime.agent  # type: ignore[misc]


def test_memory_file_warnings_are_shown(api: FakeApi, repo: Path, events: list[Event]) -> None:
    (repo / "CLAUDE.md").write_text("x" * 101 * 1024)
    runtime = make_runtime(repo, events)
    runtime.close()
    (warning,) = [t for t in notices(events) if "memory file" in t]
    assert "over the 100 KB limit" in warning


def test_a_transcript_that_cannot_be_written_is_one_error_notice_and_stops_turns(
    api: FakeApi, repo: Path, events: list[Event]
) -> None:
    runtime = make_runtime(repo, events)
    folder = runtime.session.path.parent
    assert not folder.exists()  # a new session's file appears with its first record
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the session folder should be: every write fails")
    with pytest.raises(TranscriptWriteError) as first:
        runtime.agent.append(user_text("one"))
    with pytest.raises(TranscriptWriteError):
        runtime.agent.append(user_text("two"))
    runtime.close()
    (error,) = notices(events, "error")
    path = runtime.session.path
    assert error == f"Could not write the session transcript {path} (File exists)."
    assert first.value.message.startswith("The turn was stopped because the session transcript")
    assert f"ccx -r {runtime.session.id}" in first.value.message
    assert [m.text() for m in runtime.agent.messages] == ["one", "two"]  # kept in memory


def test_an_unreadable_session_is_a_startup_error(
    api: FakeApi, repo: Path, events: list[Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime(repo, events)
    runtime.agent.append(user_text("hello"))
    runtime.close()

    def unreadable(_path: Path, _until: str | None = None) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("agent.sessions.session.read_records", unreadable)
    options = RunOptions(cwd=repo, watch_files=False, resume=runtime.session.id)
    with pytest.raises(StartupError, match=r"Cannot resume the session: .*Permission denied"):
        assemble_runtime(options, events.append)


async def test_output_limits_prefer_the_models_api_figures(
    api: FakeApi, repo: Path, events: list[Event]
) -> None:
    runtime = make_runtime(repo, events)
    runtime.agent.messages.append(user_text("hi"))
    try:
        assert runtime.agent.build_request(8_192)["max_tokens"] == 8_192
        runtime.models.fetched[runtime.model] = ModelLimits(200_000, 4_096)
        assert runtime.agent.build_request(8_192)["max_tokens"] == 4_096
    finally:
        await runtime.aclose()


async def test_aclose_closes_the_api_client(api: FakeApi, repo: Path, events: list[Event]) -> None:
    runtime = make_runtime(repo, events)
    client = runtime.agent.client.client
    await runtime.aclose()
    assert client.is_closed()
