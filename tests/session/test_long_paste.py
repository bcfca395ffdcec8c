"""A session never wedges on size, and when the context is full the words name what works.

A paste too big for the window the session works against is saved and referenced, never
sent whole: with ``--autocompact`` under the model's window, the share one message may take
is measured against the smaller window, so the next requests (and a compaction) still fit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.events import Event
from compaction.manager import ContextFullError
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from compaction.thresholds import warning_text
from tests.fake_env import use_fake_api
from tui.commands.builtin import run_command
from tui.fake_api import FakeApi, Fault, text_reply, tool_reply
from tui.fake_api.billing import estimate_request_tokens
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions

LINES = 14_706


def pasted_log() -> str:
    return "\n".join(
        f"{i:05d} a pasted log line with a few words in it, and more" for i in range(LINES)
    )


async def test_a_paste_bigger_than_the_compaction_window_is_saved_not_sent(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = pasted_log()  # about 0.9 MB: a quarter of the 1M model's window, not of 200K
    events: list[Event] = []
    with FakeApi() as api:
        use_fake_api(api, tmp_path, monkeypatch)
        runtime = assemble_runtime(
            RunOptions(cwd=repo, watch_files=False, headless=False, autocompact="200000"),
            events.append,
        )
        try:
            assert runtime.context.limits(runtime.agent).window == 200_000
            api.add(text_reply("read the head and tail"))
            await runtime.agent.submit(text)
            sent = estimate_request_tokens(api.requests[-1].body)
            state = runtime.context.state(runtime.agent)
            (saved,) = (runtime.session.folder / "user-messages").iterdir()
            api.add(text_reply("<summary>the user pasted a log</summary>"))
            compacted = await run_command(runtime, "/compact")
            api.add(text_reply("still here"))
            after = await runtime.agent.submit("what next?")
        finally:
            await runtime.aclose()
    assert saved.read_text() == text  # the whole paste, on disk
    body_text = api.requests[0].all_text()
    assert str(saved) in body_text and "00000 a pasted log line" in body_text
    assert f"{LINES - 1:05d} a pasted log line" in body_text  # its tail
    assert "07000 a pasted log line" not in body_text  # its middle is not sent
    assert sent < 20_000 and state.used < 20_000 and state.level == "ok"
    assert not compacted.is_error and after.result == "still here"


async def test_a_compaction_that_fails_at_a_full_context_names_clear(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "big.txt").write_text("a line of a big file, read whole\n" * 1_200)
    events: list[Event] = []
    with FakeApi() as api:
        use_fake_api(api, tmp_path, monkeypatch)
        monkeypatch.setenv("DISABLE_AUTO_COMPACT", "1")
        runtime = assemble_runtime(
            RunOptions(cwd=repo, watch_files=False, headless=False, autocompact="20000"),
            events.append,
        )
        try:
            api.add(tool_reply(("Read", {"file_path": "big.txt"})), text_reply("read"))
            with pytest.raises(ContextFullError, match="/clear"):
                await runtime.agent.submit("read big.txt")
            full = runtime.context.state(runtime.agent)
            api.on(lambda r: SUMMARY_MARK in r.last_user_text(), Fault(400, message="no"))
            failed = await run_command(runtime, "/compact")
            cleared = await run_command(runtime, "/clear")
            after = runtime.context.state(runtime.agent)
        finally:
            await runtime.aclose()
    assert full.level == "blocking"
    assert "/compact" in (warning_text(full) or "") and "/clear" in (warning_text(full) or "")
    assert failed.is_error and "The conversation is unchanged" in failed.text
    assert "/clear starts over" in failed.text
    assert not cleared.is_error and after.level == "ok"  # what the advice named works
