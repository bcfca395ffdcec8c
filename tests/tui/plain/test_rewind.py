"""The plain REPL's rewind: Esc twice on an empty prompt lists the prompts to go back to;
the one chosen leaves the conversation with all after it, the files come back when asked,
and its text is in the next prompt, ready to edit and send again."""

from __future__ import annotations

from pathlib import Path

from tests.tui.plain.test_repl import ENTER, plain_session, workspace  # noqa: F401 (fixture)
from tui.fake_api import FakeApi, text_reply, tool_reply

ESC_ESC = "\x1b\x1b"


async def test_esc_esc_rewinds_and_the_prompt_comes_back(
    workspace: tuple[FakeApi, Path],  # noqa: F811
) -> None:
    api, root = workspace
    note = root / "note.txt"
    api.add(
        text_reply("Hello there."),
        tool_reply(("Write", {"file_path": str(note), "content": "written\n"})),
        text_reply("Wrote the note."),
        text_reply("Again."),
    )
    async with plain_session(root, permission_mode="acceptEdits") as session:
        await session.type("say hello" + ENTER)
        await session.type("write the note" + ENTER)
        assert note.exists()
        session.pipe.send_text(ESC_ESC)
        await session.until(lambda: "A number; Enter keeps" in session.text)
        listed = session.text.split("Go back to before which prompt?")[-1]
        assert listed.index(" 1. write the note") < listed.index(" 2. say hello")
        session.pipe.send_text("1" + ENTER)
        await session.until(lambda: "y = put the files back too" in session.text)
        assert "changed 1 file since then:" in session.text and "note.txt" in session.text
        session.pipe.send_text("y")
        await session.until(lambda: "Rewound to before “write the note”" in session.text)
        await session.until(lambda: session.repl.waiting == "prompt")
        buffer = session.repl.source.session.default_buffer  # type: ignore[attr-defined]
        await session.until(lambda: buffer.text == "write the note")
        assert not note.exists() and "Files put back:" in session.text
        driver = session.repl.driver
        assert driver is not None
        assert [m.text() for m in driver.messages] == ["say hello", "Hello there."]
        await session.type(ENTER)  # the prompt given back, sent again as it is
        assert api.requests[-1].last_user_text() == "write the note"
        assert "Again." in session.text


async def test_enter_keeps_the_conversation_and_esc_esc_needs_an_empty_prompt(
    workspace: tuple[FakeApi, Path],  # noqa: F811
) -> None:
    api, root = workspace
    api.add(text_reply("Hello there."))
    async with plain_session(root) as session:
        session.pipe.send_text(ESC_ESC)
        await session.until(lambda: "no prompt to rewind to" in session.text)
        await session.until(lambda: session.repl.waiting == "prompt")
        await session.type("say hello" + ENTER)
        session.pipe.send_text("draft" + ESC_ESC)
        await session.until(lambda: session.repl.source.session.default_buffer.text == "draft")  # type: ignore[attr-defined]
        assert "Go back to before" not in session.text
        session.pipe.send_text("\x15")  # ctrl+u: the line emptied
        await session.until(lambda: session.repl.source.session.default_buffer.text == "")  # type: ignore[attr-defined]
        session.pipe.send_text(ESC_ESC)
        await session.until(lambda: "A number; Enter keeps" in session.text)
        session.pipe.send_text(ENTER)
        await session.until(lambda: session.repl.waiting == "prompt")
        driver = session.repl.driver
        assert driver is not None and len(driver.messages) == 2
