"""A resumed session's compacted past: markers, reading it back on demand, and /history search.

The stored session has three compactions; the resume reads only the conversation
after the last one. The view shows the compaction's marker and a button above it;
clicking it (or scrolling to the top) reads the segment before from the transcript,
and the marker then says how many messages the compaction summarized. The
messages a compaction kept appear once, after its marker.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import Button

from agent.core.messages import Message, user_text
from agent.sessions.session import Session
from tests.tui.conftest import make_app, submit, wait_for, wait_idle
from tests.tui.screen import screen_text
from tui.fake_api import FakeApi, text_reply
from tui.fullscreen.widgets.compaction_block import CompactionBlock
from tui.fullscreen.widgets.transcript import LOAD_COMPACTED, Transcript, UserPrompt

SEGMENTS = 3


def answer(text: str) -> Message:
    return Message("assistant", [{"type": "text", "text": text}], kind="response", api_id="m")


def compacted_session(repo: Path) -> str:
    """Three compactions of two rounds each, each keeping its last round; then one round."""
    session = Session.create(repo, "claude-sonnet-4-5")
    live: list[Message] = []
    for segment in range(SEGMENTS + 1):
        for turn in range(2):
            pair = [user_text(f"question {segment}-{turn}"), answer(f"Answer {segment}-{turn}.")]
            for message in pair:
                session.append_message(message)
            live += pair
        if segment == SEGMENTS:
            break
        kept = live[-2:]
        session.append_record(
            {
                "type": "compact_boundary",
                "trigger": "auto",
                "kind": "session_memory",
                "messages_summarized": len(live) - 2,
                "messages_kept": 2,
                "summary": f"summary {segment}",
                "replaced_count": 3,
                "at": time.time(),
            }
        )
        summary = Message("user", [{"type": "text", "text": f"summary {segment}"}], kind="summary")
        session.append_message(summary)
        for message in kept:
            session.append_message(message)
        live = [summary, *kept]
    session.close()
    return session.id


def prompts(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [w.prompt for w in app.query(UserPrompt)]


async def test_markers_and_the_compacted_past_read_back_segment_by_segment(
    api: FakeApi, repo: Path
) -> None:
    session_id = compacted_session(repo)
    app = make_app(repo, resume=session_id)
    async with app.run_test(size=(120, 100)) as pilot:
        transcript = app.query_one(Transcript)
        await wait_for(pilot, lambda: "Resumed session" in screen_text(app))
        await wait_idle(pilot)
        assert prompts(app) == ["question 2-1", "question 3-0", "question 3-1"]
        assert LOAD_COMPACTED in screen_text(app)
        assert "was compacted" in screen_text(app)  # the live conversation's marker
        shown = 3
        for segment in range(SEGMENTS):
            button = transcript.query_one("#load-earlier", Button)
            if segment == 0:
                await pilot.click("#load-earlier")
            else:  # the view now scrolls and keeps the reader's place: pressed as enter would
                button.press()
            await wait_for(pilot, lambda n=shown: len(prompts(app)) > n)
            shown = len(prompts(app))
        await wait_for(pilot, lambda: not transcript.query("#load-earlier"))
        expected = [f"question {s}-{t}" for s in range(SEGMENTS + 1) for t in range(2)]
        assert prompts(app) == expected  # in order, each kept message once
        markers = [b.summary for b in app.query(CompactionBlock)]
        assert markers == [f"summary {s}" for s in range(SEGMENTS)]
        lines = [str(b._line.render()) for b in app.query(CompactionBlock)]
        assert lines == [
            "⟲ Compacted here: the 2 messages above were summarized, 2 kept below.",
            "⟲ Compacted here: the 5 messages above were summarized, 2 kept below.",
            "⟲ Compacted here: the 5 messages above were summarized, 2 kept below.",
        ]


async def test_scrolling_to_the_top_reads_the_segment_before(api: FakeApi, repo: Path) -> None:
    session_id = compacted_session(repo)
    app = make_app(repo, resume=session_id)
    async with app.run_test(size=(80, 12)) as pilot:
        transcript = app.query_one(Transcript)
        await wait_for(pilot, lambda: "Resumed session" in screen_text(app))
        assert transcript.max_scroll_y > 0
        await pilot.press("ctrl+home")
        await wait_for(pilot, lambda: "question 1-1" in prompts(app))
        await wait_for(pilot, lambda: transcript.scroll_y > 0)  # the reader's place is kept
        assert "question 0-0" not in prompts(app)  # one segment at a time


async def test_history_searches_the_compacted_past(api: FakeApi, repo: Path) -> None:
    session_id = compacted_session(repo)
    api.add(text_reply("carrying on"))
    app = make_app(repo, resume=session_id)
    async with app.run_test(size=(120, 60)) as pilot:
        await wait_for(pilot, lambda: "Resumed session" in screen_text(app))
        await wait_idle(pilot)
        await submit(pilot, "/history question 0-0")
        await wait_for(pilot, lambda: "hold" in screen_text(app))
        text = screen_text(app)
        assert '1 message(s) hold "question 0-0"' in text
        assert "summarized 3 compaction(s) ago" in text
        await submit(pilot, "/history ANSWER 3-1")  # case does not matter
        await wait_for(pilot, lambda: "in the conversation now" in screen_text(app))
        await submit(pilot, "/history nowhere to be found")
        await wait_for(pilot, lambda: "No message of this session holds" in screen_text(app))
    assert api.requests == []  # a search asks the model nothing
