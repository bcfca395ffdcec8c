"""The meter after a resume, an undo and /clear: what the next request carries, at the fake API.

Each test makes a session at the fake Messages API, reopens it (or undoes, or
clears), reads the meter the front ends show (what ``SessionDriver.status`` reports), then
sends the next request and compares the figure with that request's size as the
fake counts it (chars / 4 per block, the same rule the estimate uses; the
calibration the session learnt is what makes them agree).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import ContextUpdate, Event
from tests.fake_env import use_fake_api
from tui.commands.builtin import run_command
from tui.fake_api import FakeApi, text_reply, tool_reply
from tui.fake_api.billing import estimate_request_tokens
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions
from tui.session.runtime import Runtime

TOLERANCE = 0.05  # the figure is an estimate; within 5% of what the request carries


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    for i in range(8):
        (repo / f"big{i}.txt").write_text(f"a line of file {i} with some words\n" * 1500)
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


def start(repo: Path, events: list[Event], **options: Any) -> Runtime:
    return assemble_runtime(
        RunOptions(cwd=repo, watch_files=False, headless=False, **options), events.append
    )


def meter(runtime: Runtime) -> int:
    """What ``SessionDriver.status`` hands the footer."""
    return runtime.context.state(runtime.agent).used


async def read_files(api: FakeApi, runtime: Runtime, names: range) -> None:
    for i in names:
        api.add(tool_reply(("Read", {"file_path": f"big{i}.txt"})), text_reply(f"read {i}"))
        await runtime.agent.submit(f"read big{i}.txt")


async def next_request(api: FakeApi, runtime: Runtime, events: list[Event]) -> tuple[int, int]:
    """Send one more prompt: (the request's size at the fake, the first ContextUpdate's figure)."""
    mark = len(events)
    api.add(text_reply("fine"))
    await runtime.agent.submit("and now?")
    update = next(e for e in events[mark:] if isinstance(e, ContextUpdate))
    return estimate_request_tokens(api.requests[-1].body), update.state.used


def close_to(figure: int, actual: int) -> bool:
    return abs(figure - actual) <= TOLERANCE * actual


async def test_resumed_meter_is_the_next_request_after_compactions(
    api: FakeApi, repo: Path
) -> None:
    events: list[Event] = []
    runtime = start(repo, events)
    for round_ in range(3):  # three compactions, reads between them
        await read_files(api, runtime, range(round_ * 2, round_ * 2 + 2))
        api.add(text_reply(f"<summary>round {round_} read two files</summary>"))
        assert not (await run_command(runtime, "/compact")).is_error
    await read_files(api, runtime, range(6, 8))
    session_id = runtime.session.id
    whole = sum(estimate_request_tokens(r.body) for r in api.requests)
    await runtime.aclose()

    resumed = start(repo, events, resume=session_id)
    try:
        figure = meter(resumed)
        actual, first_update = await next_request(api, resumed, events)
    finally:
        await resumed.aclose()
    assert figure < whole / 4  # the live part, not the whole transcript
    assert close_to(figure, actual), (figure, actual)
    assert close_to(first_update, actual), (first_update, actual)


async def test_resumed_meter_leaves_out_what_was_cleared(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    """Cleared tool results are whole in the transcript; the request after the resume clears
    them again, and the meter says so before it is sent."""
    events: list[Event] = []
    runtime = start(repo, events, autocompact="60000")
    await read_files(api, runtime, range(8))
    assert any(e.get("type") == "microcompact" for e in events_in(runtime))
    session_id = runtime.session.id
    await runtime.aclose()

    resumed = start(repo, events, resume=session_id, autocompact="60000")
    try:
        whole = resumed.context.count(resumed.agent)  # the conversation as loaded
        figure = meter(resumed)
        actual, first_update = await next_request(api, resumed, events)
    finally:
        await resumed.aclose()
    assert whole > actual * 1.5  # the loaded conversation holds the cleared results again
    assert close_to(figure, actual), (figure, actual, whole)
    assert close_to(first_update, actual), (first_update, actual)


def events_in(runtime: Runtime) -> list[dict[str, Any]]:
    import json

    path = runtime.session.path
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r["event"] for r in records if r.get("type") == "event"]


async def test_meter_after_undo_and_clear_is_the_next_request(api: FakeApi, repo: Path) -> None:
    events: list[Event] = []
    runtime = start(repo, events)
    try:
        await read_files(api, runtime, range(3))
        api.add(text_reply("<summary>three files read</summary>"))
        assert not (await run_command(runtime, "/compact")).is_error
        assert not (await run_command(runtime, "/undo-compact")).is_error
        figure = meter(runtime)
        actual, _ = await next_request(api, runtime, events)
        assert close_to(figure, actual), ("undo", figure, actual)

        assert not (await run_command(runtime, "/clear")).is_error
        figure = meter(runtime)
        actual, _ = await next_request(api, runtime, events)
        assert close_to(figure, actual), ("clear", figure, actual)
    finally:
        await runtime.aclose()


async def test_resumed_meter_with_thinking(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        (repo / f"big{i}.txt").write_text(f"line {i}\n" * 2000)
    events: list[Event] = []
    with FakeApi(thinking_tokens=3000) as api:
        use_fake_api(api, tmp_path, monkeypatch)
        runtime = start(repo, events, max_thinking_tokens="4000")
        await read_files(api, runtime, range(3))
        assert any(b.get("type") == "thinking" for m in runtime.agent.messages for b in m.content)
        session_id = runtime.session.id
        await runtime.aclose()
        resumed = start(repo, events, resume=session_id, max_thinking_tokens="4000")
        try:
            figure = meter(resumed)
            actual, first_update = await next_request(api, resumed, events)
        finally:
            await resumed.aclose()
    assert close_to(figure, actual), (figure, actual)
    assert close_to(first_update, actual), (first_update, actual)
