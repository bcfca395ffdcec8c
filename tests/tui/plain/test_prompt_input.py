"""The plain REPL's prompt: long pastes folded and sent whole, ``@`` completing project paths."""

from __future__ import annotations

import time
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from tests.tui.plain import test_repl
from tests.tui.plain.test_repl import ENTER, plain_session
from tui.fake_api import FakeApi, text_reply
from tui.plain.input import PathCompleter
from tui.project_index import ProjectIndex

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
workspace = test_repl.workspace  # the REPL tests' session folder and fake API


async def test_a_long_paste_is_sent_whole(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    log = "".join(f"error {i}: retry limit reached\n" for i in range(1, 31))
    api.add(text_reply("Thirty errors."))
    async with plain_session(root) as session:
        source = session.repl.source
        await session.type("why " + PASTE_START + log + PASTE_END + ENTER)
        assert api.requests[-1].last_user_text().rstrip() == "why " + log.rstrip()
        assert source.session.history.get_strings()[-1] == "why [Pasted text #1 +30 lines]"  # type: ignore[attr-defined]


async def test_backspace_deletes_a_folded_paste_whole(workspace: tuple[FakeApi, Path]) -> None:
    api, root = workspace
    api.add(text_reply("Short."))
    async with plain_session(root) as session:
        await session.type("a " + PASTE_START + "1\n2\n3\n4\n" + PASTE_END + "\x7f" + "b" + ENTER)
        assert api.requests[-1].last_user_text() == "a b"


def test_at_completes_project_paths_once_listed(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x\n")
    (tmp_path / "my notes.md").write_text("x\n")
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "app.log").write_text("x\n")
    index = ProjectIndex(tmp_path, watch=False)
    completer = PathCompleter(index)
    try:

        def texts(line: str) -> list[str]:
            return [c.text for c in completer.get_completions(Document(line), CompleteEvent())]

        assert texts("read @ap") == []  # the first @ starts the listing
        deadline = time.monotonic() + 10
        while index.matcher is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert texts("read @ap") == ["@src/app.py"]  # app.log is ignored
        assert texts("@sr") == ["@src/", "@src/app.py"]
        assert texts("@notes") == ['@"my notes.md"']
        assert texts("mail me@ap") == []  # not a word of its own
        assert texts("read @ap now") == []
    finally:
        index.stop()
