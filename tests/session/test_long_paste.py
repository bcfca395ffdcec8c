"""A paste too big for the window the session works against is saved and referenced, never sent
whole: with ``--autocompact`` under the model's window, the share one message may take is
measured against the smaller window, so the next requests (and a compaction) still fit."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.events import Event
from tests.fake_env import use_fake_api
from tui.commands.builtin import run_command
from tui.fake_api import FakeApi, text_reply
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
