"""Custom commands in the plain REPL: completed once the session is built, run as turns."""

from __future__ import annotations

from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from agent.fake_api import FakeApi, text_reply
from tests.tui.plain.test_repl import ENTER, plain_session, workspace  # noqa: F401 - fixture
from tui.plain.input import SlashCommandCompleter


async def test_custom_commands_complete_and_run(workspace: tuple[FakeApi, Path]) -> None:  # noqa: F811
    api, root = workspace
    commands = root / ".claude" / "commands" / "frontend"
    commands.mkdir(parents=True)
    (commands / "Build.md").write_text("---\ndescription: Build it\n---\nBuild $ARGUMENTS")
    api.add(text_reply("Built."))
    async with plain_session(root) as session:
        completer = SlashCommandCompleter(session.repl.completions)
        found = list(completer.get_completions(Document("/front"), CompleteEvent()))
        assert [(c.text, c.display_meta_text) for c in found] == [
            ("/frontend:Build", "Build it (project)")
        ]
        session.pipe.send_text("/frontend:build web" + ENTER)
        await session.until(lambda: api.requests, timeout=10)  # names match without regard to case
        await session.until(lambda: "Built." in session.text)
    (request,) = api.requests
    assert request.last_user_text().endswith("Build web")
