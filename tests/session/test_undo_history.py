"""A long session's undo history: memory keeps the last compactions, the transcript the rest.

Each undo snapshot is a whole conversation from before a compaction; keeping every one
made a session's memory grow with every message it ever had.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.core.events import Event
from compaction.undo import UNDO_IN_MEMORY
from tests.fake_env import use_fake_api
from tui.fake_api import FakeApi, text_reply
from tui.session.driver import SessionDriver
from tui.session.options import RunOptions


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


async def test_memory_keeps_the_last_compactions_and_undo_still_reaches_every_one(
    api: FakeApi, repo: Path
) -> None:
    rounds = UNDO_IN_MEMORY + 3
    for index in range(rounds):
        api.add(text_reply(f"answer {index}"), text_reply(f"<summary>summary {index}</summary>"))
    events: list[Event] = []
    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False), events.append)
    try:
        before: list[list[str]] = []  # the conversation before each compaction
        for index in range(rounds):
            await driver.run(f"question {index}")
            before.append([m.uuid for m in driver.messages])
            assert not (await driver.run("/compact")).is_error
        history = driver.runtime.context.compactor.history
        assert len(history.snapshots) == UNDO_IN_MEMORY  # bounded, however many compactions
        assert len(history) == rounds  # the older ones are counted, in the transcript
        for index in reversed(range(rounds)):
            result = await driver.run("/undo-compact")
            assert not result.is_error, result.text
            now = [m.uuid for m in driver.messages]
            assert now[: len(before[index])] == before[index]
        assert len(history.snapshots) <= UNDO_IN_MEMORY
        assert (await driver.run("/undo-compact")).is_error  # nothing left to undo
    finally:
        await driver.aclose()
