"""The session's model and request defaults through the runtime, against the fake API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.core.events import Event
from agent.loop.agent import UnknownModelError
from tests.fake_env import use_fake_api
from tui.commands import builtin as commands
from tui.fake_api import FakeApi, RecordedRequest, text_reply, tool_reply
from tui.session.assembly import assemble_runtime
from tui.session.options import RunOptions, StartupError
from tui.session.runtime import Runtime
from tui.session.session_model import DEVICE_ID


@pytest.fixture
def api(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    with FakeApi() as server:
        use_fake_api(server, tmp_path, monkeypatch, models_api=True)
        yield server


def make_runtime(repo: Path, events: list[Event] | None = None, **options: Any) -> Runtime:
    sink = events.append if events is not None else (lambda _event: None)
    return assemble_runtime(RunOptions(cwd=repo, watch_files=False, **options), sink)


async def one_request(runtime: Runtime, api: FakeApi) -> RecordedRequest:
    api.add(text_reply("ok"))
    try:
        await runtime.agent.submit("hi")
    finally:
        await runtime.aclose()
    return api.requests[-1]


def betas(request: RecordedRequest) -> list[str]:
    return request.headers.get("anthropic-beta", "").split(",")


async def test_the_default_request_is_claude_codes(api: FakeApi, repo: Path) -> None:
    runtime = make_runtime(repo)
    session_id = runtime.session.id
    request = await one_request(runtime, api)
    body = request.body
    assert body["model"] == "claude-opus-5-5" and body["max_tokens"] == 128_000
    assert body["thinking"] == {"type": "adaptive", "display": "omitted"}
    assert body["output_config"] == {"effort": "medium"}
    assert body["context_management"] == {
        "edits": [{"type": "clear_thinking_20251015", "keep": "all"}]
    }
    assert set(betas(request)) == {
        "interleaved-thinking-2025-05-14",
        "context-management-2025-06-27",
        "effort-2025-11-24",
    }
    user = json.loads(body["metadata"]["user_id"])
    assert user["session_id"] == session_id and user["account_uuid"] == ""
    assert DEVICE_ID.match(user["device_id"])


async def test_the_device_id_is_kept_across_sessions(
    api: FakeApi, repo: Path, tmp_path: Path
) -> None:
    first = await one_request(make_runtime(repo), api)
    second = await one_request(make_runtime(repo), api)
    ids = [json.loads(r.body["metadata"]["user_id"]) for r in (first, second)]
    assert ids[0]["device_id"] == ids[1]["device_id"]
    assert ids[0]["session_id"] != ids[1]["session_id"]
    stored = (tmp_path / "config" / "device_id").read_text().strip()
    assert stored == ids[0]["device_id"]


async def test_a_front_end_that_shows_thinking_asks_for_its_text(api: FakeApi, repo: Path) -> None:
    request = await one_request(make_runtime(repo, show_thinking=True), api)
    assert request.body["thinking"]["display"] == "summarized"


async def test_settings_turn_thinking_off_and_set_the_effort(api: FakeApi, repo: Path) -> None:
    (repo / ".claude").mkdir()
    settings = {"model": "claude-sonnet-4-5", "alwaysThinkingEnabled": False}
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    request = await one_request(make_runtime(repo), api)
    assert request.body["model"] == "claude-sonnet-4-5" and request.body["max_tokens"] == 32_000
    assert request.body["thinking"] == {"type": "disabled"}
    assert "context_management" not in request.body and "output_config" not in request.body


async def test_the_effort_flag_wins_over_the_environment_and_settings(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"effortLevel": "low"}))
    request = await one_request(make_runtime(repo), api)
    assert request.body["output_config"] == {"effort": "low"}
    monkeypatch.setenv("CLAUDE_CODE_EFFORT_LEVEL", "high")
    request = await one_request(make_runtime(repo), api)
    assert request.body["output_config"] == {"effort": "high"}
    request = await one_request(make_runtime(repo, effort="max"), api)
    assert request.body["output_config"] == {"effort": "max"}


async def test_max_thinking_tokens_sets_the_budget_of_a_budget_model(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_THINKING_TOKENS", "6000")
    runtime = make_runtime(repo, model="claude-haiku-4-5")
    request = await one_request(runtime, api)
    assert request.body["thinking"]["budget_tokens"] == 6_000
    monkeypatch.setenv("MAX_THINKING_TOKENS", "0")
    request = await one_request(make_runtime(repo, model="claude-haiku-4-5"), api)
    assert request.body["thinking"] == {"type": "disabled"}
    # The flag wins over the environment.
    runtime = make_runtime(repo, model="claude-haiku-4-5", max_thinking_tokens="2048")
    assert (await one_request(runtime, api)).body["thinking"]["budget_tokens"] == 2_048


def test_a_budget_the_api_cannot_take_stops_the_start(
    api: FakeApi, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_THINKING_TOKENS", "500")
    with pytest.raises(StartupError, match="at least 1024"):
        make_runtime(repo)


async def test_an_unknown_model_is_refused_before_any_message_request(
    api: FakeApi, repo: Path
) -> None:
    runtime = make_runtime(repo, model="claude-bogus-9")
    api.add(text_reply("never sent"))
    try:
        with pytest.raises(UnknownModelError, match="Unknown model 'claude-bogus-9'"):
            await runtime.agent.submit("hi")
    finally:
        await runtime.aclose()
    assert api.requests == []
    assert "model: claude-bogus-9" in api.errors  # the Models API was asked


async def test_a_model_the_models_api_serves_is_used(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeApi([text_reply("ok")], models={"gateway-model-7": (300_000, 40_000)}) as api:
        use_fake_api(api, tmp_path, monkeypatch, models_api=True)
        runtime = make_runtime(repo, model="gateway-model-7")
        await runtime.start()
        request = await one_request(runtime, api)
    assert request.body["model"] == "gateway-model-7"
    # A model the table does not know: a budget, no effort, at most 32,000 asked for.
    assert request.body["max_tokens"] == 32_000
    assert request.body["thinking"]["budget_tokens"] == 31_999
    assert "output_config" not in request.body


async def test_1m_gives_a_200k_model_the_beta_and_the_window(api: FakeApi, repo: Path) -> None:
    runtime = make_runtime(repo, model="claude-sonnet-4-5[1m]")
    assert runtime.models.limits_for("claude-sonnet-4-5").context_window == 1_000_000
    request = await one_request(runtime, api)
    assert request.body["model"] == "claude-sonnet-4-5"
    assert "context-1m-2025-08-07" in betas(request)


async def test_opusplan_plans_with_opus_and_works_with_sonnet(api: FakeApi, repo: Path) -> None:
    api.add(text_reply("working"), text_reply("planning"), text_reply("working again"))
    runtime = make_runtime(repo, model="opusplan")
    try:
        await runtime.agent.submit("do it")
        runtime.set_permission_mode("plan")
        assert any("Model: claude-opus-5-5" in block["text"] for block in runtime.system)
        await runtime.agent.submit("plan it")
        runtime.set_permission_mode("default")
        await runtime.agent.submit("do it now")
    finally:
        await runtime.aclose()
    models = [r.body["model"] for r in api.requests]
    assert models == ["claude-sonnet-5-5", "claude-opus-5-5", "claude-sonnet-5-5"]


async def test_the_model_command_takes_an_effort(api: FakeApi, repo: Path) -> None:
    runtime = make_runtime(repo)
    api.add(text_reply("a"), text_reply("b"), text_reply("c"))
    try:
        shown = await commands.run_command(runtime, "/model")
        assert shown.text == "Model: claude-opus-5-5 (effort medium)"
        switched = await commands.run_command(runtime, "/model sonnet high")
        assert switched.text == "Model set to claude-sonnet-5-5 (effort high)."
        await runtime.agent.submit("one")
        effort_only = await commands.run_command(runtime, "/model low")
        assert effort_only.text == "Model set to claude-sonnet-5-5 (effort low)."
        await runtime.agent.submit("two")
        refused = await commands.run_command(runtime, "/model claude-bogus-9")
        assert refused.is_error and "Unknown model" in refused.text
        assert runtime.agent.model == "claude-sonnet-5-5"
        older = await commands.run_command(runtime, "/model claude-sonnet-4-5")
        assert older.text == "Model set to claude-sonnet-4-5 (thinking budget 31,999)."
        await runtime.agent.submit("three")
    finally:
        await runtime.aclose()
    efforts = [r.body.get("output_config") for r in api.requests]
    assert efforts == [{"effort": "high"}, {"effort": "low"}, None]
    assert [r.body["model"] for r in api.requests][-1] == "claude-sonnet-4-5"


async def test_the_fallback_model_is_resolved(api: FakeApi, repo: Path) -> None:
    runtime = make_runtime(repo, fallback_model="haiku")
    try:
        assert runtime.agent.config.fallback_model == "claude-haiku-5-5"
    finally:
        await runtime.aclose()


async def test_an_agent_files_model_alias_reaches_the_api_as_its_id(
    api: FakeApi, repo: Path
) -> None:
    agents = repo / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "storyteller.md").write_text(
        "---\nname: storyteller\ndescription: tells stories\nmodel: fable\n---\nTell a story.\n"
    )
    api.on(lambda r: "Tell a story." in json.dumps(r.body.get("system")), text_reply("a story"))
    api.add(
        tool_reply(
            ("Agent", {"description": "story", "prompt": "go", "subagent_type": "storyteller"})
        ),
        text_reply("done"),
    )
    runtime = make_runtime(repo, permission_mode="bypassPermissions")
    try:
        await runtime.agent.submit("tell me a story")
    finally:
        await runtime.aclose()
    models = [r.body["model"] for r in api.requests]
    assert models == ["claude-opus-5-5", "claude-fable-5-2", "claude-opus-5-5"]
    story = api.requests[1].body
    assert story["max_tokens"] == 128_000 and story["thinking"]["type"] == "adaptive"
    assert "metadata" in story


async def test_a_compaction_summary_keeps_its_budget_below_its_max_tokens(
    api: FakeApi, repo: Path
) -> None:
    api.add(text_reply("first answer"), text_reply("<summary>what happened</summary>"))
    runtime = make_runtime(repo, model="claude-sonnet-4-5")
    try:
        await runtime.agent.submit("hello")
        result = await commands.run_command(runtime, "/compact")
    finally:
        await runtime.aclose()
    assert not result.is_error, result.text
    main, summary = api.requests[0].body, api.requests[-1].body
    # The loop's own thinking setting (the same setting reads the same cached prefix), with
    # room for the summary on top of the budget, within the model's output limit.
    assert summary["thinking"] == main["thinking"]
    assert summary["thinking"]["budget_tokens"] < summary["max_tokens"] <= 64_000


async def test_the_status_shows_the_model_with_its_effort(api: FakeApi, repo: Path) -> None:
    from tui.session.driver import SessionDriver

    driver = SessionDriver(RunOptions(cwd=repo, watch_files=False, effort="high"), lambda _e: None)
    try:
        status = driver.status()
        assert (status.model, status.effort) == ("claude-opus-5-5", "high")
        assert status.model_label == "claude-opus-5-5 · high"
        await driver.run("/model claude-haiku-4-5")
        assert driver.status().model_label == "claude-haiku-4-5"  # takes no effort level
    finally:
        await driver.aclose()
