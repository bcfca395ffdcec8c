"""The app's meter on a resumed session: what the next request carries, not the transcript.

A session made at the fake API with compactions and cleared tool results is
reopened with ``-r``; the footer's first figure is compared with the size of the
request the next prompt sends (as the fake counts it).
"""

from __future__ import annotations

from pathlib import Path

from agent.core.events import Event
from agent.sessions.session import load_session
from compaction.summary import SUMMARY_REQUEST_MARK as SUMMARY_MARK
from compaction.thresholds import format_tokens
from compaction.tokens import TokenCounter
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import widget_text
from tui.commands.builtin import run_command
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fake_api.billing import estimate_request_tokens
from tui.fullscreen.widgets.footer import ContextMeter
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions

WINDOW = "60000"


async def make_session(api: FakeApi, repo: Path) -> tuple[str, int]:
    """Two compactions, then eight big reads (old ones cleared as it goes): (id, what the
    transcript's live part holds, counted whole)."""
    for i in range(8):
        (repo / f"big{i}.txt").write_text(f"a line of file {i} with some words\n" * 1500)
    events: list[Event] = []
    runtime = assemble_runtime(
        RunOptions(cwd=repo, watch_files=False, headless=False, autocompact=WINDOW),
        events.append,
    )
    try:
        api.on(
            lambda r: SUMMARY_MARK in r.last_user_text(),
            text_reply("<summary>files were read</summary>"),
        )
        for round_ in range(2):
            api.add(tool_reply(("Read", {"file_path": f"big{round_}.txt"})), text_reply("read"))
            await runtime.agent.submit(f"read big{round_}.txt")
            assert not (await run_command(runtime, "/compact")).is_error
        for i in range(8):
            api.add(tool_reply(("Read", {"file_path": f"big{i}.txt"})), text_reply(f"read {i}"))
            await runtime.agent.submit(f"read big{i}.txt again")
        path, session_id = runtime.session.path, runtime.session.id
    finally:
        await runtime.aclose()
    return session_id, TokenCounter(calibration=1.0).estimate(load_session(path).messages, 0.0)


async def test_the_resumed_meter_is_the_next_request(api: FakeApi, repo: Path) -> None:
    session_id, whole = await make_session(api, repo)
    app = make_app(repo, resume=session_id, autocompact=WINDOW)
    async with app.run_test(size=(120, 40)) as pilot:
        meter = app.query_one(ContextMeter)
        await wait_for(pilot, lambda: app.ready and meter.state is not None)
        shown = widget_text(app, meter)
        used = meter.state.used
        assert format_tokens(used) in shown
        api.add(text_reply("fine"))
        await submit(pilot, "and now?")
        await wait_idle(pilot)
    actual = estimate_request_tokens(api.requests[-1].body)
    assert whole > actual * 1.5  # the transcript holds the cleared results whole
    assert abs(used - actual) <= 0.05 * actual, (shown, used, actual)
    assert "Context full" not in shown
    assert api.errors == []
