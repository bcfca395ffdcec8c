"""Custom commands in the plain REPL: completed once the session is built, run as turns."""

from __future__ import annotations

import json
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from tests.tui.plain.test_repl import ENTER, plain_session, workspace  # noqa: F401 - fixture
from tui.fake_api import FakeApi, text_reply
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


async def test_the_status_line_joins_the_toolbar_after_the_meter(
    workspace: tuple[FakeApi, Path],  # noqa: F811
) -> None:
    api, root = workspace
    config = root.parent / "config"
    config.mkdir(exist_ok=True)
    command = "cat > /dev/null; printf '\\033[1mSTATUS-OK\\033[0m\\nsecond\\n'"
    (config / "settings.json").write_text(json.dumps({"statusLine": {"command": command}}))
    api.add(text_reply("Fine."))
    async with plain_session(root) as session:
        repl = session.repl
        await session.until(lambda: repl.driver and repl.driver.status_line_text)
        session.pipe.send_text("hi" + ENTER)
        await session.until(lambda: "Fine." in session.text)
        toolbar = "".join(text for _style, text, *_ in repl.toolbar())
    assert "STATUS-OK" in toolbar and "second" not in toolbar and "\x1b" not in toolbar
    assert toolbar.index("STATUS-OK") > toolbar.index("/")  # after the meter's figures
