"""The session driver every front end shares: one rule for commands, one mapping of failures,
one mode cycle, status snapshots."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event, ModeChanged
from agent.loop.agent import MaxTurnsReached
from agent.model.client import ApiError
from agent.sessions.session import TranscriptWriteError
from tests.fake_env import use_fake_api
from tui.commands.slash import command_name, is_command
from tui.fake_api import FakeApi, Fault, text_reply
from tui.headless.run import HeadlessOutput, run_headless
from tui.session.driver import CYCLED_MODES, SessionDriver, failure_of, next_mode
from tui.session.options import RunOptions
from tui.session.views import StatusSnapshot


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch)
        yield server


def make_driver(repo: Path, events: list[Event], **options: Any) -> SessionDriver:
    return SessionDriver(RunOptions(cwd=repo, watch_files=False, **options), events.append)


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("/compact keep the notes", "compact"),
        ("  /Help", "help"),
        ("/typo", "typo"),
        ("/undo-compact", "undo-compact"),
        ("/etc/hosts looks odd", None),
        ("/ hello", None),
        ("/", None),
        ("why is /tmp full?", None),
        ("", None),
    ],
)
def test_one_rule_says_which_lines_are_commands(line: str, name: str | None) -> None:
    assert command_name(line) == name and is_command(line) is (name is not None)


async def test_an_unknown_command_is_answered_never_sent_to_the_model(
    api: FakeApi, repo: Path
) -> None:
    driver = make_driver(repo, [])
    try:
        result = await driver.run("/typo now")
    finally:
        await driver.aclose()
    assert result.command == "typo" and result.is_error and result.failure is None
    assert result.text.startswith("Unknown command /typo. Commands: /compact")
    assert api.requests == []


async def test_headless_says_unknown_command_as_the_other_front_ends_do(
    api: FakeApi, repo: Path
) -> None:
    out = io.StringIO()
    options = RunOptions(cwd=repo, watch_files=False)
    code = await run_headless(options, "/typo", HeadlessOutput("json", out=out))
    result = json.loads(out.getvalue())
    assert code == 1 and result["is_error"] and result["subtype"] == "error_during_execution"
    assert result["result"].startswith("Unknown command /typo.")
    assert api.requests == []


async def test_a_prompt_runs_a_turn_and_a_path_is_a_prompt(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("it is a file"))
    driver = make_driver(repo, [])
    try:
        result = await driver.run("/etc/hosts: what is it?")
    finally:
        await driver.aclose()
    assert result.command is None and result.text == "it is a file" and not result.is_error
    assert api.requests[0].last_user_text().startswith("/etc/hosts: what is it?")


async def test_exit_and_quit_end_the_session(api: FakeApi, repo: Path) -> None:
    driver = make_driver(repo, [])
    try:
        assert (await driver.run("/exit")).exit
        assert (await driver.run("/quit")).exit
        assert not (await driver.run("/cost")).exit
    finally:
        await driver.aclose()


async def test_a_failing_turn_comes_back_as_a_result(api: FakeApi, repo: Path) -> None:
    api.add(Fault(400, "invalid_request_error", "the request was refused"))
    driver = make_driver(repo, [])
    try:
        result = await driver.run("hello")
        follow_up = await driver.run("/cost")  # the session goes on
    finally:
        await driver.aclose()
    assert result.failure is not None and result.failure.kind == "api" and result.is_error
    assert result.failure.error_type == "invalid_request_error"
    assert result.text == result.failure.message and "the request was refused" in result.text
    assert not follow_up.is_error


def test_failures_become_words_in_one_place(tmp_path: Path) -> None:
    turns = failure_of(MaxTurnsReached(3))
    assert (turns.kind, turns.message) == ("max_turns", "Reached the maximum of 3 turns")
    written = failure_of(TranscriptWriteError("the disk is full"))
    assert (written.kind, written.message) == ("transcript", "the disk is full")
    api = failure_of(ApiError("overloaded", error_type="overloaded_error"))
    assert (api.kind, api.message, api.error_type) == ("api", "overloaded", "overloaded_error")
    bug = failure_of(KeyError("x"), "/compact")
    assert (bug.kind, bug.message, bug.error_type) == (
        "internal",
        "/compact failed: KeyError: 'x'",
        "internal_error",
    )
    assert failure_of(ValueError("bad")).message == "ValueError: bad"


def test_the_mode_cycle() -> None:
    assert [next_mode(m, CYCLED_MODES) for m in CYCLED_MODES] == ["acceptEdits", "plan", "default"]
    assert next_mode("bypassPermissions", CYCLED_MODES) == "default"
    with_bypass = (*CYCLED_MODES, "bypassPermissions")
    assert next_mode("plan", with_bypass) == "bypassPermissions"


async def test_the_driver_cycles_modes_and_snapshots_its_status(api: FakeApi, repo: Path) -> None:
    driver = make_driver(repo, [])
    try:
        assert driver.mode_cycle == CYCLED_MODES
        before = driver.status()
        assert [driver.cycle_mode() for _ in range(3)] == ["acceptEdits", "plan", "default"]
        assert before.mode == "default" and before.context is not None
        assert before.context.used > 0 and before.cost_usd == 0.0
        with pytest.raises(dataclasses.FrozenInstanceError):
            before.mode = "plan"  # type: ignore[misc]
        assert isinstance(driver.status(), StatusSnapshot)
    finally:
        await driver.aclose()
    bypass = make_driver(repo, [], permission_mode="bypassPermissions")
    try:
        assert bypass.mode_cycle[-1] == "bypassPermissions"
        assert bypass.cycle_mode() == "default"
    finally:
        await bypass.aclose()


async def test_every_change_of_mode_is_an_event(api: FakeApi, repo: Path) -> None:
    events: list[Event] = []
    driver = make_driver(repo, events)
    try:
        driver.cycle_mode()
        await driver.run("/plan")
        await driver.run("/plan")
        driver.set_mode("default")  # no change: nothing to say
        assert driver.status().mode == "default"
    finally:
        await driver.aclose()
    changes = [(e.previous, e.mode) for e in events if isinstance(e, ModeChanged)]
    assert changes == [("default", "acceptEdits"), ("acceptEdits", "plan"), ("plan", "default")]


async def test_cost_splits_the_totals_by_purpose(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("hello"), text_reply("<summary>we said hello</summary>"))
    driver = make_driver(repo, [])
    try:
        await driver.run("say hello")
        only_agent = await driver.run("/cost")
        await driver.run("/compact")
        split = await driver.run("/cost")
    finally:
        await driver.aclose()
    assert "agent turns" not in only_agent.text  # nothing to split yet
    assert "agent turns: $" in split.text and "compaction summaries: $" in split.text
    assert "over 1 requests" in split.text.split("compaction summaries")[1]


async def test_agents_given_later_join_those_given_at_start(api: FakeApi, repo: Path) -> None:
    """The SDK's initialize adds agents after start-up: the session lists both sets as given
    (get_context_usage's ``agents``) and the later one wins a shared name; no option changes."""
    given = {"reviewer": {"description": "Reviews", "prompt": "Review it."}}
    driver = make_driver(repo, [], agents=dict(given))
    driver.add_agents(
        {
            "tester": {"description": "Tests", "prompt": "Test it."},
            "reviewer": {"description": "Reviews again", "prompt": "Review it twice."},
        }
    )
    inventory = driver.inventory()
    assert inventory.given_agents == ("reviewer", "tester")
    summaries = {a.name: a.description for a in inventory.agents}
    assert summaries["reviewer"] == "Reviews again" and summaries["tester"] == "Tests"
    assert driver.runtime.options.agents == given  # what the session started with stays so
    await driver.aclose()
