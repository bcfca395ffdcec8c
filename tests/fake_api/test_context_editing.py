"""The context-management beta as the fake server plays it: the header rule and the clearing rules."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.fake_api.conftest import MODEL
from tui.fake_api import FakeApi, estimate_request_tokens, text_reply
from tui.fake_api.context_editing import BETA, PLACEHOLDER

BETA_HEADER = {"anthropic-beta": f"interleaved-thinking-2025-05-14,{BETA}"}  # among others
RESULT_TEXT = "line of file text\n" * 200  # 3,600 characters: 900 tokens


def edit(
    trigger: int = 1_000,
    keep: int = 2,
    clear_at_least: int | None = None,
    exclude: list[str] | None = None,
) -> dict[str, Any]:
    clear: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": trigger},
        "keep": {"type": "tool_uses", "value": keep},
    }
    if clear_at_least is not None:
        clear["clear_at_least"] = {"type": "input_tokens", "value": clear_at_least}
    if exclude is not None:
        clear["exclude_tools"] = exclude
    return {"context_management": {"edits": [clear]}}


def conversation(names: list[str]) -> list[dict[str, Any]]:
    """A user prompt, then one tool round per name, each result RESULT_TEXT; ends with a user turn."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "audit the files"}]
    for index, name in enumerate(names):
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{index}", "name": name, "input": {}}],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{index}", "content": RESULT_TEXT}
                ],
            }
        )
    return messages


def send(client: anthropic.Anthropic, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    tools = [
        {"name": name, "description": "d", "input_schema": {"type": "object"}}
        for name in ("Read", "Skill")
    ]
    stream = client.messages.create(
        model=MODEL, max_tokens=100, messages=messages, tools=tools, stream=True, **kwargs
    )
    return list(stream)


def results_seen(api: FakeApi) -> list[str]:
    """What each tool result of the last request read as to the model (after editing)."""
    body = api.requests[-1].context_editing.body
    return [
        block["content"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


@pytest.mark.refusal_expected
def test_context_management_without_the_beta_header_is_refused(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    with pytest.raises(anthropic.BadRequestError) as raised:
        send(client, conversation(["Read"]), extra_body=edit())
    assert raised.value.status_code == 400
    assert raised.value.body["error"]["type"] == "invalid_request_error"
    assert "context_management" in raised.value.body["error"]["message"]
    assert api.script_remaining == 0 and api.requests[-1].status == 400


def test_under_the_trigger_nothing_is_cleared_and_the_delta_says_so(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(text_reply("ok"))
    messages = conversation(["Read"] * 4)
    events = send(client, messages, extra_headers=BETA_HEADER, extra_body=edit(trigger=100_000))
    (delta,) = [e for e in events if e.type == "message_delta"]
    assert delta.context_management == {"applied_edits": []}
    assert api.requests[-1].cleared_tool_use_ids == []
    assert results_seen(api) == [RESULT_TEXT] * 4
    assert api.errors == []


def test_over_the_trigger_the_oldest_results_go_except_the_last_k(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(text_reply("ok"))
    messages = conversation(["Read"] * 5)
    full = estimate_request_tokens({"messages": messages})
    events = send(client, messages, extra_headers=BETA_HEADER, extra_body=edit(keep=2))
    record = api.requests[-1]
    assert record.cleared_tool_use_ids == ["t0", "t1", "t2"]
    assert results_seen(api) == [PLACEHOLDER] * 3 + [RESULT_TEXT] * 2
    (applied,) = record.applied_edits
    assert applied["cleared_tool_uses"] == 3 and applied["cleared_input_tokens"] > 2_500
    assert (
        record.context_editing.original_tokens - record.estimated_tokens
        == (applied["cleared_input_tokens"])
    )
    (delta,) = [e for e in events if e.type == "message_delta"]
    assert delta.context_management == {"applied_edits": [applied]}
    # The usage is the edited request's: what the model saw.
    assert delta.usage.input_tokens == record.estimated_tokens < full - 2_500
    assert record.body["messages"] == messages  # the recorded request is as sent


def test_clear_at_least_stops_early_or_clears_nothing(
    api: FakeApi, client: anthropic.Anthropic
) -> None:
    api.add(text_reply("ok"), text_reply("ok"))
    messages = conversation(["Read"] * 5)
    send(client, messages, extra_headers=BETA_HEADER, extra_body=edit(clear_at_least=1_500))
    assert api.requests[-1].cleared_tool_use_ids == ["t0", "t1"]  # 2 x ~900 reach 1,500
    send(client, messages, extra_headers=BETA_HEADER, extra_body=edit(clear_at_least=3_000))
    assert api.requests[-1].cleared_tool_use_ids == []  # 3 x ~900 never reach 3,000
    assert api.requests[-1].applied_edits == []
    assert results_seen(api) == [RESULT_TEXT] * 5


def test_excluded_tools_are_never_cleared(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("ok"))
    messages = conversation(["Skill", "Read", "Skill", "Read", "Read", "Read"])
    send(client, messages, extra_headers=BETA_HEADER, extra_body=edit(keep=2, exclude=["Skill"]))
    assert api.requests[-1].cleared_tool_use_ids == ["t1", "t3"]
    assert results_seen(api)[0] == RESULT_TEXT and results_seen(api)[2] == RESULT_TEXT


def test_the_json_message_carries_the_edits_too(api: FakeApi, client: anthropic.Anthropic) -> None:
    api.add(text_reply("ok"))
    response = client.messages.create(
        model=MODEL,
        max_tokens=100,
        messages=conversation(["Read"] * 3),
        tools=[{"name": "Read", "description": "d", "input_schema": {"type": "object"}}],
        extra_headers=BETA_HEADER,
        extra_body=edit(keep=1),
    )
    edits = response.model_extra["context_management"]["applied_edits"]
    assert edits[0]["cleared_tool_uses"] == 2
